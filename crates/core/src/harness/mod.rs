//! The run harness: starts the workers together, stops them on time, event count, signal or
//! error, takes interval snapshots without stopping them, and hands back every thread's
//! figures.
//!
//! The main thread does all the bookkeeping: it sleeps until the next deadline (time limit,
//! interval, forced shutdown) or until a worker finishes, so workers never read the clock to
//! check the time limit and never meet each other on the hot path.

mod peek;
pub(crate) mod slots;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use thiserror::Error;

pub use peek::Peek;
pub use slots::ThreadSnapshot;
use slots::{snapshot, Shared, ThreadSlot};

use crate::clock::{self, Stamp};
use crate::random::RandType;
use crate::stats::Histogram;
use crate::steady::{Probe, SteadyMember, Tally};
use crate::workload::{OpKind, WorkerCtx, Workload, WorkloadError};

/// What the harness names its worker threads: `plumb-worker-N`, N from 0 (the observer
/// tells workers from plumb's other threads by it).
pub const WORKER_THREAD_NAME: &str = "plumb-worker";

/// Whether a thread name is one the harness gives its workers.
pub fn is_worker_thread(name: &str) -> bool {
    name.starts_with(WORKER_THREAD_NAME)
}

/// How long workers get to stop after a signal before the run is reported without them.
const SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// Set from a signal handler: holds the signal number, 0 while none arrived.
pub type StopFlag = Arc<AtomicUsize>;

/// How a run is driven.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub threads: usize,
    /// Measured duration (after warm-up); `None` runs until another limit.
    pub time_limit: Option<Duration>,
    /// Total events across threads; 0 for no limit.
    pub event_limit: u64,
    pub warmup: Duration,
    /// Intervals the front end prints (`--report-interval`).
    pub report_interval: Option<Duration>,
    /// Intervals recorded without being printed, when `report_interval` is None: the
    /// record's own samples, which the steadiness findings, compare's noise test and the
    /// charts over time need even when nobody asked for interval lines.
    pub sample_interval: Option<Duration>,
    /// Open-loop target rate in events per second across all threads.
    pub rate: Option<f64>,
    /// How the intended starts of an open-loop rate are spaced.
    pub arrivals: Arrivals,
    /// Events due and not started past which an open-loop run fails
    /// ([`HarnessError::QueueFull`]): sysbench's event queue holds 131 072, and a rate the
    /// workers fall that far behind gives latencies that measure the wait, not the work.
    pub queue_limit: Option<u64>,
    /// Grace after the time limit before the run is abandoned and reported as it stands.
    pub forced_shutdown: Option<Duration>,
    pub seed: u64,
    /// The distribution the user asked for with --rand-type; `None` leaves each workload its
    /// native one (uniform for every sysbench C test).
    pub rand_type: Option<RandType>,
    /// sysbench's tuning of the distributions (`--rand-spec-*`, `--rand-pareto-h`).
    pub rand_shape: crate::random::Shape,
    /// Percentiles computed for each interval.
    pub interval_percentiles: Vec<f64>,
    /// Runs that end together (fio's exitall): set by a run that ends it for the others,
    /// watched by every run that shares it.
    pub together: Option<Together>,
    /// Steady-state detection (fio's steadystate): the run is sampled once a second with
    /// the other runs of its group, and stops when the group's criterion holds.
    pub steady: Option<SteadyMember>,
}

/// A flag several runs share: once a run marked `ends_others` finishes, the others stop as
/// if their work were done.
#[derive(Clone, Debug)]
pub struct Together {
    pub ended: Arc<AtomicBool>,
    pub ends_others: bool,
    /// Ends the others only when it fails (fio's exitall_on_error).
    pub ends_others_on_error: bool,
}

