//! Records made by hand: a cpu job with the interval series a test needs.
#![allow(dead_code)]

use plumb_core::result::{IntervalResult, RunResult, RunSettings};
use plumb_core::stats::{Histogram, SparseHistogram};
use plumb_core::RunConfig;
use plumb_micro::settings::CpuSettings;
use plumb_pipeline::{GroupRecord, JobRecord, Record, Settings};

/// A one-job cpu record started at `at`, whose 1 s intervals saw `per_interval` events each
/// (every event taking `latency_ns`).
pub fn cpu_record(at: u64, prime: u64, per_interval: &[u64], latency_ns: u64) -> Record {
    let mut r = Record::new(
        "sysbench",
        vec![
            "plumb".into(),
            "cpu".into(),
            format!("--cpu-max-prime={prime}"),
            "run".into(),
        ],
        at,
    );
    let mut result = RunResult::empty();
    let events: u64 = per_interval.iter().sum();
    result.events = events;
    result.total_time_s = per_interval.len() as f64;
    result.events_per_s = events as f64 / result.total_time_s.max(1e-9);
    result.stop_reason = "time".into();
    result.intervals = per_interval
        .iter()
        .enumerate()
        .map(|(i, &e)| IntervalResult {
            at_s: (i + 1) as f64,
            length_s: 1.0,
            warmup: false,
            threads_running: 1,
            events: e,
            events_per_s: e as f64,
            operations: [("event".to_string(), e)].into_iter().collect(),
            counters: Default::default(),
            latency_percentiles: Vec::new(),
            backlog_events: None,
            concurrency: None,
        })
        .collect();
    let mut h = Histogram::new();
    for _ in 0..events.min(10_000) {
        h.record(latency_ns);
    }
    result.operations = vec![plumb_core::result::OperationStats {
        name: "event".into(),
        is_event: true,
        count: events,
        per_s: result.events_per_s,
        latency: plumb_core::stats::LatencySummary::from_histogram(&h, &[95.0], false),
    }];
    result
        .histograms
        .insert("event".into(), SparseHistogram::from(&h));
    let job = JobRecord {
        name: "cpu".into(),
        workload: Settings::Cpu(CpuSettings {
            cpu_max_prime: prime,
        }),
        settings: RunSettings::new(&RunConfig::default(), &[95.0]),
        seed_given: false,
        error: None,
        layout: None,
        result,
        checkpoints: Vec::new(),
        since_checkpoint: None,
        findings: Vec::new(),
    };
    r.groups.push(GroupRecord {
        jobs: vec![job],
        observations: None,
    });
    r
}
