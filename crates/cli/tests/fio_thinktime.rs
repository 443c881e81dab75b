//! fio's thinktime with blocking and queueing engines, against fio 3.33 on the same jobs
//! (fio or strace missing: plumb's side alone against fio's measured groups, a failure
//! under CI).
//!
//! fio 3.33 (backend.c, handle_thinktime) checks after each request issued (and the
//! completions it then reaps) whether `thinktime_blocks` more requests have completed (or
//! been issued) since the count at the last stall; if so it waits for everything in flight
//! and stalls. The next count starts from the count at the check, so completions reaped
//! while it empties its queue count towards the next stall: with libaio, iodepth=4 and a
//! completion reaped at a time, 16 reads go out as 7, 4, 4, 1 between stalls.

mod common;
use common::peers::{installed, DropIn, FIO, STRACE};

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

/// The stall: far longer than any gap between requests of one group on a slow machine.
const STALL: &str = "--thinktime=200ms";
/// The gap that separates groups: half a stall.
const GAP: f64 = 0.1;

/// Requests per group of `bin`'s run of the job plus `extra`, from the timestamps of the
/// `call`s on the job's file (each io_submit counts its iocbs).
fn groups(bin: &Path, call: &str, extra: &[&str]) -> Vec<u64> {
    let dir = TempDir::new().unwrap();
    let log = dir.path().join("trace");
    let out = Command::new(STRACE)
        .args(["-f", "-qq", "-ttt", "-y", "-e"])
        .arg(format!("trace={call}"))
        .arg("-o")
        .arg(&log)
        .arg(bin)
        .args([
            "--name=t",
            "--filename=F",
            "--size=64k",
            "--bs=4k",
            "--rw=randread",
            STALL,
            "--thinktime_blocks=4",
        ])
        .args(extra)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {extra:?}: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = std::fs::read_to_string(&log).unwrap();
    let mut groups = Vec::new();
    let mut last: Option<f64> = None;
    for line in trace.lines() {
        let Some(args) = line.split(&format!(" {call}(")).nth(1) else {
            continue;
        };
        if !args.contains("/F>") {
            continue;
        }
        let t: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let n: u64 = if call == "io_submit" {
            args.split(", ").nth(1).unwrap().trim().parse().unwrap()
        } else {
            1
        };
        if last.is_none_or(|l| t - l > GAP) {
            groups.push(0);
        }
        *groups.last_mut().unwrap() += n;
        last = Some(t);
    }
    groups
}

fn peers() -> bool {
    installed(
        &[FIO, STRACE],
        "apt-get install fio strace",
        "the thinktime comparison",
    )
}

/// plumb's groups for the job, equal to fio 3.33's measured ones, and to fio's own when
/// fio is here.
fn same_groups(call: &str, extra: &[&str], measured: &[u64]) {
    if !installed(
        &[STRACE],
        "apt-get install strace",
        "the thinktime comparison",
    ) {
        return;
    }
    let drop_in = DropIn::named("fio");
    let ours = groups(&drop_in.bin(), call, extra);
    assert_eq!(ours, measured, "plumb {extra:?}");
    if peers() {
        let theirs = groups(Path::new(FIO), call, extra);
        assert_eq!(ours, theirs, "plumb vs fio {extra:?}");
    }
}

#[test]
fn a_queue_counts_completions_reaped_before_a_stall_towards_the_next() {
    same_groups(
        "io_submit",
        &["--ioengine=libaio", "--iodepth=4"],
        &[7, 4, 4, 1],
    );
}

#[test]
fn a_queue_counting_issues_stalls_every_n_issued() {
    same_groups(
        "io_submit",
        &[
            "--ioengine=libaio",
            "--iodepth=4",
            "--thinktime_blocks_type=issue",
        ],
        &[4, 4, 4, 4],
    );
}

#[test]
fn batched_submits_and_completions_stall_where_fio_does() {
    same_groups(
        "io_submit",
        &[
            "--ioengine=libaio",
            "--iodepth=8",
            "--iodepth_batch=4",
            "--iodepth_batch_complete_min=2",
        ],
        &[10, 1, 5],
    );
}

#[test]
fn a_blocking_engine_stalls_every_n_requests() {
    same_groups("pread64", &["--ioengine=psync"], &[4, 4, 4, 4]);
}
