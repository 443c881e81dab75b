//! sysbench 1.0.20's words when an OLTP script meets a database that refuses it (its tables
//! are not there, a query fails), under the drop-in name: what its MySQL and PostgreSQL
//! drivers, its Lua layer and its logger print, built from the server's own error (code,
//! state, message, position) and the statement as plumb sent it.
//!
//! A text here is what follows the drop-in's "FATAL: " up to its last line end (the drop-in
//! prints every error that way).

use std::fmt::Write as _;

use plumb_oltp::driver::{ConnectCause, ConnectFailure, ServerSaid};
use plumb_oltp::mysql::Endpoint;
use plumb_oltp::statements::Stmt;
use plumb_oltp::{Dialect, DriverError, ErrorClass, OltpError, Setting, Test};

use crate::sysbench::testdefs::Command;

/// bulk_insert.lua's thread_done, when its last flush fails.
const BULK_DONE_FAILED: &str =
    "`thread_done' function failed: /usr/share/sysbench/bulk_insert.lua:42: db_bulk_insert_done() failed";

/// The script a drop-in run stands for, as far as its words depend on it.
#[derive(Clone)]
pub(super) struct Script {
    pub test: Test,
    pub dialect: Dialect,
    pub threads: usize,
    pub auto_inc: bool,
    pub tables: u32,
    /// The command the run stands for (the drop-in runs one).
    pub command: Option<Command>,
    /// The first --mysql-port, which sysbench names for a socket it was not given.
    pub mysql_port: u16,
    /// --mysql-socket was given: sysbench names the socket, else the host and port.
    pub mysql_socket_given: bool,
    /// The servers sysbench's MySQL driver hands its connections in turn (its host, port
    /// and socket lists), the first connection the first.
    pub mysql_endpoints: Vec<Endpoint>,
    /// The run stands for sysbench 1.0's copy of 0.5's oltp.lua, whose errors are its own.
    pub legacy: Option<Legacy>,
    /// --db-driver named no driver (see [`crate::sysbench::common::Common::unknown_driver`]).
    pub unknown_driver: Option<String>,
}

/// sysbench 1.0.20's `oltp_legacy/oltp.lua` and the common.lua beside it: they send every
/// statement through `db_query()`, which fails with those words, at their own lines.
#[derive(Clone)]
pub(super) struct Legacy {
    /// The script's path as the command line gave it (sysbench quotes it as given).
    pub path: String,
    /// An event's first statement: a thread connects when it sends it (the script has no
    /// thread_init connection), so a connection that cannot be opened fails there.
    pub first: Option<Stmt>,
}

impl Legacy {
    /// The event's statements as their failures name them: `path:line`.
    fn event_at(&self, stmt: Stmt) -> Option<String> {
        let line = match stmt {
            Stmt::Begin => 43,
            Stmt::PointSelect => 49,
            Stmt::SimpleRange => 56,
            Stmt::SumRange => 60,
            Stmt::OrderRange => 64,
            Stmt::DistinctRange => 69,
            Stmt::IndexUpdate => 80,
            Stmt::NonIndexUpdate => 86,
            Stmt::Delete => 96,
            Stmt::Insert => 103,
            Stmt::Commit => 110,
            _ => return None,
        };
        Some(format!("{}:{line}", self.path))
    }

    /// common.lua's `line`, as the script loaded it: `dofile()` of the path's directory.
    fn common_at(&self, line: u32) -> String {
        let dir = self.path.rfind('/').map_or("./", |i| &self.path[..=i]);
        format!("{dir}common.lua:{line}")
    }
}

impl Script {
    /// sysbench's words for `e`, or None where plumb's own say it.
    pub fn words(&self, e: &OltpError) -> Option<String> {
        match e {
            OltpError::Unprepared { refused, .. } => self.unprepared(refused),
            // The only check of --tables these scripts make: their cleanup's assertion.
            OltpError::Setting {
                setting: Setting::Tables,
                ..
            } if self.test.is_select_random() && self.tables != 1 => {
                let (script, line) = match self.test {
                    Test::SelectRandomPoints => ("select_random_points.lua", 27),
                    _ => ("select_random_ranges.lua", 29),
                };
                Some(format!(
                    "`cleanup' function failed: /usr/share/sysbench/{script}:{line}: this benchmark does not support --tables > 1"
                ))
            }
            OltpError::Statement { error, .. } if self.refused_while_prepared(error) => {
                self.mysql_prepare_refused(error)
            }
            OltpError::Statement { error, stmt, .. } => self.query_failed(error, *stmt, false),
            OltpError::Load { error, last, .. } => self.load_failed(error, *last),
            OltpError::Connect(error) => self.connect_failed(error),
            // sysbench's words for the INSERT that failed, else plumb's with the cause.
            OltpError::Unguarded { error, .. } => self
                .words(error)
                .or_else(|| Some(e.describe(&super::spell))),
            // bulk_insert's last flush, from its thread_done.
            OltpError::AtEnd(e) => match &**e {
                // An error the driver ignores is logged at debug level only: thread_done's
                // failure is all that shows.
                OltpError::Statement { error, .. } if error.class == ErrorClass::Ignorable => {
                    Some(BULK_DONE_FAILED.to_string())
                }
                OltpError::Statement { error, stmt, .. } => self.query_failed(error, *stmt, true),
                _ => None,
            },
            _ => None,
        }
    }

