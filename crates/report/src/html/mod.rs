//! The HTML report (`plumb html`): one self-contained page, uPlot (MIT, vendored under
//! `crates/report/assets/uplot/`) and the chart data inlined, nothing fetched when it is
//! viewed. Three pages from one builder ([`page`]):
//!
//! - [`run`]: one run alone: throughput and latency percentiles over time, the latency
//!   distribution, device utilisation and queue depth, page cache and buffer pool, CPU;
//! - [`runs`]: several runs on the same axes (a comparison), with `plumb compare`'s table;
//! - [`sweep`]: a sweep's throughput, p95 and p99 against each swept variable, the knee marked.
//!
//! Findings stand beside the chart whose data explains them ([`topics`]). Every text from a
//! record is escaped ([`escape`]); the page counts the charts it drew and the errors it met
//! into `<body>`'s attributes, which the tests read from a headless browser.

mod chart;
mod escape;
mod page;
mod runs;
mod sweep;
mod topics;

use plumb_advise::Finding;
use plumb_pipeline::Record;

/// One run as the page names it.
pub struct Run<'a> {
    /// How the user named it: `run 12`, `run 12 (nightly)`, `result.json`.
    pub label: String,
    /// When it started, as the user reads time.
    pub when: String,
    pub tags: Vec<String>,
    pub record: &'a Record,
}

/// A run's page.
pub fn run(run: &Run<'_>) -> String {
    runs::render(std::slice::from_ref(run), &[])
}

/// Several runs on the same axes; `comparison` is `plumb compare`'s table of the first two
/// (header row first), empty for none.
pub fn runs(runs: &[Run<'_>], comparison: &[Vec<String>]) -> String {
    runs::render(runs, comparison)
}

/// A sweep, as `plumb sweep`'s table and knees describe it.
pub struct Sweep {
    /// `sweep 3`, or the file it was read from.
    pub label: String,
    pub when: String,
    /// The plan file's text.
    pub plan: Option<String>,
    /// What stopped the sweep before its last point, when it was stopped.
    pub stopped: Option<String>,
    /// What throughput is counted in: `tps`, `IOPS`, `events/s`.
    pub unit: String,
    /// The swept variables, in the plan's order.
    pub keys: Vec<String>,
    pub points: Vec<SweepPoint>,
    /// Lines of points that agree on every variable but one.
    pub lines: Vec<SweepLine>,
    /// The knee's definition, in one sentence.
    pub knee_rule: String,
}

pub struct SweepPoint {
    /// One per key.
    pub values: Vec<String>,
    /// Its runs (`run 12`), repeats merged.
    pub runs: Vec<String>,
    pub per_s: f64,
    pub p95_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    /// Each finding once (the first run's that has it).
    pub findings: Vec<Finding>,
}

pub struct SweepLine {
    /// The variable that changes along it (index into `keys`).
    pub key: usize,
    /// The other variables' values (`table-size=100`), empty when there are none.
    pub at: String,
    /// Its points (indices into `points`) in the plan's order of the variable's values.
    pub points: Vec<usize>,
    /// The knee (index into `points`), None when throughput grows at every step.
    pub knee: Option<usize>,
}

/// A sweep's page.
pub fn sweep(s: &Sweep) -> String {
    sweep::render(s)
}

/// The unit latencies of at most `max_ns` read best in: its divisor and name.
fn latency_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 10e9 {
        (1e9, "s")
    } else if max_ns >= 10e6 {
        (1e6, "ms")
    } else if max_ns >= 10e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}
