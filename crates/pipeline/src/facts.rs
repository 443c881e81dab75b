//! The advisor's [`Facts`] for one job, from its record and its group's observations
//! alone: the findings of a saved result can be evaluated again exactly as the live run did.

use plumb_advise::{
    CacheFacts, DbFacts, DeviceFacts, Facts, HostFacts, IoFacts, MemoryTestFacts, ProcessFacts,
    TargetFacts,
};
use plumb_fileio::settings::FileioSettings;
use plumb_fileio::spec::Fill;
use plumb_observe::Observations;

use crate::record::{JobRecord, Settings};

/// Everything the rules can know about `job`; advice spelled with `spelling` (the layout's).
pub fn from_job(
    job: &JobRecord,
    observations: Option<&Observations>,
    spelling: Option<plumb_advise::Spelling>,
) -> Facts {
    let r = &job.result;
    let mut f = Facts {
        test: job.workload.test().to_string(),
        threads: job.settings.threads,
        duration_s: r.total_time_s,
        events: r.events,
        interval_rates: r
            .intervals
            .iter()
            .filter(|i| !i.warmup)
            .map(|i| i.events_per_s)
            .collect(),
        latency_buckets: r
            .events_histogram()
            .nonzero()
            .map(|(l, h, c)| [l, h, c])
            .collect(),
        spelling,
        ..Default::default()
    };
    match &job.workload {
        Settings::Fileio(s) => f.io = Some(io_facts(s, job)),
        Settings::Dd(s) => f.io = Some(dd_facts(s, job)),
        Settings::Memory(m) => {
            f.memory_test = Some(MemoryTestFacts {
                block_size_bytes: m.block_size_bytes,
                scope_global: m.global(),
            })
        }
        Settings::Oltp(s) => f.database = db_facts(s, job),
        Settings::Slap(s) => f.database = slap_facts(s, job),
        Settings::Cpu(_) | Settings::Threads(_) | Settings::Mutex(_) => {}
    }
    if let Some(o) = observations {
        add_observations(&mut f, o);
    }
    f
}

fn db_facts(s: &plumb_oltp::settings::OltpSettings, r: &JobRecord) -> Option<DbFacts> {
    let counts = DbFacts {
        transactions: r.counter("transactions"),
        write_queries: r.counter("writes"),
        ignored_errors: r.counter("ignored_errors"),
        reconnects: r.counter("reconnects"),
        ..Default::default()
    };
    database_facts(s.database.as_ref()?, s.server_activity.as_ref(), counts)
}

/// mysqlslap's queries: each commits on its own unless --commit groups them.
fn slap_facts(s: &plumb_oltp::slap::SlapSettings, r: &JobRecord) -> Option<DbFacts> {
    let queries = r.operation("query").map_or(0, |o| o.count);
    let commits = r.operation("commit").map_or(0, |o| o.count);
    let counts = DbFacts {
        transactions: if commits > 0 { commits } else { queries },
        write_queries: r.counter("writes"),
        reconnects: r.counter("reconnects"),
        ..Default::default()
    };
    database_facts(s.database.as_ref()?, s.server_activity.as_ref(), counts)
}

/// The database's facts: its settings and the server's counters, over `counts` (the
/// workload's transactions, writes, errors and reconnects).
fn database_facts(
    db: &plumb_oltp::settings::DatabaseSettings,
    activity: Option<&plumb_oltp::ServerCounters>,
    counts: DbFacts,
) -> Option<DbFacts> {
    use plumb_oltp::settings::DatabaseSettings;
    let mut f = DbFacts {
        hit_ratio: activity.and_then(|a| Some((a.hit_ratio()?, a.pool_requests))),
        ..counts
    };
    let relaxed = |name: &str, value: &str| format!("{name}={value}");
    match db {
        DatabaseSettings::Sqlite(q) => {
            f.driver = "sqlite".into();
            f.local = true;
            // In WAL mode NORMAL syncs at checkpoints only: a commit can be lost on power loss.
            let wal = q.journal_mode.eq_ignore_ascii_case("wal");
            if q.synchronous == "off" || (wal && q.synchronous == "normal") {
                f.relaxed_durability
                    .push(relaxed("synchronous", &q.synchronous));
            }
            if q.journal_mode.eq_ignore_ascii_case("off")
                || q.journal_mode.eq_ignore_ascii_case("memory")
            {
                f.relaxed_durability
                    .push(relaxed("journal_mode", &q.journal_mode));
            }
        }
        DatabaseSettings::Mysql(v) | DatabaseSettings::Pgsql(v) => {
            f.driver = if matches!(db, DatabaseSettings::Mysql(_)) {
                "mysql"
            } else {
                "pgsql"
            }
            .into();
            f.local = v.local;
            f.data_set_bytes = v.data_set_bytes;
            let get = |k: &str| v.durability.get(k).map(|s| s.to_ascii_lowercase());
            let engine = v.storage_engine.as_deref().unwrap_or("InnoDB");
            if matches!(db, DatabaseSettings::Mysql(_)) && !engine.eq_ignore_ascii_case("innodb") {
                // InnoDB's buffer pool and its flush settings say nothing of these tables: the
                // OS caches their data, and engines without transactions sync nothing when a
                // statement returns.
                f.hit_ratio = None;
                let unsynced = ["myisam", "aria", "memory", "csv", "archive", "mrg_myisam"];
                if unsynced.iter().any(|e| engine.eq_ignore_ascii_case(e)) {
                    f.relaxed_durability.push(format!(
                        "storage engine {engine} (no durable commit: nothing is synced when a write returns)"
                    ));
                }
                return Some(f);
            }
            f.buffer_pool_bytes = v.buffer_pool_bytes;
            if let Some(x) = get("innodb_flush_log_at_trx_commit").filter(|x| x != "1") {
                f.relaxed_durability
                    .push(relaxed("innodb_flush_log_at_trx_commit", &x));
            }
            if get("log_bin").as_deref() == Some("on") {
                if let Some(x) = get("sync_binlog").filter(|x| x != "1") {
                    f.relaxed_durability.push(relaxed("sync_binlog", &x));
                }
            }
            for k in ["synchronous_commit", "fsync"] {
                if let Some(x) = get(k).filter(|x| x == "off") {
                    f.relaxed_durability.push(relaxed(k, &x));
                }
            }
        }
    }
    Some(f)
}

