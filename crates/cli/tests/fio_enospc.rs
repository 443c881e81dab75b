//! A full disk under a fio job that does not ask to fill it (no fill_device), against fio
//! 3.33 on the same command lines on a 4 MiB tmpfs mounted for the test (root only: skipped
//! elsewhere, a failure under CI; fio missing: plumb's side alone, a failure under CI).
//!
//! fio 3.33, measured: a job that reads has its file written in full before the run; on
//! ENOSPC it prints `fio: ENOSPC on laying out file, stopping` (stdout) and `fio: pid=0,
//! err=28/file:filesetup.c:240, func=write, error=No space left on device` (stderr), and the
//! job does not run. A job that only writes runs (its failed fallocate is silent) until a
//! write fails: `fio: io_u error on file <f>: No space left on device: write offset=<o>,
//! buflen=<n>` on stderr for every request that failed (libaio at iodepth=4: four), `fio:
//! pid=<p>, err=28/file:io_u.c:1876, func=io_u error, error=No space left on device` on stdout,
//! `err=28 (file:io_u.c:1876, ...)` in its block, the failed writes counted as issued. A write
//! the filesystem takes only part of is counted short and its rest goes out again (and
//! fails). Either
//! way the other jobs run and are reported, and fio exits with the number of failed jobs.
//!
//! Under the name `fio` plumb prints the same lines; under its own name one line per failed
//! job, naming the file.

mod common;
use common::fio_text::mask_pid;
use common::peers::{installed, run_named as run, DropIn, Printed as Ran, FIO};
use common::small_fs::SmallFs;

use std::path::Path;

use tempfile::TempDir;

/// What fio and plumb must agree on: the exit status, every stderr line, and on stdout the
/// `fio:` lines, each job block's first line up to its pid, the issued and short counts and
/// the group
/// titles (pids masked).
#[derive(Debug, PartialEq)]
struct Said {
    code: i32,
    stderr: Vec<String>,
    stdout: Vec<String>,
}

fn said(r: &Ran) -> Said {
    let stdout = r
        .stdout
        .lines()
        .filter_map(|l| {
            if l.starts_with("fio: ") || l.starts_with("Run status group") {
                Some(mask_pid(l))
            } else if l.contains(": (groupid=") {
                l.split(": pid=").next().map(str::to_string)
            } else {
                l.trim()
                    .strip_prefix("issued rwts: total=")
                    .map(|t| t.split(' ').take(2).collect::<Vec<_>>().join(" "))
            }
        })
        .collect();
    Said {
        code: r.code,
        stderr: r.stderr.lines().map(mask_pid).collect(),
        stdout,
    }
}

fn args(fs: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    a.insert(1, format!("--directory={}", fs.display()));
    a
}

/// Whether the tmpfs takes O_DIRECT (Linux 6.6 and later).
fn direct_works(fs: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let p = fs.join("direct-probe");
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .is_ok();
    let _ = std::fs::remove_file(&p);
    ok
}

const FULL: &str = "No space left on device";

/// fio's error line for the write at `offset` of job `a`'s file in `fs`.
fn io_u_line(fs: &Path, offset: u64) -> String {
    io_u_line_of(fs, offset, 4096)
}

/// fio's error line for a write of `len` bytes at `offset` of job `a`'s file in `fs`.
fn io_u_line_of(fs: &Path, offset: u64, len: u64) -> String {
    format!(
        "fio: io_u error on file {}/a.0.0: {FULL}: write offset={offset}, buflen={len}",
        fs.display()
    )
}

