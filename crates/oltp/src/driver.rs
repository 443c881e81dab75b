//! The small interface every SQL driver implements (SQLite, MySQL/MariaDB, PostgreSQL).
//!
//! It holds exactly what the OLTP workloads need: connect, prepare, run prepared or plain
//! statements with parameters, count the rows a query returns (OLTP reads rows and discards
//! them), and transactions. Failures come classified, because the workload's reaction depends
//! only on the class: retry the transaction, reconnect, or stop.

use thiserror::Error;

/// One parameter bound to a statement. sysbench binds every integer as BIGINT and every
/// string as VARCHAR, so two types suffice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Text(&'a str),
}

/// What one statement did, as sysbench's SQL statistics classify it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It returned a result set (possibly empty) of this many rows.
    Rows(u64),
    /// It returned no result set and changed (or, per driver, matched) this many rows.
    Changed(u64),
}

/// sysbench's three query classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryClass {
    Read,
    Write,
    Other,
}

impl Outcome {
    /// A result set is a read; no result set and rows changed a write; anything else (BEGIN,
    /// COMMIT, DDL, an UPDATE or DELETE that matched nothing) other.
    pub fn class(self) -> QueryClass {
        match self {
            Outcome::Rows(_) => QueryClass::Read,
            Outcome::Changed(n) if n > 0 => QueryClass::Write,
            Outcome::Changed(_) => QueryClass::Other,
        }
    }
}

/// How the workload reacts to a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Deadlock, lock wait timeout, busy or locked database, serialization failure: roll back
    /// and run the transaction again.
    Ignorable,
    /// The connection is gone: connect again, prepare again, run the transaction again.
    Reconnect,
    /// Anything else: the worker stops.
    Fatal,
}

/// A failure, with the server's (or library's) own message.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{message}")]
pub struct DriverError {
    pub class: ErrorClass,
    /// The server's error code, when it has one (SQLite's extended result code, MySQL's
    /// error number, PostgreSQL's SQLSTATE).
    pub code: Option<String>,
    pub message: String,
    /// The server's error in the parts a client library prints (a front end that words
    /// errors as its peer's client does builds its lines from them); None when the error
    /// is not the server's, or the driver keeps no parts.
    pub said: Option<Box<ServerSaid>>,
    /// Why a connection could not be opened, part by part: every attempt, in the order
    /// made (libpq tries each host of a list, and each address of a name, before it gives
    /// up); empty for any other failure.
    pub connect: Vec<ConnectFailure>,
}

/// A connection that could not be opened, in the parts a client library words it from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectFailure {
    /// The Unix socket file the connection went to; None over TCP.
    pub socket: Option<String>,
    /// The host and port as configured (for a socket: the host the driver was given for
    /// it, or "localhost", and the port).
    pub host: String,
    pub port: u16,
    /// The address of `host` tried last; None for a socket or a name that did not resolve.
    pub addr: Option<std::net::IpAddr>,
    pub cause: ConnectCause,
}

/// What stopped a connection from opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectCause {
    /// The system refused the socket: its error number.
    Os(i32),
    /// The host name did not resolve: the resolver's words.
    Unresolved(String),
    /// The server refused the login: its code and words are the error's `code` and `said`.
    Server,
    /// Anything else (TLS, the protocol, the client's own checks).
    Other,
}

impl ConnectCause {
    /// The cause of a socket that could not be opened: one for each address tried, in
    /// order, with the address (None for a socket or a name that did not resolve).
    pub(crate) fn of_io(e: &std::io::Error) -> Vec<(ConnectCause, Option<std::net::IpAddr>)> {
        let os = |e: &std::io::Error| {
            e.raw_os_error()
                .map_or(ConnectCause::Other, ConnectCause::Os)
        };
        let payload = e.get_ref();
        if let Some(u) = payload.and_then(|p| p.downcast_ref::<crate::sock::Unresolved>()) {
            return vec![(
                ConnectCause::Unresolved(u.resolver_words().to_string()),
                None,
            )];
        }
        if let Some(t) = payload.and_then(|p| p.downcast_ref::<crate::sock::TcpFailed>()) {
            return t.tried.iter().map(|(a, e)| (os(e), Some(a.ip()))).collect();
        }
        vec![(os(e), None)]
    }
}

