//! The history database: runs with their key figures and records, tags, baselines.
//!
//! Several plumb processes may use one database at once: it is in WAL mode (readers never
//! wait for a writer), every write is one short transaction, and a process that meets a lock
//! waits at most [`BUSY_TIMEOUT`] before giving up with an error (a run then warns and
//! goes on). `synchronous=NORMAL`: a commit does not wait for the disk (no fsync on the way
//! out of a benchmark); a power cut may lose the last runs stored, never the database.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plumb_pipeline::Record;
use rusqlite::config::DbConfig;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row, TransactionBehavior};

use crate::names::{check_name, RunRef};
use crate::summary::{self, FindingCounts, RunSummary};
use crate::{schema, HistoryError, Result};

pub const BUSY_TIMEOUT: Duration = Duration::from_secs(3);

/// How records are encoded in `records.data`.
const ENCODING: &str = "zstd+json";
/// zstd's level 1: the fastest of its regular levels, still about tenfold on a record.
const ZSTD_LEVEL: i32 = 1;

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Which runs `plumb history` lists (all conditions together).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// A test, front end, job name or workload (see [`summary::names`]).
    pub test: Option<String>,
    pub host: Option<String>,
    /// Started at or after (unix seconds).
    pub since: Option<u64>,
    /// Started before (unix seconds).
    pub until: Option<u64>,
    /// Runs carrying every one of these tags.
    pub tags: Vec<String>,
    /// Runs of this sweep.
    pub sweep: Option<i64>,
    /// At most this many, newest first.
    pub limit: Option<u64>,
}

/// Where a run of a sweep stands in it.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub sweep: i64,
    /// The point's number in the sweep, from 1.
    pub index: u32,
    /// Which repetition of the point, from 1.
    pub repeat: u32,
    /// The swept values, `name=value` separated by spaces.
    pub values: String,
}

