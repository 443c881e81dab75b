//! Two runs side by side (`plumb compare A B`), from their records alone: first what differs
//! between them (host, kernel, target, filesystem, settings), then seed 002's four checks
//! that must match before two I/O results can be compared, then every figure with the ratio
//! B/A and whether it is beyond the noise ([`crate::noise`]), the device evidence, and the
//! findings that differ. Jobs are paired group by group, by name, else by position.

mod checks;
mod differences;
mod figures;
mod sweeps;

pub use checks::{Check, CheckVerdict};
pub use differences::Difference;
pub use figures::{Better, Figure, Verdict};
pub use sweeps::{compare_sweeps, PointComparison, SweepComparison, SweepInfo};

use plumb_advise::Severity;
use plumb_pipeline::{GroupRecord, JobRecord, Record};
use serde::Serialize;

pub const SCHEMA: &str = "plumb.compare/1";

/// One side of a comparison: a record and how the user named it ("run 12", "r.json").
pub struct Side {
    pub label: String,
    pub record: Record,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub a: SideInfo,
    pub b: SideInfo,
    /// Host, kernel, target, filesystem and settings that differ.
    pub differences: Vec<Difference>,
    /// Seed 002's comparability checks, per pair of groups.
    pub checks: Vec<Check>,
    pub jobs: Vec<JobComparison>,
    /// The filesystem's device under each pair of groups.
    pub devices: Vec<DeviceComparison>,
    /// Jobs found in one run only.
    pub unpaired: Vec<String>,
    /// How "beyond noise" is decided.
    pub noise_method: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct SideInfo {
    pub label: String,
    pub started_at_unix_s: u64,
    pub front_end: String,
    pub command_line: Vec<String>,
    pub host: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct JobComparison {
    pub group: usize,
    pub name_a: String,
    pub name_b: String,
    pub figures: Vec<Figure>,
    pub findings: Vec<FindingDifference>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeviceComparison {
    pub group: usize,
    pub name_a: String,
    pub name_b: String,
    pub figures: Vec<Figure>,
}

/// A finding one run has and the other has not (or has at another severity).
#[derive(Clone, Debug, Serialize)]
pub struct FindingDifference {
    pub id: String,
    pub severity_a: Option<Severity>,
    pub severity_b: Option<Severity>,
    /// The message of the run that has it (B's when both do).
    pub message: String,
}

/// The `--fail-if-slower` verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", content = "jobs", rename_all = "snake_case")]
pub enum Gate {
    Pass,
    /// Jobs whose throughput fell by more than the threshold, beyond noise: "name: -12.3%".
    Slower(Vec<String>),
    /// Jobs that fell by more than the threshold where the noise cannot be judged.
    Unjudged(Vec<String>),
    /// No throughput both sides have (two sweeps with no point in common): a gate that
    /// compared nothing must not pass.
    Nothing,
}

pub fn compare(a: &Side, b: &Side) -> Comparison {
    let mut c = Comparison {
        schema: SCHEMA,
        a: info(a),
        b: info(b),
        differences: differences::between(&a.record, &b.record),
        checks: Vec::new(),
        jobs: Vec::new(),
        devices: Vec::new(),
        unpaired: Vec::new(),
        noise_method: noise_method(),
    };
    let groups = a.record.groups.len().max(b.record.groups.len());
    for g in 0..groups {
        let (ga, gb) = (a.record.groups.get(g), b.record.groups.get(g));
        let (Some(ga), Some(gb)) = (ga, gb) else {
            let (side, only) = if ga.is_some() { ("A", ga) } else { ("B", gb) };
            for j in only.into_iter().flat_map(|g| g.jobs.iter()) {
                c.unpaired
                    .push(format!("{} (group {}, only in {side})", j.name, g + 1));
            }
            continue;
        };
        c.checks.extend(checks::of_groups(g, ga, gb));
        let (pairs, unpaired) = pair_jobs(ga, gb);
        for (ja, jb) in pairs {
            c.jobs.push(JobComparison {
                group: g,
                name_a: ja.name.clone(),
                name_b: jb.name.clone(),
                figures: figures::of_jobs(ja, jb),
                findings: finding_differences(ja, jb),
            });
        }
        c.unpaired.extend(
            unpaired
                .into_iter()
                .map(|(side, n)| format!("{n} (group {}, only in {side})", g + 1)),
        );
        if let Some(d) = figures::of_devices(g, ga, gb) {
            c.devices.push(d);
        }
    }
    c
}

/// How "beyond noise" is decided, in one line.
fn noise_method() -> String {
    format!(
        "95% interval of B/A from a circular moving-block bootstrap of each run's interval \
         samples (blocks of n^(1/3) samples, {} resamples, fixed seed); within noise when \
         the interval contains 1; at least {} samples per run",
        crate::noise::RESAMPLES,
        crate::noise::MIN_SAMPLES
    )
}

impl Comparison {
    /// `--fail-if-slower=PCT`: B's throughput (events/s of each paired job) lower than A's
    /// by more than `pct` percent, and beyond noise.
    pub fn gate(&self, pct: f64) -> Gate {
        gate_of(
            self.jobs.iter().filter_map(|j| {
                let f = j.figures.iter().find(|f| f.name == figures::THROUGHPUT)?;
                Some((j.name_b.clone(), f))
            }),
            pct,
        )
    }
}

/// The gate over throughput figures, each with the name the verdict gives it: slower when
/// one fell by more than `pct` percent beyond noise, else unjudged when one fell by more
/// than `pct` percent where the noise cannot be judged, else pass.
fn gate_of<'a>(throughputs: impl Iterator<Item = (String, &'a Figure)>, pct: f64) -> Gate {
    let mut slower = Vec::new();
    let mut unjudged = Vec::new();
    let mut compared = 0;
    for (name, f) in throughputs {
        compared += 1;
        let Some(ratio) = f.ratio else { continue };
        if ratio >= 1.0 - pct / 100.0 {
            continue;
        }
        let line = format!("{name}: {:+.1}%", (ratio - 1.0) * 100.0);
        match f.verdict {
            Verdict::Lower => slower.push(line),
            Verdict::Unknown => {
                unjudged.push(format!("{line} ({})", f.noise.as_deref().unwrap_or("")))
            }
            Verdict::WithinNoise | Verdict::Higher => {}
        }
    }
    if !slower.is_empty() {
        Gate::Slower(slower)
    } else if !unjudged.is_empty() {
        Gate::Unjudged(unjudged)
    } else if compared == 0 {
        Gate::Nothing
    } else {
        Gate::Pass
    }
}

fn info(s: &Side) -> SideInfo {
    SideInfo {
        label: s.label.clone(),
        started_at_unix_s: s.record.started_at_unix_s,
        front_end: s.record.front_end.clone(),
        command_line: plumb_core::redact::args(&s.record.command_line),
        host: s
            .record
            .groups
            .iter()
            .filter_map(|g| g.observations.as_ref())
            .find_map(|o| o.host.hostname.clone()),
    }
}

type Unpaired = Vec<(&'static str, String)>;

/// Jobs of two groups paired by name, the rest by position.
fn pair_jobs<'a>(
    a: &'a GroupRecord,
    b: &'a GroupRecord,
) -> (Vec<(&'a JobRecord, &'a JobRecord)>, Unpaired) {
    let mut pairs = Vec::new();
    let mut left_a = Vec::new();
    let mut used_b = vec![false; b.jobs.len()];
    for ja in &a.jobs {
        match b
            .jobs
            .iter()
            .enumerate()
            .find(|(i, jb)| !used_b[*i] && jb.name == ja.name)
        {
            Some((i, jb)) => {
                used_b[i] = true;
                pairs.push((ja, jb));
            }
            None => left_a.push(ja),
        }
    }
    let mut left_b = b.jobs.iter().enumerate().filter(|(i, _)| !used_b[*i]);
    let mut unpaired = Vec::new();
    for ja in left_a {
        match left_b.next() {
            Some((_, jb)) => pairs.push((ja, jb)),
            None => unpaired.push(("A", ja.name.clone())),
        }
    }
    unpaired.extend(left_b.map(|(_, jb)| ("B", jb.name.clone())));
    (pairs, unpaired)
}

fn finding_differences(a: &JobRecord, b: &JobRecord) -> Vec<FindingDifference> {
    let mut out = Vec::new();
    for fb in &b.findings {
        let sa = a
            .findings
            .iter()
            .find(|f| f.id == fb.id)
            .map(|f| f.severity);
        if sa != Some(fb.severity) {
            out.push(FindingDifference {
                id: fb.id.clone(),
                severity_a: sa,
                severity_b: Some(fb.severity),
                message: fb.message.clone(),
            });
        }
    }
    for fa in a
        .findings
        .iter()
        .filter(|fa| !b.findings.iter().any(|f| f.id == fa.id))
    {
        out.push(FindingDifference {
            id: fa.id.clone(),
            severity_a: Some(fa.severity),
            severity_b: None,
            message: fa.message.clone(),
        });
    }
    out
}
