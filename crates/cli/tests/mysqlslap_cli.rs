//! `plumb mysqlslap` and the binary run as `mysqlslap`, without a server: the statements
//! `--only-print` prints (against Debian's mariadb-slap when it is installed), the command
//! line as mysqlslap reads it, its refusals and exit statuses, `--help`, and the workload on
//! SQLite (`--plumb-db=sqlite`), CSV, the record and its replay.
//!
//! Without mariadb-slap the differential tests say so and pass, except under CI=true.

mod common;

use common::{mariadb_slap, mysqlslap_dir, run_prog, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

fn plumb_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("plumb")
}

fn dropin(d: &TempDir, args: &[&str]) -> Output {
    run_prog(&d.path().join("mysqlslap"), d.path(), args)
}

fn plumb_slap(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["mysqlslap"];
    all.extend_from_slice(args);
    run_prog(&plumb_bin(), dir, &all)
}

#[test]
fn only_print_prints_mariadb_slap_s_statements() {
    let Some(peer) = mariadb_slap() else {
        return;
    };
    let d = mysqlslap_dir();
    let cases: &[&[&str]] = &[
        &["-a"],
        &[
            "-a",
            "--create-schema=slap_op",
            "-i",
            "2",
            "--engine=innodb,memory:max_rows=10",
        ],
        &[
            "-a",
            "--auto-generate-sql-load-type=update",
            "--auto-generate-sql-add-autoincrement",
            "--auto-generate-sql-write-number=5",
            "--auto-generate-sql-unique-query-number=3",
            "-x",
            "2",
            "-y",
            "3",
            "--number-of-queries=7",
        ],
        &[
            "-a",
            "--auto-generate-sql-load-type=key",
            "--auto-generate-sql-guid-primary",
            "--auto-generate-sql-secondary-indexes=2",
            "--auto-generate-sql-execute-number=5",
            "--commit=2",
        ],
        &[
            "-a",
            "--auto-generate-sql-load-type=write",
            "--number-char-cols=0",
        ],
        &["-a", "--auto-generate-sql-load-type=read", "-vv"],
        &[
            "--create=CREATE TABLE a (x int);INSERT INTO a VALUES (1)",
            "--query=SELECT * FROM a;SELECT 2",
            "--delimiter=;",
            "--pre-query=SELECT 5",
            "--post-query=SELECT 6",
            "--commit=1",
            "-i",
            "2",
            "-vvv",
        ],
        // Several clients: each prints the same statements, in any interleaving.
        &["-a", "-c", "3,2", "--number-of-queries=12", "--commit=4"],
    ];
    for case in cases {
        let mut args = vec!["--only-print"];
        args.extend_from_slice(case);
        let ours = dropin(&d, &args);
        let theirs = run_prog(&peer, d.path(), &args);
        assert_eq!(
            ours.status.code(),
            Some(0),
            "{case:?}: {}",
            text(&ours.stderr)
        );
        assert_eq!(theirs.status.code(), Some(0), "{case:?}");
        let (a, b) = (text(&ours.stdout), text(&theirs.stdout));
        if case.contains(&"-c") {
            let sorted = |s: &str| {
                let mut v: Vec<String> = s.lines().map(String::from).collect();
                v.sort();
                v
            };
            assert_eq!(sorted(&a), sorted(&b), "{case:?}");
        } else {
            assert_eq!(a, b, "{case:?}");
        }
    }
}

#[test]
fn the_generated_values_are_glibc_s_first_random_numbers() {
    let d = mysqlslap_dir();
    let o = dropin(
        &d,
        &["--only-print", "-a", "--auto-generate-sql-write-number=2"],
    );
    let out = text(&o.stdout);
    assert!(
        out.contains("INSERT INTO t1 VALUES (1804289383,'mxvtvmC9127qJNm06sGB8R92q2j7vTiiITRD"),
        "{out}"
    );
    assert_eq!(
        out.matches("INSERT INTO t1 VALUES (1804289383,").count(),
        1,
        "{out}"
    );
    // The population: CREATE TABLE plus one INSERT; then the 11 statements of the mixed list.
    assert_eq!(out.matches("INSERT").count(), 1 + 6, "{out}");
    assert_eq!(
        out.matches("SELECT intcol1,charcol1 FROM t1;").count(),
        5,
        "{out}"
    );
}

