//! What a mysqlslap run (and, last, an OLTP run) makes the server do, counted on the wire:
//! plumb (under the name `mysqlslap`) and Debian's mariadb-slap run the same command through a proxy on a Unix
//! socket that records every command each connection sends. Counts, not timings: the
//! connections a run opens, the statements of the main connection and of each client, and
//! whether each group's clients connect together (the proxy holds the server's greeting
//! until every client of the group has connected: clients that connected one after the
//! other would never get there).
//!
//! Without MariaDB or mariadb-slap the tests say so and pass, except under CI=true.

mod common;

use common::{available, mariadb_slap, mysql, mysqlslap_dir, text};

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tempfile::TempDir;

const SERVER_SOCKET: &str = "/var/run/mysqld/mysqld.sock";

/// How long a held greeting waits for the rest of its batch before it is let through (and
/// the batch counted as incomplete). Generous: the clients of a batch connect together.
const GATE_TIMEOUT: Duration = Duration::from_secs(30);

/// One command a client sent (a packet that starts a command exchange).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cmd {
    Query(String),
    InitDb(String),
    Quit,
    Other(u8),
}

#[derive(Default)]
struct State {
    /// Each connection's commands, in the order the connections were accepted.
    conns: Vec<Vec<Cmd>>,
    /// Connections whose client has gone.
    ended: usize,
    /// Batch sizes, in order: a connection's greeting waits until its batch is complete.
    /// Connections beyond the schedule pass at once.
    batches: Vec<usize>,
    /// Connections let through before their batch was complete.
    gate_timeouts: usize,
    stop: bool,
}

impl State {
    /// The number of connections accepted once connection `i`'s batch is complete.
    fn batch_end(&self, i: usize) -> Option<usize> {
        let mut end = 0;
        for &b in &self.batches {
            end += b;
            if i < end {
                return Some(end);
            }
        }
        None
    }
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

/// The proxy: listens on a socket of its own and relays to MariaDB's.
struct Wire {
    _dir: TempDir,
    path: PathBuf,
    shared: Arc<Shared>,
}

impl Wire {
    fn start(batches: &[usize]) -> Wire {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("wire.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                batches: batches.to_vec(),
                ..State::default()
            }),
            cv: Condvar::new(),
        });
        let sh = shared.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if sh.state.lock().unwrap().stop {
                    break;
                }
                let Ok(client) = client else { continue };
                let server = UnixStream::connect(SERVER_SOCKET).expect("MariaDB's socket");
                let i = {
                    let mut st = sh.state.lock().unwrap();
                    st.conns.push(Vec::new());
                    sh.cv.notify_all();
                    st.conns.len() - 1
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let shc = sh.clone();
                std::thread::spawn(move || relay_commands(client, server, i, &shc));
                let shc = sh.clone();
                std::thread::spawn(move || relay_greeting_after_gate(s2, c2, i, &shc));
            }
        });
        Wire {
            _dir: dir,
            path,
            shared,
        }
    }

    /// Every connection's commands and the incomplete batches, once every client that
    /// connected has gone (the run has ended, so they have or soon will).
    fn finish(&self) -> (Vec<Vec<Cmd>>, usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut st = self.shared.state.lock().unwrap();
        while st.ended < st.conns.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "connections still open after the run: {} of {}",
                st.conns.len() - st.ended,
                st.conns.len()
            );
            st = self.shared.cv.wait_timeout(st, left).unwrap().0;
        }
        (st.conns.clone(), st.gate_timeouts)
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.shared.state.lock().unwrap().stop = true;
        let _ = UnixStream::connect(&self.path);
    }
}

