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
    let trace = common::strace::whole_calls(&std::fs::read_to_string(&log).unwrap());
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

// ---------------------------------------------------------------------------------------
// thinktime_iotime: the stall by the clock. fio 3.33 stalls once the I/O time and the stall
// together have passed since the last stall was found due (since the job's start for the
// first), and counts requests too only when `thinktime_blocks` is given. Measured with a
// rate of 1000 requests a second on the null engine, each request's time from fio's
// per-request IOPS log, split where the log has a gap of half a stall or more.

/// The job the I/O-time tests run, with `extra` (which may set a runtime of its own: the
/// tests end it where requests are being made, not in a stall).
fn timed_job(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--name=tt",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--bs=4k",
        "--rate_iops=1000",
        "--thinktime=100ms",
        "--runtime=1",
        "--time_based",
        "--write_iops_log=tt",
        "--output-format=terse",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Requests between stalls in `bin`'s run of [`timed_job`] with `extra`.
fn logged_groups(bin: &Path, extra: &[&str]) -> Vec<u64> {
    let dir = TempDir::new().unwrap();
    let out = common::peers::run_named(bin, dir.path(), &timed_job(extra));
    assert_eq!(out.code, 0, "{} {extra:?}: {}", bin.display(), out.stderr);
    let log = std::fs::read_to_string(dir.path().join("tt_iops.1.log")).unwrap();
    let times: Vec<u64> = log
        .lines()
        .map(|l| l.split(',').next().unwrap().trim().parse().unwrap())
        .collect();
    let mut groups = Vec::new();
    let mut last: Option<u64> = None;
    for t in times {
        if last.is_none_or(|l| t - l >= 50) {
            groups.push(0);
        }
        *groups.last_mut().unwrap() += 1;
        last = Some(t);
    }
    groups
}

/// [`logged_groups`] until they are `want`, three runs at most: a run stalled by the
/// machine for 50 ms (two cores under a parallel test run) splits a group in two, in fio
/// as in plumb. The last run's groups when none is.
fn groups_settled(bin: &Path, extra: &[&str], want: &[u64]) -> Vec<u64> {
    let mut got = Vec::new();
    for _ in 0..3 {
        got = logged_groups(bin, extra);
        if got == want {
            break;
        }
    }
    got
}

#[test]
fn io_time_with_a_count_stalls_at_whichever_comes_first() {
    // 250 requests come before 200 ms of I/O: the count decides, request for request.
    let extra = ["--thinktime_iotime=200ms", "--thinktime_blocks=250"];
    let drop_in = DropIn::named("fio");
    let want = [250, 250, 250, 250];
    let ours = groups_settled(&drop_in.bin(), &extra, &want);
    assert_eq!(ours, want, "plumb {extra:?}");
    if installed(&[FIO], "apt-get install fio", "the thinktime comparison") {
        assert_eq!(
            ours,
            groups_settled(Path::new(FIO), &extra, &want),
            "plumb vs fio"
        );
    }
}

#[test]
fn io_time_alone_stalls_by_the_clock() {
    // fio 3.33, 850 ms: [301, 301, 248]: 300 ms of I/O (the I/O time and the stall) before
    // the first stall, 200 ms after each (the rate catching up on the 100 ms stalled).
    // Without the I/O time the count of 1 would stall every request.
    let drop_in = DropIn::named("fio");
    let fio = installed(&[FIO], "apt-get install fio", "the thinktime comparison");
    for extra in [
        &["--runtime=850ms", "--thinktime_iotime=200ms"][..],
        &[
            "--runtime=850ms",
            "--thinktime_iotime=200ms",
            "--thinktime_blocks=600",
        ][..],
    ] {
        let ours = logged_groups(&drop_in.bin(), extra);
        assert_eq!(ours.len(), 3, "plumb {extra:?}: {ours:?}");
        for g in &ours[..2] {
            assert!((270..=330).contains(g), "plumb {extra:?}: {ours:?}");
        }
        if fio {
            let theirs = logged_groups(Path::new(FIO), extra);
            assert_eq!(ours.len(), theirs.len(), "plumb {ours:?} vs fio {theirs:?}");
        }
    }
    // Seconds when bare: 1 s of I/O and the stall outlast the run (fio: [1000]).
    let ours = logged_groups(&drop_in.bin(), &["--runtime=850ms", "--thinktime_iotime=1"]);
    assert_eq!(ours.len(), 1, "{ours:?}");
    // A fraction is dropped, as fio drops it: 0 is no I/O time, and the count of 1 stalls
    // after every request (fio: ten groups of 1).
    let ours = logged_groups(&drop_in.bin(), &["--thinktime_iotime=0.2"]);
    assert!(ours.len() >= 5 && ours.iter().all(|&g| g == 1), "{ours:?}");
}

#[test]
fn io_time_values_are_refused_as_fio_refuses_them() {
    if !installed(&[FIO], "apt-get install fio", "the thinktime comparison") {
        return;
    }
    let args = [
        "--name=b",
        "--size=64k",
        "--thinktime=10",
        "--thinktime_iotime=abc",
    ];
    let (theirs, ours) = common::peers::fio_and_drop_in(&[], &args);
    assert_eq!(theirs.code, 1, "{}", theirs.stderr);
    assert_eq!(theirs, ours);
}

// ---------------------------------------------------------------------------------------
// rate_ignore_thinktime: the rate does not make up for the stalls. fio 3.33 moves the
// schedule back by the requests a stall would have held, less one (which goes out at once):
// with 1000 requests a second, a stall of 100 ms after every 250 requests and a run of 1 s,
// fio makes 250, 250, 250 requests (750) where it makes 1000 without the option.

#[test]
fn a_rate_that_ignores_think_time_does_not_catch_up() {
    let drop_in = DropIn::named("fio");
    let fio = installed(&[FIO], "apt-get install fio", "the thinktime comparison");
    for (extra, want) in [
        (&["--rate_ignore_thinktime=1"][..], &[250, 250, 250][..]),
        (
            &["--rate_ignore_thinktime=1", "--rate_process=poisson"][..],
            &[250, 250, 250][..],
        ),
        (
            &["--rate_ignore_thinktime=0"][..],
            &[250, 250, 250, 250][..],
        ),
    ] {
        let extra = [&["--thinktime_blocks=250"][..], extra].concat();
        let ours = groups_settled(&drop_in.bin(), &extra, want);
        assert_eq!(ours, want, "plumb {extra:?}");
        if fio {
            assert_eq!(
                ours,
                groups_settled(Path::new(FIO), &extra, want),
                "plumb vs fio"
            );
        }
    }
}

#[test]
fn ignoring_think_time_over_two_rated_directions_is_refused() {
    // fio moves back only the schedule of the direction whose request found the stall due;
    // plumb's one schedule carries both directions.
    let dir = TempDir::new().unwrap();
    let drop_in = DropIn::named("fio");
    let args = [
        "--name=b",
        "--ioengine=null",
        "--size=1m",
        "--rw=randrw",
        "--rate=1m,2m",
        "--thinktime=1",
        "--rate_ignore_thinktime=1",
    ];
    let out = common::peers::run_named(&drop_in.bin(), dir.path(), &args);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (1, "", "plumb: fio option 'rate_ignore_thinktime' (value '1') is not supported yet: plumb keeps one rate schedule for all directions; fio moves back one direction's\n")
    );
    if installed(&[FIO], "apt-get install fio", "the thinktime comparison") {
        let bad = ["--name=b", "--size=64k", "--rate_ignore_thinktime=x"];
        let (theirs, ours) = common::peers::fio_and_drop_in(&[], &bad);
        assert_eq!(theirs.code, 1, "{}", theirs.stderr);
        assert_eq!(theirs, ours);
    }
}
