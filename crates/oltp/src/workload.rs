//! sysbench 1.0's OLTP tests as a `plumb_core::Workload`.
//!
//! One event is one transaction (for the autocommit tests, one statement; for bulk_insert,
//! one row appended). Every statement is also recorded as a part of its own kind, and counted
//! the way sysbench's SQL statistics count queries: a result set is a read, rows changed
//! without a result set a write, anything else (BEGIN, COMMIT, an UPDATE that matched
//! nothing) other.
//!
//! Each query group picks its own table uniformly; ids and k come from `rand_type` over
//! [1, table_size], as in oltp_common.lua.
//!
//! Errors, as sysbench handles them but counted right: an ignorable error rolls the
//! transaction back and runs the event again from the start with new values, inside the
//! same latency; it counts one ignored error, and the statements of the rolled-back attempt
//! are neither counted nor recorded (sysbench counts them). Statements that committed on
//! their own (autocommit, `skip_trx`) stay counted. A lost connection (when the driver
//! classes it so) reconnects every millisecond until it works or the run stops, prepares
//! everything again and counts a reconnect. Any other error stops the worker with one line
//! naming the statement kind, the table and the server's message.

use std::sync::Arc;
use std::time::Duration;

use plumb_core::clock::Stamp;
use plumb_core::random::{Distribution, Rng};
use plumb_core::{KindId, OpKind, Ticket, Worker, WorkerCtx, Workload, WorkloadError};

use crate::driver::{
    Connection, Dialect, Driver, DriverError, ErrorClass, QueryClass, StmtId, TxIntent, Value,
};
use crate::error::OltpError;
use crate::prepare::BULK_PACKET_SIZE;
use crate::schema::{self, C_GROUPS, PAD_GROUPS};
use crate::spec::{OltpSpec, Test};
use crate::statements::{random_points_sql, random_ranges_sql, Stmt};
use crate::unique::UniqueIds;

/// The event kind: every test's first operation kind.
pub const EVENT: KindId = 0;

pub const READS: usize = 0;
pub const WRITES: usize = 1;
pub const OTHER: usize = 2;
pub const TRANSACTIONS: usize = 3;
pub const IGNORED_ERRORS: usize = 4;
pub const RECONNECTS: usize = 5;
pub const COUNTERS: &[&str] = &[
    "reads",
    "writes",
    "other",
    "transactions",
    "ignored_errors",
    "reconnects",
];

/// After the run has stopped (bulk_insert's last flush), how often a statement refused with
/// an ignorable error is tried again before the worker gives up: there is no stop to wait
/// for any more, so the retries need a bound of their own.
const FINISH_ATTEMPTS: u32 = 100;

/// How long to wait between connection attempts after a lost connection (sysbench's 1 ms).
const RECONNECT_PAUSE: Duration = Duration::from_millis(1);

/// The statement kinds `spec`'s test runs, in report order.
pub fn statement_kinds(spec: &OltpSpec) -> Vec<Stmt> {
    use Stmt::*;
    let trx = !spec.skip_trx;
    let ranges: &[Stmt] = if spec.range_selects {
        &[SimpleRange, SumRange, OrderRange, DistinctRange]
    } else {
        &[]
    };
    let mut v = Vec::new();
    match spec.test {
        Test::OltpReadWrite | Test::OltpReadOnly => {
            v.push(PointSelect);
            v.extend_from_slice(ranges);
            if spec.test == Test::OltpReadWrite {
                v.extend_from_slice(&[IndexUpdate, NonIndexUpdate, Delete, Insert]);
            }
        }
        Test::OltpWriteOnly => v.extend_from_slice(&[IndexUpdate, NonIndexUpdate, Delete, Insert]),
        Test::OltpPointSelect => v.push(PointSelect),
        Test::OltpUpdateIndex => v.push(IndexUpdate),
        Test::OltpUpdateNonIndex => v.push(NonIndexUpdate),
        Test::OltpDelete => v.push(Delete),
        Test::OltpInsert => v.push(Insert),
        Test::BulkInsert => v.push(BulkInsert),
        Test::SelectRandomPoints => v.push(RandomPoints),
        Test::SelectRandomRanges => v.push(RandomRanges),
    }
    if trx && is_transactional(spec.test) {
        v.extend_from_slice(&[Begin, Commit]);
    }
    v
}

fn is_transactional(test: Test) -> bool {
    matches!(
        test,
        Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly
    )
}

/// The statements prepared once per table (oltp_insert's INSERT is sent as plain text).
fn per_table_statements(spec: &OltpSpec) -> Vec<Stmt> {
    // The legacy oltp.lua sends every statement as text.
    if spec.test == Test::OltpInsert || spec.legacy_event() {
        return Vec::new();
    }
    statement_kinds(spec)
        .into_iter()
        .filter(|s| s.table_sql(1).is_some())
        .collect()
}

/// One OLTP test, ready to run against `driver`.
pub struct Oltp {
    spec: Arc<OltpSpec>,
    driver: Arc<dyn Driver>,
    kinds: Vec<OpKind>,
    kind_of: [Option<KindId>; Stmt::COUNT],
    unique: Arc<UniqueIds>,
    end_failures: EndFailures,
}

/// Threads' end-of-run failures that were counted, not fatal.
pub type EndFailures = Arc<std::sync::Mutex<Vec<OltpError>>>;

impl Oltp {
    /// `seed` seeds the ids oltp_insert makes without auto-increment (shared by all threads).
    pub fn new(spec: OltpSpec, driver: Arc<dyn Driver>, seed: u64) -> Result<Self, OltpError> {
        spec.check_run(driver.dialect())?;
        let event = if spec.test == Test::BulkInsert {
            "row"
        } else {
            "transaction"
        };
        let mut kinds = vec![OpKind::event(event)];
        let mut kind_of = [None; Stmt::COUNT];
        for s in statement_kinds(&spec) {
            kind_of[s.index()] = Some(kinds.len());
            kinds.push(OpKind::part(s.name()));
        }
        Ok(Oltp {
            spec: Arc::new(spec),
            driver,
            kinds,
            kind_of,
            unique: Arc::new(UniqueIds::new(seed)),
            end_failures: Default::default(),
        })
    }

