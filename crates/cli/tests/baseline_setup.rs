//! The load baseline of a run is watched while its setup runs in the local database
//! server, not after it: mysqlslap's setup (schema, population) in the local MariaDB, over
//! its socket or TCP, and sysbench's OLTP `prepare` before `run` in one command, in
//! MariaDB and in PostgreSQL over TCP. Other programs' load during the setup is still seen
//! and still makes `noisy-machine` fire, and the server's own work for the setup is left
//! out of the other load. Without a server the tests say so and pass, except under
//! CI=true.

mod common;

use common::{available, mysql, mysql_fresh_db, pg_fresh_db, plumb, psql};

use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A busy loop in a process of its own: other load on the machine.
struct Spinner(Child);

impl Spinner {
    fn start() -> Spinner {
        Spinner(
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .expect("sh starts"),
        )
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        // The child the test started, by its own handle.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A mysqlslap run in schema `schema` with `population` rows inserted by its setup; its
/// JSON record.
fn slap(schema: &str, population: &str) -> Value {
    slap_with(schema, population, &[])
}

/// `slap` with more options (the server's address).
fn slap_with(schema: &str, population: &str, more: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = plumb()
        .current_dir(dir.path())
        .args([
            "mysqlslap",
            "--no-history",
            &format!("--plumb-json={}", json.display()),
            "-uroot",
            "--auto-generate-sql",
            &format!("--auto-generate-sql-write-number={population}"),
            &format!("--create-schema={schema}"),
            "--concurrency=2",
            "--number-of-queries=20",
            "--iterations=1",
        ])
        .args(more)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

fn first_load(r: &Value) -> &Value {
    &r["groups"][0]["observations"]["load_at_start"]
}

#[test]
fn other_load_during_the_setup_makes_the_noisy_machine_finding_fire() {
    if !available("mysql") {
        return;
    }
    // Running from before the setup's start to after the run: the whole baseline window.
    let _spin = Spinner::start();
    let r = slap("slap_baseline_busy", "100");
    let l = first_load(&r);
    let during = &l["during_setup"];
    assert!(during.is_object(), "watched during the setup: {l}");
    assert!(during["server_pid"].as_u64().unwrap() > 0, "{l}");
    // One spinning process on this machine's CPUs: at least a core's share of them busy
    // with other work (a busier machine only adds to it), and one runnable task or more.
    let cpus = r["groups"][0]["observations"]["system"]["cpus"]
        .as_f64()
        .unwrap();
    let busy = l["busy_other_pct"].as_f64().unwrap();
    assert!(busy >= 100.0 / cpus * 0.5, "{busy} on {cpus} CPUs: {l}");
    assert!(l["runnable_other_max"].as_u64().unwrap() >= 1, "{l}");
    let ids: Vec<&str> = r["groups"][0]["jobs"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(ids.contains(&"noisy-machine"), "{ids:?}: {l}");
}

#[test]
fn the_servers_work_during_the_population_is_not_other_load() {
    if !available("mysql") {
        return;
    }
    // A population long enough that the server works through the whole window.
    let r = slap("slap_baseline_server", "3000");
    let l = first_load(&r);
    let during = &l["during_setup"];
    assert!(during.is_object(), "watched during the setup: {l}");
    let name = during["server_name"].as_str().unwrap_or_default();
    assert!(name.contains("mariadb") || name.contains("mysql"), "{l}");
    // The window ended as the run began, and the setup filled it.
    let window = l["window_s"].as_f64().unwrap();
    assert!(window >= 0.25, "{l}");
    assert!(during["setup_s"].as_f64().unwrap() > 0.0, "{l}");
    // The server worked during the window, and its CPU is not in the other load: the
    // machine's busy share, less the server's, bounds it (plumb's own is left out too).
    let server = during["server_cpu_pct"].as_f64().unwrap();
    assert!(
        server > 0.0,
        "the server inserted rows during the window: {l}"
    );
    let busy = l["busy_cpu_pct"].as_f64().unwrap();
    let other = l["busy_other_pct"].as_f64().unwrap();
    assert!(other <= (busy - server).max(0.0) + 1e-6, "{l}");
    // Its runnable threads are not other programs' either.
    assert!(during["server_runnable_mean"].as_f64().unwrap() >= 0.0);
}

/// MariaDB's process, from the pid file it names.
fn mariadb_pid() -> u32 {
    let file = mysql("SELECT @@pid_file");
    let pid = std::fs::read_to_string(file.trim()).expect("MariaDB's pid file");
    pid.trim().parse().unwrap()
}

/// PostgreSQL's postmaster: the parent of its checkpointer, which lives as long as it does.
fn postmaster_pid() -> u32 {
    let child = psql(
        "postgres",
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'",
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.trim())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether this user sees which sockets `pid` holds: without it, a server reached over TCP
/// cannot be named, and the baseline is rightly taken after the setup.
fn fds_readable(pid: u32) -> bool {
    let ok = std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok();
    if !ok {
        eprintln!("the server's /proc/{pid}/fd is not readable: it must not be named");
    }
    ok
}

/// Over TCP the server is named when this user may see its sockets, and not otherwise.
fn named_over_tcp(l: &Value, server: u32) {
    let during = &l["during_setup"];
    if fds_readable(server) {
        assert_eq!(during["server_pid"].as_u64(), Some(server.into()), "{l}");
    } else {
        assert!(during.is_null(), "{l}");
    }
}

#[test]
fn a_server_reached_over_tcp_is_named_by_its_end_of_the_connection() {
    if !available("mysql") {
        return;
    }
    let r = slap_with("slap_baseline_tcp", "100", &["--host=127.0.0.1"]);
    named_over_tcp(first_load(&r), mariadb_pid());
}

/// A sysbench OLTP command line (`test`, then `args`) with `prepare run cleanup` in one
/// command: its JSON record.
fn sysbench_prepare_run(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = plumb()
        .current_dir(dir.path())
        .args(args)
        .args([
            "--tables=1",
            "--table-size=2000",
            "--events=50",
            "--time=0",
            "--no-history",
            &format!("--json={}", json.display()),
            "prepare",
            "run",
            "cleanup",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn sysbench_prepare_then_run_watches_the_baseline_during_the_prepare() {
    if !available("mysql") {
        return;
    }
    let db = "plumb_t_baseline_sb";
    mysql_fresh_db(db);
    // On the server's socket (localhost): the peer is named whoever runs the server.
    let r = sysbench_prepare_run(&[
        "oltp_point_select",
        "--mysql-user=root",
        &format!("--mysql-db={db}"),
    ]);
    mysql(&format!("DROP DATABASE {db}"));
    let l = first_load(&r);
    let during = &l["during_setup"];
    assert!(during.is_object(), "watched during the prepare step: {l}");
    assert_eq!(during["server_pid"].as_u64(), Some(mariadb_pid().into()));
    assert!(during["setup_s"].as_f64().unwrap() > 0.0, "{l}");
    let name = during["server_name"].as_str().unwrap_or_default();
    assert!(name.contains("mariadb") || name.contains("mysql"), "{l}");
}

#[test]
fn sysbench_prepare_then_run_on_postgresql_over_tcp_names_the_postmaster() {
    if !available("pgsql") {
        return;
    }
    let db = "plumb_t_baseline_pg";
    pg_fresh_db(db);
    let r = sysbench_prepare_run(&[
        "oltp_point_select",
        "--db-driver=pgsql",
        "--pgsql-user=postgres",
        "--pgsql-host=127.0.0.1",
        &format!("--pgsql-db={db}"),
    ]);
    psql("postgres", &format!("DROP DATABASE {db}"));
    let l = first_load(&r);
    let postmaster = postmaster_pid();
    named_over_tcp(l, postmaster);
    if fds_readable(postmaster) {
        // Not the backend that served the connection: the postmaster, with its children.
        let during = &l["during_setup"];
        assert!(during["server_processes"].as_u64().unwrap() >= 2, "{l}");
        assert!(during["setup_s"].as_f64().unwrap() > 0.0, "{l}");
    }
}
