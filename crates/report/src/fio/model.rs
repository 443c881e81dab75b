//! The data fio's report layouts are printed from: one [`FioDoc`] per run, one [`Unit`] per
//! report block (a job, or the jobs group_reporting merged). Every value fio would look up
//! at print time (pid, clock, disk counters) is a field here, so rendering is pure.
//!
//! Derived figures (bandwidth, IOPS, percentages, group lines) are not stored: the renderers
//! compute them with fio's own integer arithmetic from the counts below.

use serde::{Deserialize, Serialize};

/// One run's report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FioDoc {
    /// `fio-3.33`.
    pub version: String,
    /// When the report was made, ms since the epoch (JSON `timestamp_ms`; `timestamp` is its seconds).
    pub timestamp_ms: u64,
    /// `timestamp_ms` as ctime without the newline: `Sun Nov 22 13:07:47 2026`.
    pub time_text: String,
    /// 1024 (IEC first, the default) or 1000 (SI first).
    pub kb_base: u32,
    /// unit_base=1: bandwidth in bits.
    pub unit_bits: bool,
    /// significant_figures (fio's default 4).
    pub sig_figs: u32,
    /// The options global sections and command-line globals set, canonical names, values as
    /// given (JSON `global options`).
    pub global_options: Vec<(String, String)>,
    /// The report blocks in fio's order (creation order of their first job).
    pub units: Vec<Unit>,
    /// Devices of the files, in discovery order (empty: no `Disk stats`, no `disk_util`).
    pub disks: Vec<DiskUtil>,
}

/// One report block: a job, or the jobs group_reporting merged into it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// The first member's name.
    pub name: String,
    pub groupid: u32,
    /// How many jobs were merged (`jobs=`).
    pub members: u32,
    /// errno of the first member that failed (0: none).
    pub error: i32,
    /// fio's error text for `err=N (text)`, e.g. `file:filesetup.c:100, func=open, error=No such file`.
    pub error_text: Option<String>,
    /// The first member's pid.
    pub pid: u32,
    /// ctime when the block was printed, without the newline.
    pub time_text: String,
    pub description: Option<String>,
    /// The options the job set itself (JSON `job options`), canonical names, values as given.
    pub job_options: Vec<(String, String)>,
    /// Seconds to go when the report was made (fio prints 2147483647 once the run is over).
    pub eta_s: u64,
    /// Seconds since the run started (one value for all units in fio).
    pub elapsed_s: u64,
    /// Run time summed over the members, ms (JSON `job_runtime`; the CPU figures' divisor).
    pub job_runtime_ms: u64,
    pub read: DirStats,
    pub write: DirStats,
    pub trim: DirStats,
    /// fsync/fdatasync/sync_file_range calls.
    pub sync: Option<SyncStats>,
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    /// Context switches.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
    pub depths: IoDepths,
    /// Completion latency counts of all directions together.
    pub lat_buckets: LatBuckets,
    /// Zone resets of a zoned device (printed after the write line).
    pub zone_resets: u64,
    /// continue_on_error's count, when that option is set.
    pub errors: Option<ErrorSummary>,
    pub latency_target: LatencyTarget,
    pub percentiles: PercentileOptions,
    /// unified_rw_reporting=mixed: every direction is summed in `read`, reported as `mixed`.
    #[serde(default)]
    pub mixed: bool,
    /// unified_rw_reporting=both: the directions' sum, reported as `mixed` after them. fio
    /// builds it afresh at print time, so its bandwidth and IOPS samples are the directions'
    /// added field by field (their counts too) and its significant figures are unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub both: Option<DirStats>,
    /// Steady-state detection (fio's steadystate), when the job had it: its group's window.
    #[serde(default)]
    pub steady: Option<plumb_core::steady::SteadyReport>,
}

/// One direction (read, write or trim) of a unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    pub io_bytes: u64,
    /// The longest member's run time in this direction, ms (0: the direction did nothing).
    pub runtime_ms: u64,
    /// I/Os issued.
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    /// Submission latency (async engines only).
    pub slat: Option<LatStats>,
    /// Completion latency.
    pub clat: Option<LatStats>,
    /// Total latency.
    pub lat: Option<LatStats>,
    /// Bandwidth samples, KiB/s (kB/s with kb_base=1000).
    pub bw: SampleStats,
    /// IOPS samples.
    pub iops: SampleStats,
}

