//! Carry out a [`Plan`]: each group's steps in order; a run step observes, runs the jobs
//! together, records, advises and renders.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plumb_core::harness::{self, HarnessError, IntervalSample, Peek, RunOutcome};
use plumb_core::progress::Progress;
use plumb_core::result::{BuildInput, IntervalResult, RunResult, RunSettings};
use plumb_core::{OpKind, RunConfig, StopCause, StopFlag, Workload};
use plumb_observe::{ObserveSpec, Observer, Ready};

use crate::checkpoints::{self, Taken};
use crate::facts;
use crate::layout::Layout;
use crate::live::{LiveJob, LiveState, LiveStatus, LiveView};
use crate::plan::{Group, JobError, JobSpec, Plan, Step, StepContext};
use crate::record::{Checkpoint, GroupRecord, JobRecord, Record, StepLog};
use crate::setup::SetupServer;
use crate::status::{self, Board, LiveRun};

/// Where the pipeline writes: the report (stdout), diagnostics (stderr) and the progress
/// of long steps.
pub struct Output<'a> {
    pub report: &'a mut (dyn Write + Send),
    pub diagnostics: &'a mut (dyn Write + Send),
    pub progress: &'a mut (dyn Progress + Send),
    /// A status line redrawn on `report` while the jobs run (fio's ETA line).
    pub live: Option<&'a dyn LiveStatus>,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("cannot write the JSON result to {path}: {source}")]
    JsonFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Job(#[from] JobError),
    #[error(transparent)]
    Harness(#[from] HarnessError),
}

/// How a plan ended, once every step that could run has run.
#[derive(Debug)]
pub struct Finished {
    pub record: Record,
    /// The run steps' end: the first signal, a forced shutdown, or completion.
    pub stopped_by: Option<StopCause>,
    /// A finding marks a result invalid.
    pub invalid: bool,
}

/// Run `plan`; `stop` carries the first SIGINT/SIGTERM. The front end prints the layout's
/// banner first, when its own checks are done. The JSON document is written also
/// when a step fails after a run step finished, so a finished measurement is never lost to
/// a failing cleanup.
pub fn execute(
    plan: &Plan,
    layout: &dyn Layout,
    stop: &StopFlag,
    out: &mut Output<'_>,
) -> Result<Finished, PipelineError> {
    check_waits(plan)?;
    // The clock's calibration starts now, so the steps before the first run (a setup)
    // stand in for its wait.
    plumb_core::clock::begin();
    // A JSON path that cannot be written fails before anything runs, not after.
    let mut json_file = match &plan.options.json_file {
        Some(p) => Some(File::create(p).map_err(|source| PipelineError::JsonFile {
            path: p.clone(),
            source,
        })?),
        None => None,
    };
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut record = Record::new(plan.front_end, plan.command_line.clone(), started.as_secs());
    record.started_at_unix_ms = Some(started.as_millis() as u64);
    record.layout = plan.layout.clone();
    let mut ending = Ending::default();
    let result = match plan.options.status_interval.filter(|_| plan.options.text) {
        None => run_groups(plan, layout, stop, out, &mut record, &mut ending, None),
        Some(period) => {
            let board = Board::new(plan, &record);
            let Output {
                report,
                diagnostics,
                progress,
                live,
            } = out;
            status::alongside(&board, layout, period, &mut **report, |report| {
                let mut out = Output {
                    report,
                    diagnostics: &mut **diagnostics,
                    progress: &mut **progress,
                    live: *live,
                };
                run_groups(
                    plan,
                    layout,
                    stop,
                    &mut out,
                    &mut record,
                    &mut ending,
                    Some(&board),
                )
            })
        }
    };
    let ran = !record.groups.is_empty();
    if ran && plan.options.text {
        let _ = write!(out.report, "{}", layout.finish(&record));
        let _ = out.report.flush();
    }
    if ran {
        let doc = record.to_json();
        if let Some(f) = json_file.as_mut() {
            if let Err(source) = f.write_all(doc.as_bytes()).and_then(|_| f.flush()) {
                let e = PipelineError::JsonFile {
                    path: plan.options.json_file.clone().unwrap_or_default(),
                    source,
                };
                return Err(e);
            }
        }
        if !plan.options.text {
            let _ = write!(out.report, "{doc}");
            let _ = out.report.flush();
        }
    }
    result?;
    Ok(Finished {
        record,
        stopped_by: ending.stopped_by,
        invalid: ending.invalid,
    })
}

/// How long the load before a group after the first is watched (see `run_group`).
const LATER_BASELINE: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Ending {
    stopped_by: Option<StopCause>,
    invalid: bool,
}

fn run_groups(
    plan: &Plan,
    layout: &dyn Layout,
    stop: &StopFlag,
    out: &mut Output<'_>,
    record: &mut Record,
    ending: &mut Ending,
    board: Option<&Board>,
) -> Result<(), PipelineError> {
    // When the first run step began: jobs' start delays count from here.
    let mut genesis = None;
    for (gi, group) in plan.groups.iter().enumerate() {
        // Jobs that failed before their run and go no further: their messages.
        let mut skipped: Vec<Option<String>> = vec![None; group.jobs.len()];
        // The load baseline, taken while the setup works in a local server.
        let window = baseline_window(record.groups.is_empty());
        let setup = SetupServer::for_group(plan, group, window);
        for step in &group.steps {
            match step {
                Step::Prepare | Step::Prewarm | Step::Cleanup => {
                    let mut ctx = StepContext::new(
                        plan.options.text,
                        out.report,
                        out.diagnostics,
                        out.progress,
                    );
                    if *step != Step::Cleanup {
                        ctx.setup = setup.clone();
                    }
                    for (k, j) in group.jobs.iter().enumerate() {
                        if skipped[k].is_some() {
                            continue;
                        }
                        let done = match step {
                            Step::Prepare => j.job.prepare(&mut ctx),
                            Step::Prewarm => j.job.prewarm(&mut ctx),
                            _ => j.job.cleanup(&mut ctx),
                        };
                        match done {
                            Err(JobError::Skipped(m)) => skipped[k] = Some(m),
                            other => other?,
                        }
                    }
                    let _ = ctx.log().flush();
                    let text = ctx.logged();
                    if !text.is_empty() {
                        record.step_logs.push(StepLog {
                            before_group: record.groups.len(),
                            step: step.name().to_string(),
                            text,
                        });
                    }
                }
                Step::Run => {
                    let genesis = *genesis.get_or_insert_with(Instant::now);
                    let first = record.groups.is_empty();
                    let shown = board.map(|b| (b, gi));
                    let ready = setup.as_ref().and_then(SetupServer::finish);
                    let (g, cut_short) = run_group(
                        plan, group, &skipped, layout, stop, out, genesis, first, shown, ready,
                    )?;
                    if let Some(b) = board {
                        b.end(gi, &g);
                    }
                    ending.invalid |= g
                        .jobs
                        .iter()
                        .any(|j| plumb_advise::any_invalid(&j.findings));
                    if plan.options.text {
                        let _ = write!(out.report, "{}", layout.report(record, &g));
                        let _ = out.report.flush();
                    }
                    record.groups.push(g);
                    if cut_short.is_some() {
                        // An interrupted or abandoned run ends the plan here.
                        ending.stopped_by = cut_short;
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

/// How long the load before a group is watched: a quarter second before the first; before
/// a later group it mostly shows plumb's own previous group (whose time is left out), so a
/// short look is enough, and plans of many short groups (mysqlslap's iterations) do not pay
/// a quarter second each.
fn baseline_window(first_group: bool) -> Duration {
    if first_group {
        plumb_observe::session::BASELINE
    } else {
        LATER_BASELINE
    }
}

/// Sleep until `delay` after `genesis`, or until a signal arrives (the harness then sees
/// it and stops at once).
fn wait_for_start(genesis: Instant, delay: Duration, stop: &StopFlag) {
    // A delay past what the clock can hold (fio's negative startdelay) waits for a signal.
    let due = genesis.checked_add(delay);
    loop {
        let now = Instant::now();
        if due.is_some_and(|d| now >= d) || stop.load(Relaxed) != 0 {
            return;
        }
        // Slices, so a signal is seen within 50 ms.
        let left = due.map_or(Duration::MAX, |d| d - now);
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Wait until every job in `after` (indices into `ended`) has ended, or a signal arrives.
fn wait_for_jobs(ended: &[AtomicBool], after: &[usize], stop: &StopFlag) {
    while stop.load(Relaxed) == 0 && !after.iter().all(|&k| ended[k].load(Acquire)) {
        // Slices, so a job starts soon after the last one it waits for ends.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Marks a job ended when its thread is done with it.
struct EndOnDrop<'a>(&'a AtomicBool);

impl Drop for EndOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Release);
    }
}

/// Refuse waits that name no job of the group, or that lead back to the job itself (jobs
/// that wait for each other would be held back for ever).
fn check_waits(plan: &Plan) -> Result<(), JobError> {
    for group in &plan.groups {
        let n = group.jobs.len();
        for (k, j) in group.jobs.iter().enumerate() {
            if let Some(bad) = j.after.iter().find(|&&a| a >= n) {
                return Err(JobError::Usage(format!(
                    "job '{}' waits for job {bad} of a group of {n}",
                    j.name
                )));
            }
            // Depth-first over the waits.
            let mut seen = vec![false; n];
            let mut todo = j.after.clone();
            while let Some(a) = todo.pop() {
                if a == k {
                    return Err(JobError::Usage(format!(
                        "job '{}' waits, through the jobs it waits for, for itself",
                        j.name
                    )));
                }
                if !std::mem::replace(&mut seen[a], true) {
                    todo.extend(&group.jobs[a].after);
                }
            }
        }
    }
    Ok(())
}

/// The waits of a group's jobs as indices among those that run (`runs[k]`: whether job k
/// runs); a job that never runs is no wait.
fn waits(group: &Group, runs: &[bool]) -> Vec<Vec<usize>> {
    let mut place = Vec::with_capacity(runs.len());
    let mut next = 0;
    for &r in runs {
        place.push(r.then_some(next));
        next += usize::from(r);
    }
    group
        .jobs
        .iter()
        .zip(runs)
        .filter(|(_, r)| **r)
        .map(|(j, _)| j.after.iter().filter_map(|&a| place[a]).collect())
        .collect()
}

/// Redraw the status line every `live.period()` until the group's jobs are done, each
/// drawing over the last (padded to its length), then end the line.
fn draw_live(
    live: &dyn LiveStatus,
    genesis: Instant,
    jobs: &[Mutex<LiveJob<'_>>],
    sink: &Mutex<&mut Output<'_>>,
    running: &AtomicBool,
) {
    let period = live.period();
    let mut next = Instant::now() + period;
    let mut last_len: usize = 0;
    while running.load(Relaxed) {
        let now = Instant::now();
        if now < next {
            // Slices, so the line ends soon after the jobs do.
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += period;
        let snapshot: Vec<LiveJob<'_>> = jobs
            .iter()
            .map(|j| j.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .collect();
        let view = LiveView {
            elapsed: genesis.elapsed(),
            jobs: &snapshot,
        };
        let Some(line) = live.line(&view) else {
            continue;
        };
        // A line that begins on a new line has nothing to draw over.
        if line.starts_with('\n') {
            last_len = 0;
        }
        let len = line.trim_start_matches('\n').chars().count();
        let pad = last_len.saturating_sub(len);
        last_len = len;
        // Under the sink's lock, so no interval line lands inside the status line.
        let _out = sink.lock().unwrap_or_else(|p| p.into_inner());
        live.show(&format!("{line}{:pad$}\r", ""));
    }
    if last_len > 0 && !live.end().is_empty() {
        let _out = sink.lock().unwrap_or_else(|p| p.into_inner());
        live.show(live.end());
    }
}

/// A job opened for its run.
struct Opened<'a> {
    spec: &'a JobSpec,
    workload: Arc<dyn Workload>,
    shape: Shape,
}

/// What the interval lines and the result of one job need from it (shared with the thread
/// that runs it).
struct Shape {
    kinds: Vec<OpKind>,
    counters: Vec<&'static str>,
    head: JobRecord,
}

impl Shape {
    /// The job's result from what its run measured (all of it, or a checkpoint's window).
    fn result(
        &self,
        config: &RunConfig,
        opts: &crate::plan::PlanOptions,
        with_histogram: bool,
        outcome: &RunOutcome,
    ) -> RunResult {
        RunResult::build(
            BuildInput {
                kinds: &self.kinds,
                counters: &self.counters,
                config,
                percentiles: &opts.percentiles,
                with_histogram,
            },
            outcome,
        )
    }
}

/// A job's record before its run: its settings, no result yet.
pub(crate) fn head(spec: &JobSpec, opts: &crate::plan::PlanOptions) -> JobRecord {
    JobRecord {
        name: spec.name.clone(),
        workload: spec.job.settings(),
        settings: RunSettings {
            checkpoints_s: spec.checkpoints.iter().map(Duration::as_secs_f64).collect(),
            ..RunSettings::new(&spec.config, &opts.percentiles)
        },
        seed_given: spec.seed_given,
        error: None,
        layout: spec.layout.clone(),
        result: RunResult::empty(),
        checkpoints: Vec::new(),
        since_checkpoint: None,
        findings: Vec::new(),
    }
}

/// The record of a job skipped before its run: its settings and `why`, no figures; its
/// findings as a replay of the record evaluates them.
fn not_run(
    spec: &JobSpec,
    why: &str,
    opts: &crate::plan::PlanOptions,
    layout: &dyn Layout,
    observations: Option<&plumb_observe::Observations>,
) -> Result<JobRecord, PipelineError> {
    let mut job = head(spec, opts);
    job.error = Some(why.to_string());
    spec.job.after_run(&mut job)?;
    job.findings = plumb_advise::evaluate(&facts::from_job(&job, observations, layout.spelling()));
    Ok(job)
}

/// Run one group's jobs together, but those `skipped` before their run (recorded with their
/// error, in their place); also says which signal or forced shutdown cut it short.
#[allow(clippy::too_many_arguments)]
fn run_group(
    plan: &Plan,
    group: &Group,
    skipped: &[Option<String>],
    layout: &dyn Layout,
    stop: &StopFlag,
    out: &mut Output<'_>,
    genesis: Instant,
    first_group: bool,
    board: Option<(&Board, usize)>,
    ready: Option<Ready>,
) -> Result<(GroupRecord, Option<StopCause>), PipelineError> {
    let opts = &plan.options;
    let runs: Vec<bool> = skipped.iter().map(Option::is_none).collect();
    let waits = waits(group, &runs);
    let mut opened = Vec::with_capacity(group.jobs.len());
    for (spec, _) in group.jobs.iter().zip(skipped).filter(|(_, s)| s.is_none()) {
        let mut notes = Vec::new();
        let workload = match spec.job.workload(&mut notes) {
            Ok(w) => w,
            // A job that cannot open (not a command line it cannot take) found that out
            // where its peer does: after printing what it was going to run.
            Err(e @ JobError::Failed(_)) => {
                if opts.text {
                    let _ = write!(out.report, "{}", layout.unopened(&head(spec, opts)));
                    let _ = out.report.flush();
                }
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        for n in notes.iter().filter(|_| opts.notes) {
            let _ = writeln!(out.diagnostics, "plumb: note: {n}");
        }
        let head = head(spec, opts);
        opened.push(Opened {
            spec,
            shape: Shape {
                kinds: workload.kinds().to_vec(),
                counters: workload.counters().to_vec(),
                head,
            },
            workload,
        });
    }
    if opened.is_empty() {
        // Nothing to run or observe: the group is its jobs' errors.
        let jobs = group
            .jobs
            .iter()
            .zip(skipped)
            .filter_map(|(spec, why)| why.as_ref().map(|w| not_run(spec, w, opts, layout, None)))
            .collect::<Result<Vec<_>, _>>()?;
        let g = GroupRecord {
            jobs,
            observations: None,
        };
        return Ok((g, None));
    }
    // A peer that prints something else when its threads cannot be set up (the layout's
    // `unopened`) announces them only once they are: a lone job's preamble then waits for
    // its workers to be built (sysbench's OLTP scripts prepare their statements there).
    let deferred =
        opts.text && opened.len() == 1 && !layout.unopened(&opened[0].shape.head).is_empty();
    if opts.text && !deferred {
        for o in &opened {
            let _ = write!(out.report, "{}", layout.preamble(&o.shape.head));
        }
        let _ = out.report.flush();
    }

    // Observe from just before the workers start to just after they end.
    let mut dir = None;
    let mut files = Vec::new();
    for o in &opened {
        let t = o.spec.job.targets();
        dir = dir.or(t.dir);
        files.extend(t.files);
    }
    let mut spec = ObserveSpec::new(dir, files, opts.observe_interval);
    // The machine's load before the group says whether other work was running.
    spec.baseline = baseline_window(first_group);
    spec.ready = ready;
    let observer = Observer::start(spec);
    // The status reports look at each job's harness while it runs.
    // So do the checkpoint reports.
    let peeks: Vec<Option<Peek>> = opened
        .iter()
        .map(|o| (board.is_some() || !o.spec.checkpoints.is_empty()).then(Peek::new))
        .collect();
    if let Some((b, gi)) = board {
        let mut runs = opened.iter().zip(&peeks);
        let jobs = group
            .jobs
            .iter()
            .zip(skipped)
            .map(
                |(spec, why)| match why.is_none().then(|| runs.next()).flatten() {
                    Some((o, p)) => (
                        o.shape.head.clone(),
                        p.clone().map(|peek| LiveRun {
                            peek,
                            kinds: o.shape.kinds.clone(),
                            counters: o.shape.counters.clone(),
                            config: o.spec.config.clone(),
                        }),
                    ),
                    // Skipped before its run: its settings alone.
                    None => (head(spec, opts), None),
                },
            )
            .collect();
        b.begin(gi, jobs, observer.glance());
    }

    let live = out.live;
    let live_jobs: Vec<Mutex<LiveJob<'_>>> = opened
        .iter()
        .map(|o| {
            Mutex::new(LiveJob {
                head: &o.shape.head,
                state: LiveState::Pending,
                since: None,
                operations: Default::default(),
                counters: Default::default(),
                last: None,
            })
        })
        .collect();
    let set_state = |k: usize, state: LiveState| {
        let mut j = live_jobs[k].lock().unwrap_or_else(|p| p.into_inner());
        j.state = state;
        if state == LiveState::Running {
            j.since = Some(genesis.elapsed());
        }
    };
    let sink: Mutex<&mut Output<'_>> = Mutex::new(out);
    let text = opts.text;
    let on_interval = |k: usize, o: &Shape, cfg: &RunConfig, s: &IntervalSample| {
        let printed = cfg.report_interval.is_some();
        if !printed && live.is_none() {
            return;
        }
        let i = IntervalResult::from_sample(s, &o.kinds, &o.counters, &cfg.interval_percentiles);
        let line = if printed {
            layout.interval(&o.head, &i)
        } else {
            String::new()
        };
        if live.is_some() {
            live_jobs[k]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .add(i);
        }
        if line.is_empty() {
            return;
        }
        let mut out = sink.lock().unwrap_or_else(|p| p.into_inner());
        let w: &mut dyn Write = if text { out.report } else { out.diagnostics };
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    };
    // Each job's checkpoint reports as they are made, and the looks they came from.
    let made: Vec<Mutex<(Vec<Checkpoint>, Taken)>> =
        opened.iter().map(|_| Mutex::default()).collect();
    // Runs job `k`'s harness (`run`) with its checkpoint reports alongside; given the
    // parts of the job the thread that makes the reports may share.
    let with_checkpoints =
        |k: usize,
         times: &[Duration],
         shape: &Shape,
         config: &RunConfig,
         run: &mut dyn FnMut() -> Result<RunOutcome, HarnessError>| {
            let Some(peek) = peeks[k].as_ref().filter(|_| !times.is_empty()) else {
                return run();
            };
            let report = |at: Duration, window: &RunOutcome| {
                let mut result = shape.result(config, opts, false, window);
                // The whole run's lossless histograms are the record's; a copy per
                // checkpoint (up to 256 of them) would only make it larger.
                result.histograms.clear();
                let c = Checkpoint {
                    at_s: at.as_secs_f64(),
                    result,
                };
                if text {
                    let printed = layout.checkpoint(&shape.head, &c);
                    let mut out = sink.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = write!(out.report, "{printed}");
                    let _ = out.report.flush();
                }
                lock(&made[k]).0.push(c);
            };
            let (r, taken) = checkpoints::alongside(times, peek, &report, run);
            lock(&made[k]).1 = taken;
            r
        };
    let running = AtomicBool::new(true);
    let ended: Vec<AtomicBool> = opened.iter().map(|_| AtomicBool::new(false)).collect();
    let outcomes: Vec<Result<RunOutcome, HarnessError>> = std::thread::scope(|scope| {
        if let Some(live) = live {
            let (sink, live_jobs, running) = (&sink, &live_jobs, &running);
            scope.spawn(move || draw_live(live, genesis, live_jobs, sink, running));
        }
        let outcomes = if opened.len() == 1 {
            let o = &opened[0];
            wait_for_start(genesis, o.spec.start_delay, stop);
            set_state(0, LiveState::Running);
            let print = |text: String| {
                let mut out = sink.lock().unwrap_or_else(|p| p.into_inner());
                let _ = write!(out.report, "{text}");
                let _ = out.report.flush();
            };
            let (times, config) = (&o.spec.checkpoints, &o.spec.config);
            let r = with_checkpoints(0, times, &o.shape, config, &mut || {
                harness::run_announced(
                    o.workload.clone(),
                    &o.spec.config,
                    stop,
                    &mut |s| on_interval(0, &o.shape, &o.spec.config, s),
                    peeks[0].as_ref(),
                    &mut || {
                        if deferred {
                            print(layout.preamble(&o.shape.head));
                        }
                    },
                )
            });
            if deferred && matches!(r, Err(HarnessError::Workload(_))) {
                print(layout.unopened(&o.shape.head));
            }
            set_state(0, LiveState::Done);
            vec![r]
        } else {
            let handles: Vec<_> = opened
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let (on_interval, set_state) = (&on_interval, &set_state);
                    let with_checkpoints = &with_checkpoints;
                    let (workload, config, shape) = (o.workload.clone(), &o.spec.config, &o.shape);
                    let delay = o.spec.start_delay;
                    let times = &o.spec.checkpoints;
                    let peek = peeks[k].as_ref();
                    let (ended, after) = (&ended, &waits[k]);
                    scope.spawn(move || {
                        // Ended however the thread ends, so no job waits for a panicked one.
                        let _ended = EndOnDrop(&ended[k]);
                        wait_for_jobs(ended, after, stop);
                        wait_for_start(genesis, delay, stop);
                        set_state(k, LiveState::Running);
                        let r = with_checkpoints(k, times, shape, config, &mut || {
                            harness::run_peeked(
                                workload.clone(),
                                config,
                                stop,
                                &mut |s| on_interval(k, shape, config, s),
                                peek,
                            )
                        });
                        set_state(k, LiveState::Done);
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or(Err(HarnessError::Panic("a job's harness".into())))
                })
                .collect()
        };
        running.store(false, Relaxed);
        outcomes
    });
    drop(live_jobs);
    let operations: u64 = outcomes
        .iter()
        .flatten()
        .flat_map(|o| o.threads.iter())
        .flat_map(|t| t.kinds.iter())
        .map(|h| h.count())
        .sum();
    let observations = observer.finish(operations);

    let mut jobs = Vec::with_capacity(group.jobs.len());
    let mut cut_short = None;
    let mut ran = opened.into_iter().zip(outcomes).zip(made);
    for (spec, why) in group.jobs.iter().zip(skipped) {
        if let Some(why) = why {
            jobs.push(not_run(spec, why, opts, layout, Some(&observations))?);
            continue;
        }
        let Some(((o, outcome), made)) = ran.next() else {
            break;
        };
        // A job that failed while it ran keeps what it measured until then (plans that keep
        // going report it with its error).
        let (outcome, error) = match outcome {
            Ok(o) => (o, None),
            Err(HarnessError::Failed { error, partial }) if opts.keep_going => {
                (*partial, Some(o.spec.job.run_failure(&error)))
            }
            // A worker that could not be set up: in the front end's words where it has
            // some, as a failure while running would be (else the error as it is, for
            // front ends that tell its kind).
            Err(HarnessError::Workload(error)) => {
                let words = o.spec.job.run_failure(&error);
                if words == error.to_string() {
                    return Err(HarnessError::Workload(error).into());
                }
                return Err(JobError::failed(words).into());
            }
            Err(e) => return Err(e.into()),
        };
        if matches!(outcome.cause, StopCause::Signal(_) | StopCause::Forced) {
            cut_short.get_or_insert(outcome.cause);
        }
        let result = |outcome: &RunOutcome| {
            o.shape
                .result(&o.spec.config, opts, opts.histogram, outcome)
        };
        let (checkpoints, taken) = made.into_inner().unwrap_or_else(|p| p.into_inner());
        let since_checkpoint = taken.tail(&outcome).map(|tail| Box::new(result(&tail)));
        let mut job = JobRecord {
            result: result(&outcome),
            checkpoints,
            since_checkpoint,
            ..o.shape.head
        };
        job.error = error;
        // The clock that timed it, chosen when the run started.
        job.settings.clock = Some(plumb_core::clock::source().to_string());
        // Settings again: opening and running taught the job things (fsync time, fallback).
        job.workload = o.spec.job.settings();
        o.spec.job.after_run(&mut job)?;
        job.findings = plumb_advise::evaluate(&facts::from_job(
            &job,
            Some(&observations),
            layout.spelling(),
        ));
        jobs.push(job);
    }
    Ok((
        GroupRecord {
            jobs,
            observations: Some(observations),
        },
        cut_short,
    ))
}

/// A lock whose holder panicked is still usable: the data is plain figures.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_delay_counts_from_genesis_and_gives_way_to_a_signal() {
        let stop = StopFlag::default();
        let genesis = Instant::now() - Duration::from_millis(300);
        let t = Instant::now();
        wait_for_start(genesis, Duration::from_millis(250), &stop);
        // Already due: no sleep (a loaded machine may still take a moment to get here).
        assert!(t.elapsed() < Duration::from_millis(200), "already due");
        let t = Instant::now();
        wait_for_start(genesis, Duration::from_millis(400), &stop);
        let waited = t.elapsed();
        assert!(waited >= Duration::from_millis(90), "{waited:?}");
        assert!(waited < Duration::from_secs(2), "{waited:?}");
        stop.store(2, Relaxed);
        let t = Instant::now();
        wait_for_start(Instant::now(), Duration::from_secs(60), &stop);
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
