//! fio's `--status-interval=T` against Debian's fio 3.33: every T a full report of the
//! figures so far (every job, the "Run status group" lines, the disk stats), in each format
//! asked for, nothing reset between them; then the final report. The same command runs
//! under fio and under plumb named `fio`; their reports are compared one by one with the
//! figures masked (how many there are depends on timing: only bounds are checked).
//!
//! Without /usr/bin/fio these tests are skipped with a message, except under CI.

mod common;
use common::fio_text::{mask_normal, shape_diff};
use common::peers::{fio_and_drop_in, installed, run_named, DropIn, Printed as Ran, FIO};

use std::path::Path;

use serde_json::Value;
use tempfile::TempDir;

/// A null-engine job of 3 s, reported every second.
const NULL_JOB: &[&str] = &[
    "--name=a",
    "--ioengine=null",
    "--size=1g",
    "--bs=4k",
    "--rw=randread",
    "--time_based",
    "--runtime=3",
    "--status-interval=1",
];

/// Reports a 3 s run can print every second: at least 2 while it runs (a slow machine may
/// start the job late), at most one a second and one more, then the final one.
const REPORTS: std::ops::RangeInclusive<usize> = 3..=5;

fn fio_installed() -> bool {
    installed(
        &[FIO],
        "apt-get install fio",
        "the fio --status-interval comparison",
    )
}

/// `args` run by fio and by plumb named `fio`, one after the other, each in a fresh
/// directory; both must succeed, plumb with nothing on stderr.
fn both(args: &[&str]) -> Option<(Ran, Ran)> {
    if !fio_installed() {
        return None;
    }
    let (theirs, ours) = fio_and_drop_in(&[], args);
    assert_eq!(theirs.code, 0, "fio {args:?}: {}", theirs.stderr);
    assert_eq!(ours.code, 0, "plumb {args:?}: {}", ours.stderr);
    assert_eq!(ours.stderr, "", "{args:?}");
    Some((theirs, ours))
}

/// The reports of a normal output, without the lines before the first: each begins with
/// a blank line before its first job block (or its first group line, when no job has done
/// anything yet) and ends with its group lines and disk stats.
fn normal_reports(stdout: &str) -> Vec<String> {
    let lines: Vec<&str> = stdout.lines().collect();
    let mut reports: Vec<String> = Vec::new();
    // The report being read has printed its group lines: a blank line before a job block
    // or the first group's line begins the next one.
    let mut closed = true;
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).copied().unwrap_or_default();
        let opens = line.is_empty()
            && (next.contains(": (groupid=") || next.starts_with("Run status group 0 "));
        if opens && closed {
            reports.push(String::new());
            closed = false;
        }
        let Some(r) = reports.last_mut() else {
            continue;
        };
        closed |= line.starts_with("Run status group ");
        r.push_str(line);
        r.push('\n');
    }
    reports
}

/// A report from before any job did anything: its group lines alone.
fn nothing_yet(masked: &str) -> bool {
    !masked.contains(": (groupid=")
}

/// The `total=` of every report's `issued rwts` line, summed over its jobs.
fn issued(report: &str) -> u64 {
    report
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("issued rwts: total="))
        .flat_map(|l| l.split(' ').next().unwrap_or_default().split(','))
        .map(|n| n.parse::<u64>().unwrap())
        .sum()
}

#[test]
fn normal_reports_have_fios_layout_and_grow() {
    let Some((theirs, ours)) = both(NULL_JOB) else {
        return;
    };
    let (a, b) = (normal_reports(&theirs.stdout), normal_reports(&ours.stdout));
    assert!(REPORTS.contains(&a.len()), "fio: {}", theirs.stdout);
    assert!(REPORTS.contains(&b.len()), "plumb: {}", ours.stdout);
    // Every report, fio's and plumb's, has the final report's lines, figures aside; only
    // reports before the job's first request have less (on a loaded machine a job can
    // show up at a tick with nothing done yet, and then it has no latency lines).
    let shape = mask_normal(a.last().unwrap());
    for (who, reports) in [("fio", &a), ("plumb", &b)] {
        let masked: Vec<String> = reports.iter().map(|r| mask_normal(r)).collect();
        let started = reports
            .iter()
            .zip(&masked)
            .position(|(r, m)| !nothing_yet(m) && issued(r) > 0)
            .unwrap();
        assert!(started < reports.len() - 2, "{who}: {masked:?}");
        for m in &masked[started..] {
            assert_eq!(*m, shape, "{who}:\n{}", reports.join("---\n"));
        }
    }
    // What comes before the reports is the run's usual start.
    let before = |s: &str, r: &[String]| s[..s.find(&r[0]).unwrap()].to_string();
    assert_eq!(before(&theirs.stdout, &a), before(&ours.stdout, &b));
    // Cumulative: no report has fewer requests than the one before.
    let counts: Vec<u64> = b.iter().map(|r| issued(r)).collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(counts[counts.len() - 2] > 0, "{counts:?}");
}

