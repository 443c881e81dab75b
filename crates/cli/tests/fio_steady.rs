//! Steady-state detection (`steadystate`/`ss`, `ss_dur`, `ss_ramp`) against Debian's fio
//! 3.33: a job whose criterion holds at once stops long before its runtime in both, with
//! `attained=1`, the same report structure and the same `steadystate` JSON keys; a
//! criterion that never holds runs the whole runtime with `attained=0`; bad values and
//! inconsistent groups get fio's words. A saved record replays the steady-state lines.
//!
//! Without /usr/bin/fio the comparisons are skipped with a message, except under CI
//! (`CI=true`), where a missing peer is a failure.

mod common;
use common::fio_text::mask_normal;
use common::peers::{fio_and_drop_in, installed, Printed as Output, FIO};
use common::plumb;

use std::collections::BTreeSet;

use serde_json::Value;
use tempfile::TempDir;

/// fio, then plumb named `fio`, on `args`, each in a fresh directory holding `files`.
fn run_both_with(files: &[(&str, &str)], args: &[&str]) -> Option<(Output, Output)> {
    if !installed(
        &[FIO],
        "apt-get install fio",
        "the fio steady-state comparison",
    ) {
        return None;
    }
    Some(fio_and_drop_in(files, args))
}

/// A run with `--output-format=json,normal`: the JSON document, and the normal text
/// around it (the lines before the run, the report after the document).
struct Report {
    json: Value,
    normal: String,
}

fn split(who: &str, out: &Output) -> Report {
    assert_eq!(out.code, 0, "{who}: {}\n{}", out.stderr, out.stdout);
    let text = &out.stdout;
    // The document runs from the first brace in column 0 to the first closing one.
    let start = if text.starts_with("{\n") {
        0
    } else {
        text.find("\n{\n")
            .unwrap_or_else(|| panic!("{who}: no JSON document in {text}"))
            + 1
    };
    let end = start
        + text[start..]
            .find("\n}\n")
            .unwrap_or_else(|| panic!("{who}: no end to the JSON document in {text}"))
        + 3;
    let json = serde_json::from_str(&text[start..end])
        .unwrap_or_else(|e| panic!("{who}'s JSON ({e}): {text}"));
    Report {
        json,
        normal: format!("{}{}", &text[..start], &text[end..]),
    }
}

/// fio's and plumb's reports of `args`, compared in structure (normal report, JSON keys
/// and types under every job's `steadystate`).
fn compare(args: &[&str]) -> Option<(Report, Report)> {
    let mut full = args.to_vec();
    full.push("--output-format=json,normal");
    let (theirs, ours) = run_both_with(&[], &full)?;
    assert_eq!(ours.stderr, "", "{args:?}");
    let (a, b) = (split("fio", &theirs), split("plumb", &ours));
    assert_eq!(
        mask_normal(&a.normal),
        mask_normal(&b.normal),
        "{args:?}\n--- fio:\n{}\n--- plumb:\n{}",
        a.normal,
        b.normal
    );
    let (ja, jb) = (jobs(&a.json), jobs(&b.json));
    assert_eq!(ja.len(), jb.len(), "{args:?}");
    for (x, y) in ja.iter().zip(&jb) {
        assert_eq!(
            shape(&x["steadystate"]),
            shape(&y["steadystate"]),
            "{args:?}"
        );
        // The criterion as fio prints it back, and the window's length.
        for k in ["ss", "duration"] {
            assert_eq!(x["steadystate"][k], y["steadystate"][k], "{k}");
        }
        assert_eq!(x["job options"], y["job options"]);
    }
    Some((a, b))
}

fn jobs(doc: &Value) -> Vec<Value> {
    doc["jobs"].as_array().expect("jobs").clone()
}

/// Every path under `v` with its JSON type (arrays by element).
fn shape(v: &Value) -> BTreeSet<String> {
    fn walk(path: String, v: &Value, out: &mut BTreeSet<String>) {
        let kind = match v {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "string",
            Value::Array(items) => {
                for i in items {
                    walk(format!("{path}[]"), i, out);
                }
                "array"
            }
            Value::Object(m) => {
                for (k, x) in m {
                    walk(format!("{path}/{k}"), x, out);
                }
                "object"
            }
        };
        out.insert(format!("{path}: {kind}"));
    }
    let mut out = BTreeSet::new();
    walk(String::new(), v, &mut out);
    out
}

fn steady_line(normal: &str) -> &str {
    normal
        .lines()
        .find(|l| l.starts_with("  steadystate  : "))
        .unwrap_or_else(|| panic!("no steadystate line in {normal}"))
}

