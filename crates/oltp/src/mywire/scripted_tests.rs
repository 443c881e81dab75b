//! The client against a scripted server on a Unix socket: what the handshake asks of a
//! MariaDB server (metadata caching, in the extended capabilities) and of a MySQL one
//! (nothing of the kind), and what an execute sends and reads (the parameter types with
//! the first execute and when they change; result sets with and without their column
//! definitions).

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;

use super::{Conn, ConnectOpts, Target, WireError};
use crate::driver::{Outcome, Value};

/// A MariaDB 10.11 server's capabilities (its greeting's): no CLIENT_MYSQL bit.
const MARIADB_CAPS: u32 = 0x81ff_f7fe;
/// A MySQL server's: the same with the CLIENT_MYSQL (CLIENT_LONG_PASSWORD) bit.
const MYSQL_CAPS: u32 = MARIADB_CAPS | 1;
/// What MariaDB 10.11 offers beyond: progress, bulk operations, extended metadata,
/// metadata caching.
const MARIADB_EXT: u32 = 0x1d;

/// The server end: packets framed with their sequence ids.
struct Peer {
    s: UnixStream,
    seq: u8,
}

impl Peer {
    fn read(&mut self) -> Vec<u8> {
        let mut h = [0u8; 4];
        self.s.read_exact(&mut h).unwrap();
        assert_eq!(h[3], self.seq, "the client's sequence id");
        self.seq = self.seq.wrapping_add(1);
        let mut p = vec![0u8; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
        self.s.read_exact(&mut p).unwrap();
        p
    }

    /// The next command's packet (its sequence starts at 0).
    fn command(&mut self) -> Vec<u8> {
        self.seq = 0;
        self.read()
    }

    /// `payloads` as packets of the exchange, in one write.
    fn write(&mut self, payloads: &[Vec<u8>]) {
        let mut all = Vec::new();
        for p in payloads {
            all.extend_from_slice(&(p.len() as u32).to_le_bytes()[..3]);
            all.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            all.extend_from_slice(p);
        }
        self.s.write_all(&all).unwrap();
    }
}

fn ok() -> Vec<u8> {
    vec![0x00, 0, 0, 0x02, 0x00, 0, 0]
}

fn eof() -> Vec<u8> {
    vec![0xFE, 0, 0, 0x02, 0x00]
}

/// A column definition (protocol 4.1) of a VARCHAR column `name`.
fn column(name: &str) -> Vec<u8> {
    let mut p = Vec::new();
    for s in ["def", "db", "t", "t", name, name] {
        p.push(s.len() as u8);
        p.extend_from_slice(s.as_bytes());
    }
    p.extend_from_slice(&[0x0c, 45, 0, 0xf0, 0, 0, 0, 0xfd, 0, 0, 0, 0, 0]);
    p
}

/// A binary-protocol row of `columns` short strings.
fn row(columns: usize) -> Vec<u8> {
    let mut p = vec![0x00];
    p.resize(1 + (columns + 9) / 8, 0);
    for _ in 0..columns {
        p.extend_from_slice(&[3, b'a', b'b', b'c']);
    }
    p
}

/// A MariaDB 10.11 server's greeting, offering `caps` (and MariaDB's extended capabilities
/// in the reserved bytes).
fn greet(peer: &mut Peer, caps: u32) {
    let mut greeting = Vec::new();
    HandshakePacket::new(
        10,
        &b"5.5.5-10.11.19-MariaDB"[..],
        9,
        *b"01234567",
        Some(&b"89abcdefghij"[..]),
        CapabilityFlags::from_bits_truncate(caps),
        45,
        StatusFlags::SERVER_STATUS_AUTOCOMMIT,
        Some(&b"mysql_native_password"[..]),
    )
    .with_mariadb_ext_capabilities(MariadbCapabilities::from_bits_truncate(MARIADB_EXT))
    .serialize(&mut greeting);
    peer.write(&[greeting]);
}

/// Accepts one connection, greets it with `caps` (and MariaDB's extended capabilities in
/// the reserved bytes), hands the client's handshake response to `check`, accepts the
/// login and runs `script`.
fn server(
    dir: &Path,
    caps: u32,
    check: impl FnOnce(&[u8]) + Send + 'static,
    script: impl FnOnce(&mut Peer) + Send + 'static,
) -> JoinHandle<()> {
    let listener = UnixListener::bind(dir.join("mysqld.sock")).unwrap();
    std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut peer = Peer { s, seq: 0 };
        greet(&mut peer, caps);
        check(&peer.read());
        peer.write(&[ok()]);
        script(&mut peer);
    })
}

