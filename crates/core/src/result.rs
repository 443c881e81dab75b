//! The measured result of one job: one serde model for every workload. The document that
//! carries it (`plumb.result/2`, with the job's typed settings, the observations and the
//! findings) is built by plumb-pipeline and documented in `docs/result-schema.md`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::harness::{IntervalSample, RunConfig, RunOutcome, StopCause};
use crate::stats::{Histogram, LatencySummary, Percentile, SparseHistogram};
use crate::workload::OpKind;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Ended by its time or event limit, or by finishing its work.
    Completed,
    /// Stopped by SIGINT or SIGTERM; figures cover the time until then.
    Interrupted,
    /// Workers did not stop within `--forced-shutdown`; figures are as they stood.
    ForcedShutdown,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunSettings {
    pub threads: usize,
    pub time_limit_s: Option<f64>,
    pub event_limit: u64,
    pub warmup_s: f64,
    pub report_interval_s: Option<f64>,
    pub rate_per_s: Option<f64>,
    pub forced_shutdown_s: Option<f64>,
    /// The --rand-type given; null when the test used its own (uniform) distribution.
    pub rand_type: Option<String>,
    pub rand_seed: u64,
    pub percentiles: Vec<f64>,
    /// Checkpoint reports asked for, in seconds since the start (sysbench's
    /// --report-checkpoints).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints_s: Vec<f64>,
    /// The clock that timed the operations: `tsc` or `monotonic` (absent before the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OperationStats {
    pub name: String,
    pub is_event: bool,
    pub count: u64,
    pub per_s: f64,
    pub latency: LatencySummary,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub exec_time_avg_s: f64,
    pub exec_time_stddev_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ThreadResult {
    pub events: u64,
    pub exec_time_ns: u64,
    /// The thread's shortest and longest completed event (0 without events): sysbench's
    /// --debug per-thread lines. Absent from records written before they were kept.
    #[serde(default)]
    pub min_ns: u64,
    #[serde(default)]
    pub max_ns: u64,
    /// A forced shutdown left the thread inside an event (not counted in `events`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfinished: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpenLoop {
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    /// The schedule could not be kept: work fell behind and latency includes that wait.
    pub saturated: bool,
    /// Scheduled events that were due but not started when the run ended.
    pub backlog_events: u64,
    /// From actual start to completion.
    pub service: LatencySummary,
    /// From intended start to actual start.
    pub lag: LatencySummary,
    pub service_histogram: SparseHistogram,
    pub lag_histogram: SparseHistogram,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IntervalResult {
    pub at_s: f64,
    pub length_s: f64,
    pub warmup: bool,
    pub threads_running: usize,
    pub events: u64,
    pub events_per_s: f64,
    pub operations: BTreeMap<String, u64>,
    pub counters: BTreeMap<String, u64>,
    pub latency_percentiles: Vec<Percentile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlog_events: Option<u64>,
    /// Open loop: threads busy with an event at the interval's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub status: Status,
    /// "time", "events", "completed", "steady_state", "signal SIGINT", "forced_shutdown".
    pub stop_reason: String,
    pub total_time_s: f64,
    pub warmup_time_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    /// All events together (what sysbench prints under "Latency").
    pub latency: LatencySummary,
    /// Each operation kind on its own.
    pub operations: Vec<OperationStats>,
    pub counters: BTreeMap<String, u64>,
    pub fairness: Fairness,
    pub threads: Vec<ThreadResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoop>,
    pub intervals: Vec<IntervalResult>,
    /// Each operation kind's latencies, lossless: merge these, never the percentiles.
    pub histograms: BTreeMap<String, SparseHistogram>,
    /// A forced shutdown: events under way when the workers were left behind (not counted
    /// in `events`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished_events: Option<u64>,
}

impl IntervalResult {
    pub fn from_sample(
        s: &IntervalSample,
        kinds: &[OpKind],
        counters: &[&'static str],
        percentiles: &[f64],
    ) -> Self {
        IntervalResult {
            at_s: secs(s.at),
            length_s: secs(s.length),
            warmup: s.warmup,
            threads_running: s.threads_running,
            events: s.events,
            events_per_s: s.events as f64 / secs(s.length).max(1e-9),
            operations: kinds
                .iter()
                .zip(&s.kind_counts)
                .map(|(k, c)| (k.name.to_string(), *c))
                .collect(),
            counters: counters
                .iter()
                .zip(&s.counters)
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            latency_percentiles: percentiles
                .iter()
                .zip(&s.percentiles)
                .map(|(p, v)| Percentile {
                    percentile: *p,
                    value_ns: *v,
                })
                .collect(),
            backlog_events: s.backlog,
            concurrency: s.concurrency,
        }
    }

    /// Operations of one kind in this interval, 0 when absent.
    pub fn operation(&self, name: &str) -> u64 {
        self.operations.get(name).copied().unwrap_or(0)
    }

    /// A counter's increment in this interval, 0 when absent.
    pub fn counter(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }
}

/// What [`RunResult::build`] needs besides the outcome.
pub struct BuildInput<'a> {
    pub kinds: &'a [OpKind],
    pub counters: &'a [&'static str],
    pub config: &'a RunConfig,
    pub percentiles: &'a [f64],
    pub with_histogram: bool,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn mean_stddev(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

impl RunSettings {
    pub fn new(cfg: &RunConfig, percentiles: &[f64]) -> Self {
        RunSettings {
            threads: cfg.threads,
            time_limit_s: cfg.time_limit.map(secs),
            event_limit: cfg.event_limit,
            warmup_s: secs(cfg.warmup),
            report_interval_s: cfg.report_interval.map(secs),
            rate_per_s: cfg.rate,
            forced_shutdown_s: cfg.forced_shutdown.map(secs),
            rand_type: cfg.rand_type.map(|r| r.name().to_string()),
            rand_seed: cfg.seed,
            percentiles: percentiles.to_vec(),
            checkpoints_s: Vec::new(),
            clock: None,
        }
    }
}

impl RunResult {
    /// A result with nothing measured yet (a job's record before its run).
    pub fn empty() -> Self {
        RunResult {
            status: Status::Completed,
            stop_reason: String::new(),
            total_time_s: 0.0,
            warmup_time_s: 0.0,
            events: 0,
            events_per_s: 0.0,
            latency: LatencySummary::default(),
            operations: Vec::new(),
            counters: BTreeMap::new(),
            fairness: Fairness::default(),
            threads: Vec::new(),
            open_loop: None,
            intervals: Vec::new(),
            histograms: BTreeMap::new(),
            unfinished_events: None,
        }
    }

    pub fn build(input: BuildInput<'_>, outcome: &RunOutcome) -> RunResult {
        let kinds = input.kinds;
        let elapsed = outcome.elapsed;
        let el_s = secs(elapsed).max(1e-9);
        let pct = input.percentiles;

        let mut per_kind: Vec<Histogram> = kinds.iter().map(|_| Histogram::new()).collect();
        let mut events_hist = Histogram::new();
        let mut counters = vec![0u64; input.counters.len()];
        let mut service = Histogram::new();
        let mut lag = Histogram::new();
        let mut threads = Vec::with_capacity(outcome.threads.len());
        for t in &outcome.threads {
            let mut ev = 0;
            let mut exec = 0;
            let (mut min_ns, mut max_ns) = (u64::MAX, 0);
            for (k, h) in t.kinds.iter().enumerate() {
                per_kind[k].merge(h);
                if kinds[k].is_event {
                    events_hist.merge(h);
                    ev += h.count();
                    let m = h.moments();
                    exec += m.sum;
                    if m.count > 0 {
                        min_ns = min_ns.min(m.min);
                        max_ns = max_ns.max(m.max);
                    }
                }
            }
            for (i, c) in t.counters.iter().enumerate() {
                counters[i] += c;
            }
            service.merge(&t.service);
            lag.merge(&t.lag);
            threads.push(ThreadResult {
                events: ev,
                exec_time_ns: exec,
                min_ns: if ev > 0 { min_ns } else { 0 },
                max_ns,
                unfinished: outcome
                    .unfinished
                    .get(threads.len())
                    .copied()
                    .unwrap_or(false),
            });
        }
        let (events_avg, events_stddev) =
            mean_stddev(&threads.iter().map(|t| t.events as f64).collect::<Vec<_>>());
        let (exec_avg, exec_sd) = mean_stddev(
            &threads
                .iter()
                .map(|t| t.exec_time_ns as f64 / 1e9)
                .collect::<Vec<_>>(),
        );
        let events = events_hist.count();
        let cfg = input.config;
        let (status, stop_reason) = match outcome.cause {
            StopCause::Time => (Status::Completed, "time".to_string()),
            StopCause::Completed if cfg.event_limit > 0 && events >= cfg.event_limit => {
                (Status::Completed, "events".to_string())
            }
            StopCause::Completed => (Status::Completed, "completed".to_string()),
            StopCause::Signal(s) => (Status::Interrupted, format!("signal {}", signal_name(s))),
            StopCause::Forced => (Status::ForcedShutdown, "forced_shutdown".to_string()),
            StopCause::Steady => (Status::Completed, "steady_state".to_string()),
        };
        let counter_map = |vals: &[u64]| -> BTreeMap<String, u64> {
            input
                .counters
                .iter()
                .zip(vals)
                .map(|(n, v)| (n.to_string(), *v))
                .collect()
        };
        let open_loop = cfg.rate.map(|offered| {
            let achieved = events as f64 / el_s;
            let backlog = outcome.backlog.unwrap_or(0);
            OpenLoop {
                offered_per_s: offered,
                achieved_per_s: achieved,
                // More than 1% of the work (and at least one event) was due but not started
                // when the run ended: the offered rate was not delivered.
                saturated: backlog as f64 > (events as f64 * 0.01).max(1.0),
                backlog_events: backlog,
                service: LatencySummary::from_histogram(&service, pct, false),
                lag: LatencySummary::from_histogram(&lag, pct, false),
                service_histogram: SparseHistogram::from(&service),
                lag_histogram: SparseHistogram::from(&lag),
            }
        });
        let intervals = outcome
            .intervals
            .iter()
            .map(|s| {
                IntervalResult::from_sample(s, kinds, input.counters, &cfg.interval_percentiles)
            })
            .collect();
        RunResult {
            status,
            stop_reason,
            total_time_s: secs(elapsed),
            warmup_time_s: secs(outcome.warmup),
            events,
            events_per_s: events as f64 / el_s,
            latency: LatencySummary::from_histogram(&events_hist, pct, input.with_histogram),
            operations: kinds
                .iter()
                .zip(&per_kind)
                .map(|(k, h)| OperationStats {
                    name: k.name.to_string(),
                    is_event: k.is_event,
                    count: h.count(),
                    per_s: h.count() as f64 / el_s,
                    latency: LatencySummary::from_histogram(h, pct, false),
                })
                .collect(),
            counters: counter_map(&counters),
            fairness: Fairness {
                events_avg,
                events_stddev,
                exec_time_avg_s: exec_avg,
                exec_time_stddev_s: exec_sd,
            },
            threads,
            open_loop,
            intervals,
            histograms: kinds
                .iter()
                .zip(&per_kind)
                .map(|(k, h)| (k.name.to_string(), SparseHistogram::from(h)))
                .collect(),
            unfinished_events: (status == Status::ForcedShutdown)
                .then(|| outcome.unfinished.iter().filter(|&&u| u).count() as u64),
        }
    }

    /// The figures of one operation kind, by name.
    pub fn operation(&self, name: &str) -> Option<&OperationStats> {
        self.operations.iter().find(|o| o.name == name)
    }

    /// A counter's value, 0 when absent.
    pub fn counter(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }

    /// All events together as one histogram, rebuilt from the lossless per-kind histograms.
    pub fn events_histogram(&self) -> Histogram {
        let mut all = Histogram::new();
        for o in self.operations.iter().filter(|o| o.is_event) {
            if let Some(h) = self
                .histograms
                .get(&o.name)
                .and_then(|s| Histogram::try_from(s).ok())
            {
                all.merge(&h);
            }
        }
        all
    }
}

pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        s => format!("{s}"),
    }
}
