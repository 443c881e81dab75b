//! The background sampler: reads device, system, memory and process counters every interval
//! and turns consecutive readings into per-interval figures.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use plumb_core::harness::is_worker_thread;

use crate::diskstats::{DiskCounters, IostatFigures};
use crate::meminfo::{self, MemSnapshot};
use crate::observations::{DeviceSample, MemorySample, ProcessSample, SystemSample, ThreadSummary};
use crate::process::{self, ProcessCounters, ThreadReader, ThreadReading};
use crate::procstat::{self, StatReading, SystemFigures};
use crate::roots::Roots;

/// One reading of everything sampled.
#[derive(Clone, Debug)]
pub struct Reading {
    pub at: Instant,
    /// CLOCK_BOOTTIME at the reading, ns (the clock thread start times are counted in).
    pub boottime_ns: u64,
    pub disks: Vec<Option<DiskCounters>>,
    pub stat: Option<StatReading>,
    pub mem: Option<MemSnapshot>,
    pub process: ProcessCounters,
    pub threads: Vec<ThreadReading>,
}

/// Reads counters with reused buffers.
pub struct Reader {
    roots: Roots,
    devices: Vec<String>,
    threads: ThreadReader,
    buf: String,
}

impl Reader {
    pub fn new(roots: Roots, devices: Vec<String>) -> Reader {
        Reader {
            roots,
            devices,
            threads: ThreadReader::new(),
            buf: String::with_capacity(8192),
        }
    }

    fn slurp(&mut self, path: std::path::PathBuf) -> bool {
        self.buf.clear();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_string(&mut self.buf))
            .is_ok()
    }

    pub fn read(&mut self, with_threads: bool) -> Reading {
        let mut disks = Vec::with_capacity(self.devices.len());
        for i in 0..self.devices.len() {
            let p = self
                .roots
                .sys(&format!("class/block/{}/stat", self.devices[i]));
            disks.push(if self.slurp(p) {
                DiskCounters::parse(&self.buf)
            } else {
                None
            });
        }
        let stat = if self.slurp(self.roots.proc("stat")) {
            procstat::parse(&self.buf)
        } else {
            None
        };
        let mem = if self.slurp(self.roots.proc("meminfo")) {
            meminfo::parse(&self.buf)
        } else {
            None
        };
        let process = process::read_counters(&self.roots);
        let threads = if with_threads {
            self.threads.read(&self.roots)
        } else {
            Vec::new()
        };
        Reading {
            at: Instant::now(),
            boottime_ns: boottime_ns(),
            disks,
            stat,
            mem,
            process,
            threads,
        }
    }
}

/// Time series built from consecutive readings.
#[derive(Default, Debug)]
pub struct Series {
    pub devices: Vec<Vec<DeviceSample>>,
    pub system: Vec<SystemSample>,
    pub memory: Vec<MemorySample>,
    pub process: Vec<ProcessSample>,
    /// Per thread: name, first and last reading, highest interval CPU share.
    pub threads: BTreeMap<u32, ThreadTrack>,
}

#[derive(Clone, Debug)]
pub struct ThreadTrack {
    pub name: String,
    pub start_ticks: u64,
    pub last: ThreadReading,
    pub last_boottime_ns: u64,
    pub max_interval_cpu_pct: f64,
}

