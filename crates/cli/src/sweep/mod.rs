//! `plumb sweep PLAN.toml`: a matrix of option values run point after point through a front
//! end's own pipeline, prepare and cleanup once per data set, every run kept in the history
//! under one sweep id, then a table and the knee of each swept variable.

pub mod front_end;
mod knee;
mod laid;
mod plan;
pub(crate) mod saved;
pub(crate) mod table;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plumb_core::{StopCause, StopFlag};
use plumb_pipeline::Record;

use crate::exit::{self, UsageError};
use crate::native::text::{latency, table};
use front_end::{Command, DataSteps, Phase, Swept};
use laid::Laid;
use table::Merged;

/// What `plumb sweep` was asked.
pub struct Options {
    pub plan: PathBuf,
    pub dry_run: bool,
    pub no_history: bool,
    pub json: Option<PathBuf>,
}

/// One point of the matrix: its values, in the order the plan lists the keys.
struct Point {
    values: Vec<String>,
    /// The options for the command line (`--threads=2`).
    options: Vec<String>,
    /// Which data set it uses (its data-set values).
    data_set: Vec<String>,
    /// The files its run opens and lays out when they are missing (fio), from the front
    /// end's check.
    files: Vec<PathBuf>,
}

/// One run of a point.
struct Done {
    point: usize,
    repeat: u32,
    run_id: Option<i64>,
    record: Record,
}

