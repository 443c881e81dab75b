//! fileio's report: sysbench's "File operations" and "Throughput" blocks, its interval
//! line, and plumb's own section (engine actually used, directory, data, end-of-run fsync).

use std::fmt::Write;

use plumb_core::result::{IntervalResult, RunResult};
use serde_json::Value;

use crate::sysbench::{col34, fmt_pct};

const MIB: f64 = 1048576.0;

fn per_s(n: f64, secs: f64) -> f64 {
    n / secs.max(1e-9)
}

/// Operations of one kind completed in the run.
fn count(r: &RunResult, kind: &str) -> u64 {
    r.operation(kind).map(|o| o.count).unwrap_or(0)
}

pub(crate) fn block(out: &mut String, r: &RunResult) {
    let t = r.total_time_s;
    // sysbench counts the end-of-run fsyncs in fsyncs/s.
    let fsyncs = count(r, "fsync") + r.counter("end_fsyncs");
    // sysbench starts this block with an empty line.
    let _ = writeln!(out);
    let _ = writeln!(out, "File operations:");
    col34(
        out,
        "reads/s:",
        &format!("{:.2}", per_s(count(r, "read") as f64, t)),
    );
    col34(
        out,
        "writes/s:",
        &format!("{:.2}", per_s(count(r, "write") as f64, t)),
    );
    col34(out, "fsyncs/s:", &format!("{:.2}", per_s(fsyncs as f64, t)));
    let _ = writeln!(out);
    let _ = writeln!(out, "Throughput:");
    col34(
        out,
        "read, MiB/s:",
        &format!("{:.2}", per_s(r.counter("bytes_read") as f64 / MIB, t)),
    );
    col34(
        out,
        "written, MiB/s:",
        &format!("{:.2}", per_s(r.counter("bytes_written") as f64 / MIB, t)),
    );
    let _ = writeln!(out);
}

/// `reads: X MiB/s writes: Y MiB/s fsyncs: Z/s latency (ms,95%): 0.009`
pub(crate) fn interval_body(i: &IntervalResult) -> String {
    let len = i.length_s;
    let mut s = format!(
        "reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s",
        per_s(i.counter("bytes_read") as f64 / MIB, len),
        per_s(i.counter("bytes_written") as f64 / MIB, len),
        per_s(i.operation("fsync") as f64, len),
    );
    if !i.latency_percentiles.is_empty() {
        let names: Vec<String> = i
            .latency_percentiles
            .iter()
            .map(|p| format!("{}%", fmt_pct(p.percentile)))
            .collect();
        let vals: Vec<String> = i
            .latency_percentiles
            .iter()
            .map(|p| format!("{:.3}", p.value_ns as f64 / 1e6))
            .collect();
        let _ = write!(s, " latency (ms,{}): {}", names.join(","), vals.join(" "));
    }
    s
}

fn human(bytes: f64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0}{}", U[i])
    } else {
        format!("{v:.2}{}", U[i])
    }
}

pub(crate) fn plumb_block(out: &mut String, r: &RunResult) {
    let w = &r.workload;
    let s = |k: &str| w.get(k).and_then(Value::as_str);
    let n = |k: &str| w.get(k).and_then(Value::as_u64);
    let _ = writeln!(out, "File I/O (plumb):");
    if let Some(engine) = s("engine") {
        let mut e = engine.to_string();
        // Set only for engines that register files and buffers (null otherwise).
        let files = w.get("io_uring_registered_files").and_then(Value::as_bool);
        let bufs = w
            .get("io_uring_registered_buffers")
            .and_then(Value::as_bool);
        match (files, bufs) {
            (Some(true), Some(true)) => e.push_str(" (registered files and buffers)"),
            (Some(true), _) => e.push_str(" (registered files)"),
            (_, Some(true)) => e.push_str(" (registered buffers)"),
            _ => {}
        }
        if let Some(b) = n("async_backlog") {
            let _ = write!(e, ", {b} in flight per thread");
        }
        col34(out, "engine:", &e);
        if let Some(note) = s("engine_note") {
            col34(out, "", note);
        }
    }
    if let Some(dir) = s("dir") {
        col34(
            out,
            "files:",
            &format!(
                "{} ({} × {})",
                dir,
                n("num_files").unwrap_or(0),
                human(n("file_size_bytes").unwrap_or(0) as f64)
            ),
        );
    }
    if let Some(fill) = s("fill") {
        let what = match fill {
            "random" => "random, incompressible",
            "zero" => "zeros (compressible: flatters compressing storage)",
            "validate" => "checksummed blocks (--validate)",
            other => other,
        };
        col34(out, "data written:", what);
    }
    if let Some(a) = n("direct_alignment_bytes") {
        col34(
            out,
            "O_DIRECT alignment:",
            &format!(
                "{a} bytes ({})",
                s("direct_alignment_source").unwrap_or("?")
            ),
        );
    }
    let end = r.counter("end_fsyncs");
    if end > 0 {
        let wall = w
            .get("end_fsync_wall_s")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        col34(
            out,
            "end-of-run fsync:",
            &format!("{end} fsyncs, {wall:.4}s (slowest thread; inside total time, not events)"),
        );
    }
    if let Some(b) = n("seqwr_completed_bytes").filter(|b| *b > 0) {
        col34(
            out,
            "seqwr completion:",
            &format!(
                "wrote the remaining {} after the measurement, so the next run finds full files",
                human(b as f64)
            ),
        );
    }
    let _ = writeln!(out);
}