/// A server's error, part by part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerSaid {
    /// The SQLSTATE (MySQL sends one too).
    pub state: String,
    /// PostgreSQL's severity ("ERROR"); empty for MySQL.
    pub severity: String,
    /// The server's message alone: no code, state or severity around it.
    pub message: String,
    /// Where in `query` the server found the error (PostgreSQL: 1-based, in characters).
    pub position: Option<u32>,
    /// The statement as the driver sent it, when it went as text (a plain query, or one
    /// being prepared, with the driver's placeholders), or as it was prepared when
    /// `executed` says so.
    pub query: Option<String>,
    /// `query` is a statement prepared on the server earlier, refused when executed.
    pub executed: bool,
}

impl DriverError {
    pub fn new(class: ErrorClass, code: Option<String>, message: impl Into<String>) -> Self {
        DriverError {
            class,
            code,
            message: message.into(),
            said: None,
            connect: Vec::new(),
        }
    }

    /// With why the connection could not be opened: each attempt, in order.
    pub fn connecting(mut self, attempts: Vec<ConnectFailure>) -> Self {
        self.connect = attempts;
        self
    }

    /// Whether the database refused a row because its key is taken: MySQL's 1062,
    /// PostgreSQL's 23505, SQLite's primary key and unique constraints (1555, 2067).
    pub fn is_duplicate_key(&self) -> bool {
        matches!(
            self.code.as_deref(),
            Some("1062" | "23505" | "1555" | "2067")
        )
    }

    /// With the server's error in parts.
    pub fn said(mut self, said: ServerSaid) -> Self {
        self.said = Some(Box::new(said));
        self
    }

    /// With the prepared statement the server refused to execute (`sql`, as it was
    /// prepared), when the error is the server's.
    pub fn executed(mut self, sql: &str) -> Self {
        if let Some(s) = self.said.as_mut() {
            s.query = Some(sql.to_string());
            s.executed = true;
        }
        self
    }

    /// With the statement the server refused, as it was sent (`sql`), when the error is the
    /// server's. Only errors pay for the copy.
    pub fn sent(mut self, sql: &str) -> Self {
        if let Some(s) = self.said.as_mut() {
            s.query = Some(sql.to_string());
        }
        self
    }
}

/// A statement prepared on one connection; valid on that connection only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StmtId(pub usize);

/// What a transaction is going to do. Server drivers send a plain `BEGIN` either way; SQLite
/// takes the write lock up front for a writing transaction (see `sqlite.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxIntent {
    Read,
    Write,
}

/// The SQL a database speaks, where the OLTP schema and statements differ between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Sqlite,
    Mysql,
    Pgsql,
}

/// One open connection. Used by one thread at a time.
pub trait Connection: Send {
    /// Prepare `sql` (with `?` placeholders) for repeated execution on this connection.
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DriverError>;
    /// Run a prepared statement with `params` bound in order; a result set is read to the
    /// end and its rows counted.
    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, DriverError>;
    /// Run `sql` once, unprepared (sysbench's `con:query`).
    fn execute_plain(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Outcome, DriverError>;
    /// Run `sql` once, unprepared, and hand the first column of each row to `each` as text
    /// (NULL as `NULL`), for the few values a workload reads back (mysqlslap's keys).
    /// Returns the number of rows.
    fn column(&mut self, sql: &str, each: &mut dyn FnMut(&str)) -> Result<u64, DriverError>;
    fn begin(&mut self, intent: TxIntent) -> Result<(), DriverError>;
    fn commit(&mut self) -> Result<(), DriverError>;
    /// Roll back the open transaction; nothing happens when none is open (the server may
    /// already have rolled it back on a deadlock).
    fn rollback(&mut self) -> Result<(), DriverError>;
    /// The database's settings, read on this connection (none when the driver cannot
    /// tell): a caller that holds a connection reads them without opening another.
    fn server_settings(&mut self) -> Option<crate::settings::DatabaseSettings> {
        None
    }
    /// The server's activity counters now, read on this connection (none for an embedded
    /// database).
    fn server_counters(&mut self) -> Option<ServerCounters> {
        None
    }
    /// The local server process at the other end (over a Unix socket, or TCP to this
    /// host), whose work for plumb is not other load on the machine; None for a server on
    /// another host or out of this user's sight in /proc, and for an embedded database.
    /// Over TCP it scans /proc: ask once, not per statement.
    fn server_pid(&self) -> Option<u32> {
        None
    }
}

/// A way to reach one database.
pub trait Driver: Send + Sync {
    /// The driver's name as sysbench's `--db-driver` spells it ("sqlite", "pgsql", "mysql").
    fn name(&self) -> &'static str;
    fn dialect(&self) -> Dialect;
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError>;
    /// A connection for reading settings and counters around a run: to the server the
    /// report names, outside the rotation that gives each client connection its host and
    /// port (so the clients get the endpoints sysbench's would).
    fn observer(&self) -> Result<Box<dyn Connection>, DriverError> {
        self.connect()
    }
    /// The database's settings as a connection reads them back, for the record (none when
    /// the driver cannot tell, or the database cannot be reached). This opens a connection
    /// of its own: a caller that holds one asks [`Connection::server_settings`].
    fn settings(&self) -> Option<crate::settings::DatabaseSettings> {
        None
    }
    /// The server's activity counters now (none for an embedded database), on a connection
    /// of its own: a caller that holds one asks [`Connection::server_counters`].
    fn counters(&self) -> Option<ServerCounters> {
        None
    }
    /// Sends nothing anywhere (sysbench's `--mysql-dry-run`, [`crate::dry_run`]): there is
    /// no database to check the tables of before a run.
    fn dry_run(&self) -> bool {
        false
    }
}

/// Which server errors a run treats as ignorable (sysbench's `--mysql-ignore-errors`): roll
/// back, count, run the transaction again. Codes are the server's own (MySQL error numbers,
/// PostgreSQL SQLSTATEs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IgnoreErrors {
    All,
    Codes(Vec<String>),
}