pub fn run(o: Options) -> anyhow::Result<i32> {
    let p = plan::read(&o.plan).map_err(UsageError)?;
    let path = o.plan.as_path();
    let fe = front_end::find(p.front_end.as_deref(), &p.command[0]).map_err(|e| {
        UsageError(plan::at(
            path,
            plan::line_of(&p.text, None, "front_end").or(plan::line_of(&p.text, None, "command")),
            e,
        ))
    })?;
    let words = if fe.claims(&p.command[0]) && fe.name() == "fio" {
        &p.command[1..]
    } else {
        &p.command[..]
    };
    let cmd_line = plan::line_of(&p.text, None, "command");
    let cmd = fe
        .command(words)
        .map_err(|e| UsageError(plan::at(path, cmd_line, e)))?;
    let mut swept: Vec<Swept> = Vec::new();
    for (key, _, line) in &p.matrix {
        let s = cmd
            .option(key)
            .map_err(|e| UsageError(plan::at(path, Some(*line), format!("matrix.{key}: {e}"))))?;
        if let Some(other) = swept.iter().find(|o| o.name == s.name) {
            return Err(UsageError(plan::at(
                path,
                Some(*line),
                format!(
                    "matrix.{key}: the same option as {}",
                    other.prefix.trim_end_matches('=')
                ),
            ))
            .into());
        }
        if p.warmup.is_some() && s.name == cmd.warmup_name() {
            return Err(UsageError(plan::at(
                path,
                Some(*line),
                format!("matrix.{key}: the plan's warmup sets it already"),
            ))
            .into());
        }
        swept.push(s);
    }
    let steps = cmd.data_steps(p.prepare, p.keep_data).map_err(|e| {
        let key = if e.starts_with("keep_data") {
            plan::line_of(&p.text, None, "keep_data").or(plan::line_of(&p.text, None, "keep-data"))
        } else {
            plan::line_of(&p.text, None, "prepare")
        };
        UsageError(plan::at(path, key.or(cmd_line), e))
    })?;
    let mut replaced: Vec<String> = swept.iter().map(|s| s.name.clone()).collect();
    let mut extra = Vec::new();
    if let Some(w) = p.warmup {
        extra.push(cmd.warmup(w.as_secs_f64()));
        replaced.push(cmd.warmup_name().to_string());
    }
    let mut points = expand(&p.matrix, &swept, &extra);
    // Every point's command line goes through the front end's parser before anything runs.
    for (i, pt) in points.iter_mut().enumerate() {
        let args = cmd.args(&pt.options, &replaced, Phase::Run);
        pt.files = cmd.check(&args).map_err(|e| {
            UsageError(plan::at(
                path,
                None,
                format!(
                    "point {} ({}): {}",
                    i + 1,
                    pt.values.join(" "),
                    e.lines().next().unwrap_or("")
                ),
            ))
        })?;
    }
    let keys: Vec<&str> = p.matrix.iter().map(|(k, _, _)| k.as_str()).collect();
    let label = |pt: &Point| {
        keys.iter()
            .zip(&pt.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    print_plan(&p, &points, steps, &label, cmd.as_ref(), &replaced);
    if o.dry_run {
        return Ok(0);
    }

    let stop = crate::signals::install();
    let started = Instant::now();
    let start_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut store = if o.no_history {
        None
    } else {
        match plumb_history::Store::open_default()
            .and_then(|mut s| s.new_sweep(start_unix, &p.text).map(|id| (s, id)))
        {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("plumb: warning: the sweep is not kept in the history: {e}");
                None
            }
        }
    };
    let sweep_id = store.as_ref().map(|(_, id)| *id);
    if let Some(id) = sweep_id {
        println!(
            "sweep {id}: {} points (plumb history --sweep={id})",
            points.len()
        );
    }
    let total = points.len() as u64 * p.repeat as u64;
    let bar = progress(total);
    let tags: Vec<String> = p.tag.iter().cloned().collect();
    let mut done: Vec<Done> = Vec::new();
    let mut failure: Option<Failure> = None;
    let mut interrupted = None;
    let mut runs = 0u64;
    // The cleanup of the data set in use that the sweep has still to run: a signal or an
    // error runs it (from before its prepare, so a prepare cut short is cleaned up too).
    let mut to_clean: Option<Cleanup> = None;
    // A cleanup that failed after its data set's last point: said, not run again.
    let mut cleanup_failed: Option<(Cleanup, String)> = None;
    // keep_data on a data set whose runs lay it out: what they laid out, to say it stays.
    let mut to_keep: Option<Laid> = None;
    'points: for (i, pt) in points.iter().enumerate() {
        if stop.load(Relaxed) != 0 {
            // Before a prepare that would only be cleaned up again.
            break;
        }
        let first_of_set = i == 0 || points[i - 1].data_set != pt.data_set;
        let last_of_set = i + 1 == points.len() || points[i + 1].data_set != pt.data_set;
        if first_of_set {
            let last = points[i..]
                .iter()
                .position(|p| p.data_set != pt.data_set)
                .map_or(points.len() - 1, |k| i + k - 1);
            match steps {
                DataSteps::Separate { cleanup: true, .. } => {
                    let args = cmd.args(&points[last].options, &replaced, Phase::Cleanup);
                    to_clean = Some(Cleanup::Command(args));
                }
                DataSteps::ByTheRun { cleanup } => {
                    // A job that opens no file (fio's null engine): nothing to remove or keep.
                    let laid =
                        Some(Laid::before(&set_files(&points[i..=last]))).filter(|l| !l.is_empty());
                    if cleanup {
                        to_clean = laid.map(Cleanup::Files);
                    } else {
                        to_keep = laid;
                    }
                }
                _ => {}
            }
        }
        if let (true, DataSteps::Separate { prepare: true, .. }) = (first_of_set, steps) {
            let args = cmd.args(&pt.options, &replaced, Phase::Prepare);
            say(&bar, false, format!("sweep: prepare: {}", cmd.typed(&args)));
            if let Err(e) = cmd.run(&args, &stop) {
                failure = Some(Failure::new(
                    format!("the prepare before point {}", i + 1),
                    label(pt),
                    &e,
                ));
                break;
            }
        }
        for r in 1..=p.repeat {
            if stop.load(Relaxed) != 0 {
                break 'points;
            }
            if runs > 0 && !p.pause.is_zero() && pause(p.pause, &stop) {
                break 'points;
            }
            runs += 1;
            let rep = if p.repeat > 1 {
                format!(" (repeat {r}/{})", p.repeat)
            } else {
                String::new()
            };
            bar.set_message(format!("{}{rep}", label(pt)));
            bar.set_position(runs - 1);
            if !bar.is_hidden() {
                bar.tick();
            } else {
                eprintln!(
                    "sweep: run {runs}/{total}: {}{rep} ({} elapsed{})",
                    label(pt),
                    clock(started.elapsed()),
                    remaining(started.elapsed(), runs - 1, total)
                );
            }
            let args = cmd.args(&pt.options, &replaced, Phase::Run);
            let finished = match cmd.run(&args, &stop) {
                Ok(f) => f,
                Err(e) => {
                    if stop.load(Relaxed) == 0 {
                        say(
                            &bar,
                            false,
                            format!("sweep: point {} failed: not kept", i + 1),
                        );
                    }
                    failure = Some(Failure::new(format!("point {}", i + 1), label(pt), &e));
                    break 'points;
                }
            };
            if let Some(StopCause::Signal(s)) = finished.stopped_by {
                interrupted = Some(s);
                say(
                    &bar,
                    false,
                    format!("sweep: point {} interrupted: not kept", i + 1),
                );
                break 'points;
            }
            let run_id = store.as_mut().and_then(|(s, id)| {
                let at = plumb_history::SweepPoint {
                    sweep: *id,
                    index: i as u32 + 1,
                    repeat: r,
                    values: label(pt),
                };
                s.add_point(&finished.record, &tags, &at)
                    .map_err(|e| {
                        eprintln!(
                            "plumb: warning: point {} was not kept in the history: {e}",
                            i + 1
                        )
                    })
                    .ok()
            });
            let d = Done {
                point: i,
                repeat: r,
                run_id,
                record: finished.record,
            };
            say(
                &bar,
                true,
                point_line(&d, pt, &label, cmd.unit(), points.len()),
            );
            done.push(d);
        }
        if !last_of_set {
            continue;
        }
        if let Some(l) = to_keep.take() {
            say(&bar, false, kept_line(&l));
        }
        if let DataSteps::Separate {
            cleanup: false,
            added: true,
            ..
        } = steps
        {
            let args = cmd.args(&pt.options, &replaced, Phase::Cleanup);
            say(
                &bar,
                false,
                format!(
                    "sweep: keep_data: the data set stays (to remove it: {})",
                    cmd.typed(&args)
                ),
            );
        }
        let Some(c) = to_clean.take() else {
            continue;
        };
        let outcome = match &c {
            Cleanup::Command(args) => {
                say(&bar, false, format!("sweep: cleanup: {}", cmd.typed(args)));
                cmd.run(args, &stop).map(|_| ())
            }
            Cleanup::Files(l) => l.remove(&stop).map(|removed| {
                say(&bar, false, removed_line(l, &removed));
            }),
        };
        if let Err(e) = outcome {
            let f = Failure::new(format!("the cleanup after point {}", i + 1), label(pt), &e);
            if stop.load(Relaxed) != 0 {
                // Cut short by the signal: the stop below runs it again, to be stopped again.
                to_clean = Some(c);
            } else {
                cleanup_failed = Some((c, f.error.clone()));
            }
            failure = Some(f);
            break;
        }
    }
    bar.finish_and_clear();
    if interrupted.is_none() && stop.load(Relaxed) != 0 {
        interrupted = Some(stop.load(Relaxed) as i32);
    }
    let cause = match (interrupted, &failure) {
        (Some(sig), _) => Some(Cause::Signal(sig)),
        (None, Some(f)) => Some(Cause::Error {
            at: f.at.clone(),
            line: f.line(),
        }),
        (None, None) => None,
    };
    // The results are out before a stopped sweep's cleanup, which may take long and which
    // a further signal ends at once.
    print!("{}", summary(&points, &keys, &done, cmd.unit()));
    if let Some(f) = &o.json {
        write_json(f, sweep_id, &p.text, &points, &keys, &done, cause.as_ref())?;
    }
    let _ = std::io::stdout().flush();
    let Some(cause) = cause else {
        return Ok(0);
    };
    let left = Stopped {
        cause,
        kept: done.len(),
        planned: points.len() * p.repeat as usize,
        steps,
        prepare: p.prepare,
    };
    eprintln!(
        "{}",
        left.clean_up(cmd.as_ref(), to_clean, cleanup_failed, &stop)
    );
    match left.cause {
        Cause::Signal(sig) => Ok(exit::for_signal(sig)),
        // A runtime failure (exit 1), even when what the run refused was an option value:
        // the parser passed every point's command line and the points before it are kept.
        Cause::Error { line, .. } => Err(anyhow::anyhow!(line)),
    }
}

