//! fio's flow control (`flow_id`, `flow`, `flow_sleep`) against Debian's fio 3.33: jobs of
//! one flow issue requests in the ratio of their weights, whatever each could do alone;
//! jobs of other flows are not held; a job that ends frees the others.
//!
//! Each run is one second of the null engine, so the counts are large and the ratio is
//! the flow's, not the machine's; both programs must keep it within a few percent.

mod common;
use common::peers::{installed, run_named, DropIn, FIO};

use std::path::Path;
use tempfile::TempDir;

fn peer() -> bool {
    installed(&[FIO], "apt-get install fio", "the flow comparison")
}

/// Each job's requests (reads), in job order.
fn counts(bin: &Path, args: &[&str]) -> Vec<u64> {
    let work = TempDir::new().unwrap();
    let mut a = vec![
        "--ioengine=null",
        "--size=100g",
        "--bs=4k",
        "--time_based",
        "--runtime=1",
        "--output-format=json",
    ];
    a.extend_from_slice(args);
    let out = run_named(bin, work.path(), &a);
    assert_eq!(out.code, 0, "{bin:?} {args:?}: {}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .collect()
}

fn both(args: &[&str]) -> [(&'static str, Vec<u64>); 2] {
    let drop_in = DropIn::named("fio");
    [
        ("fio", counts(Path::new(FIO), args)),
        ("plumb", counts(&drop_in.bin(), args)),
    ]
}

fn ratio(a: u64, b: u64) -> f64 {
    b as f64 / a.max(1) as f64
}

#[test]
fn jobs_of_one_flow_issue_in_the_ratio_of_their_weights() {
    if !peer() {
        return;
    }
    // Without a sleep a held job asks again at once (fio spins): two such jobs on this
    // machine's two CPUs. With one, held jobs sleep, and a third job of another flow,
    // held by nobody, runs beside them.
    for (sleep, other) in [("0", false), ("100", true)] {
        let s = format!("--flow_sleep={sleep}");
        let mut args = vec![
            "--flow_id=1",
            &s,
            "--name=a",
            "--flow=1",
            "--name=b",
            "--flow=4",
        ];
        if other {
            args.extend(["--name=other", "--flow_id=2", "--flow=1"]);
        }
        // Jobs that spin for their turn (flow_sleep=0) share two CPUs with whatever else
        // runs: a loaded machine can skew one run, in fio as in plumb, so each program
        // gets up to three runs to show the ratio.
        let held = |c: &[u64]| c[0] > 1000 && (3.8..=4.2).contains(&ratio(c[0], c[1]));
        let drop_in = DropIn::named("fio");
        for (who, bin) in [("fio", Path::new(FIO)), ("plumb", drop_in.bin().as_path())] {
            let mut c = counts(bin, &args);
            for _ in 0..2 {
                if held(&c) {
                    break;
                }
                c = counts(bin, &args);
            }
            assert!(c[0] > 1000, "{who} {sleep}: {c:?}");
            let r = ratio(c[0], c[1]);
            assert!(
                (3.8..=4.2).contains(&r),
                "{who} flow_sleep={sleep}: {c:?} ({r:.2})"
            );
            if other {
                assert!(c[2] > c[1], "{who} flow_sleep={sleep}: {c:?}");
            }
        }
    }
}

#[test]
fn a_job_that_ends_frees_the_others_of_its_flow() {
    if !peer() {
        return;
    }
    // b stops after a fifth of the second: a, held to b's pace until then, runs alone
    // for the rest.
    let args = [
        "--flow_id=1",
        "--name=a",
        "--flow=1",
        "--name=b",
        "--flow=1",
        "--runtime=200ms",
    ];
    for (who, c) in both(&args) {
        assert!(c[0] > 3 * c[1], "{who}: {c:?}");
    }
}

#[test]
fn flow_options_are_checked_as_fio_checks_them() {
    if !peer() {
        return;
    }
    let drop_in = DropIn::named("fio");
    for bad in ["--flow=1001", "--flow_sleep=x"] {
        let mut said = Vec::new();
        for bin in [Path::new(FIO), &drop_in.bin()] {
            let work = TempDir::new().unwrap();
            let args = ["--name=a", "--ioengine=null", "--size=1m", bad];
            let out = run_named(bin, work.path(), &args);
            assert_eq!(out.code, 1, "{bin:?} {bad}");
            said.push(out.stderr);
        }
        assert_eq!(said[0], said[1], "{bad}");
    }
}
