//! A status line redrawn while a group runs (fio's `Jobs: 1 (f=1): [r(1)][40.0%]...` line).
//! Unlike a layout's output it is not part of the record: it says how far the run has got,
//! drawn from the same interval samples the record keeps.

use std::collections::BTreeMap;
use std::time::Duration;

use plumb_core::result::IntervalResult;

use crate::record::JobRecord;

pub trait LiveStatus: Sync {
    /// Time between redraws.
    fn period(&self) -> Duration;
    /// The line for this moment, without its carriage return; None draws nothing.
    fn line(&self, view: &LiveView<'_>) -> Option<String>;
    /// Puts `text` (a line and its carriage return, or the final newline) where the status
    /// belongs: fio's goes to stdout whatever `--output` says.
    fn show(&self, text: &str);
    /// What ends the last line once the jobs are done (nothing when the report that follows
    /// begins with its own newline, as fio's does).
    fn end(&self) -> &'static str {
        "\n"
    }
}

/// Where a job of the running group stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveState {
    /// Waiting for its start delay.
    Pending,
    Running,
    Done,
}

/// One job of the running group as the status line sees it.
#[derive(Clone, Debug)]
pub struct LiveJob<'a> {
    /// Its settings (the result is empty while it runs).
    pub head: &'a JobRecord,
    pub state: LiveState,
    /// When it started running, since the first run step began.
    pub since: Option<Duration>,
    /// Operations and counters completed so far, warm-up included, as of the last sample.
    pub operations: BTreeMap<String, u64>,
    pub counters: BTreeMap<String, u64>,
    /// The last interval sample: the current rates.
    pub last: Option<IntervalResult>,
}

impl LiveJob<'_> {
    pub fn counter(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }

    /// Adds one interval sample to the totals.
    pub(crate) fn add(&mut self, i: IntervalResult) {
        for (k, v) in &i.operations {
            *self.operations.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &i.counters {
            *self.counters.entry(k.clone()).or_default() += v;
        }
        self.last = Some(i);
    }
}

/// The running group at one moment.
pub struct LiveView<'a> {
    /// Since the first run step began (fio's genesis).
    pub elapsed: Duration,
    pub jobs: &'a [LiveJob<'a>],
}
