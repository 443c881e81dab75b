//! PostgreSQL's hot path as the kernel sees it: under strace, each point select of an
//! oltp_point_select run is one write on the client's socket (Bind, Execute and Sync
//! together), on TCP in plain text, on TCP with TLS, and on the Unix socket.
//!
//! Connecting, preparing, the settings and counters and the goodbye cost writes of their
//! own, so two runs of 200 and 400 events are compared: the client connection's writes
//! differ by exactly 200. In plain text the writes are decoded too: exactly one per event
//! carries a Bind, and it carries Bind, Execute, Sync and nothing else.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{available, pg_fresh_db, psql, sh, text};
use tempfile::TempDir;

const DB: &str = "plumb_t_wire";

/// A fresh database.
fn fresh_db() {
    pg_fresh_db(DB);
}

fn base(host: &str, sslmode: &str) -> Vec<String> {
    [
        "oltp_point_select",
        "--db-driver=pgsql",
        "--pgsql-user=postgres",
        &format!("--pgsql-host={host}"),
        &format!("--pgsql-db={DB}"),
        &format!("--pgsql-sslmode={sslmode}"),
        "--table-size=100",
    ]
    .map(String::from)
    .to_vec()
}

/// One write-class syscall on a PostgreSQL connection: the bytes, when strace shows them
/// whole (write and sendto; a TLS writev's are ciphertext anyway).
struct Write {
    bytes: Option<Vec<u8>>,
}

/// The writes of each connection of a run of `events` point selects, by connection.
fn writes(dir: &Path, args: &[String], events: u32) -> BTreeMap<String, Vec<Write>> {
    let log = dir.join(format!("strace-{events}.txt"));
    let o = Command::new("strace")
        .args(["-f", "-yy", "-xx", "-s", "65536", "-e"])
        .arg("trace=sendto,write,writev")
        .arg("-o")
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("plumb"))
        .args(args)
        .args([&format!("--events={events}"), "--time=0", "run"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let log = std::fs::read_to_string(&log).unwrap();
    let mut by_conn: BTreeMap<String, Vec<Write>> = BTreeMap::new();
    for line in log.lines() {
        // "PID sendto(5<TCP:[127.0.0.1:40000->127.0.0.1:5432]>, "\x42...", 33, ..." or
        // "<UNIX-STREAM:[inode->inode]>"; a call strace had to split is counted at its start.
        let Some(call) = ["sendto(", "write(", "writev("]
            .iter()
            .find_map(|c| line.find(c).map(|at| &line[at..]))
        else {
            continue;
        };
        let Some(open) = call.find('<') else { continue };
        let Some(close) = call[open..].find(">,") else {
            continue;
        };
        let conn = &call[open + 1..open + close];
        let pg = (conn.starts_with("TCP:") && conn.ends_with(":5432]"))
            || conn.starts_with("UNIX-STREAM:");
        if !pg {
            continue;
        }
        // A connection by its own end: strace names a Unix socket's peer only once the
        // server has accepted it, which the startup message's write may precede.
        let conn = conn
            .split_once("->")
            .map_or(conn.trim_end_matches(']'), |(own, _)| own);
        let rest = &call[open + close + 2..];
        let bytes = (!call.starts_with("writev("))
            .then(|| rest.trim_start().strip_prefix('"'))
            .flatten()
            .and_then(|s| s.split_once('"'))
            .filter(|(_, after)| !after.starts_with("..."))
            .map(|(hex, _)| unhex(hex));
        by_conn
            .entry(conn.to_string())
            .or_default()
            .push(Write { bytes });
    }
    by_conn
}

/// strace's -xx string: every byte as \xNN.
fn unhex(s: &str) -> Vec<u8> {
    s.split("\\x")
        .filter(|h| !h.is_empty())
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect()
}

/// The type bytes of the frontend messages in `b` (after the startup message, which has
/// none).
fn message_types(b: &[u8]) -> Vec<u8> {
    let mut types = Vec::new();
    let mut at = 0;
    while at + 5 <= b.len() {
        types.push(b[at]);
        let len = u32::from_be_bytes(b[at + 1..at + 5].try_into().unwrap()) as usize;
        at += 1 + len;
    }
    types
}

/// The client connection's writes (the one that binds statements; with TLS, where the
/// messages cannot be seen, the one with the most writes), and how many of them carry
/// exactly one statement's Bind, Execute, Sync.
fn client_writes(by_conn: &BTreeMap<String, Vec<Write>>, plain: bool) -> (usize, Option<usize>) {
    let binds = |ws: &[Write]| {
        ws.iter()
            .filter(|w| w.bytes.as_ref().is_some_and(|b| b.first() == Some(&b'B')))
            .count()
    };
    let client = if plain {
        let with_binds: Vec<_> = by_conn.values().filter(|ws| binds(ws) > 0).collect();
        assert_eq!(with_binds.len(), 1, "one connection binds statements");
        with_binds[0]
    } else {
        by_conn.values().max_by_key(|ws| ws.len()).unwrap()
    };
    let statements = plain.then(|| {
        client
            .iter()
            .filter(|w| {
                let b = w.bytes.as_deref().unwrap_or_default();
                let types = message_types(b);
                assert!(
                    !types.contains(&b'B') || types == b"BES",
                    "a write with a Bind carries Bind, Execute, Sync only: {types:?}"
                );
                types == b"BES"
            })
            .count()
    });
    (client.len(), statements)
}

#[test]
fn each_point_select_is_one_write_on_the_socket() {
    if !available("pgsql") {
        return;
    }
    if !sh("strace", &["-o", "/dev/null", "true"]).is_some_and(|o| o.status.success()) {
        assert!(std::env::var("CI").is_err(), "strace cannot trace here");
        eprintln!("skipped: strace cannot trace here");
        return;
    }
    let d = TempDir::new().unwrap();
    fresh_db();
    let o = Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args(base("127.0.0.1", "disable"))
        .arg("prepare")
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tls = psql("postgres", "SHOW ssl").trim() == "on";
    let mut cases = vec![("127.0.0.1", "disable"), ("/var/run/postgresql", "prefer")];
    if tls {
        cases.push(("127.0.0.1", "require"));
    }
    for (host, sslmode) in cases {
        let args = base(host, sslmode);
        let plain = sslmode == "disable" || host.starts_with('/');
        let (few, few_stmts) = client_writes(&writes(d.path(), &args, 200), plain);
        let (many, many_stmts) = client_writes(&writes(d.path(), &args, 400), plain);
        assert_eq!(many - few, 200, "{host} {sslmode}: {few} and {many} writes");
        if plain {
            assert_eq!(
                (few_stmts, many_stmts),
                (Some(200), Some(400)),
                "{host} {sslmode}"
            );
        }
    }
    psql("postgres", &format!("DROP DATABASE {DB}"));
}