    /// A connection that could not be opened: the driver's lines, then the Lua error of
    /// the function that connected, for each connection sysbench opens for the command
    /// (each thread's for a run, a parallel prepare or prewarm; one for cleanup), and for a
    /// run the end of the threads' initialisation. A parallel prepare or prewarm whose
    /// threads all fail exits 0 in sysbench (its threads' failures are not the command's);
    /// plumb fails it, as it fails a run that crashes sysbench.
    fn connect_failed(&self, error: &DriverError) -> Option<String> {
        if let Some(name) = &self.unknown_driver {
            return self.no_driver(name);
        }
        let lines = match self.dialect {
            // libmariadb reports the last address it tried.
            Dialect::Mysql => self.mysql_connect_lines(error, error.connect.last()?)?,
            Dialect::Pgsql => vec![format!(
                "Connection to database failed: {}",
                libpq_connect_message(error)?
            )],
            Dialect::Sqlite => return None,
        };
        if let Some(legacy) = &self.legacy {
            return self.legacy_connect_failed(legacy, error, &lines);
        }
        let (function, at, connections) = self.connecting(false)?;
        let mut log = each_connection(
            &lines,
            &format!(
                "`{function}' function failed: /usr/share/sysbench/{at}: connection creation failed"
            ),
            self.failing(error, connections),
        );
        if self.command == Some(Command::Run) {
            log.fatal("Thread initialization failed!");
        }
        Some(log.printed())
    }

    /// Where the command's connections are made: the Lua function, the script and line of
    /// its connect call (`driver_init`: of the line before it, which initialises the
    /// driver), and how many connections the command opens there.
    fn connecting(&self, driver_init: bool) -> Option<(&'static str, String, usize)> {
        let at =
            |script: &str, line: u32| format!("{script}.lua:{}", line - u32::from(driver_init));
        let common = |line| at("oltp_common", line);
        Some(match (self.command?, self.test) {
            (Command::Prepare, Test::BulkInsert) => ("prepare", at("bulk_insert", 19), 1),
            (Command::Prepare, _) => ("sysbench.cmdline.call_command", common(83), self.threads),
            (Command::Prewarm, _) => ("sysbench.cmdline.call_command", common(98), self.threads),
            (Command::Cleanup, Test::BulkInsert) => ("cleanup", at("bulk_insert", 50), 1),
            (Command::Cleanup, _) => ("cleanup", common(388), 1),
            (Command::Run, test) => {
                let line = match test {
                    Test::SelectRandomPoints => at("select_random_points", 34),
                    Test::SelectRandomRanges => at("select_random_ranges", 36),
                    Test::BulkInsert => at("bulk_insert", 12),
                    _ => common(349),
                };
                ("thread_init", line, self.threads)
            }
            (Command::Help, _) => return None,
        })
    }

    /// sysbench's words when --db-driver names no driver: each connection the command
    /// makes fails where the script initialises the driver, the line before the one that
    /// would connect.
    fn no_driver(&self, name: &str) -> Option<String> {
        let (function, at, connections) = self.connecting(true)?;
        let mut log = each_connection(
            &[format!("invalid database driver name: '{name}'")],
            &format!(
                "`{function}' function failed: /usr/share/sysbench/{at}: failed to initialize the DB driver"
            ),
            connections,
        );
        if self.command == Some(Command::Run) {
            log.fatal("Thread initialization failed!");
        }
        Some(log.printed())
    }

    /// How many of the command's `connections` go where `error`'s connection went: all of
    /// them, except where sysbench's MySQL driver deals its connections over several
    /// servers, the k-th to the k-th server in turn; the others reached a server (plumb
    /// stops at the first that does not, so any other that fails is not known).
    fn failing(&self, error: &DriverError, connections: usize) -> usize {
        // Only the MySQL driver's Script holds endpoints.
        let (eps, Some(f)) = (&self.mysql_endpoints, error.connect.last()) else {
            return connections;
        };
        if eps.len() < 2 {
            return connections;
        }
        let failed = |e: &Endpoint| match e {
            Endpoint::Socket(p) => f.socket.as_deref() == Some(&*p.display().to_string()),
            Endpoint::Tcp { host, port } => {
                f.socket.is_none() && f.host == *host && f.port == *port
            }
        };
        (0..connections)
            .filter(|k| failed(&eps[k % eps.len()]))
            .count()
    }

    /// The legacy script's connection failures: a run's threads connect at their first
    /// query, after "Threads started!" (each thread dealt to a server that does not answer
    /// fails, and no thread_init did); prepare and cleanup connect once, in common.lua.
    fn legacy_connect_failed(
        &self,
        legacy: &Legacy,
        error: &DriverError,
        lines: &[String],
    ) -> Option<String> {
        let (function, at, connections) = match self.command? {
            Command::Run => ("thread_run", legacy.event_at(legacy.first?)?, self.threads),
            Command::Prepare => ("prepare", legacy.common_at(111), 1),
            Command::Cleanup => ("cleanup", legacy.common_at(128), 1),
            Command::Prewarm | Command::Help => return None,
        };
        let log = each_connection(
            lines,
            &format!("`{function}' function failed: {at}: Failed to connect to the database"),
            self.failing(error, connections),
        );
        Some(log.printed())
    }

