//! mysqlslap on the machine's MariaDB (and PostgreSQL, plumb's extension): seed 004's three
//! command lines, a real run against Debian's mariadb-slap on the same server (same layout
//! once the numbers are masked, same rows left in the table), connection failures and a
//! failing query as mariadb-slap reports them, and passwords kept out of every output.
//!
//! Each test works in its own schema (`slap_...`); the seed commands that use mysqlslap's
//! default schema hold a file lock, so two test processes never drop each other's schema.
//! Without a server the tests say so and pass, except under CI=true.

mod common;

use common::{available, mariadb_slap, mysql, mysqlslap_dir, psql, run_prog, text};

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

fn schema_exists(name: &str) -> bool {
    !mysql(&format!("SHOW DATABASES LIKE '{name}'"))
        .trim()
        .is_empty()
}

/// Digits masked: what stays is the layout.
fn masked(s: &str) -> String {
    let mut out = String::new();
    let mut digit = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !digit {
                out.push('N');
            }
            digit = true;
        } else {
            out.push(c);
            digit = false;
        }
    }
    out
}

/// What the comparisons need: MariaDB, mariadb-slap, and a directory with the drop-in
/// (with its path); None when a test cannot run here.
fn comparison() -> Option<(TempDir, PathBuf, PathBuf)> {
    if !available("mysql") {
        return None;
    }
    let peer = mariadb_slap()?;
    let d = mysqlslap_dir();
    let slap = d.path().join("mysqlslap");
    Some((d, slap, peer))
}

/// Holds mysqlslap's default schema (`mysqlslap`) for one test at a time, across test
/// processes too.
/// The lock lives as long as the open file: dropping it unlocks.
struct DefaultSchema(#[allow(dead_code)] std::fs::File);

impl DefaultSchema {
    fn lock() -> DefaultSchema {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("plumb-mysqlslap-default-schema.lock"))
            .unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this File owns.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        DefaultSchema(f)
    }
}

/// Run `prog` on a new pseudo-terminal (its controlling terminal), answer `answer` once it
/// asks for a password, and return its exit status and everything it wrote there.
fn on_terminal(prog: &Path, dir: &Path, args: &[&str], answer: &str) -> (i32, String) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors; the null pointers ask for no name or settings.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty");
    // SAFETY: the descriptors are fresh from openpty (dup'ed for each stream).
    let end = |fd: i32| unsafe { Stdio::from(OwnedFd::from_raw_fd(libc::dup(fd))) };
    let mut c = Command::new(prog);
    c.args(args)
        .current_dir(dir)
        .stdin(end(slave))
        .stdout(end(slave))
        .stderr(end(slave));
    // SAFETY: setsid and TIOCSCTTY are async-signal-safe; they make the terminal the
    // child's controlling one, so it can open /dev/tty.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    // The command holds the parent's copies of the child's ends until dropped: while any
    // stays open, the master never reads the end.
    drop(c);
    // SAFETY: closing the parent's copy of the slave; the child keeps its own.
    unsafe { libc::close(slave) };
    // SAFETY: master is ours alone from here on.
    let mut m = unsafe { std::fs::File::from_raw_fd(master) };
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let mut answered = false;
    loop {
        match m.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        if !answered && text(&seen).contains("Enter password: ") {
            m.write_all(format!("{answer}\n").as_bytes()).unwrap();
            answered = true;
        }
    }
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), text(&seen))
}