/// The concatenated JSON documents of an output.
fn documents(stdout: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(stdout)
        .into_iter::<Value>()
        .map(|d| d.unwrap_or_else(|e| panic!("not JSON documents ({e}): {stdout}")))
        .collect()
}

/// A document with plumb's key taken out.
fn without_plumb(doc: &Value) -> Value {
    let mut d = doc.clone();
    d.as_object_mut().unwrap().remove("plumb");
    d
}

/// The figures of a document that only grow: per job, per direction, the bytes, requests,
/// runtime and latency samples; and the seconds since the start.
fn growing(doc: &Value) -> Vec<u64> {
    let mut v = vec![doc["jobs"][0]["elapsed"].as_u64().unwrap()];
    for job in doc["jobs"].as_array().unwrap() {
        for dir in ["read", "write", "trim"] {
            let d = &job[dir];
            for k in ["io_bytes", "total_ios", "runtime"] {
                v.push(d[k].as_u64().unwrap());
            }
            v.push(d["clat_ns"]["N"].as_u64().unwrap_or(0));
        }
    }
    v
}

#[test]
fn json_reports_are_documents_one_after_another() {
    let mut args = NULL_JOB.to_vec();
    args.push("--output-format=json");
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    let (a, b) = (documents(&theirs.stdout), documents(&ours.stdout));
    assert!(REPORTS.contains(&a.len()), "fio: {}", theirs.stdout);
    assert!(REPORTS.contains(&b.len()), "plumb: {}", ours.stdout);
    // plumb's evidence belongs to the finished run: in the last document only.
    let (last, interim) = b.split_last().unwrap();
    assert!(last.get("plumb").is_some());
    assert!(interim.iter().all(|d| d.get("plumb").is_none()));
    // Each document has the keys and types of fio's (a document from before the job
    // started has no latencies to give).
    for (i, d) in b.iter().enumerate() {
        let mut diffs = Vec::new();
        shape_diff("", a.last().unwrap(), d, &mut diffs);
        let started = d["jobs"][0]["read"]["total_ios"].as_u64() > Some(0);
        assert!(
            diffs.is_empty() || (!started && i + 2 < b.len()),
            "document {i}:\n{}",
            diffs.join("\n")
        );
    }
    // Cumulative, and each document is stamped when it is printed (the last one with the
    // end of the run, in whole seconds).
    for pair in b.windows(2) {
        let (x, y) = (growing(&pair[0]), growing(&pair[1]));
        assert!(x.iter().zip(&y).all(|(p, q)| p <= q), "{x:?} then {y:?}");
    }
    let stamps: Vec<u64> = interim
        .iter()
        .map(|d| d["timestamp_ms"].as_u64().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
    assert!(b[0]["timestamp"].as_u64() <= last["timestamp"].as_u64());
    // The last document is what the run prints without --status-interval.
    let plain: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with("--status-interval"))
        .map(|a| if a == "--runtime=3" { "--runtime=1" } else { a })
        .collect();
    let drop_in = DropIn::named("fio");
    let dir = TempDir::new().unwrap();
    let alone = run_named(&drop_in.bin(), dir.path(), &plain);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    let alone = documents(&alone.stdout);
    assert_eq!(alone.len(), 1);
    assert!(alone[0].get("plumb").is_some());
    let mut diffs = Vec::new();
    shape_diff(
        "",
        &without_plumb(&alone[0]),
        &without_plumb(last),
        &mut diffs,
    );
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// The reports of a `terse,normal` output: each a terse line, then its normal text.
fn terse_reports(stdout: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("3;fio-3.33;") {
            out.push((line.to_string(), String::new()));
        } else if let Some((_, normal)) = out.last_mut() {
            normal.push_str(line);
            normal.push('\n');
        }
    }
    out
}

