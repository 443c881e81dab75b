use std::fmt::Write;

use plumb_core::result::{IntervalResult, RunResult};
use plumb_micro::memory::Oper;
use plumb_micro::settings::MemorySettings;

const MIB: f64 = 1048576.0;

/// MiB/s from a byte count over `secs` seconds.
fn mib_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / MIB / secs.max(1e-9)
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
            bytes as f64 / MIB,
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
        whole(s.block_size_bytes, 1024, "KiB"),
        whole(s.total_size_bytes, 1 << 20, "MiB"),
        s.oper.name(),
        s.scope.name()
    )
}

/// A size in whole `name` units when it divides evenly (sysbench prints "8KiB",
/// "102400MiB"), else in the largest unit that keeps it readable.
fn whole(bytes: u64, unit: u64, name: &str) -> String {
    // unit is a power of two
    if bytes & (unit - 1) == 0 {
        format!("{}{name}", bytes / unit)
    } else {
        plumb_core::size::format_size(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::whole;

    #[test]
    fn header_sizes() {
        assert_eq!(whole(1024, 1024, "KiB"), "1KiB");
        assert_eq!(whole(8 << 10, 1024, "KiB"), "8KiB");
        assert_eq!(whole(512, 1024, "KiB"), "512B");
        assert_eq!(whole(100 << 30, 1 << 20, "MiB"), "102400MiB");
        assert_eq!(whole(1536 << 10, 1 << 20, "MiB"), "1536KiB");
    }
}