/// Client to server: packet by packet, each recorded when it starts a command (sequence
/// number 0; the handshake's answers carry 1 and up).
fn relay_commands(mut from: UnixStream, mut to: UnixStream, i: usize, sh: &Shared) {
    let mut head = [0u8; 4];
    loop {
        if from.read_exact(&mut head).is_err() {
            break;
        }
        let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
        let mut body = vec![0u8; len];
        if from.read_exact(&mut body).is_err() {
            break;
        }
        if head[3] == 0 && !body.is_empty() {
            let arg = || String::from_utf8_lossy(&body[1..]).into_owned();
            let cmd = match body[0] {
                0x01 => Cmd::Quit,
                0x02 => Cmd::InitDb(arg()),
                0x03 => Cmd::Query(arg()),
                other => Cmd::Other(other),
            };
            sh.state.lock().unwrap().conns[i].push(cmd);
        }
        if to
            .write_all(&head)
            .and_then(|_| to.write_all(&body))
            .is_err()
        {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let mut st = sh.state.lock().unwrap();
    st.ended += 1;
    sh.cv.notify_all();
}

/// Server to client, once the connection's batch is complete.
fn relay_greeting_after_gate(mut from: UnixStream, mut to: UnixStream, i: usize, sh: &Shared) {
    {
        let deadline = Instant::now() + GATE_TIMEOUT;
        let mut st = sh.state.lock().unwrap();
        if let Some(end) = st.batch_end(i) {
            while st.conns.len() < end {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    st.gate_timeouts += 1;
                    break;
                }
                st = sh.cv.wait_timeout(st, left).unwrap().0;
            }
        }
    }
    let mut buf = [0u8; 16384];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

/// Run `prog` (plumb's drop-in or mariadb-slap) with `args` through a new proxy whose
/// gate holds `batches`; its output and what the proxy saw.
fn through_wire(
    prog: &Path,
    dir: &Path,
    args: &[String],
    batches: &[usize],
) -> (Output, Vec<Vec<Cmd>>, usize) {
    let wire = Wire::start(batches);
    let mut full = vec![format!("--socket={}", wire.path.display())];
    full.extend(args.iter().cloned());
    let o = std::process::Command::new(prog)
        .args(&full)
        .current_dir(dir)
        // plumb keeps its runs in a history: here, in the test's directory.
        .env("PLUMB_HOME", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (conns, gate_timeouts) = wire.finish();
    (o, conns, gate_timeouts)
}

/// A command as text, the schema's name replaced by `S`. mariadb-slap selects the schema
/// with COM_INIT_DB where plumb sends `USE` (the same one round trip), and sends its
/// generated INSERTs with the C string's terminating NUL (which the server ignores).
fn shown(c: &Cmd, schema: &str) -> String {
    let s = match c {
        Cmd::Query(q) => q.strip_suffix('\0').unwrap_or(q).to_string(),
        Cmd::InitDb(db) => format!("USE `{db}`"),
        Cmd::Quit => "QUIT".into(),
        Cmd::Other(n) => format!("command {n:#04x}"),
    };
    s.replace(schema, "S")
}

/// What plumb reads for its evidence on the main connection: the server's counters
/// around each group, its settings once.
fn evidence(s: &str) -> Option<&'static str> {
    ["SHOW GLOBAL STATUS", "SHOW VARIABLES", "SELECT DATABASE()"]
        .into_iter()
        .find(|p| s.starts_with(p))
}

/// A run of `args` (without `--create-schema`, `--concurrency`, `--iterations`) by plumb
/// and by mariadb-slap, each through its own proxy, compared: the same connections, each
/// group's clients connecting together, no query at connect, the schema dropped, the main
/// connection's statements in the same order plus plumb's evidence (two counter reads per
/// group, one read of the settings), and the clients' statements the same. Keyed queries
/// pick their key at random: the key itself is not compared.
fn same_traffic(
    name: &str,
    args: &[&str],
    concurrency: &[usize],
    iterations: usize,
    queries: usize,
) {
    if !available("mysql") {
        return;
    }
    let Some(peer) = mariadb_slap() else {
        return;
    };
    let d = mysqlslap_dir();
    let plumb = d.path().join("mysqlslap");
    let groups = concurrency.len() * iterations;
    // The main connection alone, then each group's clients.
    let mut batches = vec![1];
    for &c in concurrency {
        batches.extend(std::iter::repeat_n(c, iterations));
    }
    let connections: usize = batches.iter().sum();
    let list = concurrency
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut seen = Vec::new();
    for (who, prog) in [("plumb", &plumb), ("peer", &peer)] {
        let schema = format!("slap_wire_{name}_{who}");
        mysql(&format!("DROP DATABASE IF EXISTS {schema}"));
        let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        full.push(format!("--create-schema={schema}"));
        full.push(format!("--concurrency={list}"));
        full.push(format!("--iterations={iterations}"));
        full.push(format!("--number-of-queries={queries}"));
        let (o, conns, gate_timeouts) = through_wire(prog, d.path(), &full, &batches);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name} {who}: {}",
            text(&o.stderr)
        );
        assert_eq!(
            conns.len(),
            connections,
            "{name} {who}: connections opened (the main one, then each client): {conns:#?}"
        );
        assert_eq!(
            gate_timeouts, 0,
            "{name} {who}: each group's clients connect together, not one after the other"
        );
        let conns: Vec<Vec<String>> = conns
            .iter()
            .map(|c| c.iter().map(|x| shown(x, &schema)).collect())
            .collect();
        for c in &conns {
            assert!(
                !c.iter().any(|s| s.starts_with("SELECT @@")),
                "{name} {who}: no variable is read at connect: {c:?}"
            );
        }
        assert!(
            !schema_exists(&schema),
            "{name} {who}: the schema is dropped"
        );
        seen.push(conns);
    }
    let (plumb, peer) = (&seen[0], &seen[1]);

    // The main connection: the peer's statements in the peer's order, plus plumb's evidence.
    let (theirs, evidence_read): (Vec<&String>, Vec<&String>) =
        plumb[0].iter().partition(|s| evidence(s).is_none());
    assert_eq!(
        theirs,
        peer[0].iter().collect::<Vec<_>>(),
        "{name}: the main connection's statements"
    );
    let count = |p: &str| evidence_read.iter().filter(|s| s.starts_with(p)).count();
    assert_eq!(
        count("SHOW GLOBAL STATUS"),
        2 * groups,
        "{name}: {evidence_read:#?}"
    );
    assert_eq!(count("SHOW VARIABLES"), 1, "{name}: {evidence_read:#?}");
    assert_eq!(count("SELECT DATABASE()"), 1, "{name}: {evidence_read:#?}");
    assert_eq!(
        evidence_read.len(),
        2 * groups + 2,
        "{name}: {evidence_read:#?}"
    );

    // The clients: the same statements, client by client (in any order within a group).
    let unkeyed = |c: &[Vec<String>]| {
        let mut v: Vec<Vec<String>> = c
            .iter()
            .map(|conn| {
                conn.iter()
                    .map(|s| match s.split_once(" WHERE id = ") {
                        Some((q, _)) => format!("{q} WHERE id = KEY"),
                        None => s.clone(),
                    })
                    .collect()
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        unkeyed(&plumb[1..]),
        unkeyed(&peer[1..]),
        "{name}: the clients' statements"
    );
    // Each client: the query list from its start until its limit, then it leaves.
    let mut at = 1;
    for &c in concurrency {
        for _ in 0..iterations {
            for conn in &plumb[at..at + c] {
                assert_eq!(conn.len(), queries / c + 1, "{name}: {conn:?}");
                assert_eq!(conn.last().map(String::as_str), Some("QUIT"), "{conn:?}");
            }
            at += c;
        }
    }
}

/// Seed 004's first command, scaled down (fewer rows and queries, two iterations).
#[test]
fn seed_004_s_first_command_makes_the_server_do_what_mariadb_slap_makes_it_do() {
    same_traffic(
        "mixed",
        &[
            "-uroot",
            "--engine=innodb",
            "--auto-generate-sql",
            "--auto-generate-sql-unique-query-number=10",
            "--auto-generate-sql-unique-write-number=10",
            "--auto-generate-sql-write-number=40",
            "--auto-generate-sql-load-type=mixed",
            "--number-char-cols=1",
            "--number-int-cols=8",
            "--auto-generate-sql-secondary-indexes=1",
        ],
        &[2, 3],
        2,
        12,
    );
}

/// Seed 004's second command, scaled down: keyed queries, whose keys the main connection
/// reads back (`SELECT id from t1`) each iteration, as mariadb-slap reads them.
#[test]
fn seed_004_s_keyed_command_reads_its_keys_on_the_main_connection() {
    same_traffic(
        "key",
        &[
            "-uroot",
            "--engine=innodb",
            "--auto-generate-sql-load-type=key",
            "--auto-generate-sql",
            "--auto-generate-sql-write-number=30",
            "--auto-generate-sql-guid-primary",
            "--number-char-cols=10",
            "--number-int-cols=10",
        ],
        &[2, 3],
        2,
        12,
    );
}

fn schema_exists(name: &str) -> bool {
    !mysql(&format!("SHOW DATABASES LIKE '{name}'"))
        .trim()
        .is_empty()
}

/// An OLTP run and sysbench's on the same server, on the wire: the same client connections
/// with the same commands, plus plumb's one observer connection, which checks the tables
/// and reads the settings and counters and nothing else.
#[test]
fn an_oltp_run_opens_one_connection_besides_sysbench_s() {
    if !available("mysql") {
        return;
    }
    let d = TempDir::new().unwrap();
    mysql("DROP DATABASE IF EXISTS plumb_t_wire_oltp; CREATE DATABASE plumb_t_wire_oltp");
    let base = [
        "oltp_point_select",
        "--mysql-user=root",
        "--mysql-db=plumb_t_wire_oltp",
        "--tables=1",
        "--table-size=10",
    ];
    let prepare = std::process::Command::new("sysbench")
        .args(base)
        .arg("prepare")
        .output()
        .unwrap();
    assert!(prepare.status.success(), "{}", text(&prepare.stderr));
    let run = |prog: &Path| {
        let wire = Wire::start(&[]);
        let o = std::process::Command::new(prog)
            .args(base)
            .arg(format!("--mysql-socket={}", wire.path.display()))
            .args(["--threads=2", "--events=10", "--time=0", "run"])
            .current_dir(d.path())
            .env("PLUMB_HOME", d.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        wire.finish().0
    };
    let ours = run(&assert_cmd::cargo::cargo_bin("plumb"));
    let theirs = run(Path::new("/usr/bin/sysbench"));
    mysql("DROP DATABASE plumb_t_wire_oltp");
    assert_eq!(ours.len(), theirs.len() + 1, "{ours:?}\n{theirs:?}");
    // plumb's first connection is the observer's: no client work on it.
    for c in &ours[0] {
        let plain = matches!(c, Cmd::Quit)
            || matches!(c, Cmd::Query(q) if q.starts_with("SELECT id FROM sbtest1 WHERE id >= 10 LIMIT 1")
                || evidence(q).is_some());
        assert!(plain, "{c:?} on the observer's connection: {:?}", ours[0]);
    }
    // The clients' commands, all together (which thread ran which event is the
    // scheduler's). sysbench closes its prepared statements before it quits (0x19); plumb
    // leaves that to the disconnect, which frees them on the server too.
    let clients = |conns: &[Vec<Cmd>]| {
        let mut all: Vec<Cmd> = conns
            .iter()
            .flatten()
            .filter(|c| **c != Cmd::Other(0x19))
            .cloned()
            .collect();
        all.sort();
        all
    };
    assert_eq!(clients(&ours[1..]), clients(&theirs));
}
