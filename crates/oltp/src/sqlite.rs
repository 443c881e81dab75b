//! The embedded SQLite driver, on rusqlite with its bundled SQLite (so a run does not depend on
//! the host's libsqlite3 and a machine without any database can run OLTP).
//!
//! One connection per worker thread, each with its own file handle. Defaults: WAL journal
//! (readers never block the writer, the usual choice for concurrent SQLite), SQLite's own
//! `synchronous`, page size and cache size unless given, a busy timeout so a connection waits
//! for the write lock instead of failing at once. SQLITE_BUSY and SQLITE_LOCKED are the
//! ignorable errors: they are SQLite's lock-wait timeout and its lost race for a write.
//!
//! Writing transactions start with `BEGIN IMMEDIATE` by default. A plain (deferred) `BEGIN`
//! takes the write lock only at the first write; in WAL mode, if another connection committed
//! since this transaction's first read, the upgrade fails at once with SQLITE_BUSY_SNAPSHOT
//! (the busy timeout cannot help), so oltp_read_write with several threads would mostly
//! measure retries. Read-only transactions keep the plain `BEGIN`, so readers run in
//! parallel.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::ffi::ErrorCode;
use rusqlite::{Connection as Raw, OpenFlags, Statement};

use crate::driver::{
    Connection, Dialect, Driver, DriverError, ErrorClass, Outcome, StmtId, TxIntent, Value,
};
use crate::error::{OltpError, Setting};
use crate::settings::SqliteSettings;

/// How to open the database file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    pub path: PathBuf,
    /// `PRAGMA journal_mode`: wal (the default), delete, truncate, persist, memory, off.
    pub journal_mode: String,
    /// `PRAGMA synchronous`: off, normal, full, extra; `None` keeps SQLite's default.
    pub synchronous: Option<String>,
    /// `PRAGMA page_size` in bytes, effective only when the file is created.
    pub page_size: Option<u32>,
    /// `PRAGMA cache_size` (pages when positive, KiB when negative, SQLite's convention).
    pub cache_size: Option<i64>,
    pub busy_timeout: Duration,
    /// Start writing transactions with `BEGIN IMMEDIATE` (see the module comment).
    pub immediate_writes: bool,
}

/// The busy timeout when none is given: as long as InnoDB's default lock wait, so a lock wait
/// gives up after as long on either.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(50);

impl SqliteOptions {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        SqliteOptions {
            path: path.into(),
            journal_mode: "wal".to_string(),
            synchronous: None,
            page_size: None,
            cache_size: None,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            immediate_writes: true,
        }
    }

    /// Refuse values SQLite would reject or silently ignore.
    pub fn check(&self) -> Result<(), OltpError> {
        const JOURNAL: &[&str] = &["wal", "delete", "truncate", "persist", "memory", "off"];
        if !JOURNAL.contains(&self.journal_mode.to_ascii_lowercase().as_str()) {
            return Err(OltpError::setting(
                Setting::JournalMode,
                format!(
                    "'{}' is not a journal mode (allowed: {})",
                    self.journal_mode,
                    JOURNAL.join(", ")
                ),
            ));
        }
        if let Some(s) = &self.synchronous {
            const SYNC: &[&str] = &["off", "normal", "full", "extra", "0", "1", "2", "3"];
            if !SYNC.contains(&s.to_ascii_lowercase().as_str()) {
                return Err(OltpError::setting(
                    Setting::Synchronous,
                    format!("'{s}' is not a synchronous level (allowed: off, normal, full, extra)"),
                ));
            }
        }
        if let Some(p) = self.page_size {
            if !(512..=65536).contains(&p) || !p.is_power_of_two() {
                return Err(OltpError::setting(
                    Setting::PageSize,
                    format!("{p} is not a power of two from 512 to 65536"),
                ));
            }
        }
        if self.busy_timeout.as_millis() > i32::MAX as u128 {
            return Err(OltpError::setting(
                Setting::BusyTimeout,
                format!("{:?} is longer than SQLite accepts", self.busy_timeout),
            ));
        }
        Ok(())
    }
}

