//! sysbench's OLTP tests on the embedded SQLite database, from the command line: prepare,
//! run, cleanup, the SQL statistics, script paths, option spellings and refusals.

mod common;

use std::path::Path;

use common::{figure, plumb};
use tempfile::TempDir;

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    plumb().args(args).current_dir(dir).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn read_write_prepares_runs_and_cleans_up_on_sqlite() {
    let d = TempDir::new().unwrap();
    let out = run(
        d.path(),
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=500",
            "--events=50",
            "--time=0",
            "prepare",
            "run",
            "cleanup",
        ],
    );
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for line in [
        "Creating table 'sbtest1'...",
        "Inserting 500 records into 'sbtest1'",
        "Creating a secondary index on 'sbtest2'...",
        "SQL statistics:\n    queries performed:\n",
        "Dropping table 'sbtest1'...",
        "Dropping table 'sbtest2'...",
    ] {
        assert!(report.contains(line), "{line}: {report}");
    }
    // 50 transactions of 10 point selects, 4 ranges, 2 updates, a delete and an insert,
    // BEGIN and COMMIT.
    assert_eq!(figure(&report, "transactions:"), 50);
    assert_eq!(figure(&report, "read:"), 50 * 14);
    assert_eq!(figure(&report, "write:"), 50 * 4);
    assert_eq!(figure(&report, "other:"), 50 * 2);
    assert_eq!(figure(&report, "total:"), 50 * 20);
    assert_eq!(figure(&report, "ignored errors:"), 0);
    assert!(d.path().join("sbtest.db").exists());
}

