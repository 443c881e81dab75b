//! fio's minimum rates (`rate_min`/`ratemin`, `rate_iops_min`, `rate_cycle`) against fio
//! 3.33 on the same command lines (fio missing: plumb's side alone, a failure under CI).
//!
//! fio 3.33, measured: a minimum above the job's rate refuses the job as fio adds it
//! (`fio: minimum rate exceeds rate, ddir N` for each direction, exit status 1). A job that
//! runs below its minimum is checked from 2 s after its start, over windows of rate_cycle
//! ms: `JOB: rate_min=NB/s not met, got MB/s` (or `rate_iops_min=N not met, got M IOPS`)
//! on stderr for each direction short, the job stops and fails with err=5
//! (`func=check_min_rate`), its pid line on stdout, and fio exits with the number of failed
//! jobs. A job that keeps its minimum, or ends within 2 s, passes.

mod common;
use common::peers::{installed, run_named as run, DropIn, Printed as Ran, FIO};

use std::path::{Path, PathBuf};

use tempfile::TempDir;

fn plumb_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("plumb")
}

/// Digits as `N`: rates and pids differ from run to run.
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
/// `fio:` lines and each job block's first line up to its pid.
fn said(r: &Ran) -> (i32, Vec<String>, Vec<String>) {
    let stdout = r
        .stdout
        .lines()
        .filter_map(|l| {
            if l.starts_with("fio: ") {
                Some(mask(l))
            } else if l.contains(": (groupid=") {
                l.split(": pid=").next().map(str::to_string)
            } else {
                None
            }
        })
        .collect();
    (r.code, r.stderr.lines().map(mask).collect(), stdout)
}

/// Runs `args` under plumb's two names and fio (when installed) at once, each in a
/// directory of its own: (plumb as fio, plumb fio, fio).
fn three(args: &[&str], peer: bool) -> (Ran, Ran, Option<Ran>) {
    let drop_in = DropIn::named("fio");
    let dirs: Vec<TempDir> = (0..3).map(|_| TempDir::new().unwrap()).collect();
    let named: Vec<&str> = std::iter::once("fio").chain(args.iter().copied()).collect();
    std::thread::scope(|s| {
        let a = s.spawn(|| run(&drop_in.bin(), dirs[0].path(), args));
        let b = s.spawn(|| run(&plumb_bin(), dirs[1].path(), &named));
        let c = peer.then(|| s.spawn(|| run(Path::new(FIO), dirs[2].path(), args)));
        (
            a.join().unwrap(),
            b.join().unwrap(),
            c.map(|c| c.join().unwrap()),
        )
    })
}

#[test]
fn a_minimum_above_the_rate_is_refused_as_fio_adds_the_job() {
    let peer = installed(&[FIO], "apt-get install fio", "rate_min's refusals");
    let a = "a: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=null, iodepth=1\n...\n";
    let exceeds = |dirs: &[u8]| -> String {
        dirs.iter()
            .map(|d| format!("fio: minimum rate exceeds rate, ddir {d}\n"))
            .collect()
    };
    let cases: Vec<(&str, Vec<&str>, &str, String)> = vec![
        (
            "rate_min above rate, every direction; the job before keeps its header",
            vec![
                "--name=a",
                "--ioengine=null",
                "--size=1m",
                "--numjobs=2",
                "--name=b",
                "--ioengine=null",
                "--size=1m",
                "--rate=1m",
                "--rate_min=2m",
            ],
            a,
            exceeds(&[0, 1, 2]),
        ),
        (
            "the alias, one direction",
            vec![
                "--name=b",
                "--ioengine=null",
                "--size=1m",
                "--rate=1m,4m,",
                "--ratemin=2m,2m,",
            ],
            "",
            exceeds(&[0]),
        ),
        (
            "rate_iops_min above rate_iops",
            vec![
                "--name=b",
                "--ioengine=null",
                "--size=1m",
                "--rate_iops=10",
                "--rate_iops_min=20",
            ],
            "",
            exceeds(&[0, 1, 2]),
        ),
        (
            "both kinds of minimum",
            vec![
                "--name=b",
                "--ioengine=null",
                "--size=1m",
                "--rate_min=1k",
                "--rate_iops_min=1",
            ],
            "",
            "fio: rate and rate_iops are mutually exclusive\n".into(),
        ),
    ];
    for (label, args, stdout, stderr) in &cases {
        let (drop_in, named, theirs) = three(args, peer);
        let want = Ran {
            code: 1,
            stdout: stdout.to_string(),
            stderr: stderr.clone(),
        };
        assert_eq!(drop_in, want, "{label}: plumb as fio");
        assert_eq!(named, want, "{label}: plumb fio");
        if let Some(theirs) = theirs {
            assert_eq!(theirs, want, "{label}: fio");
        }
    }
}