    /// sysbench's MySQL driver on a connection libmariadb could not open: where it tried
    /// (a socket it was not given is named by the host and port, as libmariadb reached
    /// `localhost` through it), then libmariadb's error.
    fn mysql_connect_lines(&self, error: &DriverError, f: &ConnectFailure) -> Option<Vec<String>> {
        let socket = f.socket.as_deref().filter(|_| self.mysql_socket_given);
        let port = if f.socket.is_some() {
            self.mysql_port
        } else {
            f.port
        };
        let at = match socket {
            Some(path) => {
                format!("unable to connect to MySQL server on socket '{path}', aborting...")
            }
            None => format!(
                "unable to connect to MySQL server on host '{}', port {port}, aborting...",
                f.host
            ),
        };
        let why = match (&f.cause, &f.socket) {
            (ConnectCause::Os(n), Some(path)) => {
                format!("error 2002: Can't connect to local server through socket '{path}' ({n})")
            }
            // libmariadb connects without blocking and reports the EINPROGRESS of that
            // connect, whatever ended it.
            (ConnectCause::Os(_), None) => {
                format!("error 2002: Can't connect to server on '{}' (115)", f.host)
            }
            (ConnectCause::Unresolved(words), _) => format!(
                "error 2005: Unknown server host '{}' ({})",
                f.host,
                gai_code(words)
            ),
            (ConnectCause::Server, _) => format!(
                "error {}: {}",
                error.code.as_deref()?,
                error.said.as_deref()?.message
            ),
            (ConnectCause::Other, _) => return None,
        };
        Some(vec![at, why])
    }

    /// The tables are not there: every thread's thread_init prepares the script's
    /// statements. The MySQL driver gives up at the first refusal, and so does the run. The
    /// PostgreSQL driver logs each refusal and goes on, and the run then executes a
    /// statement that was never prepared, which kills sysbench (SIGSEGV, status 139):
    /// plumb prints the same lines and fails as any failed run does (status 1), a crash
    /// being sysbench's bug, not its behaviour.
    fn unprepared(&self, refused: &[DriverError]) -> Option<String> {
        let mut log = Log::default();
        match self.dialect {
            Dialect::Mysql => self.mysql_prepare_refused(refused.first()?),
            Dialect::Pgsql => {
                let said: Vec<&ServerSaid> =
                    refused.iter().filter_map(|e| e.said.as_deref()).collect();
                if said.is_empty() {
                    return None;
                }
                for _ in 0..self.threads.max(1) {
                    for s in &said {
                        log.fatal(&format!("PQprepare() failed: {}", libpq_message(s)));
                    }
                }
                log.notice("Threads started!\n");
                Some(log.printed())
            }
            Dialect::Sqlite => None,
        }
    }

    /// `error` is MySQL's refusal of a statement being prepared (a thread setting up its
    /// statements on tables that are there but not as the script wants them). A statement
    /// sent as text, the only other kind not yet executed, goes with its values written
    /// in: its text has no `?`.
    fn refused_while_prepared(&self, error: &DriverError) -> bool {
        self.dialect == Dialect::Mysql
            && error
                .said
                .as_deref()
                .is_some_and(|s| !s.executed && s.query.as_deref().is_some_and(|q| q.contains('?')))
    }

    /// The MySQL driver's refusal of `error`, a statement each thread's thread_init
    /// prepares: every thread logs it and gives up (the first refusal ends its
    /// thread_init), then the run does.
    fn mysql_prepare_refused(&self, error: &DriverError) -> Option<String> {
        let said = error.said.as_deref()?;
        let code = error.code.as_deref()?;
        let (script, line) = match self.test {
            Test::SelectRandomPoints => ("select_random_points.lua", 38),
            Test::SelectRandomRanges => ("select_random_ranges.lua", 42),
            _ => ("oltp_common.lua", 284),
        };
        let mut log = Log::default();
        for _ in 0..self.threads.max(1) {
            log.fatal("mysql_stmt_prepare() failed");
            log.fatal(&format!("MySQL error: {code} \"{}\"", said.message));
            log.fatal(&format!(
                "`thread_init' function failed: /usr/share/sysbench/{script}:{line}: SQL API error"
            ));
        }
        log.fatal("Thread initialization failed!");
        Some(log.printed())
    }

    /// A statement of an event that the server refused, sent as text: a plain query
    /// (oltp_insert's INSERT, bulk_insert's multi-row INSERT), or any statement under
    /// `--db-ps-mode=disable`, where sysbench's driver writes the parameters into it. The
    /// driver's lines, then the Lua error that ends the thread, at the line that executed
    /// the statement. A prepared statement's failure carries no text (it goes through
    /// another driver function, with other lines): plumb's words. `at_end`: in the thread's
    /// thread_done (bulk_insert's last flush).
    fn query_failed(
        &self,
        error: &DriverError,
        stmt: Option<Stmt>,
        at_end: bool,
    ) -> Option<String> {
        let said = error.said.as_deref()?;
        let mut log = Log::default();
        // sysbench's Lua error for a failed query (its check_error).
        let sql_error = |errno: &str| {
            format!(
                "SQL error, errno = {errno}, state = '{}': {}",
                said.state, said.message
            )
        };
        // libpq's prepared statement failure names no text: sysbench's driver prints the
        // server's message alone.
        if self.dialect == Dialect::Pgsql && said.executed {
            log.fatal(&format!("PQexecPrepared() failed: 7 {}", said.message));
            let (script, line) = executed_at(self.test, stmt?)?;
            log.fatal(&format!(
                "`thread_run' function failed: /usr/share/sysbench/{script}:{line}: {}",
                sql_error("0")
            ));
            return Some(log.printed());
        }
        let query = said.query.as_deref()?;
        let errno = self.driver_failed(&mut log, error, said, query)?;
        if let Some(legacy) = &self.legacy {
            let (function, at) = match stmt {
                Some(stmt) => ("thread_run", legacy.event_at(stmt)?),
                None => {
                    let (function, line) = setup_statement(query, false)?;
                    (function, legacy.common_at(line))
                }
            };
            log.fatal(&format!(
                "`{function}' function failed: {at}: db_query() failed"
            ));
            return Some(log.printed());
        }
        if stmt.is_none() && !at_end {
            let (function, at) = match (setup_statement(query, true)?, self.test) {
                (("cleanup", _), Test::BulkInsert) => ("cleanup", "bulk_insert.lua:54".into()),
                // bulk_insert.lua's own CREATE TABLE IF NOT EXISTS.
                (_, Test::BulkInsert) => ("prepare", "bulk_insert.lua:23".into()),
                ((function, line), _) => (function, format!("oltp_common.lua:{line}")),
            };
            log.fatal(&format!(
                "`{function}' function failed: /usr/share/sysbench/{at}: {}",
                sql_error(errno)
            ));
            return Some(log.printed());
        }
        let failed = match self.test {
            // oltp_insert.lua sends PostgreSQL's auto-increment INSERT from its line 50,
            // every other one from line 61.
            Test::OltpInsert => {
                let line = if self.dialect == Dialect::Pgsql && self.auto_inc {
                    50
                } else {
                    61
                };
                format!(
                    "/usr/share/sysbench/oltp_insert.lua:{line}: {}",
                    sql_error(errno)
                )
            }
            Test::BulkInsert if at_end => {
                log.fatal(BULK_DONE_FAILED);
                return Some(log.printed());
            }
            Test::BulkInsert => {
                "/usr/share/sysbench/bulk_insert.lua:38: db_bulk_insert_next() failed".to_string()
            }
            test => {
                let (script, line) = executed_at(test, stmt?)?;
                format!("/usr/share/sysbench/{script}:{line}: {}", sql_error(errno))
            }
        };
        log.fatal(&format!("`thread_run' function failed: {failed}"));
        Some(log.printed())
    }

