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
    // A grace past --time's own limit overflowed the deadline (a panic).
    assert_usage_error(
        &["cpu", "--forced-shutdown=1e30", "run"],
        &["--forced-shutdown", "up to 1000000000"],
    );
}

#[test]
fn no_arguments_prints_usage_and_exit_2() {
    let (code, out, err) = run(&[]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("Usage:"));
}

/// What sysbench 1.0.20 made of a command line: its thread count, its rate (0 without one)
/// and its event count (the runs below end on their event limit), from its report.
fn sysbench_took(args: &[&str]) -> (u64, u64, u64) {
    let out = std::process::Command::new("sysbench")
        .args(args)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    let rate = out
        .lines()
        .find_map(|l| l.strip_prefix("Target transaction rate: "))
        .map_or(0, |r| r.trim_end_matches("/sec").parse().unwrap());
    (
        figure(&out, "Number of threads:"),
        rate,
        figure(&out, "total number of events:"),
    )
}

/// A deprecated alias given with its new name: sysbench 1.0 takes the alias wherever it
/// stands when its value is above its default (1 thread, else 0), and the new name
/// otherwise; plumb's name does the same, and its warning says which value it took.
#[test]
fn an_alias_and_its_new_name_as_sysbench_1_0_chooses() {
    let base = ["cpu", "--cpu-max-prime=500", "run"];
    // (options, threads, rate, events, what the warning says)
    let cases: &[(&[&str], u64, u64, u64, &str)] = &[
        (
            &["--num-threads=2", "--threads=3", "--events=40"],
            2,
            0,
            40,
            "--num-threads=2 is taken over --threads=3",
        ),
        (
            &["--threads=3", "--num-threads=2", "--events=40"],
            2,
            0,
            40,
            "--num-threads=2 is taken over --threads=3",
        ),
        (
            &["--num-threads=1", "--threads=3", "--events=40"],
            3,
            0,
            40,
            "--num-threads=1 is passed over for --threads=3",
        ),
        (
            &["--max-requests=5", "--events=7"],
            1,
            0,
            5,
            "--max-requests=5 is taken over --events=7",
        ),
        (
            &["--events=7", "--max-requests=5"],
            1,
            0,
            5,
            "--max-requests=5 is taken over --events=7",
        ),
        (
            &["--max-requests=0", "--events=7"],
            1,
            0,
            7,
            "--max-requests=0 is passed over for --events=7",
        ),
        (
            &["--tx-rate=400", "--rate=300", "--events=5"],
            1,
            400,
            5,
            "--tx-rate=400 is taken over --rate=300",
        ),
        (
            &["--rate=300", "--tx-rate=400", "--events=5"],
            1,
            400,
            5,
            "--tx-rate=400 is taken over --rate=300",
        ),
        (
            &["--tx-rate=0", "--rate=300", "--events=5"],
            1,
            300,
            5,
            "--tx-rate=0 is passed over for --rate=300",
        ),
    ];
    let peer = peer("sysbench");
    for (opts, threads, rate, events, warning) in cases {
        let args: Vec<&str> = opts.iter().chain(&base).copied().collect();
        if peer {
            assert_eq!(
                sysbench_took(&args),
                (*threads, *rate, *events),
                "sysbench {args:?}"
            );
        }
        let json: Vec<&str> = args.iter().copied().chain(["--format=json"]).collect();
        let out = scenario(&json).ok();
        let v = job_json(&out.stdout);
        assert_eq!(v["settings"]["threads"], *threads, "{args:?}");
        assert_eq!(v["events"], *events, "{args:?}");
        match rate {
            0 => assert!(v["settings"]["rate_per_s"].is_null(), "{args:?}"),
            r => assert_eq!(v["settings"]["rate_per_s"], *r as f64, "{args:?}"),
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(warning), "{args:?}: {err}");
    }
    // The time limit, in either order: the alias's, above 0; the new name's after a 0.
    for (opts, time) in [
        (["--max-time=1", "--time=2"], 1.0),
        (["--time=2", "--max-time=1"], 1.0),
        (["--time=1", "--max-time=0"], 1.0),
    ] {
        let args: Vec<&str> = opts.iter().chain(&base).copied().collect();
        if peer {
            let out = std::process::Command::new("sysbench")
                .args(&args)
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&out.stdout).into_owned();
            let took = out
                .lines()
                .find_map(|l| l.trim().strip_prefix("total time:"))
                .map(|t| t.trim().trim_end_matches('s').parse::<f64>().unwrap())
                .unwrap();
            assert_eq!(took.round(), time, "sysbench {args:?}: {out}");
        }
        // The run itself is cut short by an event limit: the plan shows the time limit.
        let json: Vec<&str> = args
            .iter()
            .copied()
            .chain(["--events=3", "--format=json"])
            .collect();
        let v = job_json(scenario(&json).ok().stdout);
        assert_eq!(v["settings"]["time_limit_s"], time, "{args:?}");
    }
}

/// --mysql-dry-run under plumb's name: no server is reached (none is at the socket named),
/// every statement counts as "other", the record says it was a dry run and plumb's
/// "Database:" section says what the figures are.
#[test]
fn mysql_dry_run_sends_nothing_and_says_so() {
    let d = tmp();
    let json = d.path().join("r.json");
    let text = run_ok(&[
        "oltp_point_select",
        "--mysql-dry-run",
        "--mysql-socket=/nonexistent/mysqld.sock",
        "--events=100",
        "--time=0",
        &format!("--json={}", json.display()),
        "run",
    ]);
    assert!(
        text.contains("    driver:                       mysql, dry run (--mysql-dry-run): no statement was sent; every query counts as other, the figures are the client's own cost\n"),
        "{text}"
    );
    let job = single_job(serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap());
    assert_eq!(job["workload"]["dry_run"], true, "{job}");
    assert_eq!(job["counters"]["reads"], 0, "{job}");
    assert_eq!(job["counters"]["other"], 100, "{job}");
    assert_eq!(job["events"], 100, "{job}");
    // The option belongs to the mysql driver.
    let (code, _, err) = run(&[
        "oltp_point_select",
        "--db-driver=pgsql",
        "--mysql-dry-run",
        "run",
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        "plumb: --mysql-dry-run is an option of the mysql driver, but this run uses --db-driver=pgsql\n"
    );
}
