//! Issue 10's history targets: storing a 10-minute run with 1 s intervals (< 5 ms), and
//! listing over 10 000 stored runs (< 200 ms for `plumb history`). The 10 000-run database
//! is left at target/plumb-bench-history/history.db, so the command itself can be timed
//! with PLUMB_HOME pointing there (see docs/performance.md).

#[path = "../tests/support/mod.rs"]
mod support;

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use plumb_history::{Filter, Store};

fn home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/plumb-bench-history")
}

fn scale(c: &mut Criterion) {
    let dir = home();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = Store::open(&dir.join("history.db")).unwrap();
    // 600 one-second intervals: a 10-minute run.
    let ten_minutes = support::cpu_record(1_700_000_000, 2000, &[1000; 600], 1_000_000);
    c.bench_function("store_10_minute_run", |b| {
        b.iter(|| s.add(black_box(&ten_minutes), &[], None).unwrap())
    });
    let have = s.list(&Filter::default()).unwrap().len();
    let short = support::cpu_record(1_700_000_000, 2000, &[1000; 10], 1_000_000);
    for _ in have..10_000 {
        s.add(&short, &[], None).unwrap();
    }
    c.bench_function("list_newest_20_of_10000", |b| {
        b.iter(|| {
            s.list(black_box(&Filter {
                limit: Some(20),
                ..Default::default()
            }))
            .unwrap()
        })
    });
    c.bench_function("list_all_10000", |b| {
        b.iter(|| s.list(black_box(&Filter::default())).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = scale
}
criterion_main!(benches);
