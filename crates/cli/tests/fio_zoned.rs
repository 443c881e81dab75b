//! `random_distribution=zoned:...`, `zoned_abs:...` and `percentage_random`, against
//! Debian's fio 3.33 (/usr/bin/fio): the same seeded job run by fio and by plumb through a
//! symlink named `fio`, each in a fresh directory, the offsets of its requests read off
//! strace. plumb's random stream is not fio's, so the random jobs are compared by what the
//! options promise: each zone's share of the requests, with bounds of many standard
//! deviations (these tests cannot flake), nothing outside the zones, the share of requests
//! that go on from the previous one. Where no draw decides (a direction never drawn, a
//! sequential job, a time-based job starting its file over) the offsets must be fio's
//! exactly. Bad values must fail with fio's very lines and exit code.
//!
//! Without fio or strace the comparisons are skipped with a message, except under CI.

mod common;
use common::peers::{DropIn, FIO, STRACE};

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

fn tools() -> bool {
    common::peers::fio_and_strace("the zoned distribution comparison")
}

fn fio_named(bin: &Path) -> Command {
    let mut cmd = Command::new(bin);
    if bin.ends_with("fio") {
        cmd.arg0("fio");
    }
    cmd
}

/// One request on the job's file `f`: direction (`r`, `w`, `drop`) and offset.
type Call = (&'static str, u64);

/// The calls `bin args` makes on the file `f` in a fresh directory, in order, after a first
/// untraced run has laid the file out.
fn calls(bin: &Path, args: &[&str]) -> Vec<Call> {
    let dir = TempDir::new().unwrap();
    let prep = fio_named(bin)
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        prep.status.success(),
        "{} {args:?}: {}",
        bin.display(),
        String::from_utf8_lossy(&prep.stderr)
    );
    let log = dir.path().join("trace");
    let mut cmd = Command::new(STRACE);
    cmd.args(["-f", "-qq", "-y", "-s", "0", "-e"])
        .arg("trace=pread64,pwrite64,fadvise64")
        .arg("-o")
        .arg(&log)
        .arg(bin);
    let out = cmd.args(args).current_dir(dir.path()).output().unwrap();
    assert!(
        out.status.success(),
        "strace {} {args:?}: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = common::strace::whole_calls(&std::fs::read_to_string(&log).unwrap());
    let file = format!("{}/f>", dir.path().canonicalize().unwrap().display());
    let mut v = Vec::new();
    for line in text.lines().filter(|l| l.contains(&file)) {
        let Some((head, args)) = line.split_once('(') else {
            continue;
        };
        let args: Vec<&str> = args
            .rsplit_once(") =")
            .map_or(args, |(a, _)| a)
            .split(", ")
            .collect();
        let call = match head.rsplit(' ').next() {
            Some("pread64") => "r",
            Some("pwrite64") => "w",
            Some("fadvise64") if args.last() == Some(&"POSIX_FADV_DONTNEED") => "drop",
            _ => continue,
        };
        let offset = if call == "drop" { args[1] } else { args[3] };
        v.push((call, offset.trim().parse().unwrap()));
    }
    v
}

/// fio's and plumb's calls for the same job.
fn both(args: &[&str]) -> Option<(Vec<Call>, Vec<Call>)> {
    if !tools() {
        return None;
    }
    let drop_in = DropIn::named("fio");
    Some((calls(Path::new(FIO), args), calls(&drop_in.bin(), args)))
}

fn offsets(calls: &[Call], dir: &str) -> Vec<u64> {
    calls.iter().filter(|c| c.0 == dir).map(|c| c.1).collect()
}

/// The share of `offs` whose 4 KiB block falls in `blocks`.
fn share(offs: &[u64], blocks: std::ops::Range<u64>) -> f64 {
    offs.iter()
        .filter(|&&o| blocks.contains(&(o / 4096)))
        .count() as f64
        / offs.len() as f64
}

/// 1024 blocks of 4 KiB read 4096 times at random, without a map (as fio keeps none for a
/// zoned distribution).
fn random_reads(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = vec![
        "--name=z",
        "--filename=f",
        "--size=4m",
        "--io_size=16m",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=psync",
        "--randseed=7",
    ];
    v.extend_from_slice(extra);
    v
}

#[test]
fn each_zone_gets_its_share_of_the_requests() {
    let args = random_reads(&["--random_distribution=zoned:60/10:30/20:10/70"]);
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    for (who, calls) in [("fio", &theirs), ("plumb", &ours)] {
        let offs = offsets(calls, "r");
        assert_eq!(offs.len(), 4096, "{who}");
        assert!(
            offs.iter().all(|o| o.is_multiple_of(4096) && *o < 4 << 20),
            "{who}"
        );
        // fio's zones over 1024 blocks: [0, 102), [102, 306), [307, 1023); its rounding
        // leaves blocks 306 and 1023 out. A share's standard deviation is at most 0.008
        // over 4096 requests: ±0.06 is more than seven of them.
        for (blocks, want) in [(0..102, 0.6), (102..306, 0.3), (307..1023, 0.1)] {
            let got = share(&offs, blocks.clone());
            assert!((got - want).abs() < 0.06, "{who}: {got} in {blocks:?}");
        }
        assert_eq!(
            share(&offs, 306..307) + share(&offs, 1023..1024),
            0.0,
            "{who}"
        );
        // Uniform inside a zone: both halves of the first one get about half of it.
        let (a, b) = (share(&offs, 0..51), share(&offs, 51..102));
        assert!((a - b).abs() < 0.1, "{who}: {a} and {b}");
    }
}

#[test]
fn absolute_zones_hold_every_request() {
    let args = random_reads(&["--random_distribution=zoned_abs:80/256k:20/768k"]);
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    for (who, calls) in [("fio", &theirs), ("plumb", &ours)] {
        let offs = offsets(calls, "r");
        assert_eq!(offs.len(), 4096, "{who}");
        assert!(offs.iter().all(|o| *o < 1 << 20), "{who}: past the zones");
        let first = share(&offs, 0..64);
        assert!((first - 0.8).abs() < 0.05, "{who}: {first}");
    }
}

#[test]
fn a_share_of_the_requests_goes_on_from_the_previous_one() {
    let args = random_reads(&["--norandommap", "--percentage_random=25"]);
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    for (who, calls) in [("fio", &theirs), ("plumb", &ours)] {
        let offs = offsets(calls, "r");
        assert_eq!(offs.len(), 4096, "{who}");
        let on = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        let got = on as f64 / (offs.len() - 1) as f64;
        // 75% go on, minus the few at the file's end, plus 1 draw in 1024 that lands
        // there: a standard deviation below 0.007.
        assert!((got - 0.75).abs() < 0.05, "{who}: {got}");
        // Going on or drawn, every request is a block of the region.
        assert!(
            offs.iter().all(|o| o.is_multiple_of(4096) && *o < 4 << 20),
            "{who}"
        );
    }
}

#[test]
fn a_direction_never_drawn_walks_on_from_the_start_as_fio_s_does() {
    let args = [
        "--name=m",
        "--filename=f",
        "--size=1m",
        "--bs=4k",
        "--rw=randrw",
        "--ioengine=psync",
        "--randseed=3",
        "--percentage_random=100,0",
    ];
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    let (tw, ow) = (offsets(&theirs, "w"), offsets(&ours, "w"));
    for (who, w) in [("fio", &tw), ("plumb", &ow)] {
        assert!(w.len() > 64, "{who}: {} writes", w.len());
        let expect: Vec<u64> = (0..w.len() as u64).map(|k| k * 4096).collect();
        assert_eq!(w, &expect, "{who}: the writes go on from the start");
    }
    // The reads are drawn: not in order.
    let r = offsets(&ours, "r");
    assert!(r.windows(2).any(|w| w[1] != w[0] + 4096));
}

#[test]
fn sequential_jobs_and_a_full_share_are_what_they_were() {
    let Some((theirs, ours)) = both(&[
        "--name=s",
        "--filename=f",
        "--size=256k",
        "--bs=4k",
        "--rw=read",
        "--percentage_random=10",
        "--random_distribution=zoned:100/10",
    ]) else {
        return;
    };
    let expect: Vec<u64> = (0..64).map(|k| k * 4096).collect();
    assert_eq!(offsets(&theirs, "r"), expect);
    assert_eq!(ours, theirs);
    // percentage_random=100: the same draws as without it, for both programs.
    let plain = random_reads(&["--size=256k", "--io_size=256k"]);
    let full = random_reads(&["--size=256k", "--io_size=256k", "--percentage_random=100"]);
    let (Some((fio_plain, plumb_plain)), Some((fio_full, plumb_full))) =
        (both(&plain), both(&full))
    else {
        return;
    };
    assert_eq!(fio_plain, fio_full);
    assert_eq!(plumb_plain, plumb_full);
    assert_eq!(offsets(&plumb_full, "r").len(), 64);
}

#[test]
fn a_time_based_job_s_only_file_starts_over_with_its_pages_dropped() {
    let args = [
        "--name=t",
        "--filename=f",
        "--size=8k",
        "--bs=4k",
        "--rw=randread",
        // Without a map only going on past the end starts the file over.
        "--norandommap",
        "--percentage_random=0",
        "--time_based",
        "--runtime=1",
        "--thinktime=20ms",
    ];
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    let expect = [
        ("drop", 0),
        ("r", 0),
        ("r", 4096),
        ("drop", 0),
        ("r", 0),
        ("r", 4096),
        ("drop", 0),
        ("r", 0),
    ];
    assert_eq!(theirs[..8], expect);
    assert_eq!(ours[..8], expect);
}

// ---------------------------------------------------------------------------------------
// Errors

/// fio's and plumb's (exit code, stdout, stderr) for a job with `opt`, which must fail.
fn same_error(opt: &str) {
    if !tools() {
        return;
    }
    let drop_in = DropIn::named("fio");
    let args = [
        "--name=x",
        "--filename=f",
        "--size=1m",
        "--rw=randread",
        "--ioengine=null",
        opt,
    ];
    let run = |bin: &Path| {
        let d = TempDir::new().unwrap();
        let o = fio_named(bin)
            .args(args)
            .current_dir(d.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (theirs, ours) = (run(Path::new(FIO)), run(&drop_in.bin()));
    assert_ne!(theirs.0, Some(0), "fio accepted {opt}");
    assert_eq!(theirs, ours, "{opt}");
}

#[test]
fn bad_zones_fail_in_fio_s_words() {
    for v in [
        "zoned:60/10:30/20",
        "zoned:60/10:50/20",
        "zoned:60/10:30/95",
        "zoned:50/50::50/50",
        "zoned:1e2/50",
        "zoned:100k/50",
        "zoned:255/50",
        "zoned:abc/10:100",
        "zoned:/50",
        "zoned",
        "zoned,x",
        "zoned:60/10,40/90",
        "zoned_abs:60/1M:30/1M",
        "zoned_abs:100/",
        "zoned_abs",
        "zipf:1.2,pareto:0.3",
    ] {
        same_error(&format!("--random_distribution={v}"));
    }
}

#[test]
fn bad_percentages_fail_in_fio_s_words() {
    for v in ["101", "1k", "abc", ""] {
        same_error(&format!("--percentage_random={v}"));
    }
}
