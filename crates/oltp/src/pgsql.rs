//! PostgreSQL, on plumb's own blocking client ([`crate::pgwire`]: the extended protocol for
//! prepared statements, the simple one for plain queries; no libpq to match at run time).
//!
//! Statements are written with `?` like MySQL's and numbered `$1..$n` here. Parameters are
//! bound in the type PostgreSQL inferred for them (sysbench's integers land in INTEGER
//! columns, so an i64 is sent as int4 where the server asks for int4).
//!
//! Errors: SQLSTATEs in the ignore list (sysbench's fixed 40P01 deadlock, 23505 unique
//! violation, 40001 serialization failure by default; plumb lets the list be changed) are
//! ignorable; a lost connection reconnects when a connection-loss code (or `all`) is in the
//! list, where sysbench 1.0 crashes or stops.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::{
    ConnectCause, ConnectFailure, Connection, Dialect, Driver, DriverError, ErrorClass,
    IgnoreErrors, Outcome, ServerCounters, ServerSaid, StmtId, TxIntent, Value,
};
use crate::pgsql_tls::SslMode;
use crate::pgwire::{Conn, ConnectParams, Error, Prepared};
use crate::settings::{DatabaseSettings, ServerSettings};

/// SQLSTATEs of a lost connection: connection failure, connection does not exist, the
/// server ended the session (pg_terminate_backend, shutdown).
pub const LOST_CONNECTION: &[&str] = &["08006", "08003", "57P01", "57P02", "57P03"];

/// Where libpq looks for a server's socket when a host is not named (Debian's build).
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgsqlConfig {
    /// A host name or address, or a socket directory (a path starting with '/'); or, as
    /// libpq takes it, a comma-separated list of them, tried in order until one answers
    /// (an empty item is the default socket directory). The port serves every host.
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub database: String,
    pub ignore: IgnoreErrors,
    pub connect_timeout: Duration,
    /// libpq's `sslmode` for TCP connections (prefer, like libpq, unless told).
    pub sslmode: SslMode,
}

impl Default for PgsqlConfig {
    fn default() -> Self {
        PgsqlConfig {
            host: "localhost".into(),
            port: 5432,
            user: "sbtest".into(),
            password: String::new(),
            database: "sbtest".into(),
            ignore: IgnoreErrors::parse("40P01,23505,40001"),
            connect_timeout: Duration::from_secs(10),
            sslmode: SslMode::default(),
        }
    }
}

impl PgsqlConfig {
    /// The servers to try, in order: libpq's reading of the host list.
    pub fn hosts(&self) -> impl Iterator<Item = &str> {
        self.host
            .split(',')
            .map(|h| if h.is_empty() { DEFAULT_SOCKET_DIR } else { h })
    }

    /// Where and as whom a connection to `host` connects. application_name=plumb tells
    /// plumb's own backends apart in pg_stat_activity.
    fn connect_params<'a>(&'a self, host: &'a str) -> ConnectParams<'a> {
        ConnectParams {
            host,
            port: self.port,
            user: &self.user,
            password: &self.password,
            database: &self.database,
            application_name: "plumb",
            connect_timeout: self.connect_timeout,
        }
    }
}

/// How a host of the list names the server, for every connection that reached it.
#[derive(Debug)]
struct About {
    host: String,
    endpoint: String,
    local: bool,
}

impl About {
    fn of(host: &str, port: u16) -> About {
        let socket = host.starts_with('/');
        About {
            host: host.to_string(),
            endpoint: if socket {
                format!("socket {host}/.s.PGSQL.{port}")
            } else {
                format!("tcp {host}:{port}")
            },
            local: socket
                || host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|a| a.is_loopback()),
        }
    }

    fn socket(&self) -> bool {
        self.host.starts_with('/')
    }
}

pub struct PgsqlDriver {
    cfg: PgsqlConfig,
    /// Each host of the list, shared by every connection that reached it.
    hosts: Vec<Arc<About>>,
}

impl PgsqlDriver {
    pub fn new(cfg: PgsqlConfig) -> Self {
        let hosts = cfg
            .hosts()
            .map(|h| Arc::new(About::of(h, cfg.port)))
            .collect();
        PgsqlDriver { cfg, hosts }
    }

    pub fn config(&self) -> &PgsqlConfig {
        &self.cfg
    }

