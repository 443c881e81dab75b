//! The sysbench 1.0 text layout: same section names, order and number formats, so a reader
//! of a sysbench tutorial finds every figure where they expect it. plumb's own sections follow
//! the sysbench ones; [`sysbench_report`] has sysbench's alone.

use std::fmt::Write;

use plumb_advise::{Knob, Spelling};
use plumb_core::result::{IntervalResult, RunResult, Status};
use plumb_core::stats::LatencySummary;
use plumb_pipeline::{Checkpoint, GroupRecord, JobRecord, Layout, Record, Settings};

mod blocks;
mod cpu;
mod fileio;
mod memory;
pub(crate) mod oltp;
mod talk;

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// "95th percentile", "99.9th percentile".
pub fn percentile_label(p: f64) -> String {
    format!("{}th percentile", fmt_pct(p))
}

/// A percentile without trailing zeros: 95, 99.9.
pub fn fmt_pct(p: f64) -> String {
    let s = format!("{p:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A line whose value is right-aligned to column 53, as sysbench prints latency figures.
fn right53(out: &mut String, label: &str, value: &str) {
    let head = format!("         {label}");
    let w = 53usize.saturating_sub(head.len()).max(value.len() + 1);
    let _ = writeln!(out, "{head}{value:>w$}");
}

/// "    total time:" followed by the value at column 41.
pub(crate) fn col41(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "    {label:<37}{value}");
}

/// "    reads/s:" followed by the value at column 34.
pub(crate) fn col34(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "    {label:<30}{value}");
}

/// The "Latency (ms):" block.
pub fn latency_block(out: &mut String, title: &str, l: &LatencySummary) {
    latency_lines(out, title, l, false)
}

/// The latency block; `percentiles_off_line`: with no percentile asked for, say so where
/// the percentile would be, as sysbench does.
fn latency_lines(out: &mut String, title: &str, l: &LatencySummary, percentiles_off_line: bool) {
    let _ = writeln!(out, "{title}");
    right53(out, "min:", &format!("{:.2}", ms(l.min_ns as f64)));
    right53(out, "avg:", &format!("{:.2}", ms(l.mean_ns)));
    right53(out, "max:", &format!("{:.2}", ms(l.max_ns as f64)));
    for p in &l.percentiles {
        right53(
            out,
            &format!("{}:", percentile_label(p.percentile)),
            &format!("{:.2}", ms(p.value_ns as f64)),
        );
    }
    if percentiles_off_line && l.percentiles.is_empty() {
        let _ = writeln!(out, "         {:<32}disabled", "percentile stats:");
    }
    right53(out, "sum:", &format!("{:.2}", ms(l.sum_ns as f64)));
    let _ = writeln!(out);
}

/// The latency histogram as `--histogram` prints it: sysbench's display buckets (1024 steps
/// from 1 µs to 100 s, ~1.8% apart), so the picture has the same resolution.
pub fn histogram_block(out: &mut String, l: &LatencySummary) {
    let Some(buckets) = &l.histogram else { return };
    let _ = writeln!(out, "Latency histogram (values are in milliseconds)");
    let _ = writeln!(
        out,
        "       value  ------------- distribution ------------- count"
    );
    let lo = (0.001f64).ln();
    let step = ((100_000.0f64).ln() - lo) / 1024.0;
    let mut bins: Vec<(f64, u64)> = Vec::new();
    for &[low, high, count] in buckets {
        let mid_ms = ((low as f64 + high.min(low.saturating_mul(2)) as f64) / 2.0) / 1e6;
        let i = (((mid_ms.max(0.001)).ln() - lo) / step)
            .floor()
            .clamp(0.0, 1023.0);
        let value = (lo + i * step).exp();
        match bins.last_mut() {
            Some((v, c)) if (*v - value).abs() < 1e-12 => *c += count,
            _ => bins.push((value, count)),
        }
    }
    let max = bins.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    for (v, c) in bins {
        let stars = ((c as f64 / max as f64) * 40.0).ceil() as usize;
        let stars = if c * 40 < max { 0 } else { stars.min(40) };
        let _ = writeln!(out, "{v:>12.3} |{:<40} {c}", "*".repeat(stars));
    }
    let _ = writeln!(out, " ");
}

