//! The drop-in front end: plumb run under the name `sysbench` (a symlink) behaves as
//! sysbench 1.0.20 does on stdout, stderr and exit status for the tests plumb implements.
//! A command line is checked in sysbench's order (--help and --version, general options, the
//! version line, the test, its command, its options), and each mistake is reported with sysbench's words on
//! sysbench's stream, exit 1. plumb's own sections and notes stay in the JSON result unless
//! --plumb-findings=on asks for them.

pub(crate) mod texts;

use std::io::Write;

use super::common::{self, Common};
use super::options::{opt, Kind, Opt, Value, Values, C_SPACE};
use super::testdefs::{self, Command, TestDef};
use super::{assemble, execute, legacy, split, Parsed};
use crate::exit::{self, Interrupted, UsageError};

/// sysbench's integer options: a value that is not a number is refused by its option parser
/// (stderr, before anything else); an empty value counts as 0.
const SYSBENCH_INTS: &[&str] = &[
    "threads",
    "events",
    "time",
    "rate",
    "report-interval",
    "rand-seed",
    "rand-spec-iter",
    "rand-spec-pct",
    "rand-spec-res",
    "verbosity",
    "percentile",
    "cpu-max-prime",
    "thread-yields",
    "thread-locks",
    "mutex-num",
    "mutex-locks",
    "mutex-loops",
    "file-num",
    "file-async-backlog",
    "file-fsync-freq",
    "file-merged-requests",
];

/// How a command line ends early: what to print, where, and the exit status.
enum Stop {
    /// A line on stderr, exit 1.
    Stderr(String),
    /// "FATAL: ..." (with its own line ends) on stdout, exit 1.
    Fatal(String),
}

impl Stop {
    /// The debug lines sysbench logged before the failure (a message may start with
    /// them) stand before its "FATAL:" line.
    fn fatal(msg: impl std::fmt::Display) -> Stop {
        let msg = msg.to_string();
        let mut debug = 0;
        while msg[debug..].starts_with("DEBUG: ") {
            match msg[debug..].find('\n') {
                Some(end) => debug += end + 1,
                None => break,
            }
        }
        Stop::Fatal(format!("{}FATAL: {}\n", &msg[..debug], &msg[debug..]))
    }

    fn print(self, json: bool) -> i32 {
        match self {
            Stop::Stderr(m) => eprintln!("{m}"),
            // With --format=json stdout carries the JSON document only.
            Stop::Fatal(m) if json => eprint!("{m}"),
            Stop::Fatal(m) => {
                print!("{m}");
                let _ = std::io::stdout().flush();
            }
        }
        exit::RUNTIME
    }
}

/// Run a sysbench command line under the drop-in name; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    // sysbench reads a config file where the option stands; one it cannot read is reported
    // on stderr and the run goes on without it (perror), which plumb does not do: a run
    // without the options the user meant is not the run they asked for.
    let args = &match super::config_file::expand(args) {
        Ok(a) => a,
        Err(m) => {
            eprintln!("{m}");
            return exit::RUNTIME;
        }
    };
    let p = split(args, true);
    let json = p
        .raw
        .iter()
        .any(|(n, v)| n == "format" && v.as_deref() == Some("json"));
    match drive(args, &p, json) {
        Ok(code) => code,
        Err(stop) => stop.print(json),
    }
}

