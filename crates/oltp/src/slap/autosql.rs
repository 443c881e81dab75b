//! The SQL `--auto-generate-sql` builds, text for text as mysqlslap builds it: one table
//! `t1`, the distinct INSERTs its population cycles through, and the query list of the load
//! type. Values come from [`CRandom`] in mysqlslap's order (the INSERTs first, then the
//! queries), so the statements are the same on every run and equal to mysqlslap's.
//!
//! On SQLite and PostgreSQL the same statements are written in their SQL where MySQL's is not
//! theirs (see [`crate::slap::dialect`]); the values are the same.

use crate::driver::Dialect;

use super::crandom::CRandom;
use super::dialect;
use super::{AutoSql, LoadType};

/// Characters of generated strings: digits, capitals without U and V, small letters.
const ALPHANUMERICS: &[u8; 60] = b"0123456789ABCDEFGHIJKLMNOPQRSTWXYZabcdefghijklmnopqrstuvwxyz";

/// Length of every generated string value.
pub const STRING_LEN: usize = 126;

/// A statement of the query list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub text: String,
    /// The text ends in `WHERE id = `: each run appends ` '<a primary key>'`.
    pub keyed: bool,
}

impl Query {
    pub fn plain(text: impl Into<String>) -> Self {
        Query {
            text: text.into(),
            keyed: false,
        }
    }
}

/// Everything generated for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub create_table: String,
    /// The distinct INSERTs of the population.
    pub inserts: Vec<String>,
    pub queries: Vec<Query>,
}

struct Builder<'a> {
    a: &'a AutoSql,
    dialect: Dialect,
    rng: CRandom,
}

impl Builder<'_> {
    fn string(&mut self, out: &mut String) {
        for _ in 0..STRING_LEN {
            out.push(ALPHANUMERICS[(self.rng.random() % 60) as usize] as char);
        }
    }

    fn table(&self) -> String {
        let a = self.a;
        let d = self.dialect;
        let data = a.int_cols > 0 || a.char_cols > 0;
        let mut s = format!("CREATE TABLE {} (", dialect::quote(d, "t1"));
        if a.autoincrement {
            s.push_str(dialect::serial_column(d));
            if data {
                s.push(',');
            }
        }
        if a.guid_primary {
            s.push_str("id varchar(36) primary key");
            // mysqlslap's condition is always true here: a comma even before nothing.
            s.push(',');
        }
        if a.secondary_indexes > 0 {
            for i in 0..a.secondary_indexes {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&format!("id{i} varchar(36) {}", dialect::unique_key(d)));
            }
            if data {
                s.push(',');
            }
        }
        for i in 1..=a.int_cols {
            s.push_str(&format!("intcol{i} {} ", dialect::int_type(d)));
            if i < a.int_cols || a.char_cols > 0 {
                s.push(',');
            }
        }
        for i in 1..=a.char_cols {
            s.push_str(&format!("charcol{i} VARCHAR(128)"));
            if i < a.char_cols {
                s.push(',');
            }
        }
        s.push(')');
        s
    }

    fn insert(&mut self) -> String {
        let (ints, chars) = (self.a.int_cols, self.a.char_cols);
        let data = ints > 0 || chars > 0;
        let d = self.dialect;
        let mut s = String::from("INSERT INTO t1 VALUES (");
        if self.a.autoincrement {
            s.push_str(dialect::next_serial(d));
            if data {
                s.push(',');
            }
        }
        if self.a.guid_primary {
            s.push_str(dialect::uuid(d));
            if data {
                s.push(',');
            }
        }
        if self.a.secondary_indexes > 0 {
            for i in 0..self.a.secondary_indexes {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(dialect::uuid(d));
            }
            if data {
                s.push(',');
            }
        }
        for i in 1..=ints {
            s.push_str(&self.rng.random().to_string());
            if i < ints || chars > 0 {
                s.push(',');
            }
        }
        for i in 1..=chars {
            s.push('\'');
            self.string(&mut s);
            s.push('\'');
            if i < chars {
                s.push(',');
            }
        }
        s.push(')');
        s
    }

    fn update(&mut self) -> Query {
        let (ints, chars) = (self.a.int_cols, self.a.char_cols);
        let mut s = String::from("UPDATE t1 SET ");
        for i in 1..=ints {
            s.push_str(&format!("intcol{i} = {}", self.rng.random()));
            if i < ints || chars > 0 {
                s.push(',');
            }
        }
        for i in 1..=chars {
            s.push_str(&format!("charcol{i} = '"));
            self.string(&mut s);
            s.push('\'');
            if i < chars {
                s.push(',');
            }
        }
        let keyed = self.a.keyed();
        if keyed {
            s.push_str(" WHERE id = ");
        }
        Query { text: s, keyed }
    }

    fn select(&self, key: bool) -> Query {
        let (ints, chars) = (self.a.int_cols, self.a.char_cols);
        let mut s = String::from("SELECT ");
        for i in 1..=ints {
            s.push_str(&format!("intcol{i}"));
            if i < ints || chars > 0 {
                s.push(',');
            }
        }
        for i in 1..=chars {
            s.push_str(&format!("charcol{i}"));
            if i < chars {
                s.push(',');
            }
        }
        s.push_str(" FROM t1");
        let keyed = key && self.a.keyed();
        if keyed {
            s.push_str(" WHERE id = ");
        }
        Query { text: s, keyed }
    }
}

