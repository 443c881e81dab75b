//! Client worker threads (a disk's, a database's) leave glibc's rseq registration before
//! they start (a wakeup per request otherwise pays the kernel's return-to-user rseq pass:
//! crates/core/src/rseq.rs); the threads of sysbench's cpu, memory, threads and mutex tests,
//! which are what those tests measure, keep it, as any program's threads have it. Seen with
//! strace; without strace the test says so and passes, except under CI=true.

mod common;

use std::path::{Path, PathBuf};

/// Successful rseq(2) calls with `flags` (", 0, " registers, ", 0x1, " unregisters), by
/// thread.
fn rseq_calls(trace: &str, flags: &str) -> Vec<u32> {
    trace
        .lines()
        .filter(|l| l.contains("rseq(") && l.contains(flags) && l.trim_end().ends_with("= 0"))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Threads registered, and the threads that left, in a traced run of `args`.
fn traced(dir: &Path, args: &[&str]) -> (usize, Vec<u32>) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_plumb"));
    let trace = common::peers::traced_ok(&bin, dir, "rseq", args);
    let registered = rseq_calls(&trace, ", 0, ").len();
    (registered, rseq_calls(&trace, ", 0x1, "))
}

#[test]
fn client_workers_leave_rseq_and_measured_threads_keep_it() {
    if !common::peers::strace("the worker rseq test") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let io = [
        "fileio",
        "--file-num=1",
        "--file-total-size=1M",
        "--file-test-mode=rndrd",
        "--events=200",
        "--time=0",
    ];
    for threads in [1usize, 3] {
        let t = format!("--threads={threads}");
        let prepare: Vec<&str> = io.iter().copied().chain(["prepare"]).collect();
        common::peers::traced_ok(
            &PathBuf::from(env!("CARGO_BIN_EXE_plumb")),
            d.path(),
            "rseq",
            &prepare,
        );
        let run: Vec<&str> = io.iter().copied().chain([t.as_str(), "run"]).collect();
        let (registered, mut left) = traced(d.path(), &run);
        // Every thread glibc made registered itself, the main thread too.
        assert!(registered > threads, "{registered} registered");
        let calls = left.len();
        left.sort_unstable();
        left.dedup();
        assert_eq!(
            (left.len(), calls),
            (threads, threads),
            "one call in each worker"
        );

        let cpu = ["cpu", t.as_str(), "--events=200", "--time=0", "run"];
        let (registered, left) = traced(d.path(), &cpu);
        assert!(registered > threads, "{registered} registered");
        assert_eq!(
            left,
            Vec::<u32>::new(),
            "cpu's threads are what it measures"
        );
    }
}
