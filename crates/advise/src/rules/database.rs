//! Database runs: what the number measures (buffer pool or disk, durable commits or not),
//! who limited it (the client), and whether errors shaped it.

use super::pct;
use crate::{Facts, Finding, Knob, Severity};

/// A ratio as "0.74x", a small one as "<0.01x" rather than rounded to nothing.
pub fn times(r: f64) -> String {
    if r < 0.01 {
        "<0.01x".to_string()
    } else {
        format!("{r:.2}x")
    }
}

/// The hit ratio above which reads came from memory, whatever the sizes say.
const ALL_FROM_MEMORY: f64 = 0.999;

pub fn data_in_buffer_pool(f: &Facts) -> Option<Finding> {
    let db = f.database.as_ref()?;
    let fits = match (db.data_set_bytes, db.buffer_pool_bytes) {
        (Some(d), Some(p)) if p > 0 => Some((d, p, d <= p)),
        _ => None,
    };
    let memory_hits = db
        .hit_ratio
        .filter(|&(h, n)| n >= 1000 && h >= ALL_FROM_MEMORY);
    if !fits.is_some_and(|(_, _, fits)| fits) && memory_hits.is_none() {
        return None;
    }
    let mut finding = Finding::new(
        "data-in-buffer-pool",
        Severity::Caution,
        "The data set was served from the database's buffer pool: the run measures memory and CPU, not the disk.",
    );
    if let Some((d, p, _)) = fits {
        finding = finding
            .evidence(
                "data set (tables and indexes)",
                plumb_core::size::format_compact(d),
            )
            .evidence("buffer pool", plumb_core::size::format_compact(p))
            .evidence("data set / buffer pool", times(d as f64 / p as f64));
    }
    if let Some((h, n)) = db.hit_ratio {
        finding = finding.evidence(
            "buffer pool hit ratio",
            format!("{} of {n} page requests", pct(h)),
        );
    }
    Some(finding.advice(format!(
        "To measure the storage, make the data set several times the buffer pool ({} or more tables; seed 004 compares 0.74x and 4.86x), or report this as an in-memory figure.",
        f.knob(Knob::TableSize)
    )))
}

pub fn durability_relaxed(f: &Facts) -> Option<Finding> {
    let db = f.database.as_ref()?;
    if db.relaxed_durability.is_empty() || db.write_queries == 0 {
        return None;
    }
    Some(
        Finding::new(
            "durability-relaxed",
            Severity::Caution,
            "Commits returned before they were durable: the number is not a durable-commit number, and a crash could lose the last transactions.",
        )
        .evidence("settings", db.relaxed_durability.join(", "))
        .evidence("write queries", db.write_queries)
        .advice("Compare with durable settings (innodb_flush_log_at_trx_commit=1 and sync_binlog=1, synchronous_commit=on, SQLite synchronous=full), or state that the figure is for relaxed durability."),
    )
}

pub fn client_bound(f: &Facts) -> Option<Finding> {
    let db = f.database.as_ref()?;
    let p = f.process.as_ref()?;
    let cpu = p.cpu_pct?;
    let cpus = f.host.as_ref().map_or(1, |h| h.cpus.max(1)) as f64;
    // The client shares the host with the server: past half a CPU, or a fifth of the
    // machine, it competes for the cores the server needs.
    if !db.local || db.driver == "sqlite" || cpu < 50.0_f64.max(100.0 * cpus / 5.0) {
        return None;
    }
    let per_tx =
        (db.transactions > 0).then(|| cpu / 100.0 * f.duration_s * 1e6 / db.transactions as f64);
    let mut finding = Finding::new(
        "client-bound",
        Severity::Caution,
        "The benchmark client used much of the CPU on the server's own host: it competed with the server, and the number is partly the client's.",
    )
    .evidence("client CPU", format!("{cpu:.0}% of one CPU ({cpus:.0} CPUs)"));
    if let Some(us) = per_tx {
        finding = finding.evidence("client CPU per transaction", format!("{us:.1} µs"));
    }
    Some(finding.advice(
        "Run the client on another host, or pin client and server to separate CPUs, and compare.",
    ))
}

/// SQLite writes one transaction at a time (plumb's writers take turns): several threads
/// that write measure the waiting as much as the database.
pub fn sqlite_one_writer(f: &Facts) -> Option<Finding> {
    let db = f.database.as_ref()?;
    if db.driver != "sqlite" || f.threads < 2 || db.write_queries == 0 {
        return None;
    }
    Some(
        Finding::new(
            "sqlite-one-writer",
            Severity::Caution,
            "SQLite lets one transaction write at a time: the threads' writing transactions ran one after another, so more threads add waiting, not write throughput.",
        )
        .evidence("threads", f.threads)
        .evidence("writing statements", db.write_queries)
        .evidence("transactions", db.transactions)
        .advice(format!(
            "Compare with {}; for concurrent writers, run the same test on a server database (--db-driver=mysql or pgsql).",
            f.knob(Knob::OneThread)
        )),
    )
}

pub fn database_errors(f: &Facts) -> Option<Finding> {
    let db = f.database.as_ref()?;
    if db.ignored_errors == 0 && db.reconnects == 0 {
        return None;
    }
    let share = db.ignored_errors as f64 / (db.transactions + db.ignored_errors).max(1) as f64;
    let severity = if db.reconnects > 0 || share > 0.01 {
        Severity::Caution
    } else {
        Severity::Info
    };
    Some(
        Finding::new(
            "database-errors",
            severity,
            "Transactions failed and were run again during the measurement: the throughput and latency include the retries.",
        )
        .evidence("ignored errors (retried)", db.ignored_errors)
        .evidence("share of attempts", pct(share))
        .evidence("reconnects", db.reconnects)
        .advice(format!(
            "Deadlocks and lock waits grow with contention: compare with fewer {} or more tables; reconnects mean the server or the network dropped connections.",
            f.knob(Knob::Threads)
        )),
    )
}

