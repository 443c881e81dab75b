use std::fmt::Write;

use plumb_core::result::{IntervalResult, RunResult};
use plumb_core::size::MIB;

/// MiB/s from a byte count over `secs` seconds.
fn mib_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / MIB as f64 / secs.max(1e-9)
}

/// sysbench's memory block: operations, then MiB transferred unless the operation was
/// `none`, each followed by a blank line, then the blank line before "General statistics".
pub(crate) fn block(out: &mut String, r: &RunResult) {
    let _ = writeln!(
        out,
        "Total operations: {} ({:8.2} per second)\n",
        r.events, r.events_per_s
    );
    if r.workload.get("oper").and_then(|o| o.as_str()) != Some("none") {
        let bytes = r.counter("bytes");
        let _ = writeln!(
            out,
            "{:4.2} MiB transferred ({:4.2} MiB/sec)\n",
            bytes as f64 / MIB as f64,
            mib_per_s(bytes, r.total_time_s)
        );
    }
    let _ = writeln!(out);
}

/// sysbench's memory interval line: throughput only, no latency.
pub(crate) fn interval(i: &IntervalResult) -> String {
    format!("{:4.2} MiB/sec", mib_per_s(i.counter("bytes"), i.length_s))
}
