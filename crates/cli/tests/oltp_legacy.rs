//! sysbench 0.4/0.5 OLTP command lines (the reference's section 3): seed 004's lines under the
//! drop-in name, the legacy options that choose a test or map to 1.0's, and the ones refused.
//!
//! Debian's sysbench 1.0.20 lacks the oltp_legacy scripts the 0.5 lines need, so the
//! differential tests compare with sysbench 1.0 running the same intent in its own names
//! (reference 3.5: `--test=<path>/oltp.lua --oltp-tables-count=N` is
//! `oltp_read_write --tables=N`, with the 0.5 script's plural index message). Without the
//! peer or the servers the tests say so and pass, except under CI.

mod common;

use std::path::Path;

use common::peers::{installed, run_named, DropIn, Printed};
use common::{available, figure, mysql, mysql_fresh_db, plumb, shape, text};
use tempfile::TempDir;

const PEER: &str = "/usr/bin/sysbench";
const SOCKET: &str = "--mysql-socket=/var/run/mysqld/mysqld.sock";
/// sysbench 1.0.20's warning for --test, on stderr.
const TEST_WARNING: &str = "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.\n";

fn peer() -> bool {
    installed(
        &[PEER],
        "apt-get install sysbench",
        "the sysbench legacy comparison",
    )
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The banner names the program that ran; everything else must be equal.
fn unbannered(out: &str) -> String {
    out.lines()
        .map(|l| {
            if l.starts_with("sysbench 1.0.20 (") {
                "sysbench 1.0.20 (...)"
            } else {
                l
            }
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// (read, write, other, transactions) of a report.
fn counts(report: &str) -> [u64; 4] {
    ["read:", "write:", "other:", "transactions:"].map(|l| figure(report, l))
}

/// Seed 004's prepare, run and cleanup lines (scaled down: 2 tables of 1000 rows, a 2 s run
/// reporting every second, where the seed has 256 x 1,000,000 rows and an hour), run
/// unchanged under the drop-in name, print what sysbench 1.0.20 prints for their intent.
#[test]
fn seed_004_lines_run_under_the_sysbench_name() {
    if !peer() || !available("mysql") {
        return;
    }
    let (ours_db, theirs_db) = ("qa_fix_legacy_ours", "qa_fix_legacy_theirs");
    mysql_fresh_db(ours_db);
    mysql_fresh_db(theirs_db);
    let drop_in = DropIn::named("sysbench");
    let d = TempDir::new().unwrap();
    let legacy = |more: &[&str]| {
        let db = format!("--mysql-db={ours_db}");
        let mut a = owned(&[
            "--test=./sysbench/tests/db/oltp.lua",
            "--mysql-table-engine=innodb",
            "--oltp-tables-count=2",
            "--oltp-table-size=1000",
            "--mysql-user=root",
            SOCKET,
            &db,
        ]);
        a.extend(owned(more));
        a
    };
    // The same in sysbench 1.0's names; --test still names a script there (with the same
    // warning), and the 0.4/0.5 general options are its deprecated aliases.
    let current = |more: &[&str]| {
        let db = format!("--mysql-db={theirs_db}");
        let mut a = owned(&[
            "--test=oltp_read_write",
            "--mysql-storage-engine=innodb",
            "--tables=2",
            "--table-size=1000",
            "--mysql-user=root",
            SOCKET,
            &db,
        ]);
        a.extend(owned(more));
        a
    };
    let both = |more: &[&str]| -> (Printed, Printed) {
        (
            run_named(&drop_in.bin(), d.path(), &legacy(more)),
            run_named(Path::new(PEER), d.path(), &current(more)),
        )
    };

    let (ours, theirs) = both(&["prepare"]);
    assert_eq!(ours.code, 0, "{ours:?}");
    assert_eq!(theirs.code, 0, "{theirs:?}");
    assert_eq!(
        unbannered(&ours.stdout),
        unbannered(&theirs.stdout).replace(
            "Creating a secondary index on",
            "Creating secondary indexes on"
        )
    );
    assert!(ours
        .stdout
        .contains("Creating secondary indexes on 'sbtest2'..."));
    assert_eq!(ours.stderr, TEST_WARNING);
    assert_eq!(ours.stderr, theirs.stderr);
    assert_eq!(
        mysql(&format!("SELECT COUNT(*) FROM {ours_db}.sbtest2")).trim(),
        "1000"
    );

    // The seed's run: --max-time=3600 --max-requests=0 --num-threads=8 --report-interval=10.
    let run = [
        "--max-time=2",
        "--max-requests=0",
        "--num-threads=8",
        "--report-interval=1",
        "run",
    ];
    let (ours, theirs) = both(&run);
    assert_eq!(ours.code, 0, "{ours:?}");
    assert_eq!(ours.code, theirs.code);
    assert_eq!(ours.stderr, theirs.stderr);
    let split = |out: &str| -> (Vec<String>, Vec<String>) {
        unbannered(out)
            .lines()
            .map(shape)
            .partition(|l| l.starts_with("[ Ns ]"))
    };
    let (our_iv, our_rest) = split(&ours.stdout);
    let (their_iv, their_rest) = split(&theirs.stdout);
    assert_eq!(our_rest, their_rest, "{}\n{}", ours.stdout, theirs.stdout);
    // How many interval lines a 2 s run gets depends on timing; their shape does not.
    assert!(!our_iv.is_empty() && !their_iv.is_empty());
    assert!(our_iv.iter().all(|l| *l == their_iv[0]), "{our_iv:?}");
    assert!(
        ours.stdout.contains("[ 1s ] thds: 8 tps: "),
        "{}",
        ours.stdout
    );
    let [r, _, o, t] = counts(&ours.stdout);
    assert!(t > 0 && r >= 14 * t && o >= 2 * t, "{}", ours.stdout);

    let (ours, theirs) = both(&["cleanup"]);
    assert_eq!(ours.code, 0, "{ours:?}");
    assert_eq!(unbannered(&ours.stdout), unbannered(&theirs.stdout));
    assert_eq!(ours.stderr, theirs.stderr);
    mysql(&format!(
        "DROP DATABASE {ours_db}; DROP DATABASE {theirs_db}"
    ));
}

/// sysbench 1.0's own scripts refuse the 0.4/0.5 names, and 1.0 has no built-in `oltp`: the
/// drop-in says what sysbench says (these stop before any connection).
#[test]
fn the_dropin_keeps_sysbench_1_0_s_refusals() {
    if !peer() {
        return;
    }
    let drop_in = DropIn::named("sysbench");
    let d = TempDir::new().unwrap();
    for args in [
        &["oltp_read_write", "--oltp-table-size=1000", "run"][..],
        &["oltp_read_only", "--oltp-read-only=on", "run"],
        &["oltp_read_write", "--mysql-table-engine=innodb", "run"],
        &["--test=oltp", "--oltp-table-size=1000", "run"],
    ] {
        let ours = run_named(&drop_in.bin(), d.path(), args);
        let theirs = run_named(Path::new(PEER), d.path(), args);
        assert_eq!(ours.code, theirs.code, "{args:?}: {ours:?} {theirs:?}");
        assert_eq!(
            unbannered(&ours.stdout),
            unbannered(&theirs.stdout),
            "{args:?}"
        );
        assert_eq!(ours.stderr, theirs.stderr, "{args:?}");
    }
}

/// The 0.4/0.5 options that choose the transaction run sysbench 1.0's test of the
/// reference's mapping: with one thread, plumb's statement counts on the legacy line equal
/// sysbench's on the 1.0 test, on the same data.
#[test]
fn legacy_modes_run_the_tests_they_map_to() {
    if !peer() || !available("mysql") {
        return;
    }
    let db = "qa_fix_legacy_modes";
    mysql_fresh_db(db);
    let d = TempDir::new().unwrap();
    let server = owned(&["--mysql-user=root", &format!("--mysql-db={db}")]);
    let with = |more: &[&str]| [server.clone(), owned(more)].concat();
    let o = run_named(
        Path::new(PEER),
        d.path(),
        &with(&["oltp_read_write", "--table-size=1000", "prepare"]),
    );
    assert_eq!(o.code, 0, "{o:?}");
    let drop_in = DropIn::named("sysbench");
    let plumb_bin = assert_cmd::cargo::cargo_bin("plumb");
    let limits = ["--events=30", "--time=0", "run"];
    for (bin, legacy, test) in [
        (
            &drop_in.bin(),
            &[
                "--test=/x/sysbench/tests/db/oltp.lua",
                "--oltp-read-only=on",
            ][..],
            "oltp_read_only",
        ),
        (
            &plumb_bin,
            &["--test=./tests/db/oltp.lua", "--oltp-write-only=on"],
            "oltp_write_only",
        ),
        (
            &plumb_bin,
            &["--test=oltp", "--oltp-test-mode=simple"],
            "oltp_point_select",
        ),
        (
            &plumb_bin,
            &[
                "--test=oltp",
                "--oltp-test-mode=nontrx",
                "--oltp-nontrx-mode=update_key",
                "--oltp-dist-type=uniform",
                "--rand-init=on",
            ],
            "oltp_update_index",
        ),
    ] {
        let ours = run_named(
            bin,
            d.path(),
            &with(&[legacy, &["--oltp-table-size=1000"], &limits].concat()),
        );
        let theirs = run_named(
            Path::new(PEER),
            d.path(),
            &with(&[&[test, "--table-size=1000"][..], &limits].concat()),
        );
        assert_eq!(ours.code, 0, "{legacy:?}: {ours:?}");
        assert_eq!(
            counts(&ours.stdout),
            counts(&theirs.stdout),
            "{legacy:?} vs {test}"
        );
        if bin == &plumb_bin {
            // plumb's own warning names the command that runs the same test.
            assert!(
                ours.stderr.contains(&format!("(plumb {test} run)")),
                "{}",
                ours.stderr
            );
        }
    }
    mysql(&format!("DROP DATABASE {db}"));
}

/// Under plumb's name: the warnings name the command to use, the 0.5 script's prepare words
/// its index line as 0.5 did, and each legacy option that cannot be honoured is refused with
/// one line (SQLite, no server).
#[test]
fn legacy_lines_under_plumb_s_name() {
    let d = TempDir::new().unwrap();
    let o = plumb()
        .current_dir(d.path())
        .args([
            "--test=./sysbench/tests/db/oltp.lua",
            "--oltp-tables-count=2",
            "--oltp-table-size=100",
            "prepare",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("Creating secondary indexes on 'sbtest2'..."),
        "{out}"
    );
    assert_eq!(
        text(&o.stderr),
        "WARNING: the --test option is deprecated: name the test on the command line (plumb oltp_read_write prepare)\n"
    );
    // sysbench 1.0's names keep 1.0's message; 0.4's built-in test says what runs instead.
    let o = plumb()
        .current_dir(d.path())
        .args([
            "--test=oltp",
            "--sqlite-db=t04.db",
            "--oltp-table-size=100",
            "prepare",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("Creating a secondary index on 'sbtest1'..."));
    let err = text(&o.stderr);
    assert!(err.contains("(plumb oltp_read_write prepare)"), "{err}");
    assert!(
        err.contains("0.4's 'oltp' test runs as sysbench 1.0's oltp_read_write"),
        "{err}"
    );
    // 0.4/0.5's own limits: no time limit, 20 events.
    let o = plumb()
        .current_dir(d.path())
        .args([
            "--test=oltp",
            "--sqlite-db=t04.db",
            "--oltp-table-size=100",
            "--max-time=0",
            "--max-requests=20",
            "run",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(figure(&text(&o.stdout), "transactions:"), 20);

    let script = "--test=./sysbench/tests/db/oltp.lua";
    for (args, needle) in [
        (
            &[script, "--oltp-read-only=on", "--oltp-write-only=on"][..],
            "mutually exclusive",
        ),
        (&[script, "--rand-init=off"], "--rand-seed=N"),
        (
            &[script, "--rand-init=on", "--rand-seed=3"],
            "give one of them",
        ),
        (&[script, "--mysql-engine-trx=no"], "--skip-trx=on"),
        (
            &[script, "--mysql-engine-trx=maybe"],
            "allowed: yes, no, auto",
        ),
        (
            &[script, "--mysql-engine-trx=yes", "--db-driver=sqlite"],
            "option of the mysql driver",
        ),
        (&[script, "--oltp-read-only=maybe"], "allowed: on or off"),
        (&["--test=oltp", "--oltp-test-mode=sp"], "stored procedure"),
        (&["--test=oltp", "--oltp-test-mode=nontrx"], "SELECT pad"),
        (
            &["--test=oltp", "--oltp-nontrx-mode=delete"],
            "--oltp-test-mode=nontrx",
        ),
        (
            &["--test=oltp", "--oltp-test-mode=fast"],
            "allowed: complex, simple",
        ),
        (&["--test=oltp", "--oltp-table-name=t"], "--oltp-table-name"),
        // 0.4's shape options are 1.0's --rand-spec-*, checked as those.
        (&["--test=oltp", "--oltp-dist-pct=101"], "rand-spec-pct"),
        (&[script, "--myisam-max-rows=5"], "MAX_ROWS"),
        (&["oltp_read_write", "--oltp-read-only=on"], "name one test"),
    ] {
        let o = plumb()
            .current_dir(d.path())
            .args(args)
            .arg("run")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| !l.starts_with("WARNING")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        assert!(errors[0].contains(needle), "{args:?}: {err}");
        assert!(text(&o.stdout).is_empty(), "{args:?}");
    }
}