pub struct SqliteDriver {
    opts: SqliteOptions,
    turns: std::sync::Arc<WriterTurns>,
}

/// Writers of one database take turns in the order they asked. SQLite lets one connection
/// write at a time and its busy handler is not fair: a thread that commits and begins again
/// at once keeps the lock while the others sleep out their back-off, so with several threads
/// one did nearly all the work. A ticket lock hands the write lock round in arrival order.
#[derive(Default)]
struct WriterTurns {
    /// (waiting tickets in arrival order, whether a writer holds the turn, next ticket)
    state: std::sync::Mutex<(std::collections::VecDeque<u64>, bool, u64)>,
    cv: std::sync::Condvar,
}

impl WriterTurns {
    /// Wait for this thread's turn, at most `patience` (as long as SQLite's busy timeout
    /// would have waited); false when it did not come.
    fn take(&self, patience: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + patience;
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let me = g.2;
        g.2 += 1;
        g.0.push_back(me);
        loop {
            if !g.1 && g.0.front() == Some(&me) {
                g.0.pop_front();
                g.1 = true;
                return true;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                g.0.retain(|&t| t != me);
                self.cv.notify_all();
                return false;
            }
            g = self
                .cv
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
    fn give(&self) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.1 = false;
        self.cv.notify_all();
    }
}

impl SqliteDriver {
    pub fn new(opts: SqliteOptions) -> Result<Self, OltpError> {
        opts.check()?;
        Ok(SqliteDriver {
            opts,
            turns: Default::default(),
        })
    }

    pub fn options(&self) -> &SqliteOptions {
        &self.opts
    }

    /// Open a connection; connections opened at the same moment may find the file locked
    /// while one of them switches its journal mode (SQLite answers that at once, without the
    /// busy timeout): try again until the busy timeout has passed.
    fn open(&self) -> Result<SqliteConnection, DriverError> {
        let give_up = std::time::Instant::now() + self.opts.busy_timeout;
        loop {
            match self.open_once() {
                Err(e)
                    if e.class == ErrorClass::Ignorable && std::time::Instant::now() < give_up =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                r => return r,
            }
        }
    }

    fn open_once(&self) -> Result<SqliteConnection, DriverError> {
        let raw = Raw::open_with_flags(
            &self.opts.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(classify)?;
        raw.busy_timeout(self.opts.busy_timeout).map_err(classify)?;
        // page_size first: it only takes effect before the file has pages, and switching
        // to WAL writes the header.
        if let Some(p) = self.opts.page_size {
            raw.pragma_update(None, "page_size", p).map_err(classify)?;
        }
        let mode: String = raw
            .pragma_update_and_check(None, "journal_mode", &self.opts.journal_mode, |r| r.get(0))
            .map_err(classify)?;
        if !mode.eq_ignore_ascii_case(&self.opts.journal_mode) {
            // SQLite answers with the mode it kept (memory databases cannot use WAL).
            return Err(DriverError::new(
                ErrorClass::Fatal,
                None,
                format!(
                    "SQLite kept journal_mode={mode} instead of {}",
                    self.opts.journal_mode
                ),
            ));
        }
        if let Some(s) = &self.opts.synchronous {
            raw.pragma_update(None, "synchronous", s)
                .map_err(classify)?;
        }
        if let Some(c) = self.opts.cache_size {
            raw.pragma_update(None, "cache_size", c).map_err(classify)?;
        }
        Ok(SqliteConnection {
            raw,
            sql: Vec::new(),
            immediate_writes: self.opts.immediate_writes,
            turns: self.turns.clone(),
            holding_turn: false,
            busy_timeout: self.opts.busy_timeout,
        })
    }

    /// What a connection actually runs with, read back from SQLite, for the report.
    pub fn settings(&self) -> Result<SqliteSettings, DriverError> {
        self.open()?.settings(&self.opts)
    }
}

impl Driver for SqliteDriver {
    fn name(&self) -> &'static str {
        "sqlite"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(Box::new(self.open()?))
    }
    /// A run opens its observer first: where the file is missing, opening it would leave
    /// an empty database behind for a run that cannot start.
    fn observer(&self) -> Result<Box<dyn Connection>, DriverError> {
        let path = &self.opts.path;
        if path.as_os_str() != ":memory:" && !path.exists() {
            return Err(DriverError::new(
                ErrorClass::Fatal,
                None,
                format!(
                    "the SQLite database {} does not exist: prepare creates it",
                    path.display()
                ),
            ));
        }
        self.connect()
    }
    fn settings(&self) -> Option<crate::settings::DatabaseSettings> {
        SqliteDriver::settings(self)
            .ok()
            .map(crate::settings::DatabaseSettings::Sqlite)
    }
}

/// One SQLite connection. Prepared statements live in rusqlite's per-connection statement
/// cache, keyed by their SQL: a `Statement` borrows its connection, so holding them beside
/// it would need unsafe code, while the cache keeps them compiled for the connection's life
/// at the cost of one hash lookup per execution.
pub struct SqliteConnection {
    raw: Raw,
    /// The SQL of each prepared statement, by `StmtId`.
    sql: Vec<String>,
    immediate_writes: bool,
    turns: std::sync::Arc<WriterTurns>,
    /// This connection's writing transaction holds the turn.
    holding_turn: bool,
    busy_timeout: std::time::Duration,
}

impl SqliteConnection {
    fn end_turn(&mut self) {
        if std::mem::take(&mut self.holding_turn) {
            self.turns.give();
        }
    }
}

impl Drop for SqliteConnection {
    fn drop(&mut self) {
        self.end_turn();
    }
}

/// BEGIN, BEGIN IMMEDIATE, COMMIT, ROLLBACK: cached beside the prepared statements.
const TX_STATEMENTS: usize = 4;

/// Map a rusqlite failure to its class, keeping SQLite's message and extended code.
fn classify(e: rusqlite::Error) -> DriverError {
    let code = e.sqlite_error().map(|f| f.extended_code.to_string());
    let class = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => ErrorClass::Ignorable,
        _ => ErrorClass::Fatal,
    };
    DriverError::new(class, code, e.to_string())
}