fn connect(dir: &Path) -> Conn {
    connect_tls(dir, false, false).unwrap()
}

fn connect_tls(dir: &Path, ssl: bool, ssl_optional: bool) -> Result<Conn, WireError> {
    let sock = dir.join("mysqld.sock");
    let opts = ConnectOpts {
        target: Target::Socket(&sock),
        user: "u",
        password: "",
        database: None,
        ssl,
        ssl_ca: None,
        ssl_optional,
        compression: false,
        connect_timeout: Duration::from_secs(10),
        max_allowed_packet: 1 << 30,
    };
    Conn::connect(&opts)
}

#[test]
fn tls_asked_of_a_server_without_it_is_refused_unless_optional() {
    // The scripted greeting offers no CLIENT_SSL, as this machine's MariaDB (have_ssl
    // DISABLED). Optional (the sysbench and mysqlslap drop-ins): a plain login.
    let d = tempfile::tempdir().unwrap();
    let srv = server(
        d.path(),
        MARIADB_CAPS,
        |answer| {
            let r: HandshakeResponse<'_> = ParseBuf(answer).parse(()).unwrap();
            assert!(!r.capabilities().contains(CapabilityFlags::CLIENT_SSL));
        },
        |_| {},
    );
    connect_tls(d.path(), true, true).expect("a plain login");
    srv.join().unwrap();
    // Required (plumb's own options): refused before any answer to the greeting.
    let d = tempfile::tempdir().unwrap();
    let listener = std::os::unix::net::UnixListener::bind(d.path().join("mysqld.sock")).unwrap();
    let greet = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut peer = Peer { s, seq: 0 };
        greet(&mut peer, MARIADB_CAPS);
        // The client hangs up without a handshake response.
        let mut rest = Vec::new();
        peer.s.read_to_end(&mut rest).unwrap();
        rest
    });
    let e = connect_tls(d.path(), true, false).err().expect("refused");
    assert!(matches!(e, WireError::Refused(_)), "{e}");
    assert!(
        e.to_string()
            .contains("server does not have this capability"),
        "{e}"
    );
    assert_eq!(greet.join().unwrap(), Vec::<u8>::new());
}

/// The prepare exchange: one parameter, one column.
fn prepared(peer: &mut Peer) {
    let sql = peer.command();
    assert_eq!(sql[0], 0x16);
    // OK, statement 7, one column, one parameter, no warning.
    let st = vec![0x00, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0];
    peer.write(&[st, column("?"), eof(), column("c"), eof()]);
}

/// COM_STMT_EXECUTE of statement 7, one iteration, no NULL, then `rest` (whether types
/// follow, the types, the value).
fn execute(rest: &[u8]) -> Vec<u8> {
    let mut p = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0];
    p.extend_from_slice(rest);
    p
}

fn int(flag_and_types: &[u8], v: i64) -> Vec<u8> {
    let mut p = flag_and_types.to_vec();
    p.extend_from_slice(&v.to_le_bytes());
    execute(&p)
}

fn text(flag_and_types: &[u8], v: &str) -> Vec<u8> {
    let mut p = flag_and_types.to_vec();
    p.push(v.len() as u8);
    p.extend_from_slice(v.as_bytes());
    execute(&p)
}

const INT_TYPES: &[u8] = &[1, 0x08, 0];
const TEXT_TYPES: &[u8] = &[1, 0xFD, 0];
const NO_TYPES: &[u8] = &[0];

