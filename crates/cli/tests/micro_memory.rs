//! `plumb memory`: sysbench 1.0.20's memory test, run through the real binary.

mod common;

use common::{assert_usage_error, job_json, json_run, run_ok, scenario};

/// "Total operations: N (X per second)" -> N.
fn total_operations(text: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with("Total operations: "))
        .unwrap_or_else(|| panic!("no Total operations line:\n{text}"));
    line["Total operations: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn issue_command_prints_sysbench_sections() {
    let text = run_ok(&[
        "memory",
        "--memory-block-size=8K",
        "--memory-total-size=4G",
        "run",
    ]);
    let header = "Running memory speed test with the following options:\n  block size: 8KiB\n  total size: 4096MiB\n  operation: write\n  scope: global\n\nInitializing worker threads...\n\nThreads started!\n\n";
    assert!(text.contains(header), "{text}");
    let ops = total_operations(&text);
    assert!(ops > 0 && ops <= 4 * 1024 * 1024 / 8, "{ops}");
    // MiB transferred is operations x block size, exactly.
    let mib = format!("{:.2} MiB transferred (", ops as f64 * 8192.0 / 1048576.0);
    assert!(text.contains(&mib), "expected '{mib}' in:\n{text}");
    let order = [
        "Total operations: ",
        " MiB transferred (",
        "General statistics:",
        "Latency (ms):",
        "Threads fairness:",
    ];
    let mut at = 0;
    for s in order {
        let p = text[at..]
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing or out of order"));
        at += p;
    }
    // sysbench's blank lines: one after each figure, one more before General statistics.
    assert!(
        text.contains("MiB/sec)\n\n\nGeneral statistics:\n"),
        "{text}"
    );
    let events_line = format!("    total number of events:              {ops}\n");
    assert!(text.contains(&events_line), "{text}");
}

#[test]
fn counts_are_total_over_block_when_not_time_limited() {
    for (scope, oper, access) in [
        ("global", "write", "seq"),
        ("global", "read", "seq"),
        ("local", "write", "rnd"),
        ("local", "read", "rnd"),
        ("global", "none", "seq"),
        ("local", "none", "rnd"),
    ] {
        let j = json_run(&[
            "memory",
            "--memory-block-size=4K",
            "--memory-total-size=8M",
            &format!("--memory-scope={scope}"),
            &format!("--memory-oper={oper}"),
            &format!("--memory-access-mode={access}"),
            "--time=0",
            "run",
        ]);
        let what = format!("{scope} {oper} {access}");
        assert_eq!(j["events"], 2048, "{what}");
        assert_eq!(j["stop_reason"], "completed", "{what}");
        assert_eq!(j["counters"]["bytes"], 8 << 20, "{what}");
        let w = &j["workload"];
        assert_eq!(w["block_size_bytes"], 4096, "{what}");
        assert_eq!(w["total_size_bytes"], 8 << 20, "{what}");
        assert_eq!(w["scope"], scope);
        assert_eq!(w["oper"], oper);
        assert_eq!(w["access_mode"], access);
        assert_eq!(w["hugetlb"], false);
        assert!(w["ops_per_s"].as_f64().unwrap() > 0.0, "{what}");
        if oper == "none" {
            assert!(w["mib_per_s"].is_null(), "{what}");
        } else {
            assert!(w["mib_per_s"].as_f64().unwrap() > 0.0, "{what}");
        }
    }
}

#[test]
fn each_thread_runs_its_share_rounded_down() {
    // 8 MiB of 64 KiB blocks = 128 operations; over 3 threads 42 each, 126 in all.
    let j = json_run(&[
        "memory",
        "--memory-block-size=64K",
        "--memory-total-size=8M",
        "--threads=3",
        "--time=0",
        "run",
    ]);
    assert_eq!(j["events"], 126);
    assert_eq!(j["workload"]["events_per_thread"], 42);
    for t in j["threads"].as_array().unwrap() {
        assert_eq!(t["events"], 42);
    }
    assert_eq!(j["counters"]["bytes"], 126 * 65536);
}

#[test]
fn text_report_figures_are_exact() {
    let text = run_ok(&[
        "memory",
        "--memory-block-size=1K",
        "--memory-total-size=16M",
        "--memory-oper=read",
        "--time=0",
        "run",
    ]);
    assert_eq!(total_operations(&text), 16384);
    assert!(text.contains("\n16.00 MiB transferred ("), "{text}");
    assert!(text.contains("  operation: read\n"), "{text}");
}

#[test]
fn oper_none_prints_no_transfer_line() {
    let text = run_ok(&[
        "memory",
        "--memory-total-size=1M",
        "--memory-oper=none",
        "--time=0",
        "run",
    ]);
    assert_eq!(total_operations(&text), 1024);
    assert!(!text.contains("MiB transferred"), "{text}");
    assert!(
        text.contains("per second)\n\n\nGeneral statistics:\n"),
        "{text}"
    );
}

