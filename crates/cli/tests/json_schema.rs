//! The JSON result validates against the committed schema (docs/plumb.result.2.schema.json).

mod common;
use common::*;

fn schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/plumb.result.2.schema.json"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&s).expect("the committed schema compiles")
}

fn check(args: &[&str]) {
    let v = json_doc(args);
    let errors: Vec<String> = schema()
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "plumb {args:?}: {errors:#?}");
}

#[test]
fn results_validate_against_the_committed_schema() {
    check(&[
        "cpu",
        "--cpu-max-prime=300",
        "--events=100",
        "--time=0",
        "run",
    ]);
    check(&[
        "cpu",
        "--cpu-max-prime=300",
        "--time=0.5",
        "--report-interval=0.2",
        "--histogram",
        "--percentile=50,99.9",
        "run",
    ]);
    check(&[
        "cpu",
        "--cpu-max-prime=300",
        "--time=0.4",
        "--rate=200",
        "--warmup-time=0.2",
        "--report-interval=0.1",
        "run",
    ]);
    check(&[
        "cpu",
        "--cpu-max-prime=300",
        "--events=10",
        "--time=0",
        "--percentile=0",
        "run",
    ]);
    check(&["memory", "--memory-total-size=1M", "run"]);
    check(&["threads", "--events=10", "--time=0", "run"]);
    check(&["mutex", "--mutex-locks=100", "run"]);
    check(&[
        "fileio",
        "--file-io-mode=null",
        "--file-test-mode=rndrw",
        "--events=100",
        "--time=0",
        "run",
    ]);
    let d = tempfile::TempDir::new().unwrap();
    let db = format!("--sqlite-db={}", d.path().join("s.db").display());
    check(&[
        "oltp_read_write",
        &db,
        "--table-size=50",
        "--events=20",
        "--time=0",
        "prepare",
        "run",
        "cleanup",
    ]);
    // mysqlslap's record (it has no --format=json: its record goes to --plumb-json).
    let file = d.path().join("slap.json");
    let o = plumb()
        .args([
            "mysqlslap",
            "-a",
            &format!(
                "--plumb-db=sqlite:{}",
                d.path().join("slap.sqlite").display()
            ),
            "--auto-generate-sql-add-autoincrement",
            "-c",
            "2",
            "--number-of-queries=10",
            &format!("--plumb-json={}", file.display()),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let errors: Vec<String> = schema()
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "mysqlslap: {errors:#?}");
    // dd's and fio's records (their reports are their tools' own; the record goes to --json).
    let out = d.path().join("dd.out");
    let dd_json = d.path().join("dd.json");
    let fio_json = d.path().join("fio.json");
    for (what, args, file) in [
        (
            "dd",
            vec![
                "dd".to_string(),
                "if=/dev/zero".into(),
                format!("of={}", out.display()),
                "bs=64k".into(),
                "count=16".into(),
                "oflag=dsync".into(),
                format!("--json={}", dd_json.display()),
            ],
            &dd_json,
        ),
        (
            "fio",
            vec![
                "fio".to_string(),
                "--name=j".into(),
                "--rw=randrw".into(),
                "--size=256k".into(),
                format!("--filename={}", d.path().join("fio.dat").display()),
                format!("--plumb-json={}", fio_json.display()),
            ],
            &fio_json,
        ),
    ] {
        let o = plumb().args(&args).output().unwrap();
        assert!(
            o.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let errors: Vec<String> = schema()
            .iter_errors(&v)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{what}: {errors:#?}");
    }
}

#[test]
fn schema_rejects_a_result_missing_a_field() {
    let mut v = json_doc(&[
        "cpu",
        "--cpu-max-prime=300",
        "--events=10",
        "--time=0",
        "run",
    ]);
    v["groups"][0]["jobs"][0]
        .as_object_mut()
        .unwrap()
        .remove("latency");
    assert!(!schema().is_valid(&v));
}
