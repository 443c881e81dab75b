//! The contract between the pipeline and a report layout (sysbench's text, fio's, ...).
//! A layout renders from the record alone, so `plumb report FILE.json` prints what the live
//! run printed: the banner, each job's preamble, its interval lines, then the report.

use plumb_core::result::IntervalResult;

use crate::record::{GroupRecord, JobRecord, Record};

pub trait Layout: Sync {
    /// Printed once, before the first step (by the front end: where it comes among the
    /// front end's own checks is the peer's business).
    fn banner(&self) -> String;
    /// Printed before a job's workers start. `job` holds its settings; its result is empty.
    fn preamble(&self, job: &JobRecord) -> String;
    /// One interval line (`--report-interval`).
    fn interval(&self, job: &JobRecord, i: &IntervalResult) -> String;
    /// After a group ran: its jobs' reports, then plumb's sections.
    fn report(&self, record: &Record, group: &GroupRecord) -> String;

    /// How the front end writes the settings that findings' advice names (plain words when
    /// it has no spelling).
    fn spelling(&self) -> Option<plumb_advise::Spelling> {
        None
    }

    /// Everything a run printed on stdout, again: for a saved record.
    fn replay(&self, record: &Record) -> String {
        let mut out = self.banner();
        for g in &record.groups {
            for j in &g.jobs {
                out.push_str(&self.preamble(j));
            }
            for j in &g.jobs {
                for i in &j.intervals {
                    out.push_str(&self.interval(j, i));
                    out.push('\n');
                }
            }
            out.push_str(&self.report(record, g));
        }
        out
    }
}
