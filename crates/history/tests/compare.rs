//! Comparing two records: differences, figures with their noise, the regression gate.

mod support;

use plumb_history::compare::{Gate, Verdict};
use plumb_history::{compare, Side};
use support::cpu_record;

fn side(label: &str, r: plumb_pipeline::Record) -> Side {
    Side {
        label: label.into(),
        record: r,
    }
}

const STEADY: &[u64] = &[100, 104, 97, 101, 99, 103, 98, 102, 100, 96];

fn throughput(c: &plumb_history::Comparison) -> &plumb_history::compare::Figure {
    c.jobs[0]
        .figures
        .iter()
        .find(|f| f.name == "events/s")
        .unwrap()
}

#[test]
fn the_same_series_is_within_noise_and_the_gate_passes() {
    let a = side("run 1", cpu_record(1, 2000, STEADY, 1_000_000));
    let b = side("run 2", cpu_record(2, 2000, STEADY, 1_000_000));
    let c = compare(&a, &b);
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    let t = throughput(&c);
    assert_eq!(t.ratio, Some(1.0));
    assert_eq!(t.verdict, Verdict::WithinNoise);
    assert!(t.interval.unwrap().contains_one());
    assert_eq!(c.gate(5.0), Gate::Pass);
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["schema"], "plumb.compare/1");
    assert_eq!(json["jobs"][0]["figures"][0]["verdict"], "within_noise");
}

#[test]
fn a_slower_run_is_beyond_noise_and_fails_the_gate() {
    let slow: Vec<u64> = STEADY.iter().map(|e| e / 2).collect();
    let a = side("run 1", cpu_record(1, 2000, STEADY, 1_000_000));
    let b = side("run 2", cpu_record(2, 20000, &slow, 2_000_000));
    let c = compare(&a, &b);
    let d: Vec<(&str, &str, &str)> = c
        .differences
        .iter()
        .map(|d| (d.what.as_str(), d.a.as_str(), d.b.as_str()))
        .collect();
    assert_eq!(d, vec![("cpu_max_prime", "2000", "20000")]);
    let t = throughput(&c);
    assert_eq!(t.verdict, Verdict::Lower);
    assert!(t.interval.unwrap().high < 0.6, "{:?}", t.interval);
    let p50 = c.jobs[0]
        .figures
        .iter()
        .find(|f| f.name == "latency p50")
        .unwrap();
    assert!((1.99..2.01).contains(&p50.ratio.unwrap()), "{p50:?}");
    assert_eq!(
        p50.verdict,
        Verdict::Unknown,
        "no per-interval p50 in these records"
    );
    match c.gate(10.0) {
        Gate::Slower(jobs) => assert_eq!(jobs, vec!["cpu: -50.2%".to_string()]),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.gate(60.0), Gate::Pass, "the drop is under 60%");
}

#[test]
fn without_enough_intervals_the_noise_is_unknown_and_the_gate_cannot_pass() {
    let a = side("a", cpu_record(1, 2000, &[100, 100], 1000));
    let b = side("b", cpu_record(2, 2000, &[50, 50], 1000));
    let c = compare(&a, &b);
    let t = throughput(&c);
    assert_eq!(t.verdict, Verdict::Unknown);
    assert!(
        t.noise
            .as_deref()
            .unwrap()
            .starts_with("too few samples (A 2, B 2"),
        "{t:?}"
    );
    assert!(matches!(c.gate(10.0), Gate::Unjudged(_)));
}

#[test]
fn findings_that_differ_are_listed_by_id() {
    let mut ra = cpu_record(1, 2000, STEADY, 1000);
    let rb = cpu_record(2, 2000, STEADY, 1000);
    ra.groups[0].jobs[0]
        .findings
        .push(plumb_advise::Finding::new(
            "noisy-machine",
            plumb_advise::Severity::Caution,
            "busy",
        ));
    let c = compare(&side("a", ra), &side("b", rb));
    let f = &c.jobs[0].findings;
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].id, "noisy-machine");
    assert_eq!(f[0].severity_a, Some(plumb_advise::Severity::Caution));
    assert_eq!(f[0].severity_b, None);
}
