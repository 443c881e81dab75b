//! State the workers write and the main thread reads while they run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::clock::Stamp;
use crate::stats::{Histogram, LiveHistogram};

/// Run-wide state every worker reads on its hot path.
pub(crate) struct Shared {
    pub stop: AtomicBool,
    pub issued: AtomicU64,
    pub event_limit: u64,
    pub threads: usize,
    pub seed: u64,
    pub rand_type: Option<crate::random::RandType>,
    pub rand_shape: crate::random::Shape,
    pub warmup: Duration,
    pub rate: Option<f64>,
    pub arrivals: super::Arrivals,
    pub origin: OnceLock<Instant>,
    /// The same moment on the hot-path clock.
    pub origin_stamp: OnceLock<Stamp>,
}

impl Shared {
    pub fn origin_stamp(&self) -> Stamp {
        *self
            .origin_stamp
            .get()
            .expect("origin is set before workers start")
    }
    pub fn origin(&self) -> Instant {
        *self
            .origin
            .get()
            .expect("origin is set before workers start")
    }
}

/// One phase's (warm-up or measured) figures of one thread.
pub(crate) struct PhaseSlot {
    pub kinds: Vec<LiveHistogram>,
    pub counters: Box<[AtomicU64]>,
    pub service: LiveHistogram,
    pub lag: LiveHistogram,
}

impl PhaseSlot {
    fn new(kinds: usize, counters: usize) -> Self {
        PhaseSlot {
            kinds: (0..kinds).map(|_| LiveHistogram::new()).collect(),
            counters: (0..counters).map(|_| AtomicU64::new(0)).collect(),
            service: LiveHistogram::new(),
            lag: LiveHistogram::new(),
        }
    }
}

/// Everything one worker thread writes.
pub(crate) struct ThreadSlot {
    pub warm: PhaseSlot,
    pub main: PhaseSlot,
    /// Open loop: when the next scheduled event is due, in ns since the origin.
    pub next_due_ns: AtomicU64,
    /// Open loop: the thread has started its scheduled event and not yet asked for the
    /// next one (sysbench's "concurrency" counts such threads).
    pub busy: AtomicBool,
    pub done: AtomicBool,
}

impl ThreadSlot {
    pub fn new(kinds: usize, counters: usize, warm: bool) -> Self {
        ThreadSlot {
            warm: PhaseSlot::new(
                if warm { kinds } else { 0 },
                if warm { counters } else { 0 },
            ),
            main: PhaseSlot::new(kinds, counters),
            next_due_ns: AtomicU64::new(0),
            busy: AtomicBool::new(false),
            done: AtomicBool::new(false),
        }
    }

    #[inline]
    pub fn publish_next_due(&self, next: Stamp, origin: Stamp) {
        let ns = next.ns_since(origin);
        self.next_due_ns.store(ns, Relaxed);
    }
}

/// A copy of one thread's figures at one moment.
#[derive(Clone, Debug)]
pub struct ThreadSnapshot {
    /// Per kind, measured phase.
    pub kinds: Vec<Histogram>,
    pub counters: Vec<u64>,
    pub service: Histogram,
    pub lag: Histogram,
    /// Per kind, warm-up phase (empty without warm-up).
    pub warm_kinds: Vec<Histogram>,
    pub warm_counters: Vec<u64>,
}

pub(crate) fn snapshot(slot: &ThreadSlot) -> ThreadSnapshot {
    let load = |c: &[AtomicU64]| c.iter().map(|a| a.load(Relaxed)).collect::<Vec<_>>();
    ThreadSnapshot {
        kinds: slot.main.kinds.iter().map(|h| h.snapshot()).collect(),
        counters: load(&slot.main.counters),
        service: slot.main.service.snapshot(),
        lag: slot.main.lag.snapshot(),
        warm_kinds: slot.warm.kinds.iter().map(|h| h.snapshot()).collect(),
        warm_counters: load(&slot.warm.counters),
    }
}
