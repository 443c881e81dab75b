//! What an OLTP run checks of its tables before it starts: a `--table-size` larger than the
//! tables were prepared with is refused with one line, a table thinned by oltp_delete is not
//! (sysbench runs both silently), a missing table is named, and a run never creates the
//! SQLite file it was pointed at. Also the refusal of `--*-ignore-errors` items that are no
//! error codes, and the test help's listing.

mod common;

use std::path::Path;

use common::{available, figure, mysql, mysql_fresh_db, pg_fresh_db, plumb, psql, text};
use tempfile::TempDir;

fn run_in(dir: &Path, prog: &str, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new(if prog == "plumb" {
        assert_cmd::cargo::cargo_bin("plumb")
    } else {
        prog.into()
    });
    c.args(args).current_dir(dir).output().unwrap()
}

/// plumb's refusal: exit `code` (2 for a command line refused before anything runs, 1 for
/// tables found wanting), one line on stderr containing `needle`.
fn refused(o: &std::process::Output, code: i32, needle: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
}

/// A table oltp_delete thinned (uniform ids, more deletes than rows: a few dozen rows left,
/// none in the top 1% of ids) was still prepared with --table-size: the run goes ahead.
/// Prepared smaller than the run's size, it is refused.
fn thinned_and_smaller(dir: &Path, server: &[&str], peer: bool) {
    let with = |more: &[&'static str]| -> Vec<&str> { [server, more].concat() };
    let o = run_in(
        dir,
        "plumb",
        &with(&["oltp_delete", "--table-size=1000", "prepare"]),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run_in(
        dir,
        "plumb",
        &with(&[
            "oltp_delete",
            "--table-size=1000",
            "--rand-type=uniform",
            "--events=2500",
            "--time=0",
            "run",
        ]),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let run = with(&[
        "oltp_read_write",
        "--table-size=1000",
        "--events=10",
        "--time=0",
        "run",
    ]);
    let o = run_in(dir, "plumb", &run);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(figure(&text(&o.stdout), "transactions:"), 10);
    if peer {
        // sysbench runs it too.
        let s = run_in(dir, "sysbench", &run);
        assert!(s.status.success(), "{}", text(&s.stdout));
    }
    let o = run_in(
        dir,
        "plumb",
        &with(&[
            "oltp_read_write",
            "--table-size=100000",
            "--events=10",
            "run",
        ]),
    );
    refused(&o, 1, "--table-size: 100000 is larger than the tables hold");
    let o = run_in(dir, "plumb", &with(&["oltp_delete", "cleanup"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
}

fn sysbench_installed() -> bool {
    common::peers::installed(
        &["/usr/bin/sysbench"],
        "apt-get install sysbench",
        "the table checks' comparison",
    )
}

#[test]
fn thinned_tables_run_and_smaller_ones_are_refused_on_sqlite() {
    let d = TempDir::new().unwrap();
    thinned_and_smaller(d.path(), &["--sqlite-db=del2.db"], false);
    // Without auto-increment the database keeps no record of the ids it held: a thinned
    // table cannot be told from a smaller one, and the line says so.
    let db = ["--sqlite-db=plain.db", "--auto-inc=off"];
    let o = run_in(
        d.path(),
        "plumb",
        &[&db[..], &["--table-size=100", "oltp_read_write", "prepare"]].concat(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run_in(
        d.path(),
        "plumb",
        &[&db[..], &["--table-size=10000", "oltp_read_write", "run"]].concat(),
    );
    refused(&o, 1, "keeps no record of ids it held before");
}

#[test]
fn thinned_tables_run_and_smaller_ones_are_refused_on_the_servers() {
    let peer = sysbench_installed();
    let d = TempDir::new().unwrap();
    if available("mysql") {
        mysql_fresh_db("qa_fix_checks_my");
        thinned_and_smaller(
            d.path(),
            &["--mysql-user=root", "--mysql-db=qa_fix_checks_my"],
            peer,
        );
        mysql("DROP DATABASE qa_fix_checks_my");
    }
    if available("pgsql") {
        pg_fresh_db("qa_fix_checks_pg");
        thinned_and_smaller(
            d.path(),
            &[
                "--db-driver=pgsql",
                "--pgsql-user=postgres",
                "--pgsql-host=127.0.0.1",
                "--pgsql-db=qa_fix_checks_pg",
            ],
            peer,
        );
        psql("postgres", "DROP DATABASE qa_fix_checks_pg");
    }
}

/// On an empty database the first missing table is named, not the last; and a run against a
/// SQLite file that is not there leaves no file behind.
#[test]
fn missing_tables_and_files() {
    let d = TempDir::new().unwrap();
    let o = run_in(
        d.path(),
        "plumb",
        &[
            "oltp_read_write",
            "--sqlite-db=empty.db",
            "--tables=3",
            "run",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("the SQLite database empty.db does not exist"),
        "{err}"
    );
    assert!(!d.path().join("empty.db").exists());
    // A file with some of the tables: the first one missing is named.
    let o = run_in(
        d.path(),
        "plumb",
        &[
            "oltp_read_write",
            "--sqlite-db=some.db",
            "--tables=1",
            "--table-size=100",
            "prepare",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run_in(
        d.path(),
        "plumb",
        &[
            "oltp_read_write",
            "--sqlite-db=some.db",
            "--tables=3",
            "--table-size=100",
            "run",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("sbtest2 cannot be read (no such table: sbtest2): prepare 3 tables first"),
        "{err}"
    );
    if available("mysql") {
        mysql_fresh_db("qa_fix_checks_empty");
        let o = run_in(
            d.path(),
            "plumb",
            &[
                "oltp_read_write",
                "--mysql-user=root",
                "--mysql-db=qa_fix_checks_empty",
                "--tables=3",
                "run",
            ],
        );
        let err = text(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("--tables: sbtest1 cannot be read ("), "{err}");
        mysql("DROP DATABASE qa_fix_checks_empty");
    }
}

/// sysbench reads `--mysql-ignore-errors` items with atoi() and never matches a word; under
/// plumb's name such an item is refused (the drop-in takes it, as sysbench: see
/// sysbench_dropin.rs). `--pgsql-ignore-errors` is plumb's own: SQLSTATEs or `all`.
#[test]
fn ignore_error_lists_that_name_no_error_are_refused() {
    let d = TempDir::new().unwrap();
    for (args, needle) in [
        (
            &["--mysql-ignore-errors=abc,12x"][..],
            "invalid value for --mysql-ignore-errors: 'abc'",
        ),
        (&["--mysql-ignore-errors=1213,12x"], "'12x'"),
        (
            &["--pgsql-ignore-errors=hello"],
            "invalid value for --pgsql-ignore-errors: 'hello'",
        ),
        (&["--pgsql-ignore-errors=40P01,4001"], "'4001'"),
    ] {
        let o = run_in(
            d.path(),
            "plumb",
            &[&["oltp_point_select"], args, &["run"]].concat(),
        );
        refused(&o, 2, needle);
    }
}

/// Each choice list is printed once.
#[test]
fn test_help_lists_each_choice_once() {
    let o = plumb().args(["oltp_read_write", "help"]).output().unwrap();
    let out = text(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.contains("--db-ps-mode"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(line.matches("{auto, disable}").count(), 1, "{line}");
}