/// Without interval lines nobody can tell whether a database run reached a steady state
/// (seed 004: run until the curve is flat, often over half an hour).
pub fn database_steadiness_unknown(f: &Facts) -> Option<Finding> {
    f.database.as_ref()?;
    if f.interval_rates.len() >= 6 || f.duration_s >= 1800.0 {
        return None;
    }
    Some(
        Finding::new(
            "steadiness-unknown",
            Severity::Info,
            "A database's throughput settles only after its caches warm and its background flushing starts; this run is too short or too coarse to show whether it did.",
        )
        .evidence("measured time", format!("{:.0} s", f.duration_s))
        .evidence("interval samples", f.interval_rates.len())
        .advice(format!(
            "Run until the curve is flat (often half an hour or more) with {} and judge the steady part.",
            f.knob(Knob::ReportInterval)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DbFacts, HostFacts, ProcessFacts};

    fn db() -> Facts {
        Facts {
            test: "oltp_read_write".into(),
            threads: 8,
            duration_s: 3600.0,
            events: 3_600_000,
            interval_rates: vec![1000.0; 60],
            database: Some(DbFacts {
                driver: "mysql".into(),
                local: true,
                buffer_pool_bytes: Some(1 << 30),
                data_set_bytes: Some(5 << 30),
                hit_ratio: Some((0.95, 1_000_000)),
                relaxed_durability: Vec::new(),
                transactions: 3_600_000,
                write_queries: 14_400_000,
                ignored_errors: 0,
                reconnects: 0,
            }),
            host: Some(HostFacts {
                cpus: 8,
                ..Default::default()
            }),
            process: Some(ProcessFacts {
                cpu_pct: Some(40.0),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn with(change: impl FnOnce(&mut DbFacts)) -> Facts {
        let mut f = db();
        change(f.database.as_mut().unwrap());
        f
    }

    #[test]
    fn a_clean_disk_bound_durable_run_raises_nothing() {
        let f = db();
        for rule in [
            data_in_buffer_pool,
            durability_relaxed,
            client_bound,
            database_errors,
            database_steadiness_unknown,
            sqlite_one_writer,
        ] {
            assert!(rule(&f).is_none());
        }
        assert!(data_in_buffer_pool(&Facts::default()).is_none());
    }

    #[test]
    fn a_data_set_inside_the_buffer_pool_is_memory() {
        let f = with(|d| d.data_set_bytes = Some(740 << 20));
        let x = data_in_buffer_pool(&f).unwrap();
        assert_eq!(x.severity, Severity::Caution);
        assert!(x.evidence.iter().any(|(_, v)| v == "0.72x"), "{x:?}");
        // Larger than the pool, but every page came from memory anyway.
        let f = with(|d| d.hit_ratio = Some((0.9995, 2_000_000)));
        assert!(data_in_buffer_pool(&f).is_some());
    }

    #[test]
    fn relaxed_commits_are_named_when_the_run_writes() {
        let f = with(|d| d.relaxed_durability = vec!["innodb_flush_log_at_trx_commit=2".into()]);
        let x = durability_relaxed(&f).unwrap();
        assert!(x.evidence[0].1.contains("innodb_flush_log_at_trx_commit=2"));
        let f = with(|d| {
            d.relaxed_durability = vec!["synchronous_commit=off".into()];
            d.write_queries = 0;
        });
        assert!(
            durability_relaxed(&f).is_none(),
            "a read-only run commits nothing"
        );
    }

    #[test]
    fn a_busy_client_next_to_its_server_is_named() {
        let mut f = db();
        f.process.as_mut().unwrap().cpu_pct = Some(180.0);
        let x = client_bound(&f).unwrap();
        assert!(x
            .evidence
            .iter()
            .any(|(k, _)| k == "client CPU per transaction"));
        f.database.as_mut().unwrap().local = false;
        assert!(
            client_bound(&f).is_none(),
            "a remote server does not share the CPUs"
        );
    }

    #[test]
    fn sqlite_writers_in_several_threads_are_named() {
        let f = with(|d| d.driver = "sqlite".into());
        let x = sqlite_one_writer(&f).unwrap();
        assert!(
            x.evidence
                .contains(&("threads".to_string(), "8".to_string())),
            "{x:?}"
        );
        let mut one = f.clone();
        one.threads = 1;
        assert!(
            sqlite_one_writer(&one).is_none(),
            "one thread waits for no one"
        );
        let reads = with(|d| {
            d.driver = "sqlite".into();
            d.write_queries = 0;
        });
        assert!(
            sqlite_one_writer(&reads).is_none(),
            "readers run side by side"
        );
    }

    #[test]
    fn retries_and_reconnects_are_reported() {
        let f = with(|d| d.ignored_errors = 10);
        assert_eq!(database_errors(&f).unwrap().severity, Severity::Info);
        let f = with(|d| d.reconnects = 1);
        assert_eq!(database_errors(&f).unwrap().severity, Severity::Caution);
    }

    #[test]
    fn a_short_database_run_without_intervals_is_flagged() {
        let mut f = db();
        f.duration_s = 60.0;
        f.interval_rates.clear();
        assert_eq!(
            database_steadiness_unknown(&f).unwrap().severity,
            Severity::Info
        );
    }
}
