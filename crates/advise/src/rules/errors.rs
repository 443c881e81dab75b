//! Requests that failed during the measurement.

use super::pct;
use crate::{Facts, Finding, Severity};

/// Requests failed with an error (fio's continue_on_error lets a job go on after them):
/// counted as issued with no data, so the figures are not what the device does.
pub fn io_errors(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    if io.failed_requests == 0 {
        return None;
    }
    let issued = io.reads + io.writes + io.failed_requests;
    Some(
        Finding::new(
            "io-errors",
            Severity::Caution,
            "Requests failed with an I/O error during the measurement: they count as issued but moved no data, and the rate and latency are those of a device that was failing, or of the errors.",
        )
        .evidence("failed requests", io.failed_requests)
        .evidence("share of requests issued", pct(io.failed_requests as f64 / issued as f64))
        .advice("Find out why they failed (the kernel log, a full filesystem, a device going away) and measure again without errors; a benchmark that goes on after errors (fio's continue_on_error, ignore_error) measures them too."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scenario;

    #[test]
    fn failed_requests_trigger_and_none_is_clean() {
        let mut f = scenario::fileio("rndwr");
        assert!(io_errors(&f).is_none());
        f.io.as_mut().unwrap().failed_requests = 100_000;
        let found = io_errors(&f).expect("triggers");
        assert_eq!(found.id, "io-errors");
        assert!(found
            .evidence
            .iter()
            .any(|e| e.0 == "share of requests issued" && e.1 == "25.0%"));
    }
}
