//! The contract between a benchmark and the harness.
//!
//! A [`Workload`] describes what it measures (its operation kinds and counters) and builds one
//! [`Worker`] per thread. Each worker owns its event loop: it asks [`WorkerCtx::next_event`]
//! for permission to start an event (which applies the stop conditions and, in open-loop mode,
//! the schedule), does the work, and reports each completed operation with
//! [`WorkerCtx::record`]. Nothing in that loop allocates, locks or makes a system call besides
//! the clock.
//!
//! Engines that keep many operations in flight per thread (io_uring, libaio) take a ticket per
//! submission, keep it with the request, and record the operation when it completes: latency
//! runs from submission (or the intended start, in open-loop mode) to completion, never just
//! the time to submit.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::clock::Stamp;

use thiserror::Error;

use crate::harness::slots::{PhaseSlot, Shared, ThreadSlot};
use crate::harness::Arrivals;
use crate::random::{Distribution, RandType, Rng};

/// Index of an operation kind in [`Workload::kinds`].
pub type KindId = usize;

/// One kind of operation a workload records latencies for (read, write, fsync, event, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpKind {
    pub name: &'static str,
    /// Whether an operation of this kind is one "event" in sysbench's sense. Events make up
    /// the general latency statistics, events/s and thread fairness; other kinds (a fsync
    /// done inside a write event) are reported on their own only.
    pub is_event: bool,
}

impl OpKind {
    pub const fn event(name: &'static str) -> Self {
        OpKind {
            name,
            is_event: true,
        }
    }
    pub const fn part(name: &'static str) -> Self {
        OpKind {
            name,
            is_event: false,
        }
    }
}

/// A runtime failure inside a workload (an I/O error, a lost connection).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct WorkloadError(pub Box<dyn std::error::Error + Send + Sync>);

impl WorkloadError {
    pub fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        WorkloadError(e.into())
    }
}

/// What a benchmark implements.
pub trait Workload: Send + Sync + 'static {
    /// Operation kinds, in report order.
    fn kinds(&self) -> &[OpKind];
    /// Named counters workers add to (bytes read, rows returned, ...).
    fn counters(&self) -> &[&'static str] {
        &[]
    }
    /// Build the worker for thread `thread` (0-based). Called on the main thread before the
    /// start barrier, so set-up cost never lands in the measurement.
    fn worker(&self, thread: usize) -> Result<Box<dyn Worker>, WorkloadError>;
    /// Whether the worker threads are themselves what is measured (sysbench's cpu, memory,
    /// threads and mutex tests measure the machine through them), rather than clients of a
    /// database or a disk. Client threads shed a cost every program's threads pay and a
    /// client need not (glibc's rseq registration, [`crate::rseq`]); measured threads keep
    /// it, so their figures stay those of any program on the machine.
    fn threads_measured(&self) -> bool {
        false
    }
}

/// One thread's event loop.
pub trait Worker: Send {
    /// Run events until [`WorkerCtx::next_event`] says stop (or the worker's own quota ends).
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError>;
    /// End-of-run work that belongs to the measured time but is not an event (sysbench's
    /// fsync at the end). Runs after `run` returns, also when the run was stopped by time.
    fn finish(&mut self, _ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        Ok(())
    }
}

/// Permission to start one event; carries the intended start time in open-loop mode.
#[derive(Clone, Copy, Debug)]
pub struct Ticket {
    intended: Option<Stamp>,
}

impl Ticket {
    /// A ticket for an operation that is part of an already admitted event (a fsync inside a
    /// write event, a query inside a transaction).
    pub const fn inner() -> Self {
        Ticket { intended: None }
    }
    pub fn intended(&self) -> Option<Stamp> {
        self.intended
    }
}

/// What [`WorkerCtx::poll_event`] answers.
#[derive(Clone, Copy, Debug)]
pub enum Poll {
    /// Start this event now.
    Ready(Ticket),
    /// Open loop: the next event is due at this stamp, not yet.
    NotBefore(Stamp),
    /// The run is over for this worker (limit, signal, error elsewhere).
    Stop,
}

