//! MySQL and MariaDB, on plumb's own client ([`crate::mywire`]): pure Rust (no
//! libmysqlclient to match at run time), synchronous like sysbench's worker threads, binary
//! protocol for prepared statements, TLS through rustls.
//!
//! Errors are classed as sysbench 1.0 does: codes in the ignore list (1213 deadlock, 1020
//! record changed, 1205 lock wait timeout by default, or `all`) are ignorable; a lost
//! connection is reconnected when a connection-loss code is in that list, and fatal
//! otherwise. Unlike sysbench, a connection that is gone is never used again (sysbench
//! 1.0.20 crashes there).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::driver::{
    ConnectCause, ConnectFailure, Connection, Dialect, Driver, DriverError, ErrorClass,
    IgnoreErrors, Outcome, ServerCounters, ServerSaid, StmtId, TxIntent, Value,
};
use crate::mywire::{text_columns, Conn, ConnectOpts, Stmt, Target, WireError};
use crate::settings::{DatabaseSettings, ServerSettings};

/// Where a server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Socket(PathBuf),
    Tcp { host: String, port: u16 },
}

impl Endpoint {
    /// Whether the server is on this host.
    pub fn is_local(&self) -> bool {
        match self {
            Endpoint::Socket(_) => true,
            Endpoint::Tcp { host, .. } => {
                host == "localhost"
                    || host
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|a| a.is_loopback())
            }
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Socket(p) => write!(f, "socket {}", p.display()),
            Endpoint::Tcp { host, port } => write!(f, "tcp {host}:{port}"),
        }
    }
}

/// The socket Debian's MariaDB and MySQL listen on, which their clients use for `localhost`.
pub const DEFAULT_SOCKET: &str = "/var/run/mysqld/mysqld.sock";

/// The client error codes of a lost connection (CR_SERVER_GONE_ERROR, CR_SERVER_LOST,
/// CR_TCP_CONNECTION, CR_SERVER_LOST_EXTENDED): listed in the ignore list, they make a lost
/// connection a reconnect.
pub const LOST_CONNECTION: &[&str] = &["2006", "2013", "2011", "2055"];

/// libmysqlclient's and MariaDB Connector/C's `max_allowed_packet` (what the client sends
/// and accepts), 1 GiB, the largest the server allows too.
const CLIENT_MAX_ALLOWED_PACKET: usize = 1 << 30;

/// Server errors that mean this session is over: ER_CONNECTION_KILLED, ER_SERVER_SHUTDOWN.
const SESSION_ENDED: &[u16] = &[1927, 1053];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MysqlConfig {
    /// Connections take these in turn (sysbench's host and port lists).
    pub endpoints: Vec<Endpoint>,
    pub user: String,
    pub password: String,
    pub database: Option<String>,
    /// TLS, through rustls: required when on.
    pub ssl: bool,
    /// A CA certificate to verify the server with; without it the server's certificate is
    /// accepted as it is (what libmysqlclient does with `--ssl` and no CA).
    pub ssl_ca: Option<PathBuf>,
    /// With `ssl`, a server that offers no TLS is used in plain text, as MariaDB's client
    /// library does for sysbench and mysqlslap (their drop-ins); otherwise it is refused.
    pub ssl_optional: bool,
    pub compression: bool,
    pub ignore: IgnoreErrors,
    pub connect_timeout: Duration,
}

