//! `prewarm`: read every table's primary key and rows once, so a run starts with the data in
//! the buffer pool rather than measuring its first reads from disk. MySQL gets sysbench's
//! own statements (ANALYZE TABLE, an average over the primary key, a count over a pattern on
//! k that reads every row); sysbench has no prewarm for PostgreSQL, and plumb reads the same
//! way there and on SQLite, in each one's SQL.

use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;

use crate::driver::{Dialect, Driver};
use crate::error::OltpError;
use crate::fanout;
use crate::spec::{OltpSpec, Test};

/// The statements that warm table `i`, in order.
pub fn statements(dialect: Dialect, spec: &OltpSpec, i: u32) -> Vec<String> {
    let n = spec.table_size;
    match dialect {
        Dialect::Mysql => vec![
            format!("ANALYZE TABLE sbtest{i}"),
            format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{i} FORCE KEY (PRIMARY) LIMIT {n}) t"),
            format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{i} WHERE k LIKE '%0%' LIMIT {n}) t"),
        ],
        Dialect::Pgsql => vec![
            format!("ANALYZE sbtest{i}"),
            format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{i} ORDER BY id LIMIT {n}) t"),
            format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{i} WHERE k::text LIKE '%0%' LIMIT {n}) t"),
        ],
        Dialect::Sqlite => vec![
            format!("ANALYZE sbtest{i}"),
            format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{i} ORDER BY id LIMIT {n}) t"),
            format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{i} WHERE k LIKE '%0%' LIMIT {n}) t"),
        ],
    }
}

/// Warm sbtest1..N over `threads` connections, writing sysbench's lines to `out`. Returns
/// the number of tables warmed.
pub fn prewarm(
    driver: &dyn Driver,
    spec: &OltpSpec,
    threads: usize,
    out: &mut dyn Write,
) -> Result<u32, OltpError> {
    let tables = if spec.test == Test::BulkInsert {
        threads.max(1) as u32
    } else {
        spec.tables
    };
    let dialect = driver.dialect();
    // A SQLite file that is not there has nothing to warm: its observer says so, where the
    // workers' connections would create an empty database.
    if dialect == Dialect::Sqlite {
        driver.observer().map_err(OltpError::Connect)?;
    }
    // MySQL sorts and materialises the derived tables in memory: sysbench raises the session
    // limits so they do not spill to disk.
    let session: &[&str] = if dialect == Dialect::Mysql {
        &[
            "SET SESSION tmp_table_size = 2 * 1024 * 1024 * 1024",
            "SET SESSION max_heap_table_size = 2 * 1024 * 1024 * 1024",
        ]
    } else {
        &[]
    };
    let done = fanout::per_worker(driver, threads, tables, out, |_, conn, mine, stop, line| {
        for sql in session {
            conn.execute_plain(sql, &[])
                .map_err(|error| OltpError::Statement {
                    what: (*sql).to_string(),
                    error,
                    stmt: None,
                })?;
        }
        let mut n = 0u32;
        for i in mine {
            if stop.load(Relaxed) {
                break;
            }
            line(format!("Prewarming table sbtest{i}"))?;
            for sql in statements(dialect, spec, i) {
                conn.execute_plain(&sql, &[])
                    .map_err(|error| OltpError::Statement {
                        what: format!("prewarm of sbtest{i}"),
                        error,
                        stmt: None,
                    })?;
            }
            n += 1;
        }
        Ok(n)
    })?;
    Ok(done.iter().sum())
}
