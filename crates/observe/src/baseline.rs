//! The load baseline: how busy the machine was with other work just before a run.
//!
//! Two ways to take it. [`host::load_at_start`] watches a window and returns (the run waits
//! for it). [`Baseline::start`] watches on a thread of its own while the plan's setup runs
//! (a database's schema and population), and [`Baseline::finish`] ends the watch when the
//! run is about to start, waiting only for what is left of the window: the window is the
//! last `window` before the run, as in the first way, but the run no longer waits for it.
//! While the setup runs, the database server works for plumb: its CPU time and its running
//! threads are left out like plumb's own, and the observation says so
//! ([`SetupOverlap`]).
//!
//! [`host::load_at_start`]: crate::host::load_at_start

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::host::{self, HostFacts, LoadAtStart};
use crate::process;
use crate::procstat::{self, CpuPct, CpuTicks};
use crate::roots::{attr, Roots};

/// Readings of the runnable count spread over the window.
pub(crate) const RUNNABLE_SAMPLES: u32 = 10;

/// How the window of a baseline taken during the plan's setup relates to it, and what was
/// left out as the setup's own work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetupOverlap {
    /// The part of the window during which the setup steps still ran, s (the rest, if any,
    /// was a plain wait before the run).
    pub setup_s: f64,
    /// The database server the setup worked in (the peer of plumb's connection).
    pub server_pid: u32,
    pub server_name: Option<String>,
    /// Processes counted as the server at the window's end: it and its descendants
    /// (PostgreSQL's backends are the postmaster's children).
    pub server_processes: u32,
    /// The server's CPU time over the window, percent of all CPUs: left out of
    /// `busy_other_pct` with plumb's own.
    pub server_cpu_pct: f64,
    /// The server's running or runnable threads, mean over the runnable samples: left out
    /// of `runnable_other_mean`/`_max` with plumb's own.
    pub server_runnable_mean: f64,
}

/// A process whose CPU time and runnable threads are plumb's work, not other load.
struct Server {
    pid: u32,
    /// Each thread's stat file, kept open and read again at offset 0: a server has many
    /// threads (MariaDB over a hundred), and one pread(2) each is a fraction of an
    /// open-read-close.
    tasks: HashMap<(u32, u32), File>,
    buf: Vec<u8>,
}

/// What the server's processes had done at one moment.
#[derive(Clone, Copy, Default)]
struct ServerReading {
    /// utime + stime of every process, clock ticks.
    cpu_ticks: u64,
    runnable: u64,
    processes: u32,
}

impl Server {
    fn new(pid: u32) -> Server {
        Server {
            pid,
            tasks: HashMap::new(),
            buf: vec![0; 1024],
        }
    }

    /// The server and its descendants: the children each one's main thread forked
    /// (PostgreSQL's postmaster forks every backend and helper from its one thread).
    fn pids(&self, roots: &Roots) -> Vec<u32> {
        let mut all = vec![self.pid];
        let mut i = 0;
        while i < all.len() {
            let pid = all[i];
            i += 1;
            let Ok(text) =
                std::fs::read_to_string(roots.proc(&format!("{pid}/task/{pid}/children")))
            else {
                continue;
            };
            for c in text
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if !all.contains(&c) {
                    all.push(c);
                }
            }
        }
        all
    }

    /// The state letter of one thread, from its kept-open stat file.
    fn state(&mut self, roots: &Roots, pid: u32, tid: u32) -> Option<char> {
        use std::collections::hash_map::Entry;
        let f = match self.tasks.entry((pid, tid)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                e.insert(File::open(roots.proc(&format!("{pid}/task/{tid}/stat"))).ok()?)
            }
        };
        let n = f.read_at(&mut self.buf, 0).ok()?;
        process::stat_state(std::str::from_utf8(&self.buf[..n]).ok()?)
    }

    fn read(&mut self, roots: &Roots) -> ServerReading {
        let mut r = ServerReading::default();
        let mut seen = HashSet::new();
        for pid in self.pids(roots) {
            let Some((_, ticks, _)) = std::fs::read_to_string(roots.proc(&format!("{pid}/stat")))
                .ok()
                .and_then(|s| process::parse_stat(&s))
            else {
                continue;
            };
            r.processes += 1;
            r.cpu_ticks += ticks;
            let Ok(rd) = std::fs::read_dir(roots.proc(&format!("{pid}/task"))) else {
                continue;
            };
            for tid in rd
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            {
                seen.insert((pid, tid));
                if self.state(roots, pid, tid) == Some('R') {
                    r.runnable += 1;
                }
            }
        }
        // Threads that ended: their files go.
        self.tasks.retain(|k, _| seen.contains(k));
        r
    }
}

