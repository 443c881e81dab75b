//! plumb's own process: CPU time, context switches, storage I/O it caused, its threads' CPU
//! use, and whether a tracer is attached.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::roots::{attr, Roots};

/// Cumulative figures of the whole process (all threads, dead ones included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessCounters {
    pub user_cpu_ns: u64,
    pub system_cpu_ns: u64,
    /// Gave up the CPU to wait (I/O, lock, sleep).
    pub voluntary_context_switches: u64,
    /// Preempted while runnable.
    pub involuntary_context_switches: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// /proc/self/io, when the kernel keeps it: bytes passed through read/write calls...
    pub read_syscall_bytes: Option<u64>,
    pub write_syscall_bytes: Option<u64>,
    /// ... and bytes the process made the kernel fetch from or send to storage.
    pub storage_read_bytes: Option<u64>,
    pub storage_write_bytes: Option<u64>,
}

impl ProcessCounters {
    pub fn delta(&self, prev: &ProcessCounters) -> ProcessCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let o = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        ProcessCounters {
            user_cpu_ns: d(self.user_cpu_ns, prev.user_cpu_ns),
            system_cpu_ns: d(self.system_cpu_ns, prev.system_cpu_ns),
            voluntary_context_switches: d(
                self.voluntary_context_switches,
                prev.voluntary_context_switches,
            ),
            involuntary_context_switches: d(
                self.involuntary_context_switches,
                prev.involuntary_context_switches,
            ),
            minor_faults: d(self.minor_faults, prev.minor_faults),
            major_faults: d(self.major_faults, prev.major_faults),
            read_syscall_bytes: o(self.read_syscall_bytes, prev.read_syscall_bytes),
            write_syscall_bytes: o(self.write_syscall_bytes, prev.write_syscall_bytes),
            storage_read_bytes: o(self.storage_read_bytes, prev.storage_read_bytes),
            storage_write_bytes: o(self.storage_write_bytes, prev.storage_write_bytes),
        }
    }
}

fn tv_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000
}

fn rusage(who: libc::c_int) -> libc::rusage {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid out-parameter; getrusage cannot fail for SELF/THREAD.
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

/// CPU time (user, system) of the calling thread, ns.
pub fn thread_cpu_ns() -> (u64, u64) {
    let ru = rusage(libc::RUSAGE_THREAD);
    (tv_ns(ru.ru_utime), tv_ns(ru.ru_stime))
}

/// Context switches (voluntary, involuntary) of the calling thread.
pub fn thread_context_switches() -> (u64, u64) {
    let ru = rusage(libc::RUSAGE_THREAD);
    (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
}

/// Read the process counters: getrusage plus /proc/self/io.
pub fn read_counters(roots: &Roots) -> ProcessCounters {
    let ru = rusage(libc::RUSAGE_SELF);
    let mut c = ProcessCounters {
        user_cpu_ns: tv_ns(ru.ru_utime),
        system_cpu_ns: tv_ns(ru.ru_stime),
        voluntary_context_switches: ru.ru_nvcsw as u64,
        involuntary_context_switches: ru.ru_nivcsw as u64,
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
        ..Default::default()
    };
    if let Ok(io) = std::fs::read_to_string(roots.proc("self/io")) {
        let io = parse_io(&io);
        c.read_syscall_bytes = io.get("rchar").copied();
        c.write_syscall_bytes = io.get("wchar").copied();
        c.storage_read_bytes = io.get("read_bytes").copied();
        c.storage_write_bytes = io.get("write_bytes").copied();
    }
    c
}

pub fn parse_io(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// A process that traces plumb (strace, gdb, perf trace ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tracer {
    pub pid: u32,
    pub name: Option<String>,
}

/// TracerPid from a /proc/PID/status text; 0 means none.
pub fn parse_tracer_pid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse().ok())
}

pub fn tracer(roots: &Roots) -> Option<Tracer> {
    let status = std::fs::read_to_string(roots.proc("self/status")).ok()?;
    let pid = parse_tracer_pid(&status).filter(|&p| p != 0)?;
    Some(Tracer {
        pid,
        name: attr(&roots.proc(&format!("{pid}/comm"))),
    })
}

/// One reading of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadReading {
    pub tid: u32,
    pub name: String,
    /// Time on a CPU since the thread started, ns.
    pub on_cpu_ns: u64,
    /// Time runnable but waiting for a CPU, ns (None without schedstat).
    pub runqueue_wait_ns: Option<u64>,
    /// Start time in clock ticks since boot.
    pub start_ticks: u64,
}

/// /proc/PID/stat: (comm, utime + stime ticks, starttime ticks). comm may hold spaces and
/// parentheses, so fields are counted from the last ')'.
pub fn parse_stat(text: &str) -> Option<(String, u64, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 2..)?.split_whitespace().collect();
    // After comm: state is field 3, utime 14, stime 15, starttime 22 (1-based).
    let n = |i: usize| f.get(i - 3).and_then(|v| v.parse::<u64>().ok());
    Some((comm, n(14)? + n(15)?, n(22)?))
}

