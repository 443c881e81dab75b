//! The contract between the pipeline and a report layout (sysbench's text, fio's, ...).
//! A layout renders from the record alone, so `plumb report FILE.json` prints what the live
//! run printed: the banner, each job's preamble, its interval lines, then the report.

use plumb_core::result::IntervalResult;

use crate::record::{Checkpoint, GroupRecord, JobRecord, Record};

pub trait Layout: Sync {
    /// Printed once, before the first step (by the front end: where it comes among the
    /// front end's own checks is the peer's business). None by default.
    fn banner(&self) -> String {
        String::new()
    }
    /// Printed before a job's workers start. `job` holds its settings; its result is empty.
    /// None by default.
    fn preamble(&self, _job: &JobRecord) -> String {
        String::new()
    }
    /// Printed instead of the preamble when a job fails to open for its run (its files or
    /// tables are not there): what the peer prints before it finds that out. `job` holds
    /// its settings as they were before the opening. Live output only (no record keeps a
    /// run that never started). None by default.
    fn unopened(&self, _job: &JobRecord) -> String {
        String::new()
    }
    /// One interval line (`--report-interval`); empty (the default): the layout prints none.
    fn interval(&self, _job: &JobRecord, _i: &IntervalResult) -> String {
        String::new()
    }
    /// A checkpoint report of `job` (its settings; `c` the figures since the checkpoint
    /// before). Printed as it is made, and again in a replay among the interval lines.
    /// None by default.
    fn checkpoint(&self, _job: &JobRecord, _c: &Checkpoint) -> String {
        String::new()
    }
    /// After a group ran: its jobs' reports, then plumb's sections.
    fn report(&self, record: &Record, group: &GroupRecord) -> String;
    /// After the last group (layouts that report every group at the end, as fio does).
    fn finish(&self, _record: &Record) -> String {
        String::new()
    }
    /// A full report while the jobs run (`PlanOptions::status_interval`), of `record`: what
    /// has been measured so far, at `unix_ms`. Live output only, never replayed (a saved
    /// record holds the final figures). Empty (the default): the layout prints none.
    fn status(&self, _record: &Record, _unix_ms: u64) -> String {
        String::new()
    }

    /// How the front end writes the settings that findings' advice names (plain words when
    /// it has no spelling).
    fn spelling(&self) -> Option<plumb_advise::Spelling> {
        None
    }

    /// Everything a run printed on stdout, again: for a saved record.
    fn replay(&self, record: &Record) -> String {
        replay_with(self, record)
    }
}

/// [`Layout::replay`] as `layout` renders it: for a layout that picks a variant of itself
/// from the record's rendering choices first.
pub fn replay_with<L: Layout + ?Sized>(layout: &L, record: &Record) -> String {
    let steps_before = |k: usize| {
        record
            .step_logs
            .iter()
            .filter(|s| s.before_group == k)
            .map(|s| s.text.as_str())
            .collect::<String>()
    };
    let mut out = layout.banner();
    for (k, g) in record.groups.iter().enumerate() {
        out.push_str(&steps_before(k));
        for j in &g.jobs {
            out.push_str(&layout.preamble(j));
        }
        // Intervals sampled for the record alone were never printed.
        for j in &g.jobs {
            let printed = j.settings.report_interval_s.is_some();
            let mut checkpoints = j.checkpoints.iter().peekable();
            for i in j.intervals.iter().filter(|_| printed) {
                // In time order, as the live run printed them (one due at an interval's
                // moment is taken a moment after it).
                while let Some(c) = checkpoints.next_if(|c| c.at_s < i.at_s) {
                    out.push_str(&layout.checkpoint(j, c));
                }
                let line = layout.interval(j, i);
                if !line.is_empty() {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            for c in checkpoints {
                out.push_str(&layout.checkpoint(j, c));
            }
        }
        out.push_str(&layout.report(record, g));
    }
    // The last steps (cleanup) log before the layout's closing part, as a run prints them.
    out.push_str(&steps_before(record.groups.len()));
    out.push_str(&layout.finish(record));
    out
}