/// The files the runs of a data set's points open (the front end's translation names
/// them), each once.
fn set_files(points: &[Point]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for f in points.iter().flat_map(|p| &p.files) {
        if !v.contains(f) {
            v.push(f.clone());
        }
    }
    v
}

/// What the end of a data set whose runs laid out its files did with them.
fn removed_line(l: &Laid, removed: &[PathBuf]) -> String {
    let removed: Vec<&Path> = removed.iter().map(PathBuf::as_path).collect();
    let mut s = if removed.is_empty() {
        "sweep: cleanup: no file to remove (the runs left none they laid out)".to_string()
    } else {
        format!(
            "sweep: cleanup: removed the files the runs laid out: {}",
            laid::shown(&removed)
        )
    };
    let kept = l.kept();
    if !kept.is_empty() {
        s.push_str(&format!(
            "; kept {} (there before the data set's first point)",
            laid::shown(&kept)
        ));
    }
    s
}

/// What keep_data keeps at the end of a data set whose runs laid out its files.
fn kept_line(l: &Laid) -> String {
    let laid = l.present();
    if laid.is_empty() {
        "sweep: keep_data: the runs left no file they laid out".to_string()
    } else {
        format!(
            "sweep: keep_data: the files the runs laid out stay: {} (to remove them: {})",
            laid::shown(&laid),
            l.remove_command()
        )
    }
}

