//! Full reports while a plan runs (`PlanOptions::status_interval`, fio's `--status-interval`):
//! every period, the layout's [`Layout::status`] renders a record of everything measured so
//! far. The groups that finished are as they were recorded; the running group's jobs come
//! from live looks at their harness ([`Peek`]: the histograms and counters the interval
//! samples read, nothing reset, so every report is cumulative) and its observations from a
//! [`Glance`]; the groups still to come carry their jobs' settings alone. None of it goes
//! into the record: a saved run replays its final report only.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plumb_core::harness::Peek;
use plumb_core::result::{BuildInput, RunResult};
use plumb_core::{OpKind, RunConfig};
use plumb_observe::session::Glance;

use crate::layout::Layout;
use crate::plan::{Plan, Step};
use crate::record::{GroupRecord, JobRecord, Record};

/// What the reports are made from, shared by the thread that runs the plan (which keeps it
/// up to date) and the one that prints them.
pub(crate) struct Board {
    /// The record's own fields, no groups.
    base: Record,
    percentiles: Vec<f64>,
    with_histogram: bool,
    /// Per plan group: its jobs' settings before they run; None for a group with no run.
    heads: Vec<Option<Vec<JobRecord>>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Finished groups by their place in the plan.
    done: Vec<(usize, GroupRecord)>,
    current: Option<Current>,
}

/// The group that runs now.
struct Current {
    group: usize,
    jobs: Vec<JobRecord>,
    live: Vec<Option<LiveRun>>,
    glance: Glance,
}

/// A job of the running group whose harness can be looked at.
pub(crate) struct LiveRun {
    pub peek: Peek,
    pub kinds: Vec<OpKind>,
    pub counters: Vec<&'static str>,
    pub config: RunConfig,
}

impl Board {
    pub fn new(plan: &Plan, record: &Record) -> Board {
        let heads = plan
            .groups
            .iter()
            .map(|g| {
                g.steps.contains(&Step::Run).then(|| {
                    g.jobs
                        .iter()
                        .map(|s| crate::execute::head(s, &plan.options))
                        .collect()
                })
            })
            .collect();
        Board {
            base: record.clone(),
            percentiles: plan.options.percentiles.clone(),
            with_histogram: plan.options.histogram,
            heads,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Group `group` starts running: each of its jobs' settings, with its harness when it
    /// runs (not a job skipped before its run).
    pub fn begin(&self, group: usize, jobs: Vec<(JobRecord, Option<LiveRun>)>, glance: Glance) {
        let (jobs, live) = jobs.into_iter().unzip();
        self.state().current = Some(Current {
            group,
            jobs,
            live,
            glance,
        });
    }

    /// Group `group` finished as `record` says.
    pub fn end(&self, group: usize, record: &GroupRecord) {
        let mut s = self.state();
        s.current = None;
        s.done.push((group, record.clone()));
    }

    /// Everything measured so far.
    pub fn record(&self) -> Record {
        let s = self.state();
        let mut r = self.base.clone();
        for (k, heads) in self.heads.iter().enumerate() {
            let Some(heads) = heads else { continue };
            if let Some((_, g)) = s.done.iter().find(|(d, _)| *d == k) {
                r.groups.push(g.clone());
                continue;
            }
            r.groups.push(match &s.current {
                Some(c) if c.group == k => self.so_far(c),
                _ => GroupRecord {
                    jobs: heads.clone(),
                    observations: None,
                },
            });
        }
        r
    }

    fn so_far(&self, c: &Current) -> GroupRecord {
        let jobs = c
            .jobs
            .iter()
            .zip(&c.live)
            .map(|(head, live)| {
                let mut job = head.clone();
                if let Some((l, o)) = live.as_ref().and_then(|l| Some((l, l.peek.outcome()?))) {
                    job.result = RunResult::build(
                        BuildInput {
                            kinds: &l.kinds,
                            counters: &l.counters,
                            config: &l.config,
                            percentiles: &self.percentiles,
                            with_histogram: self.with_histogram,
                        },
                        &o,
                    );
                }
                job
            })
            .collect();
        GroupRecord {
            jobs,
            observations: Some(c.glance.now()),
        }
    }
}

/// The report's writer, shared: each report goes out whole, between the run's own writes.
struct Shared<'a>(Mutex<&'a mut (dyn Write + Send)>);

impl<'a> Shared<'a> {
    fn lock(&self) -> std::sync::MutexGuard<'_, &'a mut (dyn Write + Send)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Write for &Shared<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.lock().flush()
    }
}

/// Runs `f` with `report` (shared) while another thread prints a status report on it every
/// `period`, from the first `period` on; it stops printing when `f` returns.
pub(crate) fn alongside<R>(
    board: &Board,
    layout: &dyn Layout,
    period: Duration,
    report: &mut (dyn Write + Send),
    f: impl FnOnce(&mut (dyn Write + Send)) -> R,
) -> R {
    let shared = Shared(Mutex::new(report));
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| reports(board, layout, period, &shared, &done));
        let mut w = &shared;
        let r = f(&mut w);
        done.store(true, Relaxed);
        r
    })
}

fn reports(
    board: &Board,
    layout: &dyn Layout,
    period: Duration,
    out: &Shared<'_>,
    done: &AtomicBool,
) {
    let mut next = Instant::now() + period;
    loop {
        loop {
            if done.load(Relaxed) {
                return;
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            // Slices, so the thread ends soon after the plan does.
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
        }
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let text = layout.status(&board.record(), unix_ms);
        if !text.is_empty() {
            let mut w = out.lock();
            let _ = w.write_all(text.as_bytes());
            let _ = w.flush();
        }
        // A report that took longer than the period skips the ticks it overran (fio's timer
        // does not catch up either).
        next += period;
        let now = Instant::now();
        while next <= now {
            next += period;
        }
    }
}
