//! `plumb threads`: sysbench 1.0.20's threads test, run through the real binary.

mod common;

use common::{assert_usage_error, job_json, run_ok, sum_of};

#[test]
fn issue_command_prints_sysbench_sections() {
    // The issue's command, with a 2 s limit instead of the default 10 s.
    let text = run_ok(&[
        "threads",
        "--threads=64",
        "--thread-yields=1000",
        "--thread-locks=8",
        "--time=2",
        "run",
    ]);
    assert!(text.contains("Number of threads: 64\n"), "{text}");
    // No block of its own: sysbench goes from the seed line straight to the workers, and
    // from "Threads started!" straight to the general statistics.
    assert!(
        text.contains("current time\n\n\nInitializing worker threads...\n\nThreads started!\n\n\nGeneral statistics:\n"),
        "{text}"
    );
    for s in ["Latency (ms):", "Threads fairness:", "events (avg/stddev):"] {
        assert!(text.contains(s), "{s} missing:\n{text}");
    }
}

#[test]
fn event_limit_gives_exact_counts() {
    let out = run_ok(&[
        "threads",
        "--threads=4",
        "--thread-yields=20",
        "--thread-locks=3",
        "--events=200",
        "--time=0",
        "--format=json",
        "run",
    ]);
    let j = job_json(out.as_bytes());
    assert_eq!(j["events"], 200);
    assert_eq!(j["stop_reason"], "events");
    let per_thread = sum_of(&j["threads"], "events");
    assert_eq!(per_thread, 200);
    assert_eq!(j["workload"]["thread_yields"], 20);
    assert_eq!(j["workload"]["thread_locks"], 3);
}

#[test]
fn zero_yields_is_an_empty_event() {
    let out = run_ok(&[
        "threads",
        "--thread-yields=0",
        "--events=1000",
        "--time=0",
        "--format=json",
        "run",
    ]);
    let j = job_json(out.as_bytes());
    assert_eq!(j["events"], 1000);
}

#[test]
fn bad_values_are_usage_errors() {
    assert_usage_error(
        &["threads", "--thread-locks=0", "run"],
        &["--thread-locks", "'0'", "from 1"],
    );
    assert_usage_error(
        &["threads", "--thread-yields=-1", "run"],
        &["--thread-yields", "whole number"],
    );
    assert_usage_error(&["threads", "--thread-yields=many", "run"], &["'many'"]);
    // The test makes no random choices: a seed would be accepted and ignored.
    assert_usage_error(&["threads", "--rand-seed=5", "run"], &["--rand-seed"]);
}

#[test]
fn help_lists_options_with_defaults() {
    let text = run_ok(&["threads", "help"]);
    assert!(text.starts_with("threads options:\n"), "{text}");
    let y = text
        .lines()
        .find(|l| l.contains("--thread-yields=N"))
        .unwrap();
    assert!(y.ends_with("[1000]"), "{y}");
    let l = text
        .lines()
        .find(|l| l.contains("--thread-locks=N"))
        .unwrap();
    assert!(l.ends_with("[8]"), "{l}");
}
