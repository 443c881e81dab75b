//! Prepare, run and cleanup on real SQLite files in a temporary directory.

use std::sync::Arc;
use std::time::Duration;

use plumb_core::{run, RunConfig, StopFlag};
use rusqlite::Connection as Raw;

use crate::cleanup::cleanup;
use crate::driver::{Dialect, Driver, ErrorClass, Outcome, TxIntent, Value};
use crate::prepare::{prepare, tables_of_worker};
use crate::spec::{OltpSpec, Test};
use crate::sqlite::{SqliteDriver, SqliteOptions};
use crate::testdriver::LogDriver;
use crate::workload::{Oltp, COUNTERS, IGNORED_ERRORS, OTHER, READS, TRANSACTIONS, WRITES};

fn db(dir: &tempfile::TempDir) -> SqliteDriver {
    SqliteDriver::new(SqliteOptions::new(dir.path().join("sbtest.db"))).unwrap()
}

fn raw(dir: &tempfile::TempDir) -> Raw {
    Raw::open(dir.path().join("sbtest.db")).unwrap()
}

fn count(r: &Raw, sql: &str) -> i64 {
    r.query_row(sql, [], |row| row.get(0)).unwrap()
}

fn lines(out: &[u8]) -> Vec<String> {
    String::from_utf8(out.to_vec())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn prepare_builds_tables_rows_index_and_sysbench_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = db(&dir);
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.tables = 2;
    spec.table_size = 10_000;
    let mut out = Vec::new();
    let sum = prepare(&d, &spec, 1, 3, &mut out).unwrap();
    assert_eq!(
        lines(&out),
        [
            "Creating table 'sbtest1'...",
            "Inserting 10000 records into 'sbtest1'",
            "Creating a secondary index on 'sbtest1'...",
            "Creating table 'sbtest2'...",
            "Inserting 10000 records into 'sbtest2'",
            "Creating a secondary index on 'sbtest2'...",
        ]
    );
    // sysbench sends 10000 rows as 4 statements of about 512 KiB.
    assert_eq!(sum.insert_statements, 8);
    assert_eq!((sum.tables, sum.rows), (2, 20_000));
    let r = raw(&dir);
    for t in 1..=2 {
        let tb = format!("sbtest{t}");
        assert_eq!(count(&r, &format!("SELECT COUNT(*) FROM {tb}")), 10_000);
        assert_eq!(count(&r, &format!("SELECT MIN(id) FROM {tb}")), 1);
        assert_eq!(count(&r, &format!("SELECT MAX(id) FROM {tb}")), 10_000);
        assert_eq!(
            count(
                &r,
                &format!("SELECT COUNT(*) FROM {tb} WHERE k < 1 OR k > 10000")
            ),
            0
        );
        let shape = "'[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]'";
        let c_glob = [shape; 10].join(" || '-' || ");
        let pad_glob = [shape; 5].join(" || '-' || ");
        assert_eq!(
            count(
                &r,
                &format!(
                    "SELECT COUNT(*) FROM {tb} WHERE c GLOB ({c_glob}) AND pad GLOB ({pad_glob})"
                )
            ),
            10_000
        );
        assert_eq!(
            count(
                &r,
                &format!("SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='k_{t}' AND tbl_name='{tb}'")
            ),
            1
        );
    }
    // k follows the special distribution: most values sit in the middle percent.
    let mid = count(
        &r,
        "SELECT COUNT(*) FROM sbtest1 WHERE k BETWEEN 4951 AND 5050",
    );
    assert!(mid > 7_000, "{mid} of 10000 in the middle percent");
}

