//! plumb sweep: the issue's plan on SQLite (prepare once per data set, cleanup after its
//! last point, points in order, one sweep id), fio, repeat, Ctrl-C, bad plans, --dry-run.

use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;

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

#[test]
fn ctrl_c_during_the_second_point_keeps_the_first_and_exits_130() {
    let e = Env::new();
    let plan = e.plan(
        "command = \"cpu --cpu-max-prime=2000 --time=1 run\"\n[matrix]\nthreads = [1, 2, 3]\n",
    );
    let child = e
        .plumb(&["sweep", &plan])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The second point starts about a second in; the signal lands in its middle.
    std::thread::sleep(std::time::Duration::from_millis(1600));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{out}\n{err}");
    let points: Vec<&str> = out.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 1, "{out}\n{err}");
    assert!(points[0].starts_with("point 1/3: threads=1"), "{out}");
    assert!(err.contains("point 2 interrupted: not kept"), "{err}");
    assert!(out.contains("Sweep results:"), "{out}");
    let h = e.history("1");
    assert_eq!(h["runs"].as_array().unwrap().len(), 1);
}