fn boottime_ns() -> u64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a valid out-parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Series {
    pub fn new(devices: usize) -> Series {
        Series {
            devices: vec![Vec::new(); devices],
            ..Default::default()
        }
    }

    /// Add the interval between two readings; `origin` is when observation started.
    pub fn push(&mut self, origin: Instant, a: &Reading, b: &Reading) {
        let secs = b.at.duration_since(a.at).as_secs_f64();
        let t_s = b.at.duration_since(origin).as_secs_f64();
        for (i, (x, y)) in a.disks.iter().zip(&b.disks).enumerate() {
            if let (Some(x), Some(y)) = (x, y) {
                self.devices[i].push(DeviceSample {
                    t_s,
                    length_s: secs,
                    figures: IostatFigures::from_delta(&y.delta(x), secs),
                });
            }
        }
        if let (Some(x), Some(y)) = (&a.stat, &b.stat) {
            self.system.push(SystemSample {
                t_s,
                length_s: secs,
                figures: SystemFigures::between(x, y, secs),
            });
        }
        if let Some(m) = b.mem {
            self.memory.push(MemorySample { t_s, memory: m });
        }
        let d = b.process.delta(&a.process);
        let ns = secs.max(1e-9) * 1e9;
        let prev: BTreeMap<u32, &ThreadReading> = a.threads.iter().map(|t| (t.tid, t)).collect();
        let (mut n, mut max, mut sum, mut wait_max) = (0u32, 0.0f64, 0.0f64, None::<f64>);
        let now_boot = b.boottime_ns;
        let hz = process::clock_ticks_per_s().max(1);
        for t in &b.threads {
            let track = self.threads.entry(t.tid).or_insert_with(|| ThreadTrack {
                name: t.name.clone(),
                start_ticks: t.start_ticks,
                last: t.clone(),
                last_boottime_ns: now_boot,
                max_interval_cpu_pct: 0.0,
            });
            if track.name != t.name {
                track.name.clone_from(&t.name);
            }
            track.last = t.clone();
            track.last_boottime_ns = now_boot;
            // A thread born during the interval is measured over the part it lived.
            let (cpu_ns, wait_ns, span_ns) = match prev.get(&t.tid) {
                Some(p) => (
                    t.on_cpu_ns.saturating_sub(p.on_cpu_ns),
                    t.runqueue_wait_ns
                        .zip(p.runqueue_wait_ns)
                        .map(|(w1, w0)| w1.saturating_sub(w0)),
                    ns,
                ),
                None => {
                    let born = t.start_ticks.saturating_mul(1_000_000_000) / hz;
                    if born < a.boottime_ns || born >= b.boottime_ns {
                        continue;
                    }
                    let span = (b.boottime_ns - born) as f64;
                    // Start times have clock-tick resolution: a thread younger than two ticks
                    // gives no meaningful share.
                    if span < 2e9 / hz as f64 {
                        continue;
                    }
                    (t.on_cpu_ns, t.runqueue_wait_ns, span)
                }
            };
            let cpu = (cpu_ns as f64 / span_ns * 100.0).min(100.0);
            track.max_interval_cpu_pct = track.max_interval_cpu_pct.max(cpu);
            if is_worker_thread(&t.name) {
                n += 1;
                max = max.max(cpu);
                sum += cpu;
                if let Some(w) = wait_ns {
                    let w = (w as f64 / span_ns * 100.0).min(100.0);
                    wait_max = Some(wait_max.map_or(w, |m| m.max(w)));
                }
            }
        }
        self.process.push(ProcessSample {
            t_s,
            length_s: secs,
            user_cpu_pct: d.user_cpu_ns as f64 / ns * 100.0,
            system_cpu_pct: d.system_cpu_ns as f64 / ns * 100.0,
            voluntary_context_switches_per_s: d.voluntary_context_switches as f64 / secs.max(1e-9),
            involuntary_context_switches_per_s: d.involuntary_context_switches as f64
                / secs.max(1e-9),
            workers: n,
            worker_max_cpu_pct: max,
            worker_mean_cpu_pct: if n == 0 { 0.0 } else { sum / n as f64 },
            worker_max_runqueue_wait_pct: wait_max,
        });
    }

    /// Per-thread summaries: CPU from each thread's start to its last sighting.
    pub fn thread_summaries(&self) -> Vec<ThreadSummary> {
        let hz = process::clock_ticks_per_s().max(1);
        self.threads
            .iter()
            .map(|(tid, t)| {
                let start_ns = t.start_ticks.saturating_mul(1_000_000_000) / hz;
                let life = t.last_boottime_ns.saturating_sub(start_ns) as f64 / 1e9;
                let on = t.last.on_cpu_ns as f64 / 1e9;
                ThreadSummary {
                    tid: *tid,
                    name: t.name.clone(),
                    on_cpu_s: on,
                    lifetime_s: life,
                    cpu_pct: if life > 0.0 {
                        (on / life * 100.0).min(100.0)
                    } else {
                        0.0
                    },
                    runqueue_wait_s: t.last.runqueue_wait_ns.map(|w| w as f64 / 1e9),
                    max_interval_cpu_pct: t.max_interval_cpu_pct,
                }
            })
            .collect()
    }
}

/// What the sampler thread hands back.
pub struct SamplerResult {
    pub series: Series,
    pub last: Reading,
    pub samples: u64,
    pub user_cpu_ns: u64,
    pub system_cpu_ns: u64,
    pub context_switches: u64,
    pub span: Duration,
}

pub struct SamplerThread {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<SamplerResult>,
}

impl SamplerThread {
    /// Start sampling every `interval` from the reading `first`.
    pub fn spawn(
        mut reader: Reader,
        first: Reading,
        origin: Instant,
        interval: Duration,
    ) -> std::io::Result<SamplerThread> {
        let (tx, rx) = mpsc::channel::<()>();
        let ndev = first.disks.len();
        let handle = std::thread::Builder::new()
            .name("plumb-observe".into())
            .spawn(move || {
                let (u0, s0) = process::thread_cpu_ns();
                let (v0, i0) = process::thread_context_switches();
                let begun = Instant::now();
                let mut series = Series::new(ndev);
                let mut prev = first;
                let mut next = prev.at + interval;
                let mut samples = 0u64;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            let cur = reader.read(true);
                            series.push(origin, &prev, &cur);
                            samples += 1;
                            prev = cur;
                            next += interval;
                            // After a stall (suspend, overload), don't fire a burst of
                            // catch-up samples.
                            let now = Instant::now();
                            if next < now {
                                next = now + interval;
                            }
                        }
                        _ => break,
                    }
                }
                // The last, partial interval up to the stop, if it is long enough to mean
                // anything.
                let cur = reader.read(true);
                if cur.at.duration_since(prev.at) >= interval / 5 {
                    series.push(origin, &prev, &cur);
                    samples += 1;
                }
                let (v1, i1) = process::thread_context_switches();
                let (u1, s1) = process::thread_cpu_ns();
                SamplerResult {
                    series,
                    last: cur,
                    samples,
                    user_cpu_ns: u1.saturating_sub(u0),
                    system_cpu_ns: s1.saturating_sub(s0),
                    context_switches: (v1 - v0) + (i1 - i0),
                    span: begun.elapsed(),
                }
            })?;
        Ok(SamplerThread { stop: tx, handle })
    }

    pub fn stop(self) -> Option<SamplerResult> {
        let _ = self.stop.send(());
        self.handle.join().ok()
    }
}
