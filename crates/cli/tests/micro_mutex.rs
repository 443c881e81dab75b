//! `plumb mutex`: sysbench 1.0.20's mutex test, run through the real binary.

use std::time::{Duration, Instant};

mod common;

use common::{assert_usage_error, job_json, run_ok, scenario, signal};

#[test]
fn issue_command_runs_one_event_per_thread() {
    let text = run_ok(&["mutex", "--threads=2", "run"]);
    assert!(
        text.contains("    total number of events:              2\n"),
        "{text}"
    );
    assert!(
        text.contains("current time\n\n\nInitializing worker threads...\n\nThreads started!\n\n\nGeneral statistics:\n"),
        "{text}"
    );
    assert!(
        text.contains("    events (avg/stddev):           1.0000/0.00\n"),
        "{text}"
    );
    assert!(text.contains("Latency (ms):"), "{text}");
}

#[test]
fn every_lock_is_taken() {
    let out = run_ok(&[
        "mutex",
        "--threads=3",
        "--mutex-num=16",
        "--mutex-locks=5000",
        "--mutex-loops=10",
        "--format=json",
        "run",
    ]);
    let j = job_json(out.as_bytes());
    assert_eq!(j["events"], 3);
    assert_eq!(j["counters"]["locks"], 15000);
    assert_eq!(j["stop_reason"], "completed");
    assert_eq!(j["workload"]["mutex_num"], 16);
    assert_eq!(j["workload"]["mutex_locks"], 5000);
    assert_eq!(j["workload"]["mutex_loops"], 10);
}

#[test]
fn event_limit_caps_the_one_event_per_thread() {
    let out = run_ok(&[
        "mutex",
        "--threads=2",
        "--events=1",
        "--mutex-locks=100",
        "--format=json",
        "run",
    ]);
    let j = job_json(out.as_bytes());
    assert_eq!(j["events"], 1);
    assert_eq!(j["counters"]["locks"], 100);
}

#[test]
fn interrupt_stops_a_long_event_within_a_second() {
    // About 10^12 empty loops: hours of work unless the event looks at the stop flag.
    let child = scenario(&[
        "mutex",
        "--threads=2",
        "--mutex-locks=100000000",
        "--mutex-loops=10000",
        "--time=0",
        "run",
    ])
    .spawn();
    std::thread::sleep(Duration::from_millis(700));
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(130));
    // Uninterrupted this runs for minutes; a loaded machine may take a few seconds to stop.
    assert!(took < Duration::from_secs(10), "stopped after {took:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Run interrupted (SIGINT)"), "{text}");
    // The event did not finish, so it is not counted.
    assert!(
        text.contains("    total number of events:              0\n"),
        "{text}"
    );
}

#[test]
fn bad_values_are_usage_errors() {
    assert_usage_error(&["mutex", "--mutex-num=0", "run"], &["--mutex-num", "'0'"]);
    assert_usage_error(
        &["mutex", "--mutex-locks=0", "run"],
        &["--mutex-locks", "from 1"],
    );
    assert_usage_error(&["mutex", "--mutex-loops=x", "run"], &["--mutex-loops"]);
    assert_usage_error(&["mutex", "--rand-type=gaussian", "run"], &["--rand-type"]);
}

#[test]
fn help_lists_options_with_defaults() {
    let text = run_ok(&["mutex", "help"]);
    for (opt, default) in [
        ("--mutex-num=N", "[4096]"),
        ("--mutex-locks=N", "[50000]"),
        ("--mutex-loops=N", "[10000]"),
    ] {
        let line = text.lines().find(|l| l.contains(opt)).unwrap();
        assert!(line.ends_with(default), "{line}");
    }
}