#[test]
fn mariadb_caches_metadata_and_types_go_only_when_they_change() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(
        d.path(),
        MARIADB_CAPS,
        |answer| {
            let r: HandshakeResponse<'_> = ParseBuf(answer).parse(()).unwrap();
            assert!(!r
                .capabilities()
                .contains(CapabilityFlags::CLIENT_LONG_PASSWORD));
            // The last 4 of the 23 reserved bytes: metadata caching only.
            assert_eq!(answer[28..32], [0x10, 0, 0, 0]);
            assert_eq!(
                r.mariadb_ext_capabilities(),
                MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA
            );
        },
        |peer| {
            prepared(peer);
            // The first execute binds the type; the columns are known from the prepare.
            assert_eq!(peer.command(), int(INT_TYPES, 42));
            peer.write(&[vec![1, 0], eof(), row(1), eof()]);
            // The same type: not sent. The table changed: the definitions come again.
            assert_eq!(peer.command(), int(NO_TYPES, 43));
            peer.write(&[
                vec![2, 1],
                column("c"),
                column("d"),
                eof(),
                row(2),
                row(2),
                eof(),
            ]);
            assert_eq!(peer.command(), int(NO_TYPES, 44));
            peer.write(&[vec![2, 0], eof(), row(2), eof()]);
            // Text now: the type goes again. The execute fails...
            assert_eq!(peer.command(), text(TEXT_TYPES, "x"));
            peer.write(&[b"\xff\xbd\x04#40001Deadlock found".to_vec()]);
            // ... so the next one sends it again, and the one after does not.
            assert_eq!(peer.command(), text(TEXT_TYPES, "y"));
            peer.write(&[ok()]);
            assert_eq!(peer.command(), text(NO_TYPES, "z"));
            // Without definitions, a column count that is not the statement's.
            peer.write(&[vec![3, 0], eof(), row(3), eof()]);
        },
    );
    let mut c = connect(d.path());
    assert!(c.caches_metadata());
    let mut st = c.prepare("SELECT c FROM t WHERE id = ?").unwrap();
    assert_eq!(st.columns, 1);
    let mut run = |v: Value<'_>| c.execute(&mut st, &[v]);
    assert_eq!(run(Value::Int(42)).unwrap(), Outcome::Rows(1));
    assert_eq!(run(Value::Int(43)).unwrap(), Outcome::Rows(2));
    assert_eq!(run(Value::Int(44)).unwrap(), Outcome::Rows(1));
    match run(Value::Text("x")) {
        Err(WireError::Server { code: 1213, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(run(Value::Text("y")).unwrap(), Outcome::Changed(0));
    let e = run(Value::Text("z")).unwrap_err();
    assert!(e.is_connectivity(), "{e}");
    assert_eq!(
        e.to_string(),
        "a result set of 3 columns without their definitions, for a statement of 2"
    );
    srv.join().unwrap();
}

#[test]
fn mysql_gets_no_extended_capabilities_and_sends_every_definition() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(
        d.path(),
        MYSQL_CAPS,
        |answer| {
            let r: HandshakeResponse<'_> = ParseBuf(answer).parse(()).unwrap();
            assert!(r
                .capabilities()
                .contains(CapabilityFlags::CLIENT_LONG_PASSWORD));
            assert_eq!(answer[9..32], [0; 23]);
        },
        |peer| {
            prepared(peer);
            // No metadata indicator after the column count.
            assert_eq!(peer.command(), int(INT_TYPES, 1));
            peer.write(&[vec![1], column("c"), eof(), row(1), eof()]);
            // MySQL keeps the types too.
            assert_eq!(peer.command(), int(NO_TYPES, 2));
            peer.write(&[vec![1], column("c"), eof(), row(1), row(1), eof()]);
            // A text query's result set.
            assert_eq!(peer.command(), b"\x03SELECT 1");
            peer.write(&[vec![1], column("1"), eof(), vec![1, b'1'], eof()]);
        },
    );
    let mut c = connect(d.path());
    assert!(!c.caches_metadata());
    let mut st = c.prepare("SELECT c FROM t WHERE id = ?").unwrap();
    assert_eq!(
        c.execute(&mut st, &[Value::Int(1)]).unwrap(),
        Outcome::Rows(1)
    );
    assert_eq!(
        c.execute(&mut st, &[Value::Int(2)]).unwrap(),
        Outcome::Rows(2)
    );
    assert_eq!(c.query("SELECT 1").unwrap(), Outcome::Rows(1));
    drop(c);
    srv.join().unwrap();
}
