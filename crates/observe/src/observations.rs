//! What a run's observation produces: one serde model, every figure named with its unit.

use serde::{Deserialize, Serialize};

use crate::diskstats::{DiskCounters, IostatFigures};
use crate::host::{HostFacts, LoadAtStart};
use crate::meminfo::MemSnapshot;
use crate::process::{ProcessCounters, Tracer};
use crate::procstat::SystemFigures;
use crate::residency::ResidencySnapshot;
use crate::target::Target;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observations {
    /// Sampling interval; None when sampling was off (start and end facts only).
    pub interval_s: Option<f64>,
    /// From the start of observation to its end (brackets the benchmark run).
    pub duration_s: f64,
    pub host: HostFacts,
    pub load_at_start: LoadAtStart,
    /// The directory the test works in, when it has one.
    pub target: Option<Target>,
    /// Why the target could not be resolved.
    pub target_error: Option<String>,
    /// Block devices under the target: the filesystem's device first, then whole disks.
    pub devices: Vec<DeviceObservation>,
    pub system: SystemObservation,
    pub memory: MemoryObservation,
    pub process: ProcessObservation,
    /// Page-cache residency of the test's files at start and end.
    pub residency: Option<ResidencyObservation>,
    pub tracer: TracerObservation,
    /// What observing cost.
    pub sampler: SamplerCost,
    /// Things that could not be observed, one line each.
    pub notes: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceRole {
    /// The device the filesystem is on (a partition, dm or md device, or a whole disk).
    Filesystem,
    /// A whole disk under it.
    Disk,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceObservation {
    pub name: String,
    pub role: DeviceRole,
    pub totals: DeviceTotals,
    pub samples: Vec<DeviceSample>,
}

/// The whole observation: counter differences between start and end, and the figures iostat
/// would print for one interval spanning it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceTotals {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    pub counters: DiskCounters,
    pub figures: IostatFigures,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceSample {
    /// End of the interval, seconds since observation started.
    pub t_s: f64,
    pub length_s: f64,
    #[serde(flatten)]
    pub figures: IostatFigures,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemObservation {
    pub cpus: u32,
    pub totals: Option<SystemFigures>,
    pub context_switches: u64,
    pub interrupts: u64,
    pub samples: Vec<SystemSample>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    pub t_s: f64,
    pub length_s: f64,
    #[serde(flatten)]
    pub figures: SystemFigures,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryObservation {
    pub start: Option<MemSnapshot>,
    pub end: Option<MemSnapshot>,
    /// Highest readings seen (start, samples, end).
    pub peak_dirty_bytes: u64,
    pub peak_writeback_bytes: u64,
    pub samples: Vec<MemorySample>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemorySample {
    pub t_s: f64,
    #[serde(flatten)]
    pub memory: MemSnapshot,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessObservation {
    /// Differences over the observation, the sampler thread's own share removed.
    pub totals: ProcessCounters,
    /// (user + system CPU) / duration: 100 = one core busy all the time.
    pub cpu_pct_of_core: f64,
    /// Operations the run reported (events and parts such as fsyncs), for per-operation figures.
    pub operations: u64,
    pub per_operation: Option<PerOperation>,
    pub samples: Vec<ProcessSample>,
    /// plumb's threads seen while sampling (workers are named as plumb_core::harness::WORKER_THREAD_NAME says).
    pub threads: Vec<ThreadSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerOperation {
    pub context_switches: f64,
    pub voluntary_context_switches: f64,
    pub involuntary_context_switches: f64,
    pub cpu_ns: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    pub t_s: f64,
    pub length_s: f64,
    /// 100 = one core.
    pub user_cpu_pct: f64,
    pub system_cpu_pct: f64,
    pub voluntary_context_switches_per_s: f64,
    pub involuntary_context_switches_per_s: f64,
    /// Worker threads alive through the interval: the busiest one's CPU share and the mean.
    pub workers: u32,
    pub worker_max_cpu_pct: f64,
    pub worker_mean_cpu_pct: f64,
    /// Share of the interval the most delayed worker spent runnable but waiting for a CPU.
    pub worker_max_runqueue_wait_pct: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    pub tid: u32,
    pub name: String,
    /// On-CPU time from the thread's start to the last time it was seen.
    pub on_cpu_s: f64,
    pub lifetime_s: f64,
    /// on_cpu_s / lifetime_s × 100.
    pub cpu_pct: f64,
    /// Runnable but not running, same span (None where the kernel has no schedstat).
    pub runqueue_wait_s: Option<f64>,
    /// Highest per-interval CPU share seen.
    pub max_interval_cpu_pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResidencyObservation {
    pub start: ResidencySnapshot,
    pub end: ResidencySnapshot,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracerObservation {
    pub at_start: Option<Tracer>,
    pub at_end: Option<Tracer>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplerCost {
    pub samples: u64,
    /// CPU time of the sampler thread.
    pub cpu_ns: u64,
    /// cpu_ns over the sampling span: 1.0 = 1% of one core.
    pub cpu_pct_of_core: f64,
    pub context_switches: u64,
}

impl Observations {
    /// The device observation by name.
    pub fn device(&self, name: &str) -> Option<&DeviceObservation> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The device the filesystem is on, when known.
    pub fn filesystem_device(&self) -> Option<&DeviceObservation> {
        self.devices
            .iter()
            .find(|d| d.role == DeviceRole::Filesystem)
    }
}
