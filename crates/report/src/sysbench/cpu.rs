use std::fmt::Write;

use plumb_core::result::RunResult;
use plumb_micro::settings::CpuSettings;

pub(crate) fn header(s: &CpuSettings) -> String {
    format!("Prime numbers limit: {}\n\n", s.cpu_max_prime)
}

pub(crate) fn block(out: &mut String, r: &RunResult) {
    let _ = writeln!(out, "CPU speed:");
    let _ = writeln!(out, "    events per second: {:8.2}", r.events_per_s);
    let _ = writeln!(out);
}