#[test]
fn a_full_disk_fails_the_job_as_fio_says_it() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let peer = installed(&[FIO], "apt-get install fio", "the full-disk comparison");
    let drop_in = DropIn::named("fio");
    let dir = fs.path();
    let run_err =
        format!("a: (groupid=0, jobs=1): err=28 (file:io_u.c:1876, func=io_u error, error={FULL})");
    let pid_line = format!("fio: pid=P, err=28/file:io_u.c:1876, func=io_u error, error={FULL}");
    let four: Vec<String> = (0..4)
        .map(|k| io_u_line(dir, (4 << 20) + k * 4096))
        .collect();
    let mut cases: Vec<(&str, Vec<&str>, Said)> = vec![
        (
            "a job that reads: its layout fills the disk",
            vec!["--name=a", "--rw=read", "--size=8m"],
            Said {
                code: 1,
                stderr: vec![format!(
                    "fio: pid=0, err=28/file:filesetup.c:240, func=write, error={FULL}"
                )],
                stdout: vec![
                    "fio: ENOSPC on laying out file, stopping".into(),
                    "Run status group 0 (all jobs):".into(),
                ],
            },
        ),
        (
            "psync, buffered",
            vec!["--name=a", "--rw=write", "--size=8m"],
            Said {
                code: 1,
                stderr: vec![io_u_line(dir, 4 << 20)],
                stdout: vec![
                    pid_line.clone(),
                    run_err.clone(),
                    "0,1025,0,0 short=0,0,0,0".into(),
                    "Run status group 0 (all jobs):".into(),
                ],
            },
        ),
        (
            "libaio at iodepth=4: every request in flight fails",
            vec![
                "--name=a",
                "--rw=write",
                "--size=8m",
                "--ioengine=libaio",
                "--iodepth=4",
            ],
            Said {
                code: 1,
                stderr: four.clone(),
                stdout: vec![
                    pid_line.clone(),
                    run_err.clone(),
                    "0,1028,0,0 short=0,0,0,0".into(),
                    "Run status group 0 (all jobs):".into(),
                ],
            },
        ),
        (
            "a block size that does not divide the space: the write that fills it is short, \
             its rest goes out again and fails",
            vec!["--name=a", "--rw=write", "--size=8m", "--bs=12k"],
            Said {
                code: 1,
                stderr: vec![io_u_line_of(dir, 4 << 20, 8192)],
                stdout: vec![
                    pid_line.clone(),
                    run_err.clone(),
                    "0,343,0,0 short=0,1,0,0".into(),
                    "Run status group 0 (all jobs):".into(),
                ],
            },
        ),
        (
            "the same at iodepth=4: the rest fails after the writes already in flight",
            vec![
                "--name=a",
                "--rw=write",
                "--size=8m",
                "--bs=12k",
                "--ioengine=libaio",
                "--iodepth=4",
            ],
            Said {
                code: 1,
                stderr: [1, 2, 3]
                    .iter()
                    .map(|k| io_u_line_of(dir, (4 << 20) + 8192 + (k - 1) * 12288, 12288))
                    .chain([io_u_line_of(dir, 4 << 20, 8192)])
                    .collect(),
                stdout: vec![
                    pid_line.clone(),
                    run_err.clone(),
                    "0,346,0,0 short=0,1,0,0".into(),
                    "Run status group 0 (all jobs):".into(),
                ],
            },
        ),
    ];
    if direct_works(dir) {
        for (label, engine, issued, stderr) in [
            (
                "psync, direct=1",
                "--ioengine=psync",
                "0,1025,0,0 short=0,0,0,0",
                vec![io_u_line(dir, 4 << 20)],
            ),
            (
                "libaio, direct=1",
                "--ioengine=libaio",
                "0,1028,0,0 short=0,0,0,0",
                four.clone(),
            ),
        ] {
            cases.push((
                label,
                vec![
                    "--name=a",
                    "--rw=write",
                    "--size=8m",
                    "--direct=1",
                    engine,
                    "--iodepth=4",
                ],
                Said {
                    code: 1,
                    stderr,
                    stdout: vec![
                        pid_line.clone(),
                        run_err.clone(),
                        issued.into(),
                        "Run status group 0 (all jobs):".into(),
                    ],
                },
            ));
        }
    } else {
        eprintln!("direct=1 cases skipped: this tmpfs refuses O_DIRECT (Linux before 6.6)");
    }
    for (label, a, want) in &cases {
        let a = args(dir, a);
        let ours = run(&drop_in.bin(), dir, &a);
        assert!(
            !ours.stderr.contains("panicked"),
            "{label}: {}",
            ours.stderr
        );
        assert_eq!(said(&ours), *want, "{label}: plumb as fio\n{}", ours.stdout);
        let left = std::fs::metadata(dir.join("a.0.0")).unwrap().len();
        fs.clear();
        if peer {
            let theirs = run(Path::new(FIO), dir, &a);
            assert_eq!(said(&theirs), said(&ours), "{label}: fio and plumb");
            assert_eq!(
                std::fs::metadata(dir.join("a.0.0")).unwrap().len(),
                left,
                "{label}: the file fio leaves"
            );
            fs.clear();
        }
    }
}