/// What removes a data set.
enum Cleanup {
    /// The front end's cleanup command (`plumb fileio ... cleanup`).
    Command(Vec<String>),
    /// The files the data set's runs laid out (fio).
    Files(Laid),
}

impl Cleanup {
    /// What it does, in the line before it: the command as typed, or the files it removes.
    fn shown(&self, cmd: &dyn Command) -> String {
        match self {
            Cleanup::Command(args) => cmd.typed(args),
            Cleanup::Files(l) => format!("remove {}", laid::shown(&l.present())),
        }
    }

    fn run(&self, cmd: &dyn Command, stop: &StopFlag) -> anyhow::Result<()> {
        match self {
            Cleanup::Command(args) => cmd.run(args, stop).map(|_| ()),
            Cleanup::Files(l) => l.remove(stop).map(|_| ()),
        }
    }

    /// What a cleanup stopped or failed left, in words when the front end can say it, and
    /// the command that removes it.
    fn left(&self, cmd: &dyn Command) -> (Option<String>, String) {
        match self {
            Cleanup::Command(args) => (cmd.data_set(args), cmd.typed(args)),
            Cleanup::Files(l) => (Some(laid::shown(&l.present())), l.remove_command()),
        }
    }
}

/// A step of the sweep that failed.
struct Failure {
    /// `point 2`, `the prepare before point 3`, `the cleanup after point 4`.
    at: String,
    /// Its point's values.
    values: String,
    /// The error, in one line.
    error: String,
}

impl Failure {
    fn new(at: String, values: String, e: &anyhow::Error) -> Failure {
        let text = format!("{e:#}");
        let error = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Failure { at, values, error }
    }

    /// The one line that says it: `point 2 (rw=trim): fio: ...`.
    fn line(&self) -> String {
        format!("{} ({}): {}", self.at, self.values, self.error)
    }
}

/// What stopped a sweep.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Cause {
    /// SIGINT or SIGTERM (its number).
    Signal(i32),
    /// A step that failed: `at` names it (`point 2`), `line` says it with the error.
    Error { at: String, line: String },
}

/// A sweep stopped by a signal or an error.
struct Stopped {
    cause: Cause,
    /// Runs done and kept, of those planned.
    kept: usize,
    planned: usize,
    steps: DataSteps,
    /// The plan's `prepare`.
    prepare: bool,
}

impl Stopped {
    /// Run `cleanup` (the data set's cleanup the sweep had still to run, if any) so that a
    /// signal stops it and leaves the data set (after a first signal, with the signals
    /// armed again); the line that says how the sweep ended. `failed`: the data set's
    /// cleanup that failed already, with its error.
    fn clean_up(
        &self,
        cmd: &dyn Command,
        cleanup: Option<Cleanup>,
        failed: Option<(Cleanup, String)>,
        stop: &StopFlag,
    ) -> String {
        let by = match &self.cause {
            Cause::Signal(s) => plumb_core::result::signal_name(*s).to_string(),
            Cause::Error { at, .. } => format!("an error in {at}"),
        };
        let head = format!(
            "sweep: stopped by {by}: {} of {} run(s) done and kept",
            self.kept, self.planned
        );
        let left = |c: &Cleanup, why: String| {
            let (what, remove) = c.left(cmd);
            let what = what.map_or(String::new(), |w| format!(" ({w})"));
            format!("{head}; {why}: the data set is left in place, whole or in part{what}; to remove it: {remove}")
        };
        if let Some((c, e)) = failed {
            return left(&c, format!("the cleanup failed ({e})"));
        }
        let Some(c) = cleanup else {
            let why = match self.steps {
                DataSteps::Separate {
                    cleanup: false,
                    added: true,
                    ..
                }
                | DataSteps::ByTheRun { cleanup: false } => {
                    "; the data set stays (keep_data = true)"
                }
                DataSteps::Separate { cleanup: false, .. } => {
                    "; the data set stays (the command names no cleanup)"
                }
                DataSteps::None if !self.prepare => {
                    "; the data set stays (prepare = false: the sweep does not touch it)"
                }
                _ => "",
            };
            return format!("{head}{why}");
        };
        if let Cleanup::Files(l) = &c {
            if l.present().is_empty() {
                return format!("{head}; no file to remove (the runs left none they laid out)");
            }
        }
        let shown = c.shown(cmd);
        match &self.cause {
            Cause::Signal(s) => {
                let sig = plumb_core::result::signal_name(*s);
                eprintln!(
                    "sweep: {sig}: cleaning up the data set: {shown} (Ctrl-C again leaves it in place)"
                );
                crate::signals::rearm();
            }
            // No signal yet: the first one stops the cleanup, as a second one does above.
            Cause::Error { at, .. } => eprintln!(
                "sweep: {at} failed: cleaning up the data set: {shown} (Ctrl-C leaves it in place)"
            ),
        }
        match c.run(cmd, stop) {
            Ok(()) => format!("{head}; the data set was cleaned up"),
            Err(_) if stop.load(Relaxed) != 0 => left(
                &c,
                format!(
                    "the cleanup was stopped by {}",
                    plumb_core::result::signal_name(stop.load(Relaxed) as i32)
                ),
            ),
            Err(e) => left(&c, format!("the cleanup failed ({e:#})")),
        }
    }
}

