//! Two sweeps side by side (`plumb compare sweep:A sweep:B`): what differs between them,
//! then each point both ran (the same values of the swept variables) with A's and B's
//! throughput, p95 and p99 and the ratio B/A judged against the noise as two runs are,
//! seed 002's comparability checks of the point's runs and what differs at that point
//! alone, then the points only one of them ran.

use std::collections::BTreeMap;

use plumb_core::stats::Histogram;
use plumb_pipeline::{GroupRecord, JobRecord, Record};
use serde::Serialize;

use super::checks::{self, Check};
use super::differences::{self, Difference};
use super::figures::{self, figure, interval_samples, percentile_samples, Better, Figure};
use super::{gate_of, Gate};
use crate::sweep::{same_key, PointRuns, SweepSide};
use crate::Merged;

pub const SCHEMA: &str = "plumb.sweep-compare/1";

#[derive(Clone, Debug, Serialize)]
pub struct SweepComparison {
    pub schema: &'static str,
    pub a: SweepInfo,
    pub b: SweepInfo,
    /// What the throughput counts (`tps`, `IOPS`, `events/s`), as `plumb sweep` says it.
    pub unit: &'static str,
    /// Host, kernel, target, filesystem and settings that differ (between the first runs
    /// of the first point both ran), and the swept variables when they differ.
    pub differences: Vec<Difference>,
    /// The points both ran, in A's order.
    pub points: Vec<PointComparison>,
    /// Points one sweep ran and the other did not (`threads=4 table-size=100`).
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub noise_method: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct SweepInfo {
    pub label: String,
    pub started_at_unix_s: u64,
    /// The plan's command.
    pub command: Option<String>,
    pub host: Option<String>,
    /// The swept variables, in the plan's order.
    pub keys: Vec<String>,
    /// Points and runs done.
    pub points: usize,
    pub runs: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PointComparison {
    /// `threads=4 table-size=100` (A's spelling of the keys).
    pub point: String,
    pub values: BTreeMap<String, String>,
    /// The runs of the point in each sweep (`run 12`).
    pub runs_a: Vec<String>,
    pub runs_b: Vec<String>,
    /// Throughput (`events/s`: all events over all measured time of the point's runs),
    /// `latency p95` and `latency p99` (of the runs' histograms merged).
    pub figures: Vec<Figure>,
    /// Seed 002's comparability checks of the point's runs, group by group (each side's
    /// figure the mean of its runs'), as `plumb compare` makes them for two runs.
    pub checks: Vec<Check>,
    /// What differs between the point's first runs and is not among the sweeps'
    /// differences (those hold at every point and are listed once).
    pub differences: Vec<Difference>,
}

impl SweepComparison {
    /// `--fail-if-slower=PCT`: a point whose throughput in B is lower than in A by more
    /// than `pct` percent, beyond noise; the same rule as for two runs.
    pub fn gate(&self, pct: f64) -> Gate {
        gate_of(
            self.points.iter().filter_map(|p| {
                let f = p.figures.iter().find(|f| f.name == figures::THROUGHPUT)?;
                Some((p.point.clone(), f))
            }),
            pct,
        )
    }
}

pub fn compare_sweeps(a: &SweepSide, b: &SweepSide) -> SweepComparison {
    let (pa, pb) = (a.points(), b.points());
    let (ka, kb) = (a.keys(), b.keys());
    let id = |keys: &[String], p: &PointRuns<'_>| {
        let mut v: Vec<(String, String)> = keys
            .iter()
            .map(|k| same_key(k))
            .zip(p.values.iter().cloned())
            .collect();
        v.sort();
        v
    };
    let label = |keys: &[String], p: &PointRuns<'_>| {
        keys.iter()
            .zip(&p.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let ids_b: Vec<Vec<(String, String)>> = pb.iter().map(|p| id(&kb, p)).collect();
    let mut points = Vec::new();
    let mut first_pair: Option<(&Record, &Record)> = None;
    let mut only_in_a = Vec::new();
    let mut matched_b = vec![false; pb.len()];
    for p in &pa {
        let Some(j) = ids_b.iter().position(|x| *x == id(&ka, p)) else {
            only_in_a.push(label(&ka, p));
            continue;
        };
        matched_b[j] = true;
        let q = &pb[j];
        first_pair.get_or_insert((&p.runs[0].record, &q.runs[0].record));
        points.push(PointComparison {
            point: label(&ka, p),
            values: ka.iter().cloned().zip(p.values.iter().cloned()).collect(),
            runs_a: p.runs.iter().map(|r| r.label.clone()).collect(),
            runs_b: q.runs.iter().map(|r| r.label.clone()).collect(),
            figures: of_point(p, q),
            checks: checks_of_point(p, q),
            differences: differences::between(&p.runs[0].record, &q.runs[0].record),
        });
    }
    let only_in_b = pb
        .iter()
        .zip(&matched_b)
        .filter(|(_, m)| !**m)
        .map(|(p, _)| label(&kb, p))
        .collect();
    let mut diffs = Vec::new();
    let norm = |k: &[String]| {
        let mut v: Vec<String> = k.iter().map(|k| same_key(k)).collect();
        v.sort();
        v
    };
    if norm(&ka) != norm(&kb) {
        diffs.push(Difference {
            area: "sweep",
            what: "swept variables".to_string(),
            a: ka.join(" "),
            b: kb.join(" "),
        });
    }
    let pair = first_pair.or_else(|| Some((&a.runs.first()?.record, &b.runs.first()?.record)));
    if let Some((ra, rb)) = pair {
        diffs.extend(differences::between(ra, rb));
    }
    for p in &mut points {
        p.differences.retain(|d| !diffs.contains(d));
    }
    SweepComparison {
        schema: SCHEMA,
        a: info(a, &ka, pa.len()),
        b: info(b, &kb, pb.len()),
        unit: a.unit(),
        differences: diffs,
        points,
        only_in_a,
        only_in_b,
        noise_method: super::noise_method(),
    }
}

fn info(s: &SweepSide, keys: &[String], points: usize) -> SweepInfo {
    SweepInfo {
        label: s.label.clone(),
        started_at_unix_s: s.started_at_unix_s,
        command: s.command.clone(),
        host: s
            .runs
            .iter()
            .flat_map(|r| &r.record.groups)
            .filter_map(|g| g.observations.as_ref())
            .find_map(|o| o.host.hostname.clone()),
        keys: keys.to_vec(),
        points,
        runs: s.runs.len(),
    }
}

/// One point of both sweeps: its runs merged as `plumb sweep`'s table merges them; the
/// noise from every run's intervals, one run after another.
fn of_point(a: &PointRuns<'_>, b: &PointRuns<'_>) -> Vec<Figure> {
    let (ma, mb) = (
        Merged::of(a.runs.iter().map(|r| &r.record)),
        Merged::of(b.runs.iter().map(|r| &r.record)),
    );
    let (ja, jb) = (jobs(a), jobs(b));
    let mut out = vec![figure(
        figures::THROUGHPUT.to_string(),
        "per_s",
        Better::Higher,
        (ma.rate(), mb.rate()),
        interval_samples(&ja, &jb, |i| i.events as f64),
    )];
    for p in [95.0, 99.0] {
        let pct = |h: &Histogram| h.percentile(p).map_or(0.0, |v| v as f64);
        out.push(figure(
            format!("latency p{p}"),
            "ns",
            Better::Lower,
            (pct(&ma.hist), pct(&mb.hist)),
            percentile_samples(&ja, &jb, p),
        ));
    }
    out
}

/// The checks of each group both points' runs have, over all their runs.
fn checks_of_point(a: &PointRuns<'_>, b: &PointRuns<'_>) -> Vec<Check> {
    let groups = |p: &PointRuns<'_>| p.runs.iter().map(|r| r.record.groups.len()).min();
    let n = groups(a).unwrap_or(0).min(groups(b).unwrap_or(0));
    (0..n)
        .flat_map(|g| checks::of_runs(g, &group_of(a, g), &group_of(b, g)))
        .collect()
}

/// Group `g` of each of a point's runs.
fn group_of<'a>(p: &PointRuns<'a>, g: usize) -> Vec<&'a GroupRecord> {
    p.runs.iter().map(|r| &r.record.groups[g]).collect()
}

/// Every job of a point's runs, run after run.
fn jobs<'a>(p: &PointRuns<'a>) -> Vec<&'a JobRecord> {
    p.runs.iter().flat_map(|r| r.record.jobs()).collect()
}
