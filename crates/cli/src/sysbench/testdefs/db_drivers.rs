//! sysbench's database driver options (`--db-driver`, `--mysql-*`, `--pgsql-*`, plumb's
//! `--sqlite-*`) and the driver they choose.
//!
//! Without `--db-driver`, the options given choose: `--mysql-*` means MySQL, `--pgsql-*`
//! PostgreSQL, neither the embedded SQLite (plumb) or MySQL (the drop-in, as sysbench). An
//! option of another driver than the one that runs is refused, not ignored.

use std::path::PathBuf;
use std::sync::Arc;

use plumb_oltp::driver::IgnoreErrors;
use plumb_oltp::dry_run::DryRun;
use plumb_oltp::mysql::{Endpoint, MysqlConfig, MysqlDriver, DEFAULT_SOCKET};
use plumb_oltp::pgsql::{PgsqlConfig, PgsqlDriver};
use plumb_oltp::pgsql_tls::SslMode;
use plumb_oltp::sqlite::{SqliteDriver, SqliteOptions};
use plumb_oltp::text_only::TextOnly;
use plumb_oltp::Driver;

use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{Opt, Values};

pub const DRIVERS: &[&str] = &["sqlite", "mysql", "pgsql"];

/// The driver a command line chooses, with its dialect checks left to the caller.
/// `options` are the test's, which include the driver options of [`super::oltp`].
pub fn driver(v: &Values, c: &Common, options: &[Opt]) -> Result<Arc<dyn Driver>, UsageError> {
    let given_of = |prefix: &str| {
        options
            .iter()
            .filter(|o| o.name.starts_with(prefix) && v.given(o.name))
            .map(|o| o.name)
            .collect::<Vec<_>>()
    };
    if let Some(name) = &c.unknown_driver {
        return Ok(Arc::new(NoSuchDriver(name.clone())));
    }
    let (mysql, pgsql, sqlite) = (given_of("mysql-"), given_of("pgsql-"), given_of("sqlite-"));
    let chosen = if v.given("db-driver") {
        v.word("db-driver")
    } else if !mysql.is_empty() {
        "mysql"
    } else if !pgsql.is_empty() {
        "pgsql"
    } else if c.dropin {
        "mysql"
    } else {
        "sqlite"
    };
    for (name, given) in [("mysql", &mysql), ("pgsql", &pgsql), ("sqlite", &sqlite)] {
        if name != chosen {
            if let Some(o) = given.first() {
                return Err(UsageError(format!(
                    "--{o} is an option of the {name} driver, but this run uses --db-driver={chosen}"
                )));
            }
        }
    }
    let driver: Arc<dyn Driver> = match chosen {
        "mysql" => {
            let config = mysql_config(v, c.dropin)?;
            if v.flag("mysql-dry-run") {
                Arc::new(DryRun)
            } else {
                Arc::new(MysqlDriver::new(config))
            }
        }
        "pgsql" => Arc::new(PgsqlDriver::new(pgsql_config(v)?)),
        _ => {
            let mut opts = SqliteOptions::new(v.word("sqlite-db"));
            opts.journal_mode = v.word("sqlite-journal-mode").to_string();
            Arc::new(SqliteDriver::new(opts).map_err(|e| UsageError(e.to_string()))?)
        }
    };
    Ok(match v.word("db-ps-mode") {
        "disable" => Arc::new(TextOnly::new(driver)),
        _ => driver,
    })
}

