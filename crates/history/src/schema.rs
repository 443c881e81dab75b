//! The database's tables, versioned by SQLite's `user_version`. A new version is one more
//! entry in [`MIGRATIONS`]; a database from a newer plumb is refused, never rewritten.
//!
//! `runs` holds what the listing shows and filters on, so `plumb history` never reads a
//! record; the records live in their own table, out of the way of that scan.

use rusqlite::{Connection, TransactionBehavior};

/// Each version's statements, in order: index 0 takes an empty database to version 1.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at INTEGER NOT NULL,
    stored_at INTEGER NOT NULL,
    host TEXT NOT NULL,
    front_end TEXT NOT NULL,
    test TEXT NOT NULL,
    command_line TEXT NOT NULL,
    plumb_version TEXT NOT NULL,
    status TEXT NOT NULL,
    jobs INTEGER NOT NULL,
    threads INTEGER NOT NULL,
    duration_s REAL NOT NULL,
    events INTEGER NOT NULL,
    events_per_s REAL NOT NULL,
    latency_p95_ns INTEGER,
    findings_invalid INTEGER NOT NULL,
    findings_caution INTEGER NOT NULL,
    findings_info INTEGER NOT NULL,
    sweep_id INTEGER
);
CREATE INDEX runs_by_start ON runs (started_at, id);
CREATE INDEX runs_by_host ON runs (host, started_at);
CREATE INDEX runs_by_sweep ON runs (sweep_id) WHERE sweep_id IS NOT NULL;
-- The names --test matches: the test, the front end, each job's name and workload.
CREATE TABLE run_names (
    name TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    PRIMARY KEY (name, run_id)
) WITHOUT ROWID;
CREATE TABLE tags (
    name TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    PRIMARY KEY (name, run_id)
) WITHOUT ROWID;
CREATE INDEX tags_by_run ON tags (run_id, name);
CREATE TABLE baselines (
    name TEXT PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    set_at INTEGER NOT NULL
);
CREATE TABLE records (
    run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    encoding TEXT NOT NULL,
    json_bytes INTEGER NOT NULL,
    data BLOB NOT NULL
);
"#,
    r#"
-- plumb sweep: one row per sweep; its runs carry its id in runs.sweep_id, and each run's
-- point (the swept values as the plan file spells them) is in sweep_points.
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at INTEGER NOT NULL,
    plan TEXT NOT NULL
);
CREATE TABLE sweep_points (
    run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    point_index INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    point TEXT NOT NULL
);
"#,
    r#"
-- How a sweep ended, written when it ends: the points its plan has, and `completed` or the
-- line that says what stopped it. NULL while it runs, and for a sweep killed outright.
ALTER TABLE sweeps ADD COLUMN points_planned INTEGER;
ALTER TABLE sweeps ADD COLUMN ended TEXT;
"#,
];

/// The version this plumb writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// What the database was found at, when it is newer than this plumb.
pub struct Newer(pub i64);

/// Bring the database to [`VERSION`]. One immediate transaction, so two plumb processes
/// opening a new database at once do not both create it.
pub fn migrate(conn: &mut Connection) -> Result<Option<Newer>, rusqlite::Error> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current == VERSION {
        return Ok(None);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        return Ok(Some(Newer(current)));
    }
    for step in &MIGRATIONS[current.max(0) as usize..] {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "user_version", VERSION)?;
    tx.commit()?;
    Ok(None)
}
