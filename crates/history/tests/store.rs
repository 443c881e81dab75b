//! The history database: storing, listing, filters, tags, baselines, concurrency, damage.

mod support;

use plumb_history::{Filter, HistoryError, RunRef, Store, SweepPoint};
use support::cpu_record;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("sub/history.db")).unwrap();
    (dir, s)
}

#[test]
fn a_run_round_trips_and_lists_its_key_figures() {
    let (_d, mut s) = store();
    let r = cpu_record(1_700_000_000, 2000, &[100, 110, 90], 1_000_000);
    let id = s.add(&r, &["first".into()], None).unwrap();
    assert_eq!(s.record(id).unwrap(), r, "the whole record comes back");
    let l = s.list(&Filter::default()).unwrap();
    assert_eq!(l.len(), 1);
    let run = &l[0];
    assert_eq!(run.id, id);
    assert_eq!(run.test, "cpu");
    assert_eq!(run.front_end, "sysbench");
    assert_eq!(run.events, 300);
    assert_eq!(run.events_per_s, 100.0);
    assert_eq!(run.duration_s, 3.0);
    assert_eq!(run.threads, 1);
    assert_eq!(run.status, "completed");
    assert_eq!(run.tags, vec!["first".to_string()]);
    assert_eq!(run.sweep_id, None);
    let p95 = run.latency_p95_ns.unwrap();
    assert!((999_000..=1_001_000).contains(&p95), "{p95}");
    assert_eq!(
        run.command_line,
        vec!["plumb", "cpu", "--cpu-max-prime=2000", "run"]
    );
}

#[test]
fn newest_first_with_filters_and_a_limit() {
    let (_d, mut s) = store();
    let ids: Vec<i64> = (0..5)
        .map(|i| {
            let r = cpu_record(1_000 + i * 100, 2000, &[10], 1000);
            let tags: Vec<String> = if i % 2 == 0 {
                vec!["even".into()]
            } else {
                vec![]
            };
            s.add(&r, &tags, (i == 4).then_some(7)).unwrap()
        })
        .collect();
    let all: Vec<i64> = s
        .list(&Filter::default())
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(all, ids.iter().rev().copied().collect::<Vec<_>>());
    let f = |f: Filter| -> Vec<i64> { s.list(&f).unwrap().iter().map(|r| r.id).collect() };
    assert_eq!(
        f(Filter {
            tags: vec!["even".into()],
            ..Default::default()
        }),
        vec![ids[4], ids[2], ids[0]]
    );
    assert_eq!(
        f(Filter {
            since: Some(1_100),
            until: Some(1_300),
            ..Default::default()
        }),
        vec![ids[2], ids[1]],
        "since inclusive, until exclusive"
    );
    assert_eq!(
        f(Filter {
            limit: Some(2),
            ..Default::default()
        }),
        vec![ids[4], ids[3]]
    );
    for name in ["cpu", "sysbench"] {
        assert_eq!(
            f(Filter {
                test: Some(name.into()),
                ..Default::default()
            })
            .len(),
            5,
            "{name}"
        );
    }
    assert!(f(Filter {
        test: Some("fileio".into()),
        ..Default::default()
    })
    .is_empty());
    assert!(f(Filter {
        host: Some("elsewhere".into()),
        ..Default::default()
    })
    .is_empty());
    assert_eq!(
        s.count(&Filter {
            limit: Some(1),
            ..Default::default()
        })
        .unwrap(),
        5
    );
    assert_eq!(s.summary(ids[4]).unwrap().sweep_id, Some(7));
}

