//! The PostgreSQL driver against a scripted server on a Unix socket: MD5 authentication,
//! what goes on the wire for a prepared statement, messages that may come at any time, and
//! the server's errors as the workload sees them.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::thread::JoinHandle;

use crate::driver::{Driver, ErrorClass, IgnoreErrors, Outcome, Value};
use crate::pgsql::{PgsqlConfig, PgsqlDriver};

const SALT: [u8; 4] = [1, 2, 3, 4];

/// One backend message.
fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn error(severity: &str, code: &str, text: &str) -> Vec<u8> {
    let body = format!("S{severity}\0V{severity}\0C{code}\0M{text}\0\0");
    msg(b'E', body.as_bytes())
}

fn ready() -> Vec<u8> {
    msg(b'Z', b"I")
}

/// The next frontend message: its type and body.
fn read_msg(s: &mut UnixStream) -> (u8, Vec<u8>) {
    let mut head = [0u8; 5];
    s.read_exact(&mut head).unwrap();
    let len = u32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
    let mut body = vec![0u8; len - 4];
    s.read_exact(&mut body).unwrap();
    (head[0], body)
}

/// The messages the client sent in one go, by type, up to and including a Sync.
fn read_until_sync(s: &mut UnixStream) -> Vec<(u8, Vec<u8>)> {
    let mut all = Vec::new();
    loop {
        let m = read_msg(s);
        let done = m.0 == b'S';
        all.push(m);
        if done {
            return all;
        }
    }
}

/// Accepts one connection, checks its startup message and MD5 password, and hands the
/// authenticated stream to `script` (or refuses the password when `refuse`).
fn server(
    dir: &std::path::Path,
    refuse: bool,
    script: impl FnOnce(UnixStream) + Send + 'static,
) -> JoinHandle<()> {
    let listener = UnixListener::bind(dir.join(".s.PGSQL.5432")).unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut startup = vec![0u8; u32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut startup).unwrap();
        let startup = String::from_utf8_lossy(&startup).into_owned();
        assert!(startup.contains("user\0u\0"), "{startup:?}");
        assert!(startup.contains("database\0d\0"), "{startup:?}");
        assert!(startup.contains("application_name\0plumb\0"), "{startup:?}");
        let mut md5 = 5i32.to_be_bytes().to_vec();
        md5.extend_from_slice(&SALT);
        s.write_all(&msg(b'R', &md5)).unwrap();
        let (t, body) = read_msg(&mut s);
        let want = postgres_protocol::authentication::md5_hash(b"u", b"secret-Zq8", SALT);
        assert_eq!((t, &body[..body.len() - 1]), (b'p', want.as_bytes()));
        if refuse {
            let e = error(
                "FATAL",
                "28P01",
                "password authentication failed for user \"u\"",
            );
            s.write_all(&e).unwrap();
            return;
        }
        let mut hello = msg(b'R', &0i32.to_be_bytes());
        hello.extend(msg(b'S', b"server_version\x0015.0\0"));
        hello.extend(msg(b'K', &[0, 0, 0, 9, 0, 0, 0, 9]));
        hello.extend(ready());
        s.write_all(&hello).unwrap();
        script(s);
    })
}

fn driver(dir: &std::path::Path, password: &str) -> PgsqlDriver {
    PgsqlDriver::new(PgsqlConfig {
        host: dir.display().to_string(),
        user: "u".into(),
        password: password.into(),
        database: "d".into(),
        ..PgsqlConfig::default()
    })
}