/// Seed 004's three mysqlslap commands as the chapter prints them, its line breaks and the
/// typesetting's spaces inside option names removed (`--auto-generate- sql-write-number`).
/// Command 1's `--uroot` is the chapter's typo: mariadb-slap refuses it, and so does plumb
/// (tested line for line in mysqlslap_cli.rs); it runs here as `-uroot`. Command 1 names
/// the schema `test`, which holds other work on this machine: it runs in its own. Commands
/// 2 and 3 load 100 000 and 20 000 000 rows and run 5 000 and 1 000 000 queries: here
/// 2 000 rows and 1 000 queries, the rest unchanged.
#[test]
fn seed_004_commands_run_against_mariadb() {
    if !available("mysql") {
        return;
    }
    let d = mysqlslap_dir();
    let slap = d.path().join("mysqlslap");
    let seed1 = [
        "-uroot",
        "--engine=innodb",
        "--auto-generate-sql",
        "--auto-generate-sql-unique-query-number=100",
        "--auto-generate-sql-unique-write-number=100",
        "--auto-generate-sql-write-number=1000",
        "--create-schema=slap_seed1",
        "--auto-generate-sql-load-type=mixed",
        "--concurrency=10,100",
        "--number-of-queries=1000",
        "--iterations=1",
        "--number-char-cols=1",
        "--number-int-cols=8",
        "--auto-generate-sql-secondary-indexes=1",
        "--debug-info",
        "--verbose",
    ];
    let o = run_prog(&slap, d.path(), &seed1);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let blocks: Vec<&str> = out.split("Benchmark\n").skip(1).collect();
    assert_eq!(blocks.len(), 2, "{out}");
    for (b, clients, per_client) in [(blocks[0], 10, 100), (blocks[1], 100, 10)] {
        assert!(b.starts_with("\tRunning for engine innodb\n"), "{b}");
        assert!(
            b.contains(&format!("\tNumber of clients running queries: {clients}\n\tAverage number of queries per client: {per_client}\n")),
            "{b}"
        );
    }
    assert!(
        text(&o.stderr).contains("\nUser time "),
        "--debug-info: {}",
        text(&o.stderr)
    );
    assert!(!schema_exists("slap_seed1"), "dropped at the end");
    // The chapter's notes on the generated SQL: a full scan, and the uuid() of the index.
    let mut printed = seed1.to_vec();
    printed.push("--only-print");
    let p = text(&run_prog(&slap, d.path(), &printed).stdout);
    assert!(p.contains(
        "SELECT intcol1,intcol2,intcol3,intcol4,intcol5,intcol6,intcol7,intcol8,charcol1 FROM t1;"
    ));
    assert!(p.contains("INSERT INTO t1 VALUES (uuid(),"));

    let _lock = DefaultSchema::lock();
    let seed2 = [
        "-uroot",
        "--engine=innodb",
        "--auto-generate-sql-load-type=key",
        "--auto-generate-sql",
        "--auto-generate-sql-write-number=2000",
        "--auto-generate-sql-guid-primary",
        "--number-char-cols=10",
        "--number-int-cols=10",
        "--concurrency=10,100",
        "--number-of-queries=5000",
    ];
    let o = run_prog(&slap, d.path(), &seed2);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        out.contains("clients running queries: 10\n\tAverage number of queries per client: 500\n"),
        "{out}"
    );
    assert!(
        out.contains("clients running queries: 100\n\tAverage number of queries per client: 50\n"),
        "{out}"
    );
    assert!(!schema_exists("mysqlslap"));

    // Command 3 asks for the password (-p): on a terminal, as the chapter's reader ran it.
    let seed3 = [
        "-uroot",
        "-p",
        "--engine=innodb",
        "--auto-generate-sql",
        "--auto-generate-sql-write-number=2000",
        "--auto-generate-sql-add-autoincrement",
        "--auto-generate-sql-secondary-indexes=2",
        "--concurrency=50",
        "--number-of-queries=1000",
        "--number-char-cols=3",
        "--number-int-cols=2",
        "--debug-info",
    ];
    let (code, seen) = on_terminal(&slap, d.path(), &seed3, "");
    assert_eq!(code, 0, "{seen}");
    assert!(seen.starts_with("Enter password: "), "{seen}");
    assert!(seen.contains("\tNumber of clients running queries: 50\r\n\tAverage number of queries per client: 20\r\n"), "{seen}");
    assert!(seen.contains("User time "), "{seen}");
    assert!(!schema_exists("mysqlslap"));
}