#[test]
fn a_sweep_keeps_its_runs_under_one_id_with_their_points() {
    let (_d, mut s) = store();
    let a = s.new_sweep(1_000, "command = \"cpu run\"").unwrap();
    let b = s.new_sweep(1_001, "command = \"cpu run\"").unwrap();
    assert_ne!(a, b);
    let mut ids = Vec::new();
    for (i, sweep) in [(1, a), (2, a), (1, b)] {
        let point = SweepPoint {
            sweep,
            index: i,
            repeat: 1,
            values: format!("threads={i}"),
        };
        ids.push(
            s.add_point(
                &cpu_record(2_000 + i as u64, 2000, &[10], 1000),
                &[],
                &point,
            )
            .unwrap(),
        );
    }
    s.add(&cpu_record(3_000, 2000, &[10], 1000), &[], None)
        .unwrap();
    let of_a = s
        .list(&Filter {
            sweep: Some(a),
            ..Default::default()
        })
        .unwrap();
    let got: Vec<(i64, Option<i64>, Option<&str>)> = of_a
        .iter()
        .map(|r| (r.id, r.sweep_id, r.sweep_point.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (ids[1], Some(a), Some("threads=2")),
            (ids[0], Some(a), Some("threads=1"))
        ]
    );
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 4);
}

#[test]
fn credentials_are_masked_when_stored() {
    let (_d, mut s) = store();
    let mut r = cpu_record(1, 2000, &[1], 1000);
    r.command_line.push("--mysql-password=hunter2".into());
    r.command_line.push("--pgsql-password".into());
    r.command_line.push("hunter3".into());
    let id = s.add(&r, &[], None).unwrap();
    let listed = format!("{:?}", s.list(&Filter::default()).unwrap());
    let stored = s.record(id).unwrap().to_json();
    for text in [&listed, &stored] {
        assert!(
            !text.contains("hunter2") && !text.contains("hunter3"),
            "{text}"
        );
        assert!(text.contains("--mysql-password=***"), "{text}");
    }
}

#[test]
fn tags_name_their_newest_run_and_baselines_one_run() {
    let (_d, mut s) = store();
    let old = s.add(&cpu_record(100, 2000, &[1], 1), &[], None).unwrap();
    let new = s.add(&cpu_record(200, 2000, &[1], 1), &[], None).unwrap();
    assert!(s.tag(old, "ssd").unwrap());
    assert!(!s.tag(old, "ssd").unwrap(), "already tagged");
    assert_eq!(s.resolve(&RunRef::Tag("ssd".into())).unwrap(), old);
    s.tag(new, "ssd").unwrap();
    assert_eq!(s.resolve(&RunRef::Tag("ssd".into())).unwrap(), new);
    assert_eq!(s.resolve(&RunRef::Id(old)).unwrap(), old);

    assert_eq!(s.set_baseline("before", old).unwrap(), None);
    assert_eq!(s.set_baseline("before", new).unwrap(), Some(old));
    assert_eq!(s.resolve(&RunRef::Baseline("before".into())).unwrap(), new);
    let b = s.baselines().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].name.as_str(), b[0].run_id), ("before", new));

    assert!(matches!(
        s.resolve(&RunRef::Id(999)),
        Err(HistoryError::NoRun(999))
    ));
    assert!(matches!(
        s.resolve(&RunRef::Tag("nope".into())),
        Err(HistoryError::NoTag(_))
    ));
    assert!(matches!(
        s.resolve(&RunRef::Baseline("nope".into())),
        Err(HistoryError::NoBaseline(_))
    ));
    assert!(matches!(s.tag(999, "x"), Err(HistoryError::NoRun(999))));
    assert!(matches!(s.tag(old, "42"), Err(HistoryError::Name(_))));
    assert!(matches!(
        s.add(&cpu_record(1, 1, &[1], 1), &["a b".into()], None),
        Err(HistoryError::Name(_))
    ));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&path).unwrap();
                for i in 0..25 {
                    s.add(&cpu_record(t * 1000 + i, 2000, &[5, 6], 1000), &[], None)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.count(&Filter::default()).unwrap(), 100);
}

#[test]
fn a_damaged_or_newer_database_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 8192]).unwrap();
    let e = Store::open(&junk).err().unwrap().to_string();
    assert!(e.contains("junk.db"), "{e}");

    let newer = dir.path().join("newer.db");
    drop(Store::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let e = Store::open(&newer).err().unwrap().to_string();
    assert!(
        e.contains("newer.db") && e.contains("version 99") && e.contains("up to 3"),
        "{e}"
    );

    // A directory that cannot be made: a file stands in its way.
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "").unwrap();
    let e = Store::open(&blocked.join("sub/history.db"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("cannot create"), "{e}");
}