#[test]
fn parallel_prepare_splits_tables_like_sysbench() {
    assert_eq!(tables_of_worker(0, 3, 8).collect::<Vec<_>>(), [1, 4, 7]);
    assert_eq!(tables_of_worker(1, 3, 8).collect::<Vec<_>>(), [2, 5, 8]);
    assert_eq!(tables_of_worker(2, 3, 8).collect::<Vec<_>>(), [3, 6]);
    assert_eq!(tables_of_worker(4, 5, 3).count(), 0);

    let d = LogDriver::new(crate::Dialect::Sqlite);
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.tables = 5;
    spec.table_size = 10;
    let mut out = Vec::new();
    prepare(&d, &spec, 7, 1, &mut out).unwrap();
    // Two idle threads never connect.
    assert_eq!(
        d.shared.connects.load(std::sync::atomic::Ordering::SeqCst),
        5
    );
    // Each connection built exactly its share, each table's statements in order.
    let log = d.log();
    for t in 1..=5u32 {
        let mine: Vec<&str> = log
            .iter()
            .filter(|e| {
                e.sql.contains(&format!("sbtest{t}(")) || e.sql.ends_with(&format!("sbtest{t}(k)"))
            })
            .map(|e| e.sql.as_str())
            .collect();
        let conns: std::collections::BTreeSet<usize> = log
            .iter()
            .filter(|e| e.sql.contains(&format!("sbtest{t}(")))
            .map(|e| e.conn)
            .collect();
        assert_eq!(conns.len(), 1, "table {t} built by one connection");
        assert!(mine[0].starts_with(&format!("CREATE TABLE sbtest{t}(")));
        assert!(mine[1].starts_with(&format!("INSERT INTO sbtest{t}(k, c, pad) VALUES(")));
        assert_eq!(
            mine.last().unwrap(),
            &format!("CREATE INDEX k_{t} ON sbtest{t}(k)")
        );
    }
    let l = lines(&out);
    assert_eq!(l[0], "Initializing worker threads...");
    assert_eq!(l[1], "");
    assert_eq!(l.len(), 2 + 15);

    let dir = tempfile::tempdir().unwrap();
    let sq = db(&dir);
    spec.table_size = 3000;
    prepare(&sq, &spec, 3, 1, &mut Vec::new()).unwrap();
    let r = raw(&dir);
    for t in 1..=5 {
        assert_eq!(count(&r, &format!("SELECT COUNT(*) FROM sbtest{t}")), 3000);
    }
}

#[test]
fn prepare_refuses_existing_tables_and_cleanup_drops_only_the_tables_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = db(&dir);
    let mut spec = OltpSpec::new(Test::OltpReadOnly);
    spec.tables = 3;
    spec.table_size = 100;
    prepare(&d, &spec, 1, 1, &mut Vec::new()).unwrap();
    let e = prepare(&d, &spec, 1, 1, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().starts_with("CREATE TABLE sbtest1: "), "{e}");
    assert!(e.to_string().contains("already exists"), "{e}");

    spec.tables = 2;
    let mut out = Vec::new();
    assert_eq!(cleanup(&d, &spec, 4, None, &mut out).unwrap(), 2);
    assert_eq!(
        lines(&out),
        ["Dropping table 'sbtest1'...", "Dropping table 'sbtest2'..."]
    );
    let r = raw(&dir);
    assert_eq!(
        count(
            &r,
            "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name LIKE 'sbtest%'"
        ),
        1
    );
    assert_eq!(count(&r, "SELECT COUNT(*) FROM sbtest3"), 100);
}

#[test]
fn a_signal_stops_cleanup_before_the_next_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = db(&dir);
    let mut spec = OltpSpec::new(Test::OltpReadOnly);
    spec.tables = 2;
    spec.table_size = 10;
    prepare(&d, &spec, 1, 1, &mut Vec::new()).unwrap();
    let stop = StopFlag::default();
    stop.store(2, std::sync::atomic::Ordering::Relaxed);
    let e = cleanup(&d, &spec, 1, Some(&stop), &mut Vec::new()).unwrap_err();
    assert!(matches!(e, crate::OltpError::Interrupted(2)), "{e}");
    let r = raw(&dir);
    assert_eq!(count(&r, "SELECT COUNT(*) FROM sbtest2"), 10);
}

#[test]
fn oltp_insert_without_auto_inc_prepares_empty_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = db(&dir);
    let mut spec = OltpSpec::new(Test::OltpInsert);
    spec.auto_inc = false;
    let mut out = Vec::new();
    prepare(&d, &spec, 1, 1, &mut out).unwrap();
    assert_eq!(
        lines(&out),
        [
            "Creating table 'sbtest1'...",
            "Creating a secondary index on 'sbtest1'..."
        ]
    );
    assert_eq!(count(&raw(&dir), "SELECT COUNT(*) FROM sbtest1"), 0);
    let w = Arc::new(Oltp::new(spec, Arc::new(d), 5).unwrap());
    let cfg = RunConfig {
        threads: 2,
        time_limit: None,
        event_limit: 200,
        ..RunConfig::default()
    };
    run(w, &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    assert_eq!(
        count(&raw(&dir), "SELECT COUNT(DISTINCT id) FROM sbtest1"),
        200
    );
}

