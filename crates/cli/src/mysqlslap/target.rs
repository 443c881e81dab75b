//! Which database a run talks to and how: MySQL/MariaDB by default (mysqlslap's own
//! connection options), or, as plumb's extension `--plumb-db`, SQLite or PostgreSQL.

use std::path::PathBuf;
use std::sync::Arc;

use plumb_oltp::driver::{Dialect, Driver, IgnoreErrors};
use plumb_oltp::mysql::{Endpoint, MysqlConfig, MysqlDriver, DEFAULT_SOCKET};
use plumb_oltp::pgsql::{PgsqlConfig, PgsqlDriver};
use plumb_oltp::sqlite::{SqliteDriver, SqliteOptions};

/// `--plumb-db`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Mysql,
    /// The database file (by default `<schema>.sqlite` in the current directory).
    Sqlite(Option<PathBuf>),
    /// The database to connect to.
    Pgsql(Option<String>),
}

impl Target {
    pub fn parse(v: &str) -> Result<Target, String> {
        let (kind, arg) = match v.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (v, None),
        };
        let arg = arg.filter(|a| !a.is_empty());
        match kind {
            "mysql" if arg.is_none() => Ok(Target::Mysql),
            "sqlite" => Ok(Target::Sqlite(arg.map(PathBuf::from))),
            "pgsql" => Ok(Target::Pgsql(arg.map(str::to_string))),
            _ => Err(format!(
                "--plumb-db takes mysql, sqlite[:FILE] or pgsql[:DATABASE], not '{v}'"
            )),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Mysql => Dialect::Mysql,
            Target::Sqlite(_) => Dialect::Sqlite,
            Target::Pgsql(_) => Dialect::Pgsql,
        }
    }
}

/// mysqlslap's connection options as given.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub socket: Option<PathBuf>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub protocol: Option<String>,
    pub ssl: bool,
    pub ssl_ca: Option<PathBuf>,
    /// `--ssl` against a server without TLS goes on in plain text, as mariadb-slap's client
    /// library does: the drop-in. plumb's own mode refuses it (TLS asked for is TLS got).
    pub ssl_optional: bool,
    pub compress: bool,
    /// The connection options given, by name, for refusing them where they mean nothing.
    pub given: Vec<&'static str>,
}

/// The drivers of a run: the main connection's (no schema) and the clients' (connected to
/// the schema; the primary keys are read through it too).
pub struct Drivers {
    pub main: Arc<dyn Driver>,
    pub clients: Arc<dyn Driver>,
}

/// Build the drivers for `target`.
pub fn drivers(target: &Target, c: &ConnectOptions, schema: &str) -> Result<Drivers, String> {
    match target {
        Target::Sqlite(path) => {
            if let Some(o) = c.given.first() {
                return Err(format!(
                    "--{o} is a connection option; SQLite (--plumb-db=sqlite) has none"
                ));
            }
            let path = path
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{schema}.sqlite")));
            let d: Arc<dyn Driver> =
                Arc::new(SqliteDriver::new(SqliteOptions::new(&path)).map_err(|e| e.to_string())?);
            Ok(Drivers {
                main: d.clone(),
                clients: d,
            })
        }
        Target::Mysql => {
            let main = mysql_config(c);
            let mut clients = main.clone();
            clients.database = Some(schema.to_string());
            Ok(Drivers {
                main: Arc::new(MysqlDriver::new(main)),
                clients: Arc::new(MysqlDriver::new(clients)),
            })
        }
        Target::Pgsql(database) => {
            for o in ["protocol", "ssl", "ssl-ca", "compress"] {
                if c.given.contains(&o) {
                    return Err(format!(
                        "--{o} is a MySQL connection option; PostgreSQL (--plumb-db=pgsql) takes -h, -P, -S, -u and -p"
                    ));
                }
            }
            let cfg = PgsqlConfig {
                host: match (&c.socket, &c.host) {
                    (Some(dir), _) => dir.display().to_string(),
                    (None, Some(h)) => h.clone(),
                    (None, None) => PG_SOCKET_DIR.to_string(),
                },
                port: c.port.unwrap_or(5432),
                user: c.user.clone().unwrap_or_else(|| "postgres".into()),
                password: c.password.clone().unwrap_or_default(),
                database: database.clone().unwrap_or_else(|| "postgres".into()),
                // mysqlslap stops at any error: none is retried.
                ignore: IgnoreErrors::parse(""),
                ..PgsqlConfig::default()
            };
            let d: Arc<dyn Driver> = Arc::new(PgsqlDriver::new(cfg));
            Ok(Drivers {
                main: d.clone(),
                clients: d,
            })
        }
    }
}

/// Where PostgreSQL's socket is on Debian.
pub const PG_SOCKET_DIR: &str = "/var/run/postgresql";

/// The MySQL connection mysqlslap's options ask for, as MariaDB 10.11's client takes them:
/// `--protocol` decides when given; else a socket named with -S; else TCP when a port is
/// given or a host other than localhost; else the default socket.
pub fn mysql_config(c: &ConnectOptions) -> MysqlConfig {
    let host = c.host.clone().unwrap_or_else(|| "localhost".into());
    let port = c.port.unwrap_or(3306);
    let socket = || {
        Endpoint::Socket(
            c.socket
                .clone()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_SOCKET)),
        )
    };
    let tcp = || Endpoint::Tcp {
        host: host.clone(),
        port,
    };
    let endpoint = match c.protocol.as_deref() {
        Some("tcp") => tcp(),
        Some(_) => socket(),
        None if c.socket.is_some() => socket(),
        None if c.port.is_some() || host != "localhost" => tcp(),
        None => socket(),
    };
    MysqlConfig {
        endpoints: vec![endpoint],
        user: c.user.clone().unwrap_or_else(|| "root".into()),
        password: c.password.clone().unwrap_or_default(),
        database: None,
        ssl: c.ssl,
        ssl_ca: c.ssl_ca.clone(),
        ssl_optional: c.ssl_optional,
        compression: c.compress,
        // mysqlslap stops at any error: none is retried.
        ignore: IgnoreErrors::parse(""),
        ..MysqlConfig::default()
    }
}