#[test]
fn every_format_asked_for_is_in_every_report_with_the_disk_stats() {
    // A small file in the test's directory, on whatever disk holds it.
    let args = [
        "--name=f",
        "--filename=f.dat",
        "--size=8m",
        "--bs=4k",
        "--rw=randwrite",
        "--time_based",
        "--runtime=3",
        "--status-interval=1",
        "--output-format=terse,normal",
    ];
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    let (a, b) = (terse_reports(&theirs.stdout), terse_reports(&ours.stdout));
    assert!(REPORTS.contains(&a.len()), "fio: {}", theirs.stdout);
    assert!(REPORTS.contains(&b.len()), "plumb: {}", ours.stdout);
    let fields = |l: &str| l.split(';').count();
    let (terse, normal) = a.last().unwrap();
    let disk = normal.contains("\nDisk stats (read/write):\n");
    let shape = mask_normal(normal);
    for (i, (t, n)) in b.iter().enumerate() {
        assert_eq!(fields(t), fields(terse), "report {i}: {t}");
        let m = mask_normal(n);
        if nothing_yet(&m) && i + 2 < b.len() {
            continue;
        }
        assert_eq!(m, shape, "report {i}:\n{n}");
        assert_eq!(
            n.contains("\nDisk stats (read/write):\n"),
            disk,
            "report {i}:\n{n}"
        );
    }
}

#[test]
fn a_group_waiting_its_turn_has_its_group_line_and_no_job_block() {
    let args = [
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=2",
        "--name=a",
        "--rw=randread",
        "--name=b",
        "--stonewall",
        "--rw=write",
        "--status-interval=1",
    ];
    let Some((theirs, ours)) = both(&args) else {
        return;
    };
    let (a, b) = (normal_reports(&theirs.stdout), normal_reports(&ours.stdout));
    for (who, reports) in [("fio", &a), ("plumb", &b)] {
        let text = reports.join("---\n");
        assert!(reports.len() >= 3, "{who}: {text}");
        for r in reports {
            assert!(
                r.contains("\nRun status group 0 (all jobs):\n"),
                "{who}: {text}"
            );
            assert!(
                r.contains("\nRun status group 1 (all jobs):\n"),
                "{who}: {text}"
            );
            // b's block comes with b's group line, once b has done something.
            let b_ran = r.contains("\nb: (groupid=1");
            assert_eq!(r.contains("  WRITE: bw="), b_ran, "{who}: {text}");
        }
        // The first report is from a's time: b waits.
        assert!(!reports[0].contains("\nb: (groupid=1"), "{who}: {text}");
        assert!(
            reports.last().unwrap().contains("\nb: (groupid=1"),
            "{who}: {text}"
        );
    }
    assert_eq!(
        mask_normal(a.last().unwrap()),
        mask_normal(b.last().unwrap())
    );
}

#[test]
fn the_reports_go_where_the_report_goes() {
    let drop_in = DropIn::named("fio");
    let dir = TempDir::new().unwrap();
    let mut args = NULL_JOB.to_vec();
    args.push("--output=out.txt");
    let ran = run_named(&drop_in.bin(), dir.path(), &args);
    assert_eq!(
        (ran.code, ran.stdout.as_str(), ran.stderr.as_str()),
        (0, "", "")
    );
    let text = std::fs::read_to_string(dir.path().join("out.txt")).unwrap();
    assert!(REPORTS.contains(&normal_reports(&text).len()), "{text}");
}

#[test]
fn a_bad_interval_gets_fios_error_line_and_status() {
    for v in ["abc", "0", "999us", "0.5", ""] {
        let arg = format!("--status-interval={v}");
        let args = ["--name=a", "--ioengine=null", "--size=1m", &arg];
        let drop_in = DropIn::named("fio");
        let dir = TempDir::new().unwrap();
        let ours = run_named(&drop_in.bin(), dir.path(), &args);
        if fio_installed() {
            let theirs = run_named(Path::new(FIO), dir.path(), &args);
            assert_ne!(theirs.code, 0, "{arg}");
            assert_eq!(ours, theirs, "{arg}");
        }
        assert_eq!(ours.code, 1, "{arg}");
        assert!(ours.stdout.is_empty(), "{arg}: {}", ours.stdout);
        let want = if v == "abc" || v.is_empty() {
            format!("fio: failed parsing time {v}\n")
        } else {
            "fio: status interval too small\n".to_string()
        };
        assert_eq!(ours.stderr, want);
        // Under plumb's name: the same line.
        let (code, out, err) = common::run(&["fio", args[0], args[1], args[2], &arg]);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (1, "", want.as_str()),
            "{arg}"
        );
    }
}