/// The spacing of an open-loop schedule's intended starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps at the mean rate (sysbench's --rate, fio's rate_process=poisson).
    #[default]
    Poisson,
    /// Equal gaps (fio's rate_process=linear).
    Even,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            threads: 1,
            time_limit: Some(Duration::from_secs(10)),
            event_limit: 0,
            warmup: Duration::ZERO,
            report_interval: None,
            sample_interval: None,
            rate: None,
            arrivals: Arrivals::Poisson,
            queue_limit: None,
            forced_shutdown: None,
            seed: 0,
            rand_type: None,
            rand_shape: Default::default(),
            interval_percentiles: vec![95.0],
            together: None,
            steady: None,
        }
    }
}

/// Why the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCause {
    /// The time limit passed.
    Time,
    /// The event limit was used up, or every worker finished its own quota.
    Completed,
    /// A signal arrived (its number).
    Signal(i32),
    /// Workers did not stop within the forced-shutdown grace.
    Forced,
    /// The run's steady-state criterion held (`RunConfig::steady`).
    Steady,
}

/// One interval's figures, as printed by `--report-interval`.
#[derive(Clone, Debug)]
pub struct IntervalSample {
    /// Seconds since the start (warm-up included) at the end of the interval.
    pub at: Duration,
    pub length: Duration,
    /// The interval lies (partly) in the warm-up.
    pub warmup: bool,
    /// Operations per kind completed in the interval.
    pub kind_counts: Vec<u64>,
    /// Counter increments in the interval.
    pub counters: Vec<u64>,
    /// Events (operations of event kinds) completed in the interval.
    pub events: u64,
    /// Event latency percentiles over the interval, in config order (ns).
    pub percentiles: Vec<u64>,
    /// Threads still running.
    pub threads_running: usize,
    /// Open loop: scheduled events not yet started, summed over threads.
    pub backlog: Option<u64>,
    /// Open loop: threads busy with an event at the sample's moment.
    pub concurrency: Option<u64>,
}

/// Everything a finished (or abandoned) run measured.
#[derive(Debug)]
pub struct RunOutcome {
    pub cause: StopCause,
    /// From the start barrier to the last worker's end, warm-up excluded.
    pub elapsed: Duration,
    pub warmup: Duration,
    pub threads: Vec<ThreadSnapshot>,
    pub intervals: Vec<IntervalSample>,
    /// Open loop: scheduled events not yet started when the run ended.
    pub backlog: Option<u64>,
    /// A forced shutdown: per thread, in order, whether it was left behind inside an event
    /// (empty when nothing was forced).
    pub unfinished: Vec<bool>,
}

impl RunOutcome {
    /// What the run measured after `earlier` (a look at the same run, [`Peek::outcome`]):
    /// sysbench's checkpoint reports cover the time since the one before. Each window's
    /// min and max are its buckets' bounds (within 0.1%), the rest exact; no intervals.
    pub fn since(&self, earlier: &RunOutcome) -> RunOutcome {
        let hists = |a: &[Histogram], b: &[Histogram]| -> Vec<Histogram> {
            a.iter()
                .enumerate()
                .map(|(k, h)| b.get(k).map_or_else(|| h.clone(), |e| h.since(e)))
                .collect()
        };
        let counts = |a: &[u64], b: &[u64]| -> Vec<u64> {
            a.iter()
                .enumerate()
                .map(|(k, v)| v.saturating_sub(b.get(k).copied().unwrap_or(0)))
                .collect()
        };
        let threads = self
            .threads
            .iter()
            .enumerate()
            .map(|(t, now)| match earlier.threads.get(t) {
                None => now.clone(),
                Some(then) => ThreadSnapshot {
                    kinds: hists(&now.kinds, &then.kinds),
                    counters: counts(&now.counters, &then.counters),
                    service: now.service.since(&then.service),
                    lag: now.lag.since(&then.lag),
                    warm_kinds: hists(&now.warm_kinds, &then.warm_kinds),
                    warm_counters: counts(&now.warm_counters, &then.warm_counters),
                },
            })
            .collect();
        RunOutcome {
            cause: self.cause,
            elapsed: self.elapsed.saturating_sub(earlier.elapsed),
            warmup: self.warmup.saturating_sub(earlier.warmup),
            threads,
            intervals: Vec::new(),
            backlog: self.backlog,
            unfinished: self.unfinished.clone(),
        }
    }
}

