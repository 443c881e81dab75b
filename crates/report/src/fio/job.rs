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
    /// `thread`: the job runs as a thread (fio's default is a process).
    pub thread: bool,
    pub pid: u32,
    /// Files laid out before the run: (count, bytes) for fio's "Laying out IO file" line.
    pub laid_out: Option<(u32, u64)>,
    pub output: OutputOptions,
    /// unified_rw_reporting=mixed.
    #[serde(default)]
    pub unified_mixed: bool,
    /// What fio's status line (`--eta`) needs to say how far the job has got.
    #[serde(default)]
    pub progress: JobProgress,
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
