//! The "Observed during the run:" section: what happened underneath the run, compactly.

use std::fmt::Write;

use plumb_core::harness::is_worker_thread;
use plumb_core::result::RunResult;
use plumb_core::size::{format_mib, format_spaced};
use plumb_observe::blockdev::BlockDevice;
use plumb_observe::observations::Observations;

use crate::sysbench::col34;

fn mib(b: f64) -> String {
    format_mib(b, 2, " ")
}

/// One line about a block device: "vda: virtio_blk, rotational, scheduler mq-deadline, ...".
pub fn device_line(d: &BlockDevice) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = d.mapped_name.as_ref() {
        parts.push(format!("device-mapper {m}"));
    }
    if let Some(l) = d.md_level.as_ref() {
        parts.push(format!("md {l}"));
    }
    match (d.model.as_ref(), d.driver.as_ref()) {
        (Some(m), _) => parts.push(m.clone()),
        (None, Some(dr)) => parts.push(dr.clone()),
        _ => {}
    }
    match d.rotational {
        Some(true) => parts.push("rotational".into()),
        Some(false) => parts.push("non-rotational".into()),
        None => {}
    }
    if let Some(s) = &d.scheduler {
        parts.push(format!("scheduler {s}"));
    }
    if let Some(n) = d.nr_requests {
        parts.push(format!("nr_requests {n}"));
    }
    if let (Some(l), Some(p)) = (d.logical_block_size_bytes, d.physical_block_size_bytes) {
        parts.push(format!("blocks {l}/{p} B"));
    }
    if let Some(w) = &d.write_cache {
        parts.push(format!("{w} cache"));
    }
    if let Some(s) = d.size_bytes {
        parts.push(format_spaced(s));
    }
    format!("{}: {}", d.name, parts.join(", "))
}

/// Bytes the run itself read and wrote, from its counters, when the test reports them.
fn requested_bytes(r: &RunResult) -> Option<(u64, u64)> {
    let get = |names: &[&str]| names.iter().find_map(|n| r.counters.get(*n).copied());
    let read = get(&["bytes_read", "read_bytes"]);
    let written = get(&["bytes_written", "written_bytes", "write_bytes"]);
    (read.is_some() || written.is_some()).then(|| (read.unwrap_or(0), written.unwrap_or(0)))
}

