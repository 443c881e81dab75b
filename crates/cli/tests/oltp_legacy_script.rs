//! sysbench 0.5's oltp.lua as sysbench 1.0.20 runs its `tests/include/oltp_legacy/oltp.lua`
//! copy (reference 3.3, 3.5): 0.5's schema, a prepare on one connection, plain-text
//! statements on one table per event, LOCK TABLES for MyISAM, 1.0's report.
//!
//! Debian's sysbench 1.0.20 lacks the oltp_legacy scripts and cannot run 0.5's own oltp.lua
//! (reference 3.1), so these tests check plumb against the reference's facts and the
//! script's text, not against the peer. The statement texts and the one-table rule are
//! checked statement by statement in plumb-oltp (workload.rs, `legacy_tests`); here the
//! servers show the schema, the lock statements and the counts. Without the servers the
//! tests say so and pass, except under CI.

mod common;

use std::path::Path;

use common::peers::{run_named, DropIn, Printed};
use common::{available, figure, mysql, mysql_fresh_db, pg_fresh_db, plumb, psql, text};
use tempfile::TempDir;

const SCRIPT: &str = "--test=./sysbench/tests/db/oltp.lua";
const SOCKET: &str = "--mysql-socket=/var/run/mysqld/mysqld.sock";
const TEST_WARNING: &str = "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.\n";
const THREADS_WARNING: &str = "WARNING: --num-threads is deprecated, use --threads instead\n";
const REQUESTS_WARNING: &str = "WARNING: --max-requests is deprecated, use --events instead\n";

fn args(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|s| s.to_string()).collect()
}

fn dropin(dir: &Path, base: &[&str], more: &[&str]) -> Printed {
    let drop_in = DropIn::named("sysbench");
    let p = run_named(&drop_in.bin(), dir, &args(base, more));
    assert_eq!(p.code, 0, "{more:?}: {}{}", p.stdout, p.stderr);
    p
}

/// (read, write, other, transactions, ignored errors) of a report.
fn counts(report: &str) -> [u64; 5] {
    [
        "read:",
        "write:",
        "other:",
        "transactions:",
        "ignored errors:",
    ]
    .map(|l| figure(report, l))
}

/// The prepare's lines: 0.5's plural index message, one connection (no "Initializing
/// worker threads..." even with --num-threads), tables in order.
fn legacy_prepare_lines(tables: u32, rows: u64) -> String {
    let mut s = String::new();
    for i in 1..=tables {
        s += &format!(
            "Creating table 'sbtest{i}'...\nInserting {rows} records into 'sbtest{i}'\nCreating secondary indexes on 'sbtest{i}'...\n"
        );
    }
    s
}

/// The output after sysbench's banner (and the deprecation warnings sysbench 1.0 prints
/// on stdout before it).
fn without_banner(out: &str) -> &str {
    let (head, rest) = out.split_once("\n\n").unwrap();
    let head = head.trim_start_matches(THREADS_WARNING);
    assert!(head.starts_with("sysbench 1.0.20 ("), "{out}");
    rest
}