    /// The driver's lines for a statement the database refused, sent as text (or executed
    /// as prepared, for MySQL); the errno sysbench's Lua error quotes.
    fn driver_failed<'e>(
        &self,
        log: &mut Log,
        error: &'e DriverError,
        said: &ServerSaid,
        query: &str,
    ) -> Option<&'e str> {
        Some(match self.dialect {
            Dialect::Mysql => {
                let code = error.code.as_deref()?;
                let function = if said.executed {
                    "mysql_stmt_execute"
                } else {
                    "mysql_drv_query"
                };
                log.fatal(&format!(
                    "{function}() returned error {code} ({}) for query '{query}'",
                    said.message
                ));
                code
            }
            Dialect::Pgsql => {
                // 7: libpq's PGRES_FATAL_ERROR; sysbench's pgsql driver sets no errno.
                log.fatal(&format!("PQexec() failed: 7 {}", said.message));
                log.fatal(&format!("failed query was: {query}"));
                "0"
            }
            Dialect::Sqlite => return None,
        })
    }

    /// A prepare's multi-row INSERT refused: the driver's lines, then the Lua error of the
    /// bulk-insert call that sent it: db_bulk_insert_next when the statement was full,
    /// db_bulk_insert_done for the table's last rows. The legacy common.lua ignores a
    /// failed db_bulk_insert_done and goes on to report success; plumb fails in its own words.
    fn load_failed(&self, error: &DriverError, last: bool) -> Option<String> {
        let said = error.said.as_deref()?;
        let query = said.query.as_deref()?;
        let mut log = Log::default();
        self.driver_failed(&mut log, error, said, query)?;
        let (function, at) = match &self.legacy {
            Some(_) if last => return None,
            // common.lua:88 appends an auto-increment row, :90 one with its id.
            Some(legacy) => (
                "prepare",
                legacy.common_at(if self.auto_inc { 88 } else { 90 }),
            ),
            None => (
                "sysbench.cmdline.call_command",
                format!(
                    "/usr/share/sysbench/oltp_common.lua:{}",
                    if last { 233 } else { 230 }
                ),
            ),
        };
        let call = if last { "done" } else { "next" };
        log.fatal(&format!(
            "`{function}' function failed: {at}: db_bulk_insert_{call}() failed"
        ));
        Some(log.printed())
    }
}

/// The driver's `lines` then the Lua error `failed`, once for each of `connections` that
/// could not be opened (at least one), as sysbench's threads print them.
fn each_connection(lines: &[String], failed: &str, connections: usize) -> Log {
    let mut log = Log::default();
    for _ in 0..connections.max(1) {
        for l in lines {
            log.fatal(l);
        }
        log.fatal(failed);
    }
    log
}

/// The Lua function and line that sent `query`, a statement of prepare or cleanup, by its
/// text: in oltp_common.lua (`current`) or in the legacy common.lua. A prepare's bulk
/// INSERT is not among them: its failure is [`Script::load_failed`]'s.
fn setup_statement(query: &str, current: bool) -> Option<(&'static str, u32)> {
    let prepare = if current {
        "sysbench.cmdline.call_command"
    } else {
        "prepare"
    };
    // bulk_insert.lua indents its CREATE TABLE.
    let query = query.trim_start();
    Some(if query.starts_with("CREATE TABLE") {
        (prepare, if current { 197 } else { 66 })
    } else if query.starts_with("CREATE INDEX") {
        (prepare, if current { 238 } else { 98 })
    } else if query.starts_with("DROP TABLE") {
        ("cleanup", if current { 392 } else { 128 })
    } else {
        return None;
    })
}

