//! What a sweep needs from a front end. Each front end registers once, in [`FRONT_ENDS`],
//! with a module beside its own option tables (`sysbench/sweep.rs`, `fio/sweep.rs`) that
//! knows its option names and which options change what prepare lays out.

use std::path::PathBuf;

use plumb_core::StopFlag;
use plumb_pipeline::{Finished, Layout, PipelineError, Plan};

/// A front end a sweep can drive.
pub trait FrontEnd: Sync {
    /// The name a plan file gives it (`front_end = "sysbench"`).
    fn name(&self) -> &'static str;
    /// Whether a command's first word belongs to this front end (a sysbench test, `fio`).
    fn claims(&self, first_word: &str) -> bool;
    /// Check the plan's command (its words, the front end's own name already taken off).
    fn command(&self, words: &[String]) -> Result<Box<dyn Command>, String>;
}

/// One matrix key, as the front end knows it.
pub struct Swept {
    /// The option's own name (aliases resolved), to find the command's own value of it.
    pub name: String,
    /// How it is written on the command line with a value: `--table-size=`.
    pub prefix: String,
    /// Its values change what prepare lays out (tables, files).
    pub data_set: bool,
}

/// Where prepare and cleanup go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataSteps {
    /// The sweep runs prepare before the first point of each data set and cleanup after its
    /// last one (`added`: the command did not ask for them, the test needs them).
    Separate {
        prepare: bool,
        cleanup: bool,
        added: bool,
    },
    /// The run lays out what it needs itself (fio: missing files, at the first point of
    /// each data set; the next points find them in place). `cleanup`: the sweep removes
    /// the files its runs laid out after the data set's last point.
    ByTheRun { cleanup: bool },
    /// Nothing to lay out.
    None,
}

/// The steps a sweep runs through the front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Prepare,
    Run,
    Cleanup,
}

/// The plan's command, checked.
pub trait Command {
    /// The option a matrix key names (with or without `--`).
    fn option(&self, key: &str) -> Result<Swept, String>;
    /// The option setting a warm-up of `secs` seconds, excluded from the figures.
    fn warmup(&self, secs: f64) -> String;
    /// The option's name a warm-up sets, to refuse it in the command too.
    fn warmup_name(&self) -> &'static str;
    /// Where prepare and cleanup go; `prepare` and `keep_data`: the plan's keys.
    fn data_steps(&self, prepare: bool, keep_data: bool) -> Result<DataSteps, String>;
    /// The argument vector of `phase` with `options` (each `--name=value`) in place of the
    /// command's own values of `replaced`.
    fn args(&self, options: &[String], replaced: &[String], phase: Phase) -> Vec<String>;
    /// Check an argument vector with the front end's own parser, as [`Command::run`] would.
    /// `Ok` holds the files a run of it opens and lays out itself when they are missing
    /// ([`DataSteps::ByTheRun`]), as the front end's translation names them; empty for a
    /// front end whose prepare lays out the data set.
    fn check(&self, args: &[String]) -> Result<Vec<PathBuf>, String>;
    /// Run an argument vector through the pipeline: the report goes nowhere (the sweep
    /// prints its own lines), notes and warnings to stderr.
    fn run(&self, args: &[String], stop: &StopFlag) -> anyhow::Result<Finished>;
    /// What a run's throughput counts (`tps`, `IOPS`, `events/s`).
    fn unit(&self) -> &'static str;
    /// How the user would type `args` (`plumb oltp_read_write ... cleanup`).
    fn typed(&self, args: &[String]) -> String;
    /// What the prepare of `args` lays out, in words (`2 file(s) ... in /d`, `tables
    /// sbtest1..sbtest8 in the mysql database`), to say what a stopped cleanup left.
    fn data_set(&self, _args: &[String]) -> Option<String> {
        None
    }
}

pub static FRONT_ENDS: &[&dyn FrontEnd] =
    &[&crate::sysbench::sweep::SYSBENCH, &crate::fio::sweep::FIO];

/// The front end a plan names, or the one its command's first word belongs to.
pub fn find(named: Option<&str>, first_word: &str) -> Result<&'static dyn FrontEnd, String> {
    let names = || {
        FRONT_ENDS
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match named {
        Some(n) => FRONT_ENDS
            .iter()
            .copied()
            .find(|f| f.name() == n)
            .ok_or_else(|| format!("front_end = \"{n}\": not a front end a sweep drives ({})", names())),
        None => FRONT_ENDS
            .iter()
            .copied()
            .find(|f| f.claims(first_word))
            .ok_or_else(|| {
                format!(
                    "command: '{first_word}' is neither a sysbench test nor fio (name the front end with front_end = \"...\": {})",
                    names()
                )
            }),
    }
}

/// Replace the options of `base` (typed `--name=value`, with their names) whose name is in
/// `replaced`, then add `options`: the same for every front end whose options are typed
/// one word each.
pub fn substitute(
    base: &[(String, String)],
    options: &[String],
    replaced: &[String],
) -> Vec<String> {
    base.iter()
        .filter(|(name, _)| !replaced.contains(name))
        .map(|(_, typed)| typed.clone())
        .chain(options.iter().cloned())
        .collect()
}

/// Run a point's plan: its report goes nowhere (the sweep prints its own lines), notes and
/// warnings to stderr; a job's error ends the point.
pub fn execute(
    plan: &Plan,
    layout: &dyn Layout,
    stop: &StopFlag,
) -> Result<Finished, PipelineError> {
    let mut report = std::io::sink();
    let mut stderr = std::io::stderr();
    let mut quiet = plumb_core::progress::Quiet;
    let mut out = plumb_pipeline::Output {
        report: &mut report,
        diagnostics: &mut stderr,
        progress: &mut quiet,
        live: None,
    };
    plumb_pipeline::execute(plan, layout, stop, &mut out)
}

/// The error a job of a finished run ended with, if any.
pub fn job_error(f: &Finished) -> Option<String> {
    f.record.jobs().find_map(|j| j.error.clone())
}

/// Words as a command line shows them: secrets masked, a word with a space or a quote in it
/// quoted as a shell would need it (the plan's command is split that way).
pub fn shown(words: &[String]) -> String {
    plumb_core::redact::args(words)
        .iter()
        .map(|w| {
            if w.chars()
                .any(|c| c.is_whitespace() || c == '\'' || c == '"')
            {
                shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned())
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
