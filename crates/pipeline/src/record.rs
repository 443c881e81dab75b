//! The record of a plan's run, versioned as `plumb.result/2` (docs/result-schema.md, JSON
//! Schema in docs/plumb.result.2.schema.json): what ran with which settings, what was
//! measured (with lossless histograms), what was observed underneath and what plumb
//! concluded. A record renders and advises again without the run.

use std::ops::{Deref, DerefMut};

use plumb_advise::Finding;
use plumb_core::result::{RunResult, RunSettings};
use plumb_fileio::settings::FileioSettings;
use plumb_micro::settings::{CpuSettings, MemorySettings, MutexSettings, ThreadsSettings};
use plumb_observe::Observations;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "plumb.result/2";

/// A job's typed settings, tagged by the workload that ran: a new workload is one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "test", content = "workload", rename_all = "lowercase")]
pub enum Settings {
    Cpu(CpuSettings),
    Memory(MemorySettings),
    Threads(ThreadsSettings),
    Mutex(MutexSettings),
    Fileio(Box<FileioSettings>),
    Oltp(Box<plumb_oltp::settings::OltpSettings>),
    #[serde(rename = "mysqlslap")]
    Slap(Box<plumb_oltp::slap::SlapSettings>),
    Dd(Box<plumb_fileio::dd::DdSettings>),
}

impl Settings {
    /// The workload's name ("cpu", "fileio").
    pub fn test(&self) -> &'static str {
        match self {
            Settings::Cpu(_) => "cpu",
            Settings::Memory(_) => "memory",
            Settings::Threads(_) => "threads",
            Settings::Mutex(_) => "mutex",
            Settings::Fileio(_) => "fileio",
            Settings::Oltp(_) => "oltp",
            Settings::Slap(_) => "mysqlslap",
            Settings::Dd(_) => "dd",
        }
    }
}

/// One job: its settings, its measured result and the findings about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub name: String,
    #[serde(flatten)]
    pub workload: Settings,
    /// How the harness drove it.
    pub settings: RunSettings,
    pub seed_given: bool,
    /// Why the job failed while it ran (plans that keep going); its figures are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The front end's own facts about the job, for its layout (see [`crate::plan::JobSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<serde_json::Value>,
    #[serde(flatten)]
    pub result: RunResult,
    /// The checkpoint reports made while it ran (sysbench's --report-checkpoints).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<Checkpoint>,
    /// After a checkpoint: the figures since the last one, which the text report after
    /// the run shows as sysbench's does (`result` is the whole run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_checkpoint: Option<Box<RunResult>>,
    pub findings: Vec<Finding>,
}

/// One checkpoint report: at `at_s` seconds since the start, the figures since the
/// checkpoint before (or the start); `total_time_s` is the window's length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub at_s: f64,
    #[serde(flatten)]
    pub result: RunResult,
}

impl Deref for JobRecord {
    type Target = RunResult;
    fn deref(&self) -> &RunResult {
        &self.result
    }
}

impl DerefMut for JobRecord {
    fn deref_mut(&mut self) -> &mut RunResult {
        &mut self.result
    }
}

/// Jobs that ran together, and what was observed while they ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupRecord {
    pub jobs: Vec<JobRecord>,
    pub observations: Option<Observations>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub schema: String,
    pub plumb_version: String,
    /// The front end that built the plan; its layout renders the record.
    pub front_end: String,
    /// Credentials redacted.
    pub command_line: Vec<String>,
    pub started_at_unix_s: u64,
    /// The same to the millisecond (absent in records before it was kept): fio's JSON
    /// stamps its report to the millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_ms: Option<u64>,
    /// How the front end rendered the run (the drop-in name, plumb's sections on or off),
    /// so a replay prints what the run printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<serde_json::Value>,
    /// What the prepare, prewarm and cleanup steps logged, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_logs: Vec<StepLog>,
    pub groups: Vec<GroupRecord>,
}

/// The lines one step logged (sysbench's "Creating file ...", "Dropping table ...").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepLog {
    /// How many run groups had finished when the step ran: a replay prints it before group
    /// `before_group` (after the last group when it equals their number).
    pub before_group: usize,
    /// prepare, prewarm, cleanup.
    pub step: String,
    pub text: String,
}

/// A saved record that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("not a plumb result: {0}")]
    Json(#[from] serde_json::Error),
    #[error("schema '{0}' is not {SCHEMA}: this plumb reads {SCHEMA} only")]
    Schema(String),
}

impl Record {
    pub fn new(front_end: &str, command_line: Vec<String>, started_at_unix_s: u64) -> Self {
        Record {
            schema: SCHEMA.to_string(),
            plumb_version: env!("CARGO_PKG_VERSION").to_string(),
            front_end: front_end.to_string(),
            command_line,
            started_at_unix_s,
            started_at_unix_ms: None,
            layout: None,
            step_logs: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Pretty-printed JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a record always serialises");
        s.push('\n');
        s
    }

    pub fn from_json(text: &str) -> Result<Record, RecordError> {
        let v: serde_json::Value = serde_json::from_str(text)?;
        match v.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA) => Ok(serde_json::from_value(v)?),
            Some(other) => Err(RecordError::Schema(other.to_string())),
            None => Err(RecordError::Schema("(none)".to_string())),
        }
    }

    pub fn jobs(&self) -> impl Iterator<Item = &JobRecord> {
        self.groups.iter().flat_map(|g| g.jobs.iter())
    }
}
