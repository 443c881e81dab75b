//! The workloads' statement sequences, counts and error handling, through the logging driver.

use std::sync::Arc;

use plumb_core::harness::HarnessError;
use plumb_core::{run, RunConfig, RunOutcome, StopFlag};

use crate::driver::{Dialect, ErrorClass};
use crate::prepare::BULK_PACKET_SIZE;
use crate::spec::{OltpSpec, Test};
use crate::statements::Stmt;
use crate::testdriver::{LogDriver, P};
use crate::workload::*;

fn config(threads: usize, events: u64) -> RunConfig {
    RunConfig {
        threads,
        time_limit: None,
        event_limit: events,
        seed: 1,
        ..RunConfig::default()
    }
}

fn go(spec: OltpSpec, d: &Arc<LogDriver>, threads: usize, events: u64) -> (Oltp, RunOutcome) {
    let w = Oltp::new(spec, d.clone(), 1).unwrap();
    let arc: Arc<Oltp> = Arc::new(Oltp::new(w.spec().clone(), d.clone(), 1).unwrap());
    let out = run(
        arc,
        &config(threads, events),
        &StopFlag::default(),
        &mut |_| {},
    )
    .unwrap();
    (w, out)
}

fn counters(out: &RunOutcome) -> Vec<u64> {
    let mut c = vec![0; COUNTERS.len()];
    for t in &out.threads {
        for (i, v) in t.counters.iter().enumerate() {
            c[i] += v;
        }
    }
    c
}

fn kind_count(w: &Oltp, out: &RunOutcome, s: Stmt) -> u64 {
    let k = w.kind_of(s).unwrap();
    out.threads.iter().map(|t| t.kinds[k].count()).sum()
}

fn driver() -> Arc<LogDriver> {
    Arc::new(LogDriver::new(Dialect::Sqlite))
}

/// One event's SQL for the common tests on one table.
fn sequence(test: Test) -> Vec<String> {
    let spec = OltpSpec::new(test);
    let sql = |s: Stmt| s.table_sql(1).unwrap();
    let mut v = Vec::new();
    let reads = matches!(test, Test::OltpReadWrite | Test::OltpReadOnly);
    let writes = matches!(test, Test::OltpReadWrite | Test::OltpWriteOnly);
    if reads || writes {
        v.push(if writes { "BEGIN WRITE" } else { "BEGIN" }.to_string());
    }
    if reads {
        v.extend((0..spec.point_selects).map(|_| sql(Stmt::PointSelect)));
        for s in [
            Stmt::SimpleRange,
            Stmt::SumRange,
            Stmt::OrderRange,
            Stmt::DistinctRange,
        ] {
            v.push(sql(s));
        }
    }
    if writes {
        for s in [
            Stmt::IndexUpdate,
            Stmt::NonIndexUpdate,
            Stmt::Delete,
            Stmt::Insert,
        ] {
            v.push(sql(s));
        }
    }
    if reads || writes {
        v.push("COMMIT".to_string());
    }
    match test {
        Test::OltpPointSelect => v.push(sql(Stmt::PointSelect)),
        Test::OltpUpdateIndex => v.push(sql(Stmt::IndexUpdate)),
        Test::OltpUpdateNonIndex => v.push(sql(Stmt::NonIndexUpdate)),
        Test::OltpDelete => v.push(sql(Stmt::Delete)),
        _ => {}
    }
    v
}

#[test]
fn each_test_runs_the_reference_sequence_and_counts() {
    // (test, reads, writes, other) per event, from the reference's table.
    let cases = [
        (Test::OltpReadWrite, 14, 4, 2),
        (Test::OltpReadOnly, 14, 0, 2),
        (Test::OltpWriteOnly, 0, 4, 2),
        (Test::OltpPointSelect, 1, 0, 0),
        (Test::OltpUpdateIndex, 0, 1, 0),
        (Test::OltpUpdateNonIndex, 0, 1, 0),
        (Test::OltpDelete, 0, 1, 0),
    ];
    for (test, r, w, o) in cases {
        let d = driver();
        let (_, out) = go(OltpSpec::new(test), &d, 1, 100);
        let one = sequence(test);
        let want: Vec<String> = (0..100).flat_map(|_| one.clone()).collect();
        assert_eq!(d.sql(), want, "{}", test.name());
        let c = counters(&out);
        assert_eq!(
            &c[..5],
            &[100 * r, 100 * w, 100 * o, 100, 0],
            "{}",
            test.name()
        );
    }
}