    /// A connection to the first host of the list that answers, as libpq's: a host that
    /// cannot be reached (no socket, refused, a name that does not resolve) passes the turn
    /// to the next; a server that refuses the login ends the attempt. Every failure is
    /// kept, in order, for the error.
    fn open(&self) -> Result<PgsqlConnection, DriverError> {
        let c = &self.cfg;
        let mut attempts = Vec::new();
        let mut said = Vec::new();
        let mut last = None;
        for about in &self.hosts {
            let params = c.connect_params(&about.host);
            match crate::pgsql_tls::connect(&params, c.sslmode, about.socket()) {
                Ok(conn) => {
                    return Ok(PgsqlConnection {
                        conn,
                        stmts: Vec::new(),
                        texts: Vec::new(),
                        ignore: c.ignore.clone(),
                        lost: false,
                        about: about.clone(),
                    });
                }
                Err(e) => {
                    let causes = match &e {
                        Error::Db(_) => vec![(ConnectCause::Server, None)],
                        Error::Connect(io) => ConnectCause::of_io(io),
                        _ => vec![(ConnectCause::Other, None)],
                    };
                    attempts.extend(causes.into_iter().map(|(cause, addr)| {
                        ConnectFailure {
                            socket: about
                                .socket()
                                .then(|| format!("{}/.s.PGSQL.{}", about.host, c.port)),
                            host: about.host.clone(),
                            port: c.port,
                            addr,
                            cause,
                        }
                    }));
                    said.push(format!("{}: {e}", about.endpoint));
                    let unreachable = matches!(e, Error::Connect(_));
                    last = Some(e);
                    if !unreachable {
                        break;
                    }
                }
            }
        }
        // The list is never empty: split() yields at least one host.
        let e = last.unwrap_or(Error::Closed);
        let mut d = classify(&e, &c.ignore).connecting(attempts);
        if d.class == ErrorClass::Ignorable {
            d.class = ErrorClass::Fatal;
        }
        d.message = format!("PostgreSQL at {}", said.join("; at "));
        Err(d)
    }
}

impl Driver for PgsqlDriver {
    fn name(&self) -> &'static str {
        "pgsql"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Pgsql
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(Box::new(self.open()?))
    }
    fn settings(&self) -> Option<DatabaseSettings> {
        self.open().ok()?.server_settings()
    }
    fn counters(&self) -> Option<ServerCounters> {
        self.open().ok()?.server_counters()
    }
}

fn classify(e: &Error, ignore: &IgnoreErrors) -> DriverError {
    let lost_class = if ignore.reconnects(LOST_CONNECTION) {
        ErrorClass::Reconnect
    } else {
        ErrorClass::Fatal
    };
    match e {
        Error::Db(db) => {
            let class = if LOST_CONNECTION.contains(&db.code.as_str()) {
                lost_class
            } else if ignore.covers(&db.code) {
                ErrorClass::Ignorable
            } else {
                ErrorClass::Fatal
            };
            DriverError::new(class, Some(db.code.clone()), db.to_string()).said(ServerSaid {
                state: db.code.clone(),
                severity: db.severity.clone(),
                message: db.message.clone(),
                position: db.position,
                ..ServerSaid::default()
            })
        }
        // A failed connect counts as a lost connection, so a reconnect that cannot connect
        // yet is tried again where the list allows it.
        Error::Io(_) | Error::Closed | Error::Connect(_) => DriverError::new(
            lost_class,
            Some("08006".into()),
            format!("connection lost (SQLSTATE 08006): {e}"),
        ),
        _ => DriverError::new(ErrorClass::Fatal, None, e.to_string()),
    }
}

/// `?` placeholders numbered as PostgreSQL wants them, outside quoted text.
pub fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    // Writing a number cannot fail.
    let _ = crate::driver::rewrite_placeholders(sql, &mut out, |o, n| {
        o.push('$');
        o.push_str(&(n + 1).to_string());
        Ok(())
    });
    out
}

pub struct PgsqlConnection {
    conn: Conn,
    stmts: Vec<Prepared>,
    /// Each prepared statement's text, for its refusal when executed.
    texts: Vec<String>,
    ignore: IgnoreErrors,
    lost: bool,
    about: Arc<About>,
}

impl PgsqlConnection {
    fn fail(&mut self, e: Error) -> DriverError {
        let d = classify(&e, &self.ignore);
        if e.is_lost()
            || d.code
                .as_deref()
                .is_some_and(|c| LOST_CONNECTION.contains(&c))
        {
            self.lost = true;
        }
        d
    }

