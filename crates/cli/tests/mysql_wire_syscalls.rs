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
    /// Bytes the reads and writes of sockets moved.
    bytes_in: u64,
    bytes_out: u64,
}

/// One traced line.
enum Line<'a> {
    /// A call's start: (thread, call name, its first fd, whether that fd is a socket), and
    /// its result when the line has it (not when it goes on after another thread's line).
    Start(u32, &'a str, u32, bool, Option<i64>),
    /// The rest of a call another thread's line interrupted: (thread, its result).
    Resumed(u32, Option<i64>),
}

/// The result at the end of a line (`... = 151`, `= -1 EAGAIN (...)`).
fn result(line: &str) -> Option<i64> {
    line.rsplit_once(") = ")?
        .1
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn parse(line: &str) -> Option<Line<'_>> {
    let (tid, rest) = line.trim_start().split_once(char::is_whitespace)?;
    let tid = tid.parse().ok()?;
    let rest = rest.trim_start();
    // A call resumed after another thread's line: its start was seen already.
    if rest.starts_with("<...") {
        return Some(Line::Resumed(tid, result(rest)));
    }
    let (name, args) = rest.split_once('(')?;
    // poll's first fd sits inside its pollfd array.
    let args = args.strip_prefix("[{fd=").unwrap_or(args);
    let digits = args.find(|c: char| !c.is_ascii_digit())?;
    let fd = args[..digits].parse().ok()?;
    // strace -yy names sockets by their kind.
    let after = &args[digits..];
    let socket = after.starts_with("<UNIX") || after.starts_with("<TCP");
    let done = !rest.ends_with("<unfinished ...>");
    Some(Line::Start(
        tid,
        name,
        fd,
        socket,
        result(rest).filter(|_| done),
    ))
}

fn is_read(name: &str) -> bool {
    matches!(name, "recvfrom" | "read" | "recvmsg" | "readv")
}

fn is_write(name: &str) -> bool {
    matches!(name, "write" | "sendto" | "sendmsg" | "writev")
}

fn traffic(trace: &str) -> Traffic {
    let mut t = Traffic::default();
    // Per thread, the last call on a socket: (name, fd).
    let mut last: HashMap<u32, (String, u32)> = HashMap::new();
    // Per thread, a socket call whose result is still to come.
    let mut open: HashMap<u32, String> = HashMap::new();
    let count = |t: &mut Traffic, name: &str, n: Option<i64>| {
        let n = n.filter(|&n| n > 0).unwrap_or(0) as u64;
        if is_read(name) {
            t.bytes_in += n;
        } else if is_write(name) {
            t.bytes_out += n;
        }
    };
    for line in trace.lines() {
        let (tid, name, fd, ret) = match parse(line) {
            Some(Line::Start(tid, name, fd, true, ret)) => (tid, name, fd, ret),
            Some(Line::Resumed(tid, ret)) => {
                if let Some(name) = open.remove(&tid) {
                    count(&mut t, &name, ret);
                }
                continue;
            }
            _ => continue,
        };
        if line.ends_with("<unfinished ...>") {
            open.insert(tid, name.to_string());
        } else {
            count(&mut t, name, ret);
        }
        if is_read(name) {
            t.reads += 1;
            let polled =
                matches!(last.get(&tid), Some((n, f)) if (n == "poll" || n == "ppoll") && *f == fd);
            if !polled {
                t.unpolled.push(line.to_string());
            }
        } else if is_write(name) {
            t.writes += 1;
        } else if name == "poll" || name == "ppoll" {
            t.polls += 1;
        }
        last.insert(tid, (name.to_string(), fd));
    }
    t
}