/// Per-thread open-loop schedule at the thread's share of `--rate`: exponential gaps (a
/// Poisson arrival process) or equal ones.
pub(crate) struct Pacer {
    pub(crate) next: Stamp,
    mean_gap_ns: f64,
    even: bool,
    origin: Stamp,
    /// Events scheduled so far (even spacing counts from the origin, so gaps never drift).
    n: u64,
    /// Exponential gaps: time the starts after the next one are pushed back by.
    pushed_ns: u64,
}

impl Pacer {
    pub(crate) fn new(origin: Stamp, per_thread_rate: f64, arrivals: Arrivals) -> Self {
        Pacer {
            next: origin,
            mean_gap_ns: 1e9 / per_thread_rate,
            even: arrivals == Arrivals::Even,
            origin,
            n: 0,
            pushed_ns: 0,
        }
    }
    fn advance(&mut self, rng: &mut Rng) -> Stamp {
        let at = self.next;
        self.n += 1;
        self.next = if self.even {
            self.origin
                .add_ns((self.n as f64 * self.mean_gap_ns) as u64)
        } else {
            let u = rng.next_f64();
            let pushed = std::mem::take(&mut self.pushed_ns);
            at.add_ns(pushed + (-(1.0 - u).ln() * self.mean_gap_ns) as u64)
        };
        at
    }
    /// Push every start after the next one back by `ns`.
    fn push_back(&mut self, ns: u64) {
        if self.even {
            self.origin = self.origin.add_ns(ns);
        } else {
            self.pushed_ns += ns;
        }
    }
}

/// What a worker sees of the harness.
pub struct WorkerCtx<'a> {
    /// 0-based thread number.
    pub thread: usize,
    /// Number of worker threads in the run.
    pub threads: usize,
    /// This thread's random stream (seeded from `--rand-seed` and `thread`).
    pub rng: Rng,
    shared: &'a Shared,
    slot: &'a ThreadSlot,
    cur: &'a PhaseSlot,
    warm_until: Option<Stamp>,
    /// When the measured time starts (the origin, after the warm-up).
    measured_from: Stamp,
    pub(crate) pacer: Option<Pacer>,
}

impl<'a> WorkerCtx<'a> {
    pub(crate) fn new(
        thread: usize,
        shared: &'a Shared,
        slot: &'a ThreadSlot,
        origin: Stamp,
    ) -> Self {
        let warm = shared.warmup > Duration::ZERO;
        let pacer = shared
            .rate
            .map(|r| Pacer::new(origin, r / shared.threads as f64, shared.arrivals));
        WorkerCtx {
            thread,
            threads: shared.threads,
            rng: Rng::new(shared.seed, thread as u64),
            shared,
            slot,
            cur: if warm { &slot.warm } else { &slot.main },
            warm_until: warm.then(|| origin.add_ns(shared.warmup.as_nanos() as u64)),
            measured_from: origin.add_ns(shared.warmup.as_nanos() as u64),
            pacer,
        }
    }

    /// When the measured time starts: the run's origin plus the warm-up.
    pub fn measured_from(&self) -> Stamp {
        self.measured_from
    }

    /// True once the run is stopping (time, events, signal, error elsewhere). Long events
    /// check it to stop within a second.
    #[inline(always)]
    pub fn stopping(&self) -> bool {
        self.shared.stop.load(Relaxed)
    }

    /// A distribution over [a, b]: the one given with --rand-type, else uniform (what every
    /// sysbench C test uses whatever --rand-type says).
    pub fn distribution(&self, a: u64, b: u64) -> Distribution {
        Distribution::shaped(
            self.shared.rand_type.unwrap_or(RandType::Uniform),
            &self.shared.rand_shape,
            a,
            b,
        )
    }

    /// Whether events follow a schedule (open loop): then the time between two events is
    /// not the first one's.
    pub fn paced(&self) -> bool {
        self.pacer.is_some()
    }

    /// The schedule's spacing (open loop): whether its gaps are even, and their mean, ns.
    pub fn schedule_gap(&self) -> Option<(bool, u64)> {
        self.pacer.as_ref().map(|p| (p.even, p.mean_gap_ns as u64))
    }

