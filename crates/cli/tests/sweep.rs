//! plumb sweep: the issue's plan on SQLite (prepare once per data set, cleanup after its
//! last point, points in order, one sweep id), fio (the files its runs lay out removed after
//! each data set, never one that was there before; keep_data), repeat, Ctrl-C, a point that
//! fails, the knee of a variable with too few points, bad plans, --dry-run.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;

mod common;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn plumb(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("plumb").unwrap();
        c.current_dir(self.dir.path())
            .env("PLUMB_HOME", self.dir.path().join("home"))
            .args(args);
        c
    }
    fn plan(&self, text: &str) -> String {
        let p = self.dir.path().join("plan.toml");
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }
    fn out(&self, args: &[&str]) -> (i32, String, String) {
        let o = self.plumb(args).output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
    fn history(&self, sweep: &str) -> serde_json::Value {
        let (code, out, err) = self.out(&[
            "history",
            "--json",
            "--limit=0",
            &format!("--sweep={sweep}"),
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    }
}

const ISSUE_PLAN: &str = "command = \"oltp_read_write --tables=2 --time=0.3 run\"\n[matrix]\nthreads = [1, 2]\ntable-size = [100, 200]\n";

#[test]
fn the_issue_plan_prepares_once_per_table_size_and_keeps_one_sweep() {
    let e = Env::new();
    let plan = e.plan(ISSUE_PLAN);
    let (code, out, err) = e.out(&["sweep", &plan, "--json=sweep.json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let steps: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("sweep: "))
        .filter(|l| !l.starts_with("run "))
        .collect();
    assert_eq!(
        steps,
        vec![
            "prepare: plumb oltp_read_write --tables=2 --time=0.3 --threads=1 --table-size=100 prepare",
            "cleanup: plumb oltp_read_write --tables=2 --time=0.3 --threads=2 --table-size=100 cleanup",
            "prepare: plumb oltp_read_write --tables=2 --time=0.3 --threads=1 --table-size=200 prepare",
            "cleanup: plumb oltp_read_write --tables=2 --time=0.3 --threads=2 --table-size=200 cleanup",
        ],
        "{err}"
    );
    let points: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("point ") && l.contains(": "))
        .collect();
    assert_eq!(points.len(), 4, "{out}");
    for (p, want) in points.iter().zip([
        "point 1/4: threads=1 table-size=100",
        "point 2/4: threads=2 table-size=100",
        "point 3/4: threads=1 table-size=200",
        "point 4/4: threads=2 table-size=200",
    ]) {
        assert!(
            p.starts_with(want) && p.contains(" tps ") && p.contains("p95"),
            "{p}"
        );
    }
    assert!(
        out.contains("Sweep results:") && out.contains("Knee"),
        "{out}"
    );
    assert!(
        out.contains("  threads: knee at") || out.contains("  threads: no knee"),
        "{out}"
    );
    let sweep_id = out
        .lines()
        .find_map(|l| l.strip_prefix("sweep "))
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .to_string();
    let h = e.history(&sweep_id);
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let mut got: Vec<&str> = runs
        .iter()
        .map(|r| r["sweep_point"].as_str().unwrap())
        .collect();
    got.reverse();
    assert_eq!(
        got,
        [
            "threads=1 table-size=100",
            "threads=2 table-size=100",
            "threads=1 table-size=200",
            "threads=2 table-size=200"
        ]
    );
    assert!(runs
        .iter()
        .all(|r| r["sweep_id"] == sweep_id.parse::<i64>().unwrap()));
    // Cleanup ran: the tables are gone from the SQLite file.
    let (code, _, err) = e.out(&["oltp_read_write", "--tables=2", "--time=0.1", "run"]);
    assert_ne!(code, 0, "the tables were dropped: {err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(doc["schema"], "plumb.sweep/1");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 4);
    assert_eq!(doc["runs"][2]["values"]["table-size"], "200");
    assert_eq!(doc["runs"][2]["record"]["schema"], "plumb.result/2");
}

#[test]
fn a_fio_sweep_with_repeats_keeps_every_run() {
    let e = Env::new();
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=null --size=1M --runtime=0.2s --time_based\"\nrepeat = 2\n[matrix]\nbs = [\"4k\", \"16k\"]\niodepth = [1, 8]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let points: Vec<&str> = out.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 8, "{out}");
    assert!(
        points[0].starts_with("point 1/4: bs=4k iodepth=1") && points[0].contains("IOPS"),
        "{out}"
    );
    assert!(
        points[1].starts_with("point 1/4 #2: bs=4k iodepth=1"),
        "{out}"
    );
    assert!(
        points[7].starts_with("point 4/4 #2: bs=16k iodepth=8"),
        "{out}"
    );
    assert!(
        !out.contains("sweep 1:"),
        "--no-history keeps nothing: {out}"
    );
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Sweep results"))
        .skip(2)
        .take(4)
        .collect();
    assert!(
        table
            .iter()
            .all(|l| l.split_whitespace().nth(2) == Some("2")),
        "{out}"
    );
}

#[test]
fn dry_run_lists_points_and_data_steps_without_running() {
    let e = Env::new();
    let plan = e.plan("command = \"fileio --file-num=1 --file-total-size=64K --file-test-mode=rndrd run\"\nwarmup = \"1s\"\n[matrix]\nthreads = [1, 2]\nfile-total-size = [\"64K\", \"128K\"]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(str::trim)
        .collect();
    assert_eq!(lines.len(), 8, "{out}");
    assert!(lines[0].starts_with("prepare   plumb fileio --file-num=1 --file-test-mode=rndrd --threads=1 --file-total-size=64K --warmup-time=1 prepare"), "{out}");
    assert_eq!(lines[1], "point 1   threads=1 file-total-size=64K");
    assert_eq!(lines[3].split_whitespace().next(), Some("cleanup"));
    assert!(out.contains("warms up for 0:00:01"), "{out}");
    assert!(!e.dir.path().join("test_file.0").exists());
    assert!(!e.dir.path().join("home").exists(), "nothing kept");
}

#[test]
fn bad_plans_get_one_line_naming_the_key() {
    let e = Env::new();
    let cases = [
        (
            "command = \"cpu run\"\nthreds = 2\n[matrix]\nthreads = [1]\n",
            "plan.toml:2: unknown field `threds`",
        ),
        (
            "command = \"cpu run\"\nrepeat = \"x\"\n[matrix]\nthreads = [1]\n",
            "plan.toml:2: invalid type",
        ),
        (
            "command = \"cpu run\"\n[matrix]\nthreads = [1]\nnope = [1, 2]\n",
            "plan.toml:4: matrix.nope: not an option of the 'cpu' test",
        ),
        (
            "command = \"cpu run\"\n[matrix]\nthreads = 4\n",
            "plan.toml:3: matrix.threads: expected a non-empty list",
        ),
        (
            "command = \"cpu run\"\n[matrix]\nthreads = [1, 0]\n",
            "point 2 (0): invalid value for --threads: '0'",
        ),
        (
            "command = \"cpu run\"\npause = \"soon\"\n[matrix]\nthreads = [1]\n",
            "plan.toml:2: pause: 'soon' is not a duration",
        ),
        (
            "command = \"fio --name=a --bs=4k\"\n[matrix]\nbss = [1]\n",
            "plan.toml:3: matrix.bss: not one of fio's options",
        ),
        (
            "command = \"fileio --file-num=1 --file-total-size=64K --file-test-mode=rndrd prepare run cleanup\"\nkeep_data = true\n[matrix]\nthreads = [1]\n",
            "plan.toml:2: keep_data = true, but the command names cleanup: keep one",
        ),
        (
            "command = \"cpu run\"\nkeep_data = 1\n[matrix]\nthreads = [1]\n",
            "plan.toml:2: invalid type",
        ),
    ];
    for (text, want) in cases {
        let plan = e.plan(text);
        let (code, out, err) = e.out(&["sweep", &plan]);
        assert_eq!(code, 2, "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{text}: {err}");
        assert!(err.contains(want), "{text}: {err}");
        assert!(out.is_empty(), "{out}");
    }
}

/// A sweep started with its stdout and stderr read line by line as they come.
struct Live {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<(bool, String)>,
    out: String,
    err: String,
}

impl Live {
    fn start(e: &Env, args: &[&str]) -> Live {
        let mut child = e
            .plumb(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        for (is_out, r) in [
            (true, Box::new(stdout) as Box<dyn std::io::Read + Send>),
            (false, Box::new(stderr)),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for l in BufReader::new(r).lines().map_while(Result::ok) {
                    let _ = tx.send((is_out, l));
                }
            });
        }
        Live {
            child,
            lines,
            out: String::new(),
            err: String::new(),
        }
    }

    /// Read until a line of stdout (`out`) or stderr starts with `start`.
    fn wait_for(&mut self, out: bool, start: &str) {
        loop {
            let Ok((is_out, l)) = self.lines.recv_timeout(Duration::from_secs(120)) else {
                panic!("no line '{start}...':\n{}\n{}", self.out, self.err);
            };
            let text = if is_out { &mut self.out } else { &mut self.err };
            text.push_str(&l);
            text.push('\n');
            if is_out == out && l.starts_with(start) {
                return;
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Wait until the process has taken every signal sent to it (none pending in
    /// /proc/PID/status): its handler has run.
    fn signals_taken(&self) {
        let status = format!("/proc/{}/status", self.child.id());
        for i in 0..6000 {
            let s = std::fs::read_to_string(&status).unwrap_or_default();
            let pending = s
                .lines()
                .filter(|l| l.starts_with("ShdPnd:") || l.starts_with("SigPnd:"))
                .any(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .is_some_and(|m| !m.trim_start_matches('0').is_empty())
                });
            if !pending {
                return;
            }
            // Looked at without a pause first: most signals are taken in microseconds.
            if i > 100 {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        panic!("the signal was never taken");
    }

    /// The exit code, with all of stdout and stderr.
    fn finish(mut self) -> (i32, String, String) {
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        while let Ok((is_out, l)) = self.lines.recv_timeout(Duration::from_secs(10)) {
            let text = if is_out { &mut self.out } else { &mut self.err };
            text.push_str(&l);
            text.push('\n');
        }
        (code, self.out, self.err)
    }
}

#[test]
fn ctrl_c_during_the_second_point_keeps_the_first_and_exits_130() {
    let e = Env::new();
    // The second point runs for ten minutes: the signal lands in it (or just before it).
    let plan =
        e.plan("command = \"cpu --cpu-max-prime=2000 run\"\n[matrix]\ntime = [0.3, 600, 1]\n");
    let mut s = Live::start(&e, &["sweep", &plan]);
    s.wait_for(true, "point 1/3: ");
    s.signal(libc::SIGINT);
    let (code, out, err) = s.finish();
    assert_eq!(code, 130, "{out}\n{err}");
    let points: Vec<&str> = out.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 1, "{out}\n{err}");
    assert!(points[0].starts_with("point 1/3: time=0.3"), "{out}");
    assert!(out.contains("Sweep results:"), "{out}");
    assert_eq!(
        err.lines().last(),
        Some("sweep: stopped by SIGINT: 1 of 3 run(s) done and kept"),
        "{err}"
    );
    let h = e.history("1");
    assert_eq!(h["runs"].as_array().unwrap().len(), 1);
    // The history keeps how the sweep ended: its page says it stopped part way, and why
    // its variable has no line.
    let (code, _, err) = e.out(&["html", "sweep:1", "-o", "s.html"]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(e.dir.path().join("s.html")).unwrap();
    assert!(
        page.contains("<tr><td>stopped part way</td><td>stopped by SIGINT: 1 of 3 run(s) done and kept</td></tr>"),
        "{page}"
    );
    assert!(
        page.contains(
            "every point done has time = 0.3 (the sweep was stopped before another value ran)"
        ),
        "{page}"
    );
}

/// The files a fileio data set leaves in `dir`.
fn data_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("test_file.") || n.starts_with("plumb-fileio"))
        .collect();
    v.sort();
    v
}

#[test]
fn ctrl_c_in_a_fileio_sweep_cleans_up_its_files_and_keeps_the_points_done() {
    stopped_fileio_sweep(false);
}

/// `timeout -s INT` signals the program and then its process group: two signals at once
/// are one request to stop, not a second Ctrl-C that kills the sweep before its cleanup.
#[test]
fn two_signals_at_once_stop_a_sweep_as_one() {
    stopped_fileio_sweep(true);
}

fn stopped_fileio_sweep(twice: bool) {
    let e = Env::new();
    let plan = e.plan(
        "command = \"fileio --file-num=2 --file-total-size=2M --file-test-mode=rndrd run\"\n[matrix]\ntime = [0.3, 600]\n",
    );
    let mut s = Live::start(&e, &["sweep", &plan, "--json=s.json"]);
    s.wait_for(true, "point 1/2: ");
    assert_eq!(
        data_files(e.dir.path()),
        ["plumb-fileio.manifest", "test_file.0", "test_file.1"],
        "prepared"
    );
    let sent = std::time::Instant::now();
    s.signal(libc::SIGINT);
    if twice {
        // The second once the first was taken (a pending one would merge with it).
        s.signals_taken();
        s.signal(libc::SIGINT);
        // The program times the two from its handlers, which run between the sending
        // and the moment the signal is no longer pending: that moment bounds the gap it
        // saw. Half its 50 ms window leaves room for a handler preempted after the
        // kernel took its signal, as under CI's load.
        s.signals_taken();
        if sent.elapsed() > Duration::from_millis(25) {
            // Too slow a machine for "at once": a second Ctrl-C it may be, and it exits.
            eprintln!(
                "skipped: the second signal came {:?} after the first",
                sent.elapsed()
            );
            let _ = s.finish();
            return;
        }
    }
    let (code, out, err) = s.finish();
    assert_eq!(code, 130, "{out}\n{err}");
    let cleanup =
        "plumb fileio --file-num=2 --file-total-size=2M --file-test-mode=rndrd --time=600 cleanup";
    let tail: Vec<&str> = err.lines().rev().take(2).collect();
    assert_eq!(
        tail,
        [
            "sweep: stopped by SIGINT: 1 of 2 run(s) done and kept; the data set was cleaned up",
            &format!("sweep: SIGINT: cleaning up the data set: {cleanup} (Ctrl-C again leaves it in place)"),
        ],
        "{err}"
    );
    assert!(data_files(e.dir.path()).is_empty(), "{err}");
    // The point done is kept: in the history and in the JSON document.
    let h = e.history("1");
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{h}");
    assert_eq!(runs[0]["sweep_point"], "time=0.3");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert_eq!(doc["runs"][0]["values"]["time"], "0.3");
    assert!(out.contains("Sweep results:"), "{out}");
    // The document says it was stopped, and so does its page.
    let (code, _, err) = e.out(&["html", "s.json", "-o", "s.html"]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(e.dir.path().join("s.html")).unwrap();
    assert!(
        page.contains("<td>stopped by a signal: 1 of 2 point(s) done</td>"),
        "{page}"
    );
}

#[test]
fn a_sweep_whose_command_names_no_cleanup_leaves_its_files_when_stopped() {
    let e = Env::new();
    let plan = e.plan(
        "command = \"fileio --file-num=1 --file-total-size=1M --file-test-mode=rndrd prepare run\"\npause = \"10m\"\n[matrix]\nthreads = [1, 2]\n",
    );
    let mut s = Live::start(&e, &["sweep", &plan]);
    s.wait_for(true, "point 1/2: ");
    s.signal(libc::SIGTERM);
    let (code, out, err) = s.finish();
    assert_eq!(code, 143, "{out}\n{err}");
    assert_eq!(
        err.lines().last(),
        Some("sweep: stopped by SIGTERM: 1 of 2 run(s) done and kept; the data set stays (the command names no cleanup)"),
        "{err}"
    );
    assert_eq!(
        data_files(e.dir.path()),
        ["plumb-fileio.manifest", "test_file.0"]
    );
}

/// MariaDB, as the OLTP server tests find it; false (a skip) without it, except under CI.
fn mariadb() -> bool {
    let ok = Command::new("mariadb")
        .args(["-uroot", "-e", "SELECT 1"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").is_err(),
            "MariaDB does not answer (CI=true: a missing server fails)"
        );
        eprintln!("skipped: MariaDB does not answer");
    }
    ok
}

fn mariadb_sql(sql: &str) -> String {
    let o = Command::new("mariadb")
        .args(["-uroot", "-N", "-B", "-e", sql])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_second_ctrl_c_stops_the_cleanup_and_says_what_is_left() {
    if !mariadb() {
        return;
    }
    let db = "plumb_sweep_second_signal";
    mariadb_sql(&format!(
        "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
    ));
    let e = Env::new();
    let command = format!("oltp_read_only --mysql-user=root --mysql-db={db} --tables=2 --table-size=50 --time=0.3 run");
    let plan = e.plan(&format!(
        "command = \"{command}\"\npause = \"10m\"\n[matrix]\nthreads = [1, 2]\n"
    ));
    let mut s = Live::start(&e, &["sweep", &plan]);
    s.wait_for(true, "point 1/2: ");
    // Another session holds sbtest1's metadata lock: the cleanup's DROP of it waits.
    let mut holder = Command::new("mariadb")
        .args(["-uroot", "-n", "-N", "-B", db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_holder = holder.stdin.take().unwrap();
    writeln!(to_holder, "BEGIN; SELECT COUNT(*) FROM sbtest1;").unwrap();
    let mut held = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut held)
        .unwrap();
    assert_eq!(held.trim(), "50");
    s.signal(libc::SIGINT);
    s.wait_for(false, "sweep: SIGINT: cleaning up the data set: ");
    let waiting = format!(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE db = '{db}' AND info LIKE 'DROP TABLE%sbtest1%'"
    );
    for i in 0.. {
        if mariadb_sql(&waiting).trim() == "1" {
            break;
        }
        assert!(i < 6000, "the cleanup never reached sbtest1");
        std::thread::sleep(Duration::from_millis(10));
    }
    s.signal(libc::SIGINT);
    s.signals_taken();
    writeln!(to_holder, "COMMIT;").unwrap();
    drop(to_holder);
    let _ = holder.wait();
    let (code, out, err) = s.finish();
    assert_eq!(code, 130, "{out}\n{err}");
    let cleanup = format!(
        "plumb oltp_read_only --mysql-user=root --mysql-db={db} --tables=2 --table-size=50 --time=0.3 --threads=2 cleanup"
    );
    assert_eq!(
        err.lines().last().unwrap_or(""),
        format!("sweep: stopped by SIGINT: 1 of 2 run(s) done and kept; the cleanup was stopped by SIGINT: the data set is left in place, whole or in part (tables sbtest1..sbtest2 in the mysql database); to remove it: {cleanup}"),
        "{err}"
    );
    // The DROP under way finished; the next table was left.
    assert_eq!(
        mariadb_sql(&format!("SHOW TABLES FROM {db}")).trim(),
        "sbtest2"
    );
    assert_eq!(e.history("1")["runs"].as_array().unwrap().len(), 1);
    mariadb_sql(&format!("DROP DATABASE {db}"));
}

/// Everything in `dir` but the plan and the history, as paths relative to it (a directory
/// ends in '/'), sorted.
fn left_in(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == "plan.toml" || rel == "home" {
                continue;
            }
            if p.is_dir() {
                out.push(format!("{rel}/"));
                walk(root, &p, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// The directory as plumb names it (its current directory, symbolic links resolved).
fn real(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The sweep's own lines on stderr (`sweep: ` taken off), but the one before each run.
fn steps(err: &str) -> Vec<&str> {
    err.lines()
        .filter_map(|l| l.strip_prefix("sweep: "))
        .filter(|l| !l.starts_with("run "))
        .collect()
}

#[test]
fn a_fio_sweep_removes_the_files_its_runs_laid_out_after_each_data_set() {
    let e = Env::new();
    let d = real(e.dir.path());
    // fio refuses a directory that is not there.
    for sub in ["d1", "d2/sub"] {
        std::fs::create_dir_all(e.dir.path().join(sub)).unwrap();
    }
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=psync --size=16k --nrfiles=2 --runtime=0.2s\"\n[matrix]\ndirectory = [\"d1\", \"d2/sub\"]\nbs = [\"4k\", \"8k\"]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let cleanups: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("  cleanup   "))
        .collect();
    assert_eq!(
        cleanups,
        [
            format!("remove r.0.0, r.0.1 in {d}/d1 (laid out by its runs)"),
            format!("remove r.0.0, r.0.1 in {d}/d2/sub (laid out by its runs)"),
        ],
        "{out}"
    );
    assert!(out.contains("after its last point the sweep removes the files its runs laid out, never one that was there before (keep_data = true keeps them)"), "{out}");
    let dirs = ["d1/", "d2/", "d2/sub/"];
    assert_eq!(left_in(e.dir.path()), dirs);

    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        steps(&err),
        [
            format!("cleanup: removed the files the runs laid out: r.0.0, r.0.1 in {d}/d1"),
            format!("cleanup: removed the files the runs laid out: r.0.0, r.0.1 in {d}/d2/sub"),
        ],
        "{err}"
    );
    let points: Vec<&str> = out.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 4, "{out}");
    // The directories were there before: they stay.
    assert_eq!(left_in(e.dir.path()), dirs);
}

/// Each job of a run in a `plumb sweep --json` document: its files and what it laid out
/// (`[files, bytes]`, null when it found them in place).
fn jobs_laid_out(doc: &serde_json::Value) -> Vec<Vec<(Vec<String>, serde_json::Value)>> {
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["record"]["groups"][0]["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| {
                    let files = j["workload"]["job"]["files"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| {
                            let p = f["path"].as_str().unwrap();
                            p.rsplit('/').next().unwrap().to_string()
                        })
                        .collect();
                    (files, j["layout"]["laid_out"].clone())
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_fio_sweep_over_numjobs_lays_out_each_count_s_files_at_its_first_point() {
    let e = Env::new();
    let d = real(e.dir.path());
    // numjobs listed last: it is a data-set variable all the same, so it varies slowest.
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=psync --size=16k --nrfiles=2 --runtime=0.2s\"\n[matrix]\nbs = [\"4k\", \"8k\"]\nnumjobs = [1, 2]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "  point 1   bs=4k numjobs=1".to_string(),
            "  point 2   bs=8k numjobs=1".to_string(),
            format!("  cleanup   remove r.0.0, r.0.1 in {d} (laid out by its runs)"),
            "  point 3   bs=4k numjobs=2".to_string(),
            "  point 4   bs=8k numjobs=2".to_string(),
            format!("  cleanup   remove r.0.0, r.0.1, r.1.0, r.1.1 in {d} (laid out by its runs)"),
        ],
        "{out}"
    );
    assert!(
        out.starts_with("sweep: 4 points x 1 run(s) each, 2 data set(s)\n"),
        "{out}"
    );

    let (code, out, err) = e.out(&["sweep", &plan, "--no-history", "--json=s.json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        steps(&err),
        [
            format!("cleanup: removed the files the runs laid out: r.0.0, r.0.1 in {d}"),
            format!(
                "cleanup: removed the files the runs laid out: r.0.0, r.0.1, r.1.0, r.1.1 in {d}"
            ),
        ],
        "{err}"
    );
    assert_eq!(left_in(e.dir.path()), ["s.json"]);
    let points: Vec<&str> = out.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 4, "{out}");
    for (p, want) in points.iter().zip([
        "point 1/4: bs=4k numjobs=1 ",
        "point 2/4: bs=8k numjobs=1 ",
        "point 3/4: bs=4k numjobs=2 ",
        "point 4/4: bs=8k numjobs=2 ",
    ]) {
        assert!(p.starts_with(want) && p.contains(" IOPS "), "{out}");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    let files = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let laid = serde_json::json!([2, 16384]);
    let none = serde_json::Value::Null;
    // The first point of each count lays out every job's files (its two 8k files), the
    // next one finds them all in place: no job of a point works on files older than the
    // others'.
    assert_eq!(
        jobs_laid_out(&doc),
        [
            vec![(files(&["r.0.0", "r.0.1"]), laid.clone())],
            vec![(files(&["r.0.0", "r.0.1"]), none.clone())],
            vec![
                (files(&["r.0.0", "r.0.1"]), laid.clone()),
                (files(&["r.1.0", "r.1.1"]), laid.clone()),
            ],
            vec![
                (files(&["r.0.0", "r.0.1"]), none.clone()),
                (files(&["r.1.0", "r.1.1"]), none.clone()),
            ],
        ]
    );
    for (i, r) in doc["runs"].as_array().unwrap().iter().enumerate() {
        for j in r["record"]["groups"][0]["jobs"].as_array().unwrap() {
            assert_eq!(j["status"], "completed", "point {}", i + 1);
            // size=16k read once at random by each job, at the point's bs.
            let bs = if i % 2 == 0 { 4096 } else { 8192 };
            assert_eq!(j["counters"]["bytes_read"], 16384, "point {}", i + 1);
            assert_eq!(j["events"], 16384 / bs, "point {}", i + 1);
        }
    }

    // offset and offset_increment set how far the files are laid out: each value is a data
    // set of its own, not a file lengthened by a later point's run.
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=psync --size=16k --runtime=0.2s\"\n[matrix]\noffset = [\"0\", \"16k\"]\noffset_increment = [\"0\", \"32k\"]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("sweep: 4 points x 1 run(s) each, 4 data set(s)\n"),
        "{out}"
    );
}

#[test]
fn a_fio_sweep_never_removes_a_file_that_was_there_before() {
    let e = Env::new();
    let d = real(e.dir.path());
    let mine: Vec<u8> = (0..20000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(e.dir.path().join("mine.dat"), &mine).unwrap();
    let command = "command = \"fio --name=r --rw=randread --ioengine=psync --size=16k --runtime=0.2s --filename=mine.dat:new.dat\"\n";
    let plan = e.plan(&format!("{command}[matrix]\nbs = [\"4k\", \"8k\"]\n"));
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        steps(&err),
        [format!("cleanup: removed the files the runs laid out: new.dat in {d}; kept mine.dat in {d} (there before the data set's first point)")],
        "{err}"
    );
    assert_eq!(left_in(e.dir.path()), ["mine.dat"]);
    assert_eq!(std::fs::read(e.dir.path().join("mine.dat")).unwrap(), mine);

    // keep_data keeps what the runs lay out, and says how to remove it.
    let plan = e.plan(&format!(
        "{command}keep_data = true\n[matrix]\nbs = [\"4k\", \"8k\"]\n"
    ));
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        steps(&err),
        [format!("keep_data: the files the runs laid out stay: new.dat in {d} (to remove them: rm -f -- {d}/new.dat)")],
        "{err}"
    );
    assert!(
        out.contains("keep_data = true: they stay after the sweep"),
        "{out}"
    );
    assert_eq!(left_in(e.dir.path()), ["mine.dat", "new.dat"]);

    // A file an earlier run left is there before the data set's first point: it stays.
    let plan = e.plan(&format!("{command}[matrix]\nbs = [\"4k\"]\n"));
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        steps(&err),
        [format!("cleanup: no file to remove (the runs left none they laid out); kept mine.dat, new.dat in {d} (there before the data set's first point)")],
        "{err}"
    );
    assert_eq!(left_in(e.dir.path()), ["mine.dat", "new.dat"]);
    assert_eq!(std::fs::read(e.dir.path().join("mine.dat")).unwrap(), mine);
}

#[test]
fn ctrl_c_in_a_fio_sweep_removes_the_files_laid_out_and_keeps_the_points_done() {
    let e = Env::new();
    let d = real(e.dir.path());
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=psync --size=64k --time_based\"\n[matrix]\nruntime = [\"0.2s\", \"600s\"]\n");
    let mut s = Live::start(&e, &["sweep", &plan, "--json=s.json"]);
    s.wait_for(true, "point 1/2: ");
    assert_eq!(left_in(e.dir.path()), ["r.0.0"], "laid out by point 1");
    s.signal(libc::SIGINT);
    let (code, out, err) = s.finish();
    assert_eq!(code, 130, "{out}\n{err}");
    let tail: Vec<&str> = err.lines().rev().take(2).collect();
    assert_eq!(
        tail,
        [
            "sweep: stopped by SIGINT: 1 of 2 run(s) done and kept; the data set was cleaned up".to_string(),
            format!("sweep: SIGINT: cleaning up the data set: remove r.0.0 in {d} (Ctrl-C again leaves it in place)"),
        ],
        "{err}"
    );
    assert_eq!(left_in(e.dir.path()), ["s.json"]);
    assert_eq!(e.history("1")["runs"].as_array().unwrap().len(), 1);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["error"], serde_json::Value::Null);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert!(
        out.contains(
            "  runtime: no knee: too few points along it (no two points done differ in runtime alone)\n"
        ),
        "{out}"
    );
}

#[test]
fn a_fio_sweep_with_keep_data_leaves_its_files_when_stopped() {
    let e = Env::new();
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=psync --size=64k --runtime=0.2s\"\nkeep_data = true\npause = \"10m\"\n[matrix]\nbs = [\"4k\", \"8k\"]\n");
    let mut s = Live::start(&e, &["sweep", &plan, "--no-history"]);
    s.wait_for(true, "point 1/2: ");
    s.signal(libc::SIGTERM);
    let (code, out, err) = s.finish();
    assert_eq!(code, 143, "{out}\n{err}");
    assert_eq!(
        err.lines().last(),
        Some("sweep: stopped by SIGTERM: 1 of 2 run(s) done and kept; the data set stays (keep_data = true)"),
        "{err}"
    );
    assert_eq!(left_in(e.dir.path()), ["r.0.0"]);
}

#[test]
fn a_fio_point_that_fails_stops_the_sweep_cleans_up_and_keeps_the_points_done() {
    let e = Env::new();
    let d = real(e.dir.path());
    // trim is refused on a regular file only when the point runs.
    let plan = e.plan("command = \"fio --name=r --ioengine=psync --size=64k --runtime=0.2s\"\n[matrix]\nrw = [\"randread\", \"trim\", \"read\"]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--json=s.json"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(
        steps(&err),
        [
            "point 2 failed: not kept".to_string(),
            format!("point 2 failed: cleaning up the data set: remove r.0.0 in {d} (Ctrl-C leaves it in place)"),
            "stopped by an error in point 2: 1 of 3 run(s) done and kept; the data set was cleaned up".to_string(),
        ],
        "{err}"
    );
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("plumb: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with(&format!(
            "plumb: point 2 (rw=trim): fio: trim of {d}/r.0.0 at offset 0"
        )),
        "{err}"
    );
    assert_eq!(
        err.lines().last(),
        Some(errors[0]),
        "the error is the last line"
    );
    assert_eq!(left_in(e.dir.path()), ["s.json"]);
    // The point done is kept, and the table and knee say what there is.
    let points: Vec<&str> = out.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 1, "{out}");
    assert!(points[0].starts_with("point 1/3: rw=randread"), "{out}");
    assert!(
        out.ends_with(
            "  rw: no knee: too few points along it (no two points done differ in rw alone)\n"
        ),
        "{out}"
    );
    let h = e.history("1");
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{h}");
    assert_eq!(runs[0]["sweep_point"], "rw=randread");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    assert_eq!(doc["interrupted"], false);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .starts_with("point 2 (rw=trim): fio: trim of "),
        "{doc}"
    );
}

#[test]
fn a_fileio_point_that_fails_cleans_up_its_data_set() {
    let e = Env::new();
    // --validate needs more blocks than requests in flight: 8 threads over 4 blocks fail
    // when the point opens its files.
    let plan = e.plan("command = \"fileio --file-num=2 --file-total-size=64K --file-test-mode=rndrd --validate=on --time=0.2 run\"\n[matrix]\nthreads = [1, 8, 2]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--json=s.json"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let args = "plumb fileio --file-num=2 --file-total-size=64K --file-test-mode=rndrd --validate=on --time=0.2";
    assert_eq!(
        steps(&err),
        [
            format!("prepare: {args} --threads=1 prepare"),
            "point 2 failed: not kept".to_string(),
            format!("point 2 failed: cleaning up the data set: {args} --threads=2 cleanup (Ctrl-C leaves it in place)"),
            "stopped by an error in point 2: 1 of 3 run(s) done and kept; the data set was cleaned up".to_string(),
        ],
        "{err}"
    );
    assert!(
        err.lines().last().is_some_and(|l| l.starts_with(
            "plumb: point 2 (threads=8): --validate needs more blocks than requests in flight"
        )),
        "{err}"
    );
    assert_eq!(left_in(e.dir.path()), ["s.json"]);
    assert_eq!(e.history("1")["runs"].as_array().unwrap().len(), 1);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert_eq!(doc["runs"][0]["values"]["threads"], "1");
}

#[test]
fn keep_data_keeps_a_fileio_data_set_and_says_how_to_remove_it() {
    let e = Env::new();
    let plan = e.plan("command = \"fileio --file-num=2 --file-total-size=64K --file-test-mode=rndrd --time=0.2 run\"\nkeep_data = true\n[matrix]\nthreads = [1, 2]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let args = "plumb fileio --file-num=2 --file-total-size=64K --file-test-mode=rndrd --time=0.2";
    let cleanup = format!("{args} --threads=2 cleanup");
    assert_eq!(
        steps(&err),
        [
            format!("prepare: {args} --threads=1 prepare"),
            format!("keep_data: the data set stays (to remove it: {cleanup})"),
        ],
        "{err}"
    );
    assert!(
        out.contains("keep_data = true: it stays after its last (no cleanup)"),
        "{out}"
    );
    assert!(!out.contains("  cleanup "), "{out}");
    assert_eq!(
        data_files(e.dir.path()),
        ["plumb-fileio.manifest", "test_file.0", "test_file.1"]
    );
    // The command it gives removes it.
    let words: Vec<&str> = cleanup.split_whitespace().skip(1).collect();
    let (code, _, err) = e.out(&words);
    assert_eq!(code, 0, "{err}");
    assert!(data_files(e.dir.path()).is_empty());
}

#[test]
fn a_variable_with_too_few_points_says_why_it_has_no_knee() {
    let e = Env::new();
    let plan = e.plan(
        "command = \"cpu --time=0.2 run\"\n[matrix]\nthreads = [2]\ncpu-max-prime = [1000, 2000]\n",
    );
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history", "--json=s.json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let knee: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Knee "))
        .skip(1)
        .collect();
    assert_eq!(knee.len(), 2, "{out}");
    assert_eq!(
        knee[0],
        "  threads: no knee: too few points along it (the plan gives it one value, 2)"
    );
    assert!(
        knee[1].starts_with("  cpu-max-prime: knee at 1000 (threads=2)")
            || knee[1].starts_with("  cpu-max-prime: no knee: still growing"),
        "{out}"
    );
    // The document has the same keys as a sweep whose every variable has a knee: the
    // knee is worked out from the runs by whoever reads them.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    let mut keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "error",
            "interrupted",
            "plan",
            "points_planned",
            "runs",
            "schema",
            "sweep_id"
        ]
    );
}

/// A password in the plan's command is masked wherever the sweep shows or keeps the plan:
/// the outline, the prepare and cleanup lines, the --json document, the history and the
/// HTML; a password as a matrix key is refused (it would name every point).
#[test]
fn a_password_in_the_plan_appears_nowhere() {
    if !common::available("postgres") {
        return;
    }
    let db = "plumb_sweep_secret";
    common::pg_fresh_db(db);
    let e = Env::new();
    const SECRET: &str = "hunter2sweep";
    // Trust authentication: the server never asks for the password, the run goes through.
    let plan = e.plan(&format!(
        "command = \"oltp_point_select --db-driver=pgsql --pgsql-user=postgres --pgsql-host=127.0.0.1 --pgsql-db={db} --pgsql-password={SECRET} --tables=1 --table-size=50 --time=0.2 run\"\n[matrix]\nthreads = [1, 2]\n"
    ));
    let json = e.dir.path().join("s.json");
    let (code, out, err) = e.out(&["sweep", &plan, &format!("--json={}", json.display())]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("sweep: prepare: plumb oltp_point_select"),
        "{err}"
    );
    assert!(err.contains("--pgsql-password=*** "), "{err}");
    let doc = std::fs::read_to_string(&json).unwrap();
    assert!(doc.contains("--pgsql-password=***"), "{doc}");
    let html = e.dir.path().join("s.html");
    let (code, _, herr) = e.out(&["html", "sweep:1", "-o", html.to_str().unwrap()]);
    assert_eq!(code, 0, "{herr}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("stopped part way"), "completed");
    let (_, shown, _) = e.out(&["history", "--json", "--limit=0"]);
    // The database and whatever its write-ahead log still holds.
    let mut db_bytes = Vec::new();
    for f in std::fs::read_dir(e.dir.path().join("home")).unwrap() {
        db_bytes.extend(std::fs::read(f.unwrap().path()).unwrap_or_default());
    }
    for (what, text) in [
        ("stdout", out),
        ("stderr", err),
        ("json", doc),
        ("html", std::fs::read_to_string(&html).unwrap()),
        ("history", shown),
        (
            "the history's files",
            String::from_utf8_lossy(&db_bytes).into_owned(),
        ),
    ] {
        assert!(!text.contains(SECRET), "{what} shows the password");
    }

    let plan = e.plan(&format!(
        "command = \"oltp_point_select --db-driver=pgsql --pgsql-db={db} run\"\n[matrix]\npgsql-password = [\"a{SECRET}\", \"b{SECRET}\"]\n"
    ));
    let (code, out, err) = e.out(&["sweep", &plan, "--dry-run"]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(
        err,
        format!("plumb: {plan}:3: matrix.pgsql-password: a secret cannot be swept: put it in the command, where plumb masks it\n")
    );
    assert!(!out.contains(SECRET), "{out}");
}

/// On a terminal the progress line names the run going on (from 1), as the plain lines do.
#[test]
fn the_progress_line_counts_runs_from_one() {
    if Command::new("script").arg("--version").output().is_err() {
        assert!(std::env::var("CI").is_err(), "script(1) is needed under CI");
        return;
    }
    let e = Env::new();
    let plan = e.plan("command = \"cpu --cpu-max-prime=2000 run\"\n[matrix]\ntime = [1.5, 1.6]\n");
    let exe = assert_cmd::cargo::cargo_bin("plumb");
    let cmd = format!("{} sweep {plan} --no-history", exe.display());
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("PLUMB_HOME", e.dir.path().join("home"))
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{tty}");
    assert!(tty.contains("run 1/2 time=1.5 ["), "{tty}");
    assert!(tty.contains("run 2/2 time=1.6 ["), "{tty}");
    assert!(!tty.contains("run 0/2"), "{tty}");
    // The second run's line knows the mean time of the first.
    assert!(tty.contains("elapsed, about 0:00:0"), "{tty}");
}

/// An unwritable --json is found before the first point runs, in one line, not after the
/// sweep (which with --no-history would lose every run).
#[test]
fn an_unwritable_json_path_stops_the_sweep_before_it_runs() {
    let e = Env::new();
    let plan = e.plan("command = \"cpu --cpu-max-prime=2000 run\"\n[matrix]\ntime = [0.2]\n");
    let (code, out, err) = e.out(&[
        "sweep",
        &plan,
        "--no-history",
        "--json=/nonexistent-dir/s.json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        err,
        "plumb: cannot write /nonexistent-dir/s.json: No such file or directory (os error 2)\n"
    );
    assert!(!out.contains("point 1/1:"), "{out}");
}

/// A fio sweep's warm-up below a second, or with a fraction, is run as written (fio reads
/// `0.5s` as 0 s, so the sweep gives fio's ramp_time in milliseconds).
#[test]
fn a_fio_sweep_warms_up_for_a_fraction_of_a_second_as_written() {
    let e = Env::new();
    let plan = e.plan("command = \"fio --name=r --rw=randread --ioengine=null --size=1M --runtime=1 --time_based\"\nwarmup = \"1500ms\"\n[matrix]\nbs = [\"4k\"]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history", "--json=s.json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("warms up for 1.5 s,"), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.dir.path().join("s.json")).unwrap())
            .unwrap();
    let job = &doc["runs"][0]["record"]["groups"][0]["jobs"][0];
    assert_eq!(job["settings"]["warmup_s"], 1.5, "{job}");
}

/// The plan's command is split as a shell splits it: a quoted file name with a space is one
/// word; an unclosed quote is one line naming the key.
#[test]
fn a_quoted_word_in_the_command_is_one_word() {
    let e = Env::new();
    let plan = e.plan("command = \"fio --name=r --rw=read --size=64k --filename='a b.dat'\"\n[matrix]\nbs = [\"4k\", \"8k\"]\n");
    let (code, out, err) = e.out(&["sweep", &plan, "--no-history"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("point ")).count(),
        2,
        "{out}"
    );
    // Laid out by the first point, removed after the last.
    assert!(!e.dir.path().join("a b.dat").exists(), "{err}");
    assert!(err.contains("a b.dat"), "{err}");

    let plan = e.plan("command = \"fio --name=r --filename='a b.dat\"\n[matrix]\nbs = [\"4k\"]\n");
    let (code, _, err) = e.out(&["sweep", &plan, "--dry-run"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "plumb: {plan}:1: command: a quote is not closed (it is split as a shell splits it)\n"
        )
    );
}

/// `--tag` on the command line tags the sweep's runs as the plan's `tag =` does; the two
/// disagreeing is a usage error.
#[test]
fn tag_on_the_command_line_tags_every_run() {
    let e = Env::new();
    let plan = e.plan(
        "command = \"cpu --cpu-max-prime=2000 --time=0.2 run\"\n[matrix]\nthreads = [1, 2]\n",
    );
    let (code, out, err) = e.out(&["sweep", &plan, "--tag=nightly"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = e.out(&["history", "--tag=nightly", "--json", "--limit=0"]);
    assert_eq!(code, 0, "{err}");
    let h: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(h["runs"].as_array().unwrap().len(), 2, "{h}");

    let plan =
        e.plan("command = \"cpu --time=0.2 run\"\ntag = \"weekly\"\n[matrix]\nthreads = [1]\n");
    let (code, _, err) = e.out(&["sweep", &plan, "--tag=nightly", "--dry-run"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "plumb: --tag=nightly and the plan's tag = \"weekly\" differ: give one\n"
    );
}
