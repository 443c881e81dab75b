//! The main connection and the stages it runs, in mysqlslap's order: per iteration, drop
//! and create the schema, create and populate, read the primary keys, turn autocommit off
//! (`--commit`), run `--pre-system` and the pre-statements; after the clients, the
//! post-statements and `--post-system`; after each engine, drop the schema.
//!
//! Under `--only-print` there is no connection: every statement is printed instead.

use std::sync::Arc;

use crate::driver::{Connection, Dialect, Driver, DriverError, Outcome, ServerCounters};
use crate::settings::DatabaseSettings;

use super::autosql::{self, Generated, Query};
use super::console::Console;
use super::dialect;
use super::keys::{Keys, KEY_QUERY, PLACEHOLDER_KEY};
use super::script::walkable;
use super::{Engine, SlapSpec};

/// What stops a mysqlslap run, in mysqlslap's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlapError {
    #[error("Error when connecting to server: {0}")]
    Connect(String),
    #[error("Cannot drop database '{schema}' ERROR : {message}")]
    DropSchema { schema: String, message: String },
    #[error("Cannot create schema {schema} : {message}")]
    CreateSchema { schema: String, message: String },
    #[error("Cannot select schema '{schema}': {message}")]
    SelectSchema { schema: String, message: String },
    /// A statement of the main connection (create, populate, pre and post statements).
    #[error("Cannot run query {sql} ERROR : {message}")]
    Query { sql: String, message: String },
    /// A statement of a client: mysqlslap exits at once, with status 0.
    #[error("Cannot run query {sql} ERROR : {message}")]
    ClientQuery { sql: String, message: String },
    #[error("Cannot select GUID primary keys. ({0})")]
    Keys(String),
    /// A signal (its number) stopped the main connection's work.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

/// The server's own message: without the driver's `error N (STATE): ` in front, as the
/// MySQL client library reports it.
pub fn server_message(e: &DriverError) -> String {
    if let Some(code) = &e.code {
        if let Some(rest) = e.message.strip_prefix(&format!("error {code} (")) {
            if let Some((_, msg)) = rest.split_once("): ") {
                return msg.to_string();
            }
        }
        if let Some(msg) = e.message.strip_prefix(&format!("error {code}: ")) {
            return msg.to_string();
        }
    }
    e.message.clone()
}

/// A failed connection in the MySQL client library's words, from the driver's error: the
/// client's error number (when there is one) and the text (`Can't connect to local server
/// through socket '...' (2)`, the server's own message for a refusal).
pub fn connect_text(dialect: Dialect, e: &DriverError) -> (Option<String>, String) {
    if dialect != Dialect::Mysql {
        return (e.code.clone(), server_message(e));
    }
    let Some(rest) = e.message.strip_prefix("MySQL server at ") else {
        return (e.code.clone(), server_message(e));
    };
    let Some((at, why)) = rest.split_once(": ") else {
        return (e.code.clone(), server_message(e));
    };
    let os_error = why
        .rsplit_once("(os error ")
        .and_then(|(_, n)| n.strip_suffix(')'))
        .and_then(|n| n.parse::<i32>().ok());
    match (os_error, at.split_once(' ')) {
        (Some(n), Some(("socket", path))) => (
            Some("2002".into()),
            format!("Can't connect to local server through socket '{path}' ({n})"),
        ),
        (Some(n), Some(("tcp", hp))) => {
            let host = hp.rsplit_once(':').map_or(hp, |(h, _)| h);
            (
                Some("2003".into()),
                format!("Can't connect to server on '{host}' ({n})"),
            )
        }
        _ => {
            let bare = DriverError::new(e.class, e.code.clone(), why);
            (e.code.clone(), server_message(&bare))
        }
    }
}

/// The statements run against the main connection and the query list the clients walk,
/// built once for the run.
#[derive(Clone, Debug)]
pub struct Statements {
    /// Create statements (auto: the CREATE TABLE, then the distinct INSERTs).
    pub create: Vec<String>,
    /// Auto: statements of the population, the CREATE TABLE included.
    pub create_limit: Option<u64>,
    pub queries: Vec<Query>,
}