#[test]
fn repeat_counts_and_switches_change_the_sequence() {
    let d = driver();
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.point_selects = 3;
    spec.range_selects = false;
    spec.index_updates = 2;
    spec.non_index_updates = 0;
    spec.delete_inserts = 2;
    spec.skip_trx = true;
    let (_, out) = go(spec, &d, 1, 10);
    let s = |k: Stmt| k.table_sql(1).unwrap();
    let one = vec![
        s(Stmt::PointSelect),
        s(Stmt::PointSelect),
        s(Stmt::PointSelect),
        s(Stmt::IndexUpdate),
        s(Stmt::IndexUpdate),
        s(Stmt::Delete),
        s(Stmt::Insert),
        s(Stmt::Delete),
        s(Stmt::Insert),
    ];
    let want: Vec<String> = (0..10).flat_map(|_| one.clone()).collect();
    assert_eq!(d.sql(), want);
    assert_eq!(&counters(&out)[..4], &[30, 60, 0, 10]);
}

#[test]
fn point_select_test_forces_one_select() {
    let d = driver();
    let mut spec = OltpSpec::new(Test::OltpPointSelect);
    spec.point_selects = 7;
    go(spec, &d, 1, 5);
    assert_eq!(d.sql().len(), 5);
}

#[test]
fn parameters_follow_oltp_common() {
    let d = driver();
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.table_size = 1000;
    spec.rand_type = plumb_core::random::RandType::Uniform;
    go(spec, &d, 1, 50);
    let log = d.log();
    for (i, e) in log.iter().enumerate() {
        let ints: Vec<i64> = e
            .params
            .iter()
            .filter_map(|p| match p {
                P::I(v) => Some(*v),
                P::T(_) => None,
            })
            .collect();
        if e.sql.contains("BETWEEN") {
            assert_eq!(ints[1], ints[0] + 99, "{}", e.sql);
            assert!((1..=1000).contains(&ints[0]));
        } else if e.sql.starts_with("DELETE") {
            let next = &log[i + 1];
            assert!(next.sql.starts_with("INSERT"));
            assert_eq!(
                next.params[0],
                P::I(ints[0]),
                "insert reuses the deleted id"
            );
            let (P::T(c), P::T(pad)) = (&next.params[2], &next.params[3]) else {
                panic!("c and pad are text")
            };
            assert_eq!((c.len(), pad.len()), (119, 59));
        } else if e.sql.starts_with("UPDATE sbtest1 SET c=") {
            let P::T(c) = &e.params[0] else {
                panic!("c is text")
            };
            assert_eq!(c.split('-').count(), 10);
        }
        for v in ints {
            assert!((1..=1000 + 99).contains(&v), "{v} in {}", e.sql);
        }
    }
}