#[test]
fn a_prepared_statement_binds_runs_and_reports_as_the_server_says() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(d.path(), false, |mut s| {
        // prepare: Parse, Describe, Sync at once; the server infers int4.
        let sent: Vec<u8> = read_until_sync(&mut s).iter().map(|m| m.0).collect();
        assert_eq!(sent, b"PDS");
        let mut r = msg(b'1', b"");
        r.extend(msg(b't', &[0, 1, 0, 0, 0, 23]));
        r.extend(msg(
            b'T',
            b"\0\x01c\0\0\0\0\0\0\x01\0\0\0\x19\xff\xff\xff\xff\xff\xff\0\0",
        ));
        r.extend(ready());
        s.write_all(&r).unwrap();
        // execute: Bind (7 as a binary int4), Execute, Sync; a notice and a setting in
        // between the rows change nothing.
        let sent = read_until_sync(&mut s);
        let types: Vec<u8> = sent.iter().map(|m| m.0).collect();
        assert_eq!(types, b"BES");
        assert_eq!(
            sent[0].1,
            b"\0p1\0\0\x01\0\x01\0\x01\0\0\0\x04\0\0\0\x07\0\0".to_vec()
        );
        let mut r = msg(b'2', b"");
        r.extend(msg(b'D', b"\0\x01\0\0\0\x01a"));
        r.extend(msg(b'N', b"SNOTICE\0Mhello\0\0"));
        r.extend(msg(b'S', b"TimeZone\0UTC\0"));
        r.extend(msg(b'D', b"\0\x01\0\0\0\x01b"));
        r.extend(msg(b'C', b"SELECT 2\0"));
        r.extend(ready());
        s.write_all(&r).unwrap();
        // A deadlock: reported once the server is ready again.
        read_until_sync(&mut s);
        let mut r = msg(b'2', b"");
        r.extend(error("ERROR", "40P01", "deadlock detected"));
        r.extend(ready());
        s.write_all(&r).unwrap();
        // A plain UPDATE: rows affected from the command tag.
        let (t, body) = read_msg(&mut s);
        assert_eq!((t, &body[..]), (b'Q', &b"UPDATE t SET c = 1\0"[..]));
        let mut r = msg(b'C', b"UPDATE 3\0");
        r.extend(ready());
        s.write_all(&r).unwrap();
        // The server is shut down under the session: FATAL, then the socket closes.
        read_until_sync(&mut s);
        s.write_all(&error(
            "FATAL",
            "57P01",
            "terminating connection due to administrator command",
        ))
        .unwrap();
    });
    let drv = driver(d.path(), "secret-Zq8");
    let mut c = drv.connect().unwrap();
    let st = c.prepare("SELECT c FROM t WHERE id = ?").unwrap();
    assert_eq!(c.execute(st, &[Value::Int(7)]).unwrap(), Outcome::Rows(2));
    let e = c.execute(st, &[Value::Int(7)]).unwrap_err();
    assert_eq!(e.class, ErrorClass::Ignorable);
    assert_eq!(e.code.as_deref(), Some("40P01"));
    assert_eq!(e.message, "ERROR: deadlock detected (SQLSTATE 40P01)");
    assert_eq!(
        c.execute_plain("UPDATE t SET c = 1", &[]).unwrap(),
        Outcome::Changed(3)
    );
    let e = c.execute(st, &[Value::Int(7)]).unwrap_err();
    assert_eq!(
        (e.class, e.code.as_deref()),
        (ErrorClass::Fatal, Some("57P01"))
    );
    assert_eq!(
        e.message,
        "FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"
    );
    // Nothing more is sent on a connection the server ended.
    let e = c.execute(st, &[Value::Int(7)]).unwrap_err();
    assert_eq!(e.code.as_deref(), Some("08003"));
    c.rollback().unwrap();
    srv.join().unwrap();
}

#[test]
fn an_out_of_range_parameter_is_refused_before_anything_is_sent() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(d.path(), false, |mut s| {
        read_until_sync(&mut s);
        let mut r = msg(b'1', b"");
        r.extend(msg(b't', &[0, 1, 0, 0, 0, 21]));
        r.extend(msg(b'n', b""));
        r.extend(ready());
        s.write_all(&r).unwrap();
        // Terminate is the next thing the client says.
        assert_eq!(read_msg(&mut s).0, b'X');
    });
    let mut c = driver(d.path(), "secret-Zq8").connect().unwrap();
    let st = c.prepare("UPDATE t SET k = ?").unwrap();
    let e = c.execute(st, &[Value::Int(70_000)]).unwrap_err();
    assert_eq!(e.class, ErrorClass::Fatal);
    assert_eq!(
        e.message,
        "error serializing parameter 0: out of range integral type conversion attempted"
    );
    drop(c);
    srv.join().unwrap();
}

