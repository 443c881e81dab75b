//! The statements of sysbench 1.0's OLTP scripts, one kind per statement shape.

use std::fmt::Write as _;

/// One statement kind, as the workload records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    Begin,
    Commit,
    RandomPoints,
    RandomRanges,
    BulkInsert,
}

impl Stmt {
    pub const COUNT: usize = 14;

    pub fn index(self) -> usize {
        self as usize
    }

    /// The operation kind's name in results.
    pub fn name(self) -> &'static str {
        match self {
            Stmt::PointSelect => "point_select",
            Stmt::SimpleRange => "simple_range",
            Stmt::SumRange => "sum_range",
            Stmt::OrderRange => "order_range",
            Stmt::DistinctRange => "distinct_range",
            Stmt::IndexUpdate => "index_update",
            Stmt::NonIndexUpdate => "non_index_update",
            Stmt::Delete => "delete",
            Stmt::Insert => "insert",
            Stmt::Begin => "begin",
            Stmt::Commit => "commit",
            Stmt::RandomPoints => "random_points",
            Stmt::RandomRanges => "random_ranges",
            Stmt::BulkInsert => "bulk_insert",
        }
    }

    /// The kind in words, for error lines.
    pub fn words(self) -> &'static str {
        match self {
            Stmt::PointSelect => "point select",
            Stmt::SimpleRange => "simple range select",
            Stmt::SumRange => "sum range select",
            Stmt::OrderRange => "order range select",
            Stmt::DistinctRange => "distinct range select",
            Stmt::IndexUpdate => "index update",
            Stmt::NonIndexUpdate => "non-index update",
            Stmt::Delete => "delete",
            Stmt::Insert => "insert",
            Stmt::Begin => "begin",
            Stmt::Commit => "commit",
            Stmt::RandomPoints => "random points select",
            Stmt::RandomRanges => "random ranges select",
            Stmt::BulkInsert => "bulk insert",
        }
    }

    /// The prepared SQL of a per-table statement on sbtest<t>; `None` for the kinds that are
    /// not one statement per table.
    pub fn table_sql(self, t: u32) -> Option<String> {
        Some(match self {
            Stmt::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Stmt::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Stmt::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Stmt::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Stmt::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Stmt::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Stmt::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Stmt::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Stmt::Insert => {
                format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)")
            }
            _ => return None,
        })
    }
}

// The select_random_* scripts write their statement over several indented lines; the
// server gets that text as it is (a PostgreSQL error points into it by line).

/// select_random_points: `n` placeholders in one IN list on sbtest1.
pub fn random_points_sql(n: u32) -> String {
    let mut s = String::from(
        "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (",
    );
    for i in 0..n {
        s.push_str(if i == 0 { "?" } else { ", ?" });
    }
    s.push_str(")\n        ");
    s
}

/// select_random_ranges: `n` k ranges OR-ed together on sbtest1.
pub fn random_ranges_sql(n: u32) -> String {
    let mut s = String::from("        SELECT count(k)\n          FROM sbtest1\n          WHERE ");
    for i in 0..n {
        let _ = write!(s, "{}k BETWEEN ? AND ?", if i == 0 { "" } else { " OR " });
    }
    s
}

// Every kind has a slot in the per-kind tables.
const _: () = assert!(Stmt::BulkInsert as usize + 1 == Stmt::COUNT);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_text_is_the_reference_s() {
        let want = [
            (Stmt::PointSelect, "SELECT c FROM sbtest3 WHERE id=?"),
            (
                Stmt::SimpleRange,
                "SELECT c FROM sbtest3 WHERE id BETWEEN ? AND ?",
            ),
            (
                Stmt::SumRange,
                "SELECT SUM(k) FROM sbtest3 WHERE id BETWEEN ? AND ?",
            ),
            (
                Stmt::OrderRange,
                "SELECT c FROM sbtest3 WHERE id BETWEEN ? AND ? ORDER BY c",
            ),
            (
                Stmt::DistinctRange,
                "SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN ? AND ? ORDER BY c",
            ),
            (Stmt::IndexUpdate, "UPDATE sbtest3 SET k=k+1 WHERE id=?"),
            (Stmt::NonIndexUpdate, "UPDATE sbtest3 SET c=? WHERE id=?"),
            (Stmt::Delete, "DELETE FROM sbtest3 WHERE id=?"),
            (
                Stmt::Insert,
                "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)",
            ),
        ];
        for (s, sql) in want {
            assert_eq!(s.table_sql(3).as_deref(), Some(sql));
        }
        assert_eq!(Stmt::Begin.table_sql(1), None);
        assert_eq!(
            random_points_sql(3),
            "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (?, ?, ?)\n        "
        );
        assert_eq!(
            random_ranges_sql(2),
            "        SELECT count(k)\n          FROM sbtest1\n          WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
    }
}
