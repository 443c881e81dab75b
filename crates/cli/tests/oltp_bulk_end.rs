//! bulk_insert under plumb's own name, when its last flush (after the run) finds the ids
//! taken: one attempt, not 100 (a taken id stays taken however often the rows are sent),
//! no ignored errors counted for it, the report printed, and one line saying it was the
//! end of the run's flush that failed; exit 1. (The sysbench drop-in ends as sysbench does:
//! sysbench_dropin.rs, `a_bulk_insert_whose_ids_are_taken_ends_as_sysbench_s`.)

mod common;

use common::{available, figure, pg_fresh_db, plumb, psql, text};
use tempfile::TempDir;

#[test]
fn a_taken_id_at_the_last_flush_is_not_retried() {
    if !available("pgsql") {
        return;
    }
    let db = "plumb_h4_bulk_end";
    pg_fresh_db(db);
    let d = TempDir::new().unwrap();
    let dbarg = format!("--pgsql-db={db}");
    let run = |cmd: &[&str]| {
        plumb()
            .args([
                "bulk_insert",
                "--db-driver=pgsql",
                "--pgsql-user=postgres",
                "--pgsql-host=/var/run/postgresql",
                &dbarg,
            ])
            .args(cmd)
            .current_dir(d.path())
            .output()
            .unwrap()
    };
    assert!(run(&["prepare"]).status.success());
    let first = run(&["--events=10", "run"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    // PostgreSQL's 23505 is an error the run ignores and retries; here it cannot help.
    let second = run(&["--events=10", "run"]);
    let (out, err) = (text(&second.stdout), text(&second.stderr));
    assert_eq!(second.status.code(), Some(1), "{out}{err}");
    assert_eq!(figure(&out, "transactions:"), 10, "{out}");
    assert_eq!(figure(&out, "ignored errors:"), 0, "{out}");
    assert_eq!(figure(&out, "write:"), 0, "{out}");
    let last = err.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "plumb: at the end of the run: bulk insert on sbtest1: ERROR: duplicate key value violates unique constraint \"sbtest1_pkey\" (SQLSTATE 23505)",
        "{err}"
    );
    assert_eq!(err.matches("plumb: ").count(), 1, "{err}");
    assert_eq!(psql(db, "SELECT COUNT(*) FROM sbtest1"), "10\n");
    psql("postgres", &format!("DROP DATABASE {db}"));
}
