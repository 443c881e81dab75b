//! What a front end hands to the pipeline: validated groups of jobs and their steps.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use plumb_core::progress::Progress;
use plumb_core::{RunConfig, Workload};

use crate::record::{JobRecord, Settings};
use crate::setup::SetupServer;

/// One step a group goes through. sysbench's `prepare run cleanup` is one group with these
/// three steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Prepare,
    /// Read the prepared data once, so the run starts warm (sysbench's OLTP `prewarm`).
    Prewarm,
    Run,
    Cleanup,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Prepare => "prepare",
            Step::Prewarm => "prewarm",
            Step::Run => "run",
            Step::Cleanup => "cleanup",
        }
    }
}

/// A failure inside a job, classified for the exit status.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The settings cannot work together (a usage error; nothing ran).
    #[error("{0}")]
    Usage(String),
    /// The job does not have this step (a cpu test has nothing to prepare).
    #[error("the '{job}' test does not implement the '{step}' command")]
    Unsupported { job: String, step: &'static str },
    /// Stopped by a signal (its number) outside the measured run.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
    /// The job failed before its run in a way that ends it alone (fio's layout on a full
    /// disk): the plan goes on without it, and its record carries this message. Its later
    /// steps are skipped; `after_run` still sees its record.
    #[error("{0}")]
    Skipped(String),
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl JobError {
    pub fn failed(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        JobError::Failed(e.into())
    }
}

/// What the observers watch for a job: the directory it works in (its device is sampled)
/// and the files whose page-cache residency is measured.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    pub dir: Option<PathBuf>,
    pub files: Vec<PathBuf>,
}

/// What a prepare or cleanup step writes to: its log lines (the report in a text run,
/// stderr when stdout carries JSON), warnings (stderr) and a progress display. The log lines
/// are also kept, for the record (a replay prints them where the run did).
pub struct StepContext<'a> {
    pub(crate) log_to_report: bool,
    pub(crate) log: Tee<'a>,
    /// stderr in a text run (warnings); unused stdout when the log goes to stderr.
    pub(crate) other: &'a mut dyn Write,
    pub progress: &'a mut dyn Progress,
    /// The group's setup baseline, in a setup step before its run.
    pub(crate) setup: Option<SetupServer>,
}

impl<'a> StepContext<'a> {
    pub(crate) fn new(
        text: bool,
        report: &'a mut dyn Write,
        diagnostics: &'a mut dyn Write,
        progress: &'a mut dyn Progress,
    ) -> Self {
        // With JSON on stdout, log lines go to stderr.
        let (log, other) = if text {
            (report, diagnostics)
        } else {
            (diagnostics, report)
        };
        StepContext {
            log_to_report: text,
            log: Tee {
                dest: log,
                copy: Vec::new(),
            },
            other,
            progress,
            setup: None,
        }
    }

    pub fn log(&mut self) -> &mut dyn Write {
        &mut self.log
    }

    pub fn warnings(&mut self) -> &mut dyn Write {
        if self.log_to_report {
            self.other
        } else {
            self.log.dest
        }
    }

    /// Where a job whose step connects to a local database server names that server, so
    /// the group's load baseline is taken while the step runs. None in a cleanup step, in
    /// a group that does not begin with its setup or has no run, after the run, and once a
    /// server is named.
    pub fn setup_server(&self) -> Option<SetupServer> {
        self.setup.clone().filter(SetupServer::waiting)
    }

    /// The log lines written so far.
    pub(crate) fn logged(&self) -> String {
        String::from_utf8_lossy(&self.log.copy).into_owned()
    }
}

/// A writer that keeps a copy of what passes through.
pub struct Tee<'a> {
    dest: &'a mut dyn Write,
    copy: Vec<u8>,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.dest.write(buf)?;
        self.copy.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.dest.flush()
    }
}