fn com(name: &str) -> u64 {
    mysql(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

/// Seed 004's lines, scaled down (4 tables of 1000 rows), under the drop-in name on
/// MariaDB/InnoDB: 0.5's schema (UNSIGNED, MAX_ROWS, k_N), and the reference's verified run
/// (`--num-threads=4 --max-requests=100`): 100 transactions of 14 reads and 6 writes or
/// other. (sysbench counts the statements of an event it restarts too, hence its read
/// 1414 with 1 ignored error; plumb counts committed transactions' statements only.)
#[test]
fn seed_004_lines_prepare_0_5_s_schema_and_run_on_mariadb() {
    if !available("mysql") {
        return;
    }
    let db = "plumb_h4_legacy_innodb";
    mysql_fresh_db(db);
    let d = TempDir::new().unwrap();
    let dbarg = format!("--mysql-db={db}");
    let base = [
        SCRIPT,
        "--mysql-table-engine=innodb",
        "--oltp-tables-count=4",
        "--oltp-table-size=1000",
        "--mysql-user=root",
        SOCKET,
        &dbarg,
    ];
    let p = dropin(d.path(), &base, &["--num-threads=4", "prepare"]);
    assert_eq!(without_banner(&p.stdout), legacy_prepare_lines(4, 1000));
    assert!(p.stdout.starts_with(THREADS_WARNING), "{}", p.stdout);
    assert_eq!(p.stderr, TEST_WARNING);
    let create = mysql(&format!("SHOW CREATE TABLE {db}.sbtest3"));
    for part in [
        "`id` int(10) unsigned NOT NULL AUTO_INCREMENT",
        "`k` int(10) unsigned NOT NULL DEFAULT 0",
        "`c` char(120) NOT NULL DEFAULT ''",
        "`pad` char(60) NOT NULL DEFAULT ''",
        "PRIMARY KEY (`id`)",
        "KEY `k_3` (`k`)",
        "ENGINE=InnoDB",
        "MAX_ROWS=1000000",
    ] {
        assert!(create.contains(part), "{part}: {create}");
    }
    assert_eq!(
        mysql(&format!(
            "SELECT COUNT(*), MIN(id), MAX(id), MIN(k) >= 1, MAX(k) <= 1000 FROM {db}.sbtest4"
        ))
        .trim(),
        "1000\t1\t1000\t1\t1"
    );

    let p = dropin(
        d.path(),
        &base,
        &[
            "--max-time=5",
            "--max-requests=100",
            "--num-threads=4",
            "--report-interval=10",
            "run",
        ],
    );
    let [r, w, o, t, _] = counts(&p.stdout);
    assert_eq!((r, w + o, t), (1400, 600, 100), "{}", p.stdout);
    assert!(w > 0 && o >= 200, "{}", p.stdout);
    assert!(p.stdout.contains("SQL statistics:"), "{}", p.stdout);
    assert!(p.stdout.contains("Number of threads: 4"), "{}", p.stdout);
    let both = format!("{}{}", p.stdout, p.stderr);
    for warning in [TEST_WARNING, THREADS_WARNING, REQUESTS_WARNING] {
        assert!(both.contains(warning), "{both}");
    }
    // Every delete was followed by the insert of the same id: no row is lost.
    assert_eq!(
        mysql(&format!("SELECT COUNT(*) FROM {db}.sbtest1")).trim(),
        "1000"
    );

    let p = dropin(d.path(), &base, &["cleanup"]);
    assert_eq!(
        without_banner(&p.stdout),
        "Dropping table 'sbtest1'...\nDropping table 'sbtest2'...\nDropping table 'sbtest3'...\nDropping table 'sbtest4'...\n"
    );
    assert_eq!(
        mysql(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='{db}'"
        ))
        .trim(),
        "0"
    );
    mysql(&format!("DROP DATABASE {db}"));
}

/// MyISAM: `LOCK TABLES sbtest1 WRITE ,sbtest2 WRITE ...` and `UNLOCK TABLES` instead of
/// BEGIN/COMMIT, one pair per event (the server's own statement counters show them; other
/// sessions may add to them, never take away).
#[test]
fn myisam_locks_the_tables_instead_of_a_transaction() {
    if !available("mysql") {
        return;
    }
    let db = "plumb_h4_legacy_myisam";
    mysql_fresh_db(db);
    let d = TempDir::new().unwrap();
    let dbarg = format!("--mysql-db={db}");
    let base = [
        SCRIPT,
        "--mysql-table-engine=myisam",
        "--oltp-tables-count=3",
        "--oltp-table-size=200",
        "--mysql-user=root",
        SOCKET,
        &dbarg,
    ];
    dropin(d.path(), &base, &["prepare"]);
    let create = mysql(&format!("SHOW CREATE TABLE {db}.sbtest2"));
    assert!(
        create.contains("ENGINE=MyISAM") && create.contains("MAX_ROWS=1000000"),
        "{create}"
    );
    let (locks, unlocks) = (com("Com_lock_tables"), com("Com_unlock_tables"));
    let p = dropin(
        d.path(),
        &base,
        &["--max-requests=40", "--num-threads=2", "run"],
    );
    assert!(com("Com_lock_tables") - locks >= 40);
    assert!(com("Com_unlock_tables") - unlocks >= 40);
    let [r, w, o, t, e] = counts(&p.stdout);
    // MyISAM's tables are locked for the whole event: nothing conflicts, every write lands.
    assert_eq!(
        (r, w, o, t, e),
        (40 * 14, 40 * 4, 40 * 2, 40, 0),
        "{}",
        p.stdout
    );
    dropin(d.path(), &base, &["cleanup"]);
    mysql(&format!("DROP DATABASE {db}"));
}

/// PostgreSQL: `id SERIAL NOT NULL` (a sequence default), k_1 built after the data, and the
/// event's counts.
#[test]
fn postgresql_gets_the_legacy_schema() {
    if !available("pgsql") {
        return;
    }
    let db = "plumb_h4_legacy_pg";
    pg_fresh_db(db);
    let d = TempDir::new().unwrap();
    let dbarg = format!("--pgsql-db={db}");
    let base = [
        SCRIPT,
        "--db-driver=pgsql",
        "--oltp-tables-count=2",
        "--oltp-table-size=300",
        "--pgsql-user=postgres",
        "--pgsql-host=/var/run/postgresql",
        &dbarg,
    ];
    let p = dropin(d.path(), &base, &["--num-threads=2", "prepare"]);
    assert_eq!(without_banner(&p.stdout), legacy_prepare_lines(2, 300));
    assert_eq!(
        psql(
            db,
            "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_name='sbtest2' ORDER BY ordinal_position"
        ),
        "id|integer|NO|nextval('sbtest2_id_seq'::regclass)\nk|integer|NO|0\nc|character|NO|''::bpchar\npad|character|NO|''::bpchar\n"
    );
    assert_eq!(
        psql(
            db,
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename='sbtest2' ORDER BY 1"
        ),
        "k_2|CREATE INDEX k_2 ON public.sbtest2 USING btree (k)\nsbtest2_pkey|CREATE UNIQUE INDEX sbtest2_pkey ON public.sbtest2 USING btree (id)\n"
    );
    let p = dropin(
        d.path(),
        &base,
        &["--max-requests=30", "--num-threads=1", "run"],
    );
    // One thread: nothing conflicts, every UPDATE and DELETE finds its row.
    let [r, w, o, t, e] = counts(&p.stdout);
    assert_eq!(
        (r, w, o, t, e),
        (30 * 14, 30 * 4, 30 * 2, 30, 0),
        "{}",
        p.stdout
    );
    dropin(d.path(), &base, &["cleanup"]);
    psql("postgres", &format!("DROP DATABASE {db}"));
}

/// SQLite (plumb's own name, its default database): the script's index statement, a prepare
/// on one connection, 0.5's options with their meaning, and "Inserting 0 records" (the
/// legacy script prints it for an empty table; 1.0's scripts do not).
#[test]
fn sqlite_runs_the_legacy_script() {
    let d = TempDir::new().unwrap();
    let run = |more: &[&str]| {
        let o = plumb()
            .args([SCRIPT, "--oltp-tables-count=2", "--oltp-table-size=100"])
            .args(more)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{more:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    let out = run(&["--num-threads=4", "prepare"]);
    assert!(out.ends_with(&legacy_prepare_lines(2, 100)), "{out}");
    assert!(!out.contains("Initializing worker threads"), "{out}");
    let schema = std::process::Command::new("sqlite3")
        .args([
            "sbtest.db",
            "SELECT sql FROM sqlite_master WHERE type='index' ORDER BY name",
        ])
        .current_dir(d.path())
        .output();
    if let Ok(o) = schema {
        assert_eq!(
            text(&o.stdout),
            "CREATE INDEX k_1 on sbtest1(k)\nCREATE INDEX k_2 on sbtest2(k)\n"
        );
    }
    let out = run(&[
        "--oltp-read-only=on",
        "--oltp-point-selects=3",
        "--oltp-range-selects=off",
        "--max-requests=10",
        "--num-threads=2",
        "run",
    ]);
    let [r, w, o, t, _] = counts(&out);
    assert_eq!((r, w, o, t), (30, 0, 20, 10), "{out}");
    let out = run(&["--oltp-skip-trx=on", "--max-requests=10", "run"]);
    let [r, w, o, t, _] = counts(&out);
    assert_eq!((r, w, o, t), (140, 40, 0, 10), "{out}");
    run(&["cleanup"]);
    let out = plumb()
        .args([
            SCRIPT,
            "--oltp-tables-count=1",
            "--oltp-table-size=0",
            "prepare",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("Inserting 0 records into 'sbtest1'\n"),
        "{}",
        text(&out.stdout)
    );
    run(&["cleanup"]);
    // A script path named alone, without --test, is the same legacy script.
    let out = plumb()
        .args([
            "./sysbench/tests/db/oltp.lua",
            "--oltp-table-size=10",
            "prepare",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("Creating secondary indexes on 'sbtest1'..."),
        "{}",
        text(&out.stdout)
    );
}

/// A `--mysql-host` list whose second server does not answer (127.0.0.2; MariaDB listens
/// on 127.0.0.1): sysbench's driver deals the connections over the hosts in turn, so of
/// three threads one meets the dead host and of four two, each printing the driver's lines
/// and its thread_run's failure at its first query (sysbench 1.0.20 on its legacy copy, by
/// hand); prepare connects once, to the first host.
#[test]
fn a_host_list_fails_only_the_threads_dealt_to_the_dead_host() {
    if !available("mysql") {
        return;
    }
    let db = "plumb_legacy_hosts";
    mysql_fresh_db(db);
    let d = TempDir::new().unwrap();
    let db_opt = format!("--mysql-db={db}");
    let base = [
        SCRIPT,
        "--mysql-user=root",
        &db_opt,
        "--oltp-table-size=100",
    ];
    dropin(
        d.path(),
        &base,
        &["--mysql-host=127.0.0.1,127.0.0.2", "prepare"],
    );
    let dead = "FATAL: unable to connect to MySQL server on host '127.0.0.2', port 3306, aborting...\n\
                FATAL: error 2002: Can't connect to server on '127.0.0.2' (115)\n\
                FATAL: `thread_run' function failed: ./sysbench/tests/db/oltp.lua:43: Failed to connect to the database\n";
    for (threads, failing) in [(3, 1), (4, 2)] {
        let t = format!("--num-threads={threads}");
        let more = ["--mysql-host=127.0.0.1,127.0.0.2", &t, "--time=1", "run"];
        let p = run_named(
            &DropIn::named("sysbench").bin(),
            d.path(),
            &args(&base, &more),
        );
        assert_eq!(p.code, 1, "{threads}: {}{}", p.stdout, p.stderr);
        assert_eq!(
            without_banner(&p.stdout),
            format!(
                "Running the test with following options:\nNumber of threads: {threads}\n\
                 Initializing random number generator from current time\n\n\n\
                 Initializing worker threads...\n\nThreads started!\n\n{}",
                dead.repeat(failing)
            )
        );
    }
    mysql(&format!("DROP DATABASE {db}"));
}

/// The legacy script's failures under the drop-in name, as sysbench 1.0.20 prints them
/// with its oltp_legacy copy (checked against it by hand: Debian's package lacks the
/// script, see the top): every statement goes through `db_query()`, which fails with
/// those words at the script's own line (the path as given, common.lua beside it); a
/// thread connects at its first query, after "Threads started!", and each thread's
/// failure is its thread_run's; prepare and cleanup connect once, in common.lua (cleanup
/// prints its first line before). MariaDB.
#[test]
fn failures_are_worded_as_the_legacy_script_s() {
    if !available("mysql") {
        return;
    }
    let db = "plumb_legacy_errors";
    mysql_fresh_db(db);
    let d = TempDir::new().unwrap();
    let db_opt = format!("--mysql-db={db}");
    let base = [SCRIPT, "--mysql-user=root", &db_opt];
    let run = |more: &[&str]| {
        let p = run_named(
            &DropIn::named("sysbench").bin(),
            d.path(),
            &args(&base, more),
        );
        assert_eq!(p.code, 1, "{more:?}: {}{}", p.stdout, p.stderr);
        assert_eq!(p.stderr, TEST_WARNING, "{more:?}");
        p.stdout
    };
    let header = "Running the test with following options:\nNumber of threads: 2\nInitializing random number generator from current time\n\n\nInitializing worker threads...\n\nThreads started!\n\n";

    // No tables: the first point select (line 49) fails, after BEGIN (line 43).
    let out = run(&[
        "--num-threads=2",
        "--oltp-point-selects=1",
        "--time=1",
        "run",
    ]);
    let out = without_banner(&out);
    let last: Vec<&str> = out.lines().rev().take(2).collect();
    assert!(out.starts_with(header), "{out}");
    assert_eq!(
        last[0],
        "FATAL: `thread_run' function failed: ./sysbench/tests/db/oltp.lua:49: db_query() failed"
    );
    assert!(
        last[1].starts_with(&format!(
            "FATAL: mysql_drv_query() returned error 1146 (Table '{db}.sbtest1' doesn't exist) for query 'SELECT c FROM sbtest1 WHERE id="
        )),
        "{out}"
    );

    // A table already there: prepare's CREATE TABLE, quoted as common.lua writes it.
    mysql(&format!("USE {db}; CREATE TABLE sbtest1 (id INTEGER)"));
    let out = run(&["prepare"]);
    assert_eq!(
        without_banner(&out),
        "Creating table 'sbtest1'...\n\
         FATAL: mysql_drv_query() returned error 1050 (Table 'sbtest1' already exists) for query 'CREATE TABLE sbtest1 (\n\
         id INTEGER UNSIGNED NOT NULL AUTO_INCREMENT,\n\
         k INTEGER UNSIGNED DEFAULT '0' NOT NULL,\n\
         c CHAR(120) DEFAULT '' NOT NULL,\n\
         pad CHAR(60) DEFAULT '' NOT NULL,\n\
         PRIMARY KEY (id)\n\
         ) /*! ENGINE = innodb MAX_ROWS = 1000000 */ '\n\
         FATAL: `prepare' function failed: ./sysbench/tests/db/common.lua:66: db_query() failed\n"
    );

    // No server: each thread at its first query (BEGIN, or the first point select without
    // a transaction); prepare and cleanup once.
    let nowhere = ["--mysql-host=127.0.0.1", "--mysql-port=1"];
    let refused =
        "FATAL: unable to connect to MySQL server on host '127.0.0.1', port 1, aborting...\n\
                   FATAL: error 2002: Can't connect to server on '127.0.0.1' (115)\n";
    for (more, line) in [(&[][..], 43), (&["--oltp-skip-trx=on"][..], 49)] {
        let mut a = nowhere.to_vec();
        a.extend_from_slice(more);
        a.extend_from_slice(&["--num-threads=2", "--time=1", "run"]);
        let thread = format!(
            "{refused}FATAL: `thread_run' function failed: ./sysbench/tests/db/oltp.lua:{line}: Failed to connect to the database\n"
        );
        assert_eq!(
            without_banner(&run(&a)),
            format!("{header}{thread}{thread}"),
            "{more:?}"
        );
    }
    let mut a = nowhere.to_vec();
    a.push("prepare");
    assert_eq!(
        without_banner(&run(&a)),
        format!("{refused}FATAL: `prepare' function failed: ./sysbench/tests/db/common.lua:111: Failed to connect to the database\n")
    );
    let mut a = nowhere.to_vec();
    a.push("cleanup");
    assert_eq!(
        without_banner(&run(&a)),
        format!("Dropping table 'sbtest1'...\n{refused}FATAL: `cleanup' function failed: ./sysbench/tests/db/common.lua:128: Failed to connect to the database\n")
    );
    // A user who may create tables but not insert into them (sysbench 1.0.20 on the legacy
    // script, by hand): a full statement fails at the row common.lua:88 appends (:90 with
    // explicit ids), its text cut where the log buffer cuts it; the last rows' failure
    // sysbench ignores (its db_bulk_insert_done's result is not checked) and reports
    // success, where plumb fails in its own words.
    mysql(&format!(
        "CREATE USER IF NOT EXISTS plumb_legacy_noinsert@localhost; \
         GRANT CREATE, DROP, SELECT, INDEX ON {db}.* TO plumb_legacy_noinsert@localhost; \
         DROP TABLE {db}.sbtest1"
    ));
    let refused = [SCRIPT, "--mysql-user=plumb_legacy_noinsert", &db_opt];
    let prepare = |more: &[&str]| {
        let p = run_named(
            &DropIn::named("sysbench").bin(),
            d.path(),
            &args(&refused, more),
        );
        mysql(&format!("DROP TABLE IF EXISTS {db}.sbtest1"));
        assert_eq!(p.code, 1, "{more:?}: {}{}", p.stdout, p.stderr);
        without_banner(&p.stdout).to_string()
    };
    for (more, line) in [(&[][..], 88), (&["--oltp-auto-inc=off"][..], 90)] {
        let mut a = vec!["--oltp-table-size=10000", "prepare"];
        a.extend_from_slice(more);
        let out = prepare(&a);
        let (head, tail) = out.split_once("VALUES").expect(&out);
        assert!(
            head.starts_with(&format!(
                "Creating table 'sbtest1'...\nInserting 10000 records into 'sbtest1'\n\
                 FATAL: mysql_drv_query() returned error 1142 (INSERT command denied to user 'plumb_legacy_noinsert'@'localhost' for table `{db}`.`sbtest1`) for query 'INSERT INTO sbtest1("
            )),
            "{out}"
        );
        let lua = format!(
            "FATAL: `prepare' function failed: ./sysbench/tests/db/common.lua:{line}: db_bulk_insert_next() failed\n"
        );
        assert!(tail.ends_with(&lua), "{out}");
        // The log buffer: 4095 bytes of message after its "FATAL: ", no line end.
        let cut = out.len() - lua.len() - out.find("FATAL: ").unwrap() - "FATAL: ".len();
        assert_eq!(cut, 4095, "{out}");
    }
    let out = prepare(&["--oltp-table-size=100", "prepare"]);
    assert!(
        out.ends_with("FATAL: INSERT INTO sbtest1: error 1142 (42000): INSERT command denied to user 'plumb_legacy_noinsert'@'localhost' for table `plumb_legacy_errors`.`sbtest1`\n"),
        "{out}"
    );
    mysql("DROP USER plumb_legacy_noinsert@localhost");
    mysql(&format!("DROP DATABASE {db}"));
}
