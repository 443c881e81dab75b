//! sysbench's SQL tests (oltp_*): the "SQL statistics" block and the interval line.

use std::fmt::Write;

use plumb_core::result::{IntervalResult, RunResult};
use plumb_core::size::format_compact;
use plumb_oltp::settings::{DatabaseSettings, OltpSettings};

use crate::sysbench::{col34, interval_percentiles};

fn per_s(n: u64, secs: f64) -> f64 {
    n as f64 / secs.max(1e-9)
}

/// "    transactions:" and the like: the count left-justified in 6 at column 42, then the rate.
fn counted(out: &mut String, label: &str, n: u64, secs: f64) {
    let _ = writeln!(
        out,
        "    {label:<37}{n:<6} ({:.2} per sec.)",
        per_s(n, secs)
    );
}

/// sysbench's block before "General statistics" (it starts with "SQL statistics:").
pub(crate) fn block(out: &mut String, r: &RunResult) {
    let t = r.total_time_s;
    let (read, write, other) = (r.counter("reads"), r.counter("writes"), r.counter("other"));
    let _ = writeln!(out, "SQL statistics:");
    let _ = writeln!(out, "    queries performed:");
    for (label, n) in [
        ("read:", read),
        ("write:", write),
        ("other:", other),
        ("total:", read + write + other),
    ] {
        let _ = writeln!(out, "        {label:<33}{n}");
    }
    counted(out, "transactions:", r.counter("transactions"), t);
    counted(out, "queries:", read + write + other, t);
    counted(out, "ignored errors:", r.counter("ignored_errors"), t);
    counted(out, "reconnects:", r.counter("reconnects"), t);
    let _ = writeln!(out);
}

/// sysbench's interval line of SQL tests, after "[ Ns ] ".
pub(crate) fn interval_body(i: &IntervalResult) -> String {
    let len = i.length_s;
    let (r, w, o) = (i.counter("reads"), i.counter("writes"), i.counter("other"));
    let mut s = format!(
        "thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2})",
        i.threads_running,
        per_s(i.counter("transactions"), len),
        per_s(r + w + o, len),
        per_s(r, len),
        per_s(w, len),
        per_s(o, len),
    );
    // --percentile=0: sysbench prints its percentile, 0, and nothing measured.
    let (names, vals) = interval_percentiles(i, 2).unwrap_or_else(|| ("0%".into(), "0.00".into()));
    let _ = write!(
        s,
        " lat (ms,{names}): {vals} err/s: {:.2} reconn/s: {:.2}",
        per_s(i.counter("ignored_errors"), len),
        per_s(i.counter("reconnects"), len)
    );
    s
}

/// plumb's "Database:" section: what the numbers depend on (server, buffer pool against the
/// data set, durability) and what the server's own counters say it did.
pub(crate) fn plumb_block(out: &mut String, s: &OltpSettings) {
    if s.dry_run {
        let _ = writeln!(out, "Database:");
        col34(
            out,
            "driver:",
            "mysql, dry run (--mysql-dry-run): no statement was sent; every query counts as other, the figures are the client's own cost",
        );
        let _ = writeln!(out);
        return;
    }
    database_block(out, s.database.as_ref(), s.server_activity.as_ref());
}

/// The "Database:" section from the database's settings and the server's counters (shared
/// with the mysqlslap layout).
pub(crate) fn database_block(
    out: &mut String,
    db: Option<&DatabaseSettings>,
    activity: Option<&plumb_oltp::ServerCounters>,
) {
    let Some(db) = db else {
        return;
    };
    let _ = writeln!(out, "Database:");
    match db {
        DatabaseSettings::Sqlite(q) => {
            col34(
                out,
                "driver:",
                &format!("sqlite, {} (SQLite {})", q.path, q.sqlite_version),
            );
            col34(
                out,
                "journal, synchronous:",
                &format!("{}, {}", q.journal_mode, q.synchronous),
            );
            col34(
                out,
                "page size, cache size:",
                &format!(
                    "{}, {}",
                    format_compact(q.page_size_bytes),
                    if q.cache_size < 0 {
                        format_compact(q.cache_size.unsigned_abs() * 1024)
                    } else {
                        format!("{} pages", q.cache_size)
                    }
                ),
            );
            col34(out, "writing transactions begin:", &q.begin_for_writes);
        }
        DatabaseSettings::Mysql(v) | DatabaseSettings::Pgsql(v) => {
            let driver = if matches!(db, DatabaseSettings::Mysql(_)) {
                "mysql"
            } else {
                "pgsql"
            };
            let tls = match &v.tls {
                Some(version) => format!(" with TLS ({version})"),
                None => String::new(),
            };
            col34(
                out,
                "driver:",
                &format!("{driver}, {}{tls}, database {}", v.endpoint, v.database),
            );
            let engine = v
                .storage_engine
                .as_ref()
                .map(|e| format!(", engine {e}"))
                .unwrap_or_default();
            col34(out, "server:", &format!("{}{engine}", v.version));
            if let Some(pool) = v.buffer_pool_bytes {
                let data = match v.data_set_bytes {
                    Some(d) if pool > 0 => format!(
                        "; data set {} ({} the buffer pool)",
                        format_compact(d),
                        plumb_advise::times(d as f64 / pool as f64)
                    ),
                    _ => String::new(),
                };
                col34(
                    out,
                    "buffer pool:",
                    &format!("{}{data}", format_compact(pool)),
                );
            }
            let durability: Vec<String> = v
                .durability
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            col34(out, "durability:", &durability.join(", "));
        }
    }
    if let Some(a) = activity {
        col34(
            out,
            "server rows:",
            &format!(
                "read {}, inserted {}, updated {}, deleted {}",
                a.rows_read, a.rows_inserted, a.rows_updated, a.rows_deleted
            ),
        );
        if let Some(h) = a.hit_ratio() {
            col34(
                out,
                "buffer pool hit ratio:",
                &format!(
                    "{:.2}% ({} of {} page requests missed)",
                    h * 100.0,
                    a.pool_misses,
                    a.pool_requests
                ),
            );
        }
    }
    let _ = writeln!(out);
}
