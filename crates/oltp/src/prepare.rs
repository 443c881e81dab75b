//! `prepare`: create sbtest1..N, load them with multi-row INSERTs as sysbench does, and build
//! the index on k after the data, over several threads when asked.
//!
//! Rows are appended to one statement of at most [`BULK_PACKET_SIZE`] bytes (sysbench's
//! buffer, NUL included); a statement is sent when the next row would not fit. On MySQL and
//! PostgreSQL each statement commits on its own (autocommit), as sysbench sends them. On
//! SQLite each statement is wrapped in `BEGIN IMMEDIATE` ... `COMMIT`: the commit count is
//! the same (one per statement), but the write lock is taken before the statement runs, so
//! threads loading other tables of the same file queue on the busy timeout for a whole batch
//! instead of failing halfway into one.
//!
//! Unlike sysbench, a batch refused with an ignorable error (busy, deadlock) is rolled back
//! and sent again rather than ending the prepare.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use plumb_core::random::{Distribution, Rng};

use crate::driver::{Connection, Dialect, Driver, DriverError, ErrorClass, TxIntent};
use crate::error::{OltpError, Setting};
use crate::fanout;
use crate::schema::{self, C_GROUPS, PAD_GROUPS};
use crate::spec::{OltpSpec, Test};

/// sysbench's multi-row INSERT buffer, terminating NUL included.
pub const BULK_PACKET_SIZE: usize = 512 * 1024;

/// What a prepare did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepareSummary {
    pub tables: u32,
    pub rows: u64,
    /// Multi-row INSERT statements sent (retries not included).
    pub insert_statements: u64,
    /// Statements sent again after an ignorable error.
    pub retries: u64,
}

impl PrepareSummary {
    fn add(&mut self, o: &PrepareSummary) {
        self.tables += o.tables;
        self.rows += o.rows;
        self.insert_statements += o.insert_statements;
        self.retries += o.retries;
    }
}

/// The tables worker `t` of `threads` builds: t+1, t+1+threads, ... up to `tables`.
pub fn tables_of_worker(t: usize, threads: usize, tables: u32) -> impl Iterator<Item = u32> {
    (t as u64 + 1..=u64::from(tables))
        .step_by(threads.max(1))
        .map(|i| i as u32)
}

/// The rows each table gets: oltp_insert with client-side ids starts empty, so the ids it
/// draws later cannot collide with loaded ones.
pub fn rows_per_table(spec: &OltpSpec) -> u64 {
    if spec.test == Test::OltpInsert && !spec.auto_inc {
        0
    } else {
        spec.table_size
    }
}

/// Create and load the tables of `spec` over `threads` connections, writing sysbench's
/// progress lines to `out`. `seed` makes the data repeatable (worker t draws from stream t).
pub fn prepare(
    driver: &dyn Driver,
    spec: &OltpSpec,
    threads: usize,
    seed: u64,
    out: &mut dyn Write,
) -> Result<PrepareSummary, OltpError> {
    spec.check(driver.dialect())?;
    // The legacy prepare() builds every table on one connection, in order, whatever
    // --threads says (parallel_prepare.lua was a separate script).
    let threads = if spec.legacy_script {
        1
    } else {
        threads.max(1)
    };
    if spec.test == Test::BulkInsert {
        return prepare_bulk(driver, threads, out);
    }
    let parts = fanout::per_worker(
        driver,
        threads,
        spec.tables,
        out,
        |t, conn, mine, stop, line| {
            let mut rng = Rng::new(seed, t as u64);
            build_tables(conn, driver.dialect(), spec, mine, &mut rng, stop, line)
        },
    )?;
    let mut total = PrepareSummary::default();
    for p in &parts {
        total.add(p);
    }
    Ok(total)
}

fn statement_error(what: String) -> impl FnOnce(DriverError) -> OltpError {
    move |error| OltpError::Statement {
        what,
        error,
        stmt: None,
    }
}

