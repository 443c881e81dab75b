//! The sysbench tests plumb runs. Each module declares its options and turns checked values
//! into a [`TestPlan`]; adding a test is one module plus a line in [`TESTS`].

mod cpu;
pub mod db_drivers;
pub(crate) mod fileio;
mod memory;
mod mutex;
pub(crate) mod oltp;
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
    Prewarm,
    Run,
    Cleanup,
    Help,
}

impl Command {
    pub fn parse(s: &str) -> Option<Command> {
        Some(match s {
            "prepare" => Command::Prepare,
            "prewarm" => Command::Prewarm,
            "run" => Command::Run,
            "cleanup" => Command::Cleanup,
            "help" => Command::Help,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Prewarm => "prewarm",
            Command::Run => "run",
            Command::Cleanup => "cleanup",
            Command::Help => "help",
        }
    }
    /// The pipeline step a command runs (help runs none).
    pub fn step(self) -> Option<Step> {
        match self {
            Command::Prepare => Some(Step::Prepare),
            Command::Prewarm => Some(Step::Prewarm),
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
    /// The options whose values change what prepare lays out (files, tables): points of a
    /// sweep that agree on them share one prepare and one cleanup. Empty: the test has no
    /// prepare or cleanup (every test runs and has help).
    pub data_set: &'static [&'static str],
    /// Check the options (all of them, before any command runs) and build the plan.
    pub plan: PlanFn,
}

/// A checked test, ready for its commands: a pipeline [`Job`] plus what only the sysbench
/// front end decides.
pub trait TestPlan: Job {
    /// Adjust how the harness drives the test, when the test has its own rules (memory
    /// runs its own event quota, as sysbench does, and does not use --events).
    fn tune(&self, _run: &mut RunConfig) {}
    /// What the sysbench layout needs about the test beyond its settings (kept in the
    /// record, so a replay prints the same).
    fn layout(&self) -> Option<serde_json::Value> {
        None
    }
    /// The test's prepare and cleanup messages are its script's `print()`s, which sysbench's
    /// --verbosity does not silence (the OLTP scripts); a built-in test's are log messages,
    /// silenced below verbosity 3 with its report.
    fn prints_steps(&self) -> bool {
        false
    }
    /// A run that fails part way still reports what it measured until then (then the
    /// error, exit 1), where sysbench prints nothing: true for the SQL tests, whose servers
    /// can go away mid-run.
    fn reports_partial_run(&self) -> bool {
        false
    }
}

pub static TESTS: &[&TestDef] = &[
    &cpu::DEF,
    &fileio::DEF,
    &memory::DEF,
    &threads::DEF,
    &mutex::DEF,
    &oltp::READ_WRITE,
    &oltp::READ_ONLY,
    &oltp::WRITE_ONLY,
    &oltp::POINT_SELECT,
    &oltp::UPDATE_INDEX,
    &oltp::UPDATE_NON_INDEX,
    &oltp::DELETE,
    &oltp::INSERT,
    &oltp::BULK_INSERT,
    &oltp::RANDOM_POINTS,
    &oltp::RANDOM_RANGES,
];

impl TestDef {
    /// Whether the test has this command.
    pub fn implements(&self, c: Command) -> bool {
        !self.data_set.is_empty() || matches!(c, Command::Run | Command::Help)
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

/// sysbench's Lua scripts take their own options with '-' or '_' (`--table-size` and
/// `--table_size`), and 0.4/0.5 spelled them `--oltp-table-size`: each typed name that only
/// one of those forms matches is given that form.
pub fn script_option_names(
    test: &TestDef,
    raw: &[(String, Option<String>)],
) -> Vec<(String, Option<String>)> {
    let known = |name: &str| test.options.iter().any(|o| o.name == name);
    raw.iter()
        .map(|(n, v)| {
            let alt = n.replace('-', "_");
            // sysbench 0.4/0.5's OLTP options: --oltp-table-size is --table-size, and
            // --oltp-tables-count is --tables.
            let legacy = match alt.strip_prefix("oltp_") {
                Some("tables_count") => Some("tables".to_string()),
                Some(rest) => Some(rest.to_string()),
                None if alt == "mysql_table_engine" => Some("mysql_storage_engine".to_string()),
                None => None,
            };
            if known(n) {
                (n.clone(), v.clone())
            } else if known(&alt) {
                (alt, v.clone())
            } else if let Some(l) = legacy.filter(|l| known(l)) {
                (l, v.clone())
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect()
}

pub fn find(name: &str) -> Option<&'static TestDef> {
    TESTS.iter().copied().find(|t| t.name == name)
}