    /// Where the threads keep end-of-run failures that did not fail the run.
    pub fn end_failures(&self) -> EndFailures {
        self.end_failures.clone()
    }

    pub fn spec(&self) -> &OltpSpec {
        &self.spec
    }

    /// The operation kind a statement kind is recorded under, if the test runs it.
    pub fn kind_of(&self, s: Stmt) -> Option<KindId> {
        self.kind_of[s.index()]
    }
}

impl Workload for Oltp {
    fn kinds(&self) -> &[OpKind] {
        &self.kinds
    }
    fn counters(&self) -> &[&'static str] {
        COUNTERS
    }
    fn worker(&self, _thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        let conn = self
            .driver
            .connect()
            .map_err(|e| WorkloadError::new(OltpError::Connect(e)))?;
        let mut w = OltpWorker {
            spec: self.spec.clone(),
            driver: self.driver.clone(),
            dialect: self.driver.dialect(),
            conn,
            prepared: Prepared::default(),
            book: Book {
                kind_of: self.kind_of,
                in_tx: false,
                pending: Vec::new(),
                tally: [0; 3],
            },
            ids: (self.spec.table_size > 0).then(|| {
                Distribution::shaped(
                    self.spec.rand_type,
                    &self.spec.rand_shape,
                    1,
                    self.spec.table_size,
                )
            }),
            slice: None,
            c: String::with_capacity(schema::C_LEN),
            pad: String::with_capacity(schema::PAD_LEN),
            sql: String::new(),
            params: Vec::new(),
            unique: self.unique.clone(),
            bulk: Bulk::default(),
            end_failures: self.end_failures.clone(),
        };
        w.prepared = prepare_all(w.conn.as_mut(), &w.spec).map_err(fatal)?;
        Ok(Box::new(w))
    }
}

/// The statements a client of the run prepares, in the order sysbench's thread_init
/// prepares them: each statement kind on every table in turn (plumb's own clients go table
/// by table, see [`prepare_all`]).
fn script_statements(spec: &OltpSpec) -> Vec<String> {
    match spec.test {
        Test::SelectRandomPoints => vec![random_points_sql(spec.random_points)],
        Test::SelectRandomRanges => vec![random_ranges_sql(spec.number_of_ranges)],
        _ => per_table_statements(spec)
            .into_iter()
            .flat_map(|s| (1..=spec.tables).filter_map(move |t| s.table_sql(t)))
            .collect(),
    }
}

/// The errors `conn`'s database gives for the statements a client of the run prepares
/// (sysbench's order), the ones it refuses only.
pub(crate) fn refused_statements(conn: &mut dyn Connection, spec: &OltpSpec) -> Vec<DriverError> {
    script_statements(spec)
        .iter()
        .filter_map(|sql| conn.prepare(sql).err())
        .collect()
}

/// The statements prepared on one connection.
#[derive(Default)]
struct Prepared {
    /// Per table (index t-1), per statement kind.
    tables: Vec<[Option<StmtId>; Stmt::COUNT]>,
    /// select_random_points / select_random_ranges.
    random: Option<StmtId>,
}

/// A statement that failed on its way up: what it was and why.
struct Failed {
    what: String,
    error: DriverError,
    stmt: Option<Stmt>,
}

fn fatal(f: Failed) -> WorkloadError {
    WorkloadError::new(OltpError::Statement {
        what: f.what,
        error: f.error,
        stmt: f.stmt,
    })
}

/// `e` (an INSERT's failure) with its cause: the transactions skipped.
fn unguarded_error(e: WorkloadError, threads: usize) -> WorkloadError {
    match e.0.downcast::<OltpError>() {
        Ok(error) => WorkloadError::new(OltpError::Unguarded { error, threads }),
        Err(other) => WorkloadError(other),
    }
}

fn failed(stmt: Stmt, table: Option<u32>) -> impl FnOnce(DriverError) -> Failed {
    move |error| Failed {
        what: match table {
            Some(t) => format!("{} on sbtest{t}", stmt.words()),
            None => stmt.words().to_string(),
        },
        error,
        stmt: Some(stmt),
    }
}

fn prepare_all(conn: &mut dyn Connection, spec: &OltpSpec) -> Result<Prepared, Failed> {
    let kinds = per_table_statements(spec);
    let mut p = Prepared::default();
    for t in 1..=spec.tables {
        let mut row = [None; Stmt::COUNT];
        for &s in &kinds {
            if let Some(sql) = s.table_sql(t) {
                row[s.index()] = Some(conn.prepare(&sql).map_err(failed(s, Some(t)))?);
            }
        }
        p.tables.push(row);
    }
    p.random = match spec.test {
        Test::SelectRandomPoints => Some(
            conn.prepare(&random_points_sql(spec.random_points))
                .map_err(failed(Stmt::RandomPoints, None))?,
        ),
        Test::SelectRandomRanges => Some(
            conn.prepare(&random_ranges_sql(spec.number_of_ranges))
                .map_err(failed(Stmt::RandomRanges, None))?,
        ),
        _ => None,
    };
    Ok(p)
}

/// Where a worker's statements are counted: at once outside a transaction, at COMMIT
/// inside one (so a rolled-back attempt leaves no trace but its ignored error).
struct Book {
    kind_of: [Option<KindId>; Stmt::COUNT],
    in_tx: bool,
    pending: Vec<(KindId, Stamp, Stamp)>,
    /// Reads, writes, other of the open transaction.
    tally: [u64; 3],
}