#[derive(Debug, Error)]
pub enum HarnessError {
    // Transparent: the message is the workload's, and a chain printer must not repeat it.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A worker failed after the run started: its error, and what was measured until then.
    #[error("{error}")]
    Failed {
        error: WorkloadError,
        partial: Box<RunOutcome>,
    },
    /// An open-loop run fell further behind its rate than `RunConfig::queue_limit`.
    #[error("the workers cannot keep up with the rate asked for: {waiting} events were due and not started, over the limit of {limit}")]
    QueueFull { waiting: u64, limit: u64 },
    #[error("could not start worker thread: {0}")]
    Spawn(std::io::Error),
    #[error("a worker thread panicked: {0}")]
    Panic(String),
}

struct Finish {
    count: Mutex<usize>,
    cv: Condvar,
}

/// Run `workload` under `cfg`. `on_interval` is called on the main thread for each interval.
pub fn run(
    workload: Arc<dyn Workload>,
    cfg: &RunConfig,
    signal: &StopFlag,
    on_interval: &mut dyn FnMut(&IntervalSample),
) -> Result<RunOutcome, HarnessError> {
    run_peeked(workload, cfg, signal, on_interval, None)
}

/// [`run`], with `peek` showing other threads what the run has measured while it goes on.
pub fn run_peeked(
    workload: Arc<dyn Workload>,
    cfg: &RunConfig,
    signal: &StopFlag,
    on_interval: &mut dyn FnMut(&IntervalSample),
    peek: Option<&Peek>,
) -> Result<RunOutcome, HarnessError> {
    run_announced(workload, cfg, signal, on_interval, peek, &mut || {})
}

