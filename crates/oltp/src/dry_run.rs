//! sysbench's `--mysql-dry-run`: the client does all its own work (drawing the parameters,
//! binding them, writing the text of a statement where it is sent as text) and sends
//! nothing. Every statement succeeds at once with no result set and no row changed, so
//! every query counts as "other", as sysbench's dry run counts them: what is left is the
//! client's own cost per statement.

use crate::driver::{Connection, Dialect, Driver, DriverError, Outcome, StmtId, TxIntent, Value};

/// A MySQL driver that connects to nothing.
pub struct DryRun;

impl Driver for DryRun {
    fn name(&self) -> &'static str {
        "mysql"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(Box::new(DryConnection { prepared: 0 }))
    }
    fn dry_run(&self) -> bool {
        true
    }
}

struct DryConnection {
    prepared: usize,
}

impl Connection for DryConnection {
    fn prepare(&mut self, _sql: &str) -> Result<StmtId, DriverError> {
        self.prepared += 1;
        Ok(StmtId(self.prepared - 1))
    }
    fn execute(&mut self, _stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        // The parameters are made and bound, as a dry run's client makes them.
        std::hint::black_box(params);
        Ok(Outcome::Changed(0))
    }
    fn execute_plain(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Outcome, DriverError> {
        std::hint::black_box((sql, params));
        Ok(Outcome::Changed(0))
    }
    fn column(&mut self, _sql: &str, _each: &mut dyn FnMut(&str)) -> Result<u64, DriverError> {
        Ok(0)
    }
    fn begin(&mut self, _intent: TxIntent) -> Result<(), DriverError> {
        Ok(())
    }
    fn commit(&mut self) -> Result<(), DriverError> {
        Ok(())
    }
    fn rollback(&mut self) -> Result<(), DriverError> {
        Ok(())
    }
}
