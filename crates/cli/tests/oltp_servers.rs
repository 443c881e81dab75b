//! sysbench's OLTP tests on the machine's MariaDB and PostgreSQL servers: the same schema,
//! data and statement counts as Debian's sysbench 1.0.20 on the same server, the Database
//! section, refusals, a lost connection, and passwords kept out of every output.
//!
//! Each test works in its own database. Without a server the tests say so and pass, except
//! under CI=true, where a missing server is a failure.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{available, figure, job_json, mysql, mysql_fresh_db, pg_fresh_db, plumb, psql, text};
use tempfile::TempDir;

/// A fresh, empty MariaDB database.
fn mysql_db(name: &str) -> String {
    mysql_fresh_db(name);
    name.to_string()
}

/// A fresh, empty PostgreSQL database.
fn pg_db(name: &str) -> String {
    pg_fresh_db(name);
    name.to_string()
}

fn my_opts(db: &str) -> Vec<String> {
    vec!["--mysql-user=root".into(), format!("--mysql-db={db}")]
}

fn pg_opts(db: &str) -> Vec<String> {
    vec![
        "--db-driver=pgsql".into(),
        "--pgsql-user=postgres".into(),
        "--pgsql-host=127.0.0.1".into(),
        format!("--pgsql-db={db}"),
    ]
}

fn run_in(dir: &Path, prog: &str, args: &[String]) -> Output {
    let mut c = if prog == "plumb" {
        Command::new(assert_cmd::cargo::cargo_bin("plumb"))
    } else {
        Command::new(prog)
    };
    c.args(args).current_dir(dir).output().unwrap()
}

fn with(base: &[String], more: &[&str]) -> Vec<String> {
    base.iter()
        .cloned()
        .chain(more.iter().map(|s| s.to_string()))
        .collect()
}

/// (read, write, other, transactions) of a run's report.
fn counts(report: &str) -> [u64; 4] {
    [
        figure(report, "read:"),
        figure(report, "write:"),
        figure(report, "other:"),
        figure(report, "transactions:"),
    ]
}

/// `test` with one thread and 30 events: plumb's statement counts equal sysbench's on the
/// same data (deterministic with one thread: MySQL counts changed rows, PostgreSQL matched).
fn same_counts(dir: &Path, test: &str, ours: &[String], theirs: &[String]) {
    let args = [
        test,
        "--tables=1",
        "--table-size=1000",
        "--events=30",
        "--time=0",
        "run",
    ];
    let o = run_in(dir, "plumb", &with(ours, &args));
    let s = run_in(dir, "sysbench", &with(theirs, &args));
    assert!(o.status.success(), "{test}: {}", text(&o.stderr));
    assert!(s.status.success(), "{test}: {}", text(&s.stderr));
    assert_eq!(
        counts(&text(&o.stdout)),
        counts(&text(&s.stdout)),
        "{test}: plumb vs sysbench"
    );
}

/// What a loaded sbtest1 looks like, as one line of facts that must be equal.
const MYSQL_SHAPE: &str = "SELECT COUNT(*), MIN(id), MAX(id), MIN(k) >= 1, MAX(k) <= 1000, \
    SUM(c REGEXP '^([0-9]{11}-){9}[0-9]{11}$'), SUM(pad REGEXP '^([0-9]{11}-){4}[0-9]{11}$') \
    FROM ";

#[test]
fn mysql_schema_data_and_counts_match_sysbench() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let (ours, theirs) = (mysql_db("plumb_t_my_ours"), mysql_db("plumb_t_my_theirs"));
    let size = ["--tables=1", "--table-size=1000"];
    let o = run_in(
        d.path(),
        "plumb",
        &with(
            &my_opts(&ours),
            &[&size[..], &["oltp_read_write", "prepare"]].concat(),
        ),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = run_in(
        d.path(),
        "sysbench",
        &with(
            &my_opts(&theirs),
            &[&["oltp_read_write"][..], &size, &["prepare"]].concat(),
        ),
    );
    assert!(s.status.success(), "{}", text(&s.stderr));
    // The same prepare messages.
    assert_eq!(
        text(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("Creating") || l.starts_with("Inserting"))
            .collect::<Vec<_>>(),
        text(&s.stdout)
            .lines()
            .filter(|l| l.starts_with("Creating") || l.starts_with("Inserting"))
            .collect::<Vec<_>>()
    );
    let ddl = |db: &str| {
        mysql(&format!("SHOW CREATE TABLE {db}.sbtest1")).replace("AUTO_INCREMENT=1001 ", "")
    };
    assert_eq!(ddl(&ours), ddl(&theirs));
    assert_eq!(
        mysql(&format!("{MYSQL_SHAPE}{ours}.sbtest1")),
        mysql(&format!("{MYSQL_SHAPE}{theirs}.sbtest1"))
    );
    assert_eq!(
        mysql(&format!("{MYSQL_SHAPE}{ours}.sbtest1")).trim(),
        "1000\t1\t1000\t1\t1\t1000\t1000"
    );
    // Statement counts per transaction, test by test, with one thread and a fixed number of
    // events (deterministic on MySQL, which counts changed rows).
    for test in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
    ] {
        same_counts(d.path(), test, &my_opts(&ours), &my_opts(&theirs));
    }
    // oltp_delete: a random id may already be gone, so only the shape is fixed.
    let args = [
        "oltp_delete",
        "--table-size=1000",
        "--events=30",
        "--time=0",
        "run",
    ];
    for (prog, db) in [("plumb", &ours), ("sysbench", &theirs)] {
        let o = run_in(d.path(), prog, &with(&my_opts(db), &args));
        let [r, w, other, t] = counts(&text(&o.stdout));
        assert_eq!((r, w + other, t), (0, 30, 30), "{prog}");
    }
    let o = run_in(
        d.path(),
        "plumb",
        &with(&my_opts(&ours), &["oltp_read_write", "cleanup"]),
    );
    assert!(text(&o.stdout).contains("Dropping table 'sbtest1'..."));
    assert_eq!(mysql(&format!("SHOW TABLES FROM {ours}")).trim(), "");
    mysql("DROP DATABASE plumb_t_my_ours; DROP DATABASE plumb_t_my_theirs");
}