/// The points in the order they run: data-set variables outermost (so each data set's
/// points run back to back), then the others, each in the plan's order, the last fastest.
fn expand(
    matrix: &[(String, Vec<String>, usize)],
    swept: &[Swept],
    extra: &[String],
) -> Vec<Point> {
    let mut order: Vec<usize> = (0..matrix.len()).filter(|&k| swept[k].data_set).collect();
    order.extend((0..matrix.len()).filter(|&k| !swept[k].data_set));
    let mut combos: Vec<Vec<usize>> = vec![vec![0; matrix.len()]];
    for &k in &order {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                (0..matrix[k].1.len()).map(move |v| {
                    let mut c = c.clone();
                    c[k] = v;
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|c| {
            let values: Vec<String> = c
                .iter()
                .enumerate()
                .map(|(k, &v)| matrix[k].1[v].clone())
                .collect();
            Point {
                options: swept
                    .iter()
                    .zip(&values)
                    .map(|(s, v)| format!("{}{v}", s.prefix))
                    .chain(extra.iter().cloned())
                    .collect(),
                data_set: swept
                    .iter()
                    .zip(&values)
                    .filter(|(s, _)| s.data_set)
                    .map(|(_, v)| v.clone())
                    .collect(),
                values,
                files: Vec::new(),
            }
        })
        .collect()
}

fn print_plan(
    p: &plan::Plan,
    points: &[Point],
    steps: DataSteps,
    label: &dyn Fn(&Point) -> String,
    cmd: &dyn Command,
    replaced: &[String],
) {
    let mut out = String::new();
    let sets = points
        .windows(2)
        .filter(|w| w[0].data_set != w[1].data_set)
        .count()
        + 1;
    out.push_str(&format!(
        "sweep: {} points x {} run(s) each, {} data set(s)\n",
        points.len(),
        p.repeat,
        sets
    ));
    match steps {
        DataSteps::Separate {
            added: true,
            cleanup: true,
            ..
        } => out.push_str(
            "sweep: the command has no prepare or cleanup: the sweep prepares each data set before its first point and cleans it up after its last (prepare = false turns this off)\n",
        ),
        DataSteps::Separate { added: true, .. } => out.push_str(
            "sweep: the command has no prepare or cleanup: the sweep prepares each data set before its first point; keep_data = true: it stays after its last (no cleanup)\n",
        ),
        DataSteps::ByTheRun { cleanup: true } => out.push_str(
            "sweep: fio lays out a job's missing files when it runs: the first point of each data set lays them out, the next ones use them; after its last point the sweep removes the files its runs laid out, never one that was there before (keep_data = true keeps them)\n",
        ),
        DataSteps::ByTheRun { cleanup: false } => out.push_str(
            "sweep: fio lays out a job's missing files when it runs: the first point of each data set lays them out, the next ones use them; keep_data = true: they stay after the sweep\n",
        ),
        _ => {}
    }
    if let Some(w) = p.warmup {
        out.push_str(&format!(
            "sweep: each point warms up for {}, excluded from its figures\n",
            clock(w)
        ));
    }
    let mut set_start = 0;
    for (i, pt) in points.iter().enumerate() {
        let first = i == 0 || points[i - 1].data_set != pt.data_set;
        let last = i + 1 == points.len() || points[i + 1].data_set != pt.data_set;
        if first {
            set_start = i;
        }
        if let (true, DataSteps::Separate { prepare: true, .. }) = (first, steps) {
            out.push_str(&format!(
                "  prepare   {}\n",
                cmd.typed(&cmd.args(&pt.options, replaced, Phase::Prepare))
            ));
        }
        out.push_str(&format!("  point {:<3} {}\n", i + 1, label(pt)));
        if let (true, DataSteps::Separate { cleanup: true, .. }) = (last, steps) {
            out.push_str(&format!(
                "  cleanup   {}\n",
                cmd.typed(&cmd.args(&pt.options, replaced, Phase::Cleanup))
            ));
        }
        if let (true, DataSteps::ByTheRun { cleanup: true }) = (last, steps) {
            // As things stand now: a file there already is kept.
            let l = Laid::before(&set_files(&points[set_start..=i]));
            if l.is_empty() {
                // The job opens no file (fio's null engine).
                continue;
            }
            let laid: Vec<&Path> = l.files().collect();
            let mut line = if laid.is_empty() {
                "remove nothing".to_string()
            } else {
                format!("remove {} (laid out by its runs)", laid::shown(&laid))
            };
            let kept = l.kept();
            if !kept.is_empty() {
                line.push_str(&format!("; keep {} (there already)", laid::shown(&kept)));
            }
            out.push_str(&format!("  cleanup   {line}\n"));
        }
    }
    print!("{out}");
    let _ = std::io::stdout().flush();
}

/// The progress line on a terminal (stderr); hidden elsewhere, where one plain line per
/// run says the same.
fn progress(total: u64) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr_with_hz(4)
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) = ProgressStyle::with_template(
        "run {pos}/{len} {msg} [{elapsed_precise} elapsed, about {eta} left]",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_secs(1));
    bar
}

