//! fio's `max_latency` against fio 3.33 on the same command lines (fio missing: plumb's side
//! alone, a failure under CI).
//!
//! fio 3.33, measured: values are microseconds, one per direction as `bs` takes them; the
//! first read or write over its maximum prints `fio: latency of N nsec exceeds specified max
//! (M nsec): FILE DIR OFFSET LENGTH` on stderr, the job stops with err=110 (`func=max latency
//! exceeded`), its pid line on stdout, the request counted, exit status 1. A maximum only
//! for the other direction never fails the job; a bad value is refused as fio parses it.
//!
//! The requests are O_DIRECT writes to a file on the disk: each takes tens of microseconds,
//! far over the 1 µs maximum, so the first one fails the job in both programs.

mod common;
use common::peers::{installed, run_named as run, DropIn, Printed, FIO};

use std::path::Path;

/// Digits as `N`: latencies, offsets and pids differ from run to run.
fn mask(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What fio and plumb must agree on: the exit status, every stderr line, and on stdout the
/// `fio:` lines, each job block's first line up to its pid, and the issued counts.
fn said(r: &Printed) -> (i32, Vec<String>, Vec<String>) {
    let stdout = r
        .stdout
        .lines()
        .filter_map(|l| {
            if l.starts_with("fio: ") {
                Some(mask(l))
            } else if l.contains(": (groupid=") {
                l.split(": pid=").next().map(str::to_string)
            } else if l.trim_start().starts_with("issued rwts:") {
                Some(l.trim().to_string())
            } else {
                None
            }
        })
        .collect();
    (r.code, r.stderr.lines().map(mask).collect(), stdout)
}

fn both(args: &[&str], peer: bool) -> (Printed, Option<Printed>) {
    let drop_in = DropIn::named("fio");
    let dirs: Vec<_> = (0..2)
        .map(|_| tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap())
        .collect();
    let ours = run(&drop_in.bin(), dirs[0].path(), args);
    let theirs = peer.then(|| run(Path::new(FIO), dirs[1].path(), args));
    (ours, theirs)
}

#[test]
fn the_first_request_over_the_maximum_fails_the_job_as_in_fio() {
    let peer = installed(&[FIO], "apt-get install fio", "max_latency's failure");
    let base = [
        "--name=t",
        "--filename=data",
        "--size=64k",
        "--bs=4k",
        "--ioengine=psync",
        "--direct=1",
    ];
    let failed = (
        1,
        vec!["fio: latency of N nsec exceeds specified max (N nsec): data write N N".to_string()],
        vec![
            "fio: pid=N, err=N/file:io_u.c:N, func=max latency exceeded, error=Connection timed out".to_string(),
            "t: (groupid=0, jobs=1): err=110 (file:io_u.c:1432, func=max latency exceeded, error=Connection timed out)".to_string(),
            "issued rwts: total=0,1,0,0 short=0,0,0,0 dropped=0,0,0,0".to_string(),
        ],
    );
    let passed = |issued: &str| {
        (
            0,
            Vec::<String>::new(),
            vec![
                "t: (groupid=0, jobs=1): err= 0".to_string(),
                format!("issued rwts: total={issued} short=0,0,0,0 dropped=0,0,0,0"),
            ],
        )
    };
    let cases: [(&[&str], _); 4] = [
        (&["--rw=write", "--max_latency=1"], failed.clone()),
        (&["--rw=write", "--max_latency=5s,1"], failed),
        (&["--rw=write", "--max_latency=1,"], passed("0,16,0,0")),
        (&["--rw=read", "--max_latency=,1"], passed("16,0,0,0")),
    ];
    for (extra, want) in cases {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (ours, theirs) = both(&args, peer);
        assert_eq!(said(&ours), want, "plumb {extra:?}:\n{}", ours.stdout);
        if let Some(theirs) = theirs {
            assert_eq!(said(&theirs), want, "fio {extra:?}:\n{}", theirs.stdout);
        }
    }
}

#[test]
fn a_bad_maximum_is_refused_as_fio_refuses_it() {
    let peer = installed(&[FIO], "apt-get install fio", "max_latency's refusal");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=64k",
        "--max_latency=abc",
    ];
    let (ours, theirs) = both(&args, peer);
    assert_eq!(ours.code, 1);
    assert!(ours.stdout.is_empty(), "{}", ours.stdout);
    assert_eq!(ours.stderr, "fio: failed parsing max_latency=abc\n");
    if let Some(theirs) = theirs {
        assert_eq!(ours, theirs);
    }
}