/// `program` run under strace in `dir`: the trace of its socket calls, and its stdout.
fn traced(dir: &Path, log: &str, program: &Path, args: &[&str]) -> (Traffic, String) {
    let log = dir.join(log);
    let o = Command::new(STRACE)
        .args(["-f", "-yy", "-qq", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=poll,ppoll,recvfrom,read,recvmsg,readv,write,sendto,sendmsg,writev",
        ])
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("PLUMB_HOME", dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    (
        traffic(&std::fs::read_to_string(&log).unwrap()),
        text(&o.stdout),
    )
}

/// A traced point-select run of `events` statements, reaching the server with `via`.
fn traced_run(dir: &Path, db: &str, via: &[&str], events: u32) -> Traffic {
    let db = format!("--mysql-db={db}");
    let events_arg = format!("--events={events}");
    let mut args = via.to_vec();
    args.extend([
        "oltp_point_select",
        "--mysql-user=root",
        &db,
        "--tables=1",
        "--table-size=100",
        "--threads=1",
        "--time=0",
        &events_arg,
        "run",
    ]);
    let plumb = assert_cmd::cargo::cargo_bin("plumb");
    let log = format!("trace-{}-{events}", via.len());
    let (t, out) = traced(dir, &log, &plumb, &args);
    assert!(
        out.contains(&format!("total number of events:              {events}")),
        "{out}"
    );
    t
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

/// Against the same server, plumb's point selects move the bytes sysbench's (libmariadb's)
/// move: the same request (the parameter types only with the first execute) and the same
/// reply (MariaDB's metadata caching: no column definition with an execute's result set).
#[test]
fn point_selects_move_the_bytes_sysbench_s_move() {
    const SYSBENCH: &str = "/usr/bin/sysbench";
    if !strace_and_mysql()
        || !common::peers::installed(&[SYSBENCH], "apt-get install sysbench", "the byte test")
    {
        return;
    }
    let db = "plumb_t_wire_bytes";
    let d = prepared(db);
    let sysbench = |events: u32| {
        let db = format!("--mysql-db={db}");
        let n = format!("--events={events}");
        let args = [
            "--db-driver=mysql",
            "--mysql-socket=/var/run/mysqld/mysqld.sock",
            "--mysql-user=root",
            &db,
            "oltp_point_select",
            "--tables=1",
            "--table-size=100",
            "--threads=1",
            "--time=0",
            &n,
            "run",
        ];
        let (t, out) = traced(
            d.path(),
            &format!("sb-{events}"),
            Path::new(SYSBENCH),
            &args,
        );
        assert!(
            out.contains(&format!("total number of events:              {events}")),
            "{out}"
        );
        t
    };
    let (sb_small, sb_large) = (sysbench(200), sysbench(400));
    let (small, large) = (
        traced_run(d.path(), db, &[], 200),
        traced_run(d.path(), db, &[], 400),
    );
    mysql(&format!("DROP DATABASE {db}"));
    // Bytes per statement, to the nearest byte: what plumb reads around the run (the
    // server's counters, as text) may differ by a digit between two runs.
    let per = |a: &Traffic, b: &Traffic| {
        (
            (b.bytes_out - a.bytes_out + 100) / 200,
            (b.bytes_in - a.bytes_in + 100) / 200,
        )
    };
    let (plumb, sysbench) = (per(&small, &large), per(&sb_small, &sb_large));
    assert_eq!(plumb, sysbench, "bytes out and in per point select");
    // The request: a 4-byte header, COM_STMT_EXECUTE's 10 bytes, the NULL bitmap, the
    // bound flag (0) and the 8-byte id.
    assert_eq!(plumb.0, 24);
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
         7  read(3</etc/hosts>, \"\", 10) = 0\n\
         7  recvfrom(4<UNIX-STREAM:[1->2]>, 0x7f, 16384, MSG_DONTWAIT, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable)\n\
         7  recvfrom(4<UNIX-STREAM:[1->2]>,  <unfinished ...>\n\
         8  write(1</dev/pts/0<char 136:0>>, \"x\", 1) = 1\n\
         7  <... recvfrom resumed>\"\\1\\2\", 65536, 0, NULL, NULL) = 2\n",
    );
    assert_eq!(t.reads, 4);
    assert_eq!(t.polls, 1);
    assert_eq!((t.bytes_in, t.bytes_out), (4, 1));
    assert_eq!(t.unpolled.len(), 3);
    assert!(t.unpolled[0].starts_with("7  recvfrom(4"));
    assert_eq!(t.writes, 1);
}