/// The same command on the same server as mariadb-slap: the same report once numbers are
/// masked, the same rows left behind (`--no-drop`).
#[test]
fn a_run_matches_mariadb_slap_s_report_and_rows() {
    let Some((d, slap, peer)) = comparison() else {
        return;
    };
    for (name, extra) in [
        (
            "mixed",
            &["-c", "2", "--number-of-queries=20", "-e", "innodb"][..],
        ),
        (
            "key",
            &[
                "--auto-generate-sql-add-autoincrement",
                "--auto-generate-sql-load-type=key",
                "-c",
                "3",
                "--number-of-queries=30",
            ][..],
        ),
        (
            "update",
            &[
                "--auto-generate-sql-guid-primary",
                "--auto-generate-sql-load-type=update",
                "--commit=4",
                "--auto-generate-sql-execute-number=9",
            ][..],
        ),
    ] {
        let mut reports = Vec::new();
        let mut rows = Vec::new();
        for (who, prog) in [("plumb", &slap), ("peer", &peer)] {
            let schema = format!("slap_d_{name}_{who}");
            mysql(&format!("DROP DATABASE IF EXISTS {schema}"));
            let schema_opt = format!("--create-schema={schema}");
            let mut args = vec![
                "-uroot",
                "-a",
                "--auto-generate-sql-write-number=60",
                "--no-drop",
                &schema_opt,
            ];
            args.extend_from_slice(extra);
            let o = run_prog(prog, d.path(), &args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{who} {name}: {}",
                text(&o.stderr)
            );
            assert_eq!(text(&o.stderr), "", "{who} {name}");
            reports.push(masked(&text(&o.stdout)));
            rows.push(mysql(&format!("SELECT COUNT(*) FROM {schema}.t1")));
            mysql(&format!("DROP DATABASE {schema}"));
        }
        assert_eq!(reports[0], reports[1], "{name}");
        assert_eq!(rows[0], rows[1], "{name}");
    }
}

#[test]
fn connection_failures_are_reported_as_mariadb_slap_reports_them() {
    let Some((d, slap, peer)) = comparison() else {
        return;
    };
    let same = |args: &[&str], code: i32| {
        let ours = run_prog(&slap, d.path(), args);
        let theirs = run_prog(&peer, d.path(), args);
        assert_eq!(
            ours.status.code(),
            Some(code),
            "{args:?}: {}",
            text(&ours.stderr)
        );
        assert_eq!(theirs.status.code(), Some(code), "{args:?}");
        let e =
            |o: &Output, p: &Path| masked(&text(&o.stderr).replace(p.to_str().unwrap(), "PROG"));
        assert_eq!(e(&ours, &slap), e(&theirs, &peer), "{args:?}");
        assert_eq!(text(&ours.stderr).lines().count(), 1, "{args:?}");
        (text(&ours.stdout), text(&ours.stderr))
    };
    let (_, err) = same(&["-uroot", "-S", "/nonexistent/mysqld.sock", "-a"], 1);
    assert!(err.ends_with(": Error when connecting to server: Can't connect to local server through socket '/nonexistent/mysqld.sock' (2)\n"), "{err}");
    // Port 1 on the loopback: nobody listens (the errno differs: MariaDB's client reports
    // its non-blocking connect's EINPROGRESS, plumb the refusal).
    let (_, err) = same(&["-uroot", "-h", "127.0.0.1", "-P", "1", "-a"], 1);
    assert!(
        err.contains("Error when connecting to server: Can't connect to server on '127.0.0.1' ("),
        "{err}"
    );
    // The clients connect to a schema nothing created: each says so, the report follows.
    mysql("DROP DATABASE IF EXISTS slap_nodb");
    let (out, err) = same(
        &["-uroot", "--create-schema=slap_nodb", "--query=SELECT 1"],
        0,
    );
    assert!(
        err.ends_with(": Error when connecting to server: 1049 Unknown database 'slap_nodb'\n"),
        "{err}"
    );
    assert!(out.starts_with("Benchmark\n"), "{out}");
}

/// A client's failing query: mysqlslap's line, status 0, the schema left as it was.
#[test]
fn a_failing_query_ends_the_run_as_mariadb_slap_ends_it() {
    let Some((d, slap, peer)) = comparison() else {
        return;
    };
    let mut errs = Vec::new();
    for (prog, schema) in [(&slap, "slap_fail_p"), (&peer, "slap_fail_m")] {
        let s = format!("--create-schema={schema}");
        let o = run_prog(
            prog,
            d.path(),
            &[
                "-uroot",
                &s,
                "--create=CREATE TABLE a (x int)",
                "--query=SELECT * FROM nonexist",
            ],
        );
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(text(&o.stdout), "");
        errs.push(
            text(&o.stderr)
                .replace(prog.to_str().unwrap(), "PROG")
                .replace(schema, "SCHEMA"),
        );
        assert!(schema_exists(schema), "mysqlslap leaves the schema behind");
        mysql(&format!("DROP DATABASE {schema}"));
    }
    assert_eq!(errs[0], errs[1]);
    assert_eq!(
        errs[0],
        "PROG: Cannot run query SELECT * FROM nonexist ERROR : Table 'SCHEMA.nonexist' doesn't exist\n"
    );
}

