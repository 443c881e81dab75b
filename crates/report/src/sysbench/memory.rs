use std::fmt::Write;

use plumb_core::result::{IntervalResult, RunResult};
use plumb_core::size::{format_size_in, KIB, MIB};
use plumb_micro::memory::Oper;
use plumb_micro::settings::MemorySettings;

/// MiB/s from a byte count over `secs` seconds.
fn mib_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / MIB as f64 / secs.max(1e-9)
}

/// sysbench's memory block: operations, then MiB transferred unless the operation was
/// `none`, each followed by a blank line, then the blank line before "General statistics".
pub(crate) fn block(out: &mut String, r: &RunResult, s: &MemorySettings) {
    let _ = writeln!(
        out,
        "Total operations: {} ({:8.2} per second)\n",
        r.events, r.events_per_s
    );
    if s.oper != Oper::None {
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

/// The lines sysbench prints before the memory test starts.
pub(crate) fn header(s: &MemorySettings) -> String {
    format!(
        "Running memory speed test with the following options:\n  block size: {}\n  total size: {}\n  operation: {}\n  scope: {}\n\n",
        format_size_in(s.block_size_bytes, KIB),
        format_size_in(s.total_size_bytes, MIB),
        s.oper.name(),
        s.scope.name()
    )
}
