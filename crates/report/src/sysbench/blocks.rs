//! Each test's own report block, chosen by test name.

use super::{cpu, fileio, memory};

use plumb_core::result::{IntervalResult, RunResult};

/// The block printed before "General statistics" ("CPU speed:", "File operations:", ...),
/// ending with the blank line sysbench prints before "General statistics".
pub(crate) fn test_block(out: &mut String, r: &RunResult) {
    match r.test.as_str() {
        "cpu" => cpu::block(out, r),
        "fileio" => fileio::block(out, r),
        "memory" => memory::block(out, r),
        // No block of their own: only sysbench's blank line before "General statistics".
        "threads" | "mutex" => out.push('\n'),
        _ => {}
    }
}

/// A test's own plumb section, printed after the common plumb sections.
pub(crate) fn plumb_block(out: &mut String, r: &RunResult) {
    if r.test.as_str() == "fileio" {
        fileio::plumb_block(out, r)
    }
}

/// A test's own interval line (everything after "[ Ns ] ", latency included), when it
/// differs from the common one.
pub(crate) fn interval_body(test: &str, i: &IntervalResult) -> Option<String> {
    match test {
        "fileio" => Some(fileio::interval_body(i)),
        // sysbench's memory interval line is throughput only.
        "memory" => Some(memory::interval(i)),
        _ => None,
    }
}