#[test]
fn each_group_picks_its_own_table() {
    let d = driver();
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.tables = 4;
    go(spec, &d, 1, 200);
    let table = |sql: &str| {
        let i = sql.find("sbtest").unwrap() + 6;
        sql[i..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
    };
    let sql = d.sql();
    let mut seen = std::collections::BTreeSet::new();
    let mut mixed_event = false;
    for ev in sql.split(|s| s == "COMMIT") {
        let stmts: Vec<&String> = ev.iter().filter(|s| s.contains("sbtest")).collect();
        if stmts.is_empty() {
            continue;
        }
        // The ten point selects share a table, as do a delete and its insert.
        let points: Vec<String> = stmts[..10].iter().map(|s| table(s)).collect();
        assert!(points.iter().all(|t| *t == points[0]));
        assert_eq!(table(stmts[16]), table(stmts[17]));
        let tables: std::collections::BTreeSet<String> = stmts.iter().map(|s| table(s)).collect();
        mixed_event |= tables.len() > 1;
        seen.extend(tables);
    }
    assert_eq!(seen.len(), 4);
    assert!(mixed_event, "groups choose tables independently");
}

#[test]
fn prepared_statements_per_connection() {
    for (test, per_table, range_selects) in [
        (Test::OltpReadWrite, 9, true),
        (Test::OltpReadWrite, 5, false),
        (Test::OltpReadOnly, 5, true),
        (Test::OltpWriteOnly, 4, true),
        (Test::OltpPointSelect, 1, true),
        (Test::OltpInsert, 0, true),
    ] {
        let d = driver();
        let mut spec = OltpSpec::new(test);
        spec.tables = 3;
        spec.range_selects = range_selects;
        go(spec, &d, 2, 4);
        let prepared = d.shared.prepared.lock().unwrap().clone();
        assert_eq!(prepared, vec![per_table * 3; 2], "{}", test.name());
    }
}

#[test]
fn ignorable_error_rolls_back_and_retries_without_counting_the_attempt() {
    let d = driver();
    // Operation 5: BEGIN, three point selects, then the fourth fails.
    d.fail_at(5, ErrorClass::Ignorable);
    let (w, out) = go(OltpSpec::new(Test::OltpReadWrite), &d, 1, 1);
    let sql = d.sql();
    assert_eq!(sql[0], "BEGIN WRITE");
    assert!(sql[4].starts_with("FAIL SELECT c FROM sbtest1 WHERE id=?"));
    assert_eq!(sql[5], "ROLLBACK");
    assert_eq!(sql[6..], sequence(Test::OltpReadWrite)[..]);
    assert_eq!(counters(&out), vec![14, 4, 2, 1, 1, 0]);
    assert_eq!(kind_count(&w, &out, Stmt::PointSelect), 10);
    assert_eq!(kind_count(&w, &out, Stmt::Begin), 1);
}

#[test]
fn autocommit_statements_before_an_ignorable_error_stay_counted() {
    let d = driver();
    let mut spec = OltpSpec::new(Test::OltpReadWrite);
    spec.skip_trx = true;
    d.fail_at(3, ErrorClass::Ignorable);
    let (w, out) = go(spec, &d, 1, 1);
    let sql = d.sql();
    assert!(sql[2].starts_with("FAIL"));
    assert!(!sql.contains(&"ROLLBACK".to_string()));
    // Two committed point selects, then the whole event again.
    assert_eq!(counters(&out), vec![16, 4, 0, 1, 1, 0]);
    assert_eq!(kind_count(&w, &out, Stmt::PointSelect), 12);
}

#[test]
fn lost_connection_reconnects_prepares_again_and_counts() {
    let d = driver();
    d.fail_at(2, ErrorClass::Reconnect);
    let mut spec = OltpSpec::new(Test::OltpReadOnly);
    spec.tables = 2;
    let (_, out) = go(spec, &d, 1, 2);
    assert_eq!(
        d.shared.connects.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
    assert_eq!(d.shared.prepared.lock().unwrap().clone(), vec![10, 10]);
    let log = d.log();
    assert!(log[1].failed);
    assert!(
        log[2..].iter().all(|e| e.conn == 1),
        "the rest ran on the new connection"
    );
    assert!(
        !d.sql().contains(&"ROLLBACK".to_string()),
        "no rollback on a dead connection"
    );
    assert_eq!(counters(&out), vec![28, 0, 4, 2, 0, 1]);
}

#[test]
fn fatal_error_stops_with_one_line_naming_the_statement() {
    let d = driver();
    d.fail_at(12, ErrorClass::Fatal);
    let w = Arc::new(Oltp::new(OltpSpec::new(Test::OltpReadWrite), d.clone(), 1).unwrap());
    let e = run(w, &config(1, 10), &StopFlag::default(), &mut |_| {}).unwrap_err();
    // The worker failed after the start: the harness keeps what was measured until then.
    let HarnessError::Failed { error: e, .. } = e else {
        panic!("a worker failure, got {e}")
    };
    // Operation 12: BEGIN, 10 point selects, then the simple range.
    assert_eq!(
        e.to_string(),
        "simple range select on sbtest1: injected failure"
    );
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn writes_that_change_nothing_count_as_other() {
    let d = driver();
    d.shared
        .changed
        .store(0, std::sync::atomic::Ordering::SeqCst);
    let (_, out) = go(OltpSpec::new(Test::OltpDelete), &d, 1, 20);
    assert_eq!(&counters(&out)[..4], &[0, 0, 20, 20]);
}

#[test]
fn oltp_insert_sends_plain_inserts_in_the_dialect_s_form() {
    let d = driver();
    go(OltpSpec::new(Test::OltpInsert), &d, 1, 3);
    for s in d.sql() {
        assert!(
            s.starts_with("INSERT INTO sbtest1 (k, c, pad) VALUES ("),
            "{s}"
        );
    }
    let d = Arc::new(LogDriver::new(Dialect::Mysql));
    go(OltpSpec::new(Test::OltpInsert), &d, 1, 3);
    for s in d.sql() {
        assert!(
            s.starts_with("INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, "),
            "{s}"
        );
    }
    let d = driver();
    let mut spec = OltpSpec::new(Test::OltpInsert);
    spec.auto_inc = false;
    go(spec, &d, 2, 50);
    let ids: std::collections::HashSet<String> = d
        .sql()
        .iter()
        .map(|s| {
            let v = s.split("VALUES (").nth(1).unwrap();
            v.split(',').next().unwrap().to_string()
        })
        .collect();
    assert_eq!(ids.len(), 50, "client-side ids never repeat");
    for id in ids {
        let v: i64 = id.parse().unwrap();
        assert!((i32::MIN as i64..=i32::MAX as i64).contains(&v));
    }
}

#[test]
fn bulk_insert_appends_rows_and_flushes_a_full_buffer() {
    let d = driver();
    let (_, out) = go(OltpSpec::new(Test::BulkInsert), &d, 1, 100);
    let sql = d.sql();
    assert_eq!(sql.len(), 1, "flushed once, at the end");
    let want: String = (1..=100)
        .map(|n| format!("({n},{n})"))
        .collect::<Vec<_>>()
        .join(",");
    assert_eq!(sql[0], format!("INSERT INTO sbtest1 VALUES{want}"));
    assert_eq!(&counters(&out)[..4], &[0, 1, 0, 100]);

    let d = driver();
    go(OltpSpec::new(Test::BulkInsert), &d, 2, 100_000);
    let sql = d.sql();
    assert!(sql.len() >= 3);
    let log = d.log();
    for (e, s) in log.iter().zip(&sql) {
        assert!(s.len() < BULK_PACKET_SIZE);
        assert!(s.starts_with(&format!("INSERT INTO sbtest{} VALUES(", e.conn + 1)));
    }
    // A statement sent before the end was full: the next row would not have fitted.
    let first = &sql[0];
    let rows = first.matches('(').count();
    let next_row = format!(",({n},{n})", n = rows + 1);
    assert!(first.len() + next_row.len() + 1 > BULK_PACKET_SIZE);
}

/// A statement with its line breaks and indentation folded to single spaces.
fn flat(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn select_random_tests_use_their_thread_s_slice() {
    let d = driver();
    let mut spec = OltpSpec::new(Test::SelectRandomPoints);
    spec.table_size = 1000;
    go(spec, &d, 2, 40);
    let sql = d.sql();
    assert!(flat(&sql[0]).starts_with("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?"));
    for e in d.log() {
        assert_eq!(e.params.len(), 10);
        let (lo, hi) = if e.conn == 0 { (0, 500) } else { (500, 1000) };
        for p in e.params {
            let P::I(v) = p else { panic!("ints") };
            assert!(
                (lo..=hi).contains(&v),
                "{v} outside thread {}'s slice",
                e.conn
            );
        }
    }
    let d = driver();
    let mut spec = OltpSpec::new(Test::SelectRandomRanges);
    spec.number_of_ranges = 3;
    go(spec, &d, 1, 5);
    for e in d.log() {
        assert_eq!(
            flat(&e.sql),
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
        for pair in e.params.chunks(2) {
            let (P::I(a), P::I(b)) = (&pair[0], &pair[1]) else {
                panic!("ints")
            };
            assert_eq!(*b, a + 5);
        }
    }
}

#[test]
fn kinds_name_the_statements_the_test_runs() {
    let w = Oltp::new(OltpSpec::new(Test::OltpReadOnly), driver(), 1).unwrap();
    let names: Vec<&str> = plumb_core::Workload::kinds(&w)
        .iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(
        names,
        [
            "transaction",
            "point_select",
            "simple_range",
            "sum_range",
            "order_range",
            "distinct_range",
            "begin",
            "commit"
        ]
    );
    assert!(plumb_core::Workload::kinds(&w)[0].is_event);
    assert!(plumb_core::Workload::kinds(&w)[1..]
        .iter()
        .all(|k| !k.is_event));
}

#[test]
fn run_refuses_empty_tables() {
    let mut spec = OltpSpec::new(Test::OltpPointSelect);
    spec.table_size = 0;
    let e = Oltp::new(spec, driver(), 1).err().unwrap();
    assert!(e.to_string().starts_with("table size:"), "{e}");
}

#[test]
fn select_random_tests_touch_sbtest1_alone_whatever_the_table_count() {
    for test in [Test::SelectRandomPoints, Test::SelectRandomRanges] {
        let d = driver();
        let mut spec = OltpSpec::new(test);
        spec.tables = 4;
        spec.table_size = 100;
        go(spec, &d, 2, 20);
        // One statement per connection, and every one that ran reads sbtest1.
        assert_eq!(*d.shared.prepared.lock().unwrap(), [1, 1], "{test:?}");
        let sql = d.sql();
        assert_eq!(sql.len(), 20, "{test:?}");
        assert!(
            sql.iter().all(|s| flat(s).contains("FROM sbtest1 WHERE")),
            "{sql:?}"
        );
    }
}
