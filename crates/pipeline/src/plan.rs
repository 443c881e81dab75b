//! What a front end hands to the pipeline: validated groups of jobs and their steps.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use plumb_core::progress::Progress;
use plumb_core::{RunConfig, Workload};

use crate::record::{JobRecord, Settings};

/// One step a group goes through. sysbench's `prepare run cleanup` is one group with these
/// three steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Prepare,
    Run,
    Cleanup,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Prepare => "prepare",
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
/// stderr when stdout carries JSON), warnings (stderr) and a progress display.
pub struct StepContext<'a> {
    pub(crate) log_to_report: bool,
    pub(crate) report: &'a mut dyn Write,
    pub(crate) diagnostics: &'a mut dyn Write,
    pub progress: &'a mut dyn Progress,
}

impl StepContext<'_> {
    pub fn log(&mut self) -> &mut dyn Write {
        if self.log_to_report {
            self.report
        } else {
            self.diagnostics
        }
    }

    pub fn warnings(&mut self) -> &mut dyn Write {
        self.diagnostics
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
    /// The workload to run; may fail at run time (missing files, a server that is down).
    /// `notes` takes what the user should know before the run (an engine fallback).
    fn workload(&self, notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError>;
    /// The typed settings the record keeps, as they stand (called after `workload`, so it
    /// includes what opening found out, and again after the run).
    fn settings(&self) -> Settings;
    fn targets(&self) -> Targets {
        Targets::default()
    }
    /// Work after the measurement that belongs to the job (seqwr completes its files) and
    /// figures derived from the result; may add to the record.
    fn after_run(&self, _job: &mut JobRecord) -> Result<(), JobError> {
        Ok(())
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
    /// Print plumb's notes on stderr (a drop-in name keeps the peer's stderr instead).
    pub notes: bool,
}

/// Everything a run does, validated before anything starts.
pub struct Plan {
    /// Which front end built it; names the layout a saved record is rendered with.
    pub front_end: &'static str,
    /// The command line, credentials already redacted.
    pub command_line: Vec<String>,
    pub groups: Vec<Group>,
    pub options: PlanOptions,
}