    fn check_alive(&self) -> Result<(), DriverError> {
        if self.lost || self.conn.is_broken() {
            let class = if self.ignore.reconnects(LOST_CONNECTION) {
                ErrorClass::Reconnect
            } else {
                ErrorClass::Fatal
            };
            return Err(DriverError::new(
                class,
                Some("08003".into()),
                "the connection to the server is gone",
            ));
        }
        Ok(())
    }

    /// Runs the `index`-th prepared statement, or the unnamed one just parsed when none.
    fn run(
        &mut self,
        index: Option<usize>,
        unnamed: Option<&Prepared>,
        values: &[Value<'_>],
    ) -> Result<Outcome, DriverError> {
        let st = match (index, unnamed) {
            (Some(i), _) => self.stmts.get(i),
            (None, u) => u,
        };
        let Some(st) = st else {
            return Err(DriverError::new(
                ErrorClass::Fatal,
                None,
                "statement not prepared on this connection",
            ));
        };
        if st.param_count() != values.len() {
            return Err(DriverError::new(
                ErrorClass::Fatal,
                None,
                format!(
                    "statement takes {} parameters, {} given",
                    st.param_count(),
                    values.len()
                ),
            ));
        }
        let reads = st.returns_rows();
        match self.conn.execute(st, values) {
            Ok((rows, _)) if reads => Ok(Outcome::Rows(rows)),
            Ok((_, changed)) => Ok(Outcome::Changed(changed)),
            Err(e) => {
                let error = self.fail(e);
                Err(match index.and_then(|i| self.texts.get(i)) {
                    Some(text) => error.executed(text),
                    None => error,
                })
            }
        }
    }

    /// Simple-query protocol, as sysbench's plain queries go.
    fn simple(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        self.check_alive()?;
        let o = self
            .conn
            .simple(sql, |_| {})
            .map_err(|e| self.fail(e).sent(sql))?;
        Ok(if o.described || o.rows > 0 {
            Outcome::Rows(o.rows)
        } else {
            Outcome::Changed(o.changed)
        })
    }

    /// The first column of the first row, as text (None for no row or NULL).
    fn scalar(&mut self, sql: &str) -> Result<Option<String>, DriverError> {
        let mut first = None;
        self.conn
            .simple(sql, |r| {
                if first.is_none() {
                    first = Some(r.get(0).map(|b| String::from_utf8_lossy(b).into_owned()));
                }
            })
            .map_err(|e| self.fail(e))?;
        Ok(first.flatten())
    }

    /// The first row's first `columns` columns, as integers (0 for NULL).
    fn integers(&mut self, sql: &str, columns: usize) -> Result<Vec<i64>, DriverError> {
        let mut row = None;
        self.conn
            .simple(sql, |r| {
                if row.is_none() {
                    row = Some(
                        (0..columns)
                            .map(|i| {
                                r.get(i)
                                    .and_then(|b| std::str::from_utf8(b).ok()?.parse().ok())
                                    .unwrap_or(0)
                            })
                            .collect::<Vec<i64>>(),
                    );
                }
            })
            .map_err(|e| self.fail(e))?;
        row.ok_or_else(|| DriverError::new(ErrorClass::Fatal, None, "query returned no rows"))
    }
}

impl PgsqlConnection {
    /// A backend publishes its counts in pg_stat_database when it exits (or a second after
    /// its last publication): the clients' backends that are still leaving after a run
    /// would take their last second's rows with them. They publish before they leave
    /// pg_stat_activity, so the counters are read once no other plumb backend of this
    /// database is listed there (for two seconds at most: another plumb run may be busy
    /// on the same database).
    fn await_flushed_clients(&mut self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            let others = self.integers(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND application_name = 'plumb' AND pid <> pg_backend_pid()",
                1,
            );
            match others.as_deref() {
                Ok(&[n]) if n > 0 => std::thread::sleep(Duration::from_millis(10)),
                _ => return,
            }
        }
    }