/// The window's arrays and means agree with each other, as fio computes them.
fn check_data(who: &str, ss: &Value, duration: usize) {
    let d = &ss["data"];
    let ints = |k: &str| -> Vec<u64> {
        d[k].as_array()
            .unwrap_or_else(|| panic!("{who}: data.{k} in {ss}"))
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (bw, iops) = (ints("bw"), ints("iops"));
    assert_eq!((bw.len(), iops.len()), (duration, duration), "{who}: {ss}");
    let n = duration as u64;
    assert_eq!(
        d["bw_mean"].as_u64(),
        Some(bw.iter().sum::<u64>() / n),
        "{who}"
    );
    assert_eq!(
        d["iops_mean"].as_u64(),
        Some(iops.iter().sum::<u64>() / n),
        "{who}"
    );
}

/// A small file read from the page cache over and over: its IOPS hardly move, so a 50%
/// band is met as soon as the two-second window is full.
const STEADY: &[&str] = &[
    "--name=s",
    "--filename=f",
    "--size=64k",
    "--rw=read",
    "--bs=4k",
    "--invalidate=0",
    "--ss=iops:50%",
    "--ss_dur=2",
    "--runtime=20",
    "--time_based",
];

#[test]
fn a_job_that_is_steady_at_once_stops_long_before_its_runtime() {
    let Some((fio, ours)) = compare(STEADY) else {
        return;
    };
    for (who, r) in [("fio", &fio), ("plumb", &ours)] {
        let job = &jobs(&r.json)[0];
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 1, "{who}: {ss}");
        assert_eq!(ss["ss"], "iops:50.000000%", "{who}");
        assert_eq!(ss["duration"], 2, "{who}");
        check_data(who, ss, 2);
        // Stopped by the criterion, not by the 20 s runtime.
        let ms = job["read"]["runtime"].as_u64().unwrap();
        assert!(ms < 10_000, "{who} ran {ms} ms of a 20 s runtime");
        let line = steady_line(&r.normal);
        assert!(
            line.starts_with("  steadystate  : attained=yes, bw=")
                && line.contains(", iops mean dev="),
            "{who}: {line}"
        );
    }
}

#[test]
fn ramps_delay_the_window_and_it_still_holds() {
    // Nothing is sampled during ramp_time, and ss_ramp waits a second more after it.
    let mut args = STEADY.to_vec();
    args.extend(["--ramp_time=1", "--ss_ramp=1"]);
    let Some((fio, ours)) = compare(&args) else {
        return;
    };
    for (who, r) in [("fio", &fio), ("plumb", &ours)] {
        let job = &jobs(&r.json)[0];
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 1, "{who}: {ss}");
        check_data(who, ss, 2);
        assert!(ss["data"]["iops_mean"].as_u64().unwrap() > 0, "{who}: {ss}");
        assert!(job["read"]["runtime"].as_u64().unwrap() < 10_000, "{who}");
    }
}

#[test]
fn a_criterion_that_never_holds_runs_the_whole_runtime() {
    // No sample is ever 0 IOPS away from the mean "strictly below 0".
    let args = [
        "--name=n",
        "--filename=f",
        "--size=64k",
        "--rw=read",
        "--bs=4k",
        "--invalidate=0",
        "--ss=iops:0",
        "--ss_dur=1",
        "--runtime=3",
        "--time_based",
    ];
    let Some((fio, ours)) = compare(&args) else {
        return;
    };
    for (who, r) in [("fio", &fio), ("plumb", &ours)] {
        let job = &jobs(&r.json)[0];
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 0, "{who}: {ss}");
        assert_eq!(ss["ss"], "iops:0.000000", "{who}");
        check_data(who, ss, 1);
        // The runtime ended it (3 s), not the criterion.
        let ms = job["read"]["runtime"].as_u64().unwrap();
        assert!(ms >= 2_500, "{who} stopped after {ms} ms of a 3 s runtime");
        let line = steady_line(&r.normal);
        assert!(
            line.starts_with("  steadystate  : attained=no, bw=")
                && line.contains(", iops mean dev="),
            "{who}: {line}"
        );
    }
}

#[test]
fn a_group_is_judged_as_one_under_group_reporting() {
    let mut args = STEADY.to_vec();
    args.extend(["--numjobs=2", "--group_reporting"]);
    let Some((fio, ours)) = compare(&args) else {
        return;
    };
    for (who, r) in [("fio", &fio), ("plumb", &ours)] {
        let js = jobs(&r.json);
        assert_eq!(js.len(), 1, "{who}");
        assert_eq!(js[0]["steadystate"]["attained"], 1, "{who}");
        check_data(who, &js[0]["steadystate"], 2);
        assert!(js[0]["read"]["runtime"].as_u64().unwrap() < 10_000, "{who}");
    }
    // Without group_reporting every job has its own window and report.
    let mut args = STEADY.to_vec();
    args.push("--numjobs=2");
    let Some((fio, ours)) = compare(&args) else {
        return;
    };
    for (who, r) in [("fio", &fio), ("plumb", &ours)] {
        let js = jobs(&r.json);
        assert_eq!(js.len(), 2, "{who}");
        for j in &js {
            assert_eq!(j["steadystate"]["attained"], 1, "{who}");
        }
    }
}