fn drive(args: &[String], p: &Parsed, json: bool) -> Result<i32, Stop> {
    warn_test_option(args);
    // One test and one command, as sysbench takes them (plumb's own name runs several
    // commands in order).
    if let Some(extra) = p.commands.get(1) {
        return Err(Stop::Stderr(format!(
            "Unrecognized command line argument: {extra}"
        )));
    }
    // --help and --version win over any other option, however wrong.
    if p.help {
        print!("{}", texts::general_help());
        return Ok(0);
    }
    if p.version {
        println!("{}", texts::VERSION);
        return Ok(0);
    }
    let general = |name: &str| {
        common::OPTIONS
            .iter()
            .find(|o| o.name == name)
            .or_else(|| (name == VALIDATE.name).then_some(&VALIDATE))
    };
    // General options before the version line, as sysbench parses them; a bad on/off is
    // refused later, with the unknown options.
    let check_general = |raw: &[(String, Option<String>)], typed: &[String]| {
        for ((name, value), typed) in raw.iter().zip(typed) {
            if let Some(o) = general(name).filter(|o| !matches!(o.kind, Kind::Bool)) {
                check_option(o, value.as_deref(), typed)?;
            }
        }
        Ok(())
    };
    init(&normalised(&p.raw), &p.typed, json)?;
    check_general(&normalised(&p.raw), &p.typed)?;
    // sysbench prints its banner at verbosity 3 and up (the value is checked above), and
    // --debug sets its verbosity to 5 first.
    let last = |name: &str| {
        normalised(&p.raw)
            .into_iter()
            .rev()
            .find(|(n, _)| n == name)
    };
    let debug = last("debug").is_some_and(|(n, v)| {
        general(&n).is_some_and(|o| matches!(o.parse(v.as_deref()), Ok(Value::Bool(true))))
    });
    let quiet = !debug
        && last("verbosity")
            .and_then(|(_, v)| v?.trim().parse::<u64>().ok())
            .is_some_and(|v| v < 3);
    if !json && !quiet {
        println!("{}\n", texts::banner());
    }
    let Some(test_name) = p.test.as_deref() else {
        return script_from_stdin();
    };
    let test = match testdefs::oltp::from_script(test_name) {
        Some(Ok(t)) => t,
        Some(Err(why)) => return Err(Stop::fatal(why)),
        None => testdefs::find(test_name).ok_or_else(|| {
            Stop::fatal(format!(
                "Cannot find benchmark '{test_name}': no such built-in test, file or module"
            ))
        })?,
    };
    // A 0.5 script declares no options: sysbench 1.0 hands it every option, and its
    // oltp_legacy copy reads the 0.5 names. Those are mapped before the unknown-option
    // check below, which is sysbench 1.0's for its own scripts.
    let origin = legacy::Origin::of(test_name, true);
    let (mut raw, mut typed) = (p.raw.clone(), p.typed.clone());
    let test = legacy::apply(test, origin, &mut raw, &mut typed, true).map_err(Stop::fatal)?;
    let raw = if origin == legacy::Origin::Script05 {
        testdefs::script_option_names(test, &raw)
    } else {
        raw
    };
    let raw = normalised(&raw);
    check_general(&raw, &typed)?;
    // sysbench 1.0's scripts take any --db-driver and fail where they first initialise
    // it: the driver stands for that failure, and the option is not checked as a choice.
    let unknown_driver = raw
        .iter()
        .rev()
        .find(|(n, _)| n == "db-driver")
        .and_then(|(_, v)| v.clone())
        .filter(|v| {
            origin != legacy::Origin::Script05
                && testdefs::oltp::ALL.iter().any(|t| std::ptr::eq(*t, test))
                && !testdefs::db_drivers::DRIVERS.contains(&v.as_str())
        });
    let (raw, typed): (Vec<_>, Vec<_>) = raw
        .into_iter()
        .zip(typed)
        .filter(|((n, _), _)| unknown_driver.is_none() || n != "db-driver")
        .unzip();
    let options = || raw.iter().zip(&typed);
    let mut commands = Vec::new();
    for c in &p.commands {
        commands
            .push(Command::parse(c).ok_or_else(|| Stop::Stderr(format!("Unknown command: {c}")))?);
    }
    // sysbench names a script by the base name of the path given.
    let script = testdefs::oltp::ALL.iter().any(|t| std::ptr::eq(*t, test));
    let shown = match std::path::Path::new(test_name)
        .file_name()
        .and_then(|n| n.to_str())
    {
        Some(base) if script => base,
        _ => test.name,
    };
    // sysbench 0.5's oltp.lua and 1.0's bulk_insert.lua define no help, and nothing runs
    // them without a command; every other 1.0 script stops in oltp_common.lua.
    let bare_script = origin == legacy::Origin::Script05 || test.name == "bulk_insert";
    if commands.is_empty() {
        return match (script, bare_script) {
            (false, _) => Err(Stop::Stderr(format!(
                "The '{0}' test requires a command argument. See 'sysbench {0} help'",
                test.name
            ))),
            (true, true) => Ok(0),
            (true, false) => Err(Stop::fatal(format!(
                "{}:28: Command is required. Supported commands: prepare, prewarm, run, cleanup, help",
                texts::oltp_common_path()
            ))),
        };
    }
    // Unknown options and bad on/off values, then the test's help, then the values.
    // sysbench's Lua scripts take their options with '-' or '_'.
    let own = |name: &str| {
        let alt = name.replace('-', "_");
        test.options
            .iter()
            .find(|o| o.name == name || o.name == alt)
    };
    for ((name, value), typed) in options() {
        let o = general(name).or_else(|| own(name)).ok_or_else(|| {
            Stop::Stderr(if texts::sysbench_knows(name, test.name) {
                unsupported(name)
            } else {
                format!("invalid option: {typed}")
            })
        })?;
        if matches!(o.kind, Kind::Bool) {
            check_option(o, value.as_deref(), typed)?;
        }
    }
    if commands.contains(&Command::Help) {
        if bare_script {
            return Err(Stop::Stderr(format!(
                "'{shown}' test does not implement the 'help' command."
            )));
        }
        print!("{}", texts::test_help(test.name, shown));
        return Ok(0);
    }
    // prewarm is not one of sysbench's own commands but oltp_common.lua's: the built-in
    // tests and bulk_insert.lua define none, and sysbench finds none to run.
    // (plumb's own name prewarms bulk_insert's table too.)
    if commands.contains(&Command::Prewarm)
        && (test.name == "bulk_insert" || !test.implements(Command::Prewarm))
    {
        return Err(Stop::Stderr("Unknown command: prewarm".into()));
    }
    if let Some(c) = commands.iter().find(|c| !test.implements(**c)) {
        return Err(Stop::Stderr(format!(
            "'{shown}' test does not implement the '{}' command.",
            c.name()
        )));
    }
    for ((name, value), typed) in options() {
        if let Some(o) = own(name) {
            check_option(o, value.as_deref(), typed)?;
        }
    }
    let mut raw = raw;
    let validation_line = general_validate(test, &mut raw)?;
    let raw = check_fileio_mode(test, raw, &commands)?;
    let raw = testdefs::script_option_names(test, &raw);

    let values = Values::parse(&raw, &[common::OPTIONS, test.options], |n| {
        UsageError(format!("invalid option: --{n}"))
    })
    .map_err(Stop::fatal)?;
    test.check_rand(&values).map_err(Stop::fatal)?;
    let mut common = Common::from_values(&values, true).map_err(Stop::fatal)?;
    common.legacy_script = origin == legacy::Origin::Script05;
    common.legacy_path = common.legacy_script.then(|| test_name.to_string());
    common.dropin_command = commands.first().copied();
    common.unknown_driver = unknown_driver;
    common.validation_line = validation_line;
    let plan = (test.plan)(&values, &common).map_err(Stop::fatal)?;
    super::unprinted_debug_lines(plan.as_ref(), &common, &commands)
        .map_err(|e| Stop::Stderr(e.0))?;
    plan.tune(&mut common.run);
    let info = common.verbosity >= 4 && !json;
    execute(assemble(test, plan, common, &commands, args)).or_else(|e| {
        let code = match e.downcast_ref::<Interrupted>() {
            Some(i) => exit::for_signal(i.0),
            None => exit::RUNTIME,
        };
        let words = match e.downcast_ref::<plumb_pipeline::PipelineError>() {
            Some(plumb_pipeline::PipelineError::Harness(
                plumb_core::harness::HarnessError::QueueFull { .. },
            )) => QUEUE_FULL.to_string(),
            _ => crate::exit::message(&e),
        };
        Stop::fatal(words).print(json);
        if info && e.downcast_ref::<super::RunFailed>().is_some() {
            println!("Done.\n");
        }
        Ok(code)
    })
}