impl Default for MysqlConfig {
    fn default() -> Self {
        MysqlConfig {
            endpoints: vec![Endpoint::Socket(DEFAULT_SOCKET.into())],
            user: "sbtest".into(),
            password: String::new(),
            database: Some("sbtest".into()),
            ssl: false,
            ssl_ca: None,
            ssl_optional: false,
            compression: false,
            ignore: IgnoreErrors::parse("1213,1020,1205"),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

pub struct MysqlDriver {
    cfg: MysqlConfig,
    next: AtomicUsize,
    /// What the settings say of the server's address, shared by every connection.
    about: Arc<About>,
}

/// How the settings name the server: the first endpoint, as sysbench's report does.
#[derive(Debug)]
struct About {
    endpoint: String,
    local: bool,
    ssl: bool,
}

impl MysqlDriver {
    pub fn new(cfg: MysqlConfig) -> Self {
        let at = &cfg.endpoints[0];
        let about = Arc::new(About {
            endpoint: at.to_string(),
            local: at.is_local(),
            ssl: cfg.ssl,
        });
        MysqlDriver {
            cfg,
            next: AtomicUsize::new(0),
            about,
        }
    }

    pub fn config(&self) -> &MysqlConfig {
        &self.cfg
    }

    /// A client connection: each takes the next endpoint, as sysbench's do.
    fn open(&self) -> Result<MysqlConnection, DriverError> {
        let eps = &self.cfg.endpoints;
        self.open_at(&eps[self.next.fetch_add(1, Ordering::Relaxed) % eps.len().max(1)])
    }

    fn open_at(&self, at: &Endpoint) -> Result<MysqlConnection, DriverError> {
        let c = &self.cfg;
        let opts = ConnectOpts {
            target: match at {
                Endpoint::Socket(p) => Target::Socket(p),
                Endpoint::Tcp { host, port } => Target::Tcp(host, *port),
            },
            user: &c.user,
            password: &c.password,
            database: c.database.as_deref(),
            ssl: c.ssl,
            ssl_ca: c.ssl_ca.as_deref(),
            ssl_optional: c.ssl_optional,
            compression: c.compression,
            connect_timeout: c.connect_timeout,
            // The C client library's own limit (1 GiB; the server enforces its own).
            max_allowed_packet: CLIENT_MAX_ALLOWED_PACKET,
        };
        let conn = Conn::connect(&opts).map_err(|e| self.connect_error(at, e))?;
        Ok(MysqlConnection {
            conn,
            stmts: Vec::new(),
            sql: Vec::new(),
            ignore: self.cfg.ignore.clone(),
            lost: false,
            about: self.about.clone(),
        })
    }

    fn connect_error(&self, at: &Endpoint, e: WireError) -> DriverError {
        let message = format!("MySQL server at {at}: {e}");
        let causes = match &e {
            WireError::Server { .. } => vec![(ConnectCause::Server, None)],
            WireError::Io(io) => ConnectCause::of_io(io),
            _ => vec![(ConnectCause::Other, None)],
        };
        let (socket, host, port) = match at {
            Endpoint::Socket(p) => (Some(p.display().to_string()), "localhost", 3306),
            Endpoint::Tcp { host, port } => (None, host.as_str(), *port),
        };
        let attempts = causes
            .into_iter()
            .map(|(cause, addr)| ConnectFailure {
                socket: socket.clone(),
                host: host.to_string(),
                port,
                addr,
                cause,
            })
            .collect();
        let mut d = classify(e, &self.cfg.ignore).connecting(attempts);
        // An ignorable error cannot be retried without a connection; a server that is not
        // there is retried only when losing it is allowed (Reconnect).
        if d.class == ErrorClass::Ignorable {
            d.class = ErrorClass::Fatal;
        }
        d.message = message;
        d
    }
}

impl Driver for MysqlDriver {
    fn name(&self) -> &'static str {
        "mysql"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(Box::new(self.open()?))
    }
    fn observer(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(Box::new(self.open_at(&self.cfg.endpoints[0])?))
    }
    fn settings(&self) -> Option<DatabaseSettings> {
        self.observer().ok()?.server_settings()
    }
    fn counters(&self) -> Option<ServerCounters> {
        self.observer().ok()?.server_counters()
    }
}

/// Class a client failure: the server's code decides, a broken connection is a lost one.
fn classify(e: WireError, ignore: &IgnoreErrors) -> DriverError {
    let lost = |code: &str, message: String| {
        let class = if ignore.reconnects(LOST_CONNECTION) {
            ErrorClass::Reconnect
        } else {
            ErrorClass::Fatal
        };
        DriverError::new(class, Some(code.to_string()), message)
    };
    match e {
        WireError::Server {
            code,
            ref state,
            message: ref text,
        } => {
            let said = ServerSaid {
                state: state.clone(),
                message: text.clone(),
                ..ServerSaid::default()
            };
            let message = e.to_string();
            let code_text = code.to_string();
            let error = if SESSION_ENDED.contains(&code) {
                lost(&code_text, message)
            } else if ignore.covers(&code_text) {
                DriverError::new(ErrorClass::Ignorable, Some(code_text), message)
            } else {
                DriverError::new(ErrorClass::Fatal, Some(code_text), message)
            };
            error.said(said)
        }
        e if e.is_connectivity() => lost(
            "2013",
            format!("error 2013: lost connection to server ({e})"),
        ),
        e => DriverError::new(ErrorClass::Fatal, None, e.to_string()),
    }
}

pub struct MysqlConnection {
    conn: Conn,
    stmts: Vec<Stmt>,
    /// Each prepared statement's text, by `StmtId`, for the error a refused execution
    /// gives.
    sql: Vec<String>,
    ignore: IgnoreErrors,
    /// The connection broke: it is not used again.
    lost: bool,
    about: Arc<About>,
}

impl MysqlConnection {
    fn fail(&mut self, e: WireError) -> DriverError {
        let d = classify(e, &self.ignore);
        if d.class == ErrorClass::Reconnect
            || d.code
                .as_deref()
                .is_some_and(|c| LOST_CONNECTION.contains(&c))
        {
            self.lost = true;
        }
        d
    }

    fn check_alive(&self) -> Result<(), DriverError> {
        if self.lost {
            return Err(DriverError::new(
                if self.ignore.reconnects(LOST_CONNECTION) {
                    ErrorClass::Reconnect
                } else {
                    ErrorClass::Fatal
                },
                Some("2006".into()),
                "error 2006: the connection to the server is gone",
            ));
        }
        Ok(())
    }

    fn text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        self.check_alive()?;
        let r = self.conn.query(sql);
        r.map_err(|e| self.fail(e).sent(sql))
    }

    /// The first two columns of each row of `sql`, as text (a NULL as empty).
    fn pairs(&mut self, sql: &str) -> Result<Vec<(String, String)>, DriverError> {
        let mut rows = Vec::new();
        let r = self.conn.query_each(sql, &mut |row| {
            let mut cols = Vec::with_capacity(2);
            text_columns(row, |v| cols.push(v.map(lossy).unwrap_or_default()));
            let mut cols = cols.into_iter();
            rows.push((
                cols.next().unwrap_or_default(),
                cols.next().unwrap_or_default(),
            ));
        });
        r.map_err(|e| self.fail(e))?;
        Ok(rows)
    }

    /// Session or global variables by name, as text.
    fn variables(&mut self, names: &[&str]) -> Result<Vec<(String, String)>, DriverError> {
        let list = names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(",");
        let sql = format!("SHOW VARIABLES WHERE Variable_name IN ({list})");
        self.pairs(&sql)
    }

    /// The server's settings, as `settings()` reports them.
    fn read_settings(&mut self) -> Result<ServerSettings, DriverError> {
        self.check_alive()?;
        let vars = self.variables(&[
            "version",
            "version_comment",
            "default_storage_engine",
            "innodb_buffer_pool_size",
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "log_bin",
            "innodb_flush_method",
            "innodb_doublewrite",
            "datadir",
        ])?;
        let get = |n: &str| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let mut durability = std::collections::BTreeMap::new();
        for n in [
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "log_bin",
            "innodb_flush_method",
            "innodb_doublewrite",
        ] {
            if let Some(v) = get(n) {
                durability.insert(n.to_string(), v);
            }
        }
        // One round trip for the three.
        let mut first: Option<Vec<Option<String>>> = None;
        let r = self.conn.query_each(
            "SELECT DATABASE(), \
             (SELECT SUM(data_length + index_length) FROM information_schema.tables \
              WHERE table_schema = DATABASE() AND table_name LIKE 'sbtest%'), \
             (SELECT engine FROM information_schema.tables \
              WHERE table_schema = DATABASE() AND table_name = 'sbtest1')",
            &mut |row| {
                if first.is_none() {
                    let mut cols = Vec::new();
                    text_columns(row, |v| cols.push(v.map(lossy)));
                    first = Some(cols);
                }
            },
        );
        r.map_err(|e| self.fail(e))?;
        let mut cols = first.unwrap_or_default().into_iter();
        let mut next = || cols.next().flatten();
        let (database, size, engine) = (next().unwrap_or_default(), next(), next());
        // Asked only of TLS connections: a plain one has nothing to say and a round trip to
        // spare.
        let tls = if self.about.ssl {
            self.pairs("SHOW SESSION STATUS LIKE 'Ssl_version'")?
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .filter(|v| !v.is_empty())
        } else {
            None
        };
        Ok(ServerSettings {
            endpoint: self.about.endpoint.clone(),
            local: self.about.local,
            database,
            version: match get("version_comment") {
                Some(comment) => format!("{} ({comment})", get("version").unwrap_or_default()),
                None => get("version").unwrap_or_default(),
            },
            storage_engine: engine.or_else(|| get("default_storage_engine")),
            buffer_pool_bytes: get("innodb_buffer_pool_size").and_then(|v| v.parse().ok()),
            durability,
            data_dir: get("datadir").filter(|_| self.about.local),
            tls,
            data_set_bytes: size.and_then(|v| v.parse().ok()),
        })
    }

    /// The server's global counters now.
    fn read_counters(&mut self) -> Result<ServerCounters, DriverError> {
        // MySQL counts InnoDB's rows as Innodb_rows_*; MariaDB 10.6+ dropped those, and its
        // Rows_read and Handler_* count the same for all engines (internal temporary tables
        // apart, which have their own Handler_tmp_* counters).
        self.check_alive()?;
        let rows = self.pairs(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_rows_read', \
             'Innodb_rows_inserted', 'Innodb_rows_updated', 'Innodb_rows_deleted', \
             'Rows_read', 'Handler_write', 'Handler_update', 'Handler_delete', \
             'Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_reads')",
        )?;
        let get = |n: &str| {
            rows.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .and_then(|(_, v)| v.parse::<u64>().ok())
        };
        let either = |innodb: &str, general: &str| get(innodb).or(get(general)).unwrap_or(0);
        Ok(ServerCounters {
            rows_read: either("Innodb_rows_read", "Rows_read"),
            rows_inserted: either("Innodb_rows_inserted", "Handler_write"),
            rows_updated: either("Innodb_rows_updated", "Handler_update"),
            rows_deleted: either("Innodb_rows_deleted", "Handler_delete"),
            pool_requests: get("Innodb_buffer_pool_read_requests").unwrap_or(0),
            pool_misses: get("Innodb_buffer_pool_reads").unwrap_or(0),
        })
    }
}

impl Connection for MysqlConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DriverError> {
        self.check_alive()?;
        let st = self.conn.prepare(sql).map_err(|e| self.fail(e).sent(sql))?;
        self.stmts.push(st);
        self.sql.push(sql.to_string());
        Ok(StmtId(self.stmts.len() - 1))
    }