/// The job that fills the disk fails alone: the next group runs and is reported, and the
/// exit status counts the failed job.
#[test]
fn the_other_jobs_run_and_are_reported() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let peer = installed(&[FIO], "apt-get install fio", "the full-disk comparison");
    let drop_in = DropIn::named("fio");
    let other = TempDir::new().unwrap();
    for rw in ["read", "write"] {
        let a: Vec<String> = vec![
            "--name=a".into(),
            format!("--directory={}", fs.path().display()),
            format!("--rw={rw}"),
            "--size=8m".into(),
            "--name=b".into(),
            "--stonewall".into(),
            format!("--directory={}", other.path().display()),
            "--rw=write".into(),
            "--size=1m".into(),
        ];
        let mut seen = Vec::new();
        let mut bins = vec![drop_in.bin()];
        if peer {
            bins.push(FIO.into());
        }
        for bin in &bins {
            let r = run(bin, fs.path(), &a);
            assert_eq!(r.code, 1, "{bin:?} rw={rw}: {}", r.stderr);
            let s = said(&r);
            assert!(
                s.stdout
                    .contains(&"b: (groupid=1, jobs=1): err= 0".to_string()),
                "{bin:?} rw={rw}: {}",
                r.stdout
            );
            assert!(s
                .stdout
                .contains(&"Run status group 1 (all jobs):".to_string()));
            assert_eq!(s.stderr.len(), 1, "{bin:?} rw={rw}: {}", r.stderr);
            assert_eq!(
                std::fs::metadata(other.path().join("b.0.0")).unwrap().len(),
                1 << 20
            );
            seen.push(s);
            fs.clear();
            std::fs::remove_file(other.path().join("b.0.0")).unwrap();
        }
        if let [ours, theirs] = &seen[..] {
            assert_eq!(ours, theirs, "rw={rw}: plumb and fio");
        }
    }
}

/// Under plumb's own name: fio's report, and one line on stderr per failed job, naming the
/// file and the problem.
#[test]
fn under_plumbs_name_one_line_names_the_file() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let plumb = assert_cmd::cargo::cargo_bin("plumb");
    let dir = fs.path();
    for (rw, engine, line) in [
        ("write", "psync", io_u_line(dir, 4 << 20)),
        ("write", "libaio", io_u_line(dir, 4 << 20)),
        (
            "read",
            "psync",
            format!(
                "fio: job a: cannot write {}/a.0.0 while laying it out: {FULL}",
                dir.display()
            ),
        ),
    ] {
        let mut a = args(
            dir,
            &[
                "--name=a",
                &format!("--rw={rw}"),
                "--size=8m",
                &format!("--ioengine={engine}"),
                "--iodepth=4",
            ],
        );
        a.insert(0, "fio".into());
        let r = run(&plumb, dir, &a);
        assert_eq!(r.code, 1, "{rw} {engine}: {}", r.stderr);
        assert_eq!(r.stderr, format!("{line}\n"), "{rw} {engine}");
        assert!(
            r.stdout.contains("Run status group 0 (all jobs):"),
            "{}",
            r.stdout
        );
        if rw == "write" {
            assert!(
                r.stdout.contains("err=28 (file:io_u.c:1876"),
                "{}",
                r.stdout
            );
        }
        fs.clear();
    }
}