/// The script and line of sysbench 1.0.20's Lua that executes a statement of this kind in
/// `test`'s event (oltp_common.lua's execute_* functions, or the script's own event).
fn executed_at(test: Test, stmt: Stmt) -> Option<(&'static str, u32)> {
    const COMMON: &str = "oltp_common.lua";
    Some(match (test, stmt) {
        (Test::OltpDelete, Stmt::Delete) => ("oltp_delete.lua", 33),
        (_, Stmt::Begin) => (COMMON, 405),
        (_, Stmt::Commit) => (COMMON, 409),
        (_, Stmt::PointSelect) => (COMMON, 419),
        (_, Stmt::SimpleRange | Stmt::SumRange | Stmt::OrderRange | Stmt::DistinctRange) => {
            (COMMON, 432)
        }
        (_, Stmt::IndexUpdate) => (COMMON, 458),
        (_, Stmt::NonIndexUpdate) => (COMMON, 469),
        (_, Stmt::Delete) => (COMMON, 487),
        (_, Stmt::Insert) => (COMMON, 488),
        (_, Stmt::RandomPoints) => ("select_random_points.lua", 71),
        (_, Stmt::RandomRanges) => ("select_random_ranges.lua", 76),
        (_, Stmt::BulkInsert) => return None,
    })
}

/// sysbench's logger: one message at a time, formatted into a buffer of this many bytes.
const LOG_BUFFER: usize = 4096;

/// What sysbench's logger prints for a sequence of messages.
#[derive(Default)]
struct Log {
    out: String,
    /// The last message printed (line end included), and how often it came again since.
    last: String,
    repeats: u32,
}

impl Log {
    fn fatal(&mut self, body: &str) {
        self.message("FATAL: ", body);
    }

    fn notice(&mut self, body: &str) {
        self.message("", body);
    }

    fn message(&mut self, prefix: &str, body: &str) {
        // The message and its line end share the buffer with the closing NUL: a longer one
        // is cut, and loses its line end.
        let text = if body.len() + 1 < LOG_BUFFER {
            format!("{body}\n")
        } else {
            let mut cut = LOG_BUFFER - 1;
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            body[..cut].to_string()
        };
        // A message that repeats the last one is counted, and the count is printed before
        // the next different one.
        if text == self.last {
            self.repeats += 1;
            return;
        }
        if self.repeats > 0 {
            let _ = writeln!(self.out, "(last message repeated {} times)", self.repeats);
            self.repeats = 0;
        }
        self.out.push_str(prefix);
        self.out.push_str(&text);
        self.last = text;
    }

    /// The lines as the drop-in's error: after the first "FATAL: ", before the last line end.
    fn printed(self) -> String {
        let s = self.out.strip_prefix("FATAL: ").unwrap_or(&self.out);
        s.strip_suffix('\n').unwrap_or(s).to_string()
    }
}

/// libpq's message for a server's error at its default verbosity: severity, message, then
/// where in the statement the server found it.
fn libpq_message(said: &ServerSaid) -> String {
    let mut m = format!("{}:  {}\n", said.severity, said.message);
    if let (Some(p), Some(q)) = (said.position, said.query.as_deref()) {
        m.push_str(&error_position(q, p));
    }
    m
}

/// glibc's getaddrinfo() code for the resolver's words, as libmariadb shows it.
fn gai_code(words: &str) -> i32 {
    match words {
        "Temporary failure in name resolution" => -3,
        "Non-recoverable failure in name resolution" => -4,
        "No address associated with hostname" => -5,
        // "Name or service not known", EAI_NONAME.
        _ => -2,
    }
}

/// libpq's PQerrorMessage() for a connection it could not open (PostgreSQL 15's libpq),
/// line end included: a paragraph for each attempt, in order (each host of a list, each
/// address of a name).
fn libpq_connect_message(error: &DriverError) -> Option<String> {
    if error.connect.is_empty() {
        return None;
    }
    error
        .connect
        .iter()
        .map(|f| libpq_attempt(error, f))
        .collect()
}

/// libpq's words for one attempt that failed.
fn libpq_attempt(error: &DriverError, f: &ConnectFailure) -> Option<String> {
    if let ConnectCause::Unresolved(words) = &f.cause {
        return Some(format!(
            "could not translate host name \"{}\" to address: {words}\n",
            f.host
        ));
    }
    let at = match &f.socket {
        Some(path) => format!("connection to server on socket \"{path}\" failed: "),
        None if f.host.parse::<std::net::IpAddr>().is_ok() => {
            format!(
                "connection to server at \"{}\", port {} failed: ",
                f.host, f.port
            )
        }
        None => {
            // libpq names the address it tried after a host name; a login the server
            // refused went to the first one.
            let addr = f.addr.or_else(|| {
                use std::net::ToSocketAddrs;
                (f.host.as_str(), f.port)
                    .to_socket_addrs()
                    .ok()?
                    .next()
                    .map(|a| a.ip())
            })?;
            format!(
                "connection to server at \"{}\" ({addr}), port {} failed: ",
                f.host, f.port
            )
        }
    };
    Some(match &f.cause {
        ConnectCause::Os(n) => {
            let shown = std::io::Error::from_raw_os_error(*n).to_string();
            let strerror = shown
                .strip_suffix(&format!(" (os error {n})"))
                .unwrap_or(&shown);
            let hint = if f.socket.is_some() {
                "Is the server running locally and accepting connections on that socket?"
            } else {
                "Is the server running on that host and accepting TCP/IP connections?"
            };
            format!("{at}{strerror}\n\t{hint}\n")
        }
        ConnectCause::Server => {
            let said = error.said.as_deref()?;
            format!("{at}{}:  {}\n", said.severity, said.message)
        }
        _ => return None,
    })
}

/// How wide libpq shows the statement's line, and how far it keeps the cut from the error.
const DISPLAY_WIDTH: usize = 60;
const RIGHT_MARGIN: usize = 10;

