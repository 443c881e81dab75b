//! fio's `wait_for=NAME` against fio 3.33 on the same job files (fio or strace missing:
//! plumb's side alone, a failure under CI).
//!
//! fio 3.33, measured: a job with wait_for starts once every clone of the job named NAME has
//! ended; the jobs after it are not held back, and it opens no reporting group (its header
//! says the group of the jobs before it). A NAME that names the job itself, no earlier job,
//! or several earlier jobs refuses the job as fio adds it: the header lines of the jobs added
//! before it on stdout, one message on stderr, exit status 1.

mod common;
use common::peers::{installed, run_named as run, traced, DropIn, FIO, STRACE};

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

fn plumb_bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("plumb")
}

/// a is slow (20 requests a second for 1.6 s); b waits for it, g does not; d waits for both
/// clones of c, which a new_group puts in reporting group 1; f waits for e, which a
/// stonewall puts in group 2 and in a later run.
const JOBS: &str = "[global]\nbs=4k\nrw=read\nsize=128k\n\
[a]\nrate_iops=20\n\
[b]\nwait_for=a\n\
[g]\n\
[c]\nnew_group\nnumjobs=2\n\
[d]\nwait_for=c\n\
[e]\nstonewall\n\
[f]\nwait_for=e\n";

/// The lines that say how jobs are grouped: headers up to their settings, each job block's
/// first line up to its pid, and the group titles.
fn grouping(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| {
            if l.contains(": (g=") {
                l.split(" rw=").next().map(str::to_string)
            } else if l.contains(": (groupid=") {
                l.split(": pid=").next().map(str::to_string)
            } else if l.starts_with("Run status group") || l == "..." {
                Some(l.to_string())
            } else {
                None
            }
        })
        .collect()
}

/// The order of the trace's reads: for each file (`a.0.0`), the line numbers of its first
/// and last pread64.
fn reads(trace: &str) -> std::collections::HashMap<String, (usize, usize)> {
    let mut at = std::collections::HashMap::new();
    for (n, l) in trace.lines().enumerate() {
        let Some(rest) = l.split("pread64(").nth(1) else {
            continue;
        };
        let Some(file) = rest
            .split('<')
            .nth(1)
            .and_then(|p| p.split('>').next())
            .and_then(|p| p.rsplit('/').next())
        else {
            continue;
        };
        if file.ends_with(".0") {
            at.entry(file.to_string())
                .and_modify(|e: &mut (usize, usize)| e.1 = n)
                .or_insert((n, n));
        }
    }
    at
}

/// What wait_for must show in a trace: each waiting job reads only after the last read of
/// every clone it waits for, and a job that does not wait reads before the waiting one.
fn check_order(who: &str, trace: &str) {
    let at = reads(trace);
    let get = |f: &str| {
        *at.get(f)
            .unwrap_or_else(|| panic!("{who}: no read of {f}: {at:?}"))
    };
    assert!(get("a.0.0").1 < get("b.0.0").0, "{who}: b before a ended");
    for c in ["c.0.0", "c.1.0"] {
        assert!(get(c).1 < get("d.0.0").0, "{who}: d before {c} ended");
    }
    assert!(get("e.0.0").1 < get("f.0.0").0, "{who}: f before e ended");
    // g runs beside a (a takes 1.6 s), not after b.
    assert!(get("g.0.0").0 < get("b.0.0").0, "{who}: g held back");
}

