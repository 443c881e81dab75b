//! The sysbench front end: sysbench 1.0 and 0.4/0.5 command lines, unchanged, with `plumb`
//! in place of `sysbench`.

pub mod common;
mod config_file;
pub mod dropin;
mod legacy;
pub mod options;
pub mod sweep;
pub mod testdefs;

use std::io::Write;

use plumb_core::StopCause;
use plumb_pipeline::{
    Group, JobError, JobSpec, Layout, PipelineError, Plan, PlanOptions, Settings,
};
use plumb_report::sysbench::Sysbench;

use crate::exit::{self, Interrupted, UsageError};
use crate::progress::Bar;
use crate::signals;
use common::{Common, Format};
use options::{help_table, Values};
use testdefs::{Command, TestDef, TESTS};

/// A command line split into its parts, before any option is checked.
struct Parsed {
    test: Option<String>,
    commands: Vec<String>,
    raw: Vec<(String, Option<String>)>,
    /// Each entry of `raw` as it was typed, for messages that quote it.
    typed: Vec<String>,
    help: bool,
    version: bool,
    /// The test came as `--test=NAME` (sysbench 0.4/0.5), which plumb warns about once it
    /// knows the test and can name the command to use instead.
    test_option: bool,
    /// Where the test's name comes from (set once the test is found).
    origin: legacy::Origin,
}

/// Split a command line; `dropin` leaves the warnings about old option names to the
/// drop-in front end, which words them as sysbench does.
fn split(args: &[String], dropin: bool) -> Parsed {
    let mut p = Parsed {
        test: None,
        commands: Vec::new(),
        raw: Vec::new(),
        typed: Vec::new(),
        help: false,
        version: false,
        test_option: false,
        origin: legacy::Origin::Current,
    };
    let mut positional = Vec::new();
    // Each deprecated alias's value and the argument that gave it, by its place in the
    // table.
    let mut aliases: Vec<Option<(Option<String>, String)>> = vec![None; common::DEPRECATED.len()];
    for a in args {
        if let Some(body) = a.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (body.to_string(), None),
            };
            match name.as_str() {
                "test" => {
                    p.test_option = true;
                    p.test = value;
                }
                "help" => p.help = value.as_deref().is_none_or(|v| v != "off"),
                "version" => p.version = value.as_deref().is_none_or(|v| v != "off"),
                _ => {
                    if let Some(i) = common::DEPRECATED.iter().position(|(o, _)| *o == name) {
                        // The last one counts, as sysbench's option parser keeps it.
                        aliases[i] = Some((value, a.clone()));
                        continue;
                    }
                    p.raw.push((name, value));
                    p.typed.push(a.clone());
                }
            }
        } else {
            positional.push(a.clone());
        }
    }
    for ((old, new), given) in common::DEPRECATED.iter().zip(aliases) {
        if let Some((value, typed)) = given {
            take_alias(&mut p, old, new, value, typed, dropin);
        }
    }
    let mut pos = positional.into_iter();
    if p.test.is_none() {
        p.test = pos.next();
    }
    p.commands = pos.collect();
    p
}

/// A deprecated alias (`--max-time`) with its new name (`--time`), as sysbench 1.0 reads
/// them: the alias wins wherever it stands when its value is above its default (1 thread,
/// else 0), and is passed over otherwise; the new name is then not read at all. Alone under
/// plumb's name the alias keeps its 0.4/0.5 meaning (`--max-time=0`: no time limit). The
/// drop-in warns as sysbench does, later; plumb warns here, and says which value it took.
fn take_alias(
    p: &mut Parsed,
    old: &str,
    new: &str,
    value: Option<String>,
    typed: String,
    dropin: bool,
) {
    let applies = common::alias_applies(old, value.as_deref());
    let newest = p
        .raw
        .iter()
        .zip(&p.typed)
        .rev()
        .find(|((n, _), _)| n == new)
        .map(|(_, t)| t.clone());
    if !dropin {
        match &newest {
            None => eprintln!("WARNING: --{old} is deprecated, use --{new} instead"),
            Some(t) if applies => eprintln!(
                "WARNING: --{old} is deprecated, use --{new} instead; {typed} is taken over {t}, as sysbench 1.0 does"
            ),
            Some(t) => eprintln!(
                "WARNING: {typed} is passed over for {t}: sysbench 1.0 takes --{old} only above its default"
            ),
        }
    }
    if !(applies || (!dropin && newest.is_none())) {
        return;
    }
    let (raw, typed_all): (Vec<_>, Vec<_>) = std::mem::take(&mut p.raw)
        .into_iter()
        .zip(std::mem::take(&mut p.typed))
        .filter(|((n, _), _)| n != new)
        .unzip();
    p.raw = raw;
    p.typed = typed_all;
    p.raw.push((new.to_string(), value));
    p.typed.push(typed);
}