/// sysbench's words when --rate's events pile up past its queue ([`common::SYSBENCH_QUEUE`]).
const QUEUE_FULL: &str = "The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate";

/// sysbench's general `--validate`, for the tests that do not declare their own (fileio's
/// checks its blocks).
static VALIDATE: Opt = opt(
    "validate",
    Kind::Bool,
    "off",
    "perform validation checks where possible",
);

/// `--validate` given to a test other than fileio: sysbench's general option, which only
/// fileio acts on; for the others sysbench says "Validation checks: on." in its header and
/// runs as without it, and so does plumb. Taken out of `raw`, with whether the header says
/// so (the last one given wins, as sysbench reads them; its on/off was checked with the
/// other options).
fn general_validate(test: &TestDef, raw: &mut Vec<(String, Option<String>)>) -> Result<bool, Stop> {
    if test.options.iter().any(|o| o.name == VALIDATE.name) {
        return Ok(false);
    }
    let mut on = false;
    for (_, value) in raw.iter().filter(|(n, _)| n == VALIDATE.name) {
        on = matches!(
            VALIDATE.parse(value.as_deref()).map_err(Stop::fatal)?,
            Value::Bool(true)
        );
    }
    raw.retain(|(n, _)| n != VALIDATE.name);
    Ok(on)
}