/// A JSON report stays a pure JSON document (fio 3.33 prints its `fio: ENOSPC ...` and
/// `fio: pid=...` lines on stdout before it): the failed jobs carry fio's `error`.
#[test]
fn a_json_report_stays_json() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let drop_in = DropIn::named("fio");
    let dir = fs.path();
    for (rw, issued) in [("read", 0), ("write", 1025)] {
        let a = args(
            dir,
            &[
                "--name=a",
                &format!("--rw={rw}"),
                "--size=8m",
                "--output-format=json",
            ],
        );
        let r = run(&drop_in.bin(), dir, &a);
        assert_eq!(r.code, 1, "{rw}: {}", r.stderr);
        let doc: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{rw}: not JSON ({e}): {}", r.stdout));
        let job = &doc["jobs"][0];
        assert_eq!(job["jobname"], "a");
        assert_eq!(job["error"], 28, "{rw}");
        assert_eq!(job["write"]["total_ios"], issued, "{rw}");
        fs.clear();
    }
}

/// exitall_on_error: the job that fails on the full disk stops the other job of its group,
/// a time-based one that would run for a minute, in fio and in plumb alike; without it the
/// other job runs on (here cut short by its own exitall once it is done: 1 MiB, read once).
#[test]
fn exitall_on_error_stops_the_group_when_a_job_fails() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let peer = installed(&[FIO], "apt-get install fio", "the full-disk comparison");
    let other = TempDir::new().unwrap();
    std::fs::write(other.path().join("r"), vec![7u8; 1 << 20]).unwrap();
    let job = |on_error: bool| -> Vec<String> {
        let mut a: Vec<String> = vec![
            "--name=a".into(),
            format!("--filename={}", fs.path().join("w").display()),
            "--rw=write".into(),
            "--size=8m".into(),
            "--create_on_open=1".into(),
        ];
        if on_error {
            a.push("--exitall_on_error".into());
        }
        a.extend([
            "--name=b".to_string(),
            format!("--filename={}", other.path().join("r").display()),
            "--rw=read".into(),
            "--size=1m".into(),
            "--time_based".into(),
            "--runtime=60".into(),
        ]);
        a
    };
    let drop_in = DropIn::named("fio");
    let mut bins = vec![drop_in.bin()];
    if peer {
        bins.push(FIO.into());
    }
    for bin in &bins {
        let started = std::time::Instant::now();
        let r = run(bin, fs.path(), &job(true));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(50),
            "{bin:?}: b ran its minute"
        );
        assert_eq!(r.code, 1, "{bin:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("a: (groupid=0, jobs=1): err=28"),
            "{bin:?}: {}",
            r.stdout
        );
        // fio terminates b even before b has started when a fails quickly, and then has no
        // block for it (1 run in 15 here); plumb's b may miss its start too on a loaded
        // machine (seen once under CI). A block b has says it did not fail itself.
        if r.stdout.contains("\nb: (groupid=0") {
            assert!(
                r.stdout.contains("b: (groupid=0, jobs=1): err= 0"),
                "{}",
                r.stdout
            );
        }
        fs.clear();
    }
    // Without it, b is not stopped by a's failure: its run lasts its minute. Checked on
    // plumb's side only with a short runtime, so that the test stays short.
    let mut quiet = job(false);
    let last = quiet.len() - 1;
    quiet[last] = "--runtime=2".into();
    let started = std::time::Instant::now();
    let r = run(&drop_in.bin(), fs.path(), &quiet);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
}
