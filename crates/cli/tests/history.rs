//! The run history through the real binary: runs kept by every front end, `plumb history`,
//! `show`, `tag`, `baseline`, `compare`, redaction, and a history that cannot be written.
//! Each test keeps its own history in a temporary PLUMB_HOME, except the first, which
//! checks where the test suite's own runs go.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

/// A temporary PLUMB_HOME and plumb run with it.
struct Home {
    dir: TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: TempDir::new().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("plumb"));
        c.args(args)
            .env("PLUMB_HOME", self.dir.path())
            .current_dir(self.dir.path());
        c
    }

    /// (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        output(self.command(args))
    }

    /// Must succeed with nothing on stderr; stdout.
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "plumb {args:?}: {err}");
        assert!(err.is_empty(), "plumb {args:?}: {err}");
        out
    }

    fn json(&self, args: &[&str]) -> Value {
        common::parse_json(self.ok(args).as_bytes())
    }

    /// The kept runs, newest first (`plumb history --json`).
    fn runs(&self) -> Vec<Value> {
        self.json(&["history", "--limit=0", "--json"])["runs"]
            .as_array()
            .unwrap()
            .clone()
    }
}

fn output(mut c: Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A quick cpu run's arguments.
const CPU: &[&str] = &["cpu", "--cpu-max-prime=100", "--events=20", "--time=0"];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length.
    unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[test]
fn a_run_from_the_test_suite_lands_in_the_workspace_store_not_the_users() {
    // .cargo/config.toml sets PLUMB_HOME for every process cargo runs: this test process
    // has it, and the plumb it starts (with no PLUMB_HOME of its own) inherits it.
    let home = PathBuf::from(std::env::var("PLUMB_HOME").expect("cargo's [env] sets PLUMB_HOME"));
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    assert_eq!(
        home.canonicalize().unwrap_or(home.clone()).parent(),
        Some(workspace.join("target").canonicalize().unwrap().as_path()),
        "{}",
        home.display()
    );
    if let Some(user) = std::env::var_os("HOME") {
        assert!(!home.starts_with(Path::new(&user).join(".local/share")));
    }
    let tag = format!(
        "suite-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let run = common::scenario(&with(CPU, &[&format!("--tag={tag}"), "run"])).run();
    assert_eq!(run.0, 0, "{}", run.2);
    assert!(run.2.is_empty(), "{}", run.2);
    let listed = common::scenario(&["history", "--json", &format!("--tag={tag}")]).ok_json();
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(
        listed["database"].as_str().map(PathBuf::from),
        Some(home.join("history.db"))
    );
}

#[test]
fn every_run_is_kept_and_history_lists_and_filters_them() {
    let h = Home::new();
    h.ok(&with(CPU, &["--tag=a", "--tag=both", "run"]));
    h.ok(&[
        "memory",
        "--memory-total-size=1M",
        "--time=0",
        "--tag=b",
        "--tag=both",
        "run",
    ]);
    h.ok(&with(CPU, &["--no-history", "run"]));
    // Steps without a run keep nothing.
    h.ok(&[
        "fileio",
        "--file-total-size=1M",
        "--file-num=2",
        "prepare",
        "cleanup",
    ]);
    let runs = h.runs();
    let tests: Vec<&str> = runs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    assert_eq!(
        tests,
        vec!["memory", "cpu"],
        "newest first; --no-history kept nothing"
    );
    let cpu = &runs[1];
    assert_eq!(cpu["events"], 20);
    assert_eq!(cpu["threads"], 1);
    assert_eq!(cpu["front_end"], "sysbench");
    assert_eq!(cpu["tags"], serde_json::json!(["a", "both"]));
    assert_eq!(cpu["host"], hostname());
    assert_eq!(cpu["command_line"][0], "plumb");
    assert_eq!(cpu["command_line"][2], "--cpu-max-prime=100");

    let text = h.ok(&["history"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("ID  STARTED"), "{text}");
    assert!(lines[0].ends_with("COMMAND"), "{text}");
    assert!(
        lines[1].contains(" memory ") && lines[1].contains(" b,both "),
        "{text}"
    );
    assert!(
        lines[2].contains(" cpu ")
            && lines[2].ends_with(
                "plumb cpu --cpu-max-prime=100 --events=20 --time=0 --tag=a --tag=both run"
            ),
        "{text}"
    );

    let count = |args: &[&str]| -> u64 {
        h.json(&with(&["history", "--json"], args))["runs"]
            .as_array()
            .unwrap()
            .len() as u64
    };
    assert_eq!(count(&["--test=cpu"]), 1);
    assert_eq!(count(&["--test=sysbench"]), 2);
    assert_eq!(count(&["--test=fileio"]), 0);
    assert_eq!(count(&["--tag=both"]), 2);
    assert_eq!(count(&["--tag=both", "--tag=a"]), 1);
    assert_eq!(count(&[&format!("--host={}", hostname())]), 2);
    assert_eq!(count(&["--host=no-such-host"]), 0);
    assert_eq!(count(&["--since=1h"]), 2);
    assert_eq!(count(&["--since=2999-01-01"]), 0);
    assert_eq!(count(&["--until=2000-01-01"]), 0);
    assert_eq!(count(&["--until=2999-01-01 10:00"]), 2);

    let (code, out, err) = h.run(&["history", "--limit=1"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(err, "plumb: the newest 1 of 2 runs (--limit=0 lists all)\n");

    let (code, out, err) = h.run(&["history", "--tag=nothing"]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.starts_with("plumb: no runs match in "), "{err}");

    let (code, _, err) = h.run(&["history", "--since=yesterday"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("plumb: --since: 'yesterday' is not a time"),
        "{err}"
    );
}

#[test]
fn show_prints_exactly_what_report_prints() {
    let h = Home::new();
    h.ok(&with(
        CPU,
        &[
            "--report-interval=0.01",
            "--json=r.json",
            "--tag=saved",
            "run",
        ],
    ));
    let id = h.runs()[0]["id"].as_i64().unwrap().to_string();
    let report = h.ok(&["report", "r.json"]);
    assert!(report.contains("events per second"), "{report}");
    assert_eq!(h.ok(&["show", "saved"]), report);
    assert_eq!(h.ok(&["show", &id]), report);
    assert_eq!(
        h.ok(&["show", "saved", "--format=json"]),
        h.ok(&["report", "r.json", "--format=json"])
    );

    // fio's runs are kept too, and shown in fio's layout.
    h.ok(&[
        "fio",
        "--name=j",
        "--rw=read",
        "--size=1m",
        "--plumb-json=f.json",
        "--tag=viafio",
    ]);
    let fio = h.ok(&["show", "viafio"]);
    assert!(fio.contains("j: (groupid=0, jobs=1)"), "{fio}");
    assert_eq!(fio, h.ok(&["report", "f.json"]));
    let runs = h.runs();
    assert_eq!(runs[0]["test"], "fio j");
    assert_eq!(runs[0]["front_end"], "fio");
    h.ok(&["fio", "--name=k", "--rw=read", "--size=1m", "--no-history"]);
    assert_eq!(h.runs().len(), 2, "plumb fio --no-history kept nothing");

    let (code, _, err) = h.run(&["show", "nope"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "plumb: no run tagged 'nope' in the history (plumb history lists them)\n"
    );
    let (code, _, err) = h.run(&["show", "r.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a file: r.json"), "{err}");
}

#[test]
fn tags_and_baselines_name_runs() {
    let h = Home::new();
    h.ok(&with(CPU, &["run"]));
    h.ok(&with(CPU, &["run"]));
    let ids: Vec<String> = h
        .runs()
        .iter()
        .map(|r| r["id"].as_i64().unwrap().to_string())
        .collect();
    let (new, old) = (&ids[0], &ids[1]);
    assert_eq!(
        h.ok(&["tag", old, "before"]),
        format!("run {old} tagged 'before'\n")
    );
    assert_eq!(
        h.ok(&["tag", old, "before"]),
        format!("run {old} tagged 'before' (already)\n")
    );
    assert_eq!(h.runs()[1]["tags"], serde_json::json!(["before"]));
    assert_eq!(
        h.ok(&["baseline", "set", "ref", "before"]),
        format!("baseline 'ref' is run {old}\n")
    );
    assert_eq!(
        h.ok(&["baseline", "set", "ref", new]),
        format!("baseline 'ref' is run {new} (was run {old})\n")
    );
    let list = h.ok(&["baseline", "list"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(lines[0].starts_with("BASELINE  RUN  SET"), "{list}");
    assert!(
        lines[1].starts_with(&format!("ref       {new:>3}  ")),
        "{list}"
    );
    let doc = h.json(&["baseline", "list", "--json"]);
    assert_eq!(doc["baselines"][0]["run_id"].to_string(), *new);
    assert_eq!(h.ok(&["show", "baseline:ref"]), h.ok(&["show", new]));

    for (args, code, msg) in [
        (
            vec!["tag", "999999", "x"],
            1,
            "plumb: no run 999999 in the history (plumb history lists them)\n",
        ),
        (
            vec!["tag", old, "42"],
            2,
            "plumb: --tag: invalid tag name '42' (not a number alone: that names a run id)\n",
        ),
        (
            vec!["baseline", "set", "ref", "nope"],
            1,
            "plumb: no run tagged 'nope' in the history (plumb history lists them)\n",
        ),
        (
            vec!["show", "baseline:nope"],
            1,
            "plumb: no baseline named 'nope' (plumb baseline list shows them)\n",
        ),
    ] {
        let (c, _, err) = h.run(&args);
        assert_eq!((c, err.as_str()), (code, msg), "{args:?}");
    }
    let (c, _, err) = h.run(&with(CPU, &["--tag=a b", "run"]));
    assert_eq!(c, 2);
    assert_eq!(
        err,
        "plumb: --tag: invalid tag name 'a b' (letters, digits, '.', '_' or '-')\n"
    );
}

/// A memory run paced by an open-loop rate with a fixed seed: the same command gives the
/// same schedule, so two runs differ only by timing jitter.
const PACED: &[&str] = &[
    "memory",
    "--memory-total-size=0",
    "--time=0.5",
    "--report-interval=0.05",
    "--rate=2000",
    "--rand-seed=7",
];

#[test]
fn two_runs_of_the_same_command_are_within_noise() {
    let h = Home::new();
    h.ok(&with(PACED, &["--tag=one", "run"]));
    h.ok(&with(PACED, &["--tag=two", "run"]));
    let text = h.ok(&["compare", "one", "two", "--fail-if-slower=5"]);
    assert!(
        text.contains("Differences: none (same host, kernel, target, filesystem and settings)"),
        "{text}"
    );
    let line = events_line(&text);
    assert!(line.ends_with("within noise"), "{text}");
    assert!(text.contains("Comparability (seed 002"), "{text}");
    assert!(
        text.contains("\nNoise: 95% interval of B/A from a circular moving-block bootstrap"),
        "{text}"
    );

    let doc = h.json(&["compare", "one", "two", "--json", "--fail-if-slower=5"]);
    assert_eq!(doc["schema"], "plumb.compare/1");
    let events = &doc["jobs"][0]["figures"][0];
    assert_eq!(events["name"], "events/s");
    assert_eq!(events["verdict"], "within_noise");
    assert!(events["interval"]["low"].as_f64().unwrap() <= 1.0);
    assert!(events["interval"]["high"].as_f64().unwrap() >= 1.0);
    assert_eq!(doc["gate"]["result"]["outcome"], "pass");
    // Repeatable: the bootstrap's seed is fixed.
    assert_eq!(
        h.ok(&["compare", "one", "two", "--json"]),
        h.ok(&["compare", "one", "two", "--json"])
    );
}

/// The events/s line of a comparison's text.
fn events_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.trim_start().starts_with("events/s"))
        .unwrap_or_else(|| panic!("no events/s line: {text}"))
}

const CPU_TIMED: &[&str] = &["cpu", "--time=0.5", "--report-interval=0.05"];

#[test]
fn clearly_different_runs_are_beyond_noise_and_the_gate_fails() {
    let h = Home::new();
    h.ok(&with(
        CPU_TIMED,
        &["--cpu-max-prime=2000", "--json=fast.json", "run"],
    ));
    h.ok(&with(
        CPU_TIMED,
        &["--cpu-max-prime=20000", "--tag=slow", "run"],
    ));
    h.ok(&["baseline", "set", "fast", &h.runs()[1]["id"].to_string()]);

    let (code, text, err) = h.run(&["compare", "baseline:fast", "slow", "--fail-if-slower=10"]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.starts_with("plumb: --fail-if-slower=10: B is slower beyond noise: cpu: -"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let diff = text
        .lines()
        .find(|l| l.contains("cpu_max_prime"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        diff.split_whitespace().collect::<Vec<_>>(),
        ["settings", "cpu_max_prime", "2000", "20000"]
    );
    let events = events_line(&text);
    assert!(events.ends_with("B lower, beyond noise (worse)"), "{text}");
    assert!(text.starts_with("A: run "), "{text}");

    // The other way round B is faster: the gate passes. A result file works as a side.
    let (code, text, err) = h.run(&["compare", "slow", "fast.json", "--fail-if-slower=10"]);
    assert_eq!(code, 0, "{err}");
    let events = events_line(&text);
    assert!(
        events.ends_with("B higher, beyond noise (better)"),
        "{text}"
    );
    assert!(text.contains("\nB: fast.json, "), "{text}");

    let doc = h.json(&["compare", "fast.json", "slow", "--json"]);
    assert_eq!(doc["jobs"][0]["figures"][0]["verdict"], "lower");
    assert!(doc["jobs"][0]["figures"][0]["ratio"].as_f64().unwrap() < 0.5);
    assert_eq!(doc["differences"][0]["what"], "cpu_max_prime");
}

#[test]
fn without_intervals_the_noise_is_unknown_and_the_gate_refuses_to_guess() {
    let h = Home::new();
    h.ok(&[
        "cpu",
        "--time=0.2",
        "--cpu-max-prime=2000",
        "--tag=a",
        "run",
    ]);
    h.ok(&[
        "cpu",
        "--time=0.2",
        "--cpu-max-prime=20000",
        "--tag=b",
        "run",
    ]);
    let (code, text, err) = h.run(&["compare", "a", "b", "--fail-if-slower=10"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        err.starts_with(
            "plumb: --fail-if-slower=10: B is slower but its noise cannot be judged: cpu: -"
        ),
        "{err}"
    );
    let events = events_line(&text);
    assert!(
        events.ends_with("noise unknown: no interval samples (runs shorter than one interval)"),
        "{text}"
    );
    let (code, _, err) = h.run(&["compare", "a", "b", "--fail-if-slower=100"]);
    assert_eq!(code, 2);
    assert!(err.contains("--fail-if-slower"), "{err}");
}

#[test]
fn a_password_on_a_kept_command_line_never_shows() {
    let h = Home::new();
    h.ok(&with(CPU, &["--json=r.json", "--no-history", "run"]));
    // A result saved elsewhere (another front end, an older plumb) with a credential in it.
    let path = h.path().join("r.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cl = doc["command_line"].as_array_mut().unwrap();
    cl.insert(2, "--mysql-password=hunter2".into());
    cl.insert(3, "--pgsql-password".into());
    cl.insert(4, "hunter3".into());
    std::fs::write(&path, doc.to_string()).unwrap();

    let out = h.ok(&["history", "import", "r.json", "--tag=imported"]);
    let id = h.runs()[0]["id"].as_i64().unwrap();
    assert_eq!(out, format!("r.json: kept as run {id}\n"));
    let outputs = [
        h.ok(&["history"]),
        h.ok(&["history", "--json"]),
        h.ok(&["show", "imported"]),
        h.ok(&["show", "imported", "--format=json"]),
        h.ok(&["compare", "imported", "r.json"]),
        h.ok(&["compare", "imported", "r.json", "--json"]),
    ];
    for o in &outputs {
        assert!(!o.contains("hunter2") && !o.contains("hunter3"), "{o}");
    }
    assert!(
        outputs[0].contains("'--mysql-password=***' --pgsql-password '***'"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[3].contains("\"--mysql-password=***\""),
        "{}",
        outputs[3]
    );
}

#[test]
fn a_history_that_cannot_be_written_costs_one_warning_and_never_the_run() {
    let d = TempDir::new().unwrap();
    let blocker = d.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let junk = d.path().join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(junk.join("history.db"), vec![b'x'; 8192]).unwrap();
    for home in [blocker.join("home"), junk.clone()] {
        let run = |args: &[&str]| {
            let mut c = Command::new(assert_cmd::cargo::cargo_bin("plumb"));
            c.args(args).env("PLUMB_HOME", &home);
            output(c)
        };
        let (code, out, err) = run(&with(CPU, &["run"]));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("events per second"), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("plumb: warning: the run was not kept in the history: "),
            "{err}"
        );
        let (code, out, _) = run(&with(CPU, &["--format=json", "run"]));
        assert_eq!(code, 0);
        common::parse_json(out.as_bytes());
        // Under the drop-in name nothing is printed about it.
        let bin = d.path().join("sysbench");
        if !bin.exists() {
            std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &bin).unwrap();
        }
        let mut c = Command::new(&bin);
        c.args(with(CPU, &["run"])).env("PLUMB_HOME", &home);
        let (code, out, err) = output(c);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("events per second"), "{out}");
        assert!(err.is_empty(), "{err}");
    }
}

#[test]
fn drop_in_runs_are_kept_silently_and_the_options_are_plumbs_only() {
    let h = Home::new();
    let dir = TempDir::new().unwrap();
    for name in ["sysbench", "fio"] {
        std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), dir.path().join(name))
            .unwrap();
    }
    let tool = |name: &str, args: &[&str]| {
        let mut c = Command::new(dir.path().join(name));
        c.args(args)
            .env("PLUMB_HOME", h.path())
            .current_dir(h.path());
        output(c)
    };
    let (code, _, err) = tool("sysbench", &with(CPU, &["run"]));
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = tool("fio", &["--name=d", "--rw=read", "--size=1m"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let runs = h.runs();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["command_line"][0], "fio");
    assert_eq!(runs[1]["command_line"][0], "sysbench");

    let (code, out, err) = tool("sysbench", &with(CPU, &["--no-history", "run"]));
    assert_eq!(code, 1, "{out}");
    assert_eq!(err, "invalid option: --no-history\n");
    let (code, _, err) = tool("fio", &["--name=d", "--rw=read", "--size=1m", "--tag=x"]);
    assert_eq!(code, 1);
    assert!(err.contains("--tag=x"), "{err}");
    assert_eq!(h.runs().len(), 2);
}

#[test]
fn plumb_processes_at_once_all_keep_their_runs() {
    let h = Home::new();
    let children: Vec<_> = (0..4)
        .map(|_| {
            h.command(&with(CPU, &["--tag=together", "run"]))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(h.runs().len(), 4);
}

#[test]
fn seed_002s_checks_warn_when_the_runs_did_different_things_underneath() {
    let h = Home::new();
    let set = [
        "fileio",
        "--file-total-size=4M",
        "--file-num=4",
        "--file-test-mode=seqrewr",
        "--events=400",
        "--time=0",
    ];
    h.ok(&with(&set, &["--threads=1", "--tag=one", "prepare", "run"]));
    h.ok(&with(
        &set,
        &[
            "--threads=2",
            "--file-fsync-freq=0",
            "--tag=two",
            "run",
            "cleanup",
        ],
    ));
    let text = h.ok(&["compare", "one", "two"]);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row: {text}"))
            .split_whitespace()
            .last()
            .unwrap()
            .to_string()
    };
    assert_eq!(row("fsync calls"), "DIFFER", "{text}");
    assert_eq!(row("filesystem concurrency"), "DIFFER", "{text}");
    // Sequential modes share one cursor: every thread writes the cursor's file.
    assert!(
        text.contains("\nwarning: filesystem concurrency: A 1.000, B 2.000 threads per file: the runs did not do the same thing underneath\n"),
        "{text}"
    );
    assert!(text.contains("\nwarning: fsync calls: A "), "{text}");
    let doc = h.json(&["compare", "one", "two", "--json"]);
    let checks = doc["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 5);
    assert_eq!(checks[0]["name"], "fsync calls");
    assert_eq!(checks[0]["verdict"], "differ");

    // A CPU test has no file I/O: those checks do not apply.
    h.ok(&with(CPU, &["--tag=c", "run"]));
    let text = h.ok(&["compare", "c", "c"]);
    let fsync = text.lines().find(|l| l.contains("fsync calls")).unwrap();
    assert!(fsync.ends_with("n/a"), "{text}");
    assert!(!text.contains("warning:"), "{text}");
}

/// Run `plumb sweep` on a plan written into the home; its id (sweeps count from 1 in a
/// fresh history).
fn sweep(h: &Home, name: &str, plan: &str, more: &[&str]) {
    let path = h.path().join(name);
    std::fs::write(&path, plan).unwrap();
    let (code, out, err) = h.run(&with(&["sweep", path.to_str().unwrap()], more));
    assert_eq!(code, 0, "{out}\n{err}");
}

/// The rows of the points table of a sweep comparison (after its header).
fn point_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.starts_with("Points both sweeps ran"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[test]
fn two_sweeps_compare_point_by_point_by_id_and_by_file() {
    let h = Home::new();
    // B does ten times the work per event (primes up to 20000 instead of 2000): slower
    // whatever the machine. Its key is spelled --threads and its values run in another
    // order: the points are matched by their values.
    sweep(
        &h,
        "a.toml",
        "command = \"cpu --cpu-max-prime=2000 --time=0.4 --report-interval=0.05 run\"\n[matrix]\nthreads = [1, 2]\n",
        &["--json=a.json"],
    );
    sweep(
        &h,
        "b.toml",
        "command = \"cpu --cpu-max-prime=20000 --time=0.4 --report-interval=0.05 run\"\n[matrix]\n\"--threads\" = [2, 3, 1]\n",
        &["--json=b.json"],
    );

    let (code, text, err) = h.run(&["compare", "sweep:1", "sweep:2", "--fail-if-slower=10"]);
    assert_eq!(code, 4, "{text}\n{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("plumb: --fail-if-slower=10: B is slower beyond noise: threads=1: -")
            && err.contains("; threads=2: -"),
        "{err}"
    );
    assert!(text.starts_with("A: sweep 1, "), "{text}");
    assert!(
        text.contains(": cpu --cpu-max-prime=2000 --time=0.4 --report-interval=0.05 run (2 point(s), 2 run(s); swept: threads)\n"),
        "{text}"
    );
    assert!(text.contains("\nB: sweep 2, "), "{text}");
    let diff = text
        .lines()
        .find(|l| l.contains("cpu_max_prime"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        diff.split_whitespace().collect::<Vec<_>>(),
        ["settings", "cpu_max_prime", "2000", "20000"]
    );
    assert!(
        text.contains("\nPoints both sweeps ran (2): events/s (all events over all measured time of the point's runs), p95 and p99 (their histograms merged):\n"),
        "{text}"
    );
    let rows = point_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    for (row, threads) in rows.iter().zip(["1", "2"]) {
        assert_eq!(row.len(), 13, "{row:?}");
        assert_eq!(row[0], threads, "{text}");
        assert!(row[3].parse::<f64>().unwrap() < 0.5, "{row:?}");
        assert_eq!(row[5], "B lower, beyond noise (worse)", "{text}");
    }
    assert!(text.contains("\nOnly in B (1):\n  --threads=3\n"), "{text}");
    assert!(!text.contains("Only in A"), "{text}");
    assert!(
        text.contains("\nNoise: 95% interval of B/A from a circular moving-block bootstrap"),
        "{text}"
    );

    // The other way round, from the files: B is faster, the gate passes.
    let (code, text, err) = h.run(&["compare", "b.json", "a.json", "--fail-if-slower=10"]);
    assert_eq!(code, 0, "{text}\n{err}");
    assert!(err.is_empty(), "{err}");
    assert!(text.starts_with("A: b.json, "), "{text}");
    let rows = point_rows(&text);
    assert_eq!(
        rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(),
        ["2", "1"],
        "A's order: {text}"
    );
    assert!(rows
        .iter()
        .all(|r| r[5] == "B higher, beyond noise (better)"));
    assert!(text.contains("\nOnly in A (1):\n  --threads=3\n"), "{text}");

    // A file and an id mix; the JSON document.
    let (code, out, _) = h.run(&[
        "compare",
        "a.json",
        "sweep:2",
        "--json",
        "--fail-if-slower=10",
    ]);
    assert_eq!(code, 4);
    let doc = common::parse_json(out.as_bytes());
    assert_eq!(doc["schema"], "plumb.sweep-compare/1");
    assert_eq!(doc["unit"], "events/s");
    assert_eq!(doc["a"]["label"], "a.json");
    assert_eq!(doc["b"]["label"], "sweep 2");
    assert_eq!(doc["a"]["keys"], serde_json::json!(["threads"]));
    assert_eq!(doc["b"]["runs"], 3);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["point"], "threads=1");
    assert_eq!(points[0]["values"], serde_json::json!({"threads": "1"}));
    assert_eq!(points[0]["runs_a"], serde_json::json!(["run 1"]));
    assert_eq!(points[0]["runs_b"], serde_json::json!(["run 5"]));
    let names: Vec<&str> = points[0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["events/s", "latency p95", "latency p99"]);
    assert_eq!(points[0]["figures"][0]["verdict"], "lower");
    assert_eq!(doc["only_in_a"], serde_json::json!([]));
    assert_eq!(doc["only_in_b"], serde_json::json!(["--threads=3"]));
    assert_eq!(doc["differences"][0]["what"], "cpu_max_prime");
    assert_eq!(doc["gate"]["result"]["outcome"], "slower");
    // Repeatable: the bootstrap's seed is fixed.
    assert_eq!(
        h.ok(&["compare", "sweep:1", "sweep:2", "--json"]),
        h.ok(&["compare", "sweep:1", "sweep:2", "--json"])
    );
}

#[test]
fn sweeps_without_noise_estimates_other_variables_and_runs_are_refused_or_said() {
    let h = Home::new();
    // Points of 0.3 s: fewer interval samples than the noise needs.
    sweep(
        &h,
        "a.toml",
        "command = \"cpu --cpu-max-prime=2000 --time=0.3 run\"\n[matrix]\nthreads = [1]\n",
        &[],
    );
    sweep(
        &h,
        "b.toml",
        "command = \"cpu --cpu-max-prime=20000 --time=0.3 run\"\n[matrix]\nthreads = [1]\n",
        &[],
    );
    let (code, text, err) = h.run(&["compare", "sweep:1", "sweep:2", "--fail-if-slower=10"]);
    assert_eq!(code, 1, "{text}\n{err}");
    assert!(
        err.starts_with(
            "plumb: --fail-if-slower=10: B is slower but its noise cannot be judged: threads=1: -"
        ),
        "{err}"
    );
    let rows = point_rows(&text);
    assert_eq!(rows.len(), 1, "{text}");
    assert_eq!(rows[0][0], "1");
    assert!(rows[0][5].starts_with("noise unknown: "), "{text}");

    // Another swept variable: no point in common, and the difference says why.
    sweep(
        &h,
        "c.toml",
        "command = \"cpu --time=0.3 run\"\n[matrix]\nthreads = [1]\ncpu-max-prime = [3000]\n",
        &[],
    );
    let (code, text, err) = h.run(&["compare", "sweep:1", "sweep:3", "--fail-if-slower=10"]);
    // A gate that judged nothing does not pass.
    assert_eq!(code, 1, "nothing to gate: {text}\n{err}");
    assert_eq!(
        err,
        "plumb: --fail-if-slower=10: nothing to judge: A and B have no throughput in common (no point both sweeps ran)\n"
    );
    let vars = text
        .lines()
        .find(|l| l.contains("swept variables"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        vars.split_whitespace().collect::<Vec<_>>(),
        [
            "sweep",
            "swept",
            "variables",
            "threads",
            "threads",
            "cpu-max-prime"
        ]
    );
    assert!(
        text.contains("\nPoints both sweeps ran (0): events/s (all events over all measured time of the point's runs), p95 and p99 (their histograms merged):\n  none\n"),
        "{text}"
    );
    assert!(text.contains("\nOnly in A (1):\n  threads=1\n"), "{text}");
    assert!(
        text.contains("\nOnly in B (1):\n  threads=1 cpu-max-prime=3000\n"),
        "{text}"
    );

    // A sweep beside a run (run 1 is the first sweep's run): one line, a usage error.
    for (args, want) in [
        (
            ["compare", "sweep:1", "1"],
            "plumb: A (sweep:1) is a sweep and B (1) is not: plumb compare puts two runs or two sweeps side by side\n",
        ),
        (
            ["compare", "1", "sweep:2"],
            "plumb: B (sweep:2) is a sweep and A (1) is not: plumb compare puts two runs or two sweeps side by side\n",
        ),
        (
            ["compare", "sweep:x", "sweep:2"],
            "plumb: 'sweep:x': a sweep is named sweep:ID (a number)\n",
        ),
    ] {
        let (code, out, err) = h.run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err, want);
        assert!(out.is_empty(), "{out}");
    }
    let (code, _, err) = h.run(&["compare", "sweep:9", "sweep:1"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "plumb: no sweep 9 in the history (plumb history lists runs with their sweep)\n"
    );
}

/// The lines of the per-point comparability section: each point's row (by its first
/// value) with the indented lines under it.
fn check_rows(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut rows: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for l in text
        .lines()
        .skip_while(|l| !l.starts_with("Comparability per point"))
        .skip(1)
        .take_while(|l| !l.is_empty())
    {
        match l.strip_prefix("    ") {
            Some(under) => rows
                .last_mut()
                .expect("a row first")
                .1
                .push(under.to_string()),
            None => rows.push((
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                Vec::new(),
            )),
        }
    }
    rows
}

#[test]
fn two_sweeps_run_seed_002s_checks_at_every_point_and_warn_under_it() {
    let h = Home::new();
    // B syncs only at the end (--file-fsync-freq=0): at every point its fsyncs per write
    // are a fraction of A's. Both sweeps write through one cursor: as many writers per
    // file as threads, the same at each point.
    let cmd =
        "fileio --file-total-size=4M --file-num=4 --file-test-mode=seqrewr --events=400 --time=0";
    sweep(
        &h,
        "a.toml",
        &format!("command = \"{cmd} run\"\nrepeat = 2\n[matrix]\nthreads = [1, 2]\n"),
        &["--json=a.json"],
    );
    sweep(
        &h,
        "b.toml",
        &format!("command = \"{cmd} --file-fsync-freq=0 run\"\n[matrix]\nthreads = [1, 2]\n"),
        &["--json=b.json"],
    );
    let text = h.ok(&["compare", "sweep:1", "sweep:2"]);
    assert!(
        text.contains("\nComparability per point (seed 002: these must match before two I/O results are compared; each side's figure is the mean of the point's runs):\n"),
        "{text}"
    );
    let rows = check_rows(&text);
    assert_eq!(rows.len(), 3, "a header and two points: {text}");
    assert_eq!(
        rows[0].0,
        [
            "threads",
            "fsync calls",
            "page cache hit ratio",
            "files in page cache at start",
            "filesystem concurrency",
            "context switches"
        ],
        "{text}"
    );
    assert!(rows[0].1.is_empty(), "{text}");
    for (row, threads) in rows[1..].iter().zip(["1", "2"]) {
        assert_eq!(row.0.len(), 6, "{text}");
        assert_eq!(row.0[0], threads, "{text}");
        assert_eq!(row.0[1], "DIFFER", "{text}");
        // No read in a rewrite test: no hit ratio.
        assert_eq!(row.0[2], "n/a", "{text}");
        assert_eq!(row.0[4], "match", "{text}");
        let fsync: Vec<&String> = row
            .1
            .iter()
            .filter(|l| l.starts_with("warning: fsync calls: A "))
            .collect();
        assert_eq!(fsync.len(), 1, "{text}");
        assert!(
            fsync[0].ends_with(" per write: the runs did not do the same thing underneath"),
            "{text}"
        );
        assert!(
            !row.1.iter().any(|l| l.contains("filesystem concurrency")),
            "{text}"
        );
        // The setting that differs at every point is listed once, above.
        assert!(
            !row.1.iter().any(|l| l.starts_with("differs at this point")),
            "{text}"
        );
    }
    let diff = text
        .lines()
        .filter(|l| l.contains("fsync_freq"))
        .collect::<Vec<_>>();
    assert_eq!(diff.len(), 1, "{text}");
    assert_eq!(
        diff[0].split_whitespace().collect::<Vec<_>>(),
        ["settings", "fsync_freq", "100", "0"]
    );

    let doc = h.json(&["compare", "sweep:1", "sweep:2", "--json"]);
    for p in doc["points"].as_array().unwrap() {
        let checks = p["checks"].as_array().unwrap();
        let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "fsync calls",
                "page cache hit ratio",
                "files in page cache at start",
                "filesystem concurrency",
                "context switches"
            ]
        );
        assert_eq!(checks[0]["verdict"], "differ", "{p}");
        assert!(
            checks[0]["a"].as_f64().unwrap() > checks[0]["b"].as_f64().unwrap(),
            "{p}"
        );
        assert_eq!(checks[3]["verdict"], "match", "{p}");
        assert_eq!(
            checks[3]["a"],
            p["values"]["threads"]
                .as_str()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        );
        assert_eq!(checks[3]["a"], checks[3]["b"]);
        assert_eq!(p["differences"], serde_json::json!([]), "{p}");
    }

    // Repeats: a side's figure is the mean of its runs' (A's second run of threads=1
    // edited to three writers per file: A's mean is 2, B's 1).
    let path = h.path().join("a.json");
    let mut a: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(a["runs"][1]["values"]["threads"], "1");
    a["runs"][1]["record"]["groups"][0]["jobs"][0]["workload"]["writers_per_file"] = 3.0.into();
    std::fs::write(&path, a.to_string()).unwrap();
    let text = h.ok(&["compare", "a.json", "sweep:2"]);
    let rows = check_rows(&text);
    assert_eq!(rows[1].0[4], "DIFFER", "{text}");
    assert!(
        rows[1].1.contains(&"warning: filesystem concurrency: A 2.000, B 1.000 threads per file: the runs did not do the same thing underneath".to_string()),
        "{text}"
    );
    assert_eq!(rows[2].0[4], "match", "{text}");

    // A kernel that differs at one point only (B's second point, edited in its file) is
    // said under that point; one that differs at every point only at the top.
    let path = h.path().join("b.json");
    let mut b: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    fn release(b: &mut Value, run: usize) -> &mut Value {
        &mut b["runs"][run]["record"]["groups"][0]["observations"]["host"]["kernel_release"]
    }
    let real = release(&mut b, 0).as_str().unwrap().to_string();
    *release(&mut b, 1) = "9.9.9-test".into();
    std::fs::write(&path, b.to_string()).unwrap();
    let text = h.ok(&["compare", "a.json", "b.json"]);
    assert_eq!(
        text.lines().filter(|l| l.contains("9.9.9-test")).count(),
        1,
        "under its point, not at the top: {text}"
    );
    let rows = check_rows(&text);
    assert!(
        !rows[1].1.iter().any(|l| l.starts_with("differs")),
        "{text}"
    );
    assert_eq!(
        rows[2]
            .1
            .iter()
            .filter(|l| l.starts_with("differs"))
            .collect::<Vec<_>>(),
        [&format!(
            "differs at this point: kernel kernel release: A {real}, B 9.9.9-test"
        )],
        "{text}"
    );
    let doc = h.json(&["compare", "a.json", "b.json", "--json"]);
    assert_eq!(doc["points"][0]["differences"], serde_json::json!([]));
    assert_eq!(
        doc["points"][1]["differences"],
        serde_json::json!([{"area": "kernel", "what": "kernel release", "a": real, "b": "9.9.9-test"}])
    );
    *release(&mut b, 0) = "9.9.9-test".into();
    std::fs::write(&path, b.to_string()).unwrap();
    let text = h.ok(&["compare", "a.json", "b.json"]);
    let top: Vec<&str> = text.lines().filter(|l| l.contains("9.9.9-test")).collect();
    assert_eq!(top.len(), 1, "once, at the top: {text}");
    assert_eq!(
        top[0].split_whitespace().collect::<Vec<_>>(),
        ["kernel", "kernel", "release", &real, "9.9.9-test"]
    );
    assert!(
        check_rows(&text)
            .iter()
            .all(|(_, under)| !under.iter().any(|l| l.starts_with("differs"))),
        "{text}"
    );
}

/// Two runs that differ only in their rate (a harness setting named like a figure,
/// `rate_per_s`) or in how they ended: compare lists the difference before the figures.
#[test]
fn a_rate_or_an_interrupted_run_is_a_listed_difference() {
    let h = Home::new();
    h.ok(&["cpu", "--time=0.3", "--tag=free", "run"]);
    h.ok(&["cpu", "--time=0.3", "--rate=1000", "--tag=paced", "run"]);
    let (code, text, err) = h.run(&["compare", "free", "paced"]);
    assert_eq!(code, 0, "{err}");
    let rate = text
        .lines()
        .find(|l| l.contains("rate_per_s"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        rate.split_whitespace().collect::<Vec<_>>(),
        ["settings", "rate_per_s", "(none)", "1000.0"]
    );

    let mut c = h.command(&["cpu", "--time=30", "--tag=cut", "run"]);
    let child = c
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let (_, text, _) = h.run(&["compare", "free", "cut"]);
    let status = text
        .lines()
        .find(|l| l.contains(" status "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        status.split_whitespace().collect::<Vec<_>>(),
        [
            "run",
            "status",
            "completed",
            "interrupted",
            "(signal",
            "SIGINT)"
        ]
    );
}

/// The server's counters over each run are figures beside the throughput, not settings
/// that differ between two runs of the same command.
#[test]
fn server_counters_are_compared_as_figures_not_settings() {
    if !common::available("mysql") {
        return;
    }
    let db = "plumb_compare_server";
    common::mysql_fresh_db(db);
    let h = Home::new();
    let base = [
        "oltp_point_select",
        "--mysql-user=root",
        "--mysql-db=plumb_compare_server",
        "--table-size=200",
    ];
    h.ok(&with(&base, &["prepare"]));
    for tag in ["--tag=one", "--tag=two"] {
        h.ok(&with(&base, &["--time=0.3", tag, "run"]));
    }
    let (code, text, err) = h.run(&["compare", "one", "two"]);
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains("server_activity"), "{text}");
    for row in ["server rows read/s", "buffer pool hit ratio"] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(row))
            .unwrap_or_else(|| panic!("no {row}: {text}"));
        assert!(
            line.ends_with(
                "noise unknown: the server's counters are read at the start and the end only"
            ),
            "{line}"
        );
    }
    h.ok(&with(&base, &["cleanup"]));
}

/// A sweep where one run is asked for, or a sweep that is not there, is one line naming it.
#[test]
fn a_sweep_is_not_a_run_and_a_missing_sweep_is_said() {
    let h = Home::new();
    h.ok(&with(CPU, &["run"]));
    let (code, out, err) = h.run(&["show", "sweep:1"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err,
        "plumb: sweep:1 is a sweep, not one run: plumb history --sweep=1 lists its runs, plumb html sweep:1 draws it, plumb compare sweep:1 sweep:N compares two\n"
    );
    let (code, out, err) = h.run(&["history", "--sweep=999"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.starts_with("plumb: no sweep 999 in the history"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A sweep run with --no-history and its --json document imported later is kept as a sweep:
/// its runs at their points, its plan, how it ended.
#[test]
fn a_sweep_document_is_imported_as_a_sweep() {
    let h = Home::new();
    let plan = h.path().join("p.toml");
    std::fs::write(
        &plan,
        "command = \"cpu --cpu-max-prime=2000 --time=0.2 run\"\n[matrix]\nthreads = [1, 2]\n",
    )
    .unwrap();
    let (code, out, err) = h.run(&[
        "sweep",
        plan.to_str().unwrap(),
        "--no-history",
        "--json=s.json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let out = h.ok(&["history", "import", "s.json", "--tag=lab"]);
    assert_eq!(
        out,
        "s.json: kept as sweep 1 (2 run(s); plumb history --sweep=1)\n"
    );
    let runs = h.json(&["history", "--sweep=1", "--json", "--limit=0"])["runs"].clone();
    let mut points: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sweep_point"].as_str().unwrap().to_string())
        .collect();
    points.sort();
    assert_eq!(points, ["threads=1", "threads=2"]);
    assert!(runs[0]["tags"].to_string().contains("lab"), "{runs}");
    // The same sweep either way: from the history and from the file.
    let (code, text, err) = h.run(&["compare", "sweep:1", "s.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("\nPoints both sweeps ran (2)"), "{text}");
}
