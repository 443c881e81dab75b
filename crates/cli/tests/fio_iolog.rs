//! fio's iolog: `write_iolog` against Debian's fio 3.33 on the same jobs (the lines each
//! thread logs, stamps aside), and plumb's own expectations where fio has nothing to
//! compare (a log that cannot be opened).

mod common;
use common::peers::{installed, run_named as run_in, DropIn, FIO};

use std::path::Path;
use tempfile::TempDir;

fn peer() -> bool {
    installed(&[FIO], "apt-get install fio", "the iolog comparison")
}

/// Each thread's part of an iolog (from its "fio version 3 iolog" line to the next), with
/// the stamps taken off, sorted: clones append to one log in the order they end.
fn sections(log: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in log.lines() {
        if line == "fio version 3 iolog" {
            out.push(Vec::new());
            continue;
        }
        let (stamp, rest) = line.split_once(' ').expect(line);
        assert!(stamp.parse::<u64>().is_ok(), "no stamp: {line}");
        out.last_mut()
            .expect("a header first")
            .push(rest.to_string());
    }
    out.sort();
    out
}

/// The log `args` write (as `log`, in a fresh directory with `dirs` made) under `bin`.
fn logged(bin: &Path, args: &[&str], dirs: &[&str]) -> String {
    let work = TempDir::new().unwrap();
    for d in dirs {
        std::fs::create_dir(work.path().join(d)).unwrap();
    }
    let mut a = args.to_vec();
    a.extend(["--write_iolog=log", "--output=/dev/null"]);
    let out = run_in(bin, work.path(), &a);
    assert_eq!(out.code, 0, "{bin:?} {args:?}: {}", out.stderr);
    std::fs::read_to_string(work.path().join("log")).unwrap()
}

fn same_log(args: &[&str], dirs: &[&str]) {
    let drop_in = DropIn::named("fio");
    let fio = sections(&logged(Path::new(FIO), args, dirs));
    let plumb = sections(&logged(&drop_in.bin(), args, dirs));
    assert!(!fio.is_empty() && fio.iter().all(|s| !s.is_empty()));
    assert_eq!(fio, plumb, "{args:?}");
}

#[test]
fn write_iolog_logs_each_request_and_file_event_as_fio_does() {
    if !peer() {
        return;
    }
    // Files added, opened at their first request of each round, closed at its end; syncs
    // with the offset of the request before them, including the one that starts round 2.
    same_log(
        &[
            "--name=a",
            "--filename=f1:f2",
            "--size=64k",
            "--bs=16k",
            "--rw=write",
            "--fsync=2",
            "--loops=2",
        ],
        &[],
    );
    // Two clones append to one log, each its own section.
    same_log(
        &[
            "--name=b",
            "--nrfiles=2",
            "--size=64k",
            "--bs=16k",
            "--rw=read",
            "--numjobs=2",
        ],
        &[],
    );
    // The read-back of verify, and names under a directory as fio spells them.
    same_log(
        &[
            "--name=c",
            "--size=32k",
            "--bs=16k",
            "--rw=write",
            "--verify=crc32c",
            "--directory=d",
        ],
        &["d"],
    );
    // fio's own t0007 job, smaller: holes between the requests.
    same_log(
        &[
            "--name=t",
            "--size=16m",
            "--rw=read:512k",
            "--bs=1m",
            "--norandommap",
        ],
        &[],
    );
    // Queued requests are logged as they are queued.
    same_log(
        &[
            "--name=q",
            "--size=256k",
            "--bs=16k",
            "--rw=read",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        &[],
    );
}

#[test]
fn write_iolog_appends_and_a_log_that_cannot_be_opened_fails_the_job_in_one_line() {
    let drop_in = DropIn::named("fio");
    let work = TempDir::new().unwrap();
    let args = [
        "--name=a",
        "--size=32k",
        "--bs=16k",
        "--rw=read",
        "--write_iolog=log",
        "--output=/dev/null",
    ];
    for _ in 0..2 {
        let out = run_in(&drop_in.bin(), work.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let log = std::fs::read_to_string(work.path().join("log")).unwrap();
    let s = sections(&log);
    let one = [
        "a.0.0 add",
        "a.0.0 open",
        "a.0.0 read 0 16384",
        "a.0.0 read 16384 16384",
        "a.0.0 close",
    ];
    assert_eq!(s, vec![one.to_vec(), one.to_vec()]);

    let out = run_in(
        &drop_in.bin(),
        work.path(),
        &[
            "--name=a",
            "--size=32k",
            "--rw=read",
            "--write_iolog=no/such/log",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let said: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("write_iolog"))
        .collect();
    assert_eq!(said.len(), 1, "{}", out.stderr);
    assert!(
        said[0].contains("/no/such/log: No such file or directory"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}