/// sysbench's text layout.
pub struct Sysbench {
    /// Run under the name `sysbench`: the banner and the lines are sysbench 1.0.20's own.
    pub drop_in: bool,
    /// plumb's additions: where the files are, the engine, per-operation latency, the
    /// observations and findings sections.
    pub plumb_sections: bool,
    /// The drop-in was given sysbench's general --validate for a test that checks nothing
    /// with it: its header says "Validation checks: on." as sysbench's does.
    pub validation_line: bool,
    /// sysbench's --verbosity where the report is printed (3 up): 4 adds its info lines
    /// ("Doing CPU performance benchmark", "Time limit exceeded, exiting...", "Done."),
    /// 5 its debug lines (each worker thread started and initialized, each file opened).
    pub verbosity: u64,
    /// sysbench's --debug: "Debug mode enabled." in the header and each thread's figures
    /// after the report (with verbosity 5).
    pub debug: bool,
}

impl Sysbench {
    /// The rendering choices a record keeps (see [`Sysbench::choices`]).
    pub fn choices(&self) -> serde_json::Value {
        serde_json::json!({
            "drop_in": self.drop_in,
            "plumb_sections": self.plumb_sections,
            "validation_line": self.validation_line,
            "verbosity": self.verbosity,
            "debug": self.debug,
        })
    }

    /// The variant a record was printed with; records without choices were printed by
    /// `plumb` itself.
    pub fn of_record(record: &Record) -> Sysbench {
        let flag = |k: &str, default: bool| {
            record
                .layout
                .as_ref()
                .and_then(|l| l[k].as_bool())
                .unwrap_or(default)
        };
        Sysbench {
            drop_in: flag("drop_in", false),
            plumb_sections: flag("plumb_sections", true),
            validation_line: flag("validation_line", false),
            verbosity: record
                .layout
                .as_ref()
                .and_then(|l| l["verbosity"].as_u64())
                .unwrap_or(3),
            debug: flag("debug", false),
        }
    }

    /// Under the name plumb: sysbench's sections, then plumb's.
    pub const PLUMB: Sysbench = Sysbench {
        drop_in: false,
        plumb_sections: true,
        validation_line: false,
        verbosity: 3,
        debug: false,
    };

    /// The lines sysbench's --verbosity adds to the header and preamble, and --debug's.
    fn talk(&self) -> talk::Talk {
        talk::Talk {
            info: self.verbosity >= 4,
            debug: self.verbosity >= 5,
            per_thread: self.debug,
        }
    }
}

/// The first line sysbench 1.0.20 prints, with plumb in place of LuaJIT's version.
pub fn drop_in_banner() -> String {
    format!("sysbench 1.0.20 (plumb {})", env!("CARGO_PKG_VERSION"))
}

impl Layout for Sysbench {
    fn replay(&self, record: &Record) -> String {
        plumb_pipeline::replay_with(&Sysbench::of_record(record), record)
    }

    fn banner(&self) -> String {
        if self.drop_in {
            format!("{}\n\n", drop_in_banner())
        } else {
            format!(
                "plumb {} (sysbench 1.0 compatible)\n\n",
                env!("CARGO_PKG_VERSION")
            )
        }
    }

    fn preamble(&self, job: &JobRecord) -> String {
        let talk = self.talk();
        let mut s = self.head(job);
        s.push_str(&talk.opened_files(job));
        s.push_str(&talk.helper_threads(job));
        s.push_str("Initializing worker threads...\n\n");
        s.push_str(&talk.workers(job));
        s.push_str("Threads started!\n\n");
        s
    }

    fn unopened(&self, job: &JobRecord) -> String {
        let mut s = self.head(job);
        // sysbench opens fileio's files before it starts its threads, but an OLTP script
        // prepares its statements in each thread's thread_init, after this line; the
        // legacy oltp.lua connects at its first query, once the threads have started.
        if let Settings::Oltp(o) = &job.workload {
            s.push_str(&self.talk().helper_threads(job));
            s.push_str("Initializing worker threads...\n\n");
            if o.legacy_script {
                s.push_str("Threads started!\n\n");
            }
        }
        s
    }

    fn interval(&self, job: &JobRecord, i: &IntervalResult) -> String {
        interval_line(job, i, self.drop_in)
    }

    fn spelling(&self) -> Option<Spelling> {
        Some(spell)
    }

    fn checkpoint(&self, job: &JobRecord, c: &Checkpoint) -> String {
        let w = window(job, &c.result);
        // sysbench stamps it with the time since the start, and says so as "total time".
        let mut out = format!("[ {:.0}s ] Checkpoint report:\n", c.at_s);
        out.push_str(&report_body(&w, !self.plumb_sections, c.at_s));
        out.push_str(&self.talk().per_thread_figures(&w));
        out
    }

