//! The figures of two paired jobs (and their groups' devices), each with the ratio B/A and
//! its noise. Throughputs and per-interval latency percentiles take their samples from the
//! jobs' report intervals (warm-up excluded); device figures from the observers' samples.
//! Whole-run latency percentiles come from the merged histograms; their noise is judged
//! only where the intervals carry the same percentile.

use plumb_core::result::IntervalResult;
use plumb_core::stats::Histogram;
use plumb_observe::diskstats::IostatFigures;
use plumb_observe::observations::DeviceSample;
use plumb_pipeline::{GroupRecord, JobRecord};
use serde::Serialize;

use super::DeviceComparison;
use crate::noise::{self, NoInterval, Sample};

/// The figure `--fail-if-slower` judges.
pub const THROUGHPUT: &str = "events/s";

const MIB: f64 = (1u64 << 20) as f64;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    pub name: String,
    /// `per_s`, `MiB/s`, `ns`, `ms`, `%`, `requests`.
    pub unit: &'static str,
    pub a: f64,
    pub b: f64,
    /// B/A; None when A is 0.
    pub ratio: Option<f64>,
    /// The 95% interval of B/A, when the noise could be judged.
    pub interval: Option<noise::Interval>,
    pub verdict: Verdict,
    /// Why the noise could not be judged.
    pub noise: Option<String>,
    pub better: Better,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    WithinNoise,
    /// B is higher than A, beyond noise.
    Higher,
    Lower,
    /// The noise could not be judged.
    Unknown,
}

/// Which direction is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// Evidence, not a goal (device figures).
    Neither,
}

/// A figure of both runs and, when both have them, their samples.
pub(super) fn figure(
    name: String,
    unit: &'static str,
    better: Better,
    (a, b): (f64, f64),
    samples: Result<(Vec<Sample>, Vec<Sample>), String>,
) -> Figure {
    let ratio = (a != 0.0).then(|| b / a);
    let judged = samples.and_then(|(sa, sb)| {
        noise::ratio_interval(&sa, &sb).map_err(|e| match e {
            NoInterval::TooFewSamples { a, b } => format!(
                "too few samples (A {a}, B {b}; {} needed)",
                noise::MIN_SAMPLES
            ),
            NoInterval::ZeroBase => "A's samples are all zero".to_string(),
        })
    });
    let (interval, verdict, why) = match (ratio, judged) {
        (None, _) => (None, Verdict::Unknown, Some("A is zero".to_string())),
        (Some(_), Err(why)) => (None, Verdict::Unknown, Some(why)),
        (Some(_), Ok(i)) if i.contains_one() => (Some(i), Verdict::WithinNoise, None),
        (Some(_), Ok(i)) if i.low > 1.0 => (Some(i), Verdict::Higher, None),
        (Some(_), Ok(i)) => (Some(i), Verdict::Lower, None),
    };
    Figure {
        name,
        unit,
        a,
        b,
        ratio,
        interval,
        verdict,
        noise: why,
        better,
    }
}

/// A job's measured intervals (warm-up excluded).
fn intervals(j: &JobRecord) -> impl Iterator<Item = &IntervalResult> {
    j.intervals.iter().filter(|i| !i.warmup && i.length_s > 0.0)
}

/// Per-interval samples of `value` for both sides, or why there are none. A side is one
/// job, or the jobs of several runs of the same thing (a sweep point's repeats): their
/// intervals one after another.
pub(super) fn interval_samples(
    a: &[&JobRecord],
    b: &[&JobRecord],
    value: impl Fn(&IntervalResult) -> f64,
) -> Result<(Vec<Sample>, Vec<Sample>), String> {
    let of = |js: &[&JobRecord]| -> Vec<Sample> {
        js.iter()
            .flat_map(|j| intervals(j))
            .map(|i| Sample {
                value: value(i),
                weight: i.length_s,
            })
            .collect()
    };
    let (sa, sb) = (of(a), of(b));
    match (sa.is_empty(), sb.is_empty()) {
        (false, false) => Ok((sa, sb)),
        // Intervals are kept every second whether printed or not: a side without any ran
        // for less than one (or is a tool that keeps none: dd, mysqlslap).
        (true, true) => Err("no interval samples (runs shorter than one interval)".into()),
        (true, false) => Err("A has no interval samples (shorter than one interval)".into()),
        (false, true) => Err("B has no interval samples (shorter than one interval)".into()),
    }
}

