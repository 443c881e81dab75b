//! mysqlslap's clients as a workload: each thread connects after the start (its connect is
//! inside the measured time, as mysqlslap times it), walks the query list in order until its
//! limit (or once, without one), and leaves. One event is one query.
//!
//! As mysqlslap: a client that cannot connect after 10 attempts 100 ms apart says so and
//! ends without failing the run; `--detach` reconnects at every multiple of its value in
//! each walk of the list (also before the first statement); `--commit` commits every that
//! many statements and once more at the end; a failed query stops the run.

use std::sync::Arc;
use std::time::Duration;

use plumb_core::clock::Stamp;
use plumb_core::{KindId, OpKind, Ticket, Worker, WorkerCtx, Workload, WorkloadError};

use crate::driver::{Connection, Dialect, Driver, DriverError, Outcome, QueryClass, TxIntent};

use super::autosql::Query;
use super::console::Console;
use super::keys::Keys;
use super::session::{connect_text, server_message, SlapError};
use super::SlapSpec;

pub const QUERY: KindId = 0;
pub const CONNECT: KindId = 1;
pub const COMMIT: KindId = 2;
const KINDS: [OpKind; 3] = [
    OpKind::event("query"),
    OpKind::part("connect"),
    OpKind::part("commit"),
];

pub const ROWS: usize = 0;
pub const RECONNECTS: usize = 1;
pub const FAILED_CONNECTS: usize = 2;
/// Queries that changed rows (the driver's write class).
pub const WRITES: usize = 3;
pub const COUNTERS: &[&str] = &["rows", "reconnects", "failed_connects", "writes"];

/// mysqlslap's connection attempts and the pause after each failed one.
const CONNECT_ATTEMPTS: u32 = 10;
const CONNECT_PAUSE: Duration = Duration::from_millis(100);

/// The clients of one iteration.
pub struct SlapClients {
    spec: Arc<SlapSpec>,
    driver: Arc<dyn Driver>,
    console: Console,
    queries: Arc<Vec<Query>>,
    keys: Arc<Keys>,
    limit: u64,
}

impl SlapClients {
    /// `driver` connects to the schema; `limit` is each client's number of queries (0: walk
    /// the list once).
    pub fn new(
        spec: Arc<SlapSpec>,
        driver: Arc<dyn Driver>,
        console: Console,
        queries: Arc<Vec<Query>>,
        keys: Arc<Keys>,
        limit: u64,
    ) -> Self {
        SlapClients {
            spec,
            driver,
            console,
            queries,
            keys,
            limit,
        }
    }
}

impl Workload for SlapClients {
    fn kinds(&self) -> &[OpKind] {
        &KINDS
    }
    fn counters(&self) -> &[&'static str] {
        COUNTERS
    }
    fn worker(&self, _thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        Ok(Box::new(Client {
            spec: self.spec.clone(),
            driver: self.driver.clone(),
            dialect: self.driver.dialect(),
            console: self.console.clone(),
            queries: self.queries.clone(),
            keys: self.keys.clone(),
            limit: self.limit,
            conn: None,
            lines: self.console.only_print.then(String::new),
            sql: String::new(),
        }))
    }
}

struct Client {
    spec: Arc<SlapSpec>,
    driver: Arc<dyn Driver>,
    dialect: Dialect,
    console: Console,
    queries: Arc<Vec<Query>>,
    keys: Arc<Keys>,
    limit: u64,
    conn: Option<Box<dyn Connection>>,
    /// `--only-print`: this client's lines, printed together when it ends (every client
    /// prints the same statements, so the output does not depend on how threads interleave).
    lines: Option<String>,
    sql: String,
}

/// How a step of a client ended when it did not fail the run.
enum Flow {
    Go,
    /// The client leaves (it could not connect, or the run is stopping).
    Leave,
}