/// [`run_peeked`], calling `built` once every worker is built, before any starts: a front
/// end whose peer announces its threads only once they are set up prints that there. A
/// worker that cannot be built ends the run before `built`, with
/// [`HarnessError::Workload`].
pub fn run_announced(
    workload: Arc<dyn Workload>,
    cfg: &RunConfig,
    signal: &StopFlag,
    on_interval: &mut dyn FnMut(&IntervalSample),
    peek: Option<&Peek>,
    built: &mut dyn FnMut(),
) -> Result<RunOutcome, HarnessError> {
    clock::init();
    let threads = cfg.threads.max(1);
    let kinds = workload.kinds().to_vec();
    let counter_names = workload.counters().to_vec();
    let ncounters = counter_names.len();
    let warm = cfg.warmup > Duration::ZERO;
    let shared = Arc::new(Shared {
        stop: Default::default(),
        issued: Default::default(),
        event_limit: cfg.event_limit,
        threads,
        seed: cfg.seed,
        rand_type: cfg.rand_type,
        rand_shape: cfg.rand_shape,
        warmup: cfg.warmup,
        rate: cfg.rate,
        arrivals: cfg.arrivals,
        origin: OnceLock::new(),
        origin_stamp: OnceLock::new(),
    });
    let slots: Arc<Vec<ThreadSlot>> = Arc::new(
        (0..threads)
            .map(|_| ThreadSlot::new(kinds.len(), ncounters, warm))
            .collect(),
    );

    // Build every worker before anyone starts, so a failure costs nothing and set-up time
    // never lands in the measurement.
    let mut workers = Vec::with_capacity(threads);
    for t in 0..threads {
        workers.push(workload.worker(t)?);
    }
    built();

    let lean = !workload.threads_measured();
    let barrier = Arc::new(Barrier::new(threads + 1));
    let finish = Arc::new(Finish {
        count: Mutex::new(0),
        cv: Condvar::new(),
    });
    let first_error: Arc<Mutex<Option<HarnessError>>> = Arc::new(Mutex::new(None));
    let mut handles: Vec<JoinHandle<()>> = Vec::with_capacity(threads);
    for (t, mut worker) in workers.into_iter().enumerate() {
        let (w_shared, w_slots, w_barrier) = (shared.clone(), slots.clone(), barrier.clone());
        let (w_finish, w_error) = (finish.clone(), first_error.clone());
        let h = std::thread::Builder::new()
            .name(format!("{WORKER_THREAD_NAME}-{t}"))
            .spawn(move || {
                if lean {
                    crate::rseq::leave();
                }
                w_barrier.wait();
                let slot = &w_slots[t];
                let mut ctx = WorkerCtx::new(t, &w_shared, slot, w_shared.origin_stamp());
                let res = worker.run(&mut ctx).and_then(|_| worker.finish(&mut ctx));
                if let Err(e) = res {
                    w_shared.stop.store(true, Relaxed);
                    let mut fe = w_error.lock().unwrap_or_else(|p| p.into_inner());
                    fe.get_or_insert(HarnessError::Workload(e));
                }
                slot.done.store(true, Relaxed);
                let mut n = w_finish.count.lock().unwrap_or_else(|p| p.into_inner());
                *n += 1;
                w_finish.cv.notify_all();
            })
            .map_err(HarnessError::Spawn);
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Release the threads already waiting at the barrier, then give up.
                shared.stop.store(true, Relaxed);
                // Threads already spawned stay parked at the barrier; the caller exits.
                return Err(e);
            }
        }
    }

    let _ = shared.origin_stamp.set(Stamp::now());
    let _ = shared.origin.set(Instant::now());
    barrier.wait();
    let start = shared.origin();
    if let Some(p) = peek {
        p.attach(slots.clone(), start, cfg.warmup);
    }
    let steady = cfg.steady.as_ref();
    // Detection starts once the warm-up is over (fio's job is not running yet during its
    // ramp_time, and its counts start from zero after it).
    let steady_from = start + cfg.warmup;
    let mut steady_started = false;
    let time_deadline = cfg.time_limit.map(|t| start + cfg.warmup + t);
    let forced_deadline = match (time_deadline, cfg.forced_shutdown) {
        (Some(d), Some(g)) => Some(d + g),
        _ => None,
    };
    let period = cfg.report_interval.or(cfg.sample_interval);
    let mut next_interval = period.map(|i| start + i);
    let mut cause = StopCause::Completed;
    let mut stopping = false;
    let mut intervals = Vec::new();
    let mut prev = IntervalState::new(&kinds, ncounters);
    let mut prev_at = start;
    let mut abandon = false;
    // When the run was told to stop: the schedule is judged up to then, not up to the end of
    // the drain of in-flight requests that follows (no event is due once stopping).
    let mut stopped_at: Option<Instant> = None;
    let mut signal_deadline = None;
    // Events due and not started when the run fell past `cfg.queue_limit`.
    let mut queue_full = None;
    let event_kinds: Vec<bool> = kinds.iter().map(|k| k.is_event).collect();

    loop {
        let now = Instant::now();
        let sig = signal.load(Relaxed);
        if sig != 0 && !stopping {
            stopping = true;
            stopped_at.get_or_insert(now);
            cause = StopCause::Signal(sig as i32);
            shared.stop.store(true, Relaxed);
            signal_deadline = Some(now + SIGNAL_GRACE);
        }
        if let Some(at) = next_interval {
            if now >= at && !stopping {
                let s = prev.sample(
                    &slots,
                    &event_kinds,
                    cfg,
                    at.saturating_duration_since(start),
                    at.saturating_duration_since(prev_at),
                    start,
                );
                on_interval(&s);
                if let Some(p) = peek {
                    p.interval(&s);
                }
                intervals.push(s);
                prev_at = at;
                next_interval = Some(at + period.unwrap_or_default());
            }
        }
        if let Some(t) = &cfg.together {
            if !stopping && t.ended.load(Relaxed) {
                stopping = true;
                stopped_at.get_or_insert(now);
                shared.stop.store(true, Relaxed);
            }
        }
        if let Some(m) = steady.filter(|_| !steady_started && now >= steady_from) {
            m.start(
                steady_from,
                probe(&slots, &kinds, &counter_names, m.tally()),
            );
            steady_started = true;
        }
        if let Some(m) = steady.filter(|_| steady_started) {
            if !stopping && m.poll(now) {
                stopping = true;
                stopped_at.get_or_insert(now);
                cause = StopCause::Steady;
                shared.stop.store(true, Relaxed);
            }
        }
        if let (Some(limit), Some(rate), false) = (cfg.queue_limit, cfg.rate, stopping) {
            let waiting = backlog(&slots, rate / threads as f64, start, now);
            if waiting > limit {
                stopping = true;
                stopped_at.get_or_insert(now);
                shared.stop.store(true, Relaxed);
                queue_full = Some((waiting, limit));
            }
        }
        if let Some(d) = time_deadline {
            if now >= d && !stopping {
                stopping = true;
                stopped_at.get_or_insert(now);
                cause = StopCause::Time;
                shared.stop.store(true, Relaxed);
            }
        }
        let give_up = match (forced_deadline, signal_deadline) {
            (Some(f), Some(s)) => Some(f.min(s)),
            (f, s) => f.or(s),
        };
        if give_up.is_some_and(|g| now >= g) {
            if !matches!(cause, StopCause::Signal(_)) {
                cause = StopCause::Forced;
            }
            abandon = true;
            shared.stop.store(true, Relaxed);
            break;
        }
        let mut wake = now + Duration::from_millis(50);
        let steady_tick = match steady.filter(|_| !stopping) {
            Some(m) if steady_started => m.next_tick(),
            Some(_) => Some(steady_from),
            None => None,
        };
        for d in [time_deadline, next_interval, give_up, steady_tick]
            .into_iter()
            .flatten()
        {
            if d > now && d < wake {
                wake = d;
            }
        }
        let n = finish.count.lock().unwrap_or_else(|p| p.into_inner());
        if *n == threads {
            break;
        }
        let _ = finish
            .cv
            .wait_timeout(n, wake.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|p| p.into_inner());
    }

    let end = Instant::now();
    if let Some(p) = peek {
        p.end(end);
    }
    if let Some(m) = steady {
        m.stop();
    }
    if let Some(t) = &cfg.together {
        let failed = || {
            first_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
        };
        if t.ends_others || (t.ends_others_on_error && failed()) {
            t.ended.store(true, Relaxed);
        }
    }
    if abandon {
        // Workers that did not stop are left behind with their figures as they stand; the
        // caller reports and exits.
    } else {
        for h in handles {
            if let Err(p) = h.join() {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                return Err(HarnessError::Panic(msg));
            }
        }
    }
    let failed = first_error.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let (None, Some((waiting, limit))) = (&failed, queue_full) {
        return Err(HarnessError::QueueFull { waiting, limit });
    }

    let backlog = cfg.rate.map(|r| {
        backlog(
            &slots,
            r / threads as f64,
            start,
            stopped_at.unwrap_or(end).min(end),
        )
    });
    let total = end.saturating_duration_since(start);
    let unfinished = if abandon {
        slots.iter().map(|s| !s.done.load(Relaxed)).collect()
    } else {
        Vec::new()
    };
    let outcome = RunOutcome {
        cause,
        elapsed: total.saturating_sub(cfg.warmup.min(total)),
        warmup: cfg.warmup.min(total),
        threads: slots.iter().map(snapshot).collect(),
        intervals,
        backlog,
        unfinished,
    };
    match failed {
        None => Ok(outcome),
        Some(HarnessError::Workload(error)) => Err(HarnessError::Failed {
            error,
            partial: Box::new(outcome),
        }),
        Some(other) => Err(other),
    }
}

