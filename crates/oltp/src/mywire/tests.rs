//! The client against the machine's MariaDB over its socket as root (skipped, with a note,
//! when it is not there): results counted through the plain and the compressed protocol,
//! prepared statements, errors.

use std::path::Path;
use std::time::Duration;

use super::{Conn, ConnectOpts, Target, WireError};
use crate::driver::{Outcome, Value};

const SOCKET: &str = "/var/run/mysqld/mysqld.sock";

fn connect(compression: bool) -> Option<Conn> {
    if !Path::new(SOCKET).exists() {
        eprintln!("skipped: no MariaDB at {SOCKET}");
        return None;
    }
    let opts = ConnectOpts {
        target: Target::Socket(Path::new(SOCKET)),
        user: "root",
        password: "",
        // Any database: the sequence engine's tables need one.
        database: Some("mysql"),
        ssl: false,
        ssl_ca: None,
        ssl_optional: false,
        compression,
        connect_timeout: Duration::from_secs(10),
        max_allowed_packet: 1 << 30,
    };
    Some(Conn::connect(&opts).expect("root connects over the socket"))
}

fn first_value(c: &mut Conn, sql: &str) -> Option<String> {
    let mut got = None;
    c.query_each(sql, &mut |row| {
        let mut cols = Vec::new();
        super::text_columns(row, |v| {
            cols.push(v.map(|b| String::from_utf8_lossy(b).into_owned()))
        });
        got = cols.get(1).cloned().flatten();
    })
    .unwrap();
    got
}

#[test]
fn rows_are_counted_through_plain_and_compressed_protocols() {
    for compression in [false, true] {
        let Some(mut c) = connect(compression) else {
            return;
        };
        let on = first_value(&mut c, "SHOW SESSION STATUS LIKE 'Compression'");
        assert_eq!(on.as_deref(), Some(if compression { "ON" } else { "OFF" }));
        // 50 rows of 100 kB: many reads, packets across reads, compressed packets of
        // several rows.
        let out = c
            .query("SELECT REPEAT('x', 100000) FROM seq_1_to_50")
            .unwrap();
        assert_eq!(out, Outcome::Rows(50));
        assert_eq!(
            c.query("SELECT 1 FROM seq_1_to_3 WHERE 0").unwrap(),
            Outcome::Rows(0)
        );
        // Several statements: the first one's result, the others read and dropped.
        assert_eq!(
            c.query("SELECT 1 FROM seq_1_to_7; SELECT 2; DO 1").unwrap(),
            Outcome::Rows(7)
        );
        assert_eq!(c.query("DO 1").unwrap(), Outcome::Changed(0));
        // The connection is in step after all that.
        assert_eq!(
            c.query("SELECT 1 FROM seq_1_to_2").unwrap(),
            Outcome::Rows(2)
        );
    }
}

#[test]
fn prepared_statements_bind_integers_and_text() {
    let Some(mut c) = connect(false) else {
        return;
    };
    let mut st = c
        .prepare("SELECT seq FROM seq_1_to_100 WHERE seq BETWEEN ? AND ? AND ? = 'abc'")
        .unwrap();
    for _ in 0..3 {
        let out = c
            .execute(
                &mut st,
                &[Value::Int(10), Value::Int(19), Value::Text("abc")],
            )
            .unwrap();
        assert_eq!(out, Outcome::Rows(10));
    }
    let out = c
        .execute(
            &mut st,
            &[Value::Int(10), Value::Int(19), Value::Text("abd")],
        )
        .unwrap();
    assert_eq!(out, Outcome::Rows(0));
    let e = c.execute(&mut st, &[Value::Int(1)]).unwrap_err();
    assert_eq!(e.to_string(), "the statement takes 3 parameters, 1 given");
    c.close(st).unwrap();
    // Closed on the server: executing it again is the server's error.
    match c.execute(&mut st, &[Value::Int(1), Value::Int(2), Value::Text("x")]) {
        Err(WireError::Server { code: 1243, .. }) => {}
        other => panic!("{other:?}"),
    }
    let mut tmp = c.prepare("CREATE TEMPORARY TABLE t (a INT)").unwrap();
    assert_eq!(c.execute(&mut tmp, &[]).unwrap(), Outcome::Changed(0));
    let mut ins = c.prepare("INSERT INTO t VALUES (?), (?)").unwrap();
    assert_eq!(
        c.execute(&mut ins, &[Value::Int(1), Value::Int(2)])
            .unwrap(),
        Outcome::Changed(2)
    );
}