/// The general help, listing common options and tests.
pub fn general_help() -> String {
    let mut s = String::from(
        "Usage:\n  plumb [options]... <test> <command>...\n  plumb [options]... --test=<test> <command>...   (sysbench 0.4/0.5 syntax)\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\
         Several commands run in order: plumb fileio ... prepare run cleanup\n\n",
    );
    s.push_str(&help_table("General options", common::OPTIONS));
    s.push_str(&help_table("\nHistory options", common::HISTORY));
    s.push_str(
        "\nDeprecated aliases: --num-threads, --max-time, --max-requests, --tx-rate\n\nTests:\n",
    );
    for t in TESTS {
        s.push_str(&format!("  {:<8} - {}\n", t.name, t.description));
    }
    s.push_str("\nSee 'plumb <test> help' for a list of options for each test.\n");
    s
}

/// Run a sysbench-style command line; returns the exit code.
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let args = &config_file::expand(args).map_err(UsageError)?;
    let p = split(args, false);
    if p.version {
        println!("plumb {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    let Some(test_name) = p.test.clone() else {
        if p.help {
            print!("{}", general_help());
            return Ok(0);
        }
        return Err(UsageError(
            "no test named: plumb <test> <command>, e.g. plumb cpu run (see 'plumb --help')".into(),
        )
        .into());
    };
    let (test, p) = resolved(&test_name, p)?;
    let commands = parse_commands(test, &p.commands)?;
    if p.help || commands.contains(&Command::Help) {
        print!(
            "{}",
            help_table(&format!("{} options", test.name), test.options)
        );
        return Ok(0);
    }
    let checked = checked(test, &p, commands, args)?;
    if checked.common.format == Format::Text && !checked.common.quiet() {
        let _ = write!(std::io::stdout(), "{}", Sysbench::PLUMB.banner());
    }
    execute(checked)
}

/// The test a command line names: one of [`TESTS`], one of sysbench's OLTP script paths, or
/// sysbench 0.4's `oltp`.
pub fn find_test(name: &str) -> Result<&'static TestDef, UsageError> {
    match legacy::find(name) {
        Some(found) => found.map_err(UsageError),
        None => Err({
            let names: Vec<&str> = TESTS.iter().map(|t| t.name).collect();
            UsageError(format!(
                "unknown test '{name}' (available: {})",
                names.join(", ")
            ))
        }),
    }
}

/// A command line's test with the 0.4/0.5 options that choose it applied (see
/// [`legacy::apply`]), and the warning about --test, which names the command that runs it.
fn resolved(name: &str, mut p: Parsed) -> Result<(&'static TestDef, Parsed), UsageError> {
    let origin = legacy::Origin::of(name, false);
    let named = find_test(name)?;
    let test = legacy::apply(named, origin, &mut p.raw, &mut p.typed, false).map_err(UsageError)?;
    p.origin = origin;
    if p.test_option {
        eprintln!(
            "WARNING: the --test option is deprecated: name the test on the command line (plumb {} {})",
            test.name,
            if p.commands.is_empty() { "run".to_string() } else { p.commands.join(" ") }
        );
    }
    if origin == legacy::Origin::Test04 {
        eprintln!("WARNING: sysbench 0.4's '{name}' test runs as sysbench 1.0's {}: tables sbtest1..N in 1.0's layout, not 0.4's single table 'sbtest'", test.name);
    }
    Ok((test, p))
}

fn parse_commands(test: &TestDef, words: &[String]) -> Result<Vec<Command>, UsageError> {
    words
        .iter()
        .map(|c| {
            Command::parse(c).ok_or_else(|| {
                UsageError(format!(
                    "unknown command '{c}' for the '{}' test (allowed: prepare, run, cleanup, help)",
                    test.name
                ))
            })
        })
        .collect()
}

/// A command line checked and turned into its plan, ready to run.
pub struct Checked {
    pub plan: Plan,
    pub layout: Sysbench,
    pub common: Common,
    /// Below verbosity 3, the test's step messages still print (see
    /// [`testdefs::TestPlan::prints_steps`]) while its report does not.
    pub steps_print: bool,
}

