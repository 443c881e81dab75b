//! A driver for tests: it runs nothing, logs every statement with its parameters and the
//! connection that sent it, and fails chosen operations with a chosen class.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use crate::driver::{
    Connection, Dialect, Driver, DriverError, ErrorClass, Outcome, StmtId, TxIntent, Value,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum P {
    I(i64),
    T(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub conn: usize,
    pub sql: String,
    pub params: Vec<P>,
    pub failed: bool,
}

#[derive(Default)]
pub struct Shared {
    pub log: Mutex<Vec<Entry>>,
    /// Operation number (from 1, over all connections) -> the class it fails with.
    pub fail: Mutex<Vec<(u64, ErrorClass)>>,
    pub ops: AtomicU64,
    pub connects: AtomicUsize,
    /// Per connection, how many statements it prepared.
    pub prepared: Mutex<Vec<usize>>,
    /// Rows a write reports as changed.
    pub changed: AtomicU64,
}

pub struct LogDriver {
    pub shared: Arc<Shared>,
    pub dialect: Dialect,
}

impl LogDriver {
    pub fn new(dialect: Dialect) -> Self {
        let shared = Shared::default();
        shared.changed.store(1, SeqCst);
        LogDriver {
            shared: Arc::new(shared),
            dialect,
        }
    }
    pub fn fail_at(&self, op: u64, class: ErrorClass) {
        self.shared.fail.lock().unwrap().push((op, class));
    }
    pub fn log(&self) -> Vec<Entry> {
        self.shared.log.lock().unwrap().clone()
    }
    /// The SQL of every statement that ran (failed ones marked "FAIL ").
    pub fn sql(&self) -> Vec<String> {
        self.log()
            .into_iter()
            .map(|e| {
                if e.failed {
                    format!("FAIL {}", e.sql)
                } else {
                    e.sql
                }
            })
            .collect()
    }
}

struct LogConn {
    id: usize,
    shared: Arc<Shared>,
    stmts: Vec<String>,
}

impl LogConn {
    fn op(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        let n = self.shared.ops.fetch_add(1, SeqCst) + 1;
        let fail = self
            .shared
            .fail
            .lock()
            .unwrap()
            .iter()
            .find(|(at, _)| *at == n)
            .map(|(_, c)| *c);
        self.shared.log.lock().unwrap().push(Entry {
            conn: self.id,
            sql: sql.to_string(),
            params: params
                .iter()
                .map(|p| match p {
                    Value::Int(i) => P::I(*i),
                    Value::Text(s) => P::T(s.to_string()),
                })
                .collect(),
            failed: fail.is_some(),
        });
        if let Some(class) = fail {
            return Err(DriverError::new(
                class,
                Some("42".into()),
                "injected failure",
            ));
        }
        Ok(if sql.starts_with("SELECT") {
            Outcome::Rows(1)
        } else if sql.starts_with("INSERT")
            || sql.starts_with("UPDATE")
            || sql.starts_with("DELETE")
        {
            Outcome::Changed(self.shared.changed.load(SeqCst))
        } else {
            Outcome::Changed(0)
        })
    }
}

impl Connection for LogConn {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DriverError> {
        self.stmts.push(sql.to_string());
        self.shared.prepared.lock().unwrap()[self.id] += 1;
        Ok(StmtId(self.stmts.len() - 1))
    }
    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        let sql = self.stmts[stmt.0].clone();
        self.op(&sql, params)
    }
    fn execute_plain(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        self.op(sql, params)
    }
    fn column(&mut self, sql: &str, _each: &mut dyn FnMut(&str)) -> Result<u64, DriverError> {
        // The log driver has no rows: the statement is logged and reads nothing.
        self.execute_plain(sql, &[]).map(|_| 0)
    }
    fn begin(&mut self, intent: TxIntent) -> Result<(), DriverError> {
        let sql = match intent {
            TxIntent::Read => "BEGIN",
            TxIntent::Write => "BEGIN WRITE",
        };
        self.op(sql, &[]).map(|_| ())
    }
    fn commit(&mut self) -> Result<(), DriverError> {
        self.op("COMMIT", &[]).map(|_| ())
    }
    fn rollback(&mut self) -> Result<(), DriverError> {
        self.op("ROLLBACK", &[]).map(|_| ())
    }
}

impl Driver for LogDriver {
    fn name(&self) -> &'static str {
        "log"
    }
    fn dialect(&self) -> Dialect {
        self.dialect
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        let id = self.shared.connects.fetch_add(1, SeqCst);
        self.shared.prepared.lock().unwrap().push(0);
        Ok(Box::new(LogConn {
            id,
            shared: self.shared.clone(),
            stmts: Vec::new(),
        }))
    }
}
