//! Where mysqlslap's SQL is MySQL's own, what runs instead on SQLite and PostgreSQL.
//!
//! On MySQL everything is mysqlslap's text. Elsewhere:
//!
//! | mysqlslap (MySQL)                  | SQLite                         | PostgreSQL                     |
//! |------------------------------------|--------------------------------|--------------------------------|
//! | ``DROP SCHEMA IF EXISTS `s` ``     | drop every table and view      | `DROP SCHEMA IF EXISTS "s" CASCADE` |
//! | ``CREATE SCHEMA `s` ``, select it  | (the database file is the schema) | `CREATE SCHEMA "s"`, `SET search_path TO "s"` |
//! | `` `t1` ``                         | `` `t1` ``                     | `"t1"`                         |
//! | `id serial`, NULL inserted         | `id INTEGER PRIMARY KEY`, NULL | `id serial`, DEFAULT           |
//! | `INT(32)`                          | `INT(32)`                      | `INT`                          |
//! | `unique key`                       | `unique`                       | `unique`                       |
//! | `uuid()`                           | 36 random hex digits and dashes | `gen_random_uuid()::text`     |
//! | `SET AUTOCOMMIT=0` ... `COMMIT`    | `BEGIN` ... `COMMIT`, `BEGIN`  | `BEGIN` ... `COMMIT`, `BEGIN`  |
//!
//! Statements given with `--create`, `--query`, `--pre-query` and `--post-query` are the
//! user's and run as they are.

use crate::driver::Dialect;

/// An identifier quoted in the dialect.
pub fn quote(d: Dialect, name: &str) -> String {
    match d {
        Dialect::Mysql | Dialect::Sqlite => format!("`{}`", name.replace('`', "``")),
        Dialect::Pgsql => format!("\"{}\"", name.replace('"', "\"\"")),
    }
}

pub fn serial_column(d: Dialect) -> &'static str {
    match d {
        // An alias of the rowid: a NULL inserted takes the next number.
        Dialect::Sqlite => "id INTEGER PRIMARY KEY",
        Dialect::Mysql | Dialect::Pgsql => "id serial",
    }
}

/// What an INSERT gives the serial column.
pub fn next_serial(d: Dialect) -> &'static str {
    match d {
        Dialect::Pgsql => "DEFAULT",
        Dialect::Mysql | Dialect::Sqlite => "NULL",
    }
}

pub fn unique_key(d: Dialect) -> &'static str {
    match d {
        Dialect::Mysql => "unique key",
        Dialect::Sqlite | Dialect::Pgsql => "unique",
    }
}

pub fn int_type(d: Dialect) -> &'static str {
    match d {
        Dialect::Pgsql => "INT",
        Dialect::Mysql | Dialect::Sqlite => "INT(32)",
    }
}

/// A new UUID as text, computed by the database as MySQL's uuid() is.
pub fn uuid(d: Dialect) -> &'static str {
    match d {
        Dialect::Mysql => "uuid()",
        Dialect::Sqlite => {
            "lower(hex(randomblob(4))||'-'||hex(randomblob(2))||'-'||hex(randomblob(2))||'-'||hex(randomblob(2))||'-'||hex(randomblob(6)))"
        }
        Dialect::Pgsql => "gen_random_uuid()::text",
    }
}

/// The statements that drop the schema, when they do not depend on what it holds (SQLite's
/// do: see [`sqlite_drop`]).
pub fn drop_schema(d: Dialect, schema: &str) -> Option<String> {
    match d {
        Dialect::Mysql => Some(format!("DROP SCHEMA IF EXISTS {}", quote(d, schema))),
        Dialect::Pgsql => Some(format!(
            "DROP SCHEMA IF EXISTS {} CASCADE",
            quote(d, schema)
        )),
        Dialect::Sqlite => None,
    }
}

pub fn create_schema(d: Dialect, schema: &str) -> Option<String> {
    match d {
        Dialect::Mysql | Dialect::Pgsql => Some(format!("CREATE SCHEMA {}", quote(d, schema))),
        Dialect::Sqlite => None,
    }
}

/// What makes the schema the current one on a connection.
pub fn use_schema(d: Dialect, schema: &str) -> Option<String> {
    match d {
        Dialect::Mysql => Some(format!("USE {}", quote(d, schema))),
        Dialect::Pgsql => Some(format!("SET search_path TO {}", quote(d, schema))),
        Dialect::Sqlite => None,
    }
}

/// SQLite's objects that dropping the schema removes, as (type, name) rows of sqlite_master.
pub const SQLITE_OBJECTS: &str =
    "SELECT type || ' ' || name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'";

/// The DROP for one row of [`SQLITE_OBJECTS`] (`table t1`).
pub fn sqlite_drop(row: &str) -> Option<String> {
    let (kind, name) = row.split_once(' ')?;
    let kind = match kind {
        "table" => "TABLE",
        "view" => "VIEW",
        _ => return None,
    };
    Some(format!(
        "DROP {kind} IF EXISTS {}",
        quote(Dialect::Sqlite, name)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_statements_per_dialect() {
        assert_eq!(
            drop_schema(Dialect::Mysql, "slap").unwrap(),
            "DROP SCHEMA IF EXISTS `slap`"
        );
        assert_eq!(
            drop_schema(Dialect::Pgsql, "a\"b").unwrap(),
            "DROP SCHEMA IF EXISTS \"a\"\"b\" CASCADE"
        );
        assert_eq!(create_schema(Dialect::Sqlite, "x"), None);
        assert_eq!(
            sqlite_drop("table t1").unwrap(),
            "DROP TABLE IF EXISTS `t1`"
        );
        assert_eq!(sqlite_drop("index i"), None);
    }
}