fn counter_of(c: QueryClass) -> usize {
    match c {
        QueryClass::Read => READS,
        QueryClass::Write => WRITES,
        QueryClass::Other => OTHER,
    }
}

impl Book {
    fn note(&mut self, ctx: &mut WorkerCtx<'_>, s: Stmt, start: Stamp, end: Stamp, c: QueryClass) {
        let Some(k) = self.kind_of[s.index()] else {
            return;
        };
        if self.in_tx {
            self.pending.push((k, start, end));
            self.tally[counter_of(c)] += 1;
        } else {
            ctx.record(k, Ticket::inner(), start, end);
            ctx.add(counter_of(c), 1);
        }
    }

    fn settle(&mut self, ctx: &mut WorkerCtx<'_>) {
        for (k, s, e) in self.pending.drain(..) {
            ctx.record(k, Ticket::inner(), s, e);
        }
        for (i, n) in self.tally.iter_mut().enumerate() {
            if *n > 0 {
                ctx.add(i, *n);
                *n = 0;
            }
        }
    }

    fn discard(&mut self) {
        self.pending.clear();
        self.tally = [0; 3];
        self.in_tx = false;
    }
}

/// bulk_insert's statement buffer.
#[derive(Default)]
struct Bulk {
    buf: String,
    rows: u64,
    /// Rows appended so far by this thread; each row is `(n,n)`.
    next: u64,
}

/// How long to keep trying after an ignorable error or a lost connection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Patience {
    UntilStop,
    Attempts(u32),
}

impl OltpSpec {
    /// The first statement the legacy event sends ([`OltpWorker::legacy_event`]'s order:
    /// BEGIN unless skipped, point selects and ranges when reading, updates and the delete
    /// when writing); None when it sends none. The legacy script's threads connect there,
    /// so a front end places a failed connection at it.
    pub fn legacy_first_statement(&self) -> Option<Stmt> {
        let reads = self.test != Test::OltpWriteOnly;
        let writes = self.test != Test::OltpReadOnly;
        let ranges = reads && self.range_selects;
        [
            (Stmt::Begin, !self.skip_trx),
            (Stmt::PointSelect, reads && self.point_selects > 0),
            (Stmt::SimpleRange, ranges && self.simple_ranges > 0),
            (Stmt::SumRange, ranges && self.sum_ranges > 0),
            (Stmt::OrderRange, ranges && self.order_ranges > 0),
            (Stmt::DistinctRange, ranges && self.distinct_ranges > 0),
            (Stmt::IndexUpdate, writes && self.index_updates > 0),
            (Stmt::NonIndexUpdate, writes && self.non_index_updates > 0),
            (Stmt::Delete, writes && self.delete_inserts > 0),
        ]
        .into_iter()
        .find_map(|(stmt, sent)| sent.then_some(stmt))
    }
}

struct OltpWorker {
    spec: Arc<OltpSpec>,
    driver: Arc<dyn Driver>,
    dialect: Dialect,
    conn: Box<dyn Connection>,
    prepared: Prepared,
    book: Book,
    /// ids and k over [1, table_size]; none when the table size is 0 (bulk_insert).
    ids: Option<Distribution>,
    /// select_random_*: this thread's share of k.
    slice: Option<Distribution>,
    c: String,
    pad: String,
    sql: String,
    params: Vec<Value<'static>>,
    unique: Arc<UniqueIds>,
    bulk: Bulk,
    end_failures: EndFailures,
}