/// One reading of the machine, plumb and the server.
struct Sample {
    at: Instant,
    cpu: CpuTicks,
    procs_running: u64,
    own_cpu_ns: u64,
    own_runnable: u64,
    /// Kernel threads in state R, read only when procs_running shows more than plumb's and
    /// the server's (most samples of a quiet machine skip the read).
    kernel_runnable: Option<u64>,
    server: Option<ServerReading>,
}

fn sample(roots: &Roots, server: Option<&mut Server>) -> Option<Sample> {
    let at = Instant::now();
    let own_cpu_ns = process::own_cpu_ns();
    let stat = std::fs::read_to_string(roots.proc("stat"))
        .ok()
        .and_then(|t| procstat::parse(&t))?;
    let own_runnable = process::own_runnable_threads(roots);
    let server = server.map(|s| s.read(roots));
    let ours = own_runnable + server.map_or(0, |r| r.runnable);
    let kernel_runnable = if stat.procs_running > ours {
        process::kernel_runnable_threads(roots)
    } else {
        Some(0)
    };
    Some(Sample {
        at,
        cpu: stat.cpu,
        procs_running: stat.procs_running,
        own_cpu_ns,
        own_runnable,
        kernel_runnable,
        server,
    })
}

/// Watch the machine for `window` (at least), reading it `RUNNABLE_SAMPLES` times per
/// window. With `stop`, keep watching until it fires (or its sender goes), then stop as
/// soon as a whole window is covered; the figures are those of the last window.
fn watch(
    roots: &Roots,
    window: Duration,
    mut server: Option<&mut Server>,
    stop: Option<&Receiver<()>>,
) -> LoadAtStart {
    let mut l = host::load_averages(roots);
    if window.is_zero() {
        return l;
    }
    let start = Instant::now();
    let Some(s0) = sample(roots, server.as_deref_mut()) else {
        return l;
    };
    let period = window / RUNNABLE_SAMPLES;
    // The samples of the last window and the one just before it (its start).
    let mut ring: VecDeque<Sample> = VecDeque::from([s0]);
    let mut stopped_at = stop.is_none().then_some(start);
    let mut i = 0u32;
    loop {
        i += 1;
        let due = start + period * i;
        let covered = |now: Instant| now.duration_since(start) >= window;
        if let (None, Some(rx)) = (stopped_at, stop) {
            match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    let now = Instant::now();
                    stopped_at = Some(now);
                    // A window already covered ends now, with a reading of this moment.
                    if covered(now) {
                        if let Some(s) = sample(roots, server.as_deref_mut()) {
                            ring.push_back(s);
                        }
                        break;
                    }
                    std::thread::sleep(due.saturating_duration_since(Instant::now()));
                }
            }
        } else {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        if let Some(s) = sample(roots, server.as_deref_mut()) {
            ring.push_back(s);
        }
        // Keep one sample at or before the last window's start.
        while ring.len() > 2 && ring[1].at + window <= ring[ring.len() - 1].at {
            ring.pop_front();
        }
        if stopped_at.is_some() && (i >= RUNNABLE_SAMPLES || covered(Instant::now())) {
            break;
        }
    }
    let (Some(first), Some(last)) = (ring.front(), ring.back()) else {
        return l;
    };
    l.window_s = last.at.duration_since(first.at).as_secs_f64();
    if ring.len() < 2 {
        return l;
    }
    let tps = process::clock_ticks_per_s();
    let server_ns = match (&first.server, &last.server) {
        (Some(a), Some(b)) => b.cpu_ticks.saturating_sub(a.cpu_ticks) * 1_000_000_000 / tps,
        _ => 0,
    };
    let own = last.own_cpu_ns.saturating_sub(first.own_cpu_ns);
    let cpu = CpuPct::between(&first.cpu, &last.cpu);
    l.busy_cpu_pct = Some(cpu.busy_pct());
    l.cpu = Some(cpu);
    l.busy_other_pct = Some(host::busy_other_pct(
        &first.cpu,
        &last.cpu,
        own + server_ns,
        tps,
    ));
    let runs: Vec<&Sample> = ring.iter().skip(1).collect();
    // The kernel's share of what is not ours, each sample read apart from procs_running
    // and so bounded by it.
    let (others, kernel): (Vec<u64>, Vec<Option<u64>>) = runs
        .iter()
        .map(|s| {
            let server = s.server.map_or(0, |r| r.runnable);
            let not_ours = s.procs_running.saturating_sub(s.own_runnable + server);
            let kernel = s.kernel_runnable.map(|k| k.min(not_ours));
            (not_ours - kernel.unwrap_or(0), kernel)
        })
        .unzip();
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    l.runnable_samples = others.len() as u32;
    l.runnable_other_mean = Some(mean(&others));
    l.runnable_other_max = others.iter().max().copied();
    if let Some(kernel) = kernel.into_iter().collect::<Option<Vec<u64>>>() {
        l.runnable_kernel_mean = Some(mean(&kernel));
        l.runnable_kernel_max = kernel.iter().max().copied();
    }
    if let (Some(server), Some(stopped)) = (server, stopped_at.filter(|_| stop.is_some())) {
        let total = last.cpu.total().saturating_sub(first.cpu.total()).max(1) as f64;
        let server_ticks = server_ns as f64 * tps as f64 / 1e9;
        l.during_setup = Some(SetupOverlap {
            setup_s: stopped
                .min(last.at)
                .saturating_duration_since(first.at)
                .as_secs_f64(),
            server_pid: server.pid,
            server_name: attr(&roots.proc(&format!("{}/comm", server.pid))),
            server_processes: last.server.map_or(0, |r| r.processes),
            server_cpu_pct: (server_ticks / total * 100.0).min(100.0),
            server_runnable_mean: runs
                .iter()
                .map(|s| s.server.map_or(0, |r| r.runnable))
                .sum::<u64>() as f64
                / runs.len() as f64,
        });
    }
    l
}