impl Statements {
    pub fn build(spec: &SlapSpec, dialect: Dialect) -> Self {
        match &spec.auto {
            Some(a) => {
                let Generated {
                    create_table,
                    inserts,
                    queries,
                } = autosql::generate(a, dialect);
                let mut create = vec![create_table];
                create.extend(inserts);
                Statements {
                    create,
                    create_limit: Some(a.write_number),
                    queries,
                }
            }
            None => Statements {
                create: walkable(&spec.create).to_vec(),
                create_limit: None,
                queries: walkable(&spec.query)
                    .iter()
                    .map(|s| Query::plain(s.clone()))
                    .collect(),
            },
        }
    }

    /// The population, statement by statement: the create list once, then (auto) its
    /// INSERTs again and again until `create_limit` statements ran. `each` gets the index
    /// in the create list and the statement.
    pub fn populate<E>(
        &self,
        mut each: impl FnMut(usize, &str) -> Result<(), E>,
    ) -> Result<u64, E> {
        let mut count = 0u64;
        let mut from = 0;
        loop {
            for (i, s) in self.create.iter().enumerate().skip(from) {
                if self.create_limit == Some(count) {
                    return Ok(count);
                }
                each(i, s)?;
                count += 1;
            }
            // The CREATE TABLE runs once; with no INSERT to cycle through, the limit can
            // never be met (mysqlslap loops forever there; the front end refuses it).
            match self.create_limit {
                Some(limit) if limit > count && self.create.len() > 1 => from = 1,
                _ => return Ok(count),
            }
        }
    }
}

/// The main connection, its statements and what the stages leave for the clients.
pub struct Main {
    /// Set by the first SIGINT/SIGTERM: a long population stops at the next statement.
    stop: Option<plumb_core::StopFlag>,
    spec: Arc<SlapSpec>,
    dialect: Dialect,
    conn: Option<Box<dyn Connection>>,
    /// The clients' driver (connected to the schema): it reads the database's settings
    /// where a connection cannot (SQLite).
    schema_driver: Arc<dyn Driver>,
    console: Console,
    statements: Arc<Statements>,
    keys: Arc<Keys>,
}

impl Main {
    /// Connect the main connection (none under `--only-print`).
    pub fn connect(
        spec: Arc<SlapSpec>,
        driver: &dyn Driver,
        schema_driver: Arc<dyn Driver>,
        console: Console,
    ) -> Result<Self, SlapError> {
        let dialect = driver.dialect();
        let conn = if spec.only_print {
            None
        } else {
            let failed = |e: DriverError| SlapError::Connect(connect_text(dialect, &e).1);
            let mut c = driver.connect().map_err(failed)?;
            if let Some(init) = &spec.init_command {
                c.execute_plain(init, &[]).map_err(failed)?;
            }
            Some(c)
        };
        let statements = Arc::new(Statements::build(&spec, dialect));
        Ok(Main {
            stop: None,
            spec,
            dialect,
            conn,
            schema_driver,
            console,
            statements,
            keys: Arc::new(Keys::default()),
        })
    }

    /// Stop the main connection's work when `stop` holds a signal.
    pub fn stop_on(&mut self, stop: plumb_core::StopFlag) {
        self.stop = Some(stop);
    }

    fn check_stop(&self) -> Result<(), SlapError> {
        match self
            .stop
            .as_ref()
            .map(|s| s.load(std::sync::atomic::Ordering::Relaxed))
        {
            Some(sig) if sig != 0 => Err(SlapError::Interrupted(sig as i32)),
            _ => Ok(()),
        }
    }

