//! Helpers shared by the integration tests: run the real binary.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;

/// The one job of a one-job `plumb.result/2` document, with its group's observations and
/// the document's own fields beside its fields: the view a single sysbench run's tests read.
pub fn single_job(doc: Value) -> Value {
    assert_eq!(doc["schema"], "plumb.result/2", "{doc}");
    let groups = doc["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "one group expected: {doc}");
    let jobs = groups[0]["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1, "one job expected: {doc}");
    let mut job = jobs[0].clone();
    let obj = job.as_object_mut().expect("a job is an object");
    obj.insert("observations".into(), groups[0]["observations"].clone());
    for k in [
        "schema",
        "plumb_version",
        "front_end",
        "command_line",
        "started_at_unix_s",
    ] {
        obj.insert(k.into(), doc[k].clone());
    }
    job
}

/// [`single_job`] of a document given as bytes (stdout, a --json file).
pub fn job_json(bytes: impl AsRef<[u8]>) -> Value {
    let b = bytes.as_ref();
    single_job(
        serde_json::from_slice(b)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(b))),
    )
}

pub fn plumb() -> Command {
    Command::cargo_bin("plumb").expect("the plumb binary is built")
}

/// Run plumb with `args` plus --format=json; the run must succeed and stdout must be JSON only.
pub fn json_run(args: &[&str]) -> Value {
    let out = plumb().args(args).arg("--format=json").output().unwrap();
    assert!(
        out.status.success(),
        "plumb {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    job_json(&out.stdout)
}

/// Run plumb with `args` plus --format=json; the run must succeed; the whole document.
pub fn json_doc(args: &[&str]) -> Value {
    let out = plumb().args(args).arg("--format=json").output().unwrap();
    assert!(
        out.status.success(),
        "plumb {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is only JSON")
}

/// Like [`json_run`], with `dir` as the working directory (where fileio keeps its files).
pub fn json_run_in(dir: &std::path::Path, args: &[&str]) -> Value {
    let out = plumb()
        .current_dir(dir)
        .args(args)
        .arg("--format=json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "plumb {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    job_json(&out.stdout)
}

/// Run plumb and return (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = plumb().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A usage error: exit 2, one line on stderr that contains every `needles`, no panic.
pub fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "plumb {args:?}: stderr {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "plumb {args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "plumb {args:?}: {stderr:?} lacks {n:?}");
    }
    assert!(stdout.is_empty() || !stdout.contains("General statistics"));
}

/// Whether a peer tool exists; under CI its absence fails the test instead of skipping it.
pub fn peer(tool: &str) -> bool {
    let found = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{tool} is required under CI (installed by .ci/run)");
    }
    found
}

/// The sysbench part of a report: what comes before plumb's own sections (observations,
/// findings), which sysbench does not have.
pub fn sysbench_part(report: &str) -> &str {
    report
        .find("\nObserved during the run:")
        .map_or(report, |i| &report[..i + 1])
}

/// The section headings of a sysbench-style report, in order (plumb's own sections left out).
pub fn headings(report: &str) -> Vec<String> {
    sysbench_part(report)
        .lines()
        .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
        .map(|l| l.to_string())
        .collect()
}

/// Labels of the indented figure lines ("    total time:"), in order (sysbench part only).
pub fn labels(report: &str) -> Vec<String> {
    sysbench_part(report)
        .lines()
        .filter(|l| l.starts_with("    "))
        .filter_map(|l| l.trim().split(':').next().map(|s| s.to_string()))
        .collect()
}