/// Load averages now, and what runs over `window` (0: load averages only).
pub(crate) fn over(roots: &Roots, window: Duration) -> LoadAtStart {
    watch(roots, window, None, None)
}

/// What a baseline taken during the setup hands to the run's observer.
#[derive(Clone, Debug)]
pub struct Ready {
    pub host: HostFacts,
    pub load: LoadAtStart,
}

/// A load baseline being taken on its own thread while the plan's setup runs.
pub struct Baseline {
    /// The watching thread and what tells it the setup is done; None when it could not start.
    watch: Option<(Sender<()>, JoinHandle<Ready>)>,
}

impl Baseline {
    /// Start watching: the host's facts first, then the machine's load until
    /// [`Baseline::finish`], leaving out `server_pid`'s (and its descendants') CPU time and
    /// running threads as the setup's. A thread that cannot be started is no baseline:
    /// `finish` then watches the window itself, as the observer would have.
    pub fn start(roots: Roots, window: Duration, server_pid: u32) -> Baseline {
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("plumb-baseline".into())
            .spawn({
                let roots = roots.clone();
                move || {
                    let host = host::host_facts(&roots);
                    let mut server = Server::new(server_pid);
                    let load = watch(&roots, window, Some(&mut server), Some(&rx));
                    Ready { host, load }
                }
            });
        Baseline {
            watch: spawned.ok().map(|t| (tx, t)),
        }
    }

    /// The setup is done: end the watch once its window is covered. None when the thread
    /// could not be started or failed (the observer then takes the baseline itself).
    pub fn finish(mut self) -> Option<Ready> {
        let (tx, thread) = self.watch.take()?;
        let _ = tx.send(());
        thread.join().ok()
    }
}