/// A sweep as kept: its plan and its runs in the order they ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    pub id: i64,
    pub started_at_unix_s: u64,
    /// The plan file's text.
    pub plan: String,
    /// The points its plan has, once it ended.
    pub points_planned: Option<u32>,
    /// `completed`, or what stopped it; None while it runs or when it was killed outright.
    pub ended: Option<String>,
    /// Each run's id and point, by point then repeat.
    pub runs: Vec<(i64, SweepPoint)>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Baseline {
    pub name: String,
    pub run_id: i64,
    pub set_at_unix_s: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Store {
    /// The database of this environment (see [`crate::location`]), created if need be.
    pub fn open_default() -> Result<Store> {
        Store::open(&crate::location::database()?)
    }

    /// The database at `path`, created (with its directory) if need be.
    pub fn open(path: &Path) -> Result<Store> {
        crate::location::make_dir(path)?;
        let sql = |source| HistoryError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        // Setting WAL up on a new file and migrating it can meet another process doing the
        // same; SQLite then answers "busy" at once, without its busy handler (waiting would
        // deadlock), so the whole set-up is tried again within the same time budget.
        let deadline = Instant::now() + BUSY_TIMEOUT;
        let set = loop {
            match set_up(path) {
                Err(e) if is_busy(&e) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                other => break other.map_err(&sql)?,
            }
        };
        match set {
            Ok(conn) => Ok(Store {
                conn,
                path: path.to_path_buf(),
            }),
            Err(found) => Err(HistoryError::NewerSchema {
                path: path.to_path_buf(),
                found,
                known: schema::VERSION,
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A write transaction, and the error mapping for its statements. Immediate: the write
    /// lock is taken (or waited for) at the start, never upgraded from a read in the
    /// middle, which SQLite would refuse at once under contention.
    fn write(
        &mut self,
    ) -> Result<(
        rusqlite::Transaction<'_>,
        impl Fn(rusqlite::Error) -> HistoryError,
    )> {
        let path = self.path.clone();
        let sql = move |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&sql)?;
        Ok((tx, sql))
    }

    fn sql(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Keep `record` with `tags` (checked first); returns the run's id. The command line is
    /// masked again: a record from a file or an older plumb may carry a credential.
    pub fn add(&mut self, record: &Record, tags: &[String], sweep: Option<i64>) -> Result<i64> {
        for t in tags {
            check_name("tag", t).map_err(HistoryError::Name)?;
        }
        let masked = plumb_core::redact::args(&record.command_line);
        let record: Cow<Record> = if masked == record.command_line {
            Cow::Borrowed(record)
        } else {
            let mut r = record.clone();
            r.command_line = masked;
            Cow::Owned(r)
        };
        let json = serde_json::to_vec(&*record).map_err(|e| HistoryError::Encode(e.to_string()))?;
        let data = zstd::bulk::compress(&json, ZSTD_LEVEL)
            .map_err(|e| HistoryError::Encode(e.to_string()))?;
        let s = summary::of(&record);
        let names = summary::names(&record);
        let command_line = serde_json::to_string(&s.command_line)
            .map_err(|e| HistoryError::Encode(e.to_string()))?;
        let (tx, sql) = self.write()?;
        tx.execute(
            "INSERT INTO runs (started_at, stored_at, host, front_end, test, command_line,
                plumb_version, status, jobs, threads, duration_s, events, events_per_s,
                latency_p95_ns, findings_invalid, findings_caution, findings_info, sweep_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            params![
                s.started_at_unix_s as i64,
                now() as i64,
                s.host,
                s.front_end,
                s.test,
                command_line,
                s.plumb_version,
                s.status,
                s.jobs,
                s.threads,
                s.duration_s,
                s.events as i64,
                s.events_per_s,
                s.latency_p95_ns.map(|v| v as i64),
                s.findings.invalid,
                s.findings.caution,
                s.findings.info,
                sweep,
            ],
        )
        .map_err(&sql)?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO records (run_id, encoding, json_bytes, data) VALUES (?1, ?2, ?3, ?4)",
            params![id, ENCODING, json.len() as i64, data],
        )
        .map_err(&sql)?;
        {
            let mut name = tx
                .prepare_cached("INSERT OR IGNORE INTO run_names (name, run_id) VALUES (?1, ?2)")
                .map_err(&sql)?;
            for n in &names {
                name.execute(params![n, id]).map_err(&sql)?;
            }
            let mut tag = tx
                .prepare_cached("INSERT OR IGNORE INTO tags (name, run_id) VALUES (?1, ?2)")
                .map_err(&sql)?;
            for t in tags {
                tag.execute(params![t, id]).map_err(&sql)?;
            }
        }
        tx.commit().map_err(&sql)?;
        Ok(id)
    }

    /// A new sweep (its runs follow with [`Store::add_point`]); `plan` is the plan file's
    /// text, kept as the user wrote it.
    pub fn new_sweep(&mut self, started_at_unix_s: u64, plan: &str) -> Result<i64> {
        let (tx, sql) = self.write()?;
        tx.execute(
            "INSERT INTO sweeps (started_at, plan) VALUES (?1, ?2)",
            params![started_at_unix_s as i64, plan],
        )
        .map_err(&sql)?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(&sql)?;
        Ok(id)
    }

    /// How sweep `id` ended: the points its plan has, and `completed` or what stopped it.
    pub fn end_sweep(&mut self, id: i64, points_planned: u32, ended: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE sweeps SET points_planned = ?2, ended = ?3 WHERE id = ?1",
                params![id, points_planned, ended],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// Keep `record` as one run of a sweep, at `point`.
    pub fn add_point(
        &mut self,
        record: &Record,
        tags: &[String],
        point: &SweepPoint,
    ) -> Result<i64> {
        let id = self.add(record, tags, Some(point.sweep))?;
        self.conn
            .execute(
                "INSERT INTO sweep_points (run_id, point_index, repeat, point) VALUES (?1, ?2, ?3, ?4)",
                params![id, point.index, point.repeat, point.values],
            )
            .map_err(|e| self.sql(e))?;
        Ok(id)
    }

    /// Sweep `id`: its plan and its runs (their records are read with [`Store::record`]).
    pub fn sweep(&self, id: i64) -> Result<Sweep> {
        type Head = (i64, String, Option<u32>, Option<String>);
        let head: Option<Head> = self
            .conn
            .query_row(
                "SELECT started_at, plan, points_planned, ended FROM sweeps WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let (started, plan, points_planned, ended) = head.ok_or(HistoryError::NoSweep(id))?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT runs.id, sweep_points.point_index, sweep_points.repeat, sweep_points.point
                 FROM runs JOIN sweep_points ON sweep_points.run_id = runs.id
                 WHERE runs.sweep_id = ?1
                 ORDER BY sweep_points.point_index, sweep_points.repeat, runs.id",
            )
            .map_err(|e| self.sql(e))?;
        let runs = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    SweepPoint {
                        sweep: id,
                        index: r.get(1)?,
                        repeat: r.get(2)?,
                        values: r.get(3)?,
                    },
                ))
            })
            .map_err(|e| self.sql(e))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(Sweep {
            id,
            started_at_unix_s: started as u64,
            plan,
            points_planned,
            ended,
            runs,
        })
    }

    /// Runs matching `filter`, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunSummary>> {
        let (clause, args) = where_clause(filter);
        let limit = filter
            .limit
            .map_or(String::new(), |n| format!(" LIMIT {n}"));
        self.summaries(
            &format!("{clause} ORDER BY started_at DESC, id DESC{limit}"),
            params_from_iter(args.iter()),
        )
    }

    /// The runs `tail` (a WHERE clause and order) selects, as summaries.
    fn summaries(&self, tail: &str, args: impl rusqlite::Params) -> Result<Vec<RunSummary>> {
        let query = format!(
            "SELECT id, started_at, host, front_end, test, command_line, plumb_version, status,
                jobs, threads, duration_s, events, events_per_s, latency_p95_ns,
                findings_invalid, findings_caution, findings_info, sweep_id,
                (SELECT group_concat(name, char(10)) FROM tags WHERE run_id = runs.id),
                (SELECT point FROM sweep_points WHERE run_id = runs.id)
             FROM runs{tail}"
        );
        let mut stmt = self.conn.prepare(&query).map_err(|e| self.sql(e))?;
        let rows = stmt.query_map(args, summary_row).map_err(|e| self.sql(e))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(|e| self.sql(e))
    }

    /// How many runs match `filter` (its limit ignored).
    pub fn count(&self, filter: &Filter) -> Result<u64> {
        let (clause, args) = where_clause(filter);
        self.conn
            .query_row(
                &format!("SELECT count(*) FROM runs{clause}"),
                params_from_iter(args.iter()),
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| self.sql(e))
    }

    /// One run's key figures.
    pub fn summary(&self, id: i64) -> Result<RunSummary> {
        let mut found = self.summaries(" WHERE id = ?1", [id])?;
        found.pop().ok_or(HistoryError::NoRun(id))
    }

    /// The whole record of run `id`, as it was stored.
    pub fn record(&self, id: i64) -> Result<Record> {
        let row: Option<(String, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT encoding, data FROM records WHERE run_id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let (encoding, data) = row.ok_or(HistoryError::NoRun(id))?;
        let corrupt = |why: String| HistoryError::Corrupt { id, why };
        if encoding != ENCODING {
            return Err(corrupt(format!("unknown encoding '{encoding}'")));
        }
        let json = zstd::stream::decode_all(data.as_slice()).map_err(|e| corrupt(e.to_string()))?;
        let text = String::from_utf8(json).map_err(|e| corrupt(e.to_string()))?;
        Record::from_json(&text).map_err(|e| corrupt(e.to_string()))
    }

    /// The run `r` names (not a file: those are read by the caller).
    pub fn resolve(&self, r: &RunRef) -> Result<i64> {
        let found: Option<i64> = match r {
            RunRef::Id(id) => {
                return self.summary(*id).map(|s| s.id);
            }
            RunRef::Tag(t) => self
                .conn
                .query_row(
                    "SELECT runs.id FROM tags JOIN runs ON runs.id = tags.run_id
                     WHERE tags.name = ?1 ORDER BY runs.started_at DESC, runs.id DESC LIMIT 1",
                    [t],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| self.sql(e))?,
            RunRef::Baseline(b) => self
                .conn
                .query_row("SELECT run_id FROM baselines WHERE name = ?1", [b], |row| {
                    row.get(0)
                })
                .optional()
                .map_err(|e| self.sql(e))?,
            RunRef::File(p) => {
                return Err(HistoryError::Name(format!(
                    "{} is a file, not a run in the history",
                    p.display()
                )))
            }
        };
        found.ok_or_else(|| match r {
            RunRef::Tag(t) => HistoryError::NoTag(t.clone()),
            RunRef::Baseline(b) => HistoryError::NoBaseline(b.clone()),
            _ => unreachable!("ids and files returned above"),
        })
    }

    /// Label run `id` with `name`; false when it already carried it.
    pub fn tag(&mut self, id: i64, name: &str) -> Result<bool> {
        check_name("tag", name).map_err(HistoryError::Name)?;
        self.summary(id)?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO tags (name, run_id) VALUES (?1, ?2)",
                params![name, id],
            )
            .map(|n| n == 1)
            .map_err(|e| self.sql(e))
    }

    /// Point baseline `name` at run `id`; returns the run it pointed at before.
    pub fn set_baseline(&mut self, name: &str, id: i64) -> Result<Option<i64>> {
        check_name("baseline", name).map_err(HistoryError::Name)?;
        self.summary(id)?;
        let (tx, sql) = self.write()?;
        let before: Option<i64> = tx
            .query_row(
                "SELECT run_id FROM baselines WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map_err(&sql)?;
        tx.execute(
            "INSERT INTO baselines (name, run_id, set_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, set_at = excluded.set_at",
            params![name, id, now() as i64],
        )
        .map_err(&sql)?;
        tx.commit().map_err(&sql)?;
        Ok(before)
    }

    /// Every baseline, by name.
    pub fn baselines(&self) -> Result<Vec<Baseline>> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, run_id, set_at FROM baselines ORDER BY name")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Baseline {
                    name: r.get(0)?,
                    run_id: r.get(1)?,
                    set_at_unix_s: r.get::<_, i64>(2)? as u64,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(|e| self.sql(e))
    }
}