#[test]
fn without_a_duration_there_is_no_detection() {
    // ss alone, or a window under a second (fio keeps whole seconds): no steadystate at all.
    for dur in [None, Some("--ss_dur=500ms")] {
        let mut args = vec![
            "--name=o",
            "--filename=f",
            "--size=64k",
            "--rw=read",
            "--bs=4k",
            "--ss=iops:50%",
        ];
        args.extend(dur);
        let Some((fio, ours)) = compare(&args) else {
            return;
        };
        for (who, r) in [("fio", &fio), ("plumb", &ours)] {
            assert!(jobs(&r.json)[0].get("steadystate").is_none(), "{who}");
            assert!(!r.normal.contains("steadystate"), "{who}");
        }
    }
}

fn same_error_with(files: &[(&str, &str)], args: &[&str]) {
    let Some((theirs, ours)) = run_both_with(files, args) else {
        return;
    };
    assert_ne!(theirs.code, 0, "fio accepted {args:?}");
    assert_eq!(theirs, ours, "{args:?}");
}

#[test]
fn bad_values_get_fio_s_words() {
    let job = ["--name=x", "--filename=f", "--size=64k"];
    for bad in [
        "--ss=iops",
        "--ss=iops,5",
        "--ss=foo:5",
        "--ss=iops:5,bw",
        "--ss=iops:abc%",
        "--ss=iops:abc",
        "--ss=bw:abc",
        "--ss=bw:",
        "--steadystate=bw_slope:%",
        "--ss_dur=abc",
        "--ss_ramp=abc",
        "--steadystate_duration=x1",
    ] {
        let mut args = job.to_vec();
        args.push(bad);
        args.push("--ss_dur=2");
        same_error_with(&[], &args);
    }
    // In a job file fio also drops the job.
    same_error_with(
        &[("j.fio", "[j]\nfilename=f\nsize=64k\nss=iops:x%\nss_dur=2\n")],
        &["j.fio"],
    );
    same_error_with(
        &[("j.fio", "[j]\nfilename=f\nsize=64k\nss=bogus:1\n")],
        &["j.fio"],
    );
}

#[test]
fn a_reporting_group_must_agree_on_its_settings() {
    // fio checks each job as it adds it: the second one differs (detection off).
    let a = [
        "--name=a",
        "--filename=f",
        "--size=64k",
        "--ss=iops:5",
        "--ss_dur=2",
    ];
    let mut args = a.to_vec();
    args.extend(["--name=b", "--filename=g", "--size=64k"]);
    same_error_with(&[], &args);
    // Another window; with JSON asked for first, only the error line.
    let mut args = vec!["--output-format=json"];
    args.extend(a);
    args.extend([
        "--name=b",
        "--filename=g",
        "--size=64k",
        "--ss=iops:5",
        "--ss_dur=3",
    ]);
    same_error_with(&[], &args);
    // A job with clones before the one that differs: its `...` line too.
    let mut args = a.to_vec();
    args.push("--numjobs=2");
    args.extend([
        "--name=b",
        "--filename=g",
        "--size=64k",
        "--numjobs=2",
        "--ss=iops:6",
    ]);
    same_error_with(&[], &args);
}

#[test]
fn a_new_reporting_group_may_differ() {
    let args = [
        "--name=a",
        "--filename=f",
        "--size=64k",
        "--ss=iops:5",
        "--ss_dur=1",
        "--name=b",
        "--new_group",
        "--filename=g",
        "--size=64k",
    ];
    let Some((fio, ours)) = compare(&args) else {
        return;
    };
    for (who, r) in [("fio", &fio), ("plumb", &ours)] {
        let js = jobs(&r.json);
        assert!(js[0].get("steadystate").is_some(), "{who}");
        assert!(js[1].get("steadystate").is_none(), "{who}");
    }
}

#[test]
fn the_record_replays_the_steady_state_report() {
    let d = TempDir::new().unwrap();
    let mut args: Vec<&str> = vec!["fio"];
    args.extend(STEADY);
    args.extend([
        "--output-format=json,normal",
        "--plumb-findings=off",
        "--plumb-json=rec.json",
    ]);
    let out = plumb().args(&args).current_dir(d.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let live = String::from_utf8(out.stdout).unwrap();
    let replay = plumb()
        .args(["report", "rec.json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(replay.status.success());
    let again = String::from_utf8(replay.stdout).unwrap();
    assert_eq!(steady_line(&again), steady_line(&live));
    let r = split(
        "plumb",
        &Output {
            code: 0,
            stdout: again,
            stderr: String::new(),
        },
    );
    let ss = &jobs(&r.json)[0]["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    let live = split(
        "plumb",
        &Output {
            code: 0,
            stdout: live,
            stderr: String::new(),
        },
    );
    assert_eq!(&jobs(&live.json)[0]["steadystate"], ss);
    let rec: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("rec.json")).unwrap()).unwrap();
    let job = &rec["groups"][0]["jobs"][0];
    assert_eq!(job["stop_reason"], "steady_state", "{job}");
    assert_eq!(job["layout"]["steady"]["attained"], true);
}