pub(super) fn mysql_config(v: &Values, dropin: bool) -> Result<MysqlConfig, UsageError> {
    if v.flag("mysql-debug") {
        return Err(UsageError(
            "--mysql-debug is not supported: plumb's MySQL client has no client library tracing"
                .into(),
        ));
    }
    if !v.word("mysql-ssl-cipher").is_empty() {
        return Err(UsageError(
            "--mysql-ssl-cipher is not supported: rustls negotiates the cipher itself".into(),
        ));
    }
    let ports = v
        .list("mysql-port")
        .iter()
        .map(|p| {
            p.parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| UsageError(format!("Invalid value for --mysql-port: '{p}'")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sockets: Vec<PathBuf> = v
        .list("mysql-socket")
        .iter()
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    let hosts = v.list("mysql-host");
    // sysbench's lists: sockets in turn; else every host with every port, ports first.
    // "localhost" without a port is the local socket, as MySQL's own clients take it;
    // libmariadb, under sysbench, takes it so with a port too.
    let endpoints = if !sockets.is_empty() {
        sockets.into_iter().map(Endpoint::Socket).collect()
    } else if hosts.len() == 1
        && hosts[0] == "localhost"
        && (dropin || !v.given("mysql-port"))
        && std::path::Path::new(DEFAULT_SOCKET).exists()
    {
        vec![Endpoint::Socket(DEFAULT_SOCKET.into())]
    } else {
        hosts
            .iter()
            .flat_map(|h| {
                ports.iter().map(move |&port| Endpoint::Tcp {
                    host: h.clone(),
                    port,
                })
            })
            .collect()
    };
    let ca = v.word("mysql-ssl-ca");
    let ssl = v.flag("mysql-ssl") || !ca.is_empty();
    // sysbench's client library asks for TLS and goes on in plain text where the server
    // (or a socket) has none; the drop-in does the same, plumb's own mode says so instead.
    if !dropin && ssl && endpoints.iter().any(|e| matches!(e, Endpoint::Socket(_))) {
        return Err(UsageError(
            "--mysql-ssl applies to TCP connections: give --mysql-host (and --mysql-port), not a socket; a socket is local and its traffic never leaves the host".into(),
        ));
    }
    Ok(MysqlConfig {
        endpoints,
        user: v.word("mysql-user").to_string(),
        password: v.word("mysql-password").to_string(),
        database: Some(v.word("mysql-db").to_string()).filter(|d| !d.is_empty()),
        ssl,
        ssl_ca: (!ca.is_empty()).then(|| PathBuf::from(ca)),
        ssl_optional: dropin,
        compression: v.flag("mysql-compression"),
        ignore: mysql_ignore(v.list("mysql-ignore-errors"), dropin)?,
        ..MysqlConfig::default()
    })
}

/// `--mysql-ignore-errors`: `all` or MySQL error numbers. sysbench reads each item with
/// atoi() (`12x` is 12, a word is 0, which no error has), and the drop-in does the same;
/// under plumb's name an item that is no number is refused rather than never matching.
fn mysql_ignore(items: &[String], dropin: bool) -> Result<IgnoreErrors, UsageError> {
    let mut codes = Vec::new();
    for item in items {
        let digits: String = item.chars().take_while(char::is_ascii_digit).collect();
        if item == "all" || (!dropin && item.eq_ignore_ascii_case("all")) {
            return Ok(IgnoreErrors::All);
        } else if dropin {
            codes.push(if digits.is_empty() {
                "0".into()
            } else {
                digits
            });
        } else if digits.len() == item.len() {
            codes.push(digits);
        } else {
            return Err(UsageError(format!(
                "invalid value for --mysql-ignore-errors: '{item}' (allowed: MySQL error numbers such as 1213, or all)"
            )));
        }
    }
    Ok(IgnoreErrors::parse(&codes.join(",")))
}

/// `--pgsql-ignore-errors` (plumb's; sysbench's list is fixed): `all` or SQLSTATEs, five
/// digits or letters, every one of PostgreSQL's with a digit among them (a word such as
/// `hello` is none).
fn pgsql_ignore(items: &[String]) -> Result<IgnoreErrors, UsageError> {
    for item in items {
        let sqlstate = item.len() == 5
            && item.chars().all(|c| c.is_ascii_alphanumeric())
            && item.chars().any(|c| c.is_ascii_digit());
        if !sqlstate && !item.eq_ignore_ascii_case("all") {
            return Err(UsageError(format!(
                "invalid value for --pgsql-ignore-errors: '{item}' (allowed: SQLSTATEs such as 40P01, or all)"
            )));
        }
    }
    Ok(IgnoreErrors::parse(&items.join(",")))
}

fn pgsql_config(v: &Values) -> Result<PgsqlConfig, UsageError> {
    let sslmode: SslMode = v
        .word("pgsql-sslmode")
        .parse()
        .map_err(|e| UsageError(format!("--pgsql-{e}")))?;
    let cfg = PgsqlConfig {
        host: v.word("pgsql-host").to_string(),
        port: v.int("pgsql-port") as u16,
        user: v.word("pgsql-user").to_string(),
        password: v.word("pgsql-password").to_string(),
        database: v.word("pgsql-db").to_string(),
        ignore: pgsql_ignore(v.list("pgsql-ignore-errors"))?,
        sslmode,
        ..PgsqlConfig::default()
    };
    // libpq quietly connects a socket in plain text whatever the mode; a mode that demands
    // encryption and cannot have it is refused instead.
    if sslmode == SslMode::Require {
        if let Some(dir) = cfg.hosts().find(|h| h.starts_with('/')) {
            let named = if dir == cfg.host {
                format!("--pgsql-host={dir} is a socket directory")
            } else {
                format!("--pgsql-host lists {dir}, a socket directory")
            };
            return Err(UsageError(format!(
                "--pgsql-sslmode=require applies to TCP connections, and {named}: PostgreSQL never encrypts a socket"
            )));
        }
    }
    Ok(cfg)
}

/// The drop-in's --db-driver that names no driver: every connection fails as sysbench's
/// driver initialisation does (its words are the front end's, see `words.rs`).
struct NoSuchDriver(String);

impl Driver for NoSuchDriver {
    fn name(&self) -> &'static str {
        "none"
    }
    fn dialect(&self) -> plumb_oltp::Dialect {
        plumb_oltp::Dialect::Mysql
    }
    fn connect(&self) -> Result<Box<dyn plumb_oltp::Connection>, plumb_oltp::DriverError> {
        Err(plumb_oltp::DriverError::new(
            plumb_oltp::ErrorClass::Fatal,
            None,
            format!("invalid database driver name: '{}'", self.0),
        ))
    }
}
