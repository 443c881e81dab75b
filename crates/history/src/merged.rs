//! The runs of one sweep point merged: what `plumb sweep`'s table, `plumb html sweep:ID` and
//! `plumb compare sweep:A sweep:B` say of a point.

use plumb_advise::Finding;
use plumb_core::stats::Histogram;
use plumb_pipeline::Record;

/// Runs of one point merged: all events over all measured time, histograms added.
pub struct Merged {
    pub events: u64,
    pub secs: f64,
    pub hist: Histogram,
    /// Each finding once, the first run's that has it.
    pub findings: Vec<Finding>,
}

impl Merged {
    /// Events, measured seconds and the merged latency histogram of runs (groups one after
    /// another, a group's jobs together).
    pub fn of<'a>(records: impl Iterator<Item = &'a Record>) -> Merged {
        let mut m = Merged {
            events: 0,
            secs: 0.0,
            hist: Histogram::new(),
            findings: Vec::new(),
        };
        for r in records {
            for g in &r.groups {
                m.secs += g.jobs.iter().map(|j| j.total_time_s).fold(0.0, f64::max);
                for j in &g.jobs {
                    m.events += j.events;
                    m.hist.merge(&j.events_histogram());
                    for f in &j.findings {
                        if !m.findings.iter().any(|x| x.id == f.id) {
                            m.findings.push(f.clone());
                        }
                    }
                }
            }
        }
        m
    }

    pub fn rate(&self) -> f64 {
        if self.secs > 0.0 {
            self.events as f64 / self.secs
        } else {
            0.0
        }
    }

    pub fn ids(&self) -> Vec<&str> {
        self.findings.iter().map(|f| f.id.as_str()).collect()
    }
}