#[test]
fn read_write_on_sqlite_counts_exactly_per_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let d = Arc::new(db(&dir));
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.tables = 2;
    spec.table_size = 1000;
    prepare(d.as_ref(), &spec, 2, 1, &mut Vec::new()).unwrap();
    let w = Arc::new(Oltp::new(spec, d.clone(), 1).unwrap());
    let cfg = RunConfig {
        threads: 2,
        time_limit: None,
        event_limit: 200,
        seed: 9,
        ..RunConfig::default()
    };
    let out = run(w, &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    let mut c = vec![0u64; COUNTERS.len()];
    for t in &out.threads {
        for (i, v) in t.counters.iter().enumerate() {
            c[i] += v;
        }
    }
    let n = c[TRANSACTIONS];
    assert_eq!(n, 200);
    // Retried attempts are not counted, so the ratios hold whatever the lock waits did.
    assert_eq!(
        (c[READS], c[WRITES], c[OTHER]),
        (14 * n, 4 * n, 2 * n),
        "{c:?}"
    );
    assert_eq!(
        c[IGNORED_ERRORS], 0,
        "BEGIN IMMEDIATE waits instead of failing"
    );
    let r = raw(&dir);
    // Each delete is followed by the insert of the same id: the row count stays.
    assert_eq!(count(&r, "SELECT COUNT(*) FROM sbtest1"), 1000);
    assert_eq!(count(&r, "SELECT COUNT(*) FROM sbtest2"), 1000);
}

#[test]
fn every_test_runs_on_sqlite() {
    for test in Test::ALL {
        let dir = tempfile::tempdir().unwrap();
        let d = Arc::new(db(&dir));
        let mut spec = OltpSpec::new(test);
        spec.table_size = 500;
        prepare(d.as_ref(), &spec, 2, 1, &mut Vec::new()).unwrap();
        let w = Arc::new(Oltp::new(spec.clone(), d.clone(), 1).unwrap());
        let cfg = RunConfig {
            threads: 2,
            time_limit: None,
            event_limit: 50,
            ..RunConfig::default()
        };
        let out = run(w, &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
        let tx: u64 = out.threads.iter().map(|t| t.counters[TRANSACTIONS]).sum();
        assert_eq!(tx, 50, "{}", test.name());
        cleanup(d.as_ref(), &spec, 2, None, &mut Vec::new()).unwrap();
        assert_eq!(
            count(
                &raw(&dir),
                "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sbtest%'"
            ),
            0,
            "{}",
            test.name()
        );
    }
}

#[test]
fn busy_database_is_an_ignorable_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = SqliteOptions::new(dir.path().join("sbtest.db"));
    o.busy_timeout = Duration::from_millis(20);
    let d = SqliteDriver::new(o).unwrap();
    let mut a = d.connect().unwrap();
    let mut b = d.connect().unwrap();
    a.execute_plain("CREATE TABLE t(x INTEGER)", &[]).unwrap();
    a.begin(TxIntent::Write).unwrap();
    let e = b.begin(TxIntent::Write).unwrap_err();
    assert_eq!(e.class, ErrorClass::Ignorable, "{e}");
    assert!(e.message.contains("locked"), "{e}");
    a.rollback().unwrap();
    // Nothing open: rollback is a no-op, not an error.
    b.rollback().unwrap();
    let e = b.execute_plain("SELECT nope FROM t", &[]).unwrap_err();
    assert_eq!(e.class, ErrorClass::Fatal);
    assert!(e.message.contains("no such column"), "{e}");
}

#[test]
fn outcomes_classify_reads_writes_and_other() {
    let dir = tempfile::tempdir().unwrap();
    let d = db(&dir);
    let mut c = d.connect().unwrap();
    assert_eq!(
        c.execute_plain("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)", &[])
            .unwrap(),
        Outcome::Changed(0)
    );
    let ins = c.prepare("INSERT INTO t(id, v) VALUES (?, ?)").unwrap();
    for i in 1..=3 {
        assert_eq!(
            c.execute(ins, &[Value::Int(i), Value::Text("x")]).unwrap(),
            Outcome::Changed(1)
        );
    }
    c.begin(TxIntent::Read).unwrap();
    let sel = c
        .prepare("SELECT v FROM t WHERE id BETWEEN ? AND ?")
        .unwrap();
    assert_eq!(
        c.execute(sel, &[Value::Int(2), Value::Int(10)]).unwrap(),
        Outcome::Rows(2)
    );
    assert_eq!(
        c.execute(sel, &[Value::Int(20), Value::Int(30)]).unwrap(),
        Outcome::Rows(0)
    );
    c.commit().unwrap();
    let del = c.prepare("DELETE FROM t WHERE id=?").unwrap();
    assert_eq!(
        c.execute(del, &[Value::Int(99)]).unwrap(),
        Outcome::Changed(0)
    );
    // A statement after a write does not inherit the write's change count.
    assert_eq!(
        c.execute(ins, &[Value::Int(4), Value::Text("y")]).unwrap(),
        Outcome::Changed(1)
    );
    assert_eq!(
        c.execute_plain("DROP TABLE t", &[]).unwrap(),
        Outcome::Changed(0)
    );
    assert!(c.execute(sel, &[Value::Int(1)]).is_err());
}