    pub fn spec(&self) -> &Arc<SlapSpec> {
        &self.spec
    }
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }
    pub fn console(&self) -> &Console {
        &self.console
    }
    pub fn statements(&self) -> &Arc<Statements> {
        &self.statements
    }
    pub fn keys(&self) -> &Arc<Keys> {
        &self.keys
    }

    /// The database's settings for the record, read on the main connection (so reading
    /// them opens no connection of its own); through the clients' driver when the
    /// connection cannot tell (SQLite). None under `--only-print`.
    pub fn database_settings(&mut self) -> Option<DatabaseSettings> {
        let conn = self.conn.as_mut()?;
        let mut s = conn
            .server_settings()
            .or_else(|| self.schema_driver.settings())?;
        // The clients are connected to the schema; the main connection is in it only once
        // something was created there.
        if let DatabaseSettings::Mysql(m) = &mut s {
            m.database = self.spec.schema.clone();
        }
        Some(s)
    }

    /// The server's counters now, read on the main connection (idle while the clients
    /// run, as mysqlslap's is). None for an embedded database and under `--only-print`.
    /// The local server process the main connection talks to ([`Connection::server_pid`]).
    pub fn server_pid(&self) -> Option<u32> {
        self.conn.as_ref()?.server_pid()
    }

    pub fn server_counters(&mut self) -> Option<ServerCounters> {
        self.conn.as_mut()?.server_counters()
    }

    /// Run one statement (print it first when asked; print only, under `--only-print`).
    fn run(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        self.console.statement(sql, None);
        match &mut self.conn {
            Some(c) => c.execute_plain(sql, &[]),
            None => Ok(Outcome::Changed(0)),
        }
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, SlapError> {
        self.run(sql).map_err(|e| SlapError::Query {
            sql: sql.to_string(),
            message: server_message(&e),
        })
    }

    /// Drop the schema and what it holds.
    pub fn drop_schema(&mut self) -> Result<(), SlapError> {
        let schema = self.spec.schema.clone();
        let fail = |e: DriverError| SlapError::DropSchema {
            schema: schema.clone(),
            message: server_message(&e),
        };
        match dialect::drop_schema(self.dialect, &schema) {
            Some(sql) => {
                self.run(&sql).map_err(fail)?;
            }
            None => {
                // SQLite: the database file is the schema; its tables and views go.
                if self.conn.is_none() {
                    return Ok(());
                }
                let mut drops = Vec::new();
                if let Some(c) = self.conn.as_mut() {
                    c.column(dialect::SQLITE_OBJECTS, &mut |row| {
                        drops.extend(dialect::sqlite_drop(row))
                    })
                    .map_err(fail)?;
                }
                for d in drops {
                    self.run(&d).map_err(fail)?;
                }
            }
        }
        Ok(())
    }

    fn create_schema(&mut self, engine: Option<&Engine>) -> Result<(), SlapError> {
        let schema = self.spec.schema.clone();
        self.console.note(2, "Loading Pre-data");
        if let Some(sql) = dialect::create_schema(self.dialect, &schema) {
            self.run(&sql).map_err(|e| SlapError::CreateSchema {
                schema: schema.clone(),
                message: server_message(&e),
            })?;
            if self.console.only_print {
                self.console.write(&format!("use {schema};\n"));
            } else if self.console.verbose >= 3 {
                self.console.write(&format!("{sql};\n"));
            }
        }
        if let (Some(sql), Some(c)) = (dialect::use_schema(self.dialect, &schema), &mut self.conn) {
            c.execute_plain(&sql, &[])
                .map_err(|e| SlapError::SelectSchema {
                    schema: schema.clone(),
                    message: server_message(&e),
                })?;
        }
        let statements = self.statements.clone();
        let suffix = engine.map(|e| match &e.options {
            Some(o) => format!(" Engine = {} {o}", e.name),
            None => format!(" Engine = {}", e.name),
        });
        statements.populate(|i, s| {
            self.check_stop()?;
            match (&suffix, i) {
                (Some(x), 0) => self.run(&format!("{s}{x}")),
                _ => self.run(s),
            }
            .map(|_| ())
            .map_err(|e| SlapError::Query {
                sql: s.to_string(),
                message: server_message(&e),
            })
        })?;
        Ok(())
    }

    /// Everything before an iteration's clients start.
    pub fn setup(&mut self, engine: Option<&Engine>) -> Result<(), SlapError> {
        let spec = self.spec.clone();
        if spec.drops_schema() {
            self.drop_schema()?;
        }
        if spec.auto.is_some() || !spec.create.is_empty() {
            self.create_schema(engine)?;
        }
        self.console.note(2, "Generating primary key list");
        self.keys = Arc::new(if spec.auto.as_ref().is_some_and(|a| a.keyed()) {
            self.read_keys(engine)?
        } else {
            Keys::default()
        });
        if spec.commit > 0 && self.dialect == Dialect::Mysql {
            // Only MySQL sets this on the main connection: elsewhere it would open a
            // transaction the clients' writes then wait behind.
            self.query("SET AUTOCOMMIT=0")?;
        }
        if let Some(cmd) = &spec.pre_system {
            system(cmd, "pre_system", &self.console);
        }
        for s in walkable(&spec.pre_query) {
            self.query(s)?;
        }
        Ok(())
    }

    fn read_keys(&mut self, engine: Option<&Engine>) -> Result<Keys, SlapError> {
        if self.conn.is_none() || engine.is_some_and(|e| e.name.contains("blackhole")) {
            return Ok(Keys::one(PLACEHOLDER_KEY));
        }
        self.console.statement(KEY_QUERY, None);
        let failed = |e: DriverError| SlapError::Keys(server_message(&e));
        // On the main connection, in the schema since it was created, as mysqlslap reads
        // them: a connection of their own would be one mysqlslap does not open.
        let mut keys = Keys::default();
        if let Some(conn) = self.conn.as_mut() {
            conn.column(KEY_QUERY, &mut |k| keys.push(k))
                .map_err(failed)?;
        }
        Ok(keys)
    }

    /// Everything after an iteration's clients ended.
    pub fn finish_iteration(&mut self) -> Result<(), SlapError> {
        let spec = self.spec.clone();
        for s in walkable(&spec.post_query) {
            self.query(s)?;
        }
        if let Some(cmd) = &spec.post_system {
            system(cmd, "post_system", &self.console);
        }
        self.keys = Arc::new(Keys::default());
        Ok(())
    }
}