/// A connection set up and migrated; `Err(version)` inside when the file is from a newer
/// plumb.
fn set_up(path: &Path) -> rusqlite::Result<std::result::Result<Connection, i64>> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // journal_mode answers with the mode now in force: read it rather than execute.
    let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")?;
    // SQLite checkpoints the WAL into the database (with fsyncs) when the last connection
    // closes, which every plumb process is: that would cost each run a few fsyncs on the
    // way out. The WAL stays instead and is checkpointed when it grows past SQLite's 1000
    // pages.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    Ok(match schema::migrate(&mut conn)? {
        Some(schema::Newer(found)) => Err(found),
        None => Ok(conn),
    })
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The WHERE clause of `filter` and its parameters.
fn where_clause(f: &Filter) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut conds = Vec::new();
    let mut args = Vec::new();
    if let Some(t) = &f.test {
        args.push(Value::Text(t.clone()));
        conds.push(format!(
            "id IN (SELECT run_id FROM run_names WHERE name = ?{})",
            args.len()
        ));
    }
    if let Some(h) = &f.host {
        args.push(Value::Text(h.clone()));
        conds.push(format!("host = ?{}", args.len()));
    }
    if let Some(s) = f.since {
        args.push(Value::Integer(s as i64));
        conds.push(format!("started_at >= ?{}", args.len()));
    }
    if let Some(u) = f.until {
        args.push(Value::Integer(u as i64));
        conds.push(format!("started_at < ?{}", args.len()));
    }
    if let Some(s) = f.sweep {
        args.push(Value::Integer(s));
        conds.push(format!("sweep_id = ?{}", args.len()));
    }
    for t in &f.tags {
        args.push(Value::Text(t.clone()));
        conds.push(format!(
            "id IN (SELECT run_id FROM tags WHERE name = ?{})",
            args.len()
        ));
    }
    if conds.is_empty() {
        (String::new(), args)
    } else {
        (format!(" WHERE {}", conds.join(" AND ")), args)
    }
}

fn summary_row(r: &Row<'_>) -> rusqlite::Result<RunSummary> {
    let command_line: String = r.get(5)?;
    let tags: Option<String> = r.get(18)?;
    let mut tags: Vec<String> = tags
        .map(|t| t.split('\n').map(str::to_string).collect())
        .unwrap_or_default();
    tags.sort();
    Ok(RunSummary {
        id: r.get(0)?,
        started_at_unix_s: r.get::<_, i64>(1)? as u64,
        host: r.get(2)?,
        front_end: r.get(3)?,
        test: r.get(4)?,
        command_line: serde_json::from_str(&command_line).unwrap_or_default(),
        plumb_version: r.get(6)?,
        status: r.get(7)?,
        jobs: r.get(8)?,
        threads: r.get(9)?,
        duration_s: r.get(10)?,
        events: r.get::<_, i64>(11)? as u64,
        events_per_s: r.get(12)?,
        latency_p95_ns: r.get::<_, Option<i64>>(13)?.map(|v| v as u64),
        findings: FindingCounts {
            invalid: r.get(14)?,
            caution: r.get(15)?,
            info: r.get(16)?,
        },
        sweep_id: r.get(17)?,
        sweep_point: r.get(19)?,
        tags,
    })
}
