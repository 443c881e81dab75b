//! The sysbench front end's grammar described to clap, for completions and the man page
//! only: sysbench command lines are parsed by their own parser (`crate::sysbench`), whose
//! option tables this description is built from, so both always list the same tests,
//! commands and options.

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command, ValueHint};

use crate::sysbench::common;
use crate::sysbench::options::{Kind, Opt};
use crate::sysbench::testdefs::{self, TestDef, TESTS};

/// The sysbench command words every test takes.
const COMMANDS: [testdefs::Command; 5] = [
    testdefs::Command::Prepare,
    testdefs::Command::Prewarm,
    testdefs::Command::Run,
    testdefs::Command::Cleanup,
    testdefs::Command::Help,
];

/// One clap command per sysbench test (`plumb cpu [OPTIONS] prepare|run|cleanup|help...`).
pub fn sysbench_tests() -> Vec<Command> {
    TESTS.iter().map(|t| test_command(t)).collect()
}

fn test_command(t: &TestDef) -> Command {
    let words: Vec<&'static str> = COMMANDS.iter().map(|c| c.name()).collect();
    Command::new(t.name)
        .about(format!("sysbench test: {}", t.description))
        .arg(
            Arg::new("command")
                .value_name("COMMAND")
                .help("what to do, in order: plumb fileio prepare run cleanup")
                .num_args(1..)
                .required(true)
                .value_parser(PossibleValuesParser::new(words)),
        )
        .args(common::OPTIONS.iter().chain(t.options).map(option))
}

/// A sysbench option (`--name=value`; `--flag` alone means on) as a clap argument.
fn option(o: &Opt) -> Arg {
    let a = Arg::new(o.name)
        .long(o.name)
        .help(o.help)
        .require_equals(true)
        .action(ArgAction::Set);
    match o.kind {
        Kind::Bool => a
            .num_args(0..=1)
            .default_missing_value("on")
            .value_parser(PossibleValuesParser::new(["on", "off"])),
        Kind::Grace => a.num_args(0..=1).value_name("SECONDS|N%|off"),
        Kind::Choice(words) => a.value_parser(PossibleValuesParser::new(words)),
        Kind::List(words) if !words.is_empty() => a
            .value_delimiter(',')
            .value_parser(PossibleValuesParser::new(words)),
        Kind::List(_) => a.value_name("LIST"),
        Kind::Text => a.value_name("FILE").value_hint(ValueHint::FilePath),
        Kind::Int { .. } | Kind::Float { .. } => a.value_name("N"),
        Kind::Size | Kind::PowerOfTwoSize { .. } => a.value_name("SIZE"),
        Kind::Percentiles | Kind::Seconds => a.value_name("LIST"),
    }
}