impl Drop for Baseline {
    /// A plan that ends in its setup stops the watch without waiting for it.
    fn drop(&mut self) {
        if let Some((tx, _)) = &self.watch {
            let _ = tx.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blockdev::fixture::write;

    fn spin(d: Duration) {
        let t0 = Instant::now();
        while t0.elapsed() < d {
            std::hint::black_box(0u64);
        }
    }

    #[test]
    fn a_setup_shorter_than_the_window_waits_only_for_the_rest() {
        let window = Duration::from_millis(100);
        let b = Baseline::start(Roots::default(), window, std::process::id());
        std::thread::sleep(Duration::from_millis(30));
        let t = Instant::now();
        let r = b.finish().expect("a baseline");
        assert!(r.host.logical_cpus >= 1);
        assert!(r.load.window_s >= 0.099, "{}", r.load.window_s);
        // It did not start a whole window over when asked to finish.
        assert!(t.elapsed() < Duration::from_secs(5));
        let o = r.load.during_setup.expect("overlap");
        assert!(o.setup_s > 0.0 && o.setup_s <= r.load.window_s, "{o:?}");
        assert_eq!(o.server_pid, std::process::id());
        assert!(o.server_processes >= 1);
        assert_eq!(r.load.runnable_samples, RUNNABLE_SAMPLES);
    }

    #[test]
    fn a_long_setup_reports_its_last_window_and_leaves_the_server_out() {
        // The "server" is this test process itself: its spinning during the setup is the
        // setup's work and is not other load.
        let window = Duration::from_millis(100);
        let b = Baseline::start(Roots::default(), window, std::process::id());
        spin(Duration::from_millis(350));
        let r = b.finish().expect("a baseline");
        let l = r.load;
        // The last window, not the whole setup.
        assert!(l.window_s >= 0.099 && l.window_s < 0.3, "{}", l.window_s);
        let o = l.during_setup.expect("overlap");
        assert!(o.setup_s > 0.05, "{o:?}");
        assert!(o.server_cpu_pct > 0.0, "{o:?}");
        assert!(l.busy_other_pct.unwrap() <= l.busy_cpu_pct.unwrap() + 1e-9);
    }

    #[test]
    fn the_server_and_its_children_are_read_from_a_tree() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        write(
            &r.proc("100/stat"),
            "100 (postgres) S 1 2 3 0 -1 0 0 0 0 0 30 10 0 0 20 0 3 0 500",
        );
        write(&r.proc("100/task/100/stat"), "100 (postgres) S 1 2 3");
        write(&r.proc("100/task/100/children"), "200 300 ");
        // Another thread's children are not looked for (a forking server forks from its main
        // thread).
        write(&r.proc("100/task/101/children"), "400");
        write(&r.proc("100/task/101/stat"), "101 (postgres) S 1 2 3");
        write(
            &r.proc("400/stat"),
            "400 (x) R 1 2 3 0 -1 0 0 0 0 0 9 9 0 0 20 0 1 0 800",
        );
        write(
            &r.proc("200/stat"),
            "200 (postgres) R 100 2 3 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 600",
        );
        write(&r.proc("200/task/200/stat"), "200 (postgres) R 100 2 3");
        write(
            &r.proc("300/stat"),
            "300 (postgres) S 100 2 3 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 700",
        );
        write(&r.proc("300/task/300/stat"), "300 (postgres) S 100 2 3");
        write(&r.proc("300/task/301/stat"), "301 (postgres) R 100 2 3");
        let s = Server::new(100).read(&r);
        assert_eq!(s.processes, 3);
        assert_eq!(s.cpu_ticks, 40 + 10 + 1);
        assert_eq!(s.runnable, 2);
        // Gone: nothing, and no panic.
        let gone = Server::new(999).read(&r);
        assert_eq!((gone.processes, gone.cpu_ticks), (0, 0));
    }

    #[test]
    fn runnable_others_leave_out_the_servers_threads() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        write(&r.proc("loadavg"), "0.10 0.10 0.10 1/100 999\n");
        write(
            &r.proc("stat"),
            "cpu  100 0 50 1000 10 0 0 0 0 0\nprocs_running 5\nprocs_blocked 0\n",
        );
        write(&r.proc("self/task/10/stat"), "10 (plumb) R 1 2 3");
        write(
            &r.proc("7/stat"),
            "7 (mariadbd) S 1 2 3 0 -1 0 0 0 0 0 3 4 0 0 20 0 3 0 50",
        );
        write(&r.proc("7/comm"), "mariadbd\n");
        write(&r.proc("7/task/7/stat"), "7 (mariadbd) S 1 2 3");
        write(&r.proc("7/task/8/stat"), "8 (mariadbd) R 1 2 3");
        write(&r.proc("7/task/9/stat"), "9 (mariadbd) R 1 2 3");
        let b = Baseline::start(r, Duration::from_millis(20), 7);
        let l = b.finish().unwrap().load;
        // 5 running: plumb's 1 and the server's 2 are not other load.
        assert_eq!(l.runnable_other_mean, Some(2.0));
        let o = l.during_setup.unwrap();
        assert_eq!(o.server_name.as_deref(), Some("mariadbd"));
        assert_eq!(o.server_runnable_mean, 2.0);
        assert_eq!(o.server_cpu_pct, 0.0);
    }
}
