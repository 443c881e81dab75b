//! Each test's own report block, chosen by test name.

mod cpu;

use plumb_core::result::{IntervalResult, RunResult};

/// The block printed before "General statistics" ("CPU speed:", "File operations:", ...).
pub(crate) fn test_block(out: &mut String, r: &RunResult) {
    if r.test.as_str() == "cpu" {
        cpu::block(out, r)
    }
}

/// A test's own interval line body (after "[ Ns ] "), when it differs from the common one.
pub(crate) fn interval_body(test: &str, i: &IntervalResult) -> Option<String> {
    let _ = (test, i);
    None
}