#[test]
fn pgsql_schema_data_and_counts_match_sysbench() {
    if !available("pgsql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let (ours, theirs) = (pg_db("plumb_t_pg_ours"), pg_db("plumb_t_pg_theirs"));
    let prep = [
        "oltp_read_write",
        "--tables=1",
        "--table-size=1000",
        "prepare",
    ];
    let o = run_in(d.path(), "plumb", &with(&pg_opts(&ours), &prep));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = run_in(d.path(), "sysbench", &with(&pg_opts(&theirs), &prep));
    assert!(s.status.success(), "{}", text(&s.stderr));
    let columns = "SELECT column_name, data_type, character_maximum_length, is_nullable, \
        column_default FROM information_schema.columns WHERE table_name = 'sbtest1' \
        ORDER BY ordinal_position";
    assert_eq!(psql(&ours, columns), psql(&theirs, columns));
    let indexes =
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'sbtest1' ORDER BY 1";
    assert_eq!(psql(&ours, indexes), psql(&theirs, indexes));
    // CHAR(n) pads with spaces.
    let shape = "SELECT COUNT(*), MIN(id), MAX(id), \
        SUM((rtrim(c) ~ '^([0-9]{11}-){9}[0-9]{11}$')::int), \
        SUM((rtrim(pad) ~ '^([0-9]{11}-){4}[0-9]{11}$')::int) FROM sbtest1";
    assert_eq!(psql(&ours, shape), psql(&theirs, shape));
    assert_eq!(psql(&ours, shape).trim(), "1000|1|1000|1000|1000");
    for test in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_point_select",
        "oltp_update_non_index",
        "oltp_insert",
    ] {
        same_counts(d.path(), test, &pg_opts(&ours), &pg_opts(&theirs));
    }
    psql("postgres", "DROP DATABASE plumb_t_pg_ours");
    psql("postgres", "DROP DATABASE plumb_t_pg_theirs");
}

#[test]
fn the_database_section_and_record_say_what_the_numbers_depend_on() {
    if !available("mysql") || !available("pgsql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let my = mysql_db("plumb_t_section");
    let pg = pg_db("plumb_t_section");
    for (opts, driver, durable) in [
        (my_opts(&my), "mysql", "innodb_flush_log_at_trx_commit"),
        (pg_opts(&pg), "pgsql", "synchronous_commit"),
    ] {
        let base = with(&opts, &["oltp_read_only", "--table-size=500"]);
        let o = run_in(d.path(), "plumb", &with(&base, &["prepare"]));
        assert!(o.status.success(), "{}", text(&o.stderr));
        let o = run_in(d.path(), "plumb", &with(&base, &["--threads=2", "prewarm"]));
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains("Prewarming table sbtest1\n"),
            "{}",
            text(&o.stdout)
        );
        let json = d.path().join(format!("{driver}.json"));
        let o = run_in(
            d.path(),
            "plumb",
            &with(
                &base,
                &[
                    "--events=20",
                    "--time=0",
                    &format!("--json={}", json.display()),
                    "run",
                ],
            ),
        );
        let report = text(&o.stdout);
        assert!(o.status.success(), "{}", text(&o.stderr));
        for want in [
            "Database:\n    driver:                       ",
            "buffer pool:",
            "durability:",
            durable,
            "server rows:",
        ] {
            assert!(report.contains(want), "{driver}: {want}: {report}");
        }
        let v = job_json(std::fs::read(&json).unwrap());
        let db = &v["workload"]["database"];
        assert_eq!(db["driver"], driver);
        assert!(db["buffer_pool_bytes"].as_u64().unwrap() > 0);
        assert!(db["data_set_bytes"].as_u64().unwrap() > 0);
        assert!(db["durability"][durable].is_string());
        assert_eq!(db["local"], true);
        // 20 transactions of 10 point selects and 4 ranges of 100 rows: the server read rows.
        assert!(
            v["workload"]["server_activity"]["rows_read"]
                .as_u64()
                .unwrap()
                >= 200,
            "{v}"
        );
        assert_eq!(v["counters"]["transactions"], 20);
        // 500 rows in a 128 MiB buffer pool: memory, not disk; a short run without intervals.
        let ids: Vec<&str> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"data-in-buffer-pool"), "{ids:?}");
        assert!(ids.contains(&"steadiness-unknown"), "{ids:?}");
        assert!(
            !ids.contains(&"durability-relaxed"),
            "a read-only run: {ids:?}"
        );
        // plumb report replays it with the same section.
        let r = plumb()
            .args(["report", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(text(&r.stdout).contains("Database:"), "{}", text(&r.stderr));
    }
    mysql("DROP DATABASE plumb_t_section");
    psql("postgres", "DROP DATABASE plumb_t_section");
}

