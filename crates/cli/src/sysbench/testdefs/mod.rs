//! The sysbench tests plumb runs. Each module declares its options and turns checked values
//! into a [`TestPlan`]; adding a test is one module plus a line in [`TESTS`].

mod cpu;
pub(crate) mod fileio;
mod memory;
mod mutex;
mod threads;

use plumb_core::RunConfig;
use plumb_pipeline::{Job, Step};

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
    /// The pipeline step a command runs (help runs none).
    pub fn step(self) -> Option<Step> {
        match self {
            Command::Prepare => Some(Step::Prepare),
            Command::Run => Some(Step::Run),
            Command::Cleanup => Some(Step::Cleanup),
            Command::Help => None,
        }
    }
}

/// Which random options a test honours. An option a test cannot honour is refused, never
/// accepted and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandUse {
    /// No random choices: --rand-seed and --rand-type are refused.
    None,
    /// Random choices from the test's own distribution: --rand-seed only.
    Seed,
    /// Random choices that follow --rand-type (uniform unless given).
    SeedAndType,
}

/// Checks a test's options and builds its plan.
pub type PlanFn = fn(&Values, &Common) -> Result<Box<dyn TestPlan>, UsageError>;

/// A test's declaration.
pub struct TestDef {
    pub name: &'static str,
    pub description: &'static str,
    pub rand: RandUse,
    pub options: &'static [Opt],
    /// Whether the test prepares and cleans up files (every test runs and has help).
    pub has_files: bool,
    /// Check the options (all of them, before any command runs) and build the plan.
    pub plan: PlanFn,
}

/// A checked test, ready for its commands: a pipeline [`Job`] plus what only the sysbench
/// front end decides.
pub trait TestPlan: Job {
    /// Adjust how the harness drives the test, when the test has its own rules (memory
    /// runs its own event quota, as sysbench does, and does not use --events).
    fn tune(&self, _run: &mut RunConfig) {}
}

pub static TESTS: &[&TestDef] = &[
    &cpu::DEF,
    &fileio::DEF,
    &memory::DEF,
    &threads::DEF,
    &mutex::DEF,
];

impl TestDef {
    /// Whether the test has this command.
    pub fn implements(&self, c: Command) -> bool {
        self.has_files || matches!(c, Command::Run | Command::Help)
    }

    /// Refuse random options this test cannot honour.
    pub fn check_rand(&self, v: &Values) -> Result<(), UsageError> {
        let refuse = |opt: &str, why: &str| {
            Err(UsageError(format!(
                "--{opt} has no effect on the '{}' test: {why}",
                self.name
            )))
        };
        match self.rand {
            RandUse::None if v.given("rand-seed") || v.given("rand-type") => {
                let opt = if v.given("rand-seed") {
                    "rand-seed"
                } else {
                    "rand-type"
                };
                refuse(opt, "it makes no random choices")
            }
            RandUse::Seed if v.given("rand-type") => refuse(
                "rand-type",
                "its random choices are uniform, as in sysbench",
            ),
            _ => Ok(()),
        }
    }
}

pub fn find(name: &str) -> Option<&'static TestDef> {
    TESTS.iter().copied().find(|t| t.name == name)
}
