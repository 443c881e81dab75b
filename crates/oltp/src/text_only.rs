//! sysbench's `--db-ps-mode=disable`: every statement goes to the server as text, with its
//! parameters written into it by the client, the way sysbench emulates prepared statements.
//! A wrapper around any driver, so each driver needs no second code path.

use std::sync::Arc;

use crate::driver::{
    rewrite_placeholders, Connection, Dialect, Driver, DriverError, ErrorClass, Outcome,
    ServerCounters, StmtId, TxIntent, Value,
};
use crate::settings::DatabaseSettings;

pub struct TextOnly {
    inner: Arc<dyn Driver>,
}

impl TextOnly {
    pub fn new(inner: Arc<dyn Driver>) -> Self {
        TextOnly { inner }
    }
}

impl TextOnly {
    fn wrap(&self, inner: Box<dyn Connection>) -> Box<dyn Connection> {
        Box::new(TextConnection {
            inner,
            dialect: self.inner.dialect(),
            sql: Vec::new(),
            text: String::new(),
        })
    }
}

impl Driver for TextOnly {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(self.wrap(self.inner.connect()?))
    }
    fn observer(&self) -> Result<Box<dyn Connection>, DriverError> {
        Ok(self.wrap(self.inner.observer()?))
    }
    fn settings(&self) -> Option<DatabaseSettings> {
        self.inner.settings()
    }
    fn counters(&self) -> Option<ServerCounters> {
        self.inner.counters()
    }
    fn dry_run(&self) -> bool {
        self.inner.dry_run()
    }
}

struct TextConnection {
    inner: Box<dyn Connection>,
    dialect: Dialect,
    /// Each "prepared" statement, cut at its placeholders once.
    sql: Vec<Template>,
    /// The statement being written, reused.
    text: String,
}

/// A statement's text in the pieces between its placeholders (outside quotes): one more
/// piece than placeholders. Writing a statement is then a copy of each piece and each
/// value, with no scan of its text per execution.
struct Template {
    pieces: Vec<String>,
}

impl Template {
    fn new(sql: &str) -> Template {
        let mut pieces = Vec::new();
        let mut piece = String::new();
        let _ = rewrite_placeholders(sql, &mut piece, |piece, _| {
            pieces.push(std::mem::take(piece));
            Ok(())
        });
        pieces.push(piece);
        Template { pieces }
    }

    fn write(
        &self,
        out: &mut String,
        values: &[Value<'_>],
        dialect: Dialect,
    ) -> Result<(), DriverError> {
        let (last, before) = self.pieces.split_last().expect("a template has a piece");
        if values.len() != before.len() {
            return Err(count_mismatch(values.len()));
        }
        out.clear();
        for (piece, v) in before.iter().zip(values) {
            out.push_str(piece);
            literal(out, v, dialect);
        }
        out.push_str(last);
        Ok(())
    }
}

/// `v` as an SQL literal.
fn literal(out: &mut String, v: &Value<'_>, dialect: Dialect) {
    match v {
        Value::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Text(s) => {
            out.push('\'');
            // MySQL reads a backslash as an escape; PostgreSQL and SQLite (standard
            // strings) do not. sysbench's strings have neither quote nor backslash: copied
            // whole.
            let escaped = |b: u8| b == b'\'' || (b == b'\\' && dialect == Dialect::Mysql);
            if !s.bytes().any(escaped) {
                out.push_str(s);
            } else {
                for c in s.chars() {
                    match c {
                        '\'' => out.push_str("''"),
                        '\\' if dialect == Dialect::Mysql => out.push_str("\\\\"),
                        c => out.push(c),
                    }
                }
            }
            out.push('\'');
        }
    }
}

/// `sql` with each `?` outside quotes replaced by the next value as a literal.
pub fn inline(
    out: &mut String,
    sql: &str,
    values: &[Value<'_>],
    dialect: Dialect,
) -> Result<(), DriverError> {
    Template::new(sql).write(out, values, dialect)
}

fn count_mismatch(given: usize) -> DriverError {
    DriverError::new(
        ErrorClass::Fatal,
        None,
        format!("the statement's placeholders do not match the {given} parameters given"),
    )
}

impl Connection for TextConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DriverError> {
        self.sql.push(Template::new(sql));
        Ok(StmtId(self.sql.len() - 1))
    }
    fn execute(&mut self, stmt: StmtId, values: &[Value<'_>]) -> Result<Outcome, DriverError> {
        let sql = self.sql.get(stmt.0).ok_or_else(|| {
            DriverError::new(
                ErrorClass::Fatal,
                None,
                "statement not prepared on this connection",
            )
        })?;
        sql.write(&mut self.text, values, self.dialect)?;
        self.inner.execute_plain(&self.text, &[])
    }
    fn execute_plain(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Outcome, DriverError> {
        inline(&mut self.text, sql, values, self.dialect)?;
        self.inner.execute_plain(&self.text, &[])
    }
    fn column(&mut self, sql: &str, each: &mut dyn FnMut(&str)) -> Result<u64, DriverError> {
        self.inner.column(sql, each)
    }
    fn begin(&mut self, intent: TxIntent) -> Result<(), DriverError> {
        self.inner.begin(intent)
    }
    fn commit(&mut self) -> Result<(), DriverError> {
        self.inner.commit()
    }
    fn rollback(&mut self) -> Result<(), DriverError> {
        self.inner.rollback()
    }
    fn server_settings(&mut self) -> Option<DatabaseSettings> {
        self.inner.server_settings()
    }
    fn server_counters(&mut self) -> Option<ServerCounters> {
        self.inner.server_counters()
    }
    fn server_pid(&self) -> Option<u32> {
        self.inner.server_pid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_literals_outside_quotes() {
        let mut s = String::new();
        inline(
            &mut s,
            "UPDATE t SET c=? WHERE id=? AND x='?'",
            &[Value::Text("it's a\\b"), Value::Int(-7)],
            Dialect::Mysql,
        )
        .unwrap();
        assert_eq!(s, "UPDATE t SET c='it''s a\\\\b' WHERE id=-7 AND x='?'");
        inline(&mut s, "SELECT ?", &[Value::Text("a\\b")], Dialect::Pgsql).unwrap();
        assert_eq!(s, "SELECT 'a\\b'");
        assert!(inline(&mut s, "SELECT ?", &[], Dialect::Pgsql).is_err());
        assert!(inline(&mut s, "SELECT 1", &[Value::Int(1)], Dialect::Pgsql).is_err());
    }
}