/// mysqlslap's refusals, line for line and status for status, under its name; plumb's
/// usage status 2 under plumb's.
#[test]
fn bad_command_lines_are_refused_as_mysqlslap_refuses_them() {
    let d = mysqlslap_dir();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--uroot", "-a"], 2, "mysqlslap: unknown option '--uroot'\n"),
        (&["-a", "--bogus=3"], 7, "mysqlslap: unknown variable 'bogus=3'\n"),
        (
            &["--auto-generate-", "sql-write-number=1000"],
            3,
            "mysqlslap: ambiguous option '--auto-generate-' (auto-generate-sql, auto-generate-sql-write-number)\n",
        ),
        (&["-a", "-c"], 5, "mysqlslap: option '-c' requires an argument\n"),
        (&["-a", "--verbose=2"], 4, "mysqlslap: option '--verbose' cannot take an argument\n"),
        (
            &["-a", "-i", "3x"],
            9,
            "Unknown suffix 'x' used for variable 'iterations' (value '3x'). Legal suffix characters are: K, M, G, T, P, E\nmysqlslap: Error while setting value '3x' to 'iterations'\n",
        ),
        (
            &["-a", "--iterations=-3"],
            13,
            "Incorrect unsigned value: '-3' for iterations\nmysqlslap: Error while setting value '-3' to 'iterations'\n",
        ),
        (&["-a", "--debug"], 12, "mysqlslap: ERROR: Option 'debug' used, but is disabled\n"),
        (
            &["-a", "--auto-generate-sql-load-type=key"],
            1,
            "mysqlslap: Can't perform key test without a primary key!\n",
        ),
        (
            &["-a", "--query=SELECT 1"],
            1,
            "mysqlslap: Can't use --auto-generate-sql when create and query strings are specified!\n",
        ),
        (
            &["-a", "--auto-generate-sql-guid-primary", "--auto-generate-sql-add-autoincrement"],
            1,
            "mysqlslap: Either auto-generate-sql-guid-primary or auto-generate-sql-add-autoincrement can be used!\n",
        ),
        (
            &["-a", "--number-of-queries=5", "--auto-generate-sql-execute-number=5"],
            1,
            "mysqlslap: Either auto-generate-sql-execute-number or number-of-queries can be used!\n",
        ),
        (&["-a", "--csv=/nonexistent/dir/x.csv"], 1, "mysqlslap: Could not open csv file: /nonexistent/dir/x.csvn\n"),
    ];
    let peer = mariadb_slap();
    // mysqlslap names itself by its argv[0] as typed.
    let ours = d.path().join("mysqlslap");
    let ours = ours.to_str().unwrap();
    for (args, code, stderr) in cases {
        let stderr = stderr.replace("mysqlslap: ", &format!("{ours}: "));
        let o = dropin(&d, args);
        assert_eq!(
            o.status.code(),
            Some(*code),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert_eq!(text(&o.stderr), stderr, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        if let Some(p) = &peer {
            let t = run_prog(p, d.path(), args);
            assert_eq!(t.status.code(), Some(*code), "mariadb-slap {args:?}");
            assert_eq!(
                text(&t.stderr).replace(p.to_str().unwrap(), ours),
                stderr,
                "mariadb-slap {args:?}"
            );
        }
        // Under plumb's name a usage error exits 2 (a CSV file that cannot be opened is not one).
        let o = plumb_slap(d.path(), args);
        let usage = if args[1].starts_with("--csv") { 1 } else { 2 };
        assert_eq!(o.status.code(), Some(usage), "plumb {args:?}");
    }
    // What plumb refuses where mysqlslap would loop forever or ignore a value: one line each.
    for (args, needle) in [
        (
            &["-a", "-c", "10,x"][..],
            "--concurrency takes numbers of clients",
        ),
        (&["-a", "-c", "0"], "--concurrency takes numbers of clients"),
        (&["-a", "-i", "0"], "--iterations must be at least 1"),
        (
            &["-a", "-y", "2,1"],
            "the 'N,1' index form is not supported",
        ),
        (
            &["-a", "--auto-generate-sql-load-type=rubbish"],
            "takes mixed, update, write, key or read",
        ),
        (
            &["-a", "--auto-generate-sql-unique-write-number=0"],
            "would loop forever",
        ),
        (&["--number-of-queries=10"], "there are none to run"),
        (&["-a", "--ssl-cert=x.pem"], "--ssl-cert is not supported"),
        (
            &["--defaults-file=/etc/my.cnf", "-a"],
            "plumb reads no option files",
        ),
        (
            &["-a", "--no-drop=maybe"],
            "takes 0, 1, on, off, true or false",
        ),
        (
            &["-a", "stray", "words"],
            "2 argument(s) that are not options",
        ),
        (
            &["-a", "--plumb-db=oracle"],
            "--plumb-db takes mysql, sqlite[:FILE] or pgsql[:DATABASE]",
        ),
        (
            &["-a", "--only-print", "--plumb-db=sqlite"],
            "does not combine with --plumb-db",
        ),
        (
            &["-a", "-e", "innodb", "--plumb-db=sqlite"],
            "does not combine with --plumb-db",
        ),
        (
            &["-a", "-uroot", "--plumb-db=sqlite"],
            "--user is a connection option",
        ),
    ] {
        let o = dropin(&d, args);
        let err = text(&o.stderr);
        // A switch's bad value is my_getopt's invalid argument (mariadb-slap warns and
        // goes on without the option).
        let code = if needle.starts_with("takes 0, 1") {
            13
        } else {
            1
        };
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(
            plumb_slap(d.path(), args).status.code(),
            Some(2),
            "{args:?}"
        );
    }
}

#[test]
fn my_getopt_spellings_are_accepted() {
    let d = mysqlslap_dir();
    let a = text(&dropin(&d, &["--only-print", "-a", "-c", "2", "-x", "3"]).stdout);
    for other in [
        &[
            "--only-print",
            "--auto_generate_sql",
            "--concurrency=2",
            "--number_char_cols",
            "3",
        ][..],
        &["--only-print", "-ac2", "-x3"],
        &[
            "--only-print=1",
            "--skip-no-drop",
            "-a",
            "--conc=2",
            "--number-char-cols=3",
        ],
        &[
            "--no-defaults",
            "--only-print",
            "--enable-auto-generate-sql",
            "-c",
            "2",
            "-x",
            "3",
        ],
    ] {
        let o = dropin(&d, other);
        assert_eq!(text(&o.stdout), a, "{other:?}: {}", text(&o.stderr));
    }
    let o = dropin(&d, &["--only-print", "-a", "--conc=2"]);
    assert_eq!(
        text(&o.stderr),
        "Info: Using unique option prefix 'conc' is error-prone and can break in the future. Please use the full name 'concurrency' instead.\n"
    );
    // Switched off again, and --loose- options that do not exist are a warning.
    let o = dropin(
        &d,
        &[
            "--only-print",
            "-a",
            "--skip-auto-generate-sql",
            "--loose-frobnicate=1",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(
        text(&o.stderr),
        format!(
            "Warning: {}: unknown variable 'loose-frobnicate=1'\n",
            d.path().join("mysqlslap").display()
        )
    );
}

#[test]
fn help_and_version() {
    let d = mysqlslap_dir();
    let o = dropin(&d, &["--help"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    let prog = d.path().join("mysqlslap");
    assert!(
        out.starts_with(&format!("{}  Ver 1.0 Distrib plumb-", prog.display())),
        "{out}"
    );
    for needle in [
        "--auto-generate-sql-write-number",
        "-c, --concurrency",
        "--plumb-db=",
        "reads no option files",
        "/var/run/mysqld/mysqld.sock",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    let o = dropin(&d, &["-V", "--bogus"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).starts_with(&format!("{}  Ver 1.0", prog.display())));
}

#[test]
fn a_bare_p_needs_a_terminal() {
    let d = mysqlslap_dir();
    let o = dropin(&d, &["-uroot", "-p", "-a"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr).replace(d.path().join("mysqlslap").to_str().unwrap(), "mysqlslap"),
        "mysqlslap: -p without a password asks for it on a terminal, and stdin is not one: give it as -pPASSWORD or --password=PASSWORD\n"
    );
}

/// The workload on SQLite: the population's rows, the queries each client ran, the schema
/// (the file's tables) dropped or kept, and the record.
#[test]
fn sqlite_runs_mysqlslap_s_workload() {
    let d = TempDir::new().unwrap();
    let db = d.path().join("slap.sqlite");
    let target = format!("--plumb-db=sqlite:{}", db.display());
    let json = d.path().join("r.json");
    let json_opt = format!("--plumb-json={}", json.display());
    let o = plumb_slap(
        d.path(),
        &[
            "-a",
            &target,
            "--auto-generate-sql-add-autoincrement",
            "--auto-generate-sql-load-type=key",
            "--auto-generate-sql-write-number=40",
            "-c",
            "2,3",
            "-i",
            "2",
            "--number-of-queries=30",
            &json_opt,
        ],
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let blocks: Vec<&str> = out.split("Benchmark\n").skip(1).collect();
    assert_eq!(blocks.len(), 2, "{out}");
    assert!(blocks[0].contains(
        "\tNumber of clients running queries: 2\n\tAverage number of queries per client: 15\n"
    ));
    assert!(blocks[1].contains(
        "\tNumber of clients running queries: 3\n\tAverage number of queries per client: 10\n"
    ));
    assert!(!out.contains("Running for engine"));
    assert!(out.contains("What happened underneath (plumb):"), "{out}");
    assert!(out.contains("iteration 2: 30 queries in"), "{out}");
    assert!(out.contains("journal, synchronous:"), "{out}");
    assert_eq!(
        rusqlite_tables(&db),
        0,
        "the schema's tables are dropped at the end"
    );
    // Kept with --no-drop: the population's rows (the CREATE TABLE counts as one of its
    // statements), and a second run into the kept schema fails on its CREATE, as
    // mysqlslap's CREATE SCHEMA does.
    let keep = [
        "-a",
        &target,
        "--auto-generate-sql-write-number=40",
        "--auto-generate-sql-load-type=read",
        "--no-drop",
    ];
    let o = plumb_slap(d.path(), &keep);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(rusqlite_count(&db), 39);
    let o = plumb_slap(d.path(), &keep);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("Cannot run query CREATE TABLE"),
        "{}",
        text(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["front_end"], "mysqlslap");
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 4);
    let job = &groups[3]["jobs"][0];
    assert_eq!(job["test"], "mysqlslap");
    assert_eq!(job["workload"]["concurrency"], 3);
    assert_eq!(job["workload"]["iteration"], 2);
    assert_eq!(job["workload"]["database"]["driver"], "sqlite");
    let queries = job["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "query")
        .unwrap()["count"]
        .clone();
    assert_eq!(queries, 30);
    // The saved record prints the same blocks again.
    let r = run_prog(&plumb_bin(), d.path(), &["report", json.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let replay = text(&r.stdout);
    let benchmark = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with('\t') || *l == "Benchmark")
            .map(String::from)
            .collect()
    };
    assert_eq!(benchmark(&replay), benchmark(&out));
    // Without --no-drop the kept tables go first and the new ones at the end.
    let o = plumb_slap(d.path(), &["-a", &target, "-s"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "", "--silent");
    assert_eq!(rusqlite_tables(&db), 0);
}

/// One number from the SQLite file (read-only, beside plumb's connections).
fn sqlite_query(db: &Path, sql: &str) -> u64 {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as u64
}

fn rusqlite_count(db: &Path) -> u64 {
    sqlite_query(db, "SELECT COUNT(*) FROM t1")
}

fn rusqlite_tables(db: &Path) -> u64 {
    sqlite_query(db, "SELECT COUNT(*) FROM sqlite_master WHERE type='table'")
}

#[test]
fn csv_goes_to_stdout_or_is_appended_to_a_file() {
    let d = TempDir::new().unwrap();
    let target = format!("--plumb-db=sqlite:{}", d.path().join("c.sqlite").display());
    let o = plumb_slap(
        d.path(),
        &[
            "-a",
            &target,
            "-c",
            "1,2",
            "--number-of-queries=4",
            "--csv",
            "--plumb-findings=off",
        ],
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    let shape = |l: &str, load: &str, clients: &str, queries: &str| {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 7, "{l}");
        assert_eq!(
            (f[0], f[1], f[5], f[6]),
            ("", load, clients, queries),
            "{l}"
        );
        for t in &f[2..5] {
            let (s, ms) = t.split_once('.').unwrap();
            assert!(s.parse::<u64>().is_ok() && ms.len() == 3, "{l}");
        }
    };
    shape(lines[0], "mixed", "1", "4");
    shape(lines[1], "mixed", "2", "2");
    let file = d.path().join("out.csv");
    std::fs::write(&file, "earlier line\n").unwrap();
    let csv = format!("--csv={}", file.display());
    let o = plumb_slap(
        d.path(),
        &[
            "-a",
            &target,
            "--auto-generate-sql-load-type=read",
            &csv,
            "-i",
            "3",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stdout).contains("Benchmark"),
        "--csv implies --silent"
    );
    let content = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = content.lines().collect();
    assert_eq!(lines.len(), 2, "{content}");
    assert_eq!(lines[0], "earlier line");
    shape(lines[1], "read", "1", "0");
}

#[test]
fn the_dropin_name_prints_mysqlslap_s_output_only() {
    let d = mysqlslap_dir();
    let target = format!("--plumb-db=sqlite:{}", d.path().join("x.sqlite").display());
    let o = dropin(&d, &["-a", &target, "-c", "2", "--number-of-queries=10"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let masked: String = out
        .chars()
        .map(|c| if c.is_ascii_digit() { 'N' } else { c })
        .collect();
    assert_eq!(
        masked.replace("NN", "N").replace("NN", "N"),
        "Benchmark\n\
         \tAverage number of seconds to run all queries: N.N seconds\n\
         \tMinimum number of seconds to run all queries: N.N seconds\n\
         \tMaximum number of seconds to run all queries: N.N seconds\n\
         \tNumber of clients running queries: N\n\
         \tAverage number of queries per client: N\n\n"
    );
    assert!(out.contains("clients running queries: 2\n\tAverage number of queries per client: 5\n"));
    assert_eq!(text(&o.stderr), "");
    // plumb's sections when asked.
    let o = dropin(&d, &["-a", &target, "--plumb-findings=on"]);
    assert!(text(&o.stdout).contains("What happened underneath (plumb):"));
}

/// A query that fails stops the run with mysqlslap's line: status 0 under its name (as
/// mariadb-slap exits), 1 under plumb's.
#[test]
fn a_failing_query_stops_the_run() {
    let d = mysqlslap_dir();
    let target = format!("--plumb-db=sqlite:{}", d.path().join("f.sqlite").display());
    let args = [
        "--create=CREATE TABLE a (x int)",
        "--query=SELECT * FROM nonexist",
        &target,
    ];
    let prog = d.path().join("mysqlslap");
    let prog = prog.to_str().unwrap();
    let o = dropin(&d, &args);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o.stderr),
        format!(
            "{prog}: Cannot run query SELECT * FROM nonexist ERROR : no such table: nonexist\n"
        )
    );
    assert_eq!(text(&o.stdout), "");
    let o = plumb_slap(d.path(), &args);
    assert_eq!(o.status.code(), Some(1));
    let o = dropin(
        &d,
        &[
            "--create=CREATE TABLE a (x int);bogus sql",
            "--delimiter=;",
            "--query=SELECT 1",
            &target,
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "{prog}: Cannot run query bogus sql ERROR : near \"bogus\": syntax error"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Runs are kept in plumb's history, tagged under plumb's name; --only-print runs are not.
#[test]
fn runs_are_kept_in_the_history() {
    let home = TempDir::new().unwrap();
    let d = TempDir::new().unwrap();
    let target = format!("--plumb-db=sqlite:{}", d.path().join("h.sqlite").display());
    let plumb = |args: &[&str]| {
        Command::new(plumb_bin())
            .args(args)
            .current_dir(d.path())
            .env("PLUMB_HOME", home.path())
            .output()
            .unwrap()
    };
    let o = plumb(&[
        "mysqlslap",
        "-a",
        &target,
        "-c",
        "2",
        "--tag=slap-tag",
        "-s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = plumb(&["mysqlslap", "--only-print", "-a"]);
    assert_eq!(o.status.code(), Some(0));
    let o = plumb(&["mysqlslap", "-a", &target, "--no-history", "-s"]);
    assert_eq!(o.status.code(), Some(0));
    let list = text(&plumb(&["history"]).stdout);
    let runs: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(runs.len(), 1, "{list}");
    assert!(
        runs[0].contains("mysqlslap") && runs[0].contains("slap-tag"),
        "{list}"
    );
}

/// The first SIGINT stops a long population at the next statement (mysqlslap would be
/// killed by it): status 130, nothing half reported.
#[test]
fn an_interrupt_stops_a_long_population() {
    let d = TempDir::new().unwrap();
    let target = format!("--plumb-db=sqlite:{}", d.path().join("i.sqlite").display());
    let child = Command::new(plumb_bin())
        .args([
            "mysqlslap",
            "-a",
            &target,
            "--auto-generate-sql-write-number=100000000",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    common::signal(&child, libc::SIGINT);
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    let rows = sqlite_query(&d.path().join("i.sqlite"), "SELECT COUNT(*) FROM t1");
    assert!(rows > 0 && rows < 99_999_999, "{rows}");
}