pub fn of_jobs(a: &JobRecord, b: &JobRecord) -> Vec<Figure> {
    let mut out = vec![figure(
        THROUGHPUT.to_string(),
        "per_s",
        Better::Higher,
        (a.events_per_s, b.events_per_s),
        interval_samples(&[a], &[b], |i| i.events as f64),
    )];
    // Each operation kind when a job has several (reads, writes, fsyncs): what the events
    // were made of, neither better nor worse by itself (fewer fsyncs is not an improvement
    // of the same work).
    if a.operations.len() > 1 {
        for op in &a.operations {
            let Some(ob) = b.operation(&op.name) else {
                continue;
            };
            let name = op.name.clone();
            out.push(figure(
                format!("{}/s", op.name),
                "per_s",
                Better::Neither,
                (op.per_s, ob.per_s),
                interval_samples(&[a], &[b], |i| i.operation(&name) as f64),
            ));
        }
    }
    // Byte counters as MiB/s (memory's bytes, fileio's bytes read and written).
    for (name, &va) in a.counters.iter().filter(|(n, _)| n.contains("bytes")) {
        let rate = |j: &JobRecord, v: u64| {
            if j.total_time_s > 0.0 {
                v as f64 / MIB / j.total_time_s
            } else {
                0.0
            }
        };
        let label = match name.strip_prefix("bytes_") {
            Some(what) => format!("{what} MiB/s"),
            None => "MiB/s".to_string(),
        };
        out.push(figure(
            label,
            "MiB/s",
            Better::Higher,
            (rate(a, va), rate(b, b.counter(name))),
            interval_samples(&[a], &[b], |i| i.counter(name) as f64 / MIB),
        ));
    }
    out.extend(latencies(a, b));
    out.extend(server(a, b));
    out.retain(|f| f.a != 0.0 || f.b != 0.0);
    out
}

/// The database server's own counters over each run: evidence of what the server did (rows,
/// the buffer pool's misses), read at the start and the end of a run only, so without a
/// noise estimate.
fn server(a: &JobRecord, b: &JobRecord) -> Vec<Figure> {
    use plumb_pipeline::Settings;
    // (rows read, rows written, buffer pool misses, hit ratio) over the run.
    let counters = |j: &JobRecord| {
        let c = match &j.workload {
            Settings::Oltp(s) => s.server_activity.as_ref(),
            Settings::Slap(s) => s.server_activity.as_ref(),
            _ => None,
        }?;
        Some((
            c.rows_read,
            c.rows_inserted + c.rows_updated + c.rows_deleted,
            c.pool_misses,
            c.hit_ratio(),
        ))
    };
    let (Some(ca), Some(cb)) = (counters(a), counters(b)) else {
        return Vec::new();
    };
    let per_s = |j: &JobRecord, v: u64| {
        if j.total_time_s > 0.0 {
            v as f64 / j.total_time_s
        } else {
            0.0
        }
    };
    let why = || Err("the server's counters are read at the start and the end only".to_string());
    let mut out = vec![
        figure(
            "server rows read/s".to_string(),
            "per_s",
            Better::Neither,
            (per_s(a, ca.0), per_s(b, cb.0)),
            why(),
        ),
        figure(
            "server rows written/s".to_string(),
            "per_s",
            Better::Neither,
            (per_s(a, ca.1), per_s(b, cb.1)),
            why(),
        ),
        figure(
            "buffer pool misses/s".to_string(),
            "per_s",
            Better::Neither,
            (per_s(a, ca.2), per_s(b, cb.2)),
            why(),
        ),
    ];
    if let (Some(ha), Some(hb)) = (ca.3, cb.3) {
        out.push(figure(
            "buffer pool hit ratio".to_string(),
            "%",
            Better::Neither,
            (ha * 100.0, hb * 100.0),
            why(),
        ));
    }
    out
}

