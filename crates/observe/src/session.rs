//! The observation of one run: [`Observer::start`] before the workers, [`Observer::finish`]
//! after them.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::baseline::Ready;
use crate::diskstats::IostatFigures;
use crate::host::{self, HostFacts, LoadAtStart};
use crate::observations::*;
use crate::process::{self, Tracer};
use crate::procstat::SystemFigures;
use crate::residency::{ResidencyProbe, ResidencySnapshot};
use crate::roots::Roots;
use crate::sampler::{Reader, Reading, SamplerThread, Series};
use crate::target::{self, Target};

/// What to observe.
#[derive(Clone, Debug)]
pub struct ObserveSpec {
    /// The directory the test works in (its block device is sampled).
    pub dir: Option<PathBuf>,
    /// Files whose page-cache residency is measured at start and end.
    pub files: Vec<PathBuf>,
    /// Sampling interval; None: no sampling thread, start and end facts only.
    pub interval: Option<Duration>,
    /// How long to watch machine CPU use before the run ("other load present").
    pub baseline: Duration,
    /// The host's facts and the baseline, already taken while the plan's setup ran
    /// ([`crate::Baseline`]): the start neither gathers nor waits for them again.
    pub ready: Option<Ready>,
    pub roots: Roots,
}

/// The baseline before a plan's first run: long enough to see other work that comes and
/// goes (a few scheduler ticks on every CPU at 100 Hz).
pub const BASELINE: Duration = Duration::from_millis(250);

impl ObserveSpec {
    pub fn new(dir: Option<PathBuf>, files: Vec<PathBuf>, interval: Option<Duration>) -> Self {
        ObserveSpec {
            dir,
            files,
            interval,
            baseline: BASELINE,
            ready: None,
            roots: Roots::default(),
        }
    }
}

/// A run under observation.
pub struct Observer {
    glance: Glance,
    probe: ResidencyProbe,
    residency_start: Option<ResidencySnapshot>,
    reader: Option<Reader>,
    sampler: Option<SamplerThread>,
}

/// What an observation knows from its start: enough to read the counters again at any
/// moment and say what changed since (see [`Glance::now`]).
#[derive(Clone, Debug)]
pub struct Glance {
    spec: ObserveSpec,
    origin: Instant,
    host: HostFacts,
    load: LoadAtStart,
    target: Option<Target>,
    target_error: Option<String>,
    devices: Vec<(String, DeviceRole)>,
    tracer_start: Option<Tracer>,
    first: Reading,
    notes: Vec<String>,
}

/// What only the end of an observation has.
struct Ending {
    last: Reading,
    series: Series,
    cost: SamplerCost,
    /// The sampler's own CPU time (user, system), left out of the process's.
    own: (u64, u64),
    residency_end: Option<ResidencySnapshot>,
    residency_start: Option<ResidencySnapshot>,
    tracer_end: Option<Tracer>,
}