/// A command line's test, its command words and its options as typed, without checking the
/// values (for a sweep, which puts its own values in).
pub struct Words {
    pub test: &'static TestDef,
    pub commands: Vec<Command>,
    /// Each option as typed (`--tables=8`) with its name as the test knows it.
    pub options: Vec<(String, String)>,
}

/// Split a command line into [`Words`].
pub fn words(args: &[String]) -> Result<Words, UsageError> {
    let (p, test, commands) = named(args)?;
    let names = testdefs::script_option_names(test, &p.raw);
    Ok(Words {
        test,
        commands,
        options: names
            .into_iter()
            .zip(p.typed)
            .map(|((n, _), typed)| (n, typed))
            .collect(),
    })
}

/// A command line split, with its test and command words found.
fn named(args: &[String]) -> Result<(Parsed, &'static TestDef, Vec<Command>), UsageError> {
    let args = &config_file::expand(args).map_err(UsageError)?;
    let p = split(args, false);
    let name = p
        .test
        .clone()
        .ok_or_else(|| UsageError("no test named (e.g. oltp_read_write run)".into()))?;
    let (test, p) = resolved(&name, p)?;
    let commands = parse_commands(test, &p.commands)?;
    Ok((p, test, commands))
}

/// Check a whole command line (no help, no version) and build its plan, as [`main`] does.
pub fn check(args: &[String]) -> Result<Checked, UsageError> {
    let (p, test, commands) = named(args)?;
    if p.help || p.version || commands.contains(&Command::Help) {
        return Err(UsageError("help and version print, they do not run".into()));
    }
    checked(test, &p, commands, args)
}

fn checked(
    test: &'static TestDef,
    p: &Parsed,
    commands: Vec<Command>,
    args: &[String],
) -> Result<Checked, UsageError> {
    if commands.is_empty() {
        return Err(UsageError(format!(
            "the '{}' test needs a command: prepare, run, cleanup or help (see 'plumb {} help')",
            test.name, test.name
        )));
    }
    let raw = testdefs::script_option_names(test, &p.raw);
    let values = Values::parse(
        &raw,
        &[common::OPTIONS, common::HISTORY, test.options],
        |n| {
            UsageError(if dropin::texts::sysbench_knows(n, test.name) {
                dropin::unsupported(n)
            } else {
                format!(
                    "unknown option --{n} for the '{}' test (see 'plumb {} help' and 'plumb --help')",
                    test.name, test.name
                )
            })
        },
    )?;
    test.check_rand(&values)?;
    let mut common = Common::from_values(&values, false)?;
    common.legacy_script = p.origin == legacy::Origin::Script05;
    let plan = (test.plan)(&values, &common)?;
    unprinted_debug_lines(plan.as_ref(), &common, &commands)?;
    plan.tune(&mut common.run);
    Ok(assemble(test, plan, common, &commands, args))
}

/// sysbench's debug level prints lines plumb does not print yet: a line for each error an
/// OLTP script ignores and each reconnect, and under --debug one for each fileio request.
/// Runs that would need them are refused (prepare, prewarm and cleanup print no debug
/// lines in sysbench).
pub(crate) fn unprinted_debug_lines(
    plan: &dyn testdefs::TestPlan,
    common: &Common,
    commands: &[Command],
) -> Result<(), UsageError> {
    if !commands.contains(&Command::Run) {
        return Ok(());
    }
    let asked = if common.debug {
        "--debug".to_string()
    } else {
        format!("--verbosity={}", common.verbosity)
    };
    match plan.settings() {
        Settings::Oltp(_) if common.verbosity >= 5 => Err(UsageError(format!(
            "{asked} is not supported yet for the OLTP scripts' run: plumb does not print sysbench's debug line for each ignored error and reconnect (--verbosity=4 and below are)"
        ))),
        Settings::Fileio(_) if common.debug => Err(UsageError(
            "--debug is not supported yet for fileio's run: plumb does not print sysbench's debug line for each I/O request (--verbosity=5 is)".into(),
        )),
        _ => Ok(()),
    }
}

