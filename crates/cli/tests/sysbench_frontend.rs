//! The sysbench command-line grammar: both syntaxes, help, and bad input.

mod common;
use common::*;

#[test]
fn runs_the_sysbench_1_0_command_line() {
    let (code, out, _) = run(&[
        "cpu",
        "--cpu-max-prime=2000",
        "--threads=2",
        "--time=0.3",
        "run",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("Number of threads: 2"));
    assert!(out.contains("Prime numbers limit: 2000"));
    assert_eq!(
        headings(&out),
        [
            "Running the test with following options:",
            "CPU speed:",
            "General statistics:",
            "Latency (ms):",
            "Threads fairness:"
        ]
    );
}

#[test]
fn runs_the_sysbench_0_4_command_line() {
    let out = scenario(&[
        "--test=cpu",
        "--num-threads=2",
        "--max-time=0.3",
        "--max-requests=0",
        "--format=json",
        "run",
    ])
    .ok();
    let v = job_json(&out.stdout);
    assert_eq!(v["test"], "cpu");
    assert_eq!(v["settings"]["threads"], 2);
    assert_eq!(v["settings"]["time_limit_s"], 0.3);
    assert_eq!(v["settings"]["event_limit"], 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--num-threads is deprecated, use --threads"));
    assert!(err.contains("--max-time is deprecated, use --time"));
}

#[test]
fn max_requests_is_the_event_limit() {
    let v = json_run(&[
        "--test=cpu",
        "--max-requests=37",
        "--max-time=0",
        "--cpu-max-prime=500",
        "run",
    ]);
    assert_eq!(v["events"], 37);
    assert_eq!(v["stop_reason"], "events");
}

#[test]
fn layout_matches_sysbench_for_the_same_recipe() {
    if !peer("sysbench") {
        return;
    }
    let sb = std::process::Command::new("sysbench")
        .args(["cpu", "--cpu-max-prime=2000", "--time=1", "run"])
        .output()
        .unwrap();
    let sb = String::from_utf8_lossy(&sb.stdout).into_owned();
    let (_, ours, _) = run(&["cpu", "--cpu-max-prime=2000", "--time=0.3", "run"]);
    assert_eq!(headings(&ours), headings(&sb));
    assert_eq!(labels(&ours), labels(&sb));
    // Figures sit in the same columns.
    for label in [
        "    total time:",
        "         min:",
        "         95th percentile:",
        "    events (avg/stddev):",
    ] {
        let col = |s: &str| s.lines().find(|l| l.starts_with(label)).map(|l| l.len());
        let (a, b) = (col(&ours).unwrap(), col(&sb).unwrap());
        assert!(a.abs_diff(b) <= 3, "{label}: {a} vs {b}");
    }
}

#[test]
fn test_help_lists_options_with_defaults() {
    let (code, out, _) = run(&["cpu", "help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--cpu-max-prime=N"));
    assert!(out.contains("[10000]"));
}

#[test]
fn general_help_lists_tests_and_common_options() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for s in ["--threads=N", "--percentile", "--rand-type", "cpu"] {
        assert!(out.contains(s), "{s}");
    }
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    assert_usage_error(
        &["cpu", "--cpu-max-prime=abc", "run"],
        &["--cpu-max-prime", "'abc'", "whole number"],
    );
    assert_usage_error(
        &["cpu", "--threads=0", "run"],
        &["--threads", "'0'", "from 1"],
    );
    assert_usage_error(&["cpu", "--foo=1", "run"], &["--foo", "cpu"]);
    assert_usage_error(&["nosuch", "run"], &["nosuch", "cpu"]);
    assert_usage_error(&["cpu"], &["needs a command"]);
    assert_usage_error(&["cpu", "fly"], &["fly", "prepare, run, cleanup"]);
    assert_usage_error(
        &["cpu", "--percentile=101", "run"],
        &["--percentile", "'101'"],
    );
    assert_usage_error(
        &["cpu", "--threads", "run"],
        &["--threads", "needs a value"],
    );
    assert_usage_error(&["cpu", "--time=-1", "run"], &["--time", "'-1'"]);
    assert_usage_error(
        &["cpu", "--rand-type=weird", "run"],
        &["--rand-type", "uniform"],
    );
    assert_usage_error(
        &["cpu", "--histogram=maybe", "run"],
        &["--histogram", "on or off"],
    );
    assert_usage_error(&["cpu", "prepare"], &["cpu", "prepare"]);
    assert_usage_error(
        &["cpu", "--forced-shutdown=soon", "run"],
        &["--forced-shutdown"],
    );
}

#[test]
fn no_arguments_prints_usage_and_exit_2() {
    let (code, out, err) = run(&[]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("Usage:"));
}
