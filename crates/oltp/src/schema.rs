//! The sbtest tables: their DDL per dialect, the index on k, and the random c and pad strings.

use plumb_core::random::Rng;

use crate::driver::Dialect;
use crate::spec::OltpSpec;

/// Groups of 11 random digits joined by '-': 10 for c (119 characters in CHAR(120)), 5 for
/// pad (59 in CHAR(60)).
pub const C_GROUPS: usize = 10;
pub const PAD_GROUPS: usize = 5;
const GROUP_DIGITS: usize = 11;

pub const C_LEN: usize = C_GROUPS * (GROUP_DIGITS + 1) - 1;
pub const PAD_LEN: usize = PAD_GROUPS * (GROUP_DIGITS + 1) - 1;

/// Replace `out` with a string of `groups` groups of 11 random digits joined by '-' (the
/// expansion of sysbench's `###########-...` templates, one uniform digit per '#').
pub fn random_digits(out: &mut String, groups: usize, rng: &mut Rng) {
    out.clear();
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        for _ in 0..GROUP_DIGITS {
            out.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
}

pub fn table_name(i: u32) -> String {
    format!("sbtest{i}")
}

/// `CREATE TABLE sbtest<i>` as sysbench writes it for `dialect`: oltp_common.lua's text to
/// the byte (its lines, indentation and trailing blanks), which its errors quote.
pub fn create_table(dialect: Dialect, spec: &OltpSpec, i: u32) -> String {
    let server_table = |id: &str, key: &str, engine: &str| {
        format!(
            "CREATE TABLE sbtest{i}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key} (id)\n) {engine} "
        )
    };
    match dialect {
        Dialect::Mysql => {
            let id = if spec.auto_inc {
                "INTEGER NOT NULL AUTO_INCREMENT"
            } else {
                "INTEGER NOT NULL"
            };
            let key = if spec.secondary {
                "KEY xid"
            } else {
                "PRIMARY KEY"
            };
            let engine = format!("/*! ENGINE = {} */", spec.mysql_storage_engine);
            server_table(id, key, &engine)
        }
        Dialect::Pgsql => {
            let id = if spec.auto_inc {
                "SERIAL"
            } else {
                "INTEGER NOT NULL"
            };
            server_table(id, "PRIMARY KEY", "")
        }
        Dialect::Sqlite => {
            let rest = "k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL";
            // INTEGER PRIMARY KEY makes id the rowid, as InnoDB clusters on the primary key.
            // AUTOINCREMENT keeps MySQL's rule that ids of deleted rows are never handed out
            // again (a plain rowid reuses the largest one).
            let id = if spec.auto_inc {
                "id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT"
            } else {
                "id INTEGER NOT NULL PRIMARY KEY"
            };
            format!("CREATE TABLE sbtest{i}({id}, {rest})")
        }
    }
}

/// `CREATE TABLE sbtest<i>` as sysbench 1.0.20's oltp_legacy/common.lua writes it, line
/// breaks and trailing space included (the server's statement log shows them). MySQL gets
/// 0.5's UNSIGNED columns and the fixed `MAX_ROWS = 1000000` of 1.0's compatibility layer;
/// PostgreSQL gets `SERIAL NOT NULL` whatever `auto_inc` says, as the script does. SQLite,
/// which 0.5 never had, keeps plumb's own table (an UNSIGNED id would not be the rowid).
pub fn create_legacy_table(dialect: Dialect, spec: &OltpSpec, i: u32) -> String {
    let key = if spec.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    let rest = "c CHAR(120) DEFAULT '' NOT NULL,\npad CHAR(60) DEFAULT '' NOT NULL,";
    match dialect {
        Dialect::Mysql => format!(
            "CREATE TABLE sbtest{i} (\nid INTEGER UNSIGNED NOT NULL {},\nk INTEGER UNSIGNED DEFAULT '0' NOT NULL,\n{rest}\n{key} (id)\n) /*! ENGINE = {} MAX_ROWS = 1000000 */ ",
            if spec.auto_inc { "AUTO_INCREMENT" } else { "" },
            spec.mysql_storage_engine
        ),
        Dialect::Pgsql => format!(
            "CREATE TABLE sbtest{i} (\nid SERIAL NOT NULL,\nk INTEGER DEFAULT '0' NOT NULL,\n{rest}\n{key} (id)\n) "
        ),
        Dialect::Sqlite => create_table(dialect, spec, i),
    }
}

/// The secondary index on k, built after the data.
pub fn create_k_index(i: u32) -> String {
    format!("CREATE INDEX k_{i} ON sbtest{i}(k)")
}

/// The legacy script's index statement (lower-case `on`).
pub fn create_legacy_k_index(i: u32) -> String {
    format!("CREATE INDEX k_{i} on sbtest{i}(k)")
}

pub fn drop_table(i: u32) -> String {
    format!("DROP TABLE IF EXISTS sbtest{i}")
}

/// bulk_insert's own table: id and k only, created if missing.
pub fn create_bulk_table(i: u32) -> String {
    // bulk_insert.lua's text to the byte, indentation and all: a refusal quotes it.
    format!(
        "        CREATE TABLE IF NOT EXISTS sbtest{i} (\n          id INTEGER NOT NULL,\n          k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))"
    )
}

/// The head of prepare's multi-row INSERT (no space before the rows, as sysbench sends it).
pub fn load_insert_head(spec: &OltpSpec, i: u32) -> String {
    if spec.auto_inc {
        format!("INSERT INTO sbtest{i}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{i}(id, k, c, pad) VALUES")
    }
}

/// Whether an auto-increment id is left out of oltp_insert's INSERT. MySQL is sent id 0 and
/// assigns one; PostgreSQL's SERIAL and SQLite's rowid need the column left out (SQLite
/// would store the 0).
pub fn insert_omits_auto_id(dialect: Dialect) -> bool {
    dialect != Dialect::Mysql
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Test;

    #[test]
    fn digit_strings_have_sysbench_shape() {
        let mut rng = Rng::new(7, 0);
        let mut s = String::new();
        random_digits(&mut s, C_GROUPS, &mut rng);
        assert_eq!(s.len(), 119);
        assert_eq!(s.len(), C_LEN);
        for (i, g) in s.split('-').enumerate() {
            assert_eq!(g.len(), 11, "group {i} of {s}");
            assert!(g.bytes().all(|b| b.is_ascii_digit()));
        }
        random_digits(&mut s, PAD_GROUPS, &mut rng);
        assert_eq!(s.len(), PAD_LEN);
        assert_eq!(s.split('-').count(), 5);
    }

    #[test]
    fn mysql_ddl_matches_sysbench() {
        let spec = OltpSpec::new(Test::OltpReadWrite);
        assert_eq!(
            create_table(Dialect::Mysql, &spec, 3),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ "
        );
        let mut off = spec.clone();
        off.auto_inc = false;
        off.secondary = true;
        assert!(create_table(Dialect::Mysql, &off, 1)
            .starts_with("CREATE TABLE sbtest1(\n  id INTEGER NOT NULL,\n  k"));
        assert!(create_table(Dialect::Mysql, &off, 1).contains("  KEY xid (id)\n)"));
        // Two blanks at the end: no engine, no table options.
        assert!(create_table(Dialect::Pgsql, &spec, 1)
            .starts_with("CREATE TABLE sbtest1(\n  id SERIAL,\n  k"));
        assert!(create_table(Dialect::Pgsql, &spec, 1).ends_with("  PRIMARY KEY (id)\n)  "));
    }

    #[test]
    fn legacy_ddl_is_the_oltp_legacy_script_s() {
        let spec = OltpSpec::new(Test::OltpReadWrite);
        assert_eq!(
            create_legacy_table(Dialect::Mysql, &spec, 2),
            "CREATE TABLE sbtest2 (\nid INTEGER UNSIGNED NOT NULL AUTO_INCREMENT,\nk INTEGER UNSIGNED DEFAULT '0' NOT NULL,\nc CHAR(120) DEFAULT '' NOT NULL,\npad CHAR(60) DEFAULT '' NOT NULL,\nPRIMARY KEY (id)\n) /*! ENGINE = innodb MAX_ROWS = 1000000 */ "
        );
        assert_eq!(
            create_legacy_table(Dialect::Pgsql, &spec, 1),
            "CREATE TABLE sbtest1 (\nid SERIAL NOT NULL,\nk INTEGER DEFAULT '0' NOT NULL,\nc CHAR(120) DEFAULT '' NOT NULL,\npad CHAR(60) DEFAULT '' NOT NULL,\nPRIMARY KEY (id)\n) "
        );
        assert_eq!(create_legacy_k_index(3), "CREATE INDEX k_3 on sbtest3(k)");
    }
}