/// Mean, p50, p95, p99 and max of all events, from the merged histograms.
fn latencies(a: &JobRecord, b: &JobRecord) -> Vec<Figure> {
    let (ha, hb) = (a.events_histogram(), b.events_histogram());
    if ha.count() == 0 || hb.count() == 0 {
        return Vec::new();
    }
    let mut out = vec![figure(
        "latency mean".to_string(),
        "ns",
        Better::Lower,
        (ha.mean().unwrap_or(0.0), hb.mean().unwrap_or(0.0)),
        Err("no per-interval mean latency".to_string()),
    )];
    for p in [50.0, 95.0, 99.0] {
        let pct = |h: &Histogram| h.percentile(p).unwrap_or(0) as f64;
        out.push(figure(
            format!("latency p{p}"),
            "ns",
            Better::Lower,
            (pct(&ha), pct(&hb)),
            percentile_samples(&[a], &[b], p),
        ));
    }
    out.push(figure(
        "latency max".to_string(),
        "ns",
        Better::Lower,
        (ha.max().unwrap_or(0) as f64, hb.max().unwrap_or(0) as f64),
        Err("a maximum has no noise estimate".to_string()),
    ));
    out
}

/// Samples of percentile `p` from the intervals, weighted by their length.
pub(super) fn percentile_samples(
    a: &[&JobRecord],
    b: &[&JobRecord],
    p: f64,
) -> Result<(Vec<Sample>, Vec<Sample>), String> {
    let has = |js: &[&JobRecord]| {
        js.iter().any(|j| intervals(j).next().is_some())
            && js.iter().all(|j| {
                intervals(j).all(|i| i.latency_percentiles.iter().any(|x| x.percentile == p))
            })
    };
    if !has(a) || !has(b) {
        return Err(format!("no per-interval p{p} in both runs"));
    }
    interval_samples(a, b, |i| {
        let v = i
            .latency_percentiles
            .iter()
            .find(|x| x.percentile == p)
            .map_or(0, |x| x.value_ns);
        v as f64 * i.length_s
    })
}

/// The filesystem's device of both groups, side by side.
pub fn of_devices(g: usize, a: &GroupRecord, b: &GroupRecord) -> Option<DeviceComparison> {
    let da = a.observations.as_ref()?.filesystem_device()?;
    let db = b.observations.as_ref()?.filesystem_device()?;
    type Get = fn(&IostatFigures) -> f64;
    let rows: [(&str, &'static str, Get); 7] = [
        ("read MiB/s", "MiB/s", |f| f.read_bytes_per_s / MIB),
        ("write MiB/s", "MiB/s", |f| f.write_bytes_per_s / MIB),
        ("reads/s", "per_s", |f| f.reads_per_s),
        ("writes/s", "per_s", |f| f.writes_per_s),
        ("await", "ms", |f| f.await_ms),
        ("queue size", "requests", |f| f.queue_size),
        ("util", "%", |f| f.util_pct),
    ];
    let samples = |s: &[DeviceSample], get: Get| -> Vec<Sample> {
        s.iter()
            .filter(|x| x.length_s > 0.0)
            .map(|x| Sample {
                value: get(&x.figures) * x.length_s,
                weight: x.length_s,
            })
            .collect()
    };
    let figures = rows
        .into_iter()
        .map(|(name, unit, get)| {
            figure(
                name.to_string(),
                unit,
                Better::Neither,
                (get(&da.totals.figures), get(&db.totals.figures)),
                Ok((samples(&da.samples, get), samples(&db.samples, get))),
            )
        })
        .filter(|f| f.a != 0.0 || f.b != 0.0)
        .collect();
    Some(DeviceComparison {
        group: g,
        name_a: da.name.clone(),
        name_b: db.name.clone(),
        figures,
    })
}