/// Reads the run's cumulative I/Os and bytes since the warm-up for steady-state
/// detection: the kinds and counters `tally` names.
fn probe(
    slots: &Arc<Vec<ThreadSlot>>,
    kinds: &[OpKind],
    counters: &[&'static str],
    tally: Tally,
) -> Probe {
    let ks: Vec<usize> = (0..kinds.len())
        .filter(|&k| tally.ios.contains(&kinds[k].name))
        .collect();
    let cs: Vec<usize> = (0..counters.len())
        .filter(|&c| tally.bytes.contains(&counters[c]))
        .collect();
    let slots = slots.clone();
    Box::new(move || {
        let (mut ios, mut bytes) = (0u64, 0u64);
        for phase in slots.iter().map(|s| &s.main) {
            ios += ks
                .iter()
                .filter_map(|&k| phase.kinds.get(k))
                .map(|h| h.count())
                .sum::<u64>();
            bytes += cs
                .iter()
                .filter_map(|&c| phase.counters.get(c))
                .map(|a| a.load(Relaxed))
                .sum::<u64>();
        }
        (ios, bytes)
    })
}

/// Scheduled events that were due by `at` but not yet started, summed over threads.
fn backlog(slots: &[ThreadSlot], per_thread_rate: f64, origin: Instant, at: Instant) -> u64 {
    let at_ns = at.saturating_duration_since(origin).as_nanos() as u64;
    slots
        .iter()
        .map(|s| {
            let due = s.next_due_ns.load(Relaxed);
            if at_ns > due {
                ((at_ns - due) as f64 * per_thread_rate / 1e9).ceil() as u64
            } else {
                0
            }
        })
        .sum()
}

/// Cumulative figures at the previous interval boundary.
struct IntervalState {
    event_hist: Histogram,
    kind_counts: Vec<u64>,
    counters: Vec<u64>,
}

impl IntervalState {
    fn new(kinds: &[crate::workload::OpKind], counters: usize) -> Self {
        IntervalState {
            event_hist: Histogram::new(),
            kind_counts: vec![0; kinds.len()],
            counters: vec![0; counters],
        }
    }

    fn sample(
        &mut self,
        slots: &[ThreadSlot],
        event_kinds: &[bool],
        cfg: &RunConfig,
        at: Duration,
        length: Duration,
        origin: Instant,
    ) -> IntervalSample {
        let mut hist = Histogram::new();
        let mut kind_counts = vec![0u64; event_kinds.len()];
        let mut counters = vec![0u64; self.counters.len()];
        let mut running = 0;
        for s in slots {
            if !s.done.load(Relaxed) {
                running += 1;
            }
            for phase in [&s.warm, &s.main] {
                for (k, h) in phase.kinds.iter().enumerate() {
                    kind_counts[k] += h.count();
                    if event_kinds[k] {
                        h.add_into(&mut hist);
                    }
                }
                for (i, c) in phase.counters.iter().enumerate() {
                    counters[i] += c.load(Relaxed);
                }
            }
        }
        let window = hist.since(&self.event_hist);
        let sample = IntervalSample {
            at,
            length,
            warmup: at.saturating_sub(length) < cfg.warmup,
            kind_counts: kind_counts
                .iter()
                .zip(&self.kind_counts)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
            counters: counters
                .iter()
                .zip(&self.counters)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
            events: window.count(),
            percentiles: cfg
                .interval_percentiles
                .iter()
                .map(|&p| window.percentile(p).unwrap_or(0))
                .collect(),
            threads_running: running,
            backlog: cfg
                .rate
                .map(|r| backlog(slots, r / slots.len() as f64, origin, origin + at)),
            concurrency: cfg.rate.map(|_| {
                slots
                    .iter()
                    .filter(|s| s.busy.load(Relaxed) && !s.done.load(Relaxed))
                    .count() as u64
            }),
        };
        self.event_hist = hist;
        self.kind_counts = kind_counts;
        self.counters = counters;
        sample
    }
}