#[test]
fn a_job_starts_when_every_clone_it_waits_for_has_ended_in_its_reporting_group() {
    let peer = installed(
        &[FIO, STRACE],
        "apt-get install fio strace",
        "wait_for's order",
    );
    let want = [
        "a: (g=0):",
        "b: (g=0):",
        "g: (g=0):",
        "c: (g=1):",
        "...",
        "d: (g=1):",
        "e: (g=2):",
        "f: (g=2):",
        "a: (groupid=0, jobs=1): err= 0",
        "b: (groupid=0, jobs=1): err= 0",
        "g: (groupid=0, jobs=1): err= 0",
        "c: (groupid=1, jobs=1): err= 0",
        "c: (groupid=1, jobs=1): err= 0",
        "d: (groupid=1, jobs=1): err= 0",
        "e: (groupid=2, jobs=1): err= 0",
        "f: (groupid=2, jobs=1): err= 0",
        "Run status group 0 (all jobs):",
        "Run status group 1 (all jobs):",
        "Run status group 2 (all jobs):",
    ];
    let drop_in = DropIn::named("fio");
    let mut bins = vec![("plumb as fio", drop_in.bin())];
    if peer {
        bins.push(("fio", FIO.into()));
    }
    for (who, bin) in bins {
        let d = TempDir::new().unwrap();
        let work = d.path().join("w");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join("j.fio"), JOBS).unwrap();
        let (out, trace) = if Path::new(STRACE).exists() {
            traced(
                &bin,
                &work,
                &d.path().join("trace"),
                "pread64",
                true,
                &["j.fio"],
            )
        } else {
            let out = Command::new(&bin)
                .arg("j.fio")
                .current_dir(&work)
                .output()
                .unwrap();
            (out, String::new())
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(grouping(&stdout), want, "{who}\n{stdout}");
        if !trace.is_empty() {
            check_order(who, &trace);
        }
    }
    // Under plumb's own name the groups are the same.
    let d = TempDir::new().unwrap();
    std::fs::write(d.path().join("j.fio"), JOBS).unwrap();
    let ours = run(&plumb_bin(), d.path(), &["fio", "j.fio"]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(grouping(&ours.stdout), want);
}

#[test]
fn a_wait_fio_cannot_keep_refuses_the_job_in_fio_s_words() {
    let peer = installed(&[FIO], "apt-get install fio", "wait_for's refusals");
    let drop_in = DropIn::named("fio");
    let header = |name: &str| {
        format!("{name}: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=null, iodepth=1\n")
    };
    let job = |name: &str, extra: &str| format!("[{name}]\nioengine=null\nsize=1m\n{extra}");
    let cases: Vec<(&str, String, String, &str)> = vec![
        (
            "unknown",
            job("a", "") + &job("b", "wait_for=x\n"),
            header("a"),
            "b: waitee job x unknown.\n",
        ),
        (
            "named later",
            job("b", "wait_for=a\n") + &job("a", ""),
            String::new(),
            "b: waitee job a unknown.\n",
        ),
        (
            "itself",
            job("a", "numjobs=2\n") + &job("b", "wait_for=b\n"),
            header("a") + "...\n",
            "b: a job cannot wait for itself (wait_for=b).\n",
        ),
        (
            "two of the name",
            job("a", "") + &job("a", "") + &job("b", "wait_for=a\n"),
            header("a") + &header("a"),
            "b: multiple waitees a found,\nplease avoid duplicates when using wait_for option.\n",
        ),
    ];
    for (label, file, stdout, stderr) in &cases {
        let d = TempDir::new().unwrap();
        std::fs::write(d.path().join("j.fio"), file).unwrap();
        let ours = run(&drop_in.bin(), d.path(), &["j.fio"]);
        assert_eq!(
            (ours.code, ours.stdout.as_str(), ours.stderr.as_str()),
            (1, stdout.as_str(), *stderr),
            "{label}"
        );
        let named = run(&plumb_bin(), d.path(), &["fio", "j.fio"]);
        assert_eq!(
            (named.code, named.stdout.as_str(), named.stderr.as_str()),
            (1, stdout.as_str(), *stderr),
            "{label}: plumb fio"
        );
        // No header lines in a JSON run.
        let json = run(&drop_in.bin(), d.path(), &["--output-format=json", "j.fio"]);
        assert_eq!(
            (json.code, json.stdout.as_str(), json.stderr.as_str()),
            (1, "", *stderr),
            "{label}: json"
        );
        if peer {
            let theirs = run(Path::new(FIO), d.path(), &["j.fio"]);
            assert_eq!(
                (theirs.code, theirs.stdout.as_str(), theirs.stderr.as_str()),
                (1, stdout.as_str(), *stderr),
                "{label}: fio"
            );
        }
    }
    // Jobs that wait for each other: fio 3.33 waits for ever; plumb refuses them.
    let d = TempDir::new().unwrap();
    let file = job("a", "") + &job("b", "wait_for=a\n") + &job("a", "wait_for=b\n");
    std::fs::write(d.path().join("j.fio"), file).unwrap();
    let ours = run(&drop_in.bin(), d.path(), &["j.fio"]);
    assert_eq!(
        (ours.code, ours.stdout.as_str(), ours.stderr.as_str()),
        (1, "", "plumb: fio option 'wait_for' (value 'a') is not supported yet: jobs that wait for each other (fio 3.33 never starts them)\n")
    );
    // The command line's jobs too.
    let args = [
        "--name=a",
        "--ioengine=null",
        "--size=1m",
        "--name=b",
        "--ioengine=null",
        "--size=1m",
        "--wait_for=c",
    ];
    let d = TempDir::new().unwrap();
    let ours = run(&drop_in.bin(), d.path(), &args);
    assert_eq!(
        (ours.code, ours.stdout.as_str(), ours.stderr.as_str()),
        (1, header("a").as_str(), "b: waitee job c unknown.\n")
    );
    if peer {
        let theirs = run(Path::new(FIO), d.path(), &args);
        assert_eq!(
            (theirs.code, theirs.stdout, theirs.stderr),
            (ours.code, ours.stdout, ours.stderr)
        );
    }
}