impl Client {
    /// Connect (nothing to connect under `--only-print`), as mysqlslap's clients do.
    fn connect(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<Flow, WorkloadError> {
        self.conn = None;
        if !self.spec.only_print {
            let start = Stamp::now();
            let mut last: Option<DriverError> = None;
            for _ in 0..CONNECT_ATTEMPTS {
                match self.open() {
                    Ok(c) => {
                        self.conn = Some(c);
                        last = None;
                        break;
                    }
                    Err(e) => last = Some(e),
                }
                if ctx.stopping() {
                    break;
                }
                std::thread::sleep(CONNECT_PAUSE);
            }
            if let Some(e) = last {
                let (code, text) = connect_text(self.dialect, &e);
                let code = code.map(|c| format!("{c} ")).unwrap_or_default();
                self.console
                    .error(&format!("Error when connecting to server: {code}{text}"));
                ctx.add(FAILED_CONNECTS, 1);
                return Ok(Flow::Leave);
            }
            ctx.record(CONNECT, Ticket::inner(), start, Stamp::now());
        }
        if self.console.verbose >= 3 {
            match &mut self.lines {
                Some(b) => b.push_str("connected!\n"),
                None => self.console.write("connected!\n"),
            }
        }
        Ok(Flow::Go)
    }

    fn open(&self) -> Result<Box<dyn Connection>, DriverError> {
        let mut c = self.driver.connect()?;
        if let Some(init) = &self.spec.init_command {
            c.execute_plain(init, &[])?;
        }
        // Where the schema is not part of the connection (PostgreSQL), make it current.
        if self.dialect == Dialect::Pgsql {
            if let Some(sql) = super::dialect::use_schema(self.dialect, &self.spec.schema) {
                c.execute_plain(&sql, &[])?;
            }
        }
        Ok(c)
    }

    fn run(&mut self, sql: &str) -> Result<Outcome, SlapError> {
        self.console.statement(sql, self.lines.as_mut());
        match &mut self.conn {
            Some(c) => c
                .execute_plain(sql, &[])
                .map_err(|e| SlapError::ClientQuery {
                    sql: sql.to_string(),
                    message: server_message(&e),
                }),
            None => Ok(Outcome::Changed(0)),
        }
    }

    /// Turn autocommit off (MySQL) or open the first transaction.
    fn start_transactions(&mut self) -> Result<(), SlapError> {
        if self.dialect == Dialect::Mysql {
            return self.run("SET AUTOCOMMIT=0").map(|_| ());
        }
        self.begin()
    }

    fn begin(&mut self) -> Result<(), SlapError> {
        self.console.statement("BEGIN", self.lines.as_mut());
        match &mut self.conn {
            Some(c) => c
                .begin(TxIntent::Write)
                .map_err(|e| SlapError::ClientQuery {
                    sql: "BEGIN".into(),
                    message: server_message(&e),
                }),
            None => Ok(()),
        }
    }

    /// COMMIT; elsewhere than MySQL a new transaction follows unless this is the last.
    fn commit(&mut self, ctx: &mut WorkerCtx<'_>, last: bool) -> Result<(), SlapError> {
        let start = Stamp::now();
        if self.dialect == Dialect::Mysql {
            self.run("COMMIT")?;
        } else {
            self.console.statement("COMMIT", self.lines.as_mut());
            if let Some(c) = &mut self.conn {
                c.commit().map_err(|e| SlapError::ClientQuery {
                    sql: "COMMIT".into(),
                    message: server_message(&e),
                })?;
            }
            if !last {
                self.begin()?;
            }
        }
        ctx.record(COMMIT, Ticket::inner(), start, Stamp::now());
        Ok(())
    }

    fn walk(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        if let Flow::Leave = self.connect(ctx)? {
            return Ok(());
        }
        let commit_every = self.spec.commit;
        if commit_every > 0 {
            self.start_transactions().map_err(WorkloadError::new)?;
        }
        let mut since_commit = 0u32;
        let mut done = 0u64;
        let queries = self.queries.clone();
        let keys = self.keys.clone();
        'walks: loop {
            for (i, q) in queries.iter().enumerate() {
                let detach = self.spec.detach;
                if !self.spec.only_print && detach > 0 && i % detach as usize == 0 {
                    self.conn = None;
                    ctx.add(super::client::RECONNECTS, 1);
                    if let Flow::Leave = self.connect(ctx)? {
                        return Ok(());
                    }
                }
                let Some(ticket) = ctx.next_event() else {
                    return Ok(());
                };
                let mut sql = std::mem::take(&mut self.sql);
                sql.clear();
                sql.push_str(&q.text);
                if q.keyed && !keys.is_empty() {
                    let k = keys.get(ctx.rng.below(keys.len() as u64) as usize);
                    sql.push_str(" '");
                    sql.push_str(k);
                    sql.push('\'');
                }
                let start = Stamp::now();
                let out = self.run(&sql);
                let end = Stamp::now();
                self.sql = sql;
                let out = out.map_err(WorkloadError::new)?;
                ctx.record(QUERY, ticket, start, end);
                match out {
                    Outcome::Rows(n) => ctx.add(ROWS, n),
                    o if o.class() == QueryClass::Write => ctx.add(WRITES, 1),
                    _ => {}
                }
                done += 1;
                if commit_every > 0 {
                    since_commit += 1;
                    if since_commit == commit_every {
                        since_commit = 0;
                        self.commit(ctx, false).map_err(WorkloadError::new)?;
                    }
                }
                if self.limit > 0 && done == self.limit {
                    break 'walks;
                }
            }
            if !(self.limit > 0 && done < self.limit) || queries.is_empty() {
                break;
            }
        }
        if commit_every > 0 {
            self.commit(ctx, true).map_err(WorkloadError::new)?;
        }
        Ok(())
    }
}

impl Worker for Client {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        let r = self.walk(ctx);
        if let Some(lines) = self.lines.take() {
            self.console.write(&lines);
        }
        self.conn = None;
        r
    }
}