#[test]
fn a_refused_password_is_one_line_without_the_password() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(d.path(), true, |_| {});
    let e = driver(d.path(), "secret-Zq8").connect().err().unwrap();
    assert_eq!(e.class, ErrorClass::Fatal);
    assert_eq!(e.code.as_deref(), Some("28P01"));
    assert_eq!(
        e.message,
        format!(
            "PostgreSQL at socket {}/.s.PGSQL.5432: FATAL: password authentication failed for user \"u\" (SQLSTATE 28P01)",
            d.path().display()
        )
    );
    srv.join().unwrap();
    // Asked for a password it was not given: said so, before anything else happens.
    let d = tempfile::tempdir().unwrap();
    let listener = UnixListener::bind(d.path().join(".s.PGSQL.5432")).unwrap();
    let srv = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut rest = vec![0u8; u32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut rest).unwrap();
        s.write_all(&msg(b'R', &3i32.to_be_bytes())).unwrap();
    });
    let e = driver(d.path(), "").connect().err().unwrap();
    assert!(
        e.message
            .ends_with(": invalid configuration: password missing"),
        "{}",
        e.message
    );
    srv.join().unwrap();
}

#[test]
fn nobody_listening_is_a_connect_error_naming_the_socket() {
    let d = tempfile::tempdir().unwrap();
    let drv = PgsqlDriver::new(PgsqlConfig {
        host: d.path().display().to_string(),
        ignore: IgnoreErrors::parse("all"),
        ..PgsqlConfig::default()
    });
    let e = drv.connect().err().unwrap();
    assert_eq!(e.class, ErrorClass::Reconnect);
    assert!(
        e.message.starts_with(&format!(
            "PostgreSQL at socket {}/.s.PGSQL.5432: error connecting to server: ",
            d.path().display()
        )),
        "{}",
        e.message
    );
}

#[test]
fn copy_from_the_client_is_refused_instead_of_waited_for() {
    let d = tempfile::tempdir().unwrap();
    let copy_in = || msg(b'G', &[0, 0, 1, 0, 0]);
    let refused = || {
        let mut r = error(
            "ERROR",
            "57014",
            "COPY from stdin failed: plumb does not send COPY data",
        );
        r.extend(ready());
        r
    };
    let srv = server(d.path(), false, move |mut s| {
        // Simple query: CopyFail alone, as the server leaves copy mode at once.
        assert_eq!(read_msg(&mut s).0, b'Q');
        s.write_all(&copy_in()).unwrap();
        assert_eq!(read_msg(&mut s).0, b'f');
        s.write_all(&refused()).unwrap();
        // Extended: the Sync sent with Execute is ignored in copy mode, so another follows.
        read_until_sync(&mut s);
        let mut r = msg(b'1', b"");
        r.extend(msg(b't', &[0, 0]));
        r.extend(msg(b'n', b""));
        r.extend(ready());
        s.write_all(&r).unwrap();
        read_until_sync(&mut s);
        let mut r = msg(b'2', b"");
        r.extend(copy_in());
        s.write_all(&r).unwrap();
        let sent: Vec<u8> = read_until_sync(&mut s).iter().map(|m| m.0).collect();
        assert_eq!(sent, b"fS");
        s.write_all(&refused()).unwrap();
        assert_eq!(read_msg(&mut s).0, b'X');
    });
    let mut c = driver(d.path(), "secret-Zq8").connect().unwrap();
    let e = c.execute_plain("COPY t FROM STDIN", &[]).unwrap_err();
    assert_eq!(e.code.as_deref(), Some("57014"));
    let st = c.prepare("COPY t FROM STDIN").unwrap();
    let e = c.execute(st, &[]).unwrap_err();
    assert_eq!(e.code.as_deref(), Some("57014"));
    drop(c);
    srv.join().unwrap();
}