    /// Push the schedule's starts after the next one back by `ns`, for time the worker
    /// spent idle on purpose that the schedule should not make up for (fio's
    /// rate_ignore_thinktime). The next start stays where it was, already due or not.
    pub fn push_schedule_back(&mut self, ns: u64) {
        if let Some(p) = self.pacer.as_mut() {
            p.push_back(ns);
        }
    }

    /// Like [`WorkerCtx::next_event`], but never waits: in open-loop mode, when the next
    /// event's intended start is still ahead, it says when that is instead of sleeping, so a
    /// worker with requests in flight can collect completions meanwhile (and time them
    /// when they complete, not when it wakes up).
    #[inline]
    pub fn poll_event(&mut self) -> Poll {
        if self.shared.stop.load(Relaxed) {
            return Poll::Stop;
        }
        if let Some(p) = self.pacer.as_ref() {
            if Stamp::now() < p.next {
                return Poll::NotBefore(p.next);
            }
        }
        if self.shared.event_limit != 0 {
            let n = self.shared.issued.fetch_add(1, Relaxed);
            if n >= self.shared.event_limit {
                return Poll::Stop;
            }
        }
        match self.pacer.as_mut() {
            None => Poll::Ready(Ticket { intended: None }),
            Some(p) => {
                let at = p.advance(&mut self.rng);
                self.slot
                    .publish_next_due(p.next, self.shared.origin_stamp());
                Poll::Ready(Ticket { intended: Some(at) })
            }
        }
    }

    /// Ask to start one event. `None` means stop: the time or event limit was reached, the
    /// run was interrupted, or another worker failed. In open-loop mode this waits until the
    /// event's intended start.
    #[inline]
    pub fn next_event(&mut self) -> Option<Ticket> {
        if self.shared.stop.load(Relaxed) {
            return None;
        }
        if self.shared.event_limit != 0 {
            let n = self.shared.issued.fetch_add(1, Relaxed);
            if n >= self.shared.event_limit {
                return None;
            }
        }
        match self.pacer.as_mut() {
            None => Some(Ticket { intended: None }),
            Some(p) => {
                let at = p.advance(&mut self.rng);
                self.slot
                    .publish_next_due(p.next, self.shared.origin_stamp());
                self.slot.busy.store(false, Relaxed);
                if !self.wait_until(at) {
                    return None;
                }
                self.slot.busy.store(true, Relaxed);
                Some(Ticket { intended: Some(at) })
            }
        }
    }

    fn wait_until(&self, at: Stamp) -> bool {
        loop {
            if self.shared.stop.load(Relaxed) {
                return false;
            }
            let now = Stamp::now();
            if now >= at {
                return true;
            }
            let left = Duration::from_nanos(at.ns_since(now));
            if left > Duration::from_micros(80) {
                // Sleep in slices so a stop is seen promptly; the last stretch spins, since a
                // sleep overshoots by the timer slack (~50 µs).
                std::thread::sleep(
                    (left - Duration::from_micros(60)).min(Duration::from_millis(50)),
                );
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Record one completed operation of `kind` that started at `start` and ended at `end`.
    /// With an open-loop ticket, latency runs from the intended start; the service time and
    /// the lag behind schedule are recorded too.
    #[inline(always)]
    pub fn record(&mut self, kind: KindId, ticket: Ticket, start: Stamp, end: Stamp) {
        if let Some(w) = self.warm_until {
            if end >= w {
                self.cur = &self.slot.main;
                self.warm_until = None;
            }
        }
        match ticket.intended {
            None => {
                let ns = end.ns_since(start);
                self.cur.kinds[kind].record(ns);
            }
            Some(intended) => {
                let resp = end.ns_since(intended);
                self.cur.kinds[kind].record(resp);
                let service = end.ns_since(start);
                self.cur.service.record(service);
                let lag = start.ns_since(intended);
                self.cur.lag.record(lag);
            }
        }
    }

    /// Add `n` to counter `counter` (an index into [`Workload::counters`]).
    #[inline(always)]
    pub fn add(&mut self, counter: usize, n: u64) {
        let c = &self.cur.counters[counter];
        c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
    }
}