/// One latency series, in ns. `None` or `n == 0` both mean "no samples".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatStats {
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    /// Sample standard deviation (n−1).
    pub stddev_ns: f64,
    pub n: u64,
    /// (percentile, value in ns), ascending, as fio's histogram gives them.
    pub percentiles: Vec<(f64, u64)>,
    /// (bucket value in ns, count) of every non-empty histogram bucket, ascending (json+).
    pub bins: Vec<(u64, u64)>,
}

/// Per-window samples (bandwidth or IOPS). `samples == 0`: none were taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    pub samples: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncStats {
    pub total_ios: u64,
    pub lat: LatStats,
}

/// I/O depth distributions as counts; fio prints them as percentages of their totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoDepths {
    /// In-flight depth at submission: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64. Syncs count
    /// too, but the total is the read+write+trim I/Os (so fio can print 124.6%).
    pub level: [u64; 7],
    /// I/Os per submit call: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
    pub submit: [u64; 7],
    /// Submit calls.
    pub total_submit: u64,
    /// I/Os per reap call, the same buckets as `submit`.
    pub complete: [u64; 7],
    /// Reap calls.
    pub total_complete: u64,
}

/// Completion latency counts; each bucket holds values below its label and at or above the
/// previous label: ns `2 4 10 20 50 100 250 500 750 1000`, µs the same, ms the same plus
/// `2000` and `>=2000`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatBuckets {
    pub ns: [u64; 10],
    pub us: [u64; 10],
    pub ms: [u64; 12],
}

/// continue_on_error's summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    pub total: u64,
    /// errno of the first error.
    pub first_error: i32,
    /// strerror(first_error).
    pub first_error_text: String,
}

/// The `latency :` line (latency_target mode; depth = iodepth otherwise, 0 hides the line).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    pub depth: u32,
    pub target_ns: u64,
    pub window_us: u64,
    pub percentile: f64,
}

/// Which percentile tables a unit prints, and how.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PercentileOptions {
    /// percentile_list, ascending (fio's default: 1 5 10 20 30 40 50 60 70 80 90 95 99
    /// 99.5 99.9 99.95 99.99). The terse layout prints these labels even for a direction
    /// with no samples.
    pub list: Vec<f64>,
    /// Decimals of the percentile labels: the most digits after the point in the user's
    /// percentile_list ([`super::percentile_precision`]); 2 with fio's default list.
    pub precision: u32,
    pub clat: bool,
    pub lat: bool,
    pub slat: bool,
}

/// One device's counter deltas over the run (`Disk stats`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// io_ticks / elapsed, %, at most 100.
    pub util_pct: f64,
    /// dm/md devices: their slaves' averages.
    pub slaves: Option<DiskAggr>,
}

/// The averages over a dm/md device's slaves (fio's `aggr*` fields); util is the busiest slave's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskAggr {
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    pub util_pct: f64,
}

/// fio's three data directions, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    Trim,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    /// fio's name for it (`read`, JSON key and the normal block's line title).
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

impl Unit {
    pub fn dir(&self, d: Dir) -> &DirStats {
        match d {
            Dir::Read => &self.read,
            Dir::Write => &self.write,
            Dir::Trim => &self.trim,
        }
    }

    /// A direction's name in this unit's report: `mixed` for the sum of a mixed unit.
    pub fn dir_name(&self, d: Dir) -> &'static str {
        if self.mixed && d == Dir::Read {
            "mixed"
        } else {
            d.name()
        }
    }

    /// Read + write + trim I/Os: the divisor of the depth and latency distributions.
    pub fn rw_ios(&self) -> u64 {
        self.read.total_ios + self.write.total_ios + self.trim.total_ios
    }
}

impl LatStats {
    /// The stats when they hold samples.
    pub fn sampled(s: &Option<LatStats>) -> Option<&LatStats> {
        s.as_ref().filter(|l| l.n > 0)
    }
}