fn build_tables(
    conn: &mut dyn Connection,
    dialect: Dialect,
    spec: &OltpSpec,
    tables: &mut dyn Iterator<Item = u32>,
    rng: &mut Rng,
    stop: &AtomicBool,
    line: &mut fanout::Line<'_>,
) -> Result<PrepareSummary, OltpError> {
    let rows = rows_per_table(spec);
    let mut sum = PrepareSummary::default();
    // k is drawn from the run's distribution over the table size, as sysbench's
    // rand.default(1, table_size) does.
    let k_dist = (spec.table_size > 0)
        .then(|| Distribution::shaped(spec.rand_type, &spec.rand_shape, 1, spec.table_size));
    for i in tables {
        if stop.load(Relaxed) {
            break;
        }
        let name = schema::table_name(i);
        line(format!("Creating table '{name}'..."))?;
        let create = if spec.legacy_script {
            schema::create_legacy_table(dialect, spec, i)
        } else {
            schema::create_table(dialect, spec, i)
        };
        ddl(conn, &create).map_err(statement_error(format!("CREATE TABLE {name}")))?;
        // The legacy script says it inserts even 0 records; 1.0's scripts say nothing.
        if rows > 0 || spec.legacy_script {
            line(format!("Inserting {rows} records into '{name}'"))?;
            if let Some(k_dist) = &k_dist {
                load(conn, dialect, spec, i, rows, k_dist, rng, stop, &mut sum)?;
            }
        }
        if spec.create_secondary {
            line(if spec.legacy_script {
                format!("Creating secondary indexes on '{name}'...")
            } else {
                format!("Creating a secondary index on '{name}'...")
            })?;
            let index = if spec.legacy_script {
                schema::create_legacy_k_index(i)
            } else {
                schema::create_k_index(i)
            };
            ddl(conn, &index).map_err(statement_error(format!("CREATE INDEX k_{i}")))?;
        }
        sum.tables += 1;
    }
    Ok(sum)
}