#[test]
fn events_option_is_not_used_and_says_so() {
    let out = scenario(&[
        "memory",
        "--memory-total-size=1M",
        "--events=10",
        "--time=0",
        "--format=json",
        "run",
    ])
    .ok();
    let j = job_json(&out.stdout);
    assert_eq!(j["events"], 1024);
    assert_eq!(j["settings"]["event_limit"], 0);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("WARNING") && err.contains("--events"), "{err}");
}

#[test]
fn time_limit_applies_without_quota() {
    let text = run_ok(&[
        "memory",
        "--memory-total-size=0",
        "--time=2",
        "--report-interval=1",
        "run",
    ]);
    // sysbench's memory interval line: throughput only.
    let line = text
        .lines()
        .find(|l| l.starts_with("[ 1s ] "))
        .unwrap_or_else(|| panic!("no interval line:\n{text}"));
    let body = line.strip_prefix("[ 1s ] ").unwrap();
    let num = body
        .strip_suffix(" MiB/sec")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(num.parse::<f64>().unwrap() > 0.0, "{line}");
    assert!(text.contains("  total size: 0MiB\n"), "{text}");
    let ops = total_operations(&text);
    assert!(ops > 0);
}

#[test]
fn bad_values_are_usage_errors_naming_option_value_and_allowed() {
    assert_usage_error(
        &["memory", "--memory-block-size=3K", "run"],
        &["--memory-block-size", "'3K'", "power of two"],
    );
    assert_usage_error(
        &["memory", "--memory-block-size=4", "run"],
        &["--memory-block-size", "at least 8 bytes"],
    );
    assert_usage_error(
        &["memory", "--memory-scope=foo", "run"],
        &["--memory-scope", "'foo'", "global, local"],
    );
    assert_usage_error(
        &["memory", "--memory-oper=copy", "run"],
        &["--memory-oper", "'copy'", "read, write, none"],
    );
    assert_usage_error(
        &["memory", "--memory-access-mode=random", "run"],
        &["--memory-access-mode", "seq, rnd"],
    );
    assert_usage_error(
        &["memory", "--memory-total-size=lots", "run"],
        &["--memory-total-size", "'lots'"],
    );
    assert_usage_error(
        &["memory", "--memory-hugetlb=maybe", "run"],
        &["--memory-hugetlb", "on or off"],
    );
    assert_usage_error(
        &["memory", "--rand-type=pareto", "run"],
        &["--rand-type", "memory"],
    );
}

/// A /proc/meminfo field: bytes for sizes, the count for HugePages_ fields.
fn meminfo(key: &str) -> Option<u64> {
    use plumb_observe::{meminfo, Roots};
    meminfo::field(&meminfo::read(&Roots::default())?, key)
}

#[test]
fn hugetlb_is_used_or_refused_clearly() {
    let out = scenario(&[
        "memory",
        "--memory-hugetlb",
        "--memory-total-size=4M",
        "--memory-block-size=1M",
        "--time=0",
        "run",
    ])
    .output();
    let err = String::from_utf8_lossy(&out.stderr);
    if meminfo("HugePages_Free") == Some(0) {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("HugeTLB") && err.contains("vm.nr_hugepages"),
            "{err}"
        );
        // Refused before the run: no report.
        assert!(!String::from_utf8_lossy(&out.stdout).contains("Threads started"));
    } else {
        assert!(out.status.success(), "{err}");
        assert_eq!(total_operations(&String::from_utf8_lossy(&out.stdout)), 4);
    }
}

#[test]
fn blocks_larger_than_memory_are_refused_before_the_run() {
    let avail = meminfo("MemAvailable").expect("MemAvailable in /proc/meminfo");
    let block = (avail / 2).next_power_of_two(); // larger than half of what is available
    let out = scenario(&[
        "memory",
        &format!("--memory-block-size={block}"),
        "--memory-scope=local",
        "--threads=4",
        "run",
    ])
    .output();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MemAvailable"), "{err}");
}

#[test]
fn help_lists_options_with_defaults() {
    let text = run_ok(&["memory", "help"]);
    for (opt, default) in [
        ("--memory-block-size=SIZE", "[1K]"),
        ("--memory-total-size=SIZE", "[100G]"),
        ("--memory-scope=STRING", "[global]"),
        ("--memory-hugetlb[=on|off]", "[off]"),
        ("--memory-oper=STRING", "[write]"),
        ("--memory-access-mode=STRING", "[seq]"),
    ] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(opt))
            .unwrap_or_else(|| panic!("{opt} missing:\n{text}"));
        assert!(line.ends_with(default), "{line}");
    }
    assert!(text.contains("{read, write, none}"));
}
