//! The cpu, memory, threads and mutex reports have sysbench's layout: run real sysbench
//! 1.0 and plumb on the same recipe and compare the report lines with the numbers taken
//! out. Under CI (CI=true) a missing sysbench is a failure, not a skip.

mod common;

use common::{peer, scenario, shape, sysbench_part};

fn sysbench_available() -> bool {
    let found = peer("sysbench");
    if !found {
        eprintln!("sysbench not found: layout comparison skipped");
    }
    found
}

/// Report lines without the first (the program's name and version) and without the
/// warnings sysbench prints to stdout. A run of interval lines counts as one: whether the
/// interval that ends with the run gets its line is a race in sysbench.
fn shapes(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in text.lines().skip(1).filter(|l| !l.starts_with("WARNING")) {
        let s = shape(l);
        if s.starts_with("[ Ns ]") && out.last() == Some(&s) {
            continue;
        }
        out.push(s);
    }
    out
}

fn compare(args: &[&str]) {
    if !sysbench_available() {
        return;
    }
    let sb = std::process::Command::new("sysbench")
        .args(args)
        .output()
        .unwrap();
    assert!(sb.status.success(), "sysbench {args:?} failed");
    let pl = scenario(args).ok();
    let sb_text = String::from_utf8(sb.stdout).unwrap();
    let pl_text = String::from_utf8(pl.stdout).unwrap();
    let want = shapes(&sb_text);
    // plumb's own sections (observations, findings) follow sysbench's; leave them out.
    let mut got = shapes(sysbench_part(&pl_text));
    while got.last().is_some_and(|l| l.is_empty()) && got.len() > want.len() {
        got.pop();
    }
    assert!(want.len() > 15, "sysbench printed too little:\n{sb_text}");
    assert!(
        got == want,
        "layout differs for {args:?}\n--- sysbench\n{sb_text}\n--- plumb\n{pl_text}"
    );
}

#[test]
fn cpu_layout_matches_sysbench() {
    compare(&["cpu", "--cpu-max-prime=2000", "--time=1", "run"]);
}

#[test]
fn memory_layout_matches_sysbench() {
    compare(&[
        "memory",
        "--memory-block-size=4K",
        "--memory-total-size=64M",
        "run",
    ]);
    compare(&[
        "memory",
        "--memory-total-size=4M",
        "--memory-oper=none",
        "--memory-access-mode=rnd",
        "--memory-scope=local",
        "--threads=2",
        "run",
    ]);
}

#[test]
fn memory_interval_layout_matches_sysbench() {
    compare(&[
        "memory",
        "--memory-total-size=0",
        "--time=2",
        "--report-interval=1",
        "run",
    ]);
}

#[test]
fn threads_layout_matches_sysbench() {
    compare(&[
        "threads",
        "--threads=2",
        "--thread-yields=100",
        "--events=200",
        "--time=0",
        "run",
    ]);
}

#[test]
fn mutex_layout_matches_sysbench() {
    compare(&["mutex", "--threads=2", "--mutex-locks=2000", "run"]);
}