#[test]
fn a_job_below_its_minimum_fails_as_fio_fails_it() {
    let peer = installed(&[FIO], "apt-get install fio", "rate_min's failure");
    // 100 ms of think time after each 4 KiB read: 40 KiB/s and 10 requests a second at
    // most, never 1 MiB/s nor 1000. Checked from 2 s, over 500 ms windows.
    let common = [
        "--name=slow",
        "--filename=f",
        "--size=1m",
        "--bs=4k",
        "--thinktime=100ms",
        "--rate_cycle=500",
        "--runtime=4",
        "--time_based",
    ];
    let failed = "slow: (groupid=0, jobs=1): err= 5 (file:backend.c:1131, func=check_min_rate, error=Input/output error)";
    let pid = "fio: pid=N, err=N/file:backend.c:N, func=check_min_rate, error=Input/output error";
    let rate_min = "slow: rate_min=NB/s not met, got NB/s";
    let cases: [(&[&str], &str); 3] = [
        (&["--ratemin=1m"], rate_min),
        (
            &["--rate_iops_min=1000"],
            "slow: rate_iops_min=N not met, got N IOPS",
        ),
        // Completions come back four at a time: the first that finds the rate short ends
        // the job, and the others are not checked again (one line).
        (
            &[
                "--rate_min=1m",
                "--ioengine=libaio",
                "--iodepth=4",
                "--thinktime_blocks=4",
            ],
            rate_min,
        ),
    ];
    // All at once: the runs mostly sleep.
    let ran: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|(min, _)| {
                let args: Vec<&str> = common.iter().chain(*min).copied().collect();
                s.spawn(move || three(&args, peer))
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for ((min, line), (drop_in, named, theirs)) in cases.into_iter().zip(ran) {
        let want = (
            1,
            vec![line.to_string()],
            vec![pid.to_string(), failed.to_string()],
        );
        assert_eq!(
            said(&drop_in),
            want,
            "{min:?}: plumb as fio\n{}",
            drop_in.stdout
        );
        assert_eq!(said(&named), want, "{min:?}: plumb fio\n{}", named.stdout);
        if let Some(theirs) = theirs {
            assert_eq!(said(&theirs), want, "{min:?}: fio\n{}", theirs.stdout);
        }
    }
}

#[test]
fn a_kept_minimum_and_the_first_two_seconds_pass() {
    let peer = installed(&[FIO], "apt-get install fio", "rate_min's checks");
    let cases: [(&str, Vec<&str>); 2] = [
        (
            "the null engine keeps 1 KiB/s in both directions",
            vec![
                "--name=ok",
                "--ioengine=null",
                "--size=1m",
                "--rw=randrw",
                "--rate_min=1k",
                "--rate_cycle=500",
                "--runtime=3",
                "--time_based",
            ],
        ),
        (
            "a job far below its minimum that ends within 2 s",
            vec![
                "--name=short",
                "--filename=f",
                "--size=1m",
                "--thinktime=100ms",
                "--rate_min=1m",
                "--runtime=1",
                "--time_based",
            ],
        ),
    ];
    for (label, args) in &cases {
        let (drop_in, named, theirs) = three(args, peer);
        for (who, r) in [
            ("plumb as fio", Some(drop_in)),
            ("plumb fio", Some(named)),
            ("fio", theirs),
        ] {
            let Some(r) = r else { continue };
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{label}: {who}");
            assert!(
                r.stdout.contains(": err= 0: pid="),
                "{label}: {who}\n{}",
                r.stdout
            );
        }
    }
}