#[test]
fn passwords_appear_nowhere() {
    if !available("mysql") {
        return;
    }
    const SECRET: &str = "Sl4p-Secret-9";
    mysql(&format!(
        "CREATE USER IF NOT EXISTS slap_pw@localhost IDENTIFIED BY '{SECRET}'; \
         GRANT ALL ON `slap\\_pw%`.* TO slap_pw@localhost"
    ));
    let d = mysqlslap_dir();
    let slap = d.path().join("mysqlslap");
    let json = d.path().join("r.json");
    let json_opt = format!("--plumb-json={}", json.display());
    let p_short = format!("-p{SECRET}");
    let p_long = format!("--password={SECRET}");
    let p_prefix = format!("--pass={SECRET}");
    for pw in [&p_short, &p_long, &p_prefix] {
        let o = run_prog(
            &slap,
            d.path(),
            &[
                "-uslap_pw",
                pw,
                "-a",
                "--create-schema=slap_pw1",
                &json_opt,
                "--plumb-findings=on",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let record = std::fs::read_to_string(&json).unwrap();
        for s in [text(&o.stdout), text(&o.stderr), record.clone()] {
            assert!(!s.contains(SECRET), "{s}");
        }
        assert!(record.contains("***"), "{record}");
    }
    // A wrong one: refused by the server, in one line, and not shown either.
    let wrong = format!("-p{SECRET}x");
    let o = run_prog(
        &slap,
        d.path(),
        &["-uslap_pw", &wrong, "-a", "--create-schema=slap_pw2"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("Error when connecting to server: ") && err.contains("Access denied"),
        "{err}"
    );
    assert!(!err.contains(SECRET));
    // Typed at the prompt: not echoed, and the run uses it.
    let (code, seen) = on_terminal(
        &slap,
        d.path(),
        &["-uslap_pw", "-p", "-a", "--create-schema=slap_pw3"],
        SECRET,
    );
    assert_eq!(code, 0, "{seen}");
    assert!(seen.contains("Benchmark"), "{seen}");
    assert!(!seen.contains(SECRET), "{seen}");
    mysql("DROP USER slap_pw@localhost");
}

/// plumb's extension: the same workload on PostgreSQL, in a schema of its own.
#[test]
fn postgresql_runs_the_workload() {
    if !available("pgsql") {
        return;
    }
    let d = TempDir::new().unwrap();
    psql("postgres", "DROP SCHEMA IF EXISTS slap_pg_t CASCADE");
    let o = Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args([
            "mysqlslap",
            "--plumb-db=pgsql",
            "-h",
            "127.0.0.1",
            "-u",
            "postgres",
            "-a",
            "--auto-generate-sql-add-autoincrement",
            "--auto-generate-sql-secondary-indexes=1",
            "--create-schema=slap_pg_t",
            "-c",
            "2",
            "--number-of-queries=20",
            "--commit=3",
            "--no-drop",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        out.contains(
            "\tNumber of clients running queries: 2\n\tAverage number of queries per client: 10\n"
        ),
        "{out}"
    );
    assert!(out.contains("driver:                       pgsql"), "{out}");
    // 99 rows loaded, then 5 INSERTs per client (the mixed list alternates from one).
    assert_eq!(
        psql("postgres", "SELECT COUNT(*) FROM slap_pg_t.t1").trim(),
        "109"
    );
    assert_eq!(
        psql("postgres", "SELECT COUNT(DISTINCT id0) FROM slap_pg_t.t1").trim(),
        "109"
    );
    psql("postgres", "DROP SCHEMA slap_pg_t CASCADE");
}