    /// The server's settings, as `settings()` reports them.
    fn read_settings(&mut self) -> Result<ServerSettings, DriverError> {
        self.check_alive()?;
        let mut durability = std::collections::BTreeMap::new();
        for n in [
            "synchronous_commit",
            "fsync",
            "full_page_writes",
            "wal_sync_method",
        ] {
            if let Some(v) = self.scalar(&format!("SELECT current_setting('{n}')"))? {
                durability.insert(n.to_string(), v);
            }
        }
        // data_directory is readable by superusers and pg_read_all_settings only.
        let data_dir = if self.about.local {
            self.scalar("SELECT current_setting('data_directory', true)")
                .ok()
                .flatten()
        } else {
            None
        };
        Ok(ServerSettings {
            endpoint: self.about.endpoint.clone(),
            local: self.about.local,
            database: self
                .scalar("SELECT current_database()::text")?
                .unwrap_or_default(),
            version: self.scalar("SELECT version()")?.unwrap_or_default(),
            storage_engine: None,
            buffer_pool_bytes: self
                .scalar("SELECT pg_size_bytes(current_setting('shared_buffers'))::text")?
                .and_then(|v| v.parse().ok()),
            durability,
            data_dir,
            tls: self
                .scalar("SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl")?,
            data_set_bytes: self
                .scalar(
                    "SELECT sum(pg_total_relation_size(c.oid))::text FROM pg_class c \
                     JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE c.relkind = 'r' AND c.relname LIKE 'sbtest%' \
                     AND n.nspname = current_schema()",
                )?
                .and_then(|v| v.parse().ok()),
        })
    }

    /// The server's counters for this database now.
    fn read_counters(&mut self) -> Result<ServerCounters, DriverError> {
        self.check_alive()?;
        self.await_flushed_clients();
        let row = self.integers(
            "SELECT tup_fetched, tup_inserted, tup_updated, tup_deleted, blks_hit, blks_read \
             FROM pg_stat_database WHERE datname = current_database()",
            6,
        )?;
        let n = |i: usize| row[i].max(0) as u64;
        Ok(ServerCounters {
            rows_read: n(0),
            rows_inserted: n(1),
            rows_updated: n(2),
            rows_deleted: n(3),
            pool_requests: n(4) + n(5),
            pool_misses: n(5),
        })
    }
}

impl Connection for PgsqlConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DriverError> {
        self.check_alive()?;
        let text = number_placeholders(sql);
        let st = self
            .conn
            .prepare(&text)
            .map_err(|e| self.fail(e).sent(&text))?;
        self.stmts.push(st);
        self.texts.push(text);
        Ok(StmtId(self.stmts.len() - 1))
    }

    fn execute(&mut self, stmt: StmtId, values: &[Value<'_>]) -> Result<Outcome, DriverError> {
        self.check_alive()?;
        self.run(Some(stmt.0), None, values)
    }

    fn execute_plain(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Outcome, DriverError> {
        if values.is_empty() {
            return self.simple(sql);
        }
        self.check_alive()?;
        // The unnamed statement: the next one replaces it, nothing is left on the server.
        let text = number_placeholders(sql);
        let st = self
            .conn
            .prepare_as(String::new(), &text)
            .map_err(|e| self.fail(e).sent(&text))?;
        self.run(None, Some(&st), values)
    }

    fn column(&mut self, sql: &str, each: &mut dyn FnMut(&str)) -> Result<u64, DriverError> {
        self.check_alive()?;
        let o = self
            .conn
            .simple(sql, |r| match r.get(0) {
                Some(v) => each(&String::from_utf8_lossy(v)),
                None => each("NULL"),
            })
            .map_err(|e| self.fail(e))?;
        Ok(o.rows)
    }

    fn begin(&mut self, _intent: TxIntent) -> Result<(), DriverError> {
        self.simple("BEGIN").map(|_| ())
    }

    fn commit(&mut self) -> Result<(), DriverError> {
        self.simple("COMMIT").map(|_| ())
    }

    fn rollback(&mut self) -> Result<(), DriverError> {
        if self.lost || self.conn.is_broken() {
            return Ok(());
        }
        self.simple("ROLLBACK").map(|_| ())
    }

    fn server_settings(&mut self) -> Option<DatabaseSettings> {
        self.read_settings().ok().map(DatabaseSettings::Pgsql)
    }

    fn server_pid(&self) -> Option<u32> {
        self.conn.server_pid()
    }
    fn server_counters(&mut self) -> Option<ServerCounters> {
        self.read_counters().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            number_placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ? AND c <> '?'"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND c <> '?'"
        );
        assert_eq!(number_placeholders("BEGIN"), "BEGIN");
    }
}