/// A sysbench option plumb does not take: sysbench would run with it, so plumb says it
/// cannot rather than calling it invalid.
pub fn unsupported(name: &str) -> String {
    format!("--{name} is a sysbench option plumb does not support yet")
}

/// No test named: sysbench runs the Lua script on standard input. An empty script does
/// nothing, as in sysbench; plumb runs no Lua, so any other script is refused.
fn script_from_stdin() -> Result<i32, Stop> {
    let mut script = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut script);
    if script.trim().is_empty() {
        return Ok(0);
    }
    Err(Stop::fatal(
        "plumb runs sysbench's built-in tests (sysbench <test> <command>: cpu, fileio, memory, threads, mutex), not Lua scripts",
    ))
}

/// sysbench's warning about --test, on stderr.
fn warn_test_option(args: &[String]) {
    for _ in args
        .iter()
        .filter(|a| *a == "--test" || a.starts_with("--test="))
    {
        eprintln!("WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.");
    }
}

/// sysbench's init(): the general options it reads first, in its order, each value checked
/// as it is read (the first bad one ends the run), with its warnings between them: a
/// deprecated alias it takes (see [`super::take_alias`], which left only the value read),
/// then the endless test. Its later options (verbosity, percentile) are checked after.
fn init(raw: &[(String, Option<String>)], typed: &[String], json: bool) -> Result<(), Stop> {
    let last = |name: &str| {
        raw.iter()
            .zip(typed)
            .rev()
            .find(|((n, _), _)| n == name)
            .map(|((_, v), t)| (v.as_deref(), t.as_str()))
    };
    let read = |name: &str| -> Result<(), Stop> {
        let (Some((value, typed)), Some(o)) =
            (last(name), common::OPTIONS.iter().find(|o| o.name == name))
        else {
            return Ok(());
        };
        check_option(o, value, typed)?;
        if let Some((old, new)) = alias_of(typed) {
            warn(
                &format!("WARNING: --{old} is deprecated, use --{new} instead"),
                json,
            );
        }
        Ok(())
    };
    for name in ["threads", "events", "time"] {
        read(name)?;
    }
    warn_endless(raw, json);
    let time = last("time")
        .and_then(|(v, _)| v?.trim().parse::<f64>().ok())
        .unwrap_or(10.0);
    if time > 0.0 {
        read("forced-shutdown")?;
    }
    for name in ["rand-seed", "rand-type", "rate", "report-interval"] {
        read(name)?;
    }
    Ok(())
}

/// The deprecated alias an option was typed as, with its new name.
fn alias_of(typed: &str) -> Option<(&'static str, &'static str)> {
    let body = typed.strip_prefix("--")?;
    let name = body.split_once('=').map_or(body, |(n, _)| n);
    common::DEPRECATED.iter().find(|(o, _)| *o == name).copied()
}

/// A warning on stdout, or on stderr when stdout carries the JSON document.
fn warn(line: &str, json: bool) {
    if json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// sysbench's warning, on stdout before its banner and whatever the command or verbosity,
/// when neither --events nor --time limits the run (on stderr when stdout carries JSON).
fn warn_endless(raw: &[(String, Option<String>)], json: bool) {
    let last = |name: &str, default: f64| {
        raw.iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref()?.trim().parse::<f64>().ok())
            .unwrap_or(default)
    };
    if last("events", 0.0) == 0.0 && last("time", 10.0) == 0.0 {
        warn(
            "WARNING: Both event and time limits are disabled, running an endless test",
            json,
        );
    }
}