/// One job: a workload with everything around it. Implemented once per workload (in
/// [`crate::jobs`]), whatever the front end.
pub trait Job {
    /// The name of what it runs ("cpu", "fileio"), for messages.
    fn kind(&self) -> &'static str;
    /// Lay out what the run needs (files, tables).
    fn prepare(&self, _ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        Err(self.unsupported(Step::Prepare))
    }
    /// Remove what prepare laid out, and nothing else.
    fn cleanup(&self, _ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        Err(self.unsupported(Step::Cleanup))
    }
    /// Bring what prepare laid out into memory.
    fn prewarm(&self, _ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        Err(self.unsupported(Step::Prewarm))
    }
    /// The workload to run; may fail at run time (missing files, a server that is down).
    /// `notes` takes what the user should know before the run (an engine fallback).
    fn workload(&self, notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError>;
    /// The typed settings the record keeps, as they stand (called after `workload`, so it
    /// includes what opening found out, and again after the run).
    fn settings(&self) -> Settings;
    fn targets(&self) -> Targets {
        Targets::default()
    }
    /// What prepare lays out, in words (`4 file(s) test_file.0..3, 8MiB in all, in /d`), for
    /// a message that says it was left in place; None when it lays out nothing.
    fn data_set(&self) -> Option<String> {
        None
    }
    /// Work after the measurement that belongs to the job (seqwr completes its files) and
    /// figures derived from the result; may add to the record.
    fn after_run(&self, _job: &mut JobRecord) -> Result<(), JobError> {
        Ok(())
    }
    /// How a failure of the workload while it ran reads, in the record and in the front
    /// end's last line (a front end may word it as its peer does).
    fn run_failure(&self, error: &plumb_core::WorkloadError) -> String {
        error.to_string()
    }
    fn unsupported(&self, step: Step) -> JobError {
        JobError::Unsupported {
            job: self.kind().to_string(),
            step: step.name(),
        }
    }
}

/// One job of a plan.
pub struct JobSpec {
    pub name: String,
    pub config: RunConfig,
    /// Whether --rand-seed was given (the report says where the seed came from).
    pub seed_given: bool,
    /// What the front end's layout needs about the job beyond the model (fio's job name,
    /// group and options as the user wrote them), kept verbatim in the record.
    pub layout: Option<serde_json::Value>,
    /// The job's run starts no earlier than this long after the plan's first run step
    /// began (zero: with its group). Its results start with its run, so the wait is in no
    /// runtime. fio's `startdelay` counts from the start of the whole run the same way: a
    /// job of a later group whose delay has passed starts with its group.
    pub start_delay: Duration,
    /// Jobs of the same group (their indices in [`Group::jobs`]) whose runs must all have
    /// ended before this job's run starts (fio's `wait_for`); it stays in its group and its
    /// results start with its own run. A job that never ran (skipped before its run) counts
    /// as ended. The front end keeps the waits free of cycles.
    pub after: Vec<usize>,
    /// Times since the run's start at which a full report covers what was measured since
    /// the one before (sysbench's `--report-checkpoints`); the text report after the run
    /// then covers the time since the last one. The job's result stays the whole run's.
    pub checkpoints: Vec<Duration>,
    pub job: Box<dyn Job>,
}

/// Jobs that run together, through the same steps.
pub struct Group {
    pub steps: Vec<Step>,
    pub jobs: Vec<JobSpec>,
}

/// How results are kept and shown, whatever the front end.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    pub percentiles: Vec<f64>,
    /// Keep the latency histogram in the summaries (sysbench's --histogram).
    pub histogram: bool,
    /// Text report on stdout (false: the JSON document only).
    pub text: bool,
    pub json_file: Option<PathBuf>,
    /// Refuse a result that a finding marks invalid.
    pub strict: bool,
    /// Observer sampling interval; none: start and end facts only.
    pub observe_interval: Option<Duration>,
    /// A full report of everything measured so far this often while the plan runs
    /// ([`crate::Layout::status`]; fio's `--status-interval`).
    pub status_interval: Option<Duration>,
    /// Print plumb's notes on stderr (a drop-in name keeps the peer's stderr instead).
    pub notes: bool,
    /// A job that fails while it runs is reported with its error and the other jobs go on
    /// (fio); otherwise the first failure ends the plan (sysbench).
    pub keep_going: bool,
    /// The local database server process that a group's setup steps (prepare, prewarm)
    /// work in, when the front end knows it (the peer of a connection to this host). The
    /// group's load baseline is then taken while those steps run instead of after them,
    /// leaving out the server's CPU time and runnable threads (it works for plumb) as
    /// plumb's own are. None: a job may still name it from its step's first connection
    /// ([`StepContext::setup_server`]); else the baseline waits before the run, as for any
    /// other plan.
    pub setup_server: Option<u32>,
}

/// Everything a run does, validated before anything starts.
pub struct Plan {
    /// Which front end built it; names the layout a saved record is rendered with.
    pub front_end: &'static str,
    /// The command line, credentials already redacted.
    pub command_line: Vec<String>,
    /// The front end's rendering choices, kept in the record for replays.
    pub layout: Option<serde_json::Value>,
    pub groups: Vec<Group>,
    pub options: PlanOptions,
}