/// The state letter of a /proc/PID/stat text (R running or runnable, S sleeping, D ...).
pub fn stat_state(text: &str) -> Option<char> {
    text.get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// The task flag the kernel sets on its own threads (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// The flags field (9th) of a /proc/PID/stat text.
fn stat_flags(text: &str) -> Option<u64> {
    text.get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .nth(6)?
        .parse()
        .ok()
}

/// The kernel's threads that are running or runnable now. Every kernel thread is a child of
/// kthreadd (PID 2), so its children list names them all without a walk of /proc; None
/// where PID 2 is not the kernel's (a PID namespace) or the list is not there.
pub fn kernel_runnable_threads(roots: &Roots) -> Option<u64> {
    let kthreadd = std::fs::read_to_string(roots.proc("2/stat")).ok()?;
    if stat_flags(&kthreadd)? & PF_KTHREAD == 0 {
        return None;
    }
    let children = std::fs::read_to_string(roots.proc("2/task/2/children")).ok()?;
    let running = |text: &str| stat_state(text) == Some('R');
    let mut n = u64::from(running(&kthreadd));
    for pid in children.split_whitespace() {
        if let Ok(text) = std::fs::read_to_string(roots.proc(&format!("{pid}/stat"))) {
            n += u64::from(running(&text));
        }
    }
    Some(n)
}

/// plumb's own threads that are running or runnable now (the caller among them).
pub fn own_runnable_threads(roots: &Roots) -> u64 {
    let Ok(rd) = std::fs::read_dir(roots.proc("self/task")) else {
        return 0;
    };
    rd.flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|s| stat_state(&s))
                == Some('R')
        })
        .count() as u64
}

/// CPU time (user + system) of the whole process so far, ns.
pub fn own_cpu_ns() -> u64 {
    let ru = rusage(libc::RUSAGE_SELF);
    tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime)
}

/// /proc/PID/schedstat: (on-CPU ns, run-queue wait ns).
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

pub fn clock_ticks_per_s() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// Reads plumb's threads, remembering each thread's name and start so later readings need only
/// the cheap schedstat file.
#[derive(Default)]
pub struct ThreadReader {
    known: BTreeMap<u32, (String, u64, bool)>,
    ticks_per_s: u64,
    buf: String,
}

impl ThreadReader {
    pub fn new() -> Self {
        ThreadReader {
            ticks_per_s: clock_ticks_per_s(),
            ..Default::default()
        }
    }

    pub fn read(&mut self, roots: &Roots) -> Vec<ThreadReading> {
        let task = roots.proc("self/task");
        let Ok(rd) = std::fs::read_dir(&task) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in rd.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(r) = self.read_one(&e.path(), tid) {
                out.push(r);
            }
        }
        out
    }

    fn read_one(&mut self, dir: &Path, tid: u32) -> Option<ThreadReading> {
        let mut ticks = None;
        // A new thread names itself just after it starts: its stat is read again on the next
        // sighting before the name is trusted.
        let settled = self.known.get(&tid).is_some_and(|k| k.2);
        if !settled {
            let s = std::fs::read_to_string(dir.join("stat")).ok()?;
            let (name, t, start) = parse_stat(&s)?;
            let seen_before = self.known.contains_key(&tid);
            self.known.insert(tid, (name, start, seen_before));
            ticks = Some(t);
        }
        self.buf.clear();
        let sched = {
            use std::io::Read;
            std::fs::File::open(dir.join("schedstat"))
                .and_then(|mut f| f.read_to_string(&mut self.buf))
                .ok()
                .and_then(|_| parse_schedstat(&self.buf))
        };
        let (name, start, _) = self.known.get(&tid)?.clone();
        let (on_cpu_ns, wait) = match sched {
            Some((run, wait)) => (run, Some(wait)),
            None => {
                let t = match ticks {
                    Some(t) => t,
                    None => parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)?.1,
                };
                (t * 1_000_000_000 / self.ticks_per_s.max(1), None)
            }
        };
        Some(ThreadReading {
            tid,
            name,
            on_cpu_ns,
            runqueue_wait_ns: wait,
            start_ticks: start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_awkward_comm() {
        let s = "4242 (plumb-worker (1)) S 1 2 3 0 -1 4194368 10 0 0 0 150 25 0 0 20 0 3 0 77205 3133440 415 0 0 0";
        let (comm, ticks, start) = parse_stat(s).unwrap();
        assert_eq!(comm, "plumb-worker (1)");
        assert_eq!(ticks, 175);
        assert_eq!(start, 77205);
        assert!(parse_stat("garbage").is_none());
        assert_eq!(stat_state(s), Some('S'));
        assert_eq!(stat_state("9 (a) b) R 1 2"), Some('R'));
        assert_eq!(stat_state("garbage"), None);
    }

    #[test]
    fn schedstat_io_and_tracer() {
        assert_eq!(
            parse_schedstat("183175469 13788522 467\n"),
            Some((183175469, 13788522))
        );
        let io = parse_io("rchar: 100\nwchar: 200\nsyscr: 3\nread_bytes: 4096\nwrite_bytes: 0\n");
        assert_eq!(io["rchar"], 100);
        assert_eq!(io["read_bytes"], 4096);
        assert_eq!(parse_tracer_pid("Name:\tx\nTracerPid:\t1234\n"), Some(1234));
        assert_eq!(parse_tracer_pid("Name:\tx\nTracerPid:\t0\n"), Some(0));
    }

    #[test]
    fn real_process_and_threads() {
        let roots = Roots::default();
        let a = read_counters(&roots);
        // Burn a little CPU so the counters move.
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = read_counters(&roots);
        assert!(b.user_cpu_ns + b.system_cpu_ns >= a.user_cpu_ns + a.system_cpu_ns);
        let (tx, rx) = std::sync::mpsc::channel();
        let (tx2, rx2) = std::sync::mpsc::channel::<()>();
        let h = std::thread::Builder::new()
            .name("plumb-worker-7".into())
            .spawn(move || {
                tx.send(()).unwrap();
                let _ = rx2.recv();
            })
            .unwrap();
        rx.recv().unwrap();
        let mut r = ThreadReader::new();
        let threads = r.read(&roots);
        assert!(threads.iter().any(|t| t.name == "plumb-worker-7"));
        tx2.send(()).unwrap();
        h.join().unwrap();
    }
}
