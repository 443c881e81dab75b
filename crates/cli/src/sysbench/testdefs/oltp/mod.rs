//! sysbench 1.0's OLTP tests (oltp_read_write, ...), on plumb-oltp. The options are the
//! scripts' own (sysbench accepts `table_size` and `table-size` alike); the database is
//! SQLite, embedded, MySQL/MariaDB or PostgreSQL (see db_drivers.rs).

mod words;

use plumb_core::random::RandType;
use plumb_oltp::{OltpSpec, Setting, Test};
use plumb_pipeline::jobs::oltp::OltpJob;

use super::{db_drivers, RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

const MAX: u64 = u32::MAX as u64;
const fn count(name: &'static str, default: &'static str, help: &'static str) -> Opt {
    opt(name, Kind::Int { min: 0, max: MAX }, default, help)
}

#[rustfmt::skip]
const OPTIONS: &[Opt] = &[
    opt("mysql_storage_engine", Kind::Text, "innodb", "Storage engine, if MySQL is used"),
    opt("tables", Kind::Int { min: 1, max: MAX }, "1", "Number of tables"),
    opt("table_size", Kind::Int { min: 0, max: u64::MAX >> 2 }, "10000", "Number of rows per table"),
    opt("range_size", Kind::Int { min: 1, max: MAX }, "100", "Range size for range SELECT queries"),
    count("point_selects", "10", "Number of point SELECT queries per transaction"),
    count("simple_ranges", "1", "Number of simple range SELECT queries per transaction"),
    count("sum_ranges", "1", "Number of SELECT SUM() queries per transaction"),
    count("order_ranges", "1", "Number of SELECT ORDER BY queries per transaction"),
    count("distinct_ranges", "1", "Number of SELECT DISTINCT queries per transaction"),
    count("index_updates", "1", "Number of UPDATE index queries per transaction"),
    count("non_index_updates", "1", "Number of UPDATE non-index queries per transaction"),
    count("delete_inserts", "1", "Number of DELETE/INSERT combinations per transaction"),
    opt("range_selects", Kind::Bool, "on", "Enable/disable all range SELECT queries"),
    opt("skip_trx", Kind::Bool, "off", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode"),
    opt("auto_inc", Kind::Bool, "on", "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs"),
    opt("secondary", Kind::Bool, "off", "Use a secondary index in place of the PRIMARY KEY"),
    opt("create_secondary", Kind::Bool, "on", "Create a secondary index in addition to the PRIMARY KEY"),
    opt("random_points", Kind::Int { min: 1, max: MAX }, "10", "Number of random points in the IN() clause in generated SELECTs (select_random_points)"),
    opt("pgsql_variant", Kind::Text, "", "Use this PostgreSQL variant (sysbench 1.0's scripts ignore it; plumb refuses a value)"),
    opt("number_of_ranges", Kind::Int { min: 1, max: MAX }, "10", "Number of random BETWEEN ranges per SELECT (select_random_ranges)"),
    opt("delta", Kind::Int { min: 0, max: MAX }, "5", "Size of BETWEEN ranges (select_random_ranges)"),
    // The database driver options (see db_drivers.rs).
    opt("db-driver", Kind::Choice(db_drivers::DRIVERS), "sqlite", "the database driver: sqlite (embedded, plumb's default), mysql, pgsql; without it, --mysql-* or --pgsql-* options choose"),
    opt("db-ps-mode", Kind::Choice(&["auto", "disable"]), "auto", "prepared statements usage mode"),
    opt("sqlite-db", Kind::Text, "sbtest.db", "the SQLite database file (sqlite driver)"),
    opt("sqlite-journal-mode", Kind::Choice(&["wal", "delete", "truncate", "persist", "memory", "off"]), "wal", "SQLite's journal mode (sqlite driver)"),
    opt("mysql-host", Kind::List(&[]), "localhost", "MySQL server host [localhost: the local socket]"),
    opt("mysql-port", Kind::List(&[]), "3306", "MySQL server port"),
    opt("mysql-socket", Kind::List(&[]), "", "MySQL socket"),
    opt("mysql-user", Kind::Text, "sbtest", "MySQL user"),
    opt("mysql-password", Kind::Text, "", "MySQL password"),
    opt("mysql-db", Kind::Text, "sbtest", "MySQL database name"),
    opt("mysql-ssl", Kind::Bool, "off", "use SSL connections (rustls)"),
    opt("mysql-ssl-ca", Kind::Text, "", "CA certificate to verify the server with (without it the server's certificate is not verified)"),
    opt("mysql-ssl-cipher", Kind::Text, "", "use specific cipher for SSL connections (not supported: rustls chooses)"),
    opt("mysql-compression", Kind::Bool, "off", "use compression"),
    opt("mysql-debug", Kind::Bool, "off", "trace all client library calls (not supported)"),
    opt("mysql-ignore-errors", Kind::List(&[]), "1213,1020,1205", "list of errors to ignore, or \"all\"; a connection-loss code (2013, 2006) reconnects"),
    opt("mysql-dry-run", Kind::Bool, "off", "pretend that all MySQL client API calls are successful without executing them: the client's own cost, every query counted as other"),
    opt("pgsql-host", Kind::Text, "localhost", "PostgreSQL server host or socket directory; a comma list is tried in order, as libpq tries it"),
    opt("pgsql-port", Kind::Int { min: 1, max: 65535 }, "5432", "PostgreSQL server port"),
    opt("pgsql-user", Kind::Text, "sbtest", "PostgreSQL user"),
    opt("pgsql-password", Kind::Text, "", "PostgreSQL password"),
    opt("pgsql-db", Kind::Text, "sbtest", "PostgreSQL database name"),
    opt("pgsql-sslmode", Kind::Text, "prefer", "libpq's sslmode for TCP connections: disable, allow, prefer (encrypted when the server offers it), require (sysbench 1.0's libpq default is prefer)"),
    opt("pgsql-ignore-errors", Kind::List(&[]), "40P01,23505,40001", "SQLSTATEs to ignore, or \"all\" (plumb; sysbench's list is fixed); 57P01 or 08006 reconnects"),
];

/// What prepare lays out depends on: the tables, their layout, and where they live.
const DATA_SET: &[&str] = &[
    "tables",
    "table_size",
    "mysql_storage_engine",
    "auto_inc",
    "secondary",
    "create_secondary",
    "db-driver",
    "sqlite-db",
    "sqlite-journal-mode",
    "mysql-host",
    "mysql-port",
    "mysql-socket",
    "mysql-user",
    "mysql-db",
    "pgsql-host",
    "pgsql-port",
    "pgsql-user",
    "pgsql-db",
];

macro_rules! tests {
    ($($def:ident, $plan:ident, $test:expr, $desc:expr;)*) => {
        $(
            pub static $def: TestDef = TestDef {
                name: $test.name(),
                description: $desc,
                rand: RandUse::SeedAndType,
                options: OPTIONS,
                data_set: DATA_SET,
                plan: $plan,
            };
            fn $plan(v: &Values, c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
                plan($test, v, c)
            }
        )*
        /// Every OLTP test, for the test table.
        pub static ALL: &[&TestDef] = &[$(&$def),*];
    };
}

tests! {
    READ_WRITE, plan_rw, Test::OltpReadWrite, "OLTP read/write (sysbench's oltp_read_write.lua)";
    READ_ONLY, plan_ro, Test::OltpReadOnly, "OLTP read-only (oltp_read_only.lua)";
    WRITE_ONLY, plan_wo, Test::OltpWriteOnly, "OLTP write-only (oltp_write_only.lua)";
    POINT_SELECT, plan_ps, Test::OltpPointSelect, "point selects (oltp_point_select.lua)";
    UPDATE_INDEX, plan_ui, Test::OltpUpdateIndex, "indexed updates (oltp_update_index.lua)";
    UPDATE_NON_INDEX, plan_un, Test::OltpUpdateNonIndex, "non-indexed updates (oltp_update_non_index.lua)";
    DELETE, plan_de, Test::OltpDelete, "deletes (oltp_delete.lua)";
    INSERT, plan_in, Test::OltpInsert, "inserts (oltp_insert.lua)";
    BULK_INSERT, plan_bi, Test::BulkInsert, "bulk inserts (bulk_insert.lua)";
    RANDOM_POINTS, plan_rp, Test::SelectRandomPoints, "random IN() selects (select_random_points.lua)";
    RANDOM_RANGES, plan_rr, Test::SelectRandomRanges, "random range selects (select_random_ranges.lua)";
}

fn plan(test: Test, v: &Values, c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    if !v.word("pgsql_variant").is_empty() {
        return Err(UsageError(format!(
            "--pgsql_variant={} is not supported: sysbench 1.0's scripts ignore it (they read an undefined variable), and plumb has no Redshift dialect",
            v.word("pgsql_variant")
        )));
    }
    let driver = db_drivers::driver(v, c, OPTIONS)?;
    let int = |n: &str| v.int(n) as u32;
    let mut spec = OltpSpec::new(test);
    spec.tables = int("tables");
    spec.table_size = v.int("table_size");
    spec.range_size = v.int("range_size");
    spec.point_selects = int("point_selects");
    spec.simple_ranges = int("simple_ranges");
    spec.sum_ranges = int("sum_ranges");
    spec.order_ranges = int("order_ranges");
    spec.distinct_ranges = int("distinct_ranges");
    spec.index_updates = int("index_updates");
    spec.non_index_updates = int("non_index_updates");
    spec.delete_inserts = int("delete_inserts");
    spec.range_selects = v.flag("range_selects");
    spec.skip_trx = v.flag("skip_trx");
    spec.auto_inc = v.flag("auto_inc");
    spec.secondary = v.flag("secondary");
    spec.create_secondary = v.flag("create_secondary");
    spec.random_points = int("random_points");
    spec.number_of_ranges = int("number_of_ranges");
    spec.delta = v.int("delta");
    // sysbench 1.0's OLTP scripts draw ids and k with --rand-type, special by default.
    spec.rand_type = c.run.rand_type.unwrap_or(RandType::Special);
    spec.rand_shape = c.run.rand_shape;
    spec.mysql_storage_engine = v.word("mysql_storage_engine").to_string();
    // Under sysbench's name, a missing table with nothing prepared fails the run's first
    // statement, in sysbench's words (see words.rs). sysbench has no SQLite driver to
    // imitate: there plumb's own line, which says what to prepare, stays.
    spec.missing_tables_fail_in_run = c.dropin && driver.dialect() != plumb_oltp::Dialect::Sqlite;
    spec.end_failures_counted = c.dropin;
    spec.legacy_script = c.legacy_script;
    spec.check(driver.dialect())
        .map_err(|e| UsageError(e.describe(&spell)))?;
    let script = words::Script {
        test,
        dialect: driver.dialect(),
        threads: c.run.threads,
        auto_inc: spec.auto_inc,
        tables: spec.tables,
        command: c.dropin_command,
        mysql_port: v
            .list("mysql-port")
            .first()
            .and_then(|p| p.parse().ok())
            .unwrap_or(3306),
        mysql_socket_given: v.list("mysql-socket").iter().any(|s| !s.is_empty()),
        mysql_endpoints: if driver.dialect() == plumb_oltp::Dialect::Mysql {
            super::db_drivers::mysql_config(v, c.dropin)
                .map(|m| m.endpoints)
                .unwrap_or_default()
        } else {
            Vec::new()
        },
        unknown_driver: c.unknown_driver.clone(),
        legacy: c.legacy_path.clone().map(|path| words::Legacy {
            path,
            first: spec.legacy_first_statement(),
        }),
    };
    let job = OltpJob::new(spec, driver, c.run.threads, c.run.seed)
        .spelled(spell)
        .stopped_by(crate::signals::install());
    Ok(Box::new(if c.dropin {
        job.worded(Box::new(move |e| script.words(e)))
    } else {
        // A run's failure is otherwise printed without the front end's spelling, and this
        // one's cause is an option to change. A table an earlier prepare left is the usual
        // reason a prepare fails: the line says what to do about it.
        job.worded(Box::new(move |e| match e {
            plumb_oltp::OltpError::Unguarded { .. } => Some(e.describe(&spell)),
            plumb_oltp::OltpError::Statement { what, error, .. }
                if what.starts_with("CREATE TABLE ") && table_exists(error) =>
            {
                Some(format!(
                    "{e}: the table is already there; if an earlier prepare made it, run 'plumb {} cleanup' with the same options first, or run on the tables as they are",
                    test.name()
                ))
            }
            _ => None,
        }))
    }))
}

/// The database's "table already exists": MariaDB's error 1050, PostgreSQL's 42P07,
/// SQLite's message (its code is the generic SQLITE_ERROR).
fn table_exists(error: &plumb_oltp::DriverError) -> bool {
    matches!(error.code.as_deref(), Some("1050" | "42P07"))
        || error.message.contains("already exists")
}

impl TestPlan for OltpJob {
    fn reports_partial_run(&self) -> bool {
        true
    }
    fn prints_steps(&self) -> bool {
        true
    }
}

/// A setting as sysbench's OLTP options name it.
fn spell(s: Setting) -> String {
    match s {
        Setting::Tables => "--tables",
        Setting::TableSize => "--table-size",
        Setting::RangeSize => "--range-size",
        Setting::RandomPoints => "--random-points",
        Setting::NumberOfRanges => "--number-of-ranges",
        Setting::Secondary => "--secondary",
        Setting::Threads => "--threads",
        Setting::BusyTimeout => "the SQLite busy timeout",
        Setting::JournalMode => "--sqlite-journal-mode",
        Setting::Synchronous => "SQLite's synchronous",
        Setting::PageSize => "SQLite's page size",
        Setting::SkipTrx => "--skip-trx=on",
    }
    .to_string()
}

/// The test a script path names (`/usr/share/sysbench/oltp_read_write.lua`, a 0.5 tree's
/// `tests/db/oltp.lua`), `Err` for a script plumb does not have.
pub fn from_script(path: &str) -> Option<Result<&'static TestDef, String>> {
    if !path.ends_with(".lua") {
        return None;
    }
    let stem = std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    // sysbench 0.5's tests/db/oltp.lua is the read/write transaction.
    let stem = if stem == "oltp" {
        "oltp_read_write"
    } else {
        stem
    };
    Some(
        ALL.iter()
            .copied()
            .find(|t| t.name == stem)
            .ok_or_else(|| {
                format!(
                    "custom Lua scripts are not supported yet: '{path}' is not one of sysbench's OLTP scripts ({})",
                    ALL.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
                )
            }),
    )
}