    fn execute(&mut self, stmt: StmtId, values: &[Value<'_>]) -> Result<Outcome, DriverError> {
        self.check_alive()?;
        let st = self.stmts.get_mut(stmt.0).ok_or_else(|| {
            DriverError::new(
                ErrorClass::Fatal,
                None,
                "statement not prepared on this connection",
            )
        })?;
        let r = self.conn.execute(st, values);
        r.map_err(|e| self.fail(e).executed(&self.sql[stmt.0]))
    }

    fn execute_plain(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Outcome, DriverError> {
        if values.is_empty() {
            return self.text(sql);
        }
        self.check_alive()?;
        // Prepared once and closed: a statement that is not closed stays on the server
        // until the connection ends.
        let mut st = self.conn.prepare(sql).map_err(|e| self.fail(e))?;
        let r = self.conn.execute(&mut st, values);
        let out = r.map_err(|e| self.fail(e))?;
        self.conn.close(st).map_err(|e| self.fail(e))?;
        Ok(out)
    }

    fn column(&mut self, sql: &str, each: &mut dyn FnMut(&str)) -> Result<u64, DriverError> {
        self.check_alive()?;
        let r = self.conn.query_each(sql, &mut |row| {
            let mut first = None;
            text_columns(row, |v| {
                if first.is_none() {
                    first = Some(v.map_or_else(|| "NULL".to_string(), lossy));
                }
            });
            each(first.as_deref().unwrap_or("NULL"));
        });
        match r.map_err(|e| self.fail(e))? {
            Outcome::Rows(n) => Ok(n),
            Outcome::Changed(_) => Ok(0),
        }
    }

    fn begin(&mut self, _intent: TxIntent) -> Result<(), DriverError> {
        self.text("BEGIN").map(|_| ())
    }

    fn commit(&mut self) -> Result<(), DriverError> {
        self.text("COMMIT").map(|_| ())
    }

    fn rollback(&mut self) -> Result<(), DriverError> {
        if self.lost {
            return Ok(());
        }
        self.text("ROLLBACK").map(|_| ())
    }

    fn server_settings(&mut self) -> Option<DatabaseSettings> {
        self.read_settings().ok().map(DatabaseSettings::Mysql)
    }

    fn server_pid(&self) -> Option<u32> {
        self.conn.server_pid()
    }
    fn server_counters(&mut self) -> Option<ServerCounters> {
        self.read_counters().ok()
    }
}

/// A column's bytes as text.
fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> WireError {
        WireError::Server {
            code,
            state: "40001".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn errors_are_classed_as_sysbench_classes_them() {
        let ignore = IgnoreErrors::parse("1213,2013");
        let d = classify(server(1213), &ignore);
        assert_eq!(d.class, ErrorClass::Ignorable);
        assert_eq!(d.code.as_deref(), Some("1213"));
        assert_eq!(d.message, "error 1213 (40001): m");
        assert_eq!(classify(server(1062), &ignore).class, ErrorClass::Fatal);
        // A killed session is a lost connection, reconnected when 2013 is ignored.
        let d = classify(server(1927), &ignore);
        assert_eq!(d.class, ErrorClass::Reconnect);
        assert_eq!(d.code.as_deref(), Some("1927"));
        let gone = || {
            WireError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ))
        };
        let d = classify(gone(), &ignore);
        assert_eq!(d.class, ErrorClass::Reconnect);
        assert_eq!(
            d.message,
            "error 2013: lost connection to server (the server closed the connection)"
        );
        let strict = IgnoreErrors::parse("1213");
        assert_eq!(classify(gone(), &strict).class, ErrorClass::Fatal);
        assert_eq!(classify(server(1927), &strict).class, ErrorClass::Fatal);
        let d = classify(WireError::Refused("no".into()), &ignore);
        assert_eq!((d.class, d.code), (ErrorClass::Fatal, None));
    }
}