fn run(raw: &Raw, st: &mut Statement<'_>, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
    if st.parameter_count() != params.len() {
        return Err(DriverError::new(
            ErrorClass::Fatal,
            None,
            format!(
                "statement takes {} parameters, {} given",
                st.parameter_count(),
                params.len()
            ),
        ));
    }
    for (i, p) in params.iter().enumerate() {
        match *p {
            Value::Int(v) => st.raw_bind_parameter(i + 1, v),
            Value::Text(s) => st.raw_bind_parameter(i + 1, s),
        }
        .map_err(classify)?;
    }
    if st.column_count() > 0 {
        let mut rows = st.raw_query();
        let mut n = 0u64;
        while rows.next().map_err(classify)?.is_some() {
            n += 1;
        }
        Ok(Outcome::Rows(n))
    } else {
        // sqlite3_changes() keeps the count of the last INSERT/UPDATE/DELETE, also across a
        // BEGIN or DDL in between; the difference of the running total is this statement's.
        let before = raw.total_changes();
        st.raw_execute().map_err(classify)?;
        Ok(Outcome::Changed(raw.total_changes() - before))
    }
}

impl SqliteConnection {
    fn simple(&mut self, sql: &str) -> Result<(), DriverError> {
        let mut st = self.raw.prepare_cached(sql).map_err(classify)?;
        st.raw_execute().map_err(classify)?;
        Ok(())
    }

    /// The settings this connection runs with, as SQLite reports them.
    pub fn settings(&self, opts: &SqliteOptions) -> Result<SqliteSettings, DriverError> {
        let q = |name: &str| -> Result<i64, DriverError> {
            self.raw
                .pragma_query_value(None, name, |r| r.get(0))
                .map_err(classify)
        };
        let journal_mode: String = self
            .raw
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(classify)?;
        let synchronous = match q("synchronous")? {
            0 => "off",
            1 => "normal",
            2 => "full",
            3 => "extra",
            _ => "unknown",
        };
        Ok(SqliteSettings {
            path: opts.path.display().to_string(),
            sqlite_version: rusqlite::version().to_string(),
            journal_mode,
            synchronous: synchronous.to_string(),
            page_size_bytes: q("page_size")? as u64,
            cache_size: q("cache_size")?,
            busy_timeout_ms: opts.busy_timeout.as_millis() as u64,
            begin_for_writes: if opts.immediate_writes {
                "BEGIN IMMEDIATE".to_string()
            } else {
                "BEGIN".to_string()
            },
        })
    }
}