/// The section, ending with a blank line.
pub fn section(r: &RunResult, o: &Observations) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Observed during the run:");
    if let Some(t) = &o.target {
        let dev = t
            .device
            .as_ref()
            .map(|d| format!(" on {}", d.name))
            .unwrap_or_default();
        col34(
            &mut out,
            "target:",
            &format!(
                "{} ({}, {}{dev}, mounted at {})",
                t.resolved_path.display(),
                t.kind.name(),
                t.fs_type,
                t.mount_point.display()
            ),
        );
        for d in &t.disks {
            col34(&mut out, "disk:", &device_line(d));
        }
        if let Some(sys) = t.on_system_disk {
            let others = if t.other_disks.is_empty() {
                "no other disks".to_string()
            } else {
                format!("other disks: {}", t.other_disks.join(", "))
            };
            col34(
                &mut out,
                "system disk:",
                &format!("{}; {others}", if sys { "yes" } else { "no" }),
            );
        }
    } else if let Some(e) = &o.target_error {
        col34(&mut out, "target:", &format!("not resolved: {e}"));
    }
    if let Some(d) = o.filesystem_device().or_else(|| o.devices.first()) {
        let f = &d.totals.figures;
        col34(
            &mut out,
            &format!("device I/O ({}):", d.name),
            &format!(
                "reads/s {:.2}, writes/s {:.2}, read {}/s, written {}/s",
                f.reads_per_s,
                f.writes_per_s,
                mib(f.read_bytes_per_s),
                mib(f.write_bytes_per_s)
            ),
        );
        col34(
            &mut out,
            "device latency:",
            &format!(
                "r_await {:.2} ms, w_await {:.2} ms, aqu-sz {:.2}, %util {:.2}",
                f.read_await_ms, f.write_await_ms, f.queue_size, f.util_pct
            ),
        );
        if f.flushes_per_s > 0.0 {
            col34(
                &mut out,
                "device flushes:",
                &format!(
                    "{:.2}/s, f_await {:.2} ms",
                    f.flushes_per_s, f.flush_await_ms
                ),
            );
        }
    }
    // What plumb itself made the kernel read from and send to storage: device counters above
    // include every process on the machine.
    let pt = &o.process.totals;
    let mut rates = |label: &str, read: u64, written: u64, secs: f64| {
        let t = secs.max(1e-9);
        col34(
            &mut out,
            label,
            &format!(
                "read {}/s, written {}/s",
                mib(read as f64 / t),
                mib(written as f64 / t)
            ),
        );
    };
    if let (Some(sr), Some(sw)) = (pt.storage_read_bytes, pt.storage_write_bytes) {
        rates("plumb's storage I/O:", sr, sw, o.duration_s);
    }
    if let Some((rd, wr)) = requested_bytes(r) {
        rates("requested I/O:", rd, wr, r.total_time_s);
    }
    if let Some(res) = &o.residency {
        let m = match res.end.method {
            plumb_observe::residency::ResidencyMethod::Cachestat => "cachestat",
            plumb_observe::residency::ResidencyMethod::Mincore => "mincore",
        };
        col34(
            &mut out,
            "page cache (test files):",
            &format!(
                "{:.1}% resident at start -> {:.1}% at end, of {} ({m})",
                res.start.resident_pct,
                res.end.resident_pct,
                format_spaced(res.end.total_bytes)
            ),
        );
    }
    if let (Some(a), Some(b)) = (&o.memory.start, &o.memory.end) {
        col34(
            &mut out,
            "dirty, writeback:",
            &format!(
                "{} -> {}, {} -> {} (peak dirty {})",
                mib(a.dirty_bytes as f64),
                mib(b.dirty_bytes as f64),
                mib(a.writeback_bytes as f64),
                mib(b.writeback_bytes as f64),
                mib(o.memory.peak_dirty_bytes as f64)
            ),
        );
    }
    let p = &o.process;
    if let Some(po) = &p.per_operation {
        col34(
            &mut out,
            "context switches per op:",
            &format!(
                "{:.3} (voluntary {:.3}, involuntary {:.3}; {} operations)",
                po.context_switches,
                po.voluntary_context_switches,
                po.involuntary_context_switches,
                p.operations
            ),
        );
    }
    if let Some(s) = &o.system.totals {
        col34(
            &mut out,
            "machine CPU:",
            &format!(
                "user {:.1}%, sys {:.1}%, iowait {:.1}%, steal {:.1}%, idle {:.1}% ({} CPUs)",
                s.cpu.user_pct + s.cpu.nice_pct,
                s.cpu.system_pct,
                s.cpu.iowait_pct,
                s.cpu.steal_pct,
                s.cpu.idle_pct,
                o.system.cpus
            ),
        );
        col34(
            &mut out,
            "machine cs/s, interrupts/s:",
            &format!("{:.0}, {:.0}", s.context_switches_per_s, s.interrupts_per_s),
        );
    }
    let workers: Vec<_> = p
        .threads
        .iter()
        .filter(|t| is_worker_thread(&t.name))
        .collect();
    let busiest = workers
        .iter()
        // A run shorter than two sampling intervals may have no full interval for a worker:
        // its lifetime share is then the best figure.
        .map(|t| t.max_interval_cpu_pct.max(t.cpu_pct))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    col34(
        &mut out,
        "plumb CPU:",
        &format!(
            "{:.1}% of a core (user {:.2}s, sys {:.2}s){}",
            p.cpu_pct_of_core,
            p.totals.user_cpu_ns as f64 / 1e9,
            p.totals.system_cpu_ns as f64 / 1e9,
            busiest
                .map(|b| format!("; busiest worker {b:.1}%"))
                .unwrap_or_default()
        ),
    );
    let l = &o.load_at_start;
    col34(
        &mut out,
        "load at start:",
        &format!(
            "{:.2} (1 min){}{}",
            l.load_avg_1m,
            l.busy_cpu_pct
                .map(|b| format!(", CPU busy {b:.1}% over {:.2}s", l.window_s))
                .unwrap_or_default(),
            l.during_setup
                .as_ref()
                .map(|o| format!(
                    " during the setup ({} {:.1}% of it, left out)",
                    o.server_name.as_deref().unwrap_or("server"),
                    o.server_cpu_pct
                ))
                .unwrap_or_default()
        ),
    );
    let tracer = match (&o.tracer.at_start, &o.tracer.at_end) {
        (None, None) => "no".to_string(),
        (a, b) => {
            let t = a.as_ref().or(b.as_ref()).expect("one is set");
            format!(
                "yes: pid {} ({}){}",
                t.pid,
                t.name.as_deref().unwrap_or("?"),
                if a.is_some() && b.is_some() {
                    ""
                } else if a.is_some() {
                    ", detached before the end"
                } else {
                    ", attached during the run"
                }
            )
        }
    };
    col34(&mut out, "tracer attached:", &tracer);
    for n in &o.notes {
        col34(&mut out, "note:", n);
    }
    let _ = writeln!(out);
    out
}