/// A whole line on stdout (`out`) or stderr, with the progress line lifted while it is
/// written.
fn say(bar: &ProgressBar, out: bool, line: String) {
    bar.suspend(|| {
        if out {
            println!("{line}");
            let _ = std::io::stdout().flush();
        } else {
            eprintln!("{line}");
        }
    });
}

/// Wait `d`, or until a signal: true when a signal came.
fn pause(d: Duration, stop: &StopFlag) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if stop.load(Relaxed) != 0 {
            return true;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
    stop.load(Relaxed) != 0
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// "about H:MM:SS left", from the mean time of the runs done so far.
fn remaining(elapsed: Duration, done: u64, total: u64) -> String {
    if done == 0 {
        return String::new();
    }
    let left = elapsed.mul_f64((total - done) as f64 / done as f64);
    format!(", about {} left", clock(left))
}

fn point_line(
    d: &Done,
    pt: &Point,
    label: &dyn Fn(&Point) -> String,
    unit: &str,
    n: usize,
) -> String {
    let m = Merged::of(std::iter::once(&d.record));
    let ids = m.ids();
    let p95 = m
        .hist
        .percentile(95.0)
        .map_or("-".into(), |v| latency(v as f64));
    let run = d.run_id.map_or(String::new(), |id| format!("  run {id}"));
    let rep = if d.repeat > 1 {
        format!(" #{}", d.repeat)
    } else {
        String::new()
    };
    format!(
        "point {}/{n}{rep}: {}  {:.2} {unit}  p95 {p95}  findings: {}{run}",
        d.point + 1,
        label(pt),
        m.rate(),
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(",")
        }
    )
}