#[test]
fn scram_without_tls_does_not_bind_and_a_bad_server_signature_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let listener = UnixListener::bind(d.path().join(".s.PGSQL.5432")).unwrap();
    let srv = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut rest = vec![0u8; u32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut rest).unwrap();
        let mut sasl = 10i32.to_be_bytes().to_vec();
        sasl.extend_from_slice(b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0");
        s.write_all(&msg(b'R', &sasl)).unwrap();
        // No TLS, nothing to bind: plain SCRAM-SHA-256, and "n" (cannot bind).
        let (t, body) = read_msg(&mut s);
        let first = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(t, b'p');
        let (mechanism, data) = first.split_once('\0').unwrap();
        assert_eq!(mechanism, "SCRAM-SHA-256");
        let nonce = data[4..].split_once("n,,n=,r=").unwrap().1.to_string();
        let server_first = format!("r={nonce}srv,s=c2FsdA==,i=4096");
        let mut cont = 11i32.to_be_bytes().to_vec();
        cont.extend_from_slice(server_first.as_bytes());
        s.write_all(&msg(b'R', &cont)).unwrap();
        let (t, body) = read_msg(&mut s);
        let last = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(t, b'p');
        assert!(
            last.starts_with(&format!("c=biws,r={nonce}srv,p=")),
            "{last}"
        );
        let mut fin = 12i32.to_be_bytes().to_vec();
        fin.extend_from_slice(b"v=AAAA");
        s.write_all(&msg(b'R', &fin)).unwrap();
    });
    let e = driver(d.path(), "secret-Zq8").connect().err().unwrap();
    assert_eq!(
        e.message,
        format!(
            "PostgreSQL at socket {}/.s.PGSQL.5432: authentication error: SCRAM verification error",
            d.path().display()
        )
    );
    srv.join().unwrap();
}

#[test]
fn a_transaction_of_prepared_statements_allocates_nothing_once_warm() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(d.path(), false, |mut s| {
        read_until_sync(&mut s);
        let mut r = msg(b'1', b"");
        r.extend(msg(b't', &[0, 1, 0, 0, 0, 23]));
        r.extend(msg(
            b'T',
            b"\0\x01c\0\0\0\0\0\0\x01\0\0\0\x19\xff\xff\xff\xff\xff\xff\0\0",
        ));
        r.extend(ready());
        s.write_all(&r).unwrap();
        let mut row = msg(b'2', b"");
        row.extend(msg(b'D', b"\0\x01\0\0\0\x03abc"));
        row.extend(msg(b'C', b"SELECT 1\0"));
        row.extend(ready());
        let mut tx = msg(b'C', b"BEGIN\0");
        tx.extend(msg(b'Z', b"T"));
        loop {
            let (t, _) = read_msg(&mut s);
            let reply = match t {
                b'B' => {
                    read_msg(&mut s);
                    read_msg(&mut s);
                    &row
                }
                b'Q' => &tx,
                _ => return,
            };
            s.write_all(reply).unwrap();
        }
    });
    let mut c = driver(d.path(), "secret-Zq8").connect().unwrap();
    let st = c.prepare("SELECT c FROM t WHERE id = ?").unwrap();
    let transaction = |c: &mut Box<dyn crate::driver::Connection>| {
        c.begin(crate::driver::TxIntent::Read).unwrap();
        for id in 0..10 {
            assert_eq!(c.execute(st, &[Value::Int(id)]).unwrap(), Outcome::Rows(1));
        }
        c.commit().unwrap();
    };
    transaction(&mut c);
    let before = crate::alloc_count::allocations();
    for _ in 0..50 {
        transaction(&mut c);
    }
    assert_eq!(crate::alloc_count::allocations() - before, 0);
    drop(c);
    srv.join().unwrap();
}