    fn report(&self, _record: &Record, group: &GroupRecord) -> String {
        let mut out = String::new();
        for job in &group.jobs {
            // sysbench prints no report after a fatal error: its last lines are the error's.
            if self.drop_in && job.error.is_some() {
                continue;
            }
            let talk = self.talk();
            out.push_str(&talk.limit_lines(job));
            // Threads whose thread_done failed said so, and the run went on to its report.
            if let Settings::Oltp(s) = &job.workload {
                for e in &s.end_failures {
                    let _ = writeln!(out, "FATAL: {e}");
                }
            }
            // sysbench's line when its watchdog gives up on the workers, before its report.
            if self.drop_in && job.status == Status::ForcedShutdown {
                let _ = writeln!(
                    out,
                    "FATAL: The --max-time limit has expired, forcing shutdown..."
                );
            }
            out.push_str(talk.done(job));
            // After a checkpoint sysbench's sections cover the time since the last one;
            // "total time" stays the whole run's.
            let tail = job.since_checkpoint.as_deref().map(|r| window(job, r));
            let shown = tail.as_ref().unwrap_or(job);
            if !self.plumb_sections {
                out.push_str(&report_body(shown, true, job.total_time_s));
                out.push_str(&talk.per_thread_figures(shown));
                continue;
            }
            out.push_str(&report_body(shown, false, job.total_time_s));
            out.push_str(&talk.per_thread_figures(shown));
            if let Some(last) = job.checkpoints.last().filter(|_| tail.is_some()) {
                let _ = writeln!(
                    out,
                    "The figures above cover the time since the last checkpoint ({:.0}s); the sections below and the JSON result cover the whole run.\n",
                    last.at_s
                );
            }
            plumb_sections(&mut out, job);
            blocks::plumb_block(&mut out, job);
            if let Some(o) = &group.observations {
                out.push_str(&crate::observations::section(job, o));
            }
            out.push_str(&crate::findings::section(&job.findings));
        }
        out
    }
}

impl Sysbench {
    /// The general header, then the test's (with the info lines of its own).
    fn head(&self, job: &JobRecord) -> String {
        let mut s = header(job, self.validation_line, self.debug);
        s.push_str(&self.talk().test_intro(job));
        s.push_str(&blocks::header(job, self.plumb_sections));
        s
    }
}

/// A setting that advice names, as sysbench's options write it.
fn spell(k: Knob) -> String {
    match k {
        Knob::Direct => "--file-extra-flags=direct",
        Knob::DataSync => "--file-extra-flags=dsync",
        Knob::FsyncEvery => "--file-fsync-freq",
        Knob::NoPeriodicFsync => "--file-fsync-freq=0",
        Knob::NoEndFsync => "--file-fsync-end=off",
        Knob::FileCount => "--file-num",
        Knob::OneFile => "--file-num=1",
        Knob::TotalSize => "same --file-total-size",
        Knob::Threads => "--threads",
        Knob::OneThread => "--threads=1",
        Knob::Time => "--time",
        Knob::Warmup => "--warmup-time",
        Knob::LargeMemoryBlock => "--memory-block-size=1G",
        Knob::RandomFill => "--file-fill=random",
        Knob::AsyncIo => "--file-io-mode=async",
        Knob::TableSize => "--table-size",
        Knob::ReportInterval => "--report-interval",
        // sysbench has no option for it.
        Knob::HugePageBuffers => Knob::HugePageBuffers.plain(),
    }
    .to_string()
}

