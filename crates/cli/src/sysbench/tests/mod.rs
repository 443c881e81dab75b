//! The sysbench tests plumb runs. Each module declares its options and turns checked values
//! into a [`TestPlan`]; adding a test is one module plus a line in [`TESTS`].

mod cpu;

use std::sync::Arc;

use plumb_core::result::RunResult;
use plumb_core::Workload;

use super::common::Common;
use super::options::{Opt, Values};
use crate::exit::UsageError;

/// A sysbench command word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Prepare,
    Run,
    Cleanup,
    Help,
}

impl Command {
    pub fn parse(s: &str) -> Option<Command> {
        Some(match s {
            "prepare" => Command::Prepare,
            "run" => Command::Run,
            "cleanup" => Command::Cleanup,
            "help" => Command::Help,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Run => "run",
            Command::Cleanup => "cleanup",
            Command::Help => "help",
        }
    }
}

/// A test's declaration.
pub struct TestDef {
    pub name: &'static str,
    pub description: &'static str,
    pub options: &'static [Opt],
    /// Check the options (all of them, before any command runs) and build the plan.
    pub plan: fn(&Values, &Common) -> Result<Box<dyn TestPlan>, UsageError>,
}

/// A checked test, ready for its commands.
pub trait TestPlan {
    /// Lines printed after the common header of `run` ("Prime numbers limit: 10000").
    fn header(&self) -> String;
    /// The workload to run. May fail at run time (missing files, a server that is down).
    fn workload(&self) -> anyhow::Result<Arc<dyn Workload>>;
    /// The test's parameters, stored in the result's `workload` field.
    fn workload_json(&self) -> serde_json::Value;
    /// Add what only the test knows once the run is over (derived figures).
    fn complete(&self, _result: &mut RunResult) {}
    fn prepare(&self, _common: &Common) -> anyhow::Result<()> {
        Err(self.unsupported(Command::Prepare).into())
    }
    fn cleanup(&self, _common: &Common) -> anyhow::Result<()> {
        Err(self.unsupported(Command::Cleanup).into())
    }
    fn name(&self) -> &'static str;
    fn unsupported(&self, c: Command) -> UsageError {
        UsageError(format!(
            "the '{}' test does not implement the '{}' command",
            self.name(),
            c.name()
        ))
    }
}

pub static TESTS: &[&TestDef] = &[&cpu::DEF];

pub fn find(name: &str) -> Option<&'static TestDef> {
    TESTS.iter().copied().find(|t| t.name == name)
}
