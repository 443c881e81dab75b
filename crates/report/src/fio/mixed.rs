//! fio's `unified_rw_reporting=mixed`: every direction's figures summed into one, reported as
//! `mixed` (`MIXED` in the group lines, a `mixed` object in JSON). fio sums the directions
//! into the read slot before it prints, so the terse line and `issued rwts` carry the sum in
//! the read fields; the same is done here to the job's record before it becomes a report.

use plumb_core::stats::{Histogram, SparseHistogram};
use plumb_pipeline::JobRecord;

/// The record's kinds and counters that fio keeps per direction: (read's, write's or
/// trim's).
const PAIRS: [(&str, &str); 6] = [
    ("read", "write"),
    ("read", "trim"),
    ("read_submit", "write_submit"),
    ("read_complete", "write_complete"),
    ("bytes_read", "bytes_written"),
    ("bytes_read", "bytes_trimmed"),
];

/// `job` with every write and trim figure added into its read figure (histograms, operation
/// and byte counts, and each interval's), the write and trim ones removed.
pub fn fold_directions(job: &JobRecord) -> JobRecord {
    let mut j = job.clone();
    for (into, from) in PAIRS {
        if let Some(w) = j.histograms.remove(from) {
            let sum = match j.histograms.get(into) {
                Some(r) => match (Histogram::try_from(r), Histogram::try_from(&w)) {
                    (Ok(mut r), Ok(w)) => {
                        r.merge(&w);
                        SparseHistogram::from(&r)
                    }
                    _ => continue,
                },
                None => w,
            };
            j.histograms.insert(into.to_string(), sum);
        }
        if let Some(w) = j.result.counters.remove(from) {
            *j.result.counters.entry(into.to_string()).or_default() += w;
        }
        for i in &mut j.result.intervals {
            if let Some(w) = i.operations.remove(from) {
                *i.operations.entry(into.to_string()).or_default() += w;
            }
            if let Some(w) = i.counters.remove(from) {
                *i.counters.entry(into.to_string()).or_default() += w;
            }
        }
    }
    j
}