/// The report printed before the workers start.
fn header(job: &JobRecord, validation_line: bool, debug: bool) -> String {
    let cfg = &job.settings;
    let mut s = String::new();
    let _ = writeln!(s, "Running the test with following options:");
    let _ = writeln!(s, "Number of threads: {}", cfg.threads);
    if let Some(r) = cfg.rate_per_s {
        let _ = writeln!(s, "Target transaction rate: {}/sec", fmt_num(r));
    }
    if let Some(i) = cfg.report_interval_s {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            fmt_num(i)
        );
    }
    if !cfg.checkpoints_s.is_empty() {
        let at: Vec<String> = cfg.checkpoints_s.iter().map(|&c| fmt_num(c)).collect();
        let _ = writeln!(s, "Report checkpoint(s) at {} seconds", at.join(", "));
    }
    if debug {
        let _ = writeln!(s, "Debug mode enabled.\n");
    }
    // sysbench's general header says so for any test; only fileio validates, in sysbench
    // as in plumb.
    if validation_line || matches!(&job.workload, Settings::Fileio(f) if f.validate) {
        let _ = writeln!(s, "Validation checks: on.\n");
    }
    if job.seed_given {
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({}).\n",
            cfg.rand_seed
        );
    } else {
        let _ = writeln!(
            s,
            "Initializing random number generator from current time\n"
        );
    }
    // sysbench's forced-shutdown line stands on the header's last blank line.
    if let Some(g) = cfg.forced_shutdown_s {
        let _ = writeln!(
            s,
            "Forcing shutdown in {} seconds",
            cfg.time_limit_s.unwrap_or_default() + g
        );
    }
    let _ = writeln!(s);
    if cfg.warmup_s > 0.0 {
        let _ = writeln!(
            s,
            "Warming up for {} seconds (excluded from the results)\n",
            cfg.warmup_s
        );
    }
    s
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// One `--report-interval` line; `drop_in`: with sysbench's latency field even when
/// `--percentile=0` turned percentiles off.
pub fn interval_line(job: &JobRecord, i: &IntervalResult, drop_in: bool) -> String {
    let at = format!("[ {}s ]", fmt_num((i.at_s * 1000.0).round() / 1000.0));
    let lat = interval_latency(i, drop_in);
    let mut line = match blocks::interval_body(job, i, drop_in) {
        Some(body) => format!("{at} {body}"),
        None => format!(
            "{at} thds: {} eps: {:.2}{lat}",
            i.threads_running, i.events_per_s
        ),
    };
    if i.warmup {
        line.push_str(" (warm-up)");
    }
    // sysbench 1.0.20's second line under --rate: the SQL tests' own has a comma, the
    // common one (cpu, threads, mutex) none, and fileio's and memory's reports have no such
    // line. The queue's length and its concurrency are sampled at the line's moment.
    if let Some(b) = i.backlog_events {
        let c = i.concurrency.unwrap_or(0);
        match &job.workload {
            Settings::Fileio(_) | Settings::Memory(_) => {}
            Settings::Oltp(_) => {
                let _ = write!(line, "\n{at} queue length: {b}, concurrency: {c}");
            }
            _ => {
                let _ = write!(line, "\n{at} queue length: {b} concurrency: {c}");
            }
        }
    }
    line
}

fn interval_latency(i: &IntervalResult, drop_in: bool) -> String {
    match interval_percentiles(i, 2) {
        Some((names, vals)) => format!(" lat (ms,{names}): {vals}"),
        // sysbench prints its format whatever the percentile, and an empty histogram's
        // value.
        None if drop_in => " lat (ms,0%): 0.00".to_string(),
        None => String::new(),
    }
}

/// An interval's latency percentiles as sysbench's interval lines print them: the names
/// ("95%,99%") and the values in ms with `decimals` decimals ("1.23 4.56"); None without any.
pub(crate) fn interval_percentiles(
    i: &IntervalResult,
    decimals: usize,
) -> Option<(String, String)> {
    if i.latency_percentiles.is_empty() {
        return None;
    }
    let names: Vec<String> = i
        .latency_percentiles
        .iter()
        .map(|p| format!("{}%", fmt_pct(p.percentile)))
        .collect();
    let vals: Vec<String> = i
        .latency_percentiles
        .iter()
        .map(|p| format!("{:.decimals$}", ms(p.value_ns as f64)))
        .collect();
    Some((names.join(","), vals.join(" ")))
}

/// sysbench's sections only, line for line as sysbench 1.0.20 prints them (the drop-in name
/// prints this and nothing more unless asked).
pub fn sysbench_report(r: &JobRecord) -> String {
    report_body(r, true, r.total_time_s)
}

/// `job` with `result` (a checkpoint's window) in place of its own figures.
fn window(job: &JobRecord, result: &RunResult) -> JobRecord {
    JobRecord {
        name: job.name.clone(),
        workload: job.workload.clone(),
        settings: job.settings.clone(),
        seed_given: job.seed_given,
        error: job.error.clone(),
        layout: job.layout.clone(),
        result: result.clone(),
        checkpoints: Vec::new(),
        since_checkpoint: None,
        findings: Vec::new(),
    }
}