/// The table of every point done (its runs merged: events over measured time, histograms
/// added), then each swept variable's knee.
fn summary(points: &[Point], keys: &[&str], done: &[Done], unit: &str) -> String {
    let mut head: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    head.extend(["runs", unit, "p95", "p99", "findings"].map(str::to_string));
    let mut rows = vec![head];
    let mut tput: Vec<Option<f64>> = vec![None; points.len()];
    for (i, pt) in points.iter().enumerate() {
        let runs: Vec<&Done> = done.iter().filter(|d| d.point == i).collect();
        if runs.is_empty() {
            continue;
        }
        let m = Merged::of(runs.iter().map(|d| &d.record));
        let r = m.rate();
        tput[i] = Some(r);
        let pct = |p| {
            m.hist
                .percentile(p)
                .map_or("-".into(), |v| latency(v as f64))
        };
        let mut row = pt.values.clone();
        row.extend([
            runs.len().to_string(),
            format!("{r:.2}"),
            pct(95.0),
            pct(99.0),
            if m.findings.is_empty() {
                "-".into()
            } else {
                m.ids().join(",")
            },
        ]);
        rows.push(row);
    }
    let k = keys.len();
    let mut s = String::from("\nSweep results:\n");
    s.push_str(&table(&rows, &[k, k + 1, k + 2, k + 3], "  "));
    s.push_str(&format!(
        "\nKnee (per swept variable, along points that agree on the others: {}):\n",
        table::knee_rule(unit)
    ));
    let values: Vec<Vec<String>> = points.iter().map(|p| p.values.clone()).collect();
    let lines = table::lines(keys.len(), &values, &tput);
    for (k, key) in keys.iter().enumerate() {
        if let Some(why) = table::no_line(k, key, &values, &lines) {
            s.push_str(&format!("  {key}: no knee: {why}\n"));
        }
        for line in lines.iter().filter(|l| l.key == k) {
            s.push_str(&knee_line(key, line, keys, points));
        }
    }
    s
}

/// A line's knee, or that it has none.
fn knee_line(key: &str, line: &table::Line, keys: &[&str], points: &[Point]) -> String {
    let at: Vec<String> = line
        .others
        .iter()
        .map(|(j, x)| format!("{}={x}", keys[*j]))
        .collect();
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" ({})", at.join(" "))
    };
    match line.knee {
        Some(i) => format!("  {key}: knee at {}{at}\n", points[i].values[line.key]),
        None => {
            format!("  {key}: no knee: still growing by more than 10% at its last step{at}\n")
        }
    }
}

