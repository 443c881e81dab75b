//! plumb-pipeline: the one run pipeline every front end shares.
//!
//! A front end (sysbench's command line, fio's, mysqlslap's, a sweep) translates what the
//! user typed into a [`Plan`]: groups of jobs run one group after another, each group's jobs
//! together, each group going through its steps (prepare, run, cleanup) in order. [`execute`]
//! prepares, starts the observers, runs the harness, stops the observers, builds the
//! [`Record`], evaluates the findings from it and hands it to the front end's [`Layout`].
//! The record alone is enough to render the same report again and to evaluate the findings
//! again ([`facts::from_job`]), which is what `plumb report FILE.json` does.

mod checkpoints;
mod execute;
pub mod facts;
pub mod jobs;
pub mod layout;
pub mod live;
pub mod plan;
pub mod record;
mod setup;
mod status;

pub use execute::{execute, Finished, Output, PipelineError};
pub use layout::{replay_with, Layout};
pub use plan::{Group, Job, JobError, JobSpec, Plan, PlanOptions, Step, StepContext, Targets};
pub use record::{Checkpoint, GroupRecord, JobRecord, Record, Settings, SCHEMA};
pub use setup::SetupServer;
