//! The rule catalogue. A rule is `fn(&Facts) -> Option<Finding>`; each has a scenario that
//! triggers it and a clean one that must not, in its module's tests.

mod cache;
mod concurrency;
pub(crate) mod database;
mod errors;
mod fsync;
mod memory;
mod method;
mod split;
mod target;

use crate::{Facts, Finding};

pub type Rule = fn(&Facts) -> Option<Finding>;

pub static ALL: &[Rule] = &[
    target::tracer_attached,
    target::not_a_disk,
    target::system_disk,
    cache::page_cache_reads,
    cache::page_cache_writes,
    fsync::fsync_dominated,
    fsync::final_fsync_skew,
    concurrency::many_files,
    concurrency::shared_file_writers,
    concurrency::plumb_bottleneck,
    target::zero_fill_compressing,
    memory::block_in_cache,
    split::requests_split,
    method::too_short,
    method::noisy_machine,
    method::bimodal_latency,
    database::data_in_buffer_pool,
    database::durability_relaxed,
    database::client_bound,
    database::database_errors,
    database::sqlite_one_writer,
    database::database_steadiness_unknown,
    errors::io_errors,
];

pub(crate) fn pct(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

#[cfg(test)]
pub(crate) mod scenario {
    //! Hand-made runs for rule tests.
    use crate::*;

    pub fn fileio(mode: &str) -> Facts {
        let writes = mode.contains("wr") || mode == "rndrw";
        let reads = mode.contains("rd") || mode == "rndrw";
        Facts {
            test: "fileio".into(),
            threads: 1,
            duration_s: 60.0,
            events: 600_000,
            io: Some(IoFacts {
                mode: mode.into(),
                sequential: mode.starts_with("seq"),
                direct: true,
                file_num: 1,
                total_size_bytes: 8 << 30,
                block_size_bytes: 16384,
                reads: if reads { 300_000 } else { 0 },
                writes: if writes { 300_000 } else { 0 },
                bytes_read: if reads { 300_000 * 16384 } else { 0 },
                bytes_written: if writes { 300_000 * 16384 } else { 0 },
                engine: "sync".into(),
                engine_does_io: true,
                ..Default::default()
            }),
            device: Some(DeviceFacts {
                name: "vdb".into(),
                read_bytes: if reads { 300_000 * 16384 } else { 0 },
                write_bytes: if writes { 300_000 * 16384 } else { 0 },
                read_ios: if reads { 300_000 } else { 0 },
                write_ios: if writes { 300_000 } else { 0 },
            }),
            cache: Some(CacheFacts {
                resident_start: Some(0.0),
                resident_end: Some(0.01),
                dirty_start_bytes: Some(1 << 20),
                dirty_max_bytes: Some(2 << 20),
            }),
            target: Some(TargetFacts {
                path: "/data/bench".into(),
                kind: "disk".into(),
                fs_type: "xfs".into(),
                device: Some("vdb".into()),
                system_disk: false,
                other_disks: vec!["vda".into()],
                rotational: Some(false),
                compressing: false,
                max_request_bytes: Some(1280 << 10),
                max_segments: Some(128),
            }),
            host: Some(HostFacts {
                cpus: 2,
                mem_total_bytes: 4 << 30,
                governor: Some("performance".into()),
                load_avg_1m_at_start: Some(0.05),
                busy_pct_at_start: Some(1.0),
                ..Default::default()
            }),
            process: Some(ProcessFacts {
                voluntary_ctx_switches: 600_000,
                involuntary_ctx_switches: 100,
                worker_max_cpu_pct: Some(20.0),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}