/// Build the table, the population's INSERTs and the query list of `a`, in `dialect`'s SQL.
pub fn generate(a: &AutoSql, dialect: Dialect) -> Generated {
    let mut b = Builder {
        a,
        dialect,
        rng: CRandom::new(),
    };
    let create_table = b.table();
    let inserts = (0..a.unique_write_number).map(|_| b.insert()).collect();
    let n = a.unique_query_number.saturating_add(1);
    let queries = match a.load {
        LoadType::Read => (0..n).map(|_| b.select(false)).collect(),
        LoadType::Key => (0..n).map(|_| b.select(true)).collect(),
        LoadType::Write => (0..n).map(|_| Query::plain(b.insert())).collect(),
        LoadType::Update => (0..n).map(|_| b.update()).collect(),
        // "Every other": an INSERT, then a (keyed when there is a key) SELECT, and so on.
        LoadType::Mixed => (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    Query::plain(b.insert())
                } else {
                    b.select(true)
                }
            })
            .collect(),
    };
    Generated {
        create_table,
        inserts,
        queries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(f: impl FnOnce(&mut AutoSql)) -> Generated {
        let mut a = AutoSql::default();
        f(&mut a);
        generate(&a, Dialect::Mysql)
    }

    #[test]
    fn defaults_are_mysqlslap_s_statements() {
        let g = gen(|_| {});
        assert_eq!(
            g.create_table,
            "CREATE TABLE `t1` (intcol1 INT(32) ,charcol1 VARCHAR(128))"
        );
        assert_eq!(g.inserts.len(), 10);
        assert!(g.inserts[0].starts_with(
            "INSERT INTO t1 VALUES (1804289383,'mxvtvmC9127qJNm06sGB8R92q2j7vTiiITRDGXM9ZLzkd"
        ));
        assert!(g.inserts[0].ends_with("1KQ1lT4zg9rdxBL')"));
        assert!(g.inserts[1].starts_with("INSERT INTO t1 VALUES (822890675,'97RGHZ65"));
        assert_eq!(g.queries.len(), 11);
        assert!(g.queries[0]
            .text
            .starts_with("INSERT INTO t1 VALUES (100669,'qnMdipW5KkXd"));
        assert_eq!(
            g.queries[1],
            Query::plain("SELECT intcol1,charcol1 FROM t1")
        );
        assert!(g.queries[10]
            .text
            .starts_with("INSERT INTO t1 VALUES (364531492,"));
    }

    #[test]
    fn keys_guid_and_secondary_indexes() {
        let g = gen(|a| {
            a.load = LoadType::Key;
            a.guid_primary = true;
            a.secondary_indexes = 2;
            a.char_cols = 0;
            a.unique_write_number = 1;
            a.unique_query_number = 0;
        });
        assert_eq!(
            g.create_table,
            "CREATE TABLE `t1` (id varchar(36) primary key,id0 varchar(36) unique key,\
             id1 varchar(36) unique key,intcol1 INT(32) )"
        );
        assert_eq!(
            g.inserts,
            ["INSERT INTO t1 VALUES (uuid(),uuid(),uuid(),1804289383)"]
        );
        assert_eq!(
            g.queries,
            [Query {
                text: "SELECT intcol1 FROM t1 WHERE id = ".into(),
                keyed: true
            }]
        );
    }

    #[test]
    fn updates_with_and_without_a_key() {
        let g = gen(|a| {
            a.load = LoadType::Update;
            a.int_cols = 2;
            a.unique_write_number = 0;
            a.unique_query_number = 0;
        });
        assert!(g.queries[0]
            .text
            .starts_with("UPDATE t1 SET intcol1 = 1804289383,intcol2 = 846930886,charcol1 = '"));
        assert!(!g.queries[0].keyed);
        let g = gen(|a| {
            a.load = LoadType::Update;
            a.autoincrement = true;
            a.int_cols = 0;
            a.unique_write_number = 1;
            a.unique_query_number = 0;
        });
        assert_eq!(
            g.create_table,
            "CREATE TABLE `t1` (id serial,charcol1 VARCHAR(128))"
        );
        assert!(g.inserts[0].starts_with("INSERT INTO t1 VALUES (NULL,'jmxvtvm"));
        assert!(g.queries[0].text.ends_with("' WHERE id = ") && g.queries[0].keyed);
    }

    #[test]
    fn mixed_alternates_insert_and_keyed_select() {
        let g = gen(|a| {
            a.autoincrement = true;
            a.unique_query_number = 3;
        });
        let kinds: Vec<(bool, bool)> = g
            .queries
            .iter()
            .map(|q| (q.text.starts_with("INSERT"), q.keyed))
            .collect();
        assert_eq!(
            kinds,
            [(true, false), (false, true), (true, false), (false, true)]
        );
    }
}