#[test]
fn settings_are_read_back_from_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = SqliteOptions::new(dir.path().join("sbtest.db"));
    o.synchronous = Some("normal".into());
    o.page_size = Some(8192);
    o.cache_size = Some(-4096);
    let d = SqliteDriver::new(o).unwrap();
    let s = d.settings().unwrap();
    assert_eq!(s.journal_mode, "wal");
    assert_eq!(s.synchronous, "normal");
    assert_eq!(s.page_size_bytes, 8192);
    assert_eq!(s.cache_size, -4096);
    assert_eq!(s.begin_for_writes, "BEGIN IMMEDIATE");
    assert!(s.sqlite_version.starts_with('3'));
    let json = serde_json::to_value(crate::settings::DatabaseSettings::Sqlite(s)).unwrap();
    assert_eq!(json["driver"], "sqlite");

    let mut bad = SqliteOptions::new(dir.path().join("x.db"));
    bad.journal_mode = "fast".into();
    let e = SqliteDriver::new(bad).err().unwrap();
    assert!(e.to_string().starts_with("journal mode:"), "{e}");
}

#[test]
fn a_column_is_read_back_as_text() {
    let d = tempfile::tempdir().unwrap();
    let drv = SqliteDriver::new(SqliteOptions::new(d.path().join("c.db"))).unwrap();
    let mut c = drv.connect().unwrap();
    c.execute_plain("CREATE TABLE t1 (id INTEGER PRIMARY KEY, v TEXT)", &[])
        .unwrap();
    c.execute_plain("INSERT INTO t1 VALUES (NULL, 'a'), (NULL, NULL)", &[])
        .unwrap();
    let mut got = Vec::new();
    let n = c
        .column("SELECT id FROM t1", &mut |s| got.push(s.to_string()))
        .unwrap();
    assert_eq!((n, got), (2, vec!["1".to_string(), "2".to_string()]));
    let mut got = Vec::new();
    c.column("SELECT v FROM t1", &mut |s| got.push(s.to_string()))
        .unwrap();
    assert_eq!(got, ["a", "NULL"]);
}

#[test]
fn the_run_s_check_reads_the_tables_the_test_reads() {
    use crate::error::OltpError;
    use crate::prepare::check_prepared;
    let dir = tempfile::tempdir().unwrap();
    let d = db(&dir);
    let mut spec = OltpSpec::new(Test::SelectRandomPoints);
    spec.table_size = 100;
    prepare(&d, &spec, 1, 3, &mut Vec::new()).unwrap();
    let mut conn = d.connect().unwrap();
    // select_random_* read sbtest1 alone, whatever --tables says.
    spec.tables = 4;
    check_prepared(&mut *conn, &spec, Dialect::Sqlite).unwrap();
    // The others read every table: each statement that names the missing sbtest2 is
    // refused, in the order sysbench's scripts prepare them.
    let mut rw = OltpSpec::new(Test::OltpReadWrite);
    rw.tables = 2;
    rw.table_size = 100;
    match check_prepared(&mut *conn, &rw, Dialect::Sqlite) {
        Err(OltpError::Unprepared {
            tables: 2, refused, ..
        }) => {
            assert_eq!(refused.len(), 9, "{refused:?}");
            assert!(refused.iter().all(|e| e.message.contains("sbtest2")));
        }
        other => panic!("{other:?}"),
    }
    rw.tables = 1;
    check_prepared(&mut *conn, &rw, Dialect::Sqlite).unwrap();
    // Nothing there: every statement on every table, each kind on all tables in turn.
    let empty = tempfile::tempdir().unwrap();
    let mut conn = db(&empty).connect().unwrap();
    rw.tables = 2;
    match check_prepared(&mut *conn, &rw, Dialect::Sqlite) {
        Err(OltpError::Unprepared { refused, .. }) => {
            let tables: Vec<bool> = refused
                .iter()
                .map(|e| e.message.contains("sbtest1"))
                .collect();
            assert_eq!(tables, [true, false].repeat(9), "{refused:?}");
        }
        other => panic!("{other:?}"),
    }
}