/// The pipeline's plan for a checked test and its commands.
fn assemble(
    test: &TestDef,
    plan: Box<dyn testdefs::TestPlan>,
    common: Common,
    commands: &[Command],
    args: &[String],
) -> Checked {
    let keep_going = plan.reports_partial_run();
    let steps_print = plan.prints_steps();
    let layout = Sysbench {
        drop_in: common.dropin,
        plumb_sections: common.plumb_sections,
        validation_line: common.validation_line,
        verbosity: common.verbosity,
        debug: common.debug,
    };
    let plan = Plan {
        front_end: "sysbench",
        layout: Some(layout.choices()),
        command_line: plumb_core::redact::args(
            std::iter::once(if common.dropin { "sysbench" } else { "plumb" })
                .chain(args.iter().map(String::as_str)),
        ),
        groups: vec![Group {
            steps: commands.iter().filter_map(|c| c.step()).collect(),
            jobs: vec![JobSpec {
                name: test.name.to_string(),
                config: common.run.clone(),
                seed_given: common.seed_given,
                layout: plan.layout(),
                start_delay: std::time::Duration::ZERO,
                after: Vec::new(),
                checkpoints: common.checkpoints.clone(),
                job: plan,
            }],
        }],
        options: PlanOptions {
            percentiles: common.percentiles.clone(),
            histogram: common.histogram,
            text: common.format == Format::Text,
            json_file: common.json_file.clone(),
            strict: common.strict,
            observe_interval: common.observe_interval,
            status_interval: None,
            notes: common.plumb_notes(),
            keep_going,
            // Its OLTP jobs connect only in their steps: the first connection of a setup
            // step names the server to the pipeline ([`plumb_pipeline::SetupServer`]).
            setup_server: None,
        },
    };
    Checked {
        plan,
        layout,
        common,
        steps_print,
    }
}

/// Run a checked command line; returns the exit code.
pub(crate) fn execute(c: Checked) -> anyhow::Result<i32> {
    let Checked {
        plan,
        layout,
        common,
        steps_print,
    } = c;
    let stop = signals::install();
    let mut bar = Bar::new("Writing test files");
    // Lines logged while the bar is up are written with the bar lifted.
    // Below verbosity 3 the text report is not printed (nor a built-in test's step
    // messages, which are sysbench log lines too); a JSON document on stdout is the result
    // asked for, not a log message, so it still goes out.
    let quiet = common.quiet() && plan.options.text;
    let report: Box<dyn std::io::Write + Send> = if quiet && !steps_print {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stdout())
    };
    let silent = Silent(&layout);
    let layout: &dyn Layout = if quiet { &silent } else { &layout };
    let mut stdout = bar.log_above(report);
    let mut stderr = bar.log_above(Box::new(std::io::stderr()));
    let mut out = plumb_pipeline::Output {
        report: &mut stdout,
        diagnostics: &mut stderr,
        progress: &mut bar,
        live: None,
    };
    let finished = plumb_pipeline::execute(&plan, layout, &stop, &mut out).map_err(cli_error)?;
    crate::keep::keep(&finished.record, &common.keep);
    // The partial report is out; the error that cut the run short ends it.
    if let Some(error) = finished.record.jobs().find_map(|j| j.error.clone()) {
        return Err(RunFailed(error).into());
    }
    Ok(match finished.stopped_by {
        Some(StopCause::Signal(s)) => exit::for_signal(s),
        // sysbench's watchdog exits with 2 when it gives up on the workers.
        Some(StopCause::Forced) if common.dropin => 2,
        Some(_) => exit::RUNTIME,
        None if plan.options.strict && finished.invalid => {
            eprintln!("plumb: --strict: the result has findings marked invalid");
            exit::STRICT
        }
        None => 0,
    })
}

/// The error that stopped a run after its workers started (not one that kept them from
/// starting): sysbench's info level still says "Done." after it, once they have stopped.
#[derive(Debug)]
pub(crate) struct RunFailed(String);

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunFailed {}

/// A layout that prints nothing live (sysbench below verbosity 3) but keeps the wording of
/// advice and the replay of a saved record as the layout it stands for.
struct Silent<'a>(&'a dyn Layout);

impl Layout for Silent<'_> {
    fn report(
        &self,
        _record: &plumb_pipeline::Record,
        _group: &plumb_pipeline::GroupRecord,
    ) -> String {
        String::new()
    }
    fn spelling(&self) -> Option<plumb_advise::Spelling> {
        self.0.spelling()
    }
    fn replay(&self, record: &plumb_pipeline::Record) -> String {
        self.0.replay(record)
    }
}

/// A pipeline error classified for the exit status.
pub(crate) fn cli_error(e: PipelineError) -> anyhow::Error {
    match e {
        PipelineError::Job(JobError::Usage(m)) => UsageError(m).into(),
        PipelineError::Job(e @ JobError::Unsupported { .. }) => UsageError(e.to_string()).into(),
        PipelineError::Job(JobError::Interrupted(sig)) => Interrupted(sig).into(),
        other => anyhow::Error::new(other),
    }
}
