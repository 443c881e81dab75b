//! Seed 002 ends: "when comparing two I/O scenarios, look at fsync calls, the filesystem's
//! cache hit ratio, the filesystem's concurrency and the OS's context-switch rate; only when
//! these are close can the results be compared." Each check reads the records'
//! observations; a mismatch is a warning, not a refusal.
//!
//! - fsync calls: fsyncs (those of the run and the end-of-run ones) per write; they differ
//!   when one run makes none and the other does, or by more than 10%.
//! - page cache hit ratio: the share of requested read bytes the storage did not have to
//!   supply (1 − bytes read from storage / bytes requested; storage bytes from the process's
//!   I/O accounting, else the filesystem's device); differs by more than 0.10. Beside it the
//!   share of the test's files resident in the page cache at the start (differs by more
//!   than 10 points).
//! - filesystem concurrency: threads in one file's write path at once (fileio), else the
//!   threads working on the target; differs by more than 10%.
//! - context switches per operation: they differ when one is at least 1.5 times the other
//!   and they are at least 0.05 apart (below that both runs barely switch).
//!
//! Two sweeps are checked point by point; a side with several runs of a point (repeats)
//! has the mean of its runs' figures.

use plumb_pipeline::{GroupRecord, Settings};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    pub group: usize,
    pub name: &'static str,
    pub unit: &'static str,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub verdict: CheckVerdict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckVerdict {
    Match,
    Differ,
    /// Neither run has the figure (no file I/O in a CPU test, no reads in a write test).
    NotApplicable,
}

pub const FSYNC: &str = "fsync calls";
pub const HIT_RATIO: &str = "page cache hit ratio";
pub const RESIDENT: &str = "files in page cache at start";
pub const CONCURRENCY: &str = "filesystem concurrency";
pub const SWITCHES: &str = "context switches";

/// The checks for group `g` of both runs.
pub fn of_groups(g: usize, a: &GroupRecord, b: &GroupRecord) -> Vec<Check> {
    of_runs(g, &[a], &[b])
}

/// The checks for group `g` of several runs of each side (a sweep point's repeats): each
/// side's figure is the mean of its runs' figures, over the runs that have it.
pub(crate) fn of_runs(g: usize, a: &[&GroupRecord], b: &[&GroupRecord]) -> Vec<Check> {
    type Get = fn(&GroupRecord) -> Option<f64>;
    type Same = fn(f64, f64) -> bool;
    let rows: [(&'static str, &'static str, Get, Same); 5] = [
        (FSYNC, "per write", fsyncs_per_write, |x, y| {
            (x == 0.0) == (y == 0.0) && relative(x, y) <= 0.10
        }),
        (HIT_RATIO, "of read bytes", read_hit_ratio, |x, y| {
            (x - y).abs() <= 0.10
        }),
        (RESIDENT, "%", resident_at_start_pct, |x, y| {
            (x - y).abs() <= 10.0
        }),
        (CONCURRENCY, "threads per file", concurrency, |x, y| {
            relative(x, y) <= 0.10
        }),
        (SWITCHES, "per operation", switches_per_op, |x, y| {
            let (lo, hi) = (x.min(y), x.max(y));
            hi < 1.5 * lo || hi - lo < 0.05
        }),
    ];
    rows.into_iter()
        .map(|(name, unit, get, same)| {
            let (va, vb) = (mean(a, get), mean(b, get));
            let verdict = match (va, vb) {
                (None, None) => CheckVerdict::NotApplicable,
                (Some(x), Some(y)) if same(x, y) => CheckVerdict::Match,
                _ => CheckVerdict::Differ,
            };
            Check {
                group: g,
                name,
                unit,
                a: va,
                b: vb,
                verdict,
            }
        })
        .collect()
}

/// The mean of `get` over the groups that have it; None when none has.
fn mean(groups: &[&GroupRecord], get: fn(&GroupRecord) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = groups.iter().filter_map(|g| get(g)).collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// |x − y| over the larger of the two (0 when both are 0).
fn relative(x: f64, y: f64) -> f64 {
    let m = x.abs().max(y.abs());
    if m == 0.0 {
        0.0
    } else {
        (x - y).abs() / m
    }
}

fn fileio_jobs(g: &GroupRecord) -> impl Iterator<Item = &plumb_pipeline::JobRecord> {
    g.jobs
        .iter()
        .filter(|j| matches!(j.workload, Settings::Fileio(_)))
}

fn fsyncs_per_write(g: &GroupRecord) -> Option<f64> {
    let (mut fsyncs, mut writes, mut any) = (0u64, 0u64, false);
    for j in fileio_jobs(g) {
        any = true;
        fsyncs += j.operation("fsync").map_or(0, |o| o.count) + j.counter("end_fsyncs");
        writes += j.operation("write").map_or(0, |o| o.count);
    }
    (any && writes > 0).then(|| fsyncs as f64 / writes as f64)
}

fn read_hit_ratio(g: &GroupRecord) -> Option<f64> {
    let o = g.observations.as_ref()?;
    let requested: u64 = if fileio_jobs(g).next().is_some() {
        fileio_jobs(g).map(|j| j.counter("bytes_read")).sum()
    } else {
        // Tests that read through a library (a database file): what the process asked for.
        o.target.as_ref()?;
        o.process.totals.read_syscall_bytes?
    };
    if requested == 0 {
        return None;
    }
    let storage = o
        .process
        .totals
        .storage_read_bytes
        .or_else(|| o.filesystem_device().map(|d| d.totals.read_bytes))?;
    Some((1.0 - storage as f64 / requested as f64).clamp(0.0, 1.0))
}

fn resident_at_start_pct(g: &GroupRecord) -> Option<f64> {
    let r = g.observations.as_ref()?.residency.as_ref()?;
    (r.start.total_bytes > 0).then_some(r.start.resident_pct)
}

fn concurrency(g: &GroupRecord) -> Option<f64> {
    let per_file = fileio_jobs(g)
        .filter_map(|j| match &j.workload {
            Settings::Fileio(s) => Some(s.writers_per_file),
            _ => None,
        })
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    per_file.or_else(|| {
        g.observations.as_ref()?.target.as_ref()?;
        Some(g.jobs.iter().map(|j| j.settings.threads as f64).sum())
    })
}

fn switches_per_op(g: &GroupRecord) -> Option<f64> {
    let p = g.observations.as_ref()?.process.per_operation.as_ref()?;
    Some(p.context_switches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_difference() {
        assert_eq!(relative(0.0, 0.0), 0.0);
        assert_eq!(relative(90.0, 100.0), 0.1);
        assert_eq!(relative(0.0, 1.0), 1.0);
    }
}
