//! What the fio layout needs about a job beyond plumb's job model: the job as fio's user
//! wrote it (name, group, options) and how the run's output was asked for. The fio front end
//! writes one [`FioJobInfo`] into each job's record (`layout`), so a saved record renders
//! again exactly as the live run did.

use serde::{Deserialize, Serialize};

use super::header::JobHeader;

/// The formats of `--output-format`, in the order fio prints them (terse, JSON, normal).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Formats {
    pub terse: bool,
    pub json: bool,
    /// json+: JSON with histogram bins.
    pub json_plus: bool,
    pub normal: bool,
}

/// How the run's output was asked for (the same in every job of a run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputOptions {
    pub formats: Formats,
    pub terse_version: u32,
    /// Run under the name `fio`: fio's report only; plumb's evidence goes into the JSON
    /// document (`plumb` key) and after the report only when asked.
    pub drop_in: bool,
    /// plumb's sections (observations, findings) after the normal report.
    pub plumb_sections: bool,
}

/// One fio job (a clone of a `numjobs` job is a job of its own).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FioJobInfo {
    /// The job's header line as fio prints it before the run.
    pub header: JobHeader,
    /// Clone number: 0 for the job itself, then numjobs-1 down to 1 as fio numbers them.
    pub subjob: u32,
    pub group_reporting: bool,
    pub description: Option<String>,
    /// Options the job set itself (JSON `job options`): canonical names, values as given.
    pub job_options: Vec<(String, String)>,
    /// Options the global sections and command-line globals set (JSON `global options`).
    pub global_options: Vec<(String, String)>,
    /// percentile_list (fio's default when not set) and the text it was given as (its
    /// decimals set the labels' precision).
    pub percentiles: Vec<f64>,
    pub percentile_list_text: Option<String>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// The latency series the job keeps in fio's report (fio's disable_slat/clat/lat,
    /// gtod_reduce).
    #[serde(default)]
    pub series: LatSeries,
    /// `stats=0`: the job runs but is left out of the report.
    #[serde(default)]
    pub stats_off: bool,
    /// `unit_base=1`: bandwidth in bits.
    #[serde(default)]
    pub unit_bits: bool,
    /// `disk_util=0`: the job adds no disks to fio's Disk stats.
    #[serde(default)]
    pub no_disk_util: bool,
    /// `thread`: the job runs as a thread (fio's default is a process).
    pub thread: bool,
    pub pid: u32,
    /// Files laid out before the run: (count, bytes) for fio's "Laying out IO file" line.
    pub laid_out: Option<(u32, u64)>,
    pub output: OutputOptions,
    /// unified_rw_reporting=mixed.
    #[serde(default)]
    pub unified_mixed: bool,
    /// unified_rw_reporting=both: the directions as usual, then their sum as `mixed`.
    #[serde(default)]
    pub unified_both: bool,
    /// What fio's status line (`--eta`) needs to say how far the job has got.
    #[serde(default)]
    pub progress: JobProgress,
    /// How the job failed, in fio's words, when fio has words for it (the disk filled up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FioFailure>,
    /// The job counted its errors (fio's continue_on_error or ignore_error was on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<FioErrors>,
    /// What fio printed on stderr about the job as it went, in order: `fio: io_u error on
    /// file ...` for every write that found the disk full (fill_device's too), the `pid=0`
    /// line of a failed layout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
    /// How steady-state detection (fio's steadystate) ended for the job's group, when on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<plumb_core::steady::SteadyReport>,
    /// What fio printed on the report's stream as it parsed the job, before the job's
    /// header line, in every output format (opendir's `fio: opendir added N files`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parse_lines: Vec<String>,
}

/// The errors of a job that counts them: how many, the first one's errno (0: none), and
/// fio's words for the first (its `err=` text when the job went on after it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioErrors {
    pub total: u64,
    pub first: i32,
    pub words: String,
}

/// A job's failure as fio reports it: `err=<errno> (<verror>)` in the job's block and a
/// `fio: pid=<pid>, err=<errno>/<verror>` line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioFailure {
    pub errno: i32,
    /// fio's `td->verror`: `file:io_u.c:1876, func=io_u error, error=No space left on device`.
    pub verror: String,
    /// It failed while its files were laid out, before its process started: fio says
    /// `pid=0` on stderr and prints no pid line on stdout.
    pub in_layout: bool,
}

impl FioFailure {
    /// fio's line for the failed job: `fio: pid=N, err=E/VERROR`.
    pub fn pid_line(&self, pid: u32) -> String {
        format!("fio: pid={pid}, err={}/{}", self.errno, self.verror)
    }

    /// What fio says on stdout, after the job's layout line, when a layout write finds the
    /// disk full.
    pub fn layout_notice(&self) -> Option<&'static str> {
        match (self.in_layout, self.errno) {
            (true, libc::ENOSPC) => Some("fio: ENOSPC on laying out file, stopping"),
            (true, libc::EDQUOT) => Some("fio: EDQUOT on laying out file, stopping"),
            _ => None,
        }
    }
}

/// A job's planned extent and limits, for the status line's percentage and ETA.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct JobProgress {
    /// Bytes one run of the job moves (every pass of every loop).
    pub io_bytes: u64,
    pub time_based: bool,
    pub runtime_s: Option<f64>,
    pub ramp_s: f64,
    pub start_delay_s: f64,
    pub files: u32,
    /// rate / rate_iops of the directions the job does, summed: (bytes/s, requests/s).
    pub rate_bytes: u64,
    pub rate_iops: u64,
}

/// fio's default percentile_list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Which latency series fio's report shows for a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatSeries {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
}

impl Default for LatSeries {
    fn default() -> Self {
        LatSeries {
            slat: true,
            clat: true,
            lat: true,
        }
    }
}