impl Observer {
    /// Gather start facts and begin sampling. Never fails: what cannot be observed becomes a
    /// note in the result.
    pub fn start(mut spec: ObserveSpec) -> Observer {
        let roots = spec.roots.clone();
        let mut notes = Vec::new();
        let (host, ready_load) = match spec.ready.take() {
            Some(r) => (r.host, Some(r.load)),
            None => (host::host_facts(&roots), None),
        };
        let (target, target_error) = match &spec.dir {
            Some(d) => match target::resolve_with(&roots, d) {
                Ok(t) => (Some(t), None),
                Err(e) => (None, Some(e.to_string())),
            },
            None => (None, None),
        };
        let mut devices = Vec::new();
        if let Some(t) = &target {
            for (i, name) in t.sampled_devices().into_iter().enumerate() {
                let fs_dev = t.device.as_ref().is_some_and(|d| d.name == name);
                let role = if i == 0 && fs_dev {
                    DeviceRole::Filesystem
                } else {
                    DeviceRole::Disk
                };
                devices.push((name, role));
            }
        }
        let load = ready_load.unwrap_or_else(|| host::load_at_start(&roots, spec.baseline));
        let tracer_start = process::tracer(&roots);
        let mut probe = ResidencyProbe::default();
        let residency_start = (!spec.files.is_empty()).then(|| probe.files(&spec.files));
        let mut reader = Reader::new(
            roots.clone(),
            devices.iter().map(|(n, _)| n.clone()).collect(),
        );
        let origin = Instant::now();
        let first = reader.read(spec.interval.is_some());
        for (i, (n, _)) in devices.iter().enumerate() {
            if first.disks[i].is_none() {
                notes.push(format!("cannot read the I/O counters of {n}"));
            }
        }
        let mut sampler = None;
        let mut reader = Some(reader);
        if let Some(iv) = spec.interval {
            match SamplerThread::spawn(reader.take().expect("reader"), first.clone(), origin, iv) {
                Ok(s) => sampler = Some(s),
                Err(e) => notes.push(format!("sampling thread not started: {e}")),
            }
        }
        if reader.is_none() && sampler.is_none() {
            reader = Some(Reader::new(
                roots,
                devices.iter().map(|(n, _)| n.clone()).collect(),
            ));
        }
        Observer {
            glance: Glance {
                spec,
                origin,
                host,
                load,
                target,
                target_error,
                devices,
                tracer_start,
                first,
                notes,
            },
            residency_start,
            probe,
            reader,
            sampler,
        }
    }

    /// The target as resolved at start.
    pub fn target(&self) -> Option<&Target> {
        self.glance.target.as_ref()
    }

    /// A handle that reads what has changed since the start at any moment, from any thread,
    /// without disturbing this observation.
    pub fn glance(&self) -> Glance {
        self.glance.clone()
    }

    /// Stop sampling and assemble the observations. `operations` is what the run counted
    /// (events plus parts such as fsyncs), for per-operation figures.
    pub fn finish(mut self, operations: u64) -> Observations {
        let g = &self.glance;
        let mut own = (0u64, 0u64);
        let (series, last, cost) = match self.sampler.take().and_then(|s| s.stop()) {
            Some(r) => {
                own = (r.user_cpu_ns, r.system_cpu_ns);
                let cpu_ns = r.user_cpu_ns + r.system_cpu_ns;
                let pct = cpu_ns as f64 / r.span.as_nanos().max(1) as f64 * 100.0;
                (
                    r.series,
                    r.last,
                    SamplerCost {
                        samples: r.samples,
                        cpu_ns,
                        cpu_pct_of_core: pct,
                        context_switches: r.context_switches,
                    },
                )
            }
            None => {
                let mut reader = self.reader.take().unwrap_or_else(|| g.reader());
                (Series::new(g.devices.len()), reader.read(false), no_cost())
            }
        };
        let residency_end = self
            .residency_start
            .is_some()
            .then(|| self.probe.files(&g.spec.files));
        let ending = Ending {
            last,
            series,
            cost,
            own,
            residency_end,
            residency_start: self.residency_start.take(),
            tracer_end: process::tracer(&g.spec.roots),
        };
        self.glance.assemble(ending, operations)
    }
}

fn no_cost() -> SamplerCost {
    SamplerCost {
        samples: 0,
        cpu_ns: 0,
        cpu_pct_of_core: 0.0,
        context_switches: 0,
    }
}

impl Glance {
    fn reader(&self) -> Reader {
        Reader::new(
            self.spec.roots.clone(),
            self.devices.iter().map(|(n, _)| n.clone()).collect(),
        )
    }

    /// The observation so far, as if it ended now: the devices', the machine's and the
    /// process's counters since the start. No samples, no page-cache residency and no
    /// operation count (those belong to the end); the sampler's own CPU time is in the
    /// process's.
    pub fn now(&self) -> Observations {
        let ending = Ending {
            last: self.reader().read(false),
            series: Series::new(self.devices.len()),
            cost: no_cost(),
            own: (0, 0),
            residency_end: None,
            residency_start: None,
            tracer_end: self.tracer_start.clone(),
        };
        self.assemble(ending, 0)
    }