#[test]
fn server_errors_keep_the_connection() {
    let Some(mut c) = connect(false) else {
        return;
    };
    match c.query("SELECT * FROM no_such_db.no_such_table") {
        Err(e @ WireError::Server { code: 1146, .. }) => {
            assert!(!e.is_connectivity());
            assert!(e.to_string().starts_with("error 1146 (42S02): "), "{e}");
        }
        other => panic!("{other:?}"),
    }
    match c.prepare("SELEC 1") {
        Err(WireError::Server { code: 1064, .. }) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert_eq!(c.query("SELECT 1").unwrap(), Outcome::Rows(1));
}

#[test]
fn statements_allocate_nothing_once_warm() {
    if !Path::new(SOCKET).exists() {
        eprintln!("skipped: no MariaDB at {SOCKET}");
        return;
    }
    // Through the driver, as the workloads call it.
    let driver = crate::mysql::MysqlDriver::new(crate::mysql::MysqlConfig {
        user: "root".into(),
        database: Some("mysql".into()),
        ..Default::default()
    });
    let mut c = crate::driver::Driver::connect(&driver).unwrap();
    let select = c
        .prepare("SELECT seq, 'abc' FROM seq_1_to_100 WHERE seq BETWEEN ? AND ? + 9")
        .unwrap();
    let write = c.prepare("DO ?").unwrap();
    let mut run = |i: i64| {
        assert_eq!(
            c.execute(select, &[Value::Int(i), Value::Int(i)]).unwrap(),
            Outcome::Rows(10)
        );
        assert_eq!(
            c.execute(write, &[Value::Text("some text")]).unwrap(),
            Outcome::Changed(0)
        );
    };
    for i in 1..10 {
        run(i);
    }
    let before = crate::alloc_count::allocations();
    for i in 1..=80 {
        run(i);
    }
    assert_eq!(crate::alloc_count::allocations() - before, 0);
}

/// MariaDB 10.6 and later cache a prepared statement's metadata: the definitions come with
/// the prepare and again only when the columns change (here, an ALTER TABLE between two
/// executes); parameter types bound once hold until they change.
#[test]
fn cached_metadata_follows_the_table_and_types_follow_the_values() {
    let Some(mut c) = connect(false) else {
        return;
    };
    let version = first_value(&mut c, "SHOW VARIABLES LIKE 'version'").unwrap_or_default();
    let mariadb_10_6 = version.contains("MariaDB")
        && version
            .split('.')
            .take(2)
            .map(|n| n.parse::<u32>().unwrap_or(0))
            .collect::<Vec<_>>()
            >= vec![10, 6];
    assert_eq!(c.caches_metadata(), mariadb_10_6, "{version}");
    c.query("CREATE TEMPORARY TABLE wide (a INT)").unwrap();
    c.query("INSERT INTO wide VALUES (1), (2), (3)").unwrap();
    let mut st = c.prepare("SELECT * FROM wide WHERE a >= ?").unwrap();
    assert_eq!(st.columns, 1);
    for (v, rows) in [(Value::Int(1), 3), (Value::Int(2), 2), (Value::Int(3), 1)] {
        assert_eq!(c.execute(&mut st, &[v]).unwrap(), Outcome::Rows(rows));
    }
    c.query("ALTER TABLE wide ADD COLUMN b INT DEFAULT 7")
        .unwrap();
    assert_eq!(
        c.execute(&mut st, &[Value::Int(1)]).unwrap(),
        Outcome::Rows(3)
    );
    assert_eq!(st.columns, 2);
    for (v, rows) in [
        (Value::Text("2"), 2),
        (Value::Text("3"), 1),
        (Value::Int(1), 3),
        (Value::Int(4), 0),
    ] {
        assert_eq!(c.execute(&mut st, &[v]).unwrap(), Outcome::Rows(rows));
    }
}