impl IgnoreErrors {
    /// A comma-separated list as sysbench takes it: `all`, codes, or empty for none.
    pub fn parse(list: &str) -> Self {
        if list
            .split(',')
            .any(|c| c.trim().eq_ignore_ascii_case("all"))
        {
            return IgnoreErrors::All;
        }
        IgnoreErrors::Codes(
            list.split(',')
                .map(|c| c.trim().to_ascii_uppercase())
                .filter(|c| !c.is_empty())
                .collect(),
        )
    }

    pub fn covers(&self, code: &str) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(c) => c.iter().any(|x| x.eq_ignore_ascii_case(code)),
        }
    }

    /// Whether any of `lost` (a driver's codes for a lost connection) is covered: then a
    /// lost connection is reconnected rather than fatal, as sysbench does.
    pub fn reconnects(&self, lost: &[&str]) -> bool {
        lost.iter().any(|c| self.covers(c))
    }
}

/// What the server did during a run, from its own counters (differences of the global
/// counters read before and after, so other sessions' work is included).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerCounters {
    pub rows_read: u64,
    pub rows_inserted: u64,
    pub rows_updated: u64,
    pub rows_deleted: u64,
    /// Page (block) requests the buffer pool was asked for.
    pub pool_requests: u64,
    /// Requests the buffer pool could not serve from memory (read from disk or the OS cache).
    pub pool_misses: u64,
}

impl ServerCounters {
    pub fn since(&self, before: &ServerCounters) -> ServerCounters {
        ServerCounters {
            rows_read: self.rows_read.saturating_sub(before.rows_read),
            rows_inserted: self.rows_inserted.saturating_sub(before.rows_inserted),
            rows_updated: self.rows_updated.saturating_sub(before.rows_updated),
            rows_deleted: self.rows_deleted.saturating_sub(before.rows_deleted),
            pool_requests: self.pool_requests.saturating_sub(before.pool_requests),
            pool_misses: self.pool_misses.saturating_sub(before.pool_misses),
        }
    }

    /// The share of requests served from the buffer pool, when there were any.
    pub fn hit_ratio(&self) -> Option<f64> {
        (self.pool_requests > 0).then(|| {
            1.0 - self.pool_misses.min(self.pool_requests) as f64 / self.pool_requests as f64
        })
    }
}

/// Copy `sql` into `out`, letting `each` write what replaces the n-th `?` placeholder
/// (counted from 0) outside quoted text; returns how many there were.
pub fn rewrite_placeholders(
    sql: &str,
    out: &mut String,
    mut each: impl FnMut(&mut String, usize) -> Result<(), DriverError>,
) -> Result<usize, DriverError> {
    out.clear();
    let mut n = 0;
    let mut quote: Option<char> = None;
    for ch in sql.chars() {
        match (quote, ch) {
            (None, '\'' | '"') => quote = Some(ch),
            (Some(q), _) if ch == q => quote = None,
            (None, '?') => {
                each(out, n)?;
                n += 1;
                continue;
            }
            _ => {}
        }
        out.push(ch);
    }
    Ok(n)
}