/// Run one statement and note it.
#[allow(clippy::too_many_arguments)]
fn exec(
    conn: &mut dyn Connection,
    book: &mut Book,
    ctx: &mut WorkerCtx<'_>,
    s: Stmt,
    t: Option<u32>,
    id: StmtId,
    params: &[Value<'_>],
) -> Result<(), Failed> {
    let start = Stamp::now();
    let out = conn.execute(id, params).map_err(failed(s, t))?;
    book.note(ctx, s, start, Stamp::now(), out.class());
    Ok(())
}

fn draw(d: &Option<Distribution>, rng: &mut Rng) -> i64 {
    // check_run refuses an empty table size for every test that draws ids.
    d.as_ref().map_or(0, |d| d.sample(rng) as i64)
}

impl OltpWorker {
    fn table(&self, ctx: &mut WorkerCtx<'_>) -> u32 {
        ctx.rng.below(u64::from(self.spec.tables)) as u32 + 1
    }

    fn stmt(&self, t: u32, s: Stmt) -> Result<StmtId, Failed> {
        self.prepared
            .tables
            .get(t as usize - 1)
            .and_then(|row| row[s.index()])
            .ok_or_else(|| {
                failed(s, Some(t))(DriverError::new(
                    ErrorClass::Fatal,
                    None,
                    "statement was not prepared",
                ))
            })
    }

    fn id(&self, ctx: &mut WorkerCtx<'_>) -> i64 {
        draw(&self.ids, &mut ctx.rng)
    }

    fn begin(&mut self, ctx: &mut WorkerCtx<'_>, intent: TxIntent) -> Result<(), Failed> {
        let start = Stamp::now();
        self.conn.begin(intent).map_err(failed(Stmt::Begin, None))?;
        self.book.in_tx = true;
        self.book
            .note(ctx, Stmt::Begin, start, Stamp::now(), QueryClass::Other);
        Ok(())
    }

    fn commit(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let start = Stamp::now();
        self.conn.commit().map_err(failed(Stmt::Commit, None))?;
        self.book
            .note(ctx, Stmt::Commit, start, Stamp::now(), QueryClass::Other);
        self.book.in_tx = false;
        Ok(())
    }

    fn point_selects(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let t = self.table(ctx);
        let st = self.stmt(t, Stmt::PointSelect)?;
        for _ in 0..self.spec.effective_point_selects() {
            let id = self.id(ctx);
            let p = [Value::Int(id)];
            exec(
                self.conn.as_mut(),
                &mut self.book,
                ctx,
                Stmt::PointSelect,
                Some(t),
                st,
                &p,
            )?;
        }
        Ok(())
    }

    fn ranges(&mut self, ctx: &mut WorkerCtx<'_>, s: Stmt, n: u32) -> Result<(), Failed> {
        let t = self.table(ctx);
        let st = self.stmt(t, s)?;
        for _ in 0..n {
            let x = self.id(ctx);
            // x + range_size - 1: check() keeps the sum inside i64.
            let p = [
                Value::Int(x),
                Value::Int(x + self.spec.range_size as i64 - 1),
            ];
            exec(self.conn.as_mut(), &mut self.book, ctx, s, Some(t), st, &p)?;
        }
        Ok(())
    }

    fn index_updates(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let t = self.table(ctx);
        let st = self.stmt(t, Stmt::IndexUpdate)?;
        for _ in 0..self.spec.index_updates {
            let p = [Value::Int(self.id(ctx))];
            exec(
                self.conn.as_mut(),
                &mut self.book,
                ctx,
                Stmt::IndexUpdate,
                Some(t),
                st,
                &p,
            )?;
        }
        Ok(())
    }

    fn non_index_updates(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let t = self.table(ctx);
        let st = self.stmt(t, Stmt::NonIndexUpdate)?;
        for _ in 0..self.spec.non_index_updates {
            schema::random_digits(&mut self.c, C_GROUPS, &mut ctx.rng);
            let id = self.id(ctx);
            let p = [Value::Text(&self.c), Value::Int(id)];
            let s = Stmt::NonIndexUpdate;
            exec(self.conn.as_mut(), &mut self.book, ctx, s, Some(t), st, &p)?;
        }
        Ok(())
    }

    fn delete_inserts(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let t = self.table(ctx);
        let del = self.stmt(t, Stmt::Delete)?;
        let ins = self.stmt(t, Stmt::Insert)?;
        for _ in 0..self.spec.delete_inserts {
            let id = self.id(ctx);
            let k = self.id(ctx);
            schema::random_digits(&mut self.c, C_GROUPS, &mut ctx.rng);
            schema::random_digits(&mut self.pad, PAD_GROUPS, &mut ctx.rng);
            let conn = self.conn.as_mut();
            exec(
                conn,
                &mut self.book,
                ctx,
                Stmt::Delete,
                Some(t),
                del,
                &[Value::Int(id)],
            )?;
            let p = [
                Value::Int(id),
                Value::Int(k),
                Value::Text(&self.c),
                Value::Text(&self.pad),
            ];
            exec(conn, &mut self.book, ctx, Stmt::Insert, Some(t), ins, &p)?;
        }
        Ok(())
    }

    fn single_delete(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let t = self.table(ctx);
        let st = self.stmt(t, Stmt::Delete)?;
        let p = [Value::Int(self.id(ctx))];
        exec(
            self.conn.as_mut(),
            &mut self.book,
            ctx,
            Stmt::Delete,
            Some(t),
            st,
            &p,
        )
    }

    /// oltp_insert: one INSERT sent as text, with the id as oltp_insert.lua chooses it.
    fn plain_insert(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        use std::fmt::Write as _;
        let t = self.table(ctx);
        let k = self.id(ctx);
        schema::random_digits(&mut self.c, C_GROUPS, &mut ctx.rng);
        schema::random_digits(&mut self.pad, PAD_GROUPS, &mut ctx.rng);
        self.sql.clear();
        let (c, pad) = (&self.c, &self.pad);
        // Writing to a String cannot fail.
        let _ = if self.spec.auto_inc && schema::insert_omits_auto_id(self.dialect) {
            write!(
                self.sql,
                "INSERT INTO sbtest{t} (k, c, pad) VALUES ({k}, '{c}', '{pad}')"
            )
        } else {
            // MySQL assigns an id for 0; without auto-increment a unique 32-bit value is
            // shifted into INT's range.
            let id = if self.spec.auto_inc {
                0
            } else {
                i64::from(self.unique.next()) - (1i64 << 31)
            };
            write!(
                self.sql,
                "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{c}', '{pad}')"
            )
        };
        let start = Stamp::now();
        let out = self
            .conn
            .execute_plain(&self.sql, &[])
            .map_err(failed(Stmt::Insert, Some(t)))?;
        self.book
            .note(ctx, Stmt::Insert, start, Stamp::now(), out.class());
        Ok(())
    }

    /// select_random_points / select_random_ranges: values from this thread's slice of k.
    fn random_select(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        let (s, n) = match self.spec.test {
            Test::SelectRandomPoints => (Stmt::RandomPoints, self.spec.random_points),
            _ => (Stmt::RandomRanges, self.spec.number_of_ranges),
        };
        let st = self.prepared.random.ok_or_else(|| {
            failed(s, None)(DriverError::new(
                ErrorClass::Fatal,
                None,
                "statement was not prepared",
            ))
        })?;
        self.params.clear();
        for _ in 0..n {
            let v = draw(&self.slice, &mut ctx.rng);
            self.params.push(Value::Int(v));
            if s == Stmt::RandomRanges {
                self.params.push(Value::Int(v + self.spec.delta as i64));
            }
        }
        exec(
            self.conn.as_mut(),
            &mut self.book,
            ctx,
            s,
            Some(1),
            st,
            &self.params,
        )
    }

    /// Send `self.sql` as text and note it as `s` on sbtest<t>.
    fn plain(&mut self, ctx: &mut WorkerCtx<'_>, s: Stmt, t: u32) -> Result<(), Failed> {
        let start = Stamp::now();
        let out = self
            .conn
            .execute_plain(&self.sql, &[])
            .map_err(failed(s, Some(t)))?;
        self.book.note(ctx, s, start, Stamp::now(), out.class());
        Ok(())
    }

    /// MyISAM under the legacy script: every table locked for writing instead of BEGIN
    /// (the script compares the engine name as given, so only a lower-case `myisam`).
    fn legacy_locks(&self) -> bool {
        self.dialect == Dialect::Mysql && self.spec.mysql_storage_engine == "myisam"
    }

    /// One event of sysbench 1.0.20's oltp_legacy/oltp.lua: one uniformly chosen table for
    /// the whole transaction, every statement built as text with its values in it, in
    /// 1.0's order and counts.
    fn legacy_event(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        use std::fmt::Write as _;
        let spec = self.spec.clone();
        let reads = spec.test != Test::OltpWriteOnly;
        let writes = spec.test != Test::OltpReadOnly;
        let t = self.table(ctx);
        let locks = self.legacy_locks();
        if !spec.skip_trx {
            if locks {
                self.sql.clear();
                self.sql.push_str("LOCK TABLES ");
                for i in 1..=spec.tables {
                    // table.concat(tables, " ,"): the separator is " ,", not ", ".
                    let sep = if i == 1 { "" } else { " ," };
                    let _ = write!(self.sql, "{sep}sbtest{i} WRITE");
                }
                self.plain(ctx, Stmt::Begin, t)?;
                self.book.in_tx = true;
            } else {
                let intent = if writes {
                    TxIntent::Write
                } else {
                    TxIntent::Read
                };
                self.begin(ctx, intent)?;
            }
        }
        if reads {
            for _ in 0..spec.point_selects {
                let id = self.id(ctx);
                self.sql.clear();
                let _ = write!(self.sql, "SELECT c FROM sbtest{t} WHERE id={id}");
                self.plain(ctx, Stmt::PointSelect, t)?;
            }
            if spec.range_selects {
                let kinds = [
                    (Stmt::SimpleRange, "SELECT c", "", spec.simple_ranges),
                    (Stmt::SumRange, "SELECT SUM(K)", "", spec.sum_ranges),
                    (
                        Stmt::OrderRange,
                        "SELECT c",
                        " ORDER BY c",
                        spec.order_ranges,
                    ),
                    (
                        Stmt::DistinctRange,
                        "SELECT DISTINCT c",
                        " ORDER BY c",
                        spec.distinct_ranges,
                    ),
                ];
                for (s, what, tail, n) in kinds {
                    for _ in 0..n {
                        // get_range_str(): the end computed, not written as x+99 (0.5's).
                        let x = self.id(ctx);
                        let end = x + spec.range_size as i64 - 1;
                        self.sql.clear();
                        let _ = write!(
                            self.sql,
                            "{what} FROM sbtest{t} WHERE id BETWEEN {x} AND {end}{tail}"
                        );
                        self.plain(ctx, s, t)?;
                    }
                }
            }
        }
        if writes {
            for _ in 0..spec.index_updates {
                let id = self.id(ctx);
                self.sql.clear();
                let _ = write!(self.sql, "UPDATE sbtest{t} SET k=k+1 WHERE id={id}");
                self.plain(ctx, Stmt::IndexUpdate, t)?;
            }
            for _ in 0..spec.non_index_updates {
                schema::random_digits(&mut self.c, C_GROUPS, &mut ctx.rng);
                let id = self.id(ctx);
                self.sql.clear();
                let c = &self.c;
                let _ = write!(self.sql, "UPDATE sbtest{t} SET c='{c}' WHERE id={id}");
                self.plain(ctx, Stmt::NonIndexUpdate, t)?;
            }
            for _ in 0..spec.delete_inserts {
                let id = self.id(ctx);
                self.sql.clear();
                let _ = write!(self.sql, "DELETE FROM sbtest{t} WHERE id={id}");
                self.plain(ctx, Stmt::Delete, t)?;
                schema::random_digits(&mut self.c, C_GROUPS, &mut ctx.rng);
                schema::random_digits(&mut self.pad, PAD_GROUPS, &mut ctx.rng);
                let k = self.id(ctx);
                self.sql.clear();
                let (c, pad) = (&self.c, &self.pad);
                let _ = write!(
                    self.sql,
                    "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{c}', '{pad}')"
                );
                self.plain(ctx, Stmt::Insert, t)?;
            }
        }
        if !spec.skip_trx {
            if locks {
                self.sql.clear();
                self.sql.push_str("UNLOCK TABLES");
                self.plain(ctx, Stmt::Commit, t)?;
                self.book.in_tx = false;
            } else {
                self.commit(ctx)?;
            }
        }
        Ok(())
    }

    fn event(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Failed> {
        if self.spec.legacy_event() {
            return self.legacy_event(ctx);
        }
        // The spec's fields copied, not the Arc cloned: a clone per event is two atomic
        // updates of its count.
        let (test, skip_trx, range_selects) =
            (self.spec.test, self.spec.skip_trx, self.spec.range_selects);
        match test {
            Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly => {
                let reads = test != Test::OltpWriteOnly;
                let writes = test != Test::OltpReadOnly;
                if !skip_trx {
                    let intent = if writes {
                        TxIntent::Write
                    } else {
                        TxIntent::Read
                    };
                    self.begin(ctx, intent)?;
                }
                if reads {
                    self.point_selects(ctx)?;
                    if range_selects {
                        self.ranges(ctx, Stmt::SimpleRange, self.spec.simple_ranges)?;
                        self.ranges(ctx, Stmt::SumRange, self.spec.sum_ranges)?;
                        self.ranges(ctx, Stmt::OrderRange, self.spec.order_ranges)?;
                        self.ranges(ctx, Stmt::DistinctRange, self.spec.distinct_ranges)?;
                    }
                }
                if writes {
                    self.index_updates(ctx)?;
                    self.non_index_updates(ctx)?;
                    self.delete_inserts(ctx)?;
                }
                if !skip_trx {
                    self.commit(ctx)?;
                }
                Ok(())
            }
            Test::OltpPointSelect => self.point_selects(ctx),
            Test::OltpUpdateIndex => self.index_updates(ctx),
            Test::OltpUpdateNonIndex => self.non_index_updates(ctx),
            Test::OltpDelete => self.single_delete(ctx),
            Test::OltpInsert => self.plain_insert(ctx),
            Test::SelectRandomPoints | Test::SelectRandomRanges => self.random_select(ctx),
            // bulk_insert has its own loop.
            Test::BulkInsert => Ok(()),
        }
    }

    /// Undo what a failed attempt left: roll back an open transaction (not on a connection
    /// that is gone) and forget its statements.
    fn abandon(&mut self, class: ErrorClass) -> Result<(), WorkloadError> {
        if self.book.in_tx && class != ErrorClass::Reconnect {
            if let Err(e) = self.conn.rollback() {
                if e.class == ErrorClass::Fatal {
                    return Err(WorkloadError::new(OltpError::Statement {
                        what: "rollback".to_string(),
                        error: e,
                        stmt: None,
                    }));
                }
            }
        }
        self.book.discard();
        Ok(())
    }

    /// Connect again and prepare everything again. False when the run stopped (or the
    /// attempts ran out) first.
    fn reconnect(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        patience: Patience,
    ) -> Result<bool, WorkloadError> {
        let mut attempts = 0u32;
        loop {
            match patience {
                Patience::UntilStop if ctx.stopping() => return Ok(false),
                Patience::Attempts(n) if attempts >= n => return Ok(false),
                _ => {}
            }
            attempts += 1;
            match self.driver.connect() {
                Ok(c) => {
                    self.conn = c;
                    self.book.discard();
                    match prepare_all(self.conn.as_mut(), &self.spec) {
                        Ok(p) => {
                            self.prepared = p;
                            ctx.add(RECONNECTS, 1);
                            return Ok(true);
                        }
                        Err(f) if f.error.class == ErrorClass::Fatal => return Err(fatal(f)),
                        Err(_) => {}
                    }
                }
                Err(e) if e.class == ErrorClass::Fatal => {
                    return Err(WorkloadError::new(OltpError::Connect(e)))
                }
                Err(_) => {}
            }
            std::thread::sleep(RECONNECT_PAUSE);
        }
    }

    /// What to do after a failed attempt: Ok(true) to try again, Ok(false) to stop quietly.
    fn recover(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        f: Failed,
        patience: Patience,
    ) -> Result<bool, WorkloadError> {
        self.abandon(f.error.class)?;
        match f.error.class {
            ErrorClass::Fatal => Err(fatal(f)),
            ErrorClass::Ignorable => {
                ctx.add(IGNORED_ERRORS, 1);
                Ok(patience == Patience::UntilStop && !ctx.stopping()
                    || matches!(patience, Patience::Attempts(_)))
            }
            ErrorClass::Reconnect => self.reconnect(ctx, patience),
        }
    }

    /// Whether `f` is the INSERT of a delete/insert pair finding its id taken while the
    /// statements run without transactions and other threads run the same pairs.
    fn unguarded(&self, ctx: &WorkerCtx<'_>, f: &Failed) -> bool {
        self.spec.skip_trx
            && ctx.threads > 1
            && self.spec.test != Test::OltpInsert
            && f.stmt == Some(Stmt::Insert)
            && f.error.is_duplicate_key()
    }

    fn run_bulk(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        use std::fmt::Write as _;
        let head = format!("INSERT INTO sbtest{} VALUES", ctx.thread + 1);
        let mut row = String::new();
        while let Some(tk) = ctx.next_event() {
            let start = Stamp::now();
            if self.bulk.buf.is_empty() {
                self.bulk.buf.push_str(&head);
            }
            self.bulk.next += 1;
            row.clear();
            let _ = write!(row, "({n},{n})", n = self.bulk.next);
            let comma = usize::from(self.bulk.rows > 0);
            if self.bulk.rows > 0 && self.bulk.buf.len() + row.len() + 1 + comma > BULK_PACKET_SIZE
            {
                if !self.flush_bulk(ctx, Patience::UntilStop)? {
                    return Ok(());
                }
                self.bulk.buf.push_str(&head);
            }
            if self.bulk.rows > 0 {
                self.bulk.buf.push(',');
            }
            self.bulk.buf.push_str(&row);
            self.bulk.rows += 1;
            ctx.add(TRANSACTIONS, 1);
            ctx.record(EVENT, tk, start, Stamp::now());
        }
        Ok(())
    }

    /// Send bulk_insert's buffer. False when it could not be sent before the run stopped.
    fn flush_bulk(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        patience: Patience,
    ) -> Result<bool, WorkloadError> {
        if self.bulk.rows == 0 {
            return Ok(true);
        }
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let start = Stamp::now();
            match self.conn.execute_plain(&self.bulk.buf, &[]) {
                Ok(out) => {
                    self.book
                        .note(ctx, Stmt::BulkInsert, start, Stamp::now(), out.class());
                    self.bulk.buf.clear();
                    self.bulk.rows = 0;
                    return Ok(true);
                }
                Err(e) => {
                    // After the run (the last flush), an id already in the table stays
                    // there however often the rows are sent again.
                    let hopeless =
                        matches!(patience, Patience::Attempts(_)) && e.is_duplicate_key();
                    let f = failed(Stmt::BulkInsert, Some(ctx.thread as u32 + 1))(e);
                    let out_of_attempts =
                        matches!(patience, Patience::Attempts(n) if attempts >= n);
                    if out_of_attempts || hopeless {
                        return Err(fatal(f));
                    }
                    if !self.recover(ctx, f, patience)? {
                        return Ok(false);
                    }
                }
            }
        }
    }
}

impl Worker for OltpWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        if self.spec.test == Test::BulkInsert {
            return self.run_bulk(ctx);
        }
        if self.spec.test.is_select_random() {
            // sysbench splits k into one slice per thread so the threads' reads do not
            // overlap: [rlen * t, rlen * t + rlen] with rlen = table_size / threads in Lua's
            // floating point, truncated to integers when handed to the generator.
            let rlen = self.spec.table_size as f64 / ctx.threads.max(1) as f64;
            let lo = (rlen * ctx.thread as f64) as u64;
            let hi = (rlen * ctx.thread as f64 + rlen) as u64;
            self.slice = Some(Distribution::shaped(
                self.spec.rand_type,
                &self.spec.rand_shape,
                lo,
                hi.max(lo),
            ));
        }
        while let Some(tk) = ctx.next_event() {
            let start = Stamp::now();
            loop {
                match self.event(ctx) {
                    Ok(()) => break,
                    Err(f) => {
                        let unguarded = self.unguarded(ctx, &f);
                        match self.recover(ctx, f, Patience::UntilStop) {
                            Ok(true) => {}
                            Ok(false) => return Ok(()),
                            Err(e) if unguarded => return Err(unguarded_error(e, ctx.threads)),
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
            self.book.settle(ctx);
            ctx.add(TRANSACTIONS, 1);
            ctx.record(EVENT, tk, start, Stamp::now());
        }
        Ok(())
    }

    fn finish(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        if self.spec.test != Test::BulkInsert {
            return Ok(());
        }
        // sysbench's thread_done sends the last rows once: a refusal, even one its driver
        // ignores (PostgreSQL's 23505 from a table that already holds the ids), ends it
        // with one ignored error and no retry.
        let attempts = if self.spec.end_failures_counted {
            1
        } else {
            FINISH_ATTEMPTS
        };
        let Err(e) = self.flush_bulk(ctx, Patience::Attempts(attempts)) else {
            return Ok(());
        };
        if !self.spec.end_failures_counted {
            // Said as the last flush's failure, not the run's: the report before it stands.
            return Err(match e.0.downcast::<OltpError>() {
                Ok(e) => WorkloadError::new(OltpError::AtEnd(e)),
                Err(other) => WorkloadError(other),
            });
        }
        // sysbench counts the failed query and logs thread_done's failure; the run and its
        // report go on.
        ctx.add(IGNORED_ERRORS, 1);
        let e = e.0.downcast::<OltpError>().map_err(WorkloadError)?;
        if let Ok(mut kept) = self.end_failures.lock() {
            kept.push(OltpError::AtEnd(e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod legacy_tests {
    //! The legacy oltp.lua's events (sysbench 1.0.20's tests/include/oltp_legacy/oltp.lua),
    //! through the logging driver.
    use super::*;
    use crate::testdriver::LogDriver;
    use plumb_core::{run, RunConfig, StopFlag};

    fn events(spec: OltpSpec, dialect: Dialect, n: u64) -> (Vec<String>, Vec<u64>) {
        let d = Arc::new(LogDriver::new(dialect));
        let w = Arc::new(Oltp::new(spec, d.clone(), 1).unwrap());
        let cfg = RunConfig {
            threads: 1,
            time_limit: None,
            event_limit: n,
            seed: 3,
            ..RunConfig::default()
        };
        let out = run(w, &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
        let mut c = vec![0; COUNTERS.len()];
        for t in &out.threads {
            for (i, v) in t.counters.iter().enumerate() {
                c[i] += v;
            }
        }
        assert_eq!(d.shared.prepared.lock().unwrap().iter().sum::<usize>(), 0);
        (d.sql(), c)
    }

    /// The first statement a legacy event sends is the one
    /// [`OltpSpec::legacy_first_statement`] names, whatever the options leave out.
    #[test]
    fn the_first_statement_is_the_one_named() {
        let kind = |sql: &str| {
            let s = sql.trim_start_matches("FAIL ");
            if s.starts_with("BEGIN") || s.starts_with("LOCK TABLES") {
                Stmt::Begin
            } else if s.starts_with("SELECT SUM(K)") {
                Stmt::SumRange
            } else if s.starts_with("SELECT DISTINCT") {
                Stmt::DistinctRange
            } else if s.starts_with("SELECT c") && s.contains(" ORDER BY ") {
                Stmt::OrderRange
            } else if s.starts_with("SELECT c") && s.contains(" BETWEEN ") {
                Stmt::SimpleRange
            } else if s.starts_with("SELECT c") {
                Stmt::PointSelect
            } else if s.starts_with("UPDATE") && s.contains("k=k+1") {
                Stmt::IndexUpdate
            } else if s.starts_with("UPDATE") {
                Stmt::NonIndexUpdate
            } else if s.starts_with("DELETE") {
                Stmt::Delete
            } else {
                panic!("unknown statement: {s}")
            }
        };
        type Tweak = fn(&mut OltpSpec);
        let tweaks: [Tweak; 8] = [
            |_| {},
            |s| s.skip_trx = true,
            |s| {
                s.skip_trx = true;
                s.point_selects = 0;
            },
            |s| {
                s.skip_trx = true;
                s.point_selects = 0;
                s.range_selects = false;
            },
            |s| {
                s.skip_trx = true;
                s.point_selects = 0;
                s.simple_ranges = 0;
            },
            |s| {
                s.skip_trx = true;
                s.point_selects = 0;
                s.simple_ranges = 0;
                s.sum_ranges = 0;
                s.order_ranges = 0;
            },
            |s| {
                s.skip_trx = true;
                s.test = Test::OltpWriteOnly;
                s.index_updates = 0;
            },
            |s| {
                s.skip_trx = true;
                s.test = Test::OltpWriteOnly;
                s.index_updates = 0;
                s.non_index_updates = 0;
            },
        ];
        for (i, tweak) in tweaks.iter().enumerate() {
            let mut spec = legacy(Test::OltpReadWrite, 1);
            tweak(&mut spec);
            let named = spec.legacy_first_statement();
            let (sql, _) = events(spec, Dialect::Mysql, 1);
            assert_eq!(named, sql.first().map(|s| kind(s)), "tweak {i}: {sql:?}");
        }
    }

    fn legacy(test: Test, tables: u32) -> OltpSpec {
        let mut s = OltpSpec::new(test);
        s.legacy_script = true;
        s.tables = tables;
        s.table_size = 1000;
        s
    }

    /// The text with its numbers and strings masked, and the table it names.
    fn shape(sql: &str) -> (String, Option<String>) {
        let table = sql
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| w.starts_with("sbtest"))
            .map(String::from);
        let mut out = String::new();
        let mut in_str = false;
        let mut prev_digit = false;
        for ch in sql.chars() {
            if ch == '\'' {
                in_str = !in_str;
                if in_str {
                    out.push_str("'S'");
                }
                continue;
            }
            if in_str {
                continue;
            }
            let digit = ch.is_ascii_digit();
            if digit && !prev_digit {
                out.push('N');
            } else if !digit {
                out.push(ch);
            }
            prev_digit = digit;
        }
        (out, table)
    }

    #[test]
    fn one_table_per_event_in_plain_text() {
        let (sql, c) = events(legacy(Test::OltpReadWrite, 8), Dialect::Mysql, 50);
        assert_eq!(sql.len(), 50 * 20);
        let want = [
            // The logging driver writes the transaction's intent after BEGIN.
            vec!["BEGIN WRITE"],
            vec!["SELECT c FROM sbtestN WHERE id=N"; 10],
            vec!["SELECT c FROM sbtestN WHERE id BETWEEN N AND N"],
            vec!["SELECT SUM(K) FROM sbtestN WHERE id BETWEEN N AND N"],
            vec!["SELECT c FROM sbtestN WHERE id BETWEEN N AND N ORDER BY c"],
            vec!["SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN N AND N ORDER BY c"],
            vec!["UPDATE sbtestN SET k=k+N WHERE id=N"],
            vec!["UPDATE sbtestN SET c='S' WHERE id=N"],
            vec!["DELETE FROM sbtestN WHERE id=N"],
            vec!["INSERT INTO sbtestN (id, k, c, pad) VALUES (N, N, 'S', 'S')"],
            vec!["COMMIT"],
        ]
        .concat();
        let mut used = std::collections::BTreeSet::new();
        for ev in sql.chunks(20) {
            let shapes: Vec<_> = ev.iter().map(|s| shape(s)).collect();
            let texts: Vec<_> = shapes.iter().map(|(s, _)| s.as_str()).collect();
            assert_eq!(texts, want, "{ev:?}");
            let tables: std::collections::BTreeSet<_> =
                shapes.iter().filter_map(|(_, t)| t.clone()).collect();
            assert_eq!(tables.len(), 1, "one table per event: {ev:?}");
            used.extend(tables);
            // The range end is written out: x + range_size - 1.
            let r: Vec<i64> = ev[11]
                .rsplit(' ')
                .take(3)
                .filter_map(|w| w.parse().ok())
                .collect();
            assert_eq!(r[0] - r[1], 99, "{}", ev[11]);
            // The insert reuses the deleted id.
            let del = ev[17].rsplit('=').next().unwrap();
            assert!(ev[18].contains(&format!("VALUES ({del}, ")), "{ev:?}");
        }
        assert!(used.len() > 1, "tables drawn per event: {used:?}");
        assert_eq!(&c[..4], &[50 * 14, 50 * 4, 50 * 2, 50]);
    }

    #[test]
    fn myisam_locks_every_table() {
        let mut spec = legacy(Test::OltpReadWrite, 3);
        spec.mysql_storage_engine = "myisam".into();
        let (sql, c) = events(spec.clone(), Dialect::Mysql, 2);
        assert_eq!(
            sql[0],
            "LOCK TABLES sbtest1 WRITE ,sbtest2 WRITE ,sbtest3 WRITE"
        );
        assert_eq!(sql[19], "UNLOCK TABLES");
        assert_eq!(sql[20], sql[0]);
        assert_eq!(&c[..4], &[28, 8, 4, 2]);
        // Only MySQL locks; elsewhere the engine name means nothing.
        let (sql, _) = events(spec, Dialect::Pgsql, 1);
        assert!(sql[0].starts_with("BEGIN"), "{}", sql[0]);
    }

    #[test]
    fn options_keep_their_meaning() {
        let mut ro = legacy(Test::OltpReadOnly, 2);
        ro.range_size = 10;
        ro.point_selects = 2;
        let (sql, c) = events(ro, Dialect::Pgsql, 3);
        assert_eq!(sql.len(), 3 * 8);
        assert_eq!(&c[..4], &[18, 0, 6, 3]);
        let ranged: Vec<i64> = sql[3]
            .rsplit(' ')
            .take(3)
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(ranged[0] - ranged[1], 9, "{}", sql[3]);
        let mut wo = legacy(Test::OltpWriteOnly, 1);
        wo.skip_trx = true;
        wo.range_selects = false;
        let (sql, c) = events(wo, Dialect::Sqlite, 2);
        assert_eq!(sql.len(), 8);
        assert!(sql[0].starts_with("UPDATE sbtest1 SET k=k+1 WHERE id="));
        assert_eq!(&c[..4], &[0, 8, 0, 2]);
    }
}
