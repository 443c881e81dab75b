//! plumb's JSON documents validate against their committed schemas (docs/*.schema.json):
//! the run result (plumb.result/2) of every front end, `plumb history --json`
//! (plumb.history/1), `plumb baseline list --json` (plumb.baselines/1), `plumb compare A B
//! --json` (plumb.compare/1), `plumb sweep --json=FILE` (plumb.sweep/1) and `plumb compare
//! sweep:A sweep:B --json` (plumb.sweep-compare/1), each produced by the real binary; and
//! each schema refuses a document with any one of its keys renamed.

mod common;
use common::*;

use std::path::Path;

use serde_json::Value;

/// A committed schema, as JSON.
fn schema_file(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn schema() -> jsonschema::Validator {
    jsonschema::validator_for(&schema_file("plumb.result.2.schema.json"))
        .expect("the committed schema compiles")
}

/// The validator of docs/`name`; plumb.sweep/1 refers to the result's schema by its id
/// (`/plumb.result/2`), found beside it.
fn validator(name: &str) -> jsonschema::Validator {
    let result = jsonschema::Resource::from_contents(schema_file("plumb.result.2.schema.json"))
        .expect("the result's schema is a resource");
    jsonschema::options()
        .with_resource("json-schema:///plumb.result/2", result)
        .build(&schema_file(name))
        .unwrap_or_else(|e| panic!("{name} compiles: {e}"))
}

/// `doc` is valid, or the errors say where it is not.
fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Every key of every object in `doc` renamed in turn (`KEY_renamed`), but the keys of
/// the objects named in `data` (maps whose keys are data: a point's values) and anything
/// under the names in `skip`: the schema must refuse each. Returns the keys tried.
fn each_renamed_key_is_refused(
    v: &jsonschema::Validator,
    doc: &Value,
    data: &[&str],
    skip: &[&str],
) -> usize {
    fn keys(v: &Value, at: &str, data: &[&str], skip: &[&str], out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if skip.contains(&k.as_str()) {
                        continue;
                    }
                    out.push((at.to_string(), k.clone()));
                    if !data.contains(&k.as_str()) {
                        let token = k.replace('~', "~0").replace('/', "~1");
                        keys(x, &format!("{at}/{token}"), data, skip, out);
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    keys(x, &format!("{at}/{i}"), data, skip, out);
                }
            }
            _ => {}
        }
    }
    let mut all = Vec::new();
    keys(doc, "", data, skip, &mut all);
    for (at, k) in &all {
        let mut d = doc.clone();
        let m = d.pointer_mut(at).unwrap().as_object_mut().unwrap();
        let x = m.remove(k).unwrap();
        m.insert(format!("{k}_renamed"), x);
        assert!(
            !v.is_valid(&d),
            "the schema takes {at}/{k} renamed to {k}_renamed"
        );
    }
    all.len()
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
    check(&[
        "cpu",
        "--cpu-max-prime=300",
        "--time=1.3",
        "--report-checkpoints=1",
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

/// A forced shutdown's record: the threads left inside an event are marked, and counted.
#[test]
fn a_forced_shutdown_s_record_marks_the_unfinished_threads() {
    let d = tempfile::TempDir::new().unwrap();
    let json = d.path().join("r.json");
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args([
            "cpu",
            "--cpu-max-prime=20000000",
            "--threads=2",
            "--time=1",
            "--forced-shutdown=0",
            "--no-history",
            &format!("--json={}", json.display()),
            "run",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let errors: Vec<String> = schema()
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let result = &doc["groups"][0]["jobs"][0];
    assert_eq!(result["status"], "forced_shutdown");
    assert_eq!(result["unfinished_events"], 2);
    let threads = result["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for t in threads {
        assert_eq!(t["unfinished"], true, "{t}");
        assert_eq!(t["events"], 0, "{t}");
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

/// A private history (PLUMB_HOME in a temporary directory, also the working directory).
struct Home(tempfile::TempDir);

impl Home {
    fn new() -> Home {
        Home(tmp())
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.0.path().join(name)
    }

    /// `plumb ARGS`: (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let o = scenario(args)
            .in_dir(self.0.path())
            .command()
            .env("PLUMB_HOME", self.0.path())
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            text(&o.stdout),
            text(&o.stderr),
        )
    }

    /// `plumb ARGS`, which must exit with `code`; stdout as JSON.
    fn json(&self, args: &[&str], code: i32) -> Value {
        let (c, out, err) = self.run(args);
        assert_eq!(c, code, "plumb {args:?}: {err}");
        parse_json(out.as_bytes())
    }

    /// `plumb ARGS`, which must succeed.
    fn ok(&self, args: &[&str]) {
        let (c, out, err) = self.run(args);
        assert_eq!(c, 0, "plumb {args:?}: {out}\n{err}");
    }

    /// `plumb sweep` on `plan` (written as NAME.toml) with `more` options.
    fn sweep(&self, name: &str, plan: &str, more: &[&str]) {
        let path = self.path(&format!("{name}.toml"));
        std::fs::write(&path, plan).unwrap();
        let mut args = vec!["sweep", path.to_str().unwrap()];
        args.extend(more);
        self.ok(&args);
    }

    /// A JSON file in the home.
    fn file(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path(name)).unwrap()).unwrap()
    }

    fn write(&self, name: &str, doc: &Value) {
        std::fs::write(self.path(name), doc.to_string()).unwrap();
    }
}

const CPU_PLAN: &str =
    "command = \"cpu --cpu-max-prime=2000 --time=0.2 run\"\n[matrix]\nthreads = [1, 2]\n";

#[test]
fn history_and_sweep_documents_validate_against_their_schemas() {
    let h = Home::new();
    h.ok(&["cpu", "--time=0.1", "--tag=one", "--tag=two", "run"]);
    h.ok(&[
        "fio",
        "--name=j",
        "--rw=randread",
        "--ioengine=null",
        "--size=1M",
    ]);
    h.sweep("cpu", CPU_PLAN, &["--json=cpu.json"]);
    h.sweep(
        "fio",
        "command = \"fio --name=r --rw=randread --ioengine=null --size=1M --runtime=0.1s --time_based\"\nrepeat = 2\n[matrix]\nbs = [\"4k\", \"16k\"]\n",
        &["--json=fio.json", "--no-history"],
    );

    let history = validator("plumb.history.1.schema.json");
    let doc = h.json(&["history", "--json", "--limit=0"], 0);
    assert_eq!(doc["total"], 4, "{doc}");
    assert_eq!(doc["runs"][0]["sweep_point"], "threads=2", "{doc}");
    assert_eq!(doc["runs"][2]["front_end"], "fio", "{doc}");
    assert_eq!(doc["runs"][3]["tags"], serde_json::json!(["one", "two"]));
    assert_valid(&history, &doc, "plumb history --json");
    assert!(each_renamed_key_is_refused(&history, &doc, &[], &[]) > 4 * 18);
    // An empty history too.
    let empty = h.json(&["history", "--json", "--test=nothing"], 0);
    assert_eq!(empty["runs"], serde_json::json!([]));
    assert_valid(&history, &empty, "no runs");

    let sweep = validator("plumb.sweep.1.schema.json");
    for (name, runs, kept) in [("cpu.json", 2, true), ("fio.json", 4, false)] {
        let doc = h.file(name);
        assert_eq!(doc["runs"].as_array().unwrap().len(), runs, "{name}");
        assert_eq!(doc["sweep_id"].is_i64(), kept, "{name}");
        assert_eq!(doc["runs"][0]["run_id"].is_i64(), kept, "{name}");
        assert_valid(&sweep, &doc, name);
        // The records are the result's schema's: its tests rename their keys.
        assert!(each_renamed_key_is_refused(&sweep, &doc, &["values"], &["record"]) > runs * 5);
        let mut bad = doc.clone();
        bad["runs"][0]["record"]["groups"][0]["jobs"][0]
            .as_object_mut()
            .unwrap()
            .remove("latency");
        assert!(
            !sweep.is_valid(&bad),
            "{name}: a record is checked as a result"
        );
    }
}

#[test]
fn baseline_lists_validate_against_their_schema() {
    let h = Home::new();
    let v = validator("plumb.baselines.1.schema.json");
    // None set yet: an empty list, still the document.
    let empty = h.json(&["baseline", "list", "--json"], 0);
    assert_eq!(empty["baselines"], serde_json::json!([]), "{empty}");
    assert_valid(&v, &empty, "no baselines");

    h.ok(&["cpu", "--time=0.1", "run"]);
    h.ok(&["cpu", "--time=0.1", "run"]);
    h.ok(&["baseline", "set", "ssd-1.0_b", "1"]);
    h.ok(&["baseline", "set", "after", "2"]);
    let doc = h.json(&["baseline", "list", "--json"], 0);
    assert_eq!(doc["schema"], "plumb.baselines/1");
    let names: Vec<(&str, i64)> = doc["baselines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["name"].as_str().unwrap(), b["run_id"].as_i64().unwrap()))
        .collect();
    assert_eq!(names, [("after", 2), ("ssd-1.0_b", 1)]);
    assert_valid(&v, &doc, "plumb baseline list --json");
    assert_eq!(each_renamed_key_is_refused(&v, &doc, &[], &[]), 2 + 2 * 3);
    // Names plumb baseline set refuses are refused by the schema too.
    for bad in ["42", "r.json", "a b", ""] {
        let mut d = doc.clone();
        d["baselines"][0]["name"] = serde_json::json!(bad);
        assert!(!v.is_valid(&d), "the schema takes the name '{bad}'");
        let (code, _, err) = h.run(&["baseline", "set", bad, "1"]);
        assert_eq!(code, 2, "plumb baseline set '{bad}': {err}");
    }
    let mut d = doc.clone();
    d["baselines"][0]["run_id"] = serde_json::json!(0);
    assert!(!v.is_valid(&d), "a run id is from 1");
}

#[test]
fn compare_documents_validate_against_their_schema() {
    let h = Home::new();
    let compare = validator("plumb.compare.1.schema.json");
    // Two fileio runs: the checks have figures (and the device has its, when the
    // directory's filesystem has one).
    let set = [
        "fileio",
        "--file-total-size=4M",
        "--file-num=4",
        "--file-test-mode=rndrw",
        "--events=400",
        "--time=0",
    ];
    let with = |more: &[&'static str]| -> Vec<&str> { set.iter().chain(more).copied().collect() };
    h.ok(&with(&["--tag=f1", "prepare", "run"]));
    h.ok(&with(&["--threads=2", "--tag=f2", "run", "cleanup"]));
    let doc = h.json(&["compare", "f1", "f2", "--json"], 0);
    assert_eq!(doc["checks"].as_array().unwrap().len(), 5, "{doc}");
    assert!(doc["checks"][0]["a"].is_f64(), "{doc}");
    assert_valid(&compare, &doc, "two fileio runs");
    each_renamed_key_is_refused(&compare, &doc, &[], &[]);

    // Two cpu runs, B ten times slower, no intervals: the gate cannot judge (exit 1) one
    // way, passes the other.
    h.ok(&[
        "cpu",
        "--time=0.2",
        "--cpu-max-prime=2000",
        "--json=a.json",
        "run",
    ]);
    h.ok(&[
        "cpu",
        "--time=0.2",
        "--cpu-max-prime=20000",
        "--tag=b",
        "run",
    ]);
    let unjudged = h.json(
        &["compare", "a.json", "b", "--json", "--fail-if-slower=10"],
        1,
    );
    assert_eq!(
        unjudged["gate"]["result"]["outcome"], "unjudged",
        "{unjudged}"
    );
    assert_eq!(
        unjudged["gate"]["result"]["jobs"].as_array().unwrap().len(),
        1
    );
    let pass = h.json(
        &["compare", "b", "a.json", "--json", "--fail-if-slower=10"],
        0,
    );
    assert_eq!(
        pass["gate"]["result"],
        serde_json::json!({"outcome": "pass"})
    );
    // Findings one run has and the other has not (one given to B's saved record).
    let mut b = h.file("a.json");
    b["groups"][0]["jobs"][0]["findings"] = serde_json::json!([{
        "id": "made-up",
        "severity": "caution",
        "message": "given by the test",
        "evidence": [["figure", "1"]],
        "advice": "none"
    }]);
    h.write("b.json", &b);
    let findings = h.json(&["compare", "a.json", "b.json", "--json"], 0);
    assert_eq!(
        findings["jobs"][0]["findings"][0]["id"], "made-up",
        "{findings}"
    );
    assert_eq!(
        findings["jobs"][0]["findings"][0]["severity_a"],
        Value::Null
    );
    for (what, doc) in [
        ("unjudged", &unjudged),
        ("pass", &pass),
        ("findings", &findings),
    ] {
        assert_valid(&compare, doc, what);
        assert!(
            each_renamed_key_is_refused(&compare, doc, &[], &[]) > 60,
            "{what}"
        );
    }
    // A device comparison, when there is one, is checked as closely.
    if let Some(d) = doc["devices"].as_array().and_then(|d| d.first()) {
        assert!(
            d["figures"].as_array().is_some_and(|f| !f.is_empty()),
            "{doc}"
        );
    } else {
        eprintln!("note: no device under the temporary directory: devices are empty");
    }
}

#[test]
fn sweep_compare_documents_validate_against_their_schema() {
    let h = Home::new();
    let sweeps = validator("plumb.sweep-compare.1.schema.json");
    h.sweep("a", CPU_PLAN, &["--json=a.json"]);
    h.sweep(
        "b",
        "command = \"cpu --cpu-max-prime=20000 --time=0.2 run\"\n[matrix]\n\"--threads\" = [2, 3, 1]\n",
        &["--json=b.json"],
    );
    // The kernel of B's first point (threads=2, A's second), as if upgraded during the
    // sweep: a difference of that point alone.
    let mut b = h.file("b.json");
    b["runs"][0]["record"]["groups"][0]["observations"]["host"]["kernel_release"] =
        "9.9.9-test".into();
    h.write("b.json", &b);
    let doc = h.json(
        &[
            "compare",
            "sweep:1",
            "b.json",
            "--json",
            "--fail-if-slower=10",
        ],
        1,
    );
    assert_eq!(doc["points"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["only_in_b"], serde_json::json!(["--threads=3"]));
    assert_eq!(doc["points"][0]["checks"].as_array().unwrap().len(), 5);
    assert_eq!(
        doc["points"][1]["differences"][0]["what"], "kernel release",
        "{doc}"
    );
    assert_eq!(doc["gate"]["result"]["outcome"], "unjudged", "{doc}");
    assert_valid(&sweeps, &doc, "two sweeps");
    assert!(each_renamed_key_is_refused(&sweeps, &doc, &["values"], &[]) > 100);
    // Other swept variables: no point in common, the variables differ (area sweep).
    h.sweep(
        "c",
        "command = \"cpu --time=0.2 run\"\n[matrix]\nthreads = [1]\ncpu-max-prime = [3000]\n",
        &[],
    );
    let none = h.json(&["compare", "sweep:1", "sweep:3", "--json"], 0);
    assert_eq!(none["points"], serde_json::json!([]));
    assert_eq!(none["differences"][0]["area"], "sweep", "{none}");
    assert_valid(&sweeps, &none, "no point in common");
    each_renamed_key_is_refused(&sweeps, &none, &["values"], &[]);
}