/// A schema statement, again after an ignorable error: with several prepare threads, SQLite
/// refuses a write whose snapshot another connection's commit made stale (SQLITE_BUSY_SNAPSHOT)
/// at once, without waiting on the busy timeout.
fn ddl(conn: &mut dyn crate::Connection, sql: &str) -> Result<(), DriverError> {
    let mut tries = 0;
    loop {
        match conn.execute_plain(sql, &[]) {
            Ok(_) => return Ok(()),
            Err(e) if e.class == ErrorClass::Ignorable && tries < 1000 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn load(
    conn: &mut dyn Connection,
    dialect: Dialect,
    spec: &OltpSpec,
    i: u32,
    rows: u64,
    k_dist: &Distribution,
    rng: &mut Rng,
    stop: &AtomicBool,
    sum: &mut PrepareSummary,
) -> Result<(), OltpError> {
    let head = schema::load_insert_head(spec, i);
    let mut buf = String::with_capacity(BULK_PACKET_SIZE);
    buf.push_str(&head);
    let mut in_buf = 0u64;
    let (mut c, mut pad, mut row) = (String::new(), String::new(), String::new());
    for id in 1..=rows {
        let k = k_dist.sample(rng);
        schema::random_digits(&mut c, C_GROUPS, rng);
        schema::random_digits(&mut pad, PAD_GROUPS, rng);
        row.clear();
        // Writing to a String cannot fail.
        let _ = if spec.auto_inc {
            write!(row, "({k}, '{c}', '{pad}')")
        } else if spec.legacy_script {
            // common.lua's row, spacing and all.
            write!(row, "({id},{k},'{c}', '{pad}'  )")
        } else {
            write!(row, "({id}, {k}, '{c}', '{pad}')")
        };
        let comma = usize::from(in_buf > 0);
        if buf.len() + row.len() + 1 + comma > BULK_PACKET_SIZE && in_buf > 0 {
            if stop.load(Relaxed) {
                return Ok(());
            }
            send_batch(conn, dialect, &buf, sum).map_err(|error| OltpError::Load {
                table: i,
                error,
                last: false,
            })?;
            sum.rows += in_buf;
            buf.truncate(head.len());
            in_buf = 0;
        }
        if in_buf > 0 {
            buf.push(',');
        }
        buf.push_str(&row);
        in_buf += 1;
    }
    if in_buf > 0 {
        send_batch(conn, dialect, &buf, sum).map_err(|error| OltpError::Load {
            table: i,
            error,
            last: true,
        })?;
        sum.rows += in_buf;
    }
    Ok(())
}

/// One multi-row INSERT, retried while the database refuses it with an error the driver
/// may retry.
fn send_batch(
    conn: &mut dyn Connection,
    dialect: Dialect,
    sql: &str,
    sum: &mut PrepareSummary,
) -> Result<(), DriverError> {
    let wrap = dialect == Dialect::Sqlite;
    loop {
        let attempt = (|| {
            if wrap {
                conn.begin(TxIntent::Write)?;
            }
            conn.execute_plain(sql, &[])?;
            if wrap {
                conn.commit()?;
            }
            Ok::<(), DriverError>(())
        })();
        match attempt {
            Ok(()) => {
                sum.insert_statements += 1;
                return Ok(());
            }
            Err(e) if e.class == ErrorClass::Ignorable => {
                conn.rollback()?;
                sum.retries += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// bulk_insert's prepare: one connection creates sbtest1..threads if missing.
fn prepare_bulk(
    driver: &dyn Driver,
    threads: usize,
    out: &mut dyn Write,
) -> Result<PrepareSummary, OltpError> {
    let mut conn = driver.connect().map_err(OltpError::Connect)?;
    let mut sum = PrepareSummary::default();
    for i in 1..=threads as u32 {
        writeln!(out, "Creating table 'sbtest{i}'...")?;
        ddl(&mut *conn, &schema::create_bulk_table(i))
            .map_err(statement_error(format!("CREATE TABLE sbtest{i}")))?;
        sum.tables += 1;
    }
    Ok(sum)
}

/// Before a run: the tables a run reads must be there, and hold the ids `--table-size`
/// draws from. sysbench runs a larger size silently (missing ids give empty reads, and
/// updates that match nothing are counted as "other"), which measures a different workload.
/// The last table the run reads is checked: sbtest`tables`, or sbtest1 for select_random_*,
/// which read nothing else whatever --tables says. It passes with an id in the top 1% of
/// the size, or when the database remembers handing out such ids (the AUTO_INCREMENT
/// counter, the SERIAL's sequence, SQLite's sqlite_sequence): oltp_delete thins a table
/// without putting rows back, and a thinned table was still prepared with the size.
pub fn check_prepared(
    conn: &mut dyn Connection,
    spec: &OltpSpec,
    dialect: Dialect,
) -> Result<(), OltpError> {
    if matches!(spec.test, Test::BulkInsert | Test::OltpInsert) || spec.table_size == 0 {
        return Ok(());
    }
    let t = if spec.test.is_select_random() {
        1
    } else {
        spec.tables
    };
    let floor = spec.table_size - spec.table_size / 100;
    let sql = format!("SELECT id FROM sbtest{t} WHERE id >= {floor} LIMIT 1");
    match conn.execute_plain(&sql, &[]) {
        Ok(crate::driver::Outcome::Rows(n)) if n > 0 => Ok(()),
        Ok(_) => {
            let filled = filled_to(conn, dialect, t);
            if filled.is_some_and(|f| f >= floor) {
                return Ok(());
            }
            let held = match filled {
                Some(f) => format!("sbtest{t} was filled to id {f}"),
                None => format!(
                    "sbtest{t} has no ids near it, and keeps no record of ids it held before (no auto-increment)"
                ),
            };
            Err(OltpError::setting(
                Setting::TableSize,
                format!(
                    "{} is larger than the tables hold ({held}): prepare with this size, or run with the size they were prepared with",
                    spec.table_size
                ),
            ))
        }
        Err(e) if e.class == ErrorClass::Fatal => {
            // The set is not there: a failure path, so the round trips are affordable.
            let refused = crate::workload::refused_statements(conn, spec);
            if refused.is_empty() && spec.missing_tables_fail_in_run {
                return Ok(());
            }
            // The first table that cannot be read is the one to name: on an empty
            // database that is sbtest1, not the last one.
            let (first, error) = (1..t)
                .find_map(|i| {
                    conn.execute_plain(&format!("SELECT id FROM sbtest{i} LIMIT 1"), &[])
                        .err()
                        .filter(|e| e.class == ErrorClass::Fatal)
                        .map(|e| (i, e))
                })
                .unwrap_or((t, e));
            Err(OltpError::Unprepared {
                tables: t,
                first,
                error,
                refused,
            })
        }
        Err(e) => Err(OltpError::Statement {
            what: format!("checking sbtest{t}"),
            error: e,
            stmt: None,
        }),
    }
}

/// The largest id table `t` was ever given, as the database remembers it (None when it
/// keeps no such record: no auto-increment, or it cannot be read).
fn filled_to(conn: &mut dyn Connection, dialect: Dialect, t: u32) -> Option<u64> {
    let sql = match dialect {
        Dialect::Sqlite => format!("SELECT seq FROM sqlite_sequence WHERE name = 'sbtest{t}'"),
        Dialect::Mysql => {
            // MySQL 8 answers information_schema.TABLES from a cache of up to a day old
            // unless told not to; MariaDB has no such cache, nor the variable.
            let _ = conn.execute_plain("SET SESSION information_schema_stats_expiry = 0", &[]);
            format!(
                "SELECT AUTO_INCREMENT - 1 FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sbtest{t}'"
            )
        }
        Dialect::Pgsql => format!(
            "SELECT pg_sequence_last_value(pg_get_serial_sequence('sbtest{t}', 'id')::regclass)"
        ),
    };
    let mut value = None;
    conn.column(&sql, &mut |v| value = v.trim().parse::<u64>().ok())
        .ok()?;
    value
}