fn write_json(
    path: &Path,
    sweep_id: Option<i64>,
    plan: &str,
    points: &[Point],
    keys: &[&str],
    done: &[Done],
    stopped: Option<&Cause>,
) -> anyhow::Result<()> {
    let (interrupted, error) = match stopped {
        Some(Cause::Signal(_)) => (true, None),
        Some(Cause::Error { line, .. }) => (false, Some(line)),
        None => (false, None),
    };
    let pts: Vec<serde_json::Value> = done
        .iter()
        .map(|d| {
            let values: serde_json::Map<String, serde_json::Value> = keys
                .iter()
                .zip(&points[d.point].values)
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "point": d.point + 1,
                "repeat": d.repeat,
                "values": values,
                "run_id": d.run_id,
                "record": d.record,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "schema": "plumb.sweep/1",
        "sweep_id": sweep_id,
        "plan": plan,
        "points_planned": points.len(),
        "interrupted": interrupted,
        "error": error,
        "runs": pts,
    });
    std::fs::write(path, format!("{}\n", serde_json::to_string_pretty(&doc)?))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// A front end whose every run fails: after storing `signal` in the stop flag (a
    /// signal that came during it), or with an error of its own.
    struct Failing {
        signal: usize,
        runs: Cell<u32>,
    }

    impl Command for Failing {
        fn option(&self, _: &str) -> Result<Swept, String> {
            Err("none".into())
        }
        fn warmup(&self, _: f64) -> String {
            String::new()
        }
        fn warmup_name(&self) -> &'static str {
            "warmup"
        }
        fn data_steps(&self, _: bool, _: bool) -> Result<DataSteps, String> {
            Ok(DataSteps::None)
        }
        fn args(&self, _: &[String], _: &[String], _: Phase) -> Vec<String> {
            Vec::new()
        }
        fn check(&self, _: &[String]) -> Result<Vec<PathBuf>, String> {
            Ok(Vec::new())
        }
        fn run(&self, _: &[String], stop: &StopFlag) -> anyhow::Result<plumb_pipeline::Finished> {
            self.runs.set(self.runs.get() + 1);
            if self.signal != 0 {
                stop.store(self.signal, Relaxed);
                anyhow::bail!("interrupted");
            }
            anyhow::bail!("the disk went away")
        }
        fn unit(&self) -> &'static str {
            "events/s"
        }
        fn typed(&self, args: &[String]) -> String {
            format!("plumb {}", args.join(" "))
        }
        fn data_set(&self, _: &[String]) -> Option<String> {
            Some("2 file(s) test_file.0..1".into())
        }
    }

    fn stopped(cause: Cause, steps: DataSteps) -> Stopped {
        Stopped {
            cause,
            kept: 1,
            planned: 3,
            steps,
            prepare: true,
        }
    }

    const SEPARATE: DataSteps = DataSteps::Separate {
        prepare: true,
        cleanup: true,
        added: true,
    };

    fn cleanup() -> Cleanup {
        Cleanup::Command(vec!["fileio".into(), "cleanup".into()])
    }

    #[test]
    fn a_signal_stops_the_cleanup_after_an_error_and_the_line_says_what_is_left() {
        let cmd = Failing {
            signal: libc::SIGINT as usize,
            runs: Cell::new(0),
        };
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        let s = stopped(
            Cause::Error {
                at: "point 2".into(),
                line: String::new(),
            },
            SEPARATE,
        );
        assert_eq!(
            s.clean_up(&cmd, Some(cleanup()), None, &stop),
            "sweep: stopped by an error in point 2: 1 of 3 run(s) done and kept; the cleanup was stopped by SIGINT: the data set is left in place, whole or in part (2 file(s) test_file.0..1); to remove it: plumb fileio cleanup"
        );
        assert_eq!(cmd.runs.get(), 1);
    }

    #[test]
    fn a_cleanup_that_failed_already_is_not_run_again() {
        let cmd = Failing {
            signal: 0,
            runs: Cell::new(0),
        };
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        let s = stopped(
            Cause::Error {
                at: "the cleanup after point 3".into(),
                line: String::new(),
            },
            SEPARATE,
        );
        assert_eq!(
            s.clean_up(&cmd, None, Some((cleanup(), "the disk went away".into())), &stop),
            "sweep: stopped by an error in the cleanup after point 3: 1 of 3 run(s) done and kept; the cleanup failed (the disk went away): the data set is left in place, whole or in part (2 file(s) test_file.0..1); to remove it: plumb fileio cleanup"
        );
        assert_eq!(cmd.runs.get(), 0);
        // One that fails now says so the same way.
        let s = stopped(Cause::Signal(libc::SIGTERM), SEPARATE);
        assert!(s
            .clean_up(&cmd, Some(cleanup()), None, &stop)
            .ends_with("; the cleanup failed (the disk went away): the data set is left in place, whole or in part (2 file(s) test_file.0..1); to remove it: plumb fileio cleanup"));
    }

    #[test]
    fn files_a_second_signal_leaves_are_named_with_the_command_that_removes_them() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("r.0.0");
        let laid = Laid::before(std::slice::from_ref(&f));
        std::fs::write(&f, b"x").unwrap();
        let cmd = Failing {
            signal: 0,
            runs: Cell::new(0),
        };
        // The second signal, come before the first file is removed.
        let stop: StopFlag = Arc::new(AtomicUsize::new(libc::SIGINT as usize));
        let s = stopped(
            Cause::Signal(libc::SIGINT),
            DataSteps::ByTheRun { cleanup: true },
        );
        let dir = d.path().display();
        assert_eq!(
            s.clean_up(&cmd, Some(Cleanup::Files(laid)), None, &stop),
            format!("sweep: stopped by SIGINT: 1 of 3 run(s) done and kept; the cleanup was stopped by SIGINT: the data set is left in place, whole or in part (r.0.0 in {dir}); to remove it: rm -f -- {dir}/r.0.0")
        );
        assert!(f.exists());
    }

    #[test]
    fn what_stays_when_nothing_is_cleaned_up() {
        let cmd = Failing {
            signal: 0,
            runs: Cell::new(0),
        };
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        let line = |steps, prepare| {
            let mut s = stopped(Cause::Signal(libc::SIGINT), steps);
            s.prepare = prepare;
            s.clean_up(&cmd, None, None, &stop)
        };
        let head = "sweep: stopped by SIGINT: 1 of 3 run(s) done and kept";
        assert_eq!(
            line(DataSteps::ByTheRun { cleanup: false }, true),
            format!("{head}; the data set stays (keep_data = true)")
        );
        assert_eq!(
            line(
                DataSteps::Separate {
                    prepare: true,
                    cleanup: false,
                    added: true
                },
                true
            ),
            format!("{head}; the data set stays (keep_data = true)")
        );
        assert_eq!(
            line(
                DataSteps::Separate {
                    prepare: true,
                    cleanup: false,
                    added: false
                },
                true
            ),
            format!("{head}; the data set stays (the command names no cleanup)")
        );
        assert_eq!(
            line(DataSteps::None, false),
            format!("{head}; the data set stays (prepare = false: the sweep does not touch it)")
        );
        assert_eq!(line(DataSteps::None, true), head);
        assert_eq!(cmd.runs.get(), 0);
    }
}