/// sysbench reads a missing or empty value of an integer option as 0, and
/// --forced-shutdown as [`SysbenchGrace::read`] says.
fn normalised(raw: &[(String, Option<String>)]) -> Vec<(String, Option<String>)> {
    // --time as sysbench's strtol() reads it (10 s unless given), for a grace given as a
    // share of it; a value it refuses is refused later.
    let time = raw
        .iter()
        .rev()
        .find(|(n, _)| n == "time")
        .map_or(Some(10), |(_, v)| {
            v.as_deref()
                .unwrap_or("0")
                .trim_start_matches(C_SPACE)
                .parse::<i64>()
                .ok()
        });
    raw.iter()
        .map(|(n, v)| {
            let empty = v.as_deref().is_none_or(str::is_empty);
            if empty && SYSBENCH_INTS.contains(&n.as_str()) {
                (n.clone(), Some("0".to_string()))
            } else if n == "forced-shutdown" && time == Some(0) {
                // Without a time limit sysbench never reads the value.
                (n.clone(), Some("off".to_string()))
            } else if n == "forced-shutdown" {
                // An empty value is no value: 5% of --time, as sysbench reads it.
                let v = v.as_deref().filter(|v| !v.is_empty()).unwrap_or("5%");
                (n.clone(), Some(grace_as_read(v, time)))
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect()
}

/// A --forced-shutdown value sysbench takes, as plumb's parser reads the same thing:
/// `OFF` is `off`, a percentage is the whole seconds sysbench's integer arithmetic makes
/// of it (5% of 210 s is 10 s; what follows the `%` is dropped, `%` alone is 0%). A value
/// sysbench refuses, and a negative one, are left for [`check_option`] to refuse.
fn grace_as_read(v: &str, time: Option<i64>) -> String {
    match SysbenchGrace::read(v) {
        Some(SysbenchGrace::Off) => "off".to_string(),
        Some(SysbenchGrace::Seconds(n, percent)) if (0..=1_000_000_000).contains(&n) => {
            match (percent, time) {
                (false, _) => n.to_string(),
                (true, Some(t)) if t >= 0 => (n * t / 100).to_string(),
                (true, _) => format!("{n}%"),
            }
        }
        _ => v.to_string(),
    }
}

/// An option's value as sysbench judges it: first its option parser (a word where an
/// integer is wanted, a bad on/off: one line on stderr), then the option's own check
/// ("FATAL: ..." on stdout).
fn check_option(o: &Opt, raw: Option<&str>, typed: &str) -> Result<(), Stop> {
    let text = raw.unwrap_or("");
    // Checked before plumb's parser, which takes fractions of a second for --time,
    // --rate and --report-interval (and of a percent for --percentile) where sysbench's
    // strtol() does not.
    if SYSBENCH_INTS.contains(&o.name) && !c_int(text) {
        // Under the name it was typed as: sysbench reads an alias as its own option.
        let name = alias_of(typed).map_or(o.name, |(old, _)| old);
        return Err(Stop::Stderr(format!(
            "Invalid value for the '{}' option: '{text}'",
            name.replace('-', "_")
        )));
    }
    if o.name == "forced-shutdown" && !text.is_empty() {
        match SysbenchGrace::read(text) {
            None => {
                return Err(Stop::fatal(format!(
                    "Invalid value for --forced-shutdown: '{text}'"
                )))
            }
            Some(SysbenchGrace::Seconds(n, _)) if n < 0 => {
                return Err(Stop::fatal(format!(
                    "--forced-shutdown={text}: sysbench adds a negative count to --time as an unsigned number (its watchdog then fires before --time ends, or never); plumb takes 0 or more seconds, or a percentage"
                )))
            }
            Some(_) => {}
        }
    }
    let Err(e) = o.parse(raw) else {
        return Ok(());
    };
    let raw = text;
    if matches!(o.kind, Kind::Bool) {
        return Err(Stop::Stderr(format!("invalid option: {typed}")));
    }
    // sysbench reads a size it cannot parse as 0 and reports that.
    let shown = match o.kind {
        Kind::Size if plumb_core::size::parse_size(raw).is_err() => "0",
        _ => raw,
    };
    Err(match o.name {
        "threads" => Stop::Fatal(format!("FATAL: Invalid value for --threads: {raw}.\n\n")),
        "verbosity" => Stop::Fatal(format!("Invalid value for verbosity: {raw}\n")),
        "percentile" => Stop::fatal(format!("Invalid value for --percentile: {raw}")),
        "rand-type" => Stop::fatal(format!("Invalid random numbers distribution: {raw}.")),
        "forced-shutdown" => Stop::fatal(format!("Invalid value for --forced-shutdown: '{raw}'")),
        "file-block-size" => Stop::fatal(format!("Invalid value for file-block-size: {shown}.")),
        "report-checkpoints" => Stop::fatal(checkpoints_error(raw)),
        "file-total-size" => Stop::fatal(format!("Invalid value for file-total-size: {shown}")),
        name => match texts::invalid_test_value(name, raw) {
            Some(m) => Stop::fatal(m),
            None => Stop::fatal(e),
        },
    })
}

/// sysbench's complaint about a --report-checkpoints list, from the same reading of it
/// as plumb's (the first bad item, or the count past its limit, whichever comes first).
fn checkpoints_error(raw: &str) -> String {
    use crate::sysbench::options::{seconds_list, ListError, MAX_CHECKPOINTS};
    match seconds_list(raw) {
        Err(ListError::TooMany) => format!(
            "Too many checkpoints in --report-checkpoints (up to {MAX_CHECKPOINTS} can be defined)"
        ),
        Err(ListError::Bad(item)) => format!("Invalid value for --report-checkpoints: '{item}'"),
        Ok(_) => format!("Invalid value for --report-checkpoints: '{raw}'"),
    }
}

/// What sysbench's option parser takes as an integer: strtol() in base 10 over the whole
/// value (leading white space and a sign allowed), inside a C int.
fn c_int(s: &str) -> bool {
    let t = s.trim_start_matches(C_SPACE);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && t.parse::<i128>()
            .is_ok_and(|v| (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v))
}

/// A --forced-shutdown value as sysbench reads it.
enum SysbenchGrace {
    Off,
    /// Seconds (signed, as strtol() gives them), or a percentage of --time.
    Seconds(i64, bool),
}

impl SysbenchGrace {
    /// `off` in any case, or strtol()'s whole seconds, optionally followed by `%` (what
    /// follows the `%` is not read); None for what sysbench refuses.
    fn read(s: &str) -> Option<SysbenchGrace> {
        if s.eq_ignore_ascii_case("off") {
            return Some(SysbenchGrace::Off);
        }
        let t = s.trim_start_matches(C_SPACE);
        let body = t.strip_prefix(['+', '-']).unwrap_or(t);
        let n = body.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &body[n..];
        // strtol() with no digits leaves its end pointer at the start of the value: 0,
        // and only a `%` right there is taken.
        if n == 0 {
            return s
                .starts_with('%')
                .then_some(SysbenchGrace::Seconds(0, true));
        }
        if !rest.is_empty() && !rest.starts_with('%') {
            return None;
        }
        let number = &t[..t.len() - rest.len()];
        // strtol() saturates a number it cannot hold.
        let seconds = number.parse().unwrap_or(if number.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        });
        Some(SysbenchGrace::Seconds(seconds, !rest.is_empty()))
    }
}

/// fileio's test mode, checked by `run` only, as sysbench does: without one, the complaint
/// and the option listing; a mode it does not know, its message. prepare and cleanup ignore
/// the option, so a word that is no mode is dropped for them.
fn check_fileio_mode(
    test: &TestDef,
    raw: Vec<(String, Option<String>)>,
    commands: &[Command],
) -> Result<Vec<(String, Option<String>)>, Stop> {
    if test.name != "fileio" {
        return Ok(raw);
    }
    let mode = raw
        .iter()
        .rev()
        .find(|(n, _)| n == "file-test-mode")
        .and_then(|(_, v)| v.clone())
        .unwrap_or_default();
    let known = crate::sysbench::testdefs::fileio::TEST_MODES.contains(&mode.as_str());
    if !commands.contains(&Command::Run) {
        return Ok(if known {
            raw
        } else {
            raw.into_iter()
                .filter(|(n, _)| n != "file-test-mode")
                .collect()
        });
    }
    if mode.is_empty() {
        return Err(Stop::Fatal(format!(
            "FATAL: Missing required argument: --file-test-mode\n\n{}",
            texts::test_help("fileio", "fileio")
        )));
    }
    if !known {
        return Err(Stop::fatal(
            texts::invalid_test_value("file-test-mode", &mode).unwrap_or_default(),
        ));
    }
    Ok(raw)
}
