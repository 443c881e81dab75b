//! fsync shaping the result.

use super::pct;
use crate::Knob;
use crate::{Facts, Finding, Severity};

/// Periodic fsyncs make up much of the events or of the time: the result measures fsync.
pub fn fsync_dominated(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    if io.fsyncs == 0 || f.events == 0 {
        return None;
    }
    let event_share = io.fsyncs as f64 / f.events as f64;
    let busy_ns = f.duration_s * 1e9 * f.threads.max(1) as f64;
    let time_share = if busy_ns > 0.0 {
        io.fsync_time_ns as f64 / busy_ns
    } else {
        0.0
    };
    if event_share < 0.2 && time_share < 0.3 {
        return None;
    }
    let mut x = Finding::new(
        "fsync-dominated",
        Severity::Caution,
        "fsync dominates the result: a large share of the events or of the time went to flushing, so the figures say more about fsync latency than about reads and writes.",
    )
    .evidence("fsyncs", io.fsyncs)
    .evidence("fsyncs, share of events", pct(event_share))
    .evidence("fsync time, share of run time", pct(time_share));
    if io.fsync_freq > 0 && !io.fsync_all {
        x = x
            .evidence(
                "fsync frequency",
                format!("every {} requests, once per file", io.fsync_freq),
            )
            .evidence("files", io.file_num);
    }
    Some(x.advice(if io.file_num > 1 && io.fsync_freq > 0 {
        format!(
            "Each periodic round fsyncs every file ({}), so {} multiplies the fsyncs: use {} to measure I/O alone, or fewer files, or make the fsync pattern match your application.",
            f.knob(Knob::FsyncEvery),
            f.knob(Knob::FileCount),
            f.knob(Knob::NoPeriodicFsync)
        )
    } else {
        format!(
            "Measure fsync on purpose (its own latency is reported separately) or use {} to measure reads and writes alone.",
            f.knob(Knob::NoPeriodicFsync)
        )
    }))
}

/// The end-of-run fsync took a large share of the total time: throughput over the total time
/// mixes fast cached writes with their late flush.
pub fn final_fsync_skew(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    if io.final_fsync_ns == 0 || f.duration_s <= 0.0 {
        return None;
    }
    let share = io.final_fsync_ns as f64 / (f.duration_s * 1e9);
    if share < 0.1 {
        return None;
    }
    Some(
        Finding::new(
            "final-fsync-skew",
            Severity::Caution,
            "The fsync at the end of the run took a large share of the total time: throughput over the total time blends cached writes with their flush.",
        )
        .evidence("end-of-run fsync", format!("{:.3} s", io.final_fsync_ns as f64 / 1e9))
        .evidence("share of total time", pct(share))
        .advice(format!(
            "Compare with {} and with {}; run longer so writeback is part of the steady state.",
            f.knob(Knob::NoEndFsync),
            f.knob(Knob::Direct)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scenario::fileio;

    #[test]
    fn many_fsyncs_trigger() {
        let mut f = fileio("rndwr");
        let io = f.io.as_mut().unwrap();
        io.fsync_freq = 100;
        io.file_num = 128;
        io.fsyncs = 300_000;
        io.fsync_time_ns = 40_000_000_000;
        f.events = 600_000;
        let x = fsync_dominated(&f).unwrap();
        assert!(x.advice.contains("the number of files multiplies"));
    }

    #[test]
    fn few_fsyncs_are_clean() {
        let mut f = fileio("rndwr");
        let io = f.io.as_mut().unwrap();
        io.fsync_freq = 100;
        io.fsyncs = 3_000;
        io.fsync_time_ns = 1_000_000_000;
        assert!(fsync_dominated(&f).is_none());
    }

    #[test]
    fn long_final_fsync_triggers() {
        let mut f = fileio("seqwr");
        f.duration_s = 10.0;
        f.io.as_mut().unwrap().final_fsync_ns = 3_000_000_000;
        assert!(final_fsync_skew(&f).is_some());
    }

    #[test]
    fn short_final_fsync_is_clean() {
        let mut f = fileio("seqwr");
        f.io.as_mut().unwrap().final_fsync_ns = 50_000_000;
        assert!(final_fsync_skew(&f).is_none());
    }
}