    fn assemble(&self, end: Ending, operations: u64) -> Observations {
        let Ending {
            last,
            series,
            cost,
            own,
            residency_end,
            residency_start,
            tracer_end,
        } = end;
        let first = &self.first;
        let secs = last.at.duration_since(first.at).as_secs_f64();
        let duration_s = last.at.duration_since(self.origin).as_secs_f64();
        let devices = self
            .devices
            .iter()
            .enumerate()
            .filter_map(|(i, (name, role))| {
                let d = last.disks[i]?.delta(first.disks[i].as_ref()?);
                Some(DeviceObservation {
                    name: name.clone(),
                    role: *role,
                    totals: DeviceTotals {
                        read_bytes: d.read_sectors * 512,
                        write_bytes: d.write_sectors * 512,
                        discard_bytes: d.discard_sectors * 512,
                        counters: d,
                        figures: IostatFigures::from_delta(&d, secs),
                    },
                    samples: series.devices.get(i).cloned().unwrap_or_default(),
                })
            })
            .collect();

        let (totals, cs, intr) = match (&first.stat, &last.stat) {
            (Some(a), Some(b)) => (
                Some(SystemFigures::between(a, b, secs)),
                b.context_switches.saturating_sub(a.context_switches),
                b.interrupts.saturating_sub(a.interrupts),
            ),
            _ => (None, 0, 0),
        };
        let system = SystemObservation {
            cpus: last.stat.map(|s| s.cpus).unwrap_or(self.host.logical_cpus),
            totals,
            context_switches: cs,
            interrupts: intr,
            samples: series.system.clone(),
        };

        let peak = |f: fn(&crate::meminfo::MemSnapshot) -> u64| {
            first
                .mem
                .iter()
                .chain(last.mem.iter())
                .chain(series.memory.iter().map(|s| &s.memory))
                .map(f)
                .max()
                .unwrap_or(0)
        };
        let memory = MemoryObservation {
            start: first.mem,
            end: last.mem,
            peak_dirty_bytes: peak(|m| m.dirty_bytes),
            peak_writeback_bytes: peak(|m| m.writeback_bytes),
            samples: series.memory.clone(),
        };

        // The sampler's own CPU time and context switches are observation cost, not the run's.
        let mut pt = last.process.delta(&first.process);
        pt.user_cpu_ns = pt.user_cpu_ns.saturating_sub(own.0);
        pt.system_cpu_ns = pt.system_cpu_ns.saturating_sub(own.1);
        pt.voluntary_context_switches = pt
            .voluntary_context_switches
            .saturating_sub(cost.context_switches);
        let cpu_ns = pt.user_cpu_ns + pt.system_cpu_ns;
        let per_operation = (operations > 0).then(|| {
            let n = operations as f64;
            PerOperation {
                context_switches: (pt.voluntary_context_switches + pt.involuntary_context_switches)
                    as f64
                    / n,
                voluntary_context_switches: pt.voluntary_context_switches as f64 / n,
                involuntary_context_switches: pt.involuntary_context_switches as f64 / n,
                cpu_ns: cpu_ns as f64 / n,
            }
        });
        let process = ProcessObservation {
            totals: pt,
            cpu_pct_of_core: cpu_ns as f64 / (secs.max(1e-9) * 1e9) * 100.0,
            operations,
            per_operation,
            samples: series.process.clone(),
            threads: series.thread_summaries(),
        };

        Observations {
            interval_s: self.spec.interval.map(|d| d.as_secs_f64()),
            duration_s,
            host: self.host.clone(),
            load_at_start: self.load.clone(),
            target: self.target.clone(),
            target_error: self.target_error.clone(),
            devices,
            system,
            memory,
            process,
            residency: match (residency_start, residency_end) {
                (Some(start), Some(end)) => Some(ResidencyObservation { start, end }),
                _ => None,
            },
            tracer: TracerObservation {
                at_start: self.tracer_start.clone(),
                at_end: tracer_end,
            },
            sampler: cost,
            notes: self.notes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_short_observed_session_has_samples_totals_and_residency() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("data");
        std::fs::File::create(&f)
            .unwrap()
            .write_all(&vec![1u8; 256 << 10])
            .unwrap();
        let mut spec = ObserveSpec::new(
            Some(t.path().to_path_buf()),
            vec![f.clone()],
            Some(Duration::from_millis(50)),
        );
        spec.baseline = Duration::from_millis(20);
        let obs = Observer::start(spec);
        let h = std::thread::Builder::new()
            .name("plumb-worker-0".into())
            .spawn(move || {
                let mut v = Vec::new();
                std::fs::File::open(&f)
                    .unwrap()
                    .read_to_end(&mut v)
                    .unwrap();
                std::thread::sleep(Duration::from_millis(200));
                v.len()
            })
            .unwrap();
        assert_eq!(h.join().unwrap(), 256 << 10);
        let o = obs.finish(1000);
        assert!(o.sampler.samples >= 1, "{:?}", o.sampler);
        assert!(!o.system.samples.is_empty());
        assert!(o.system.totals.is_some());
        assert!(o.memory.start.is_some() && o.memory.end.is_some());
        assert_eq!(o.process.operations, 1000);
        assert!(o.process.per_operation.is_some());
        assert!(o.process.threads.iter().any(|t| t.name == "plumb-worker-0"));
        let r = o.residency.as_ref().unwrap();
        assert_eq!(r.end.total_bytes, 256 << 10);
        assert!(r.end.resident_bytes > 0);
        assert!(o.target.is_some() || o.target_error.is_some());
        // Serialises and reads back.
        let j = serde_json::to_string(&o).unwrap();
        let back: Observations = serde_json::from_str(&j).unwrap();
        assert_eq!(back.process.operations, 1000);
    }

    #[test]
    fn sampling_off_still_records_start_and_end() {
        let mut spec = ObserveSpec::new(None, vec![], None);
        spec.baseline = Duration::ZERO;
        let o = Observer::start(spec).finish(0);
        assert_eq!(o.interval_s, None);
        assert_eq!(o.sampler.samples, 0);
        assert!(o.system.samples.is_empty());
        assert!(o.system.totals.is_some());
        assert!(o.process.per_operation.is_none());
        assert!(o.target.is_none() && o.residency.is_none());
        assert!(o.load_at_start.cpu.is_none());
    }

    #[test]
    fn a_glance_reads_the_counters_so_far_and_leaves_the_observation_alone() {
        let t = tempfile::tempdir().unwrap();
        let mut spec = ObserveSpec::new(
            Some(t.path().to_path_buf()),
            vec![],
            Some(Duration::from_millis(50)),
        );
        spec.baseline = Duration::ZERO;
        let obs = Observer::start(spec);
        let glance = obs.glance();
        let spin = |d: Duration| {
            let t0 = Instant::now();
            let mut x = 0u64;
            while t0.elapsed() < d {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            x
        };
        spin(Duration::from_millis(100));
        let a = std::thread::spawn(move || glance.now()).join().unwrap();
        spin(Duration::from_millis(100));
        let o = obs.finish(10);
        assert!(
            a.duration_s > 0.0 && a.duration_s < o.duration_s,
            "{} {}",
            a.duration_s,
            o.duration_s
        );
        assert!(a.process.totals.user_cpu_ns > 0);
        assert!(
            a.process.totals.user_cpu_ns
                <= o.process.totals.user_cpu_ns + a.sampler.cpu_ns + o.sampler.cpu_ns
        );
        assert_eq!(a.devices.len(), o.devices.len());
        assert_eq!(a.sampler.samples, 0);
        assert!(a.residency.is_none());
        assert_eq!(o.process.operations, 10);
    }
}