/// The writers' turn did not come within the busy timeout: SQLite's own SQLITE_BUSY, the
/// ignorable lock-wait timeout.
fn turn_not_given() -> DriverError {
    DriverError::new(
        ErrorClass::Ignorable,
        Some("5".into()),
        "database is locked (another connection kept the write turn past the busy timeout)",
    )
}

/// Run `st`; a write outside a transaction (oltp_update_index, oltp_insert, --skip-trx)
/// takes the writers' turn for itself, as a writing transaction does: without it SQLite's
/// busy handler let one thread write again and again while others slept (per-thread events
/// 5375 and 1 with 8 threads, 2 s stalls).
fn in_turn(
    c: &SqliteConnection,
    st: &mut Statement<'_>,
    params: &[Value<'_>],
) -> Result<Outcome, DriverError> {
    if !c.immediate_writes || c.holding_turn || !c.raw.is_autocommit() || st.readonly() {
        return run(&c.raw, st, params);
    }
    if !c.turns.take(c.busy_timeout) {
        return Err(turn_not_given());
    }
    let r = run(&c.raw, st, params);
    c.turns.give();
    r
}

impl Connection for SqliteConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DriverError> {
        // The cache must hold every prepared statement (and the transaction statements), or
        // they would be compiled again.
        self.raw
            .set_prepared_statement_cache_capacity(self.sql.len() + 1 + TX_STATEMENTS);
        // Compile now, so a bad statement fails before the run rather than in it.
        self.raw.prepare_cached(sql).map_err(classify)?;
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        let sql = self.sql.get(stmt.0).ok_or_else(|| {
            DriverError::new(
                ErrorClass::Fatal,
                None,
                "statement not prepared on this connection",
            )
        })?;
        let mut st = self.raw.prepare_cached(sql).map_err(classify)?;
        in_turn(self, &mut st, params)
    }

    fn execute_plain(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        let mut st = self.raw.prepare(sql).map_err(classify)?;
        in_turn(self, &mut st, params)
    }

    fn column(&mut self, sql: &str, each: &mut dyn FnMut(&str)) -> Result<u64, DriverError> {
        use rusqlite::types::ValueRef;
        let mut st = self.raw.prepare(sql).map_err(classify)?;
        let mut rows = st.raw_query();
        let (mut n, mut text) = (0u64, String::new());
        while let Some(r) = rows.next().map_err(classify)? {
            text.clear();
            match r.get_ref(0).map_err(classify)? {
                ValueRef::Null => text.push_str("NULL"),
                ValueRef::Integer(i) => text.push_str(&i.to_string()),
                ValueRef::Real(f) => text.push_str(&f.to_string()),
                ValueRef::Text(t) | ValueRef::Blob(t) => text.push_str(&String::from_utf8_lossy(t)),
            }
            each(&text);
            n += 1;
        }
        Ok(n)
    }

    fn begin(&mut self, intent: TxIntent) -> Result<(), DriverError> {
        if intent == TxIntent::Write && self.immediate_writes {
            if !self.holding_turn {
                if !self.turns.take(self.busy_timeout) {
                    return Err(turn_not_given());
                }
                self.holding_turn = true;
            }
            let r = self.simple("BEGIN IMMEDIATE");
            if r.is_err() {
                self.end_turn();
            }
            r
        } else {
            self.simple("BEGIN")
        }
    }

    fn commit(&mut self) -> Result<(), DriverError> {
        let r = self.simple("COMMIT");
        if self.raw.is_autocommit() {
            self.end_turn();
        }
        r
    }

    fn rollback(&mut self) -> Result<(), DriverError> {
        if self.raw.is_autocommit() {
            self.end_turn();
            return Ok(());
        }
        let r = self.simple("ROLLBACK");
        self.end_turn();
        r
    }
}
