//! Checkpoint reports (sysbench's `--report-checkpoints`): at each of a job's
//! [`crate::JobSpec::checkpoints`] a full report of what was measured since the checkpoint
//! before (or the start), read from live looks at the harness ([`Peek`]), nothing stopped.
//! The job's own result stays the whole run's; the text report after the run covers the
//! time since the last checkpoint, as sysbench's does, from [`Taken::tail`].

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use plumb_core::harness::{Peek, RunOutcome};

/// The checkpoints a job's run reached: each cumulative look, and when it was taken.
#[derive(Default)]
pub(crate) struct Taken {
    looks: Vec<(Duration, RunOutcome)>,
}

impl Taken {
    /// The run's figures after its last checkpoint; None when it reached none.
    pub fn tail(&self, end: &RunOutcome) -> Option<RunOutcome> {
        self.looks.last().map(|(_, last)| end.since(last))
    }
}

/// Nothing measured, shaped like `like` (the first window is the first look itself).
fn empty(like: &RunOutcome) -> RunOutcome {
    RunOutcome {
        cause: like.cause,
        elapsed: Duration::ZERO,
        warmup: Duration::ZERO,
        threads: Vec::new(),
        intervals: Vec::new(),
        backlog: None,
        unfinished: Vec::new(),
    }
}

/// Runs `run` while another thread takes a look at `peek` at each of `times` since the run
/// started (sorted; a time already past when the run starts is skipped, as sysbench skips
/// it) and hands each window to `report` as it is taken. Looks stop when `run` returns.
pub(crate) fn alongside<R: Send>(
    times: &[Duration],
    peek: &Peek,
    report: &(dyn Fn(Duration, &RunOutcome) + Sync),
    run: impl FnOnce() -> R,
) -> (R, Taken) {
    if times.is_empty() {
        return (run(), Taken::default());
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let looks = scope.spawn(|| take(times, peek, report, &done));
        let r = run();
        done.store(true, Relaxed);
        let taken = looks.join().unwrap_or_default();
        (r, taken)
    })
}

fn take(
    times: &[Duration],
    peek: &Peek,
    report: &(dyn Fn(Duration, &RunOutcome) + Sync),
    done: &AtomicBool,
) -> Taken {
    let over = || done.load(Relaxed) || peek.ended();
    let Some(start) = wait(|| peek.started(), &over) else {
        return Taken::default();
    };
    let mut taken = Taken::default();
    let mut sorted = times.to_vec();
    sorted.sort();
    for t in sorted {
        let due = start + t;
        if Instant::now() >= due {
            continue;
        }
        if !sleep_until(due, &over) {
            break;
        }
        let Some(look) = peek.outcome() else { break };
        let at = Instant::now().saturating_duration_since(start);
        let window = match taken.looks.last() {
            Some((_, prev)) => look.since(prev),
            None => look.since(&empty(&look)),
        };
        report(at, &window);
        taken.looks.push((at, look));
    }
    taken
}

/// Sleeps until `due`, in slices so the thread ends soon after the run does; false when
/// the run ended first.
fn sleep_until(due: Instant, over: &impl Fn() -> bool) -> bool {
    loop {
        if over() {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(20)));
    }
}

/// Polls `ready` until it gives a value, or None once `over` says the run has ended.
fn wait<T>(ready: impl Fn() -> Option<T>, over: &impl Fn() -> bool) -> Option<T> {
    loop {
        if let Some(v) = ready() {
            return Some(v);
        }
        if over() {
            return None;
        }
        // The workers start moments after the thread does.
        std::thread::sleep(Duration::from_millis(1));
    }
}
