use std::fmt::Write;

use plumb_core::result::RunResult;

pub(crate) fn block(out: &mut String, r: &RunResult) {
    let _ = writeln!(out, "CPU speed:");
    let _ = writeln!(out, "    events per second: {:8.2}", r.events_per_s);
    let _ = writeln!(out);
}
