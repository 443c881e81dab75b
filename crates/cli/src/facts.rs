//! Fill the advisor's [`Facts`] from what a run produced. Tests add their own parts (I/O
//! settings, memory block) through `TestPlan::facts`; observations add the rest.

use plumb_advise::{CacheFacts, DeviceFacts, Facts, HostFacts, ProcessFacts, TargetFacts};
use plumb_core::result::RunResult;
use plumb_observe::Observations;

/// The facts every run has: its shape, its intervals and its latency distribution.
pub fn from_result(r: &RunResult, latency_buckets: Vec<[u64; 3]>) -> Facts {
    Facts {
        test: r.test.clone(),
        threads: r.settings.threads,
        duration_s: r.total_time_s,
        events: r.events,
        interval_rates: r
            .intervals
            .iter()
            .filter(|i| !i.warmup)
            .map(|i| i.events_per_s)
            .collect(),
        latency_buckets,
        ..Default::default()
    }
}

/// Add what was observed underneath the run.
pub fn add_observations(f: &mut Facts, o: &Observations) {
    let h = &o.host;
    let governor = h.frequency_governors.first().cloned();
    f.host = Some(HostFacts {
        cpus: h.usable_cpus.unwrap_or(h.logical_cpus) as usize,
        mem_total_bytes: h.memory_total_bytes,
        governor,
        load_avg_1m_at_start: Some(o.load_at_start.load_avg_1m),
        busy_pct_at_start: o.load_at_start.busy_cpu_pct,
        l1d_bytes: h.l1d_cache_bytes,
        l2_bytes: h.l2_cache_bytes,
        l3_bytes: h.l3_cache_bytes,
    });
    let p = &o.process;
    let worker_max = p
        .threads
        .iter()
        .filter(|t| plumb_core::harness::is_worker_thread(&t.name))
        .map(|t| t.max_interval_cpu_pct.max(t.cpu_pct))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let tracer = o.tracer.at_start.as_ref().or(o.tracer.at_end.as_ref());
    f.process = Some(ProcessFacts {
        voluntary_ctx_switches: p.totals.voluntary_context_switches,
        involuntary_ctx_switches: p.totals.involuntary_context_switches,
        worker_max_cpu_pct: worker_max,
        tracer_attached: tracer.is_some(),
        tracer: tracer.map(|t| t.name.clone().unwrap_or_else(|| format!("pid {}", t.pid))),
    });
    if let Some(t) = &o.target {
        f.target = Some(TargetFacts {
            path: t.path.display().to_string(),
            kind: t.kind.name().to_string(),
            fs_type: t.fs_type.clone(),
            device: t.device.as_ref().map(|d| d.name.clone()),
            compressing: compressing(&t.fs_type, &t.mount_options),
            system_disk: t.on_system_disk.unwrap_or(false),
            other_disks: t.other_disks.clone(),
            rotational: t.disks.first().and_then(|d| d.rotational),
        });
    }
    if let Some(d) = o.filesystem_device() {
        f.device = Some(DeviceFacts {
            name: d.name.clone(),
            read_bytes: d.totals.read_bytes,
            write_bytes: d.totals.write_bytes,
            read_ios: d.totals.counters.read_ios,
            write_ios: d.totals.counters.write_ios,
        });
    }
    let residency = o.residency.as_ref();
    f.cache = Some(CacheFacts {
        resident_start: residency.map(|r| r.start.resident_pct / 100.0),
        resident_end: residency.map(|r| r.end.resident_pct / 100.0),
        dirty_start_bytes: o.memory.start.as_ref().map(|m| m.dirty_bytes),
        dirty_max_bytes: Some(o.memory.peak_dirty_bytes),
    });
}

/// Filesystems that store less than they are given: compression or deduplication on.
fn compressing(fs_type: &str, options: &str) -> bool {
    match fs_type {
        "zfs" => true,
        "btrfs" => options.split(',').any(|o| o.starts_with("compress")),
        _ => false,
    }
}