fn io_facts(s: &FileioSettings, r: &JobRecord) -> IoFacts {
    let op = |k: &str| r.operation(k).map(|o| o.count).unwrap_or(0);
    let flags = s.flags();
    IoFacts {
        mode: s.access.map(|a| a.describe()).unwrap_or_default().into(),
        sequential: s.access.is_some_and(|a| a.is_sequential()),
        direct: flags.direct,
        direct_reads: false,
        direct_writes: false,
        sync_writes: flags.sync || flags.dsync,
        fsync_freq: s.fsync_freq,
        fsync_all: s.fsync_all,
        fsync_end: s.fsync_end,
        file_num: s.num_files as u64,
        total_size_bytes: s.total_size_bytes,
        block_size_bytes: s.block_size_bytes,
        reads: op("read"),
        writes: op("write"),
        fsyncs: op("fsync") + r.counter("end_fsyncs"),
        bytes_read: r.counter("bytes_read"),
        bytes_written: r.counter("bytes_written"),
        fsync_time_ns: r.operation("fsync").map(|o| o.latency.sum_ns).unwrap_or(0),
        final_fsync_ns: (s.end_fsync_wall_s * 1e9).round() as u64,
        zero_fill: s.fill == Fill::Zero,
        engine: s.engine.clone(),
        engine_does_io: s.engine_caps.does_io,
        engine_maps_files: s.engine_caps.maps_files,
        writers_per_file: Some(s.writers_per_file),
        failed_requests: ["reads_failed", "writes_failed", "trims_failed"]
            .iter()
            .map(|c| r.counter(c))
            .sum(),
    }
}

/// A dd copy as file I/O: only the storage side of each direction counts (reading
/// /dev/zero or writing /dev/null touches no cache), and each direction has its own flags.
fn dd_facts(s: &plumb_fileio::dd::DdSettings, r: &JobRecord) -> IoFacts {
    let storage = |k: Option<plumb_fileio::dd::EndKind>| k.is_some_and(|k| k.is_storage());
    let (reads, writes) = (storage(s.input_kind), storage(s.output_kind));
    let op = |k: &str| r.operation(k).map(|o| o.count).unwrap_or(0);
    let spec = &s.spec;
    let bytes_read = r.counter("bytes_read");
    IoFacts {
        mode: "dd copy".into(),
        sequential: true,
        direct: false,
        direct_reads: spec.iflag.direct,
        direct_writes: spec.oflag.direct,
        sync_writes: spec.oflag.sync || spec.oflag.dsync,
        fsync_end: spec.conv.fdatasync || spec.conv.fsync,
        file_num: 1,
        total_size_bytes: s.input_size_bytes.filter(|_| reads).unwrap_or(bytes_read),
        block_size_bytes: spec.ibs,
        reads: if reads { op("read") } else { 0 },
        writes: if writes { op("write") } else { 0 },
        // The only flush is the one at the end (final_fsync_ns), not a share of the events.
        fsyncs: 0,
        bytes_read: if reads { bytes_read } else { 0 },
        bytes_written: if writes {
            r.counter("bytes_written")
        } else {
            0
        },
        final_fsync_ns: r.operation("fsync").map(|o| o.latency.sum_ns).unwrap_or(0),
        engine: "sync".into(),
        engine_does_io: true,
        ..Default::default()
    }
}

/// Add what was observed underneath the run.
fn add_observations(f: &mut Facts, o: &Observations) {
    let h = &o.host;
    let governor = h.frequency_governors.first().cloned();
    f.host = Some(HostFacts {
        cpus: h.usable_cpus.unwrap_or(h.logical_cpus) as usize,
        mem_total_bytes: h.memory_total_bytes,
        governor,
        load_avg_1m_at_start: Some(o.load_at_start.load_avg_1m),
        busy_pct_at_start: o.load_at_start.busy_other_pct,
        runnable_others_at_start: o.load_at_start.runnable_other_mean,
        runnable_kernel_at_start: o.load_at_start.runnable_kernel_mean,
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
        cpu_pct: Some(p.cpu_pct_of_core),
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
            max_request_bytes: t.disks.first().and_then(|d| d.max_request_bytes),
            max_segments: t.disks.first().and_then(|d| d.max_segments),
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
