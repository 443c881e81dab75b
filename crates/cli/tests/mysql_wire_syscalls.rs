//! What plumb's MySQL client asks of the kernel on its hot path, seen with strace: every
//! read of a Unix socket is preceded by a poll(2) for POLLIN on it (a reader asleep in
//! recv() on a Unix socket is woken by the server's read of the request for nothing:
//! docs/performance.md, "Why MariaDB over its socket misses"), a TCP socket is read without
//! one (TCP has no such wakeup: the poll would be a system call for nothing), and a
//! statement is one write. Counts, not timings.
//!
//! Without MariaDB or strace the test says so and passes, except under CI=true.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use common::{available, mysql, text};
use tempfile::TempDir;

const STRACE: &str = "/usr/bin/strace";

/// What the trace shows of the sockets' traffic.
#[derive(Debug, Default)]
struct Traffic {
    /// Reads of a socket.
    reads: usize,
    /// Reads whose thread's previous call on a socket was not a poll of that socket.
    unpolled: Vec<String>,
    /// Write-class calls on sockets.
    writes: usize,
    /// Polls of sockets.
    polls: usize,
}

/// One traced call: (thread, call name, its first fd, whether that fd is a socket).
fn call(line: &str) -> Option<(u32, &str, u32, bool)> {
    let (tid, rest) = line.trim_start().split_once(char::is_whitespace)?;
    let tid = tid.parse().ok()?;
    let rest = rest.trim_start();
    // A call resumed after another thread's line: its start was seen already.
    if rest.starts_with("<...") {
        return None;
    }
    let (name, args) = rest.split_once('(')?;
    // poll's first fd sits inside its pollfd array.
    let args = args.strip_prefix("[{fd=").unwrap_or(args);
    let digits = args.find(|c: char| !c.is_ascii_digit())?;
    let fd = args[..digits].parse().ok()?;
    // strace -yy names sockets by their kind.
    let after = &args[digits..];
    let socket = after.starts_with("<UNIX") || after.starts_with("<TCP");
    Some((tid, name, fd, socket))
}

fn traffic(trace: &str) -> Traffic {
    let mut t = Traffic::default();
    // Per thread, the last call on a socket: (name, fd).
    let mut last: HashMap<u32, (String, u32)> = HashMap::new();
    for line in trace.lines() {
        let Some((tid, name, fd, socket)) = call(line) else {
            continue;
        };
        if !socket {
            continue;
        }
        match name {
            "recvfrom" | "read" | "recvmsg" | "readv" => {
                t.reads += 1;
                let polled = matches!(last.get(&tid), Some((n, f)) if (n == "poll" || n == "ppoll") && *f == fd);
                if !polled {
                    t.unpolled.push(line.to_string());
                }
            }
            "write" | "sendto" | "sendmsg" | "writev" => t.writes += 1,
            "poll" | "ppoll" => t.polls += 1,
            _ => {}
        }
        last.insert(tid, (name.to_string(), fd));
    }
    t
}

/// A traced point-select run of `events` statements, reaching the server with `via`.
fn traced_run(dir: &Path, db: &str, via: &[&str], events: u32) -> Traffic {
    let log = dir.join(format!("trace-{}-{events}", via.len()));
    let o = Command::new(STRACE)
        .args(["-f", "-yy", "-qq", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=poll,ppoll,recvfrom,read,recvmsg,readv,write,sendto,sendmsg,writev",
        ])
        .arg(assert_cmd::cargo::cargo_bin("plumb"))
        .args(via)
        .args([
            "oltp_point_select",
            "--mysql-user=root",
            &format!("--mysql-db={db}"),
            "--tables=1",
            "--table-size=100",
            "--threads=1",
            "--time=0",
            &format!("--events={events}"),
            "run",
        ])
        .current_dir(dir)
        .env("PLUMB_HOME", dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(&format!("total number of events:              {events}")),
        "{}",
        text(&o.stdout)
    );
    traffic(&std::fs::read_to_string(&log).unwrap())
}

/// A database of one 100-row table, and a directory to run in.
fn prepared(db: &str) -> TempDir {
    let d = TempDir::new().unwrap();
    mysql(&format!(
        "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
    ));
    let prepare = Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args([
            "oltp_point_select",
            "--mysql-user=root",
            &format!("--mysql-db={db}"),
            "--tables=1",
            "--table-size=100",
            "prepare",
        ])
        .current_dir(d.path())
        .env("PLUMB_HOME", d.path())
        .output()
        .unwrap();
    assert!(prepare.status.success(), "{}", text(&prepare.stderr));
    d
}

fn strace_and_mysql() -> bool {
    available("mysql")
        && common::peers::installed(&[STRACE], "apt-get install strace", "the syscall test")
}

#[test]
fn socket_reads_wait_in_poll_and_a_statement_is_one_write() {
    if !strace_and_mysql() {
        return;
    }
    let db = "plumb_t_wire_calls";
    let d = prepared(db);
    let small = traced_run(d.path(), db, &[], 200);
    let large = traced_run(d.path(), db, &[], 400);
    mysql(&format!("DROP DATABASE {db}"));
    for t in [&small, &large] {
        assert!(
            t.unpolled.is_empty(),
            "reads without a poll first: {:?}",
            t.unpolled
        );
    }
    // Each point select reads its answer: at least one read per statement.
    assert!(large.reads >= small.reads + 200, "{small:?} {large:?}");
    // 200 more statements, 200 more writes: the request goes out in one call.
    assert_eq!(large.writes - small.writes, 200, "{small:?} {large:?}");
}

#[test]
fn tcp_reads_do_not_poll_and_a_statement_is_one_write() {
    if !strace_and_mysql() {
        return;
    }
    let db = "plumb_t_wire_calls_tcp";
    let d = prepared(db);
    let tcp = ["--mysql-host=127.0.0.1", "--mysql-port=3306"];
    let small = traced_run(d.path(), db, &tcp, 200);
    let large = traced_run(d.path(), db, &tcp, 400);
    mysql(&format!("DROP DATABASE {db}"));
    // The connections' set-up may poll (a connect with a timeout waits in poll); the
    // statements do not.
    assert_eq!(large.polls, small.polls, "{small:?} {large:?}");
    assert!(large.reads >= small.reads + 200, "{small:?} {large:?}");
    assert_eq!(large.writes - small.writes, 200, "{small:?} {large:?}");
}

#[test]
fn trace_lines_are_read_as_strace_writes_them() {
    let t = traffic(
        "7  poll([{fd=4<UNIX-STREAM:[1->2]>, events=POLLIN}], 1, -1 <unfinished ...>\n\
         8  write(1</dev/pts/0<char 136:0>>, \"x\", 1) = 1\n\
         7  <... poll resumed>) = 1 ([{fd=4, revents=POLLIN}])\n\
         7  recvfrom(4<UNIX-STREAM:[1->2]>, \"\\1\", 65536, 0, NULL, NULL) = 1\n\
         7  recvfrom(4<UNIX-STREAM:[1->2]>, \"\\1\", 65536, 0, NULL, NULL) = 1\n\
         7  sendto(4<TCP:[127.0.0.1:5->127.0.0.1:3306]>, \"\\1\", 1, MSG_NOSIGNAL, NULL, 0) = 1\n\
         7  read(3</etc/hosts>, \"\", 10) = 0\n",
    );
    assert_eq!(t.reads, 2);
    assert_eq!(t.polls, 1);
    assert_eq!(t.unpolled.len(), 1);
    assert!(t.unpolled[0].starts_with("7  recvfrom(4"));
    assert_eq!(t.writes, 1);
}