#[test]
fn script_paths_underscores_and_the_json_record() {
    let d = TempDir::new().unwrap();
    let db = d.path().join("x.db");
    let dbarg = format!("--sqlite-db={}", db.display());
    let out = run(
        d.path(),
        &[
            "/usr/share/sysbench/oltp_point_select.lua",
            &dbarg,
            "--table_size=200",
            "prepare",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(
        d.path(),
        &[
            "oltp_point_select",
            &dbarg,
            "--table_size=200",
            "--events=20",
            "--time=0",
            "--format=json",
            "run",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &doc["groups"][0]["jobs"][0];
    assert_eq!(job["test"], "oltp");
    assert_eq!(job["workload"]["test"], "oltp_point_select");
    assert_eq!(job["counters"]["reads"], 20);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/plumb.result.2.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let db = &job["workload"]["database"];
    assert_eq!(db["driver"], "sqlite");
    assert_eq!(db["journal_mode"], "wal");
}

#[test]
fn refusals_name_what_is_not_supported() {
    let d = TempDir::new().unwrap();
    for (args, want) in [
        (
            vec!["./tests/mine.lua", "run"],
            "plumb: custom Lua scripts are not supported yet: './tests/mine.lua'",
        ),
        (
            vec!["oltp_read_write", "--db-driver=pgsql", "--mysql-user=x", "run"],
            "plumb: --mysql-user is an option of the mysql driver, but this run uses --db-driver=pgsql",
        ),
        (
            vec!["oltp_read_write", "--mysql-debug", "run"],
            "plumb: --mysql-debug is not supported",
        ),
        (
            vec!["oltp_read_write", "--mysql-ssl-cipher=AES128-SHA", "run"],
            "plumb: --mysql-ssl-cipher is not supported",
        ),
        (
            vec!["oltp_read_write", "--no-such=1", "run"],
            "plumb: unknown option --no-such for the 'oltp_read_write' test",
        ),
    ] {
        let out = run(d.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with(want), "{args:?}: {err}");
    }
}

#[test]
fn writers_take_turns_on_sqlite() {
    // SQLite lets one connection write at a time; without turns one thread did nearly all
    // the transactions while the other waited out its busy back-off.
    let d = TempDir::new().unwrap();
    let out = run(
        d.path(),
        &["oltp_write_only", "--table-size=500", "prepare"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(
        d.path(),
        &[
            "oltp_write_only",
            "--table-size=500",
            "--threads=2",
            "--events=400",
            "--time=0",
            "--format=json",
            "run",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads = doc["groups"][0]["jobs"][0]["threads"]
        .as_array()
        .unwrap()
        .clone();
    let events: Vec<u64> = threads
        .iter()
        .map(|t| t["events"].as_u64().unwrap())
        .collect();
    assert_eq!(events.iter().sum::<u64>(), 400);
    // Turns taken in arrival order give each thread about half; without them one thread got
    // nearly all. A loaded machine can starve a thread for a while, hence a tenth.
    assert!(events.iter().all(|&e| e >= 40), "{events:?}");
    let ids = |doc: &serde_json::Value| -> Vec<String> {
        doc["groups"][0]["jobs"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        ids(&doc).contains(&"sqlite-one-writer".to_string()),
        "{doc}"
    );
    // One writer, or several readers, wait for no one.
    for (test, threads) in [("oltp_write_only", "1"), ("oltp_read_only", "2")] {
        let out = run(
            d.path(),
            &[
                test,
                "--table-size=500",
                &format!("--threads={threads}"),
                "--events=50",
                "--time=0",
                "--format=json",
                "run",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            !ids(&doc).contains(&"sqlite-one-writer".to_string()),
            "{test}"
        );
    }
}

#[test]
fn sysbench_0_5_syntax_runs_on_sqlite() {
    // Seed 004's shape (its server options aside): a 0.5 tree's oltp.lua and --oltp-* names.
    let d = TempDir::new().unwrap();
    let base = [
        "--test=./sysbench/tests/db/oltp.lua",
        "--oltp-tables-count=2",
        "--oltp-table-size=300",
    ];
    let out = run(d.path(), &[&base[..], &["prepare"]].concat());
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        report.contains("Inserting 300 records into 'sbtest2'"),
        "{report}"
    );
    let out = run(
        d.path(),
        &[
            &base[..],
            &[
                "--max-requests=20",
                "--max-time=0",
                "--num-threads=2",
                "run",
            ],
        ]
        .concat(),
    );
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(figure(&report, "transactions:"), 20);
    assert_eq!(figure(&report, "read:"), 20 * 14);
}

/// Writes outside a transaction (oltp_update_index and oltp_insert run one statement per
/// event, with no BEGIN) take the same turns: SQLite's busy handler alone let one thread do
/// thousands of events while another did one.
#[test]
fn autocommit_writers_take_turns_on_sqlite() {
    let d = TempDir::new().unwrap();
    let out = run(d.path(), &["oltp_insert", "--table-size=500", "prepare"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for test in ["oltp_update_index", "oltp_insert"] {
        let out = run(
            d.path(),
            &[
                test,
                "--table-size=500",
                "--threads=4",
                "--events=800",
                "--time=0",
                "--format=json",
                "run",
            ],
        );
        assert!(out.status.success(), "{test}: {}", text(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let events: Vec<u64> = doc["groups"][0]["jobs"][0]["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["events"].as_u64().unwrap())
            .collect();
        assert_eq!(events.iter().sum::<u64>(), 800, "{test}");
        // A fair share is 200 each; a loaded machine can hold a thread back a while.
        assert!(events.iter().all(|&e| e >= 40), "{test}: {events:?}");
    }
}

/// Cleanup gives the file's space back: dropped tables leave free pages, which VACUUM
/// returns to the filesystem.
#[test]
fn cleanup_gives_back_the_database_file_s_space() {
    let d = TempDir::new().unwrap();
    let args = ["oltp_read_only", "--tables=2", "--table-size=5000"];
    let out = run(d.path(), &[&args[..], &["prepare"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let db = d.path().join("sbtest.db");
    let full = std::fs::metadata(&db).unwrap().len();
    let out = run(d.path(), &[&args[..], &["cleanup"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = std::fs::metadata(&db).unwrap().len();
    assert!(full > 1 << 20 && after < full / 10, "{full} -> {after}");
}

/// cleanup and prewarm of a SQLite database that is not there: one line saying so, a failed
/// command, and no file made (an empty database would only have been dropped from).
#[test]
fn cleanup_and_prewarm_of_a_missing_database_fail_and_make_nothing() {
    let d = TempDir::new().unwrap();
    for cmd in ["cleanup", "prewarm"] {
        for threads in ["--threads=1", "--threads=2"] {
            let out = run(d.path(), &["oltp_read_write", threads, "--tables=2", cmd]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
            assert!(err.contains("sbtest.db does not exist"), "{cmd}: {err}");
            let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
            assert!(left.is_empty(), "{cmd} left {left:?}");
        }
    }
}

/// --skip-trx=on with several threads: each statement commits on its own, so two threads'
/// DELETE and INSERT of the same id interleave and an INSERT finds its id taken. The run
/// stops on SQLite's error, and its one line says why and what to change.
#[test]
fn a_skipped_transaction_s_duplicate_id_says_why() {
    let d = TempDir::new().unwrap();
    let size = ["oltp_read_write", "--table-size=10"];
    let prep = run(d.path(), &[&size[..], &["prepare"]].concat());
    assert!(prep.status.success(), "{}", text(&prep.stderr));
    let out = run(
        d.path(),
        &[
            &size[..],
            &["--skip-trx=on", "--threads=4", "--time=4", "run"],
        ]
        .concat(),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap_or_default();
    for needle in [
        "insert on sbtest",
        "UNIQUE constraint failed",
        "--skip-trx=on",
        "another of the 4 threads deleted and re-inserted the same id",
    ] {
        assert!(last.contains(needle), "{needle}: {err}");
    }
}

/// The ids a run deletes, as sysbench's special distribution draws them: by default 75% on
/// ids 498..=506 of 1 000 rows (sysbench's own formula: the window's first quarter never
/// comes up; the window's exact bounds are the unit tests'); with `--rand-spec-pct=10
/// --rand-spec-res=100` every draw on 450..=551; `--rand-pareto-h` moves pareto's mass.
#[test]
fn the_special_distribution_draws_the_ids_sysbench_draws() {
    let deleted = |extra: &[&str]| -> Vec<i64> {
        let d = TempDir::new().unwrap();
        let mut args = vec!["oltp_delete", "--table-size=1000", "prepare"];
        let o = run(d.path(), &args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        args = vec![
            "oltp_delete",
            "--table-size=1000",
            "--events=400",
            "--time=0",
        ];
        args.extend(extra);
        args.push("run");
        let o = run(d.path(), &args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        let db = rusqlite::Connection::open(d.path().join("sbtest.db")).unwrap();
        let present: std::collections::BTreeSet<i64> = db
            .prepare("SELECT id FROM sbtest1")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (1..=1000).filter(|id| !present.contains(id)).collect()
    };
    // Default shape: 300 of 400 draws on the 9 ids 498..=506, the rest spread thin.
    let gone = deleted(&[]);
    assert!((498..=506).all(|id| gone.contains(&id)), "{gone:?}");
    assert!(gone.len() < 120, "{}", gone.len());
    // All draws in the 10% window.
    let gone = deleted(&["--rand-spec-pct=10", "--rand-spec-res=100"]);
    assert!(gone.iter().all(|&id| (450..=551).contains(&id)), "{gone:?}");
    assert!(gone.len() > 90, "{}", gone.len());
    // --rand-pareto-h moves pareto's mass: h=0.05 leaves 5% of draws (~20) past the first
    // 5% of ids, h=0.2 (the default) a third (~130).
    let beyond = |extra: &[&str]| deleted(extra).iter().filter(|&&id| id > 50).count();
    let narrow = beyond(&["--rand-type=pareto", "--rand-pareto-h=0.05"]);
    let default = beyond(&["--rand-type=pareto"]);
    assert!(narrow < 40 && default > 80, "{narrow} {default}");
}

#[test]
fn the_shape_options_refuse_what_makes_no_distribution() {
    let d = TempDir::new().unwrap();
    for (bad, needle) in [
        ("--rand-spec-iter=0", "rand-spec-iter"),
        ("--rand-spec-pct=101", "rand-spec-pct"),
        ("--rand-spec-res=-1", "rand-spec-res"),
        ("--rand-pareto-h=1", "rand-pareto-h"),
        ("--rand-pareto-h=0", "rand-pareto-h"),
    ] {
        let o = run(d.path(), &["oltp_point_select", bad, "run"]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(err.contains(needle), "{bad}: {err}");
    }
}

/// A second prepare on the tables an earlier one left: SQLite's refusal, then what to do,
/// exit 1; the first prepare's tables still run.
#[test]
fn a_prepare_over_tables_already_there_says_what_to_do() {
    let d = TempDir::new().unwrap();
    let prepare = ["oltp_point_select", "--table-size=10", "prepare"];
    assert!(run(d.path(), &prepare).status.success());
    let o = run(d.path(), &prepare);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("plumb: CREATE TABLE sbtest1: table sbtest1 already exists"),
        "{err}"
    );
    assert!(
        err.ends_with(": the table is already there; if an earlier prepare made it, run 'plumb oltp_point_select cleanup' with the same options first, or run on the tables as they are\n"),
        "{err}"
    );
    let o = run(
        d.path(),
        &[
            "oltp_point_select",
            "--table-size=10",
            "--events=5",
            "--time=0",
            "run",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
}
