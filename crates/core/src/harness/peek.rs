//! A look at a run while it goes on: what it has measured so far, as if it ended now (fio's
//! `--status-interval` reports), read from the same live histograms and counters the interval
//! samples read, without stopping or resetting anything.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::slots::{snapshot, ThreadSlot, ThreadSnapshot};
use super::{IntervalSample, RunOutcome, StopCause};

/// Handed to [`super::run_peeked`]; any thread may call [`Peek::outcome`] meanwhile.
#[derive(Clone, Default)]
pub struct Peek(Arc<Mutex<Option<Watched>>>);

struct Watched {
    slots: Arc<Vec<ThreadSlot>>,
    start: Instant,
    warmup: Duration,
    intervals: Vec<IntervalSample>,
    /// When the run ended: its figures stop growing, and so does its time.
    ended: Option<Instant>,
}

impl std::fmt::Debug for Peek {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Peek")
    }
}

impl Peek {
    pub fn new() -> Peek {
        Peek::default()
    }

    fn with(&self, f: impl FnOnce(&mut Option<Watched>)) {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
    }

    pub(super) fn attach(&self, slots: Arc<Vec<ThreadSlot>>, start: Instant, warmup: Duration) {
        self.with(|w| {
            *w = Some(Watched {
                slots,
                start,
                warmup,
                intervals: Vec::new(),
                ended: None,
            })
        });
    }

    pub(super) fn interval(&self, s: &IntervalSample) {
        self.with(|w| {
            if let Some(w) = w {
                w.intervals.push(s.clone());
            }
        });
    }

    pub(super) fn end(&self, at: Instant) {
        self.with(|w| {
            if let Some(w) = w {
                w.ended.get_or_insert(at);
            }
        });
    }

    /// When the workers started, the origin of the run's time; None before.
    pub fn started(&self) -> Option<Instant> {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        g.as_ref().map(|w| w.start)
    }

    /// Whether the run has ended.
    pub fn ended(&self) -> bool {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        g.as_ref().is_some_and(|w| w.ended.is_some())
    }

    /// Everything measured so far, as [`super::run`] would hand it back had the run ended
    /// now (at its end once it has ended); None before the workers start. The cause says
    /// `Completed` whatever will end the run.
    pub fn outcome(&self) -> Option<RunOutcome> {
        let (slots, start, warmup, intervals, ended) = {
            let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
            let w = g.as_ref()?;
            (
                w.slots.clone(),
                w.start,
                w.warmup,
                w.intervals.clone(),
                w.ended,
            )
        };
        let total = ended
            .unwrap_or_else(Instant::now)
            .saturating_duration_since(start);
        Some(RunOutcome {
            cause: StopCause::Completed,
            elapsed: total.saturating_sub(warmup.min(total)),
            warmup: warmup.min(total),
            threads: slots.iter().map(settled).collect(),
            intervals,
            backlog: None,
            unfinished: Vec::new(),
        })
    }
}

/// A running thread's figures, each histogram's count made its buckets' (see
/// [`crate::stats::Histogram::settle`]), so they travel losslessly like final ones.
fn settled(slot: &ThreadSlot) -> ThreadSnapshot {
    let mut t = snapshot(slot);
    for h in t
        .kinds
        .iter_mut()
        .chain(t.warm_kinds.iter_mut())
        .chain([&mut t.service, &mut t.lag])
    {
        h.settle();
    }
    t
}