/// TCP connections to PostgreSQL are encrypted as libpq's sslmode (prefer by default)
/// encrypts them, so plumb and sysbench do the same work on the same server; the record says
/// so from the server's own pg_stat_ssl.
/// `--pgsql-host` as libpq reads it: a list of hosts tried in order, an empty item for the
/// default socket directory; the run reports the host that answered. None answering: one
/// line naming every host tried, exit 1.
#[test]
fn postgres_host_lists_are_tried_in_order_as_libpq_tries_them() {
    if !available("pgsql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let pg = pg_db("plumb_t_hosts");
    let base = with(&pg_opts(&pg), &["oltp_point_select", "--table-size=100"]);
    let o = run_in(d.path(), "plumb", &with(&base, &["prepare"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let run = |host: &str| {
        let mut args = with(&base, &[&format!("--pgsql-host={host}")]);
        args.retain(|a| a != "--pgsql-host=127.0.0.1");
        args.extend(["--events=5", "--time=0", "run"].map(String::from));
        run_in(d.path(), "plumb", &args)
    };
    // Nothing listens on 127.0.0.2 here; PostgreSQL listens on 127.0.0.1 and its socket.
    for (hosts, answered) in [
        ("127.0.0.2,/nonexistent,127.0.0.1", "tcp 127.0.0.1:5432"),
        (",127.0.0.2", "socket /var/run/postgresql/.s.PGSQL.5432"),
        ("127.0.0.2,", "socket /var/run/postgresql/.s.PGSQL.5432"),
    ] {
        let o = run(hosts);
        assert!(o.status.success(), "{hosts}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let driver = out.lines().find(|l| l.trim_start().starts_with("driver:"));
        assert!(
            driver
                .is_some_and(|l| l.contains(answered) && l.ends_with(&format!(", database {pg}"))),
            "{hosts}: {out}"
        );
        assert!(
            out.contains("transactions:                        5 "),
            "{out}"
        );
    }
    let o = run("127.0.0.2,/nonexistent");
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("PostgreSQL at tcp 127.0.0.2:5432: ")
            && err.contains("; at socket /nonexistent/.s.PGSQL.5432: "),
        "{err}"
    );
    let o = run_in(
        d.path(),
        "plumb",
        &with(
            &base,
            &[
                "--pgsql-host=127.0.0.1,/tmp",
                "--pgsql-sslmode=require",
                "run",
            ],
        ),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "plumb: --pgsql-sslmode=require applies to TCP connections, and --pgsql-host lists /tmp, a socket directory: PostgreSQL never encrypts a socket\n"
    );
    psql("postgres", &format!("DROP DATABASE {pg}"));
}

#[test]
fn postgres_tcp_connections_are_encrypted_as_libpq_encrypts_them() {
    if !available("pgsql") {
        return;
    }
    if psql("postgres", "SHOW ssl").trim() != "on" {
        eprintln!("skipped: this PostgreSQL has ssl = off");
        return;
    }
    let d = TempDir::new().unwrap();
    let pg = pg_db("plumb_t_tls");
    let base = with(&pg_opts(&pg), &["oltp_point_select", "--table-size=100"]);
    let o = run_in(d.path(), "plumb", &with(&base, &["prepare"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tls_of = |more: &[&str]| {
        let json = d.path().join("tls.json");
        let _ = std::fs::remove_file(&json);
        let json_arg = format!("--json={}", json.display());
        let mut args = with(&base, more);
        args.extend(["--events=5", "--time=0", &json_arg, "run"].map(String::from));
        let o = run_in(d.path(), "plumb", &args);
        assert!(o.status.success(), "{more:?}: {}", text(&o.stderr));
        let v = job_json(std::fs::read(&json).unwrap());
        let tls = v["workload"]["database"]["tls"].as_str().map(String::from);
        let line = text(&o.stdout)
            .lines()
            .find(|l| l.trim_start().starts_with("driver:"))
            .unwrap()
            .to_string();
        (tls, line)
    };
    // libpq's default, prefer, and require: encrypted, as sysbench's libpq connects here.
    for more in [
        &[][..],
        &["--pgsql-sslmode=prefer"],
        &["--pgsql-sslmode=require"],
    ] {
        let (tls, line) = tls_of(more);
        let version = tls.unwrap_or_else(|| panic!("{more:?}: plain text: {line}"));
        assert!(version.starts_with("TLSv1."), "{version}");
        assert!(
            line.ends_with(&format!(
                "tcp 127.0.0.1:5432 with TLS ({version}), database {pg}"
            )),
            "{line}"
        );
    }
    // disable never encrypts; allow encrypts only when the plain connection is refused.
    for mode in ["disable", "allow"] {
        let (tls, line) = tls_of(&[&format!("--pgsql-sslmode={mode}")]);
        assert_eq!(tls, None, "{mode}: {line}");
        assert!(
            line.ends_with(&format!("tcp 127.0.0.1:5432, database {pg}")),
            "{line}"
        );
    }
    // A socket is never encrypted: prefer gives plain text, require is refused.
    let socket = |mode: &str| {
        let mut args = with(&base, &[&format!("--pgsql-sslmode={mode}")]);
        args.retain(|a| !a.starts_with("--pgsql-host="));
        args.extend(
            [
                "--pgsql-host=/var/run/postgresql",
                "--events=5",
                "--time=0",
                "run",
            ]
            .map(String::from),
        );
        run_in(d.path(), "plumb", &args)
    };
    let o = socket("prefer");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("socket /var/run/postgresql/.s.PGSQL.5432, database"),
        "{}",
        text(&o.stdout)
    );
    let o = socket("require");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "plumb: --pgsql-sslmode=require applies to TCP connections, and --pgsql-host=/var/run/postgresql is a socket directory: PostgreSQL never encrypts a socket\n"
    );
    // libpq's verifying modes need a root certificate plumb does not take yet: refused.
    let o = run_in(
        d.path(),
        "plumb",
        &with(&base, &["--pgsql-sslmode=verify-full", "run"]),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("plumb: --pgsql-sslmode=verify-full: plumb does not verify"),
        "{}",
        text(&o.stderr)
    );
    psql("postgres", "DROP DATABASE plumb_t_tls");
}

/// `--mysql-ssl=on` means encrypted or nothing: a server without TLS is refused with one
/// line (sysbench 1.0.20 quietly connects in plain text there), a server with TLS gives a
/// connection the server itself reports as encrypted.
#[test]
fn mysql_ssl_is_encrypted_or_refused() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let my = mysql_db("plumb_t_ssl");
    let json = d.path().join("ssl.json");
    let args = with(
        &my_opts(&my),
        &[
            "oltp_point_select",
            "--mysql-host=127.0.0.1",
            "--mysql-ssl=on",
            "--table-size=10",
            "--events=5",
            "--time=0",
            &format!("--json={}", json.display()),
        ],
    );
    let prepare = run_in(d.path(), "plumb", &with(&args, &["prepare"]));
    let have_ssl = mysql("SHOW GLOBAL VARIABLES LIKE 'have_ssl'");
    if have_ssl.contains("YES") {
        assert!(prepare.status.success(), "{}", text(&prepare.stderr));
        let o = run_in(d.path(), "plumb", &with(&args, &["run"]));
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = job_json(std::fs::read(&json).unwrap());
        let tls = v["workload"]["database"]["tls"]
            .as_str()
            .unwrap_or_default();
        assert!(tls.starts_with("TLSv1."), "{v}");
        assert!(text(&o.stdout).contains(&format!("with TLS ({tls})")));
    } else {
        assert_eq!(prepare.status.code(), Some(1), "{have_ssl}");
        assert_eq!(
            text(&prepare.stderr),
            "plumb: cannot connect: MySQL server at tcp 127.0.0.1:3306: Client requires secure connection but server does not have this capability\n"
        );
        assert_eq!(mysql(&format!("SHOW TABLES FROM {my}")), "");
    }
    mysql("DROP DATABASE plumb_t_ssl");
}

#[test]
fn runs_that_cannot_be_right_are_refused() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let db = mysql_db("plumb_t_refuse");
    let base = my_opts(&db);
    let o = run_in(
        d.path(),
        "plumb",
        &with(&base, &["oltp_point_select", "--table-size=100", "prepare"]),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (args, want) in [
        (
            vec![
                "oltp_point_select",
                "--table-size=100000",
                "--time=1",
                "run",
            ],
            "plumb: --table-size: 100000 is larger than the tables hold",
        ),
        (
            vec![
                "oltp_point_select",
                "--tables=2",
                "--table-size=100",
                "--time=1",
                "run",
            ],
            "plumb: --tables: sbtest2 cannot be read",
        ),
    ] {
        let o = run_in(d.path(), "plumb", &with(&base, &args));
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // TLS: never silently dropped (a socket cannot carry it; this server has none).
    for (args, want) in [
        (
            vec!["--mysql-ssl=on", "--time=1", "run"],
            "plumb: --mysql-ssl applies to TCP connections",
        ),
        (
            vec![
                "--mysql-host=127.0.0.1",
                "--mysql-ssl=on",
                "--time=1",
                "run",
            ],
            "plumb: cannot connect: MySQL server at tcp 127.0.0.1:3306: ",
        ),
    ]
    .into_iter()
    // The second needs a server without TLS, as this machine's is.
    .take(if mysql("SHOW VARIABLES LIKE 'have_ssl'").contains("YES") {
        1
    } else {
        2
    }) {
        let all: Vec<&str> = std::iter::once("oltp_point_select")
            .chain(args.iter().copied())
            .collect();
        let o = run_in(d.path(), "plumb", &with(&base, &all));
        let err = text(&o.stderr);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // No server there: one line naming it.
    let o = run_in(
        d.path(),
        "plumb",
        &[
            "oltp_point_select".into(),
            "--mysql-host=127.0.0.1".into(),
            "--mysql-port=1".into(),
            "--time=1".into(),
            "run".into(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(
            "plumb: cannot connect: MySQL server at tcp 127.0.0.1:1: Connection refused"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    mysql("DROP DATABASE plumb_t_refuse");
}

#[test]
fn passwords_appear_nowhere() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let db = mysql_db("plumb_t_pw");
    let secret = "Zq8-plumb-secret";
    mysql(&format!(
        "CREATE USER IF NOT EXISTS plumb_pw@localhost IDENTIFIED BY '{secret}'; \
         GRANT ALL ON plumb_t_pw.* TO plumb_pw@localhost"
    ));
    let pw = format!("--mysql-password={secret}");
    let base = vec![
        "--mysql-user=plumb_pw".to_string(),
        pw.clone(),
        format!("--mysql-db={db}"),
    ];
    let json = d.path().join("r.json");
    let runs = [
        with(&base, &["oltp_point_select", "--table-size=100", "prepare"]),
        with(
            &base,
            &[
                "oltp_point_select",
                "--table-size=100",
                "--events=10",
                "--time=0",
                &format!("--json={}", json.display()),
                "run",
            ],
        ),
        with(
            &base,
            &[
                "oltp_point_select",
                "--table-size=100",
                "--events=10",
                "--time=0",
                "--format=json",
                "run",
            ],
        ),
        // A wrong password and a failed connection: the error names neither password.
        vec![
            "--mysql-user=plumb_pw".into(),
            "--mysql-password=wrong-Zq8".into(),
            "oltp_point_select".into(),
            "--time=1".into(),
            "run".into(),
        ],
    ];
    for args in &runs {
        let o = run_in(d.path(), "plumb", args);
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(
            !all.contains(secret) && !all.contains("wrong-Zq8"),
            "{args:?}: {all}"
        );
    }
    let saved = std::fs::read_to_string(&json).unwrap();
    assert!(!saved.contains(secret), "{saved}");
    assert!(saved.contains("--mysql-password=***"), "{saved}");
    // Nor in the run history those runs were kept in.
    let home = d.path().join("home");
    let o = Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .env("PLUMB_HOME", &home)
        .args(&runs[1])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    for args in [
        &["history", "--json"][..],
        &["show", "1", "--format=json"][..],
    ] {
        let o = Command::new(assert_cmd::cargo::cargo_bin("plumb"))
            .env("PLUMB_HOME", &home)
            .args(args)
            .output()
            .unwrap();
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(o.status.success(), "{args:?}: {all}");
        assert!(!all.contains(secret), "{args:?}: {all}");
        assert!(all.contains("--mysql-password=***"), "{args:?}: {all}");
    }
    mysql("DROP USER plumb_pw@localhost; DROP DATABASE plumb_t_pw");
}

/// A TCP proxy to MariaDB that can cut every connection it carries.
struct Proxy {
    port: u16,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let streams = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, up) = (streams.clone(), upstream.to_string());
        let st = stop.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&up) else {
                    continue;
                };
                s.lock().unwrap().push(client.try_clone().unwrap());
                s.lock().unwrap().push(server.try_clone().unwrap());
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16384];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Proxy {
            port,
            streams,
            stop,
        }
    }

    /// Cut every connection carried so far.
    fn cut(&self) {
        for s in self.streams.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.cut();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Run oltp_read_only through a proxy that cuts every connection after 0.8 s, once with
/// `reconnect` (a list that allows reconnecting) and once with `fatal` (one that does not).
fn cut_mid_run(
    upstream: &str,
    opts: impl Fn(u16) -> Vec<String>,
    reconnect: &str,
    fatal: &str,
    code: &str,
) {
    let d = TempDir::new().unwrap();
    for (ignore, reconnects) in [(reconnect, true), (fatal, false)] {
        let proxy = Proxy::start(upstream);
        let args = with(
            &opts(proxy.port),
            &[
                "oltp_read_only",
                "--table-size=200",
                "--threads=2",
                "--time=2",
                ignore,
                "run",
            ],
        );
        let child = plumb_child(d.path(), &args);
        // The observer's connection and both clients' (two streams each), then a moment of
        // the run: connecting takes its time on a busy machine (TLS to PostgreSQL), and the
        // run's clock starts only once every client is connected.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while proxy.streams.lock().unwrap().len() < 6 {
            assert!(
                std::time::Instant::now() < deadline,
                "the run's connections go through the proxy: {}",
                proxy.streams.lock().unwrap().len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        proxy.cut();
        let o = child.wait_with_output().unwrap();
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        if reconnects {
            assert!(o.status.success(), "{ignore}: {err}");
            assert!(figure(&out, "reconnects:") >= 1, "{out}");
            assert!(figure(&out, "transactions:") > 0);
        } else {
            assert_eq!(o.status.code(), Some(1), "{ignore}: {out}{err}");
            let last = err.lines().last().unwrap_or_default();
            assert!(last.starts_with("plumb: ") && last.contains(code), "{err}");
            // The figures until the loss are still printed.
            assert!(out.contains("SQL statistics:"), "{out}");
        }
    }
}

#[test]
fn a_lost_connection_reconnects_when_allowed_and_stops_cleanly_when_not() {
    if !available("mysql") || !available("pgsql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let my = mysql_db("plumb_t_lost");
    let pg = pg_db("plumb_t_lost");
    for opts in [my_opts(&my), pg_opts(&pg)] {
        let o = run_in(
            d.path(),
            "plumb",
            &with(&opts, &["oltp_read_only", "--table-size=200", "prepare"]),
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    cut_mid_run(
        "127.0.0.1:3306",
        |port| {
            vec![
                "--mysql-host=127.0.0.1".into(),
                format!("--mysql-port={port}"),
                "--mysql-user=root".into(),
                format!("--mysql-db={my}"),
            ]
        },
        "--mysql-ignore-errors=2013",
        "--mysql-ignore-errors=1213",
        "2013",
    );
    cut_mid_run(
        "127.0.0.1:5432",
        |port| {
            vec![
                "--pgsql-host=127.0.0.1".into(),
                format!("--pgsql-port={port}"),
                "--pgsql-user=postgres".into(),
                format!("--pgsql-db={pg}"),
            ]
        },
        "--pgsql-ignore-errors=40P01,08006",
        "--pgsql-ignore-errors=40P01",
        "08006",
    );
    mysql("DROP DATABASE plumb_t_lost");
    psql("postgres", "DROP DATABASE plumb_t_lost");
}

fn plumb_child(dir: &Path, args: &[String]) -> std::process::Child {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("plumb"));
    c.args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn text_protocol_mode_and_the_dropin_default_driver() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let db = mysql_db("plumb_t_ps");
    let base = with(&my_opts(&db), &["oltp_read_write", "--table-size=300"]);
    let o = run_in(d.path(), "plumb", &with(&base, &["prepare"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let run = with(&base, &["--events=20", "--time=0", "run"]);
    let prepared = run_in(d.path(), "plumb", &run);
    let plain = run_in(d.path(), "plumb", &with(&run, &["--db-ps-mode=disable"]));
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    assert_eq!(
        counts(&text(&prepared.stdout)),
        counts(&text(&plain.stdout))
    );
    assert_eq!(counts(&text(&plain.stdout)), [280, 80, 40, 20]);
    // Under the name sysbench, no driver option means MySQL (sysbench's default), with its
    // default user sbtest; under plumb it means the embedded SQLite.
    let link = d.path().join("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &link).unwrap();
    let o = Command::new(&link)
        .args(["oltp_point_select", "--time=1", "run"])
        .current_dir(d.path())
        .output()
        .unwrap();
    // sysbench prints its FATAL lines on stdout.
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains("FATAL: ") && out.contains("'sbtest'"), "{out}");
    mysql("DROP DATABASE plumb_t_ps");
}

#[test]
fn seed_004_legacy_command_lines_run_unchanged() {
    if !available("mysql") {
        return;
    }
    // Seed 004's prepare and run, with this machine's socket and a smaller data set (the
    // seed has 256 tables of a million rows): the 0.5 script path and option names.
    // sysbench's default database: one left behind by a run outside the tests (its tables
    // there) would make the first run below find what it expects missing. The test drops
    // it at its end as well.
    mysql(
        "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest; \
         CREATE USER IF NOT EXISTS test@localhost IDENTIFIED BY 'test'; \
         GRANT ALL ON sbtest.* TO test@localhost",
    );
    let d = TempDir::new().unwrap();
    let seed = |cmd: &[&str]| -> Vec<String> {
        [
            "--test=./sysbench/tests/db/oltp.lua",
            "--mysql-table-engine=innodb",
            "--oltp-tables-count=4",
            "--oltp-table-size=2000",
            "--mysql-user=test",
            "--mysql-password=test",
            "--mysql-socket=/var/run/mysqld/mysqld.sock",
        ]
        .iter()
        .chain(cmd)
        .map(|s| s.to_string())
        .collect()
    };
    // Before prepare: the server's words name the table whole, though the password
    // (`test`) is part of its name; a short password is masked only as a word of its own.
    let o = run_in(d.path(), "plumb", &seed(&["--max-time=1", "run"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("Table 'sbtest.sbtest1' doesn't exist"),
        "{}",
        text(&o.stderr)
    );
    let o = run_in(d.path(), "plumb", &seed(&["prepare"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("Inserting 2000 records into 'sbtest4'"));
    assert_eq!(mysql("SELECT COUNT(*) FROM sbtest.sbtest4").trim(), "2000");
    let o = run_in(
        d.path(),
        "plumb",
        &seed(&[
            "--max-time=2",
            "--max-requests=0",
            "--num-threads=8",
            "--report-interval=1",
            "run",
        ]),
    );
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // sysbench 1.0 runs the 0.5 options with its warnings, as plumb does.
    for warning in ["--test", "--max-time", "--max-requests", "--num-threads"] {
        assert!(text(&o.stderr).contains(warning), "{}", text(&o.stderr));
    }
    assert!(out.contains("Number of threads: 8"), "{out}");
    assert!(out.contains("[ 1s ] thds: 8 tps: "), "{out}");
    let [r, w, other, t] = counts(&out);
    assert!(t > 0);
    // 14 reads, 4 writes and 2 others per transaction, ignoring retried ones.
    assert!(r >= 14 * t && other >= 2 * t && w > 0, "{out}");
    let o = run_in(d.path(), "plumb", &seed(&["cleanup"]));
    assert!(text(&o.stdout).contains("Dropping table 'sbtest4'..."));
    mysql("DROP USER test@localhost; DROP DATABASE sbtest");
}

/// A report with its figures and their padding masked: the layout alone.
fn layout_of(report: &str) -> Vec<String> {
    report
        .lines()
        .skip(1) // the banner names the tool
        .map(common::shape)
        .collect()
}

#[test]
fn dropin_oltp_reports_have_sysbench_s_layout() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let db = mysql_db("plumb_t_dropin");
    let link = d.path().join("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &link).unwrap();
    let base = with(&my_opts(&db), &["oltp_read_write", "--table-size=500"]);
    let o = run_in(d.path(), "sysbench", &with(&base, &["prepare"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    for extra in [
        &["--events=40", "--time=0"][..],
        &["--time=2", "--report-interval=1", "--threads=2"][..],
    ] {
        let args = with(&base, &[extra, &["run"]].concat());
        let theirs = run_in(d.path(), "sysbench", &args);
        let ours = Command::new(&link)
            .args(&args)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        assert!(text(&ours.stdout).starts_with("sysbench 1.0.20 (plumb "));
        // How many interval lines a 2 s run gets depends on timing: their shape is compared
        // once, the rest line by line.
        let split = |r: &str| {
            let (iv, rest): (Vec<String>, Vec<String>) = layout_of(r)
                .into_iter()
                .partition(|l| l.starts_with("[ Ns ]"));
            (iv.first().cloned(), rest)
        };
        let (our_iv, our_rest) = split(&text(&ours.stdout));
        let (their_iv, their_rest) = split(&text(&theirs.stdout));
        assert_eq!(our_iv, their_iv);
        assert_eq!(
            our_rest,
            their_rest,
            "{extra:?}\n{}\n{}",
            text(&ours.stdout),
            text(&theirs.stdout)
        );
        assert_eq!(text(&ours.stderr), text(&theirs.stderr));
    }
    mysql("DROP DATABASE plumb_t_dropin");
}

/// MyISAM tables: InnoDB's buffer pool and flush settings say nothing of them, and a write
/// returns before anything is synced. The findings say the second, not the first.
#[test]
fn myisam_tables_are_not_a_buffer_pool_and_not_durable() {
    if !available("mysql") {
        return;
    }
    let db = mysql_db("plumb_t_myisam");
    let d = TempDir::new().unwrap();
    let base = with(
        &my_opts(&db),
        &[
            "oltp_read_write",
            "--tables=1",
            "--table-size=500",
            "--mysql-storage-engine=myisam",
        ],
    );
    let o = run_in(d.path(), "plumb", &with(&base, &["prepare"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = d.path().join("r.json");
    let o = run_in(
        d.path(),
        "plumb",
        &with(
            &base,
            &[
                "--events=20",
                "--time=0",
                &format!("--json={}", json.display()),
                "run",
            ],
        ),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v = job_json(std::fs::read(&json).unwrap());
    assert_eq!(v["workload"]["database"]["storage_engine"], "MyISAM", "{v}");
    let findings = v["findings"].as_array().unwrap();
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(!ids.contains(&"data-in-buffer-pool"), "{ids:?}");
    let relaxed = findings
        .iter()
        .find(|f| f["id"] == "durability-relaxed")
        .unwrap_or_else(|| panic!("{ids:?}"));
    assert!(
        relaxed
            .to_string()
            .contains("storage engine MyISAM (no durable commit"),
        "{relaxed}"
    );
    mysql(&format!("DROP DATABASE {db}"));
}

/// --skip-trx=on with several threads on MariaDB: two threads' DELETE and INSERT of the same
/// id interleave and an INSERT meets error 1062, which sysbench's default ignore list does
/// not hold. sysbench stops on it (exit 1, its driver's line for the INSERT); plumb stops
/// too, and its one line names the cause to change. A connection that cannot be opened is
/// one line under plumb's name, without sysbench's FATAL block.
#[test]
fn a_skipped_transaction_s_duplicate_id_stops_as_sysbench_s_and_says_why() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    let db = mysql_db("plumb_t_skip_trx");
    let base = with(&my_opts(&db), &["oltp_read_write", "--table-size=10"]);
    let prep = run_in(d.path(), "plumb", &with(&base, &["prepare"]));
    assert!(prep.status.success(), "{}", text(&prep.stderr));
    let racing = with(&base, &["--skip-trx=on", "--threads=4", "--time=4", "run"]);
    if common::peer("sysbench") {
        let theirs = run_in(d.path(), "sysbench", &racing);
        let out = text(&theirs.stdout);
        assert_eq!(theirs.status.code(), Some(1), "{out}");
        assert!(
            out.contains("returned error 1062 (Duplicate entry")
                && out.contains("INSERT INTO sbtest1"),
            "{out}"
        );
    }
    let ours = run_in(d.path(), "plumb", &racing);
    let err = text(&ours.stderr);
    assert_eq!(ours.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap_or_default();
    for needle in [
        "insert on sbtest1: error 1062",
        "Duplicate entry",
        "--skip-trx=on",
        "another of the 4 threads deleted and re-inserted the same id",
    ] {
        assert!(last.contains(needle), "{needle}: {err}");
    }
    let gone = run_in(
        d.path(),
        "plumb",
        &with(
            &my_opts(&db),
            &[
                "--mysql-socket=/nonexistent/mysqld.sock",
                "oltp_read_write",
                "run",
            ],
        ),
    );
    let err = text(&gone.stderr);
    assert_eq!(gone.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("plumb: cannot connect: MySQL server at socket /nonexistent/mysqld.sock"),
        "{err}"
    );
    assert!(!text(&gone.stdout).contains("FATAL"));
    mysql("DROP DATABASE IF EXISTS plumb_t_skip_trx");
}

/// A second prepare on tables an earlier one left: the database's refusal, then what to do
/// (clean up first, or run on the tables as they are), exit 1, and the tables untouched.
#[test]
fn a_prepare_over_tables_already_there_says_what_to_do() {
    let d = TempDir::new().unwrap();
    let mut cases = Vec::new();
    if available("mysql") {
        cases.push((my_opts(&mysql_db("plumb_t_twice")), "error 1050 (42S01)"));
    }
    if available("pgsql") {
        cases.push((pg_opts(&pg_db("plumb_t_twice")), "(SQLSTATE 42P07)"));
    }
    for (base, code) in &cases {
        let prepare = with(base, &["oltp_point_select", "--table-size=10", "prepare"]);
        let o = run_in(d.path(), "plumb", &prepare);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let o = run_in(d.path(), "plumb", &prepare);
        assert_eq!(o.status.code(), Some(1));
        let err = text(&o.stderr);
        assert!(err.starts_with("plumb: CREATE TABLE sbtest1: "), "{err}");
        assert!(err.contains(code), "{err}");
        assert!(
            err.ends_with(": the table is already there; if an earlier prepare made it, run 'plumb oltp_point_select cleanup' with the same options first, or run on the tables as they are\n"),
            "{err}"
        );
        let run = with(
            base,
            &[
                "oltp_point_select",
                "--table-size=10",
                "--events=5",
                "--time=0",
                "run",
            ],
        );
        let o = run_in(d.path(), "plumb", &run);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    if available("mysql") {
        mysql("DROP DATABASE plumb_t_twice");
    }
    if available("pgsql") {
        psql("postgres", "DROP DATABASE plumb_t_twice");
    }
}
