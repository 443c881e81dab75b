//! A run's key figures, taken from its record once when it is stored, so that listing runs
//! never reads a record.

use plumb_advise::Severity;
use plumb_core::stats::Histogram;
use plumb_pipeline::Record;
use serde::Serialize;

/// What `plumb history` shows of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    pub id: i64,
    pub started_at_unix_s: u64,
    pub host: String,
    pub front_end: String,
    /// The test as the user named it: sysbench's test (`cpu`, `oltp_read_write`), or the
    /// front end and its job (`fio randread`, `fio (3 jobs)`).
    pub test: String,
    /// Credentials masked.
    pub command_line: Vec<String>,
    pub plumb_version: String,
    /// `completed`, or the first job's other status (`interrupted`, `forced_shutdown`).
    pub status: String,
    pub jobs: u32,
    /// The most threads that ran at once (one group's jobs together).
    pub threads: u32,
    /// Measured time, groups one after another.
    pub duration_s: f64,
    pub events: u64,
    /// All events over the measured time.
    pub events_per_s: f64,
    /// Over all events of all jobs (histograms merged).
    pub latency_p95_ns: Option<u64>,
    pub findings: FindingCounts,
    pub tags: Vec<String>,
    /// The sweep the run belongs to (sweeps store several runs under one id).
    pub sweep_id: Option<i64>,
    /// The run's point in its sweep: the swept values, `name=value` separated by spaces.
    pub sweep_point: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FindingCounts {
    pub invalid: u32,
    pub caution: u32,
    pub info: u32,
}

/// The key figures of `record` (id, tags and sweep left for the store to fill).
pub fn of(record: &Record) -> RunSummary {
    let jobs: Vec<_> = record.jobs().collect();
    let mut duration_s = 0.0;
    let mut threads = 0;
    for g in &record.groups {
        // A group's jobs ran together: its time is its longest job's.
        duration_s += g.jobs.iter().map(|j| j.total_time_s).fold(0.0, f64::max);
        threads = threads.max(g.jobs.iter().map(|j| j.settings.threads as u32).sum());
    }
    let events: u64 = jobs.iter().map(|j| j.events).sum();
    let mut all = Histogram::new();
    for j in &jobs {
        all.merge(&j.events_histogram());
    }
    let mut findings = FindingCounts::default();
    for f in jobs.iter().flat_map(|j| j.findings.iter()) {
        match f.severity {
            Severity::Invalid => findings.invalid += 1,
            Severity::Caution => findings.caution += 1,
            Severity::Info => findings.info += 1,
        }
    }
    let status = jobs
        .iter()
        .map(|j| j.status)
        .find(|s| *s != plumb_core::result::Status::Completed)
        .map_or("completed".to_string(), |s| {
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        });
    RunSummary {
        id: 0,
        started_at_unix_s: record.started_at_unix_s,
        host: host(record),
        front_end: record.front_end.clone(),
        test: test_label(record),
        command_line: plumb_core::redact::args(&record.command_line),
        plumb_version: record.plumb_version.clone(),
        status,
        jobs: jobs.len() as u32,
        threads,
        duration_s,
        events,
        events_per_s: if duration_s > 0.0 {
            events as f64 / duration_s
        } else {
            0.0
        },
        latency_p95_ns: all.percentile(95.0),
        findings,
        tags: Vec::new(),
        sweep_id: None,
        sweep_point: None,
    }
}

fn host(record: &Record) -> String {
    record
        .groups
        .iter()
        .filter_map(|g| g.observations.as_ref())
        .find_map(|o| o.host.hostname.clone())
        .unwrap_or_default()
}

/// sysbench's runs are one job named after the test; other front ends name their jobs.
fn test_label(record: &Record) -> String {
    let names: Vec<&str> = record.jobs().map(|j| j.name.as_str()).collect();
    match (record.front_end.as_str(), names.as_slice()) {
        ("sysbench", [one]) => one.to_string(),
        (fe, []) => fe.to_string(),
        (fe, [one]) => format!("{fe} {one}"),
        (fe, many) => format!("{fe} ({} jobs)", many.len()),
    }
}

/// The names `--test` matches for `record`: its label, its front end, each job's name and
/// each job's workload (`fileio` finds sysbench's fileio and fio's jobs alike).
pub fn names(record: &Record) -> Vec<String> {
    let mut v = vec![test_label(record), record.front_end.clone()];
    for j in record.jobs() {
        v.push(j.name.clone());
        v.push(j.workload.test().to_string());
    }
    v.sort();
    v.dedup();
    v
}
