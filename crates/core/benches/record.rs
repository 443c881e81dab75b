//! Cost of recording one latency sample: a clock read plus a histogram record, the work the
//! harness adds to every operation. Target: at most 25 ns.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use plumb_core::clock::{self, Stamp};
use plumb_core::stats::LiveHistogram;

fn record(c: &mut Criterion) {
    let h = LiveHistogram::new();
    c.bench_function("clock_read", |b| b.iter(|| black_box(Instant::now())));
    c.bench_function("histogram_record", |b| {
        let mut v = 1000u64;
        b.iter(|| {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            h.record(black_box(v >> 44));
        })
    });
    c.bench_function("clock_read_plus_record", |b| {
        let mut last = Instant::now();
        b.iter(|| {
            let now = Instant::now();
            h.record(now.saturating_duration_since(last).as_nanos() as u64);
            last = now;
        })
    });
}

/// The hot path as workers use it: plumb's clock (TSC where the kernel trusts it) + record.
fn stamp(c: &mut Criterion) {
    clock::init();
    let h = LiveHistogram::new();
    c.bench_function(&format!("stamp_read_{}", clock::source()), |b| {
        b.iter(|| black_box(Stamp::now()))
    });
    c.bench_function(
        &format!("stamp_read_plus_record_{}", clock::source()),
        |b| {
            let mut last = Stamp::now();
            b.iter(|| {
                let now = Stamp::now();
                h.record(now.ns_since(last));
                last = now;
            })
        },
    );
}

criterion_group!(benches, record, stamp);
criterion_main!(benches);