/// libpq's display of where an error is: `LINE n: ` and the statement's line holding the
/// 1-based character `position` (cut to 60 columns around it, with `...` where cut), then
/// a caret under it. Every character counts as one column; a tab shows as a space.
fn error_position(query: &str, position: u32) -> String {
    let Some(at) = (position as usize).checked_sub(1) else {
        return String::new();
    };
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    if at > chars.len() {
        return String::new();
    }
    let (mut line, mut begin, mut end) = (1, 0, chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c != '\r' && c != '\n' {
            continue;
        }
        if i >= at {
            end = i;
            break;
        }
        // "\r\n" ends one line.
        if c == '\r' || i == 0 || chars[i - 1] != '\r' {
            line += 1;
        }
        begin = i + 1;
    }
    let (mut cut_left, mut cut_right) = (false, false);
    if end - begin > DISPLAY_WIDTH {
        if begin + DISPLAY_WIDTH >= at + RIGHT_MARGIN {
            end = begin + DISPLAY_WIDTH;
            cut_right = true;
        } else {
            if at + RIGHT_MARGIN < end {
                end = at + RIGHT_MARGIN;
                cut_right = true;
            }
            if end - begin > DISPLAY_WIDTH {
                begin = end - DISPLAY_WIDTH;
                cut_left = true;
            }
        }
    }
    let mut out = format!("LINE {line}: ");
    if cut_left {
        out.push_str("...");
    }
    let caret = out.chars().count() + at - begin;
    out.extend(&chars[begin..end]);
    if cut_right {
        out.push_str("...");
    }
    let _ = writeln!(out, "\n{:caret$}^", "");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(message: &str, position: Option<u32>, query: &str) -> DriverError {
        DriverError::new(ErrorClass::Fatal, Some("42P01".into()), "ERROR: ...").said(ServerSaid {
            state: "42P01".into(),
            severity: "ERROR".into(),
            message: message.into(),
            position,
            query: Some(query.into()),
            executed: false,
        })
    }

    fn script(test: Test, dialect: Dialect, command: Command, threads: usize) -> Script {
        Script {
            test,
            dialect,
            threads,
            auto_inc: true,
            tables: 1,
            command: Some(command),
            mysql_port: 3306,
            mysql_socket_given: false,
            mysql_endpoints: Vec::new(),
            legacy: None,
            unknown_driver: None,
        }
    }

    fn unreachable(cause: ConnectCause, socket: Option<&str>, host: &str) -> OltpError {
        OltpError::Connect(
            DriverError::new(ErrorClass::Fatal, None, "x").connecting(vec![ConnectFailure {
                socket: socket.map(String::from),
                host: host.into(),
                port: 5999,
                addr: Some([127, 0, 0, 1].into()),
                cause,
            }]),
        )
    }

    /// What sysbench printed on this machine for servers it could not reach.
    #[test]
    fn a_connection_that_cannot_open_gives_the_driver_s_lines_per_connection() {
        let pg = script(Test::OltpReadWrite, Dialect::Pgsql, Command::Run, 2);
        assert_eq!(
            pg.words(&unreachable(ConnectCause::Os(111), None, "localhost")).unwrap(),
            "Connection to database failed: connection to server at \"localhost\" (127.0.0.1), port 5999 failed: Connection refused\n\
             \tIs the server running on that host and accepting TCP/IP connections?\n\n\
             FATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:349: connection creation failed\n\
             FATAL: Connection to database failed: connection to server at \"localhost\" (127.0.0.1), port 5999 failed: Connection refused\n\
             \tIs the server running on that host and accepting TCP/IP connections?\n\n\
             FATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:349: connection creation failed\n\
             FATAL: Thread initialization failed!"
        );
        let cleanup = script(Test::BulkInsert, Dialect::Pgsql, Command::Cleanup, 4);
        assert_eq!(
            cleanup
                .words(&unreachable(
                    ConnectCause::Unresolved("Name or service not known".into()),
                    None,
                    "nonexistent.invalid"
                ))
                .unwrap(),
            "Connection to database failed: could not translate host name \"nonexistent.invalid\" to address: Name or service not known\n\n\
             FATAL: `cleanup' function failed: /usr/share/sysbench/bulk_insert.lua:50: connection creation failed"
        );
        // libpq's paragraph for every attempt: each host of a list, each address of a
        // name (localhost as ::1 then 127.0.0.1), a socket directory.
        let attempt =
            |socket: Option<&str>, host: &str, addr: Option<&str>, cause| ConnectFailure {
                socket: socket.map(String::from),
                host: host.into(),
                port: 5999,
                addr: addr.map(|a| a.parse().unwrap()),
                cause,
            };
        let list = OltpError::Connect(DriverError::new(ErrorClass::Fatal, None, "x").connecting(
            vec![
                attempt(
                    Some("/tmp/.s.PGSQL.5999"),
                    "/tmp",
                    None,
                    ConnectCause::Os(2),
                ),
                attempt(
                    None,
                    "nonexistent.invalid",
                    None,
                    ConnectCause::Unresolved("Name or service not known".into()),
                ),
                attempt(None, "localhost", Some("::1"), ConnectCause::Os(111)),
                attempt(None, "localhost", Some("127.0.0.1"), ConnectCause::Os(111)),
            ],
        ));
        let prepare = script(Test::OltpReadWrite, Dialect::Pgsql, Command::Prepare, 1);
        assert_eq!(
            prepare.words(&list).unwrap(),
            "Connection to database failed: connection to server on socket \"/tmp/.s.PGSQL.5999\" failed: No such file or directory\n\
             \tIs the server running locally and accepting connections on that socket?\n\
             could not translate host name \"nonexistent.invalid\" to address: Name or service not known\n\
             connection to server at \"localhost\" (::1), port 5999 failed: Connection refused\n\
             \tIs the server running on that host and accepting TCP/IP connections?\n\
             connection to server at \"localhost\" (127.0.0.1), port 5999 failed: Connection refused\n\
             \tIs the server running on that host and accepting TCP/IP connections?\n\n\
             FATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:83: connection creation failed"
        );
        let my = script(
            Test::SelectRandomPoints,
            Dialect::Mysql,
            Command::Prepare,
            1,
        );
        assert_eq!(
            my.words(&unreachable(ConnectCause::Os(111), None, "127.0.0.1")).unwrap(),
            "unable to connect to MySQL server on host '127.0.0.1', port 5999, aborting...\n\
             FATAL: error 2002: Can't connect to server on '127.0.0.1' (115)\n\
             FATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:83: connection creation failed"
        );
        // Connections dealt over two servers, one unreachable: of three threads, only the
        // second connects to it (sysbench deals its connections in turn).
        let dealt = Script {
            threads: 3,
            command: Some(Command::Run),
            mysql_endpoints: vec![
                Endpoint::Tcp {
                    host: "127.0.0.1".into(),
                    port: 5999,
                },
                Endpoint::Tcp {
                    host: "127.0.0.2".into(),
                    port: 5999,
                },
            ],
            ..my.clone()
        };
        let second = unreachable(ConnectCause::Os(111), None, "127.0.0.2");
        assert_eq!(
            dealt.words(&second).unwrap(),
            "unable to connect to MySQL server on host '127.0.0.2', port 5999, aborting...\n\
             FATAL: error 2002: Can't connect to server on '127.0.0.2' (115)\n\
             FATAL: `thread_init' function failed: /usr/share/sysbench/select_random_points.lua:34: connection creation failed\n\
             FATAL: Thread initialization failed!"
        );
        // A socket sysbench was not given is the host and port it was told.
        let socket = unreachable(ConnectCause::Os(2), Some("/run/m.sock"), "localhost");
        assert!(my.words(&socket).unwrap().starts_with(
            "unable to connect to MySQL server on host 'localhost', port 3306, aborting...\n\
             FATAL: error 2002: Can't connect to local server through socket '/run/m.sock' (2)\n"
        ));
        let given = Script {
            mysql_socket_given: true,
            ..my
        };
        assert!(given
            .words(&socket)
            .unwrap()
            .starts_with("unable to connect to MySQL server on socket '/run/m.sock', aborting..."));
        // What plumb cannot word as libmariadb (a TLS refusal): plumb's own line.
        assert!(given
            .words(&unreachable(ConnectCause::Other, None, "h"))
            .is_none());
    }

    #[test]
    fn the_error_position_shows_the_line_and_a_caret_as_libpq_does() {
        // What sysbench printed on this machine (PostgreSQL 15, libpq 15).
        let q = "SELECT c FROM sbtest1 WHERE id=$1";
        assert_eq!(
            error_position(q, 15),
            "LINE 1: SELECT c FROM sbtest1 WHERE id=$1\n                      ^\n"
        );
        // Longer than 60 columns, the error far enough from the end: cut on the right.
        let q = "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c";
        assert_eq!(
            error_position(q, 24),
            "LINE 1: SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 OR...\n                               ^\n"
        );
        // On a later line: the line alone.
        let q = "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ($1)\n        ";
        assert_eq!(
            error_position(q, 45),
            "LINE 2:           FROM sbtest1\n                       ^\n"
        );
        // Near the end of a long line: cut on the left.
        let q = format!("SELECT {} FROM t", "x, ".repeat(40));
        let at = q.find("FROM").unwrap() as u32 + 1;
        let shown = error_position(&q, at);
        let first = shown.lines().next().unwrap();
        assert!(
            first.starts_with("LINE 1: ...") && first.ends_with("FROM t"),
            "{shown}"
        );
        assert_eq!(first.len(), "LINE 1: ...".len() + 60);
        let caret = shown.lines().nth(1).unwrap();
        assert_eq!(&first[caret.len() - 1..caret.len() + 3], "FROM");
        // In the middle of a long line: cut on both sides, ten columns kept after the error.
        let q = format!("{}ERR{}", "x".repeat(100), "y".repeat(100));
        let shown = error_position(&q, 101);
        assert_eq!(
            shown,
            format!("LINE 1: ...{}ERRyyyyyyy...\n{:61}^\n", "x".repeat(50), "")
        );
        // "\r\n" is one line end; a position past the end shows nothing.
        assert!(error_position("a\r\nb\nc", 6).starts_with("LINE 3: c\n"));
        assert_eq!(error_position("abc", 9), "");
        assert_eq!(error_position("abc", 0), "");
    }

    #[test]
    fn the_log_cuts_long_messages_and_counts_repeats_as_sysbench_s_does() {
        let mut log = Log::default();
        log.fatal("one");
        log.fatal("one");
        log.fatal("one");
        log.notice("two\n");
        let long = "x".repeat(5000);
        log.fatal(&long);
        log.fatal("three");
        let out = log.out;
        assert!(out.starts_with("FATAL: one\n(last message repeated 2 times)\ntwo\n\nFATAL: xxx"));
        assert!(out.ends_with(&format!("{}FATAL: three\n", "x".repeat(10))));
        assert_eq!(
            out.len(),
            "FATAL: one\n(last message repeated 2 times)\ntwo\n\n".len() + 7 + 4095 + 13
        );
        // 4094 characters and the line end fit; 4095 do, without the line end.
        for (n, end) in [(4094, "x\n"), (4095, "x")] {
            let mut log = Log::default();
            log.fatal(&"x".repeat(n));
            assert!(
                log.out.ends_with(end) && log.out.len() == 7 + n + end.len() - 1,
                "{n}"
            );
        }
    }

    #[test]
    fn a_postgresql_run_without_its_tables_prints_each_refusal_then_dies() {
        let script = Script {
            test: Test::OltpPointSelect,
            dialect: Dialect::Pgsql,
            threads: 2,
            auto_inc: true,
            tables: 1,
            command: Some(Command::Run),
            mysql_port: 3306,
            mysql_socket_given: false,
            mysql_endpoints: Vec::new(),
            legacy: None,
            unknown_driver: None,
        };
        let e = OltpError::Unprepared {
            tables: 1,
            first: 1,
            error: refused("x", None, "SELECT 1"),
            refused: vec![refused(
                "relation \"sbtest1\" does not exist",
                Some(15),
                "SELECT c FROM sbtest1 WHERE id=$1",
            )],
        };
        let words = script.words(&e).unwrap();
        // The second thread's message repeats the first one's.
        assert_eq!(
            format!("FATAL: {words}\n"),
            "FATAL: PQprepare() failed: ERROR:  relation \"sbtest1\" does not exist\n\
             LINE 1: SELECT c FROM sbtest1 WHERE id=$1\n                      ^\n\n\
             (last message repeated 1 times)\nThreads started!\n\n"
        );
    }

    #[test]
    fn a_refused_insert_gives_the_driver_s_lines_and_the_lua_error() {
        let mut error = refused(
            "relation \"sbtest1\" does not exist",
            None,
            "INSERT INTO sbtest1 VALUES(1,1)",
        );
        let e = |error: &DriverError| OltpError::Statement {
            what: "insert on sbtest1".into(),
            error: error.clone(),
            stmt: Some(Stmt::Insert),
        };
        let pg = Script {
            test: Test::OltpInsert,
            dialect: Dialect::Pgsql,
            threads: 1,
            auto_inc: true,
            tables: 1,
            command: Some(Command::Run),
            mysql_port: 3306,
            mysql_socket_given: false,
            mysql_endpoints: Vec::new(),
            legacy: None,
            unknown_driver: None,
        };
        assert_eq!(
            pg.words(&e(&error)).unwrap().to_string(),
            "PQexec() failed: 7 relation \"sbtest1\" does not exist\n\
             FATAL: failed query was: INSERT INTO sbtest1 VALUES(1,1)\n\
             FATAL: `thread_run' function failed: /usr/share/sysbench/oltp_insert.lua:50: SQL error, errno = 0, state = '42P01': relation \"sbtest1\" does not exist"
        );
        error.code = Some("1146".into());
        if let Some(s) = error.said.as_mut() {
            s.state = "42S02".into();
            s.message = "Table 'db.sbtest1' doesn't exist".into();
        }
        let my = Script {
            test: Test::BulkInsert,
            dialect: Dialect::Mysql,
            ..pg
        };
        assert_eq!(
            my.words(&e(&error)).unwrap().to_string(),
            "mysql_drv_query() returned error 1146 (Table 'db.sbtest1' doesn't exist) for query 'INSERT INTO sbtest1 VALUES(1,1)'\n\
             FATAL: `thread_run' function failed: /usr/share/sysbench/bulk_insert.lua:38: db_bulk_insert_next() failed"
        );
        // A statement sent prepared (the error carries no text), or an error that is not
        // the server's: plumb's words.
        let prepared = Script {
            test: Test::OltpPointSelect,
            legacy: None,
            unknown_driver: None,
            ..my.clone()
        };
        let mut sent_prepared = error.clone();
        if let Some(s) = sent_prepared.said.as_mut() {
            s.query = None;
        }
        assert!(prepared.words(&e(&sent_prepared)).is_none());
        error.said = None;
        assert!(my.words(&e(&error)).is_none());
    }

    /// `--db-ps-mode=disable`: every statement goes as text, and its failure names the Lua
    /// line that executed it.
    #[test]
    fn a_statement_sent_as_text_names_the_line_that_ran_it() {
        let mut error = refused(
            "Table 'db.sbtest2' doesn't exist",
            None,
            "UPDATE sbtest2 SET k=k+1 WHERE id=5012",
        );
        error.code = Some("1146".into());
        if let Some(s) = error.said.as_mut() {
            s.state = "42S02".into();
        }
        let at = |test, stmt| {
            Script {
                test,
                dialect: Dialect::Mysql,
                threads: 1,
                auto_inc: true,
                tables: 2,
                command: Some(Command::Run),
                mysql_port: 3306,
                mysql_socket_given: false,
                mysql_endpoints: Vec::new(),
                legacy: None,
                unknown_driver: None,
            }
            .words(&OltpError::Statement {
                what: "index update on sbtest2".into(),
                error: error.clone(),
                stmt: Some(stmt),
            })
            .unwrap()
        };
        assert_eq!(
            at(Test::OltpWriteOnly, Stmt::IndexUpdate),
            "mysql_drv_query() returned error 1146 (Table 'db.sbtest2' doesn't exist) for query 'UPDATE sbtest2 SET k=k+1 WHERE id=5012'\n\
             FATAL: `thread_run' function failed: /usr/share/sysbench/oltp_common.lua:458: SQL error, errno = 1146, state = '42S02': Table 'db.sbtest2' doesn't exist"
        );
        // oltp_delete's event runs its delete itself; oltp_write_only's comes from common.
        assert!(at(Test::OltpDelete, Stmt::Delete).contains("/oltp_delete.lua:33: "));
        assert!(at(Test::OltpWriteOnly, Stmt::Delete).contains("/oltp_common.lua:487: "));
        assert!(at(Test::SelectRandomRanges, Stmt::RandomRanges)
            .contains("/select_random_ranges.lua:76: "));
    }
}