/// sysbench's sections; `percentiles_off_line`: say "percentile stats: disabled" when
/// --percentile=0, as sysbench does (plumb's own layout leaves the line out). `total_s` is
/// the "total time" printed: the run's so far, which after a checkpoint is more than the
/// time the figures cover (their rates are over the latter).
fn report_body(r: &JobRecord, percentiles_off_line: bool, total_s: f64) -> String {
    let mut out = String::new();
    histogram_block(&mut out, &r.latency);
    blocks::test_block(&mut out, r);
    if let Some(n) = r.unfinished_events {
        let _ = writeln!(
            out,
            "Number of unfinished transactions on forced shutdown: {n}\n"
        );
    }
    let _ = writeln!(out, "General statistics:");
    col41(&mut out, "total time:", &format!("{total_s:.4}s"));
    col41(&mut out, "total number of events:", &r.events.to_string());
    let _ = writeln!(out);
    if r.latency.count == 0 && r.latency.percentiles.is_empty() {
        // No event measured: sysbench still prints the percentiles asked for, as 0.
        let mut l = r.latency.clone();
        l.percentiles = r
            .settings
            .percentiles
            .iter()
            .map(|&percentile| plumb_core::stats::Percentile {
                percentile,
                value_ns: 0,
            })
            .collect();
        latency_lines(&mut out, "Latency (ms):", &l, percentiles_off_line);
    } else {
        latency_lines(&mut out, "Latency (ms):", &r.latency, percentiles_off_line);
    }
    let _ = writeln!(out, "Threads fairness:");
    let f = sysbench_fairness(r);
    let _ = writeln!(
        out,
        "    events (avg/stddev):           {:.4}/{:3.2}",
        f.events_avg, f.events_stddev
    );
    let _ = writeln!(
        out,
        "    execution time (avg/stddev):   {:.4}/{:3.2}",
        f.exec_time_avg_s, f.exec_time_stddev_s
    );
    let _ = writeln!(out);
    out
}

/// The fairness figures as sysbench prints them. After a forced shutdown sysbench stops
/// the timers of the events still running and counts them: each such thread has one event
/// more and its time so far (here the run's time: its events ran back to back), while the
/// average time stays the completed events' (the latency sum over the threads). The result
/// keeps the completed events' own figures.
fn sysbench_fairness(r: &RunResult) -> plumb_core::result::Fairness {
    if !r.threads.iter().any(|t| t.unfinished) {
        return r.fairness.clone();
    }
    let n = r.threads.len() as f64;
    let events: Vec<f64> = r
        .threads
        .iter()
        .map(|t| (t.events + u64::from(t.unfinished)) as f64)
        .collect();
    let times: Vec<f64> = r
        .threads
        .iter()
        .map(|t| {
            let done = t.exec_time_ns as f64 / 1e9;
            if t.unfinished {
                done.max(r.total_time_s)
            } else {
                done
            }
        })
        .collect();
    let events_avg = events.iter().sum::<f64>() / n;
    let time_avg = r
        .threads
        .iter()
        .map(|t| t.exec_time_ns as f64 / 1e9)
        .sum::<f64>()
        / n;
    let spread =
        |v: &[f64], avg: f64| (v.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n).sqrt();
    plumb_core::result::Fairness {
        events_avg,
        events_stddev: spread(&events, events_avg),
        exec_time_avg_s: time_avg,
        exec_time_stddev_s: spread(&times, time_avg),
    }
}

/// What sysbench does not print: run status, per-operation latency, open-loop figures.
fn plumb_sections(out: &mut String, r: &RunResult) {
    match r.status {
        Status::Completed => {}
        Status::Interrupted => {
            let _ = writeln!(
                out,
                "Run interrupted ({}) after {:.4}s: figures cover the time until then.\n",
                r.stop_reason.trim_start_matches("signal "),
                r.total_time_s
            );
        }
        Status::ForcedShutdown => {
            let _ = writeln!(
                out,
                "Forced shutdown: workers did not stop within the grace period; figures are as they stood.\n"
            );
        }
    }
    if r.warmup_time_s > 0.0 {
        let _ = writeln!(
            out,
            "Warm-up: {:.4}s before the measured time, excluded from the figures above.\n",
            r.warmup_time_s
        );
    }
    let kinds: Vec<_> = r.operations.iter().filter(|o| o.count > 0).collect();
    if kinds.len() > 1 || r.operations.iter().any(|o| !o.is_event && o.count > 0) {
        for o in kinds {
            latency_block(out, &format!("Latency of {}s (ms):", o.name), &o.latency);
        }
    }
    if let Some(ol) = &r.open_loop {
        let _ = writeln!(out, "Open-loop rate:");
        col34(
            out,
            "offered, events/s:",
            &format!("{:.2}", ol.offered_per_s),
        );
        col34(
            out,
            "achieved, events/s:",
            &format!("{:.2}", ol.achieved_per_s),
        );
        col34(
            out,
            "behind schedule at end:",
            &format!("{} events", ol.backlog_events),
        );
        col34(
            out,
            "saturated:",
            if ol.saturated {
                "yes: the rate was not delivered; latency includes the wait"
            } else {
                "no"
            },
        );
        let _ = writeln!(out);
        latency_block(out, "Service time, actual start to end (ms):", &ol.service);
        latency_block(out, "Lag, intended to actual start (ms):", &ol.lag);
    }
}