/// Run `cmd` as C's system() does; a non-zero status is a warning, as in mysqlslap.
fn system(cmd: &str, option: &str, console: &Console) {
    use std::os::unix::process::ExitStatusExt;
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .status();
    // system()'s value: the wait status (exit code << 8), or -1 when no shell ran.
    let raw = match status {
        Ok(s) => s.into_raw(),
        Err(_) => -1,
    };
    if raw != 0 {
        console.warn(&format!(
            "Warning: Execution of {option} option returned {raw}."
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slap::AutoSql;

    #[test]
    fn population_counts_the_create_table() {
        let spec = SlapSpec {
            auto: Some(AutoSql {
                unique_write_number: 3,
                write_number: 8,
                ..Default::default()
            }),
            ..Default::default()
        };
        let st = Statements::build(&spec, Dialect::Mysql);
        let mut seen = Vec::new();
        let n = st
            .populate::<()>(|i, _| {
                seen.push(i);
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 8);
        assert_eq!(seen, [0, 1, 2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn server_message_drops_the_driver_s_prefix() {
        let e = DriverError::new(
            crate::ErrorClass::Fatal,
            Some("1146".into()),
            "error 1146 (42S02): Table 'x.y' doesn't exist",
        );
        assert_eq!(server_message(&e), "Table 'x.y' doesn't exist");
        let e = DriverError::new(crate::ErrorClass::Fatal, None, "no such table: y");
        assert_eq!(server_message(&e), "no such table: y");
    }

    #[test]
    fn connect_errors_in_the_client_library_s_words() {
        let e = |code: Option<&str>, m: &str| {
            DriverError::new(crate::ErrorClass::Fatal, code.map(Into::into), m)
        };
        assert_eq!(
            connect_text(
                Dialect::Mysql,
                &e(
                    Some("2013"),
                    "MySQL server at socket /nope.sock: No such file or directory (os error 2)"
                )
            ),
            (
                Some("2002".into()),
                "Can't connect to local server through socket '/nope.sock' (2)".into()
            )
        );
        assert_eq!(
            connect_text(
                Dialect::Mysql,
                &e(
                    Some("2013"),
                    "MySQL server at tcp 127.0.0.1:1: Connection refused (os error 111)"
                )
            ),
            (
                Some("2003".into()),
                "Can't connect to server on '127.0.0.1' (111)".into()
            )
        );
        assert_eq!(
            connect_text(
                Dialect::Mysql,
                &e(
                    Some("1049"),
                    "MySQL server at socket /s: error 1049 (42000): Unknown database 'x'"
                )
            ),
            (Some("1049".into()), "Unknown database 'x'".into())
        );
    }
}
