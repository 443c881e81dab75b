//! `plumb report FILE.json`: a saved result prints what the live run printed, and its
//! findings are evaluated again from the document alone.

mod common;
use common::*;

use std::path::Path;

/// Run `args` in `dir` with --json=result.json; return (stdout, the JSON file's path).
fn live(dir: &Path, args: &[&str]) -> (String, std::path::PathBuf) {
    let json = dir.join("result.json");
    let out = plumb()
        .current_dir(dir)
        .args(args)
        .arg(format!("--json={}", json.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "plumb {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), json)
}

fn replay(json: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = plumb()
        .arg("report")
        .arg(json)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn assert_replays(dir: &Path, args: &[&str]) {
    let (text, json) = live(dir, args);
    let (code, again, err) = replay(&json, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        again, text,
        "plumb report differs from the live run of {args:?}"
    );
    assert!(err.is_empty(), "{err}");
    assert!(text.contains("Findings") || text.contains("General statistics"));
}

#[test]
fn intervals_sampled_for_the_record_alone_are_not_printed_on_replay() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["cpu", "--cpu-max-prime=300", "--time=1.2", "run"];
    assert_replays(dir.path(), &args);
    let (_, json) = live(dir.path(), &args);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let job = &doc["groups"][0]["jobs"][0];
    assert_eq!(job["intervals"].as_array().unwrap().len(), 1, "{job}");
}

#[test]
fn cpu_run_with_intervals_and_histogram_replays_identically() {
    let dir = tempfile::tempdir().unwrap();
    assert_replays(
        dir.path(),
        &[
            "cpu",
            "--cpu-max-prime=500",
            "--time=0.6",
            "--report-interval=0.2",
            "--histogram",
            "--percentile=50,99.9",
            "run",
        ],
    );
}

/// --report-checkpoints: the windows are kept in the record and add up to the whole run
/// it keeps as its result; the report after the run covers the last window and says so;
/// a replay prints the checkpoint reports among the interval lines as the run did.
#[test]
fn checkpoints_are_windows_of_the_whole_run_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "cpu",
        "--cpu-max-prime=300",
        "--threads=2",
        "--time=2.5",
        "--report-interval=0.3",
        "--report-checkpoints=1,2",
        "run",
    ];
    let (text, json) = live(dir.path(), &args);
    let (code, again, err) = replay(&json, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, text, "plumb report differs from the live run");
    let checkpoint = text.find("[ 1s ] Checkpoint report:").expect(&text);
    let before = text.find("[ 0.9s ] thds:").expect(&text);
    let after = text.find("[ 1.2s ] thds:").expect(&text);
    assert!(before < checkpoint && checkpoint < after, "{text}");
    assert!(
        text.contains("The figures above cover the time since the last checkpoint (2s); the sections below and the JSON result cover the whole run."),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let job = &doc["groups"][0]["jobs"][0];
    assert_eq!(
        job["settings"]["checkpoints_s"],
        serde_json::json!([1.0, 2.0])
    );
    let windows: Vec<&serde_json::Value> = job["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&job["since_checkpoint"]])
        .collect();
    assert_eq!(windows.len(), 3, "{job}");
    let sum = |f: &dyn Fn(&serde_json::Value) -> u64| windows.iter().map(|w| f(w)).sum::<u64>();
    let events = |w: &serde_json::Value| w["events"].as_u64().unwrap();
    assert_eq!(sum(&events), events(job), "{job}");
    let per_thread = |w: &serde_json::Value, t: usize| w["threads"][t]["events"].as_u64().unwrap();
    for t in 0..2 {
        assert_eq!(sum(&|w| per_thread(w, t)), per_thread(job, t), "{job}");
    }
    let lat_sum = |w: &serde_json::Value| w["latency"]["sum_ns"].as_u64().unwrap();
    assert_eq!(sum(&lat_sum), lat_sum(job), "{job}");
    let time = |w: &serde_json::Value| w["total_time_s"].as_f64().unwrap();
    let times: f64 = windows.iter().map(|w| time(w)).sum();
    assert!((times - time(job)).abs() < 1e-6, "{times} {job}");
    for (c, at) in job["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .zip([1.0, 2.0])
    {
        let t = c["at_s"].as_f64().unwrap();
        assert!(t >= at && t < at + 0.25, "{c}");
    }
    // Only the job keeps lossless histograms.
    for c in job["checkpoints"].as_array().unwrap() {
        assert_eq!(c["histograms"], serde_json::json!({}), "{c}");
    }
    // The whole run's extremes are the windows' extremes.
    let min = |w: &serde_json::Value| w["latency"]["min_ns"].as_u64().unwrap();
    let lowest = windows.iter().map(|w| min(w)).min().unwrap();
    assert!(
        lowest >= min(job) && lowest as f64 <= min(job) as f64 * 1.001,
        "{job}"
    );
}

#[test]
fn open_loop_and_warmup_replay_identically() {
    let dir = tempfile::tempdir().unwrap();
    assert_replays(
        dir.path(),
        &[
            "threads",
            "--time=0.5",
            "--rate=200",
            "--warmup-time=0.1",
            "--report-interval=0.2",
            "run",
        ],
    );
}

#[test]
fn memory_and_fileio_replay_identically() {
    let dir = tempfile::tempdir().unwrap();
    assert_replays(dir.path(), &["memory", "--memory-total-size=8M", "run"]);
    let p = plumb()
        .current_dir(dir.path())
        .args(["fileio", "--file-num=2", "--file-total-size=2M", "prepare"])
        .output()
        .unwrap();
    assert!(p.status.success());
    assert_replays(
        dir.path(),
        &[
            "fileio",
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrw",
            "--events=300",
            "--time=0",
            "run",
        ],
    );
}

#[test]
fn json_format_re_emits_the_document_with_findings_evaluated_again() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json) = live(
        dir.path(),
        &[
            "cpu",
            "--cpu-max-prime=300",
            "--events=50",
            "--time=0",
            "run",
        ],
    );
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let (code, out, err) = replay(&json, &["--format=json"]);
    assert_eq!(code, 0, "{err}");
    let again: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(again, saved);

    // A finding that the saved document carries but its facts do not support is dropped,
    // and the user is told the findings changed.
    let mut doctored = saved.clone();
    doctored["groups"][0]["jobs"][0]["findings"] = serde_json::json!([{
        "id": "made-up", "severity": "invalid", "message": "m", "evidence": [], "advice": ""
    }]);
    let f = dir.path().join("doctored.json");
    std::fs::write(&f, doctored.to_string()).unwrap();
    let (code, out, err) = replay(&f, &["--format=json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("differ from the ones saved"), "{err}");
    let again: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        again["groups"][0]["jobs"][0]["findings"],
        saved["groups"][0]["jobs"][0]["findings"]
    );
}

#[test]
fn bad_input_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = replay(&dir.path().join("missing.json"), &[]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.json"), "{err}");

    let old = dir.path().join("old.json");
    std::fs::write(&old, r#"{"schema": "plumb.result/1"}"#).unwrap();
    let (code, _, err) = replay(&old, &[]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("plumb.result/1"), "{err}");

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    let (code, _, err) = replay(&junk, &[]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");

    let (code, _, err) = run(&["report"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = run(&["report", "x.json", "--format=yaml"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_credential_in_a_saved_command_line_is_not_shown_again() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json) = live(
        dir.path(),
        &[
            "cpu",
            "--cpu-max-prime=300",
            "--events=20",
            "--time=0",
            "run",
        ],
    );
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    doc["command_line"] = serde_json::json!(["plumb", "--pgsql-password", "hunter2", "cpu", "run"]);
    let f = dir.path().join("with-secret.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    for format in ["--format=json", "--format=text"] {
        let (code, out, err) = replay(&f, &[format]);
        assert_eq!(code, 0, "{err}");
        assert!(
            !out.contains("hunter2") && !err.contains("hunter2"),
            "{out}{err}"
        );
    }
    let (_, out, _) = replay(&f, &["--format=json"]);
    let again: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(again["command_line"][2], "***");
}

#[test]
fn prepare_and_cleanup_lines_replay_where_the_run_printed_them() {
    let d = tempfile::TempDir::new().unwrap();
    let db = format!("--sqlite-db={}", d.path().join("s.db").display());
    assert_replays(
        d.path(),
        &[
            "oltp_point_select",
            &db,
            "--table-size=100",
            "--events=50",
            "--time=0",
            "prepare",
            "run",
            "cleanup",
        ],
    );
    assert_replays(
        d.path(),
        &[
            "fileio",
            "--file-total-size=4M",
            "--file-num=2",
            "--file-test-mode=rndrd",
            "--events=100",
            "--time=0",
            "prepare",
            "run",
            "cleanup",
        ],
    );
}

#[test]
fn a_drop_in_run_replays_in_sysbench_s_layout() {
    let d = tempfile::TempDir::new().unwrap();
    let link = d.path().join("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &link).unwrap();
    for extra in [None, Some("--plumb-findings=on")] {
        let json = d.path().join("dropin.json");
        let out = std::process::Command::new(&link)
            .current_dir(d.path())
            .args(["cpu", "--cpu-max-prime=2000", "--events=300", "--time=0"])
            .args(extra)
            .arg(format!("--json={}", json.display()))
            .arg("run")
            .output()
            .unwrap();
        assert!(out.status.success());
        let live = String::from_utf8(out.stdout).unwrap();
        assert!(live.starts_with("sysbench 1.0.20 (plumb "), "{live}");
        let (code, again, _) = replay(&json, &[]);
        assert_eq!(code, 0);
        assert_eq!(again, live, "{extra:?}");
        // The findings section is there when asked for and the run has findings (a quiet
        // machine's short cpu run may have none).
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let found = doc["groups"][0]["jobs"][0]["findings"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        assert_eq!(again.contains("Findings:"), extra.is_some() && found);
    }
}
