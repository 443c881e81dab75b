//! Helpers shared by the integration tests: run the real binary.
#![allow(dead_code)]

pub mod fio_text;
pub mod loop_dev;
pub mod peers;
pub mod small_fs;
pub mod strace;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};

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

/// One run of the binary, built step by step: its arguments, the directory it runs in, and
/// the tool it runs under (strace), then run in the way the test needs.
pub struct Scenario {
    args: Vec<String>,
    dir: Option<PathBuf>,
    under: Vec<String>,
}

/// A scenario running plumb with `args`.
pub fn scenario(args: &[&str]) -> Scenario {
    Scenario {
        args: args.iter().map(|s| s.to_string()).collect(),
        dir: None,
        under: Vec::new(),
    }
}

impl Scenario {
    pub fn args(mut self, args: &[&str]) -> Scenario {
        self.args.extend(args.iter().map(|s| s.to_string()));
        self
    }

    /// Run in `dir` (where fileio keeps its files when --file-dir is not given).
    pub fn in_dir(mut self, dir: &Path) -> Scenario {
        self.dir = Some(dir.to_path_buf());
        self
    }

    /// Run plumb as the last argument of `tool` (e.g. `["strace", "-f", "-o", "/dev/null"]`).
    pub fn under(mut self, tool: &[&str]) -> Scenario {
        self.under = tool.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn command(&self) -> std::process::Command {
        let exe = assert_cmd::cargo::cargo_bin("plumb");
        let mut cmd = match self.under.split_first() {
            Some((tool, tool_args)) => {
                let mut c = std::process::Command::new(tool);
                c.args(tool_args).arg(exe);
                c
            }
            None => std::process::Command::new(exe),
        };
        cmd.args(&self.args);
        if let Some(d) = &self.dir {
            cmd.current_dir(d);
        }
        cmd
    }

    pub fn output(&self) -> Output {
        self.command().output().unwrap()
    }

    /// (exit code, stdout, stderr).
    pub fn run(&self) -> (i32, String, String) {
        let out = self.output();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The run must succeed; its output.
    pub fn ok(&self) -> Output {
        let out = self.output();
        assert!(
            out.status.success(),
            "plumb {:?} failed: {}",
            self.args,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The run must succeed; its stdout.
    pub fn ok_stdout(&self) -> String {
        String::from_utf8(self.ok().stdout).unwrap()
    }

    /// The run must succeed and print only JSON on stdout; that document.
    pub fn ok_json(&self) -> Value {
        parse_json(&self.ok().stdout)
    }

    /// The run must succeed and print a one-job result; [`single_job`] of it.
    pub fn ok_job(&self) -> Value {
        single_job(self.ok_json())
    }

    /// Start the run with stdout and stderr piped.
    pub fn spawn(&self) -> Child {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// stdout as JSON, or a panic that shows what it was.
pub fn parse_json(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(stdout)
        )
    })
}

/// The sum of `key` over the objects of a JSON array (events per thread, counts per kind).
pub fn sum_of(array: &Value, key: &str) -> u64 {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[key].as_u64().unwrap())
        .sum()
}

/// Send `sig` to a child started by a test.
pub fn signal(child: &Child, sig: i32) {
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

/// Run plumb with `args` plus --format=json; the run must succeed and stdout must be JSON only.
pub fn json_run(args: &[&str]) -> Value {
    scenario(args).args(&["--format=json"]).ok_job()
}

/// Run plumb with `args` plus --format=json; the run must succeed; the whole document.
pub fn json_doc(args: &[&str]) -> Value {
    scenario(args).args(&["--format=json"]).ok_json()
}

/// Like [`json_run`], with `dir` as the working directory (where fileio keeps its files).
pub fn json_run_in(dir: &Path, args: &[&str]) -> Value {
    scenario(args).in_dir(dir).args(&["--format=json"]).ok_job()
}

/// Run plumb and return (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    scenario(args).run()
}

/// Run plumb; it must succeed; its stdout.
pub fn run_ok(args: &[&str]) -> String {
    scenario(args).ok_stdout()
}

/// A temporary directory for a test's files.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(std::env::temp_dir()).unwrap()
}

pub fn dir_arg(d: &Path) -> String {
    format!("--file-dir={}", d.display())
}

/// `plumb fileio --file-dir=D args...`: (exit code, stdout, stderr).
pub fn fileio(d: &Path, args: &[&str]) -> (i32, String, String) {
    scenario(&["fileio", &dir_arg(d)]).args(args).run()
}

/// Make `cmd` run with the resource limit `resource` (RLIMIT_*) at `limit`.
pub fn with_rlimit(
    cmd: &mut std::process::Command,
    resource: libc::__rlimit_resource_t,
    limit: u64,
) {
    // SAFETY: pre_exec runs only setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(resource, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The error output is one line, with no panic in it.
pub fn one_error_line(err: &str) {
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
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

/// Bytes as text, lossily.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Run a command, or None when it cannot be started.
pub fn sh(cmd: &str, args: &[&str]) -> Option<Output> {
    std::process::Command::new(cmd).args(args).output().ok()
}

/// Whether `server` ("mysql": MariaDB as root on its socket, else PostgreSQL as postgres on
/// 127.0.0.1) answers; under CI a server that does not is a failure.
pub fn available(server: &str) -> bool {
    let ok = match server {
        "mysql" => sh("mariadb", &["-uroot", "-e", "SELECT 1"]),
        _ => sh(
            "psql",
            &["-U", "postgres", "-h", "127.0.0.1", "-c", "SELECT 1"],
        ),
    }
    .is_some_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").is_err(),
            "{server} does not answer on this machine (CI=true: a missing server fails)"
        );
        eprintln!("skipped: {server} does not answer");
    }
    ok
}

/// Run SQL as MariaDB's root; its output, tab-separated without headers.
pub fn mysql(sql: &str) -> String {
    let o = sh("mariadb", &["-uroot", "-N", "-B", "-e", sql]).expect("mariadb client");
    assert!(o.status.success(), "{sql}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Run SQL in PostgreSQL's database `db` as postgres; rows unaligned, values only.
pub fn psql(db: &str, sql: &str) -> String {
    let o = psql_output(db, sql);
    assert!(o.status.success(), "{sql}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// `psql`'s run, whether it succeeded or not.
fn psql_output(db: &str, sql: &str) -> Output {
    sh(
        "psql",
        &[
            "-U",
            "postgres",
            "-h",
            "127.0.0.1",
            "-d",
            db,
            "-At",
            "-c",
            sql,
        ],
    )
    .expect("psql")
}

/// A fresh, empty MariaDB database `name`.
pub fn mysql_fresh_db(name: &str) {
    mysql(&format!(
        "DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"
    ));
}

/// A fresh, empty PostgreSQL database `name`. CREATE DATABASE copies template1 and fails
/// while another session creates one from it at the same moment: try again.
pub fn pg_fresh_db(name: &str) {
    psql("postgres", &format!("DROP DATABASE IF EXISTS {name}"));
    for _ in 0..100 {
        if psql_output("postgres", &format!("CREATE DATABASE {name}"))
            .status
            .success()
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("cannot create database {name}");
}

/// Debian's mariadb-slap, or None (with a message) when it is missing outside CI.
pub fn mariadb_slap() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/bin/mariadb-slap");
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").is_err(),
        "mariadb-slap is missing: CI runs the mysqlslap comparison (apt-get install mariadb-client)"
    );
    eprintln!("skipped: mariadb-slap is not installed");
    None
}

/// A directory with `mysqlslap` linked to plumb (the drop-in name).
pub fn mysqlslap_dir() -> tempfile::TempDir {
    let d = tempfile::TempDir::new().unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("plumb"),
        d.path().join("mysqlslap"),
    )
    .unwrap();
    d
}

/// Run `prog` in `dir` with stdin closed.
pub fn run_prog(prog: &Path, dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(prog)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The number after `label` on its line of a report ("transactions:", "read:").
pub fn figure(report: &str, label: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no '{label}' in {report}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A report line's layout: each figure (with its decimals) becomes N and runs of spaces one,
/// for comparing layouts whose figures differ.
pub fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    for ch in line.chars() {
        if ch.is_ascii_digit() || (in_num && ch == '.') {
            if !in_num {
                out.push('N');
            }
            in_num = true;
        } else {
            in_num = false;
            out.push(ch);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// dd's statistics lines with the time and rate masked, up to where plumb's section starts
/// (after a blank line, or at once under status=none): what GNU dd and plumb dd must print
/// alike.
pub fn dd_stats_masked(stderr: &str) -> String {
    stderr
        .lines()
        .map(|l| match l.split_once(" copied, ") {
            Some((head, _)) => format!("{head} copied, T s, R"),
            None => l.to_string(),
        })
        .take_while(|l| !l.is_empty() && l != "plumb:")
        .collect::<Vec<_>>()
        .join("\n")
}
