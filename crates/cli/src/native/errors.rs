//! clap's errors in plumb's style: one line on stderr, exit 2. Help and version requests
//! print as clap renders them, on stdout, exit 0.

use clap::error::{ContextKind, ErrorKind};

use crate::exit::UsageError;

/// Turn a clap error for `command` into plumb's outcome.
pub fn handle(e: clap::Error, command: &str) -> anyhow::Result<i32> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            // A closed pipe (plumb inspect --help | head) is not worth a message.
            let _ = e.print();
            Ok(0)
        }
        _ => Err(UsageError(one_line(&e, command)).into()),
    }
}

/// The argument an error is about, without clap's value placeholder: `--format <FORMAT>`
/// becomes `--format`; a positional `<SHELL>` becomes `SHELL`.
fn arg_name(s: &str) -> String {
    let first = s.split_whitespace().next().unwrap_or(s);
    // `<RUN>...` (a positional taking several values) names one RUN.
    first
        .trim_end_matches("...")
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string()
}

/// A missing positional in words: `<PATH>` becomes "a path", `<INTERVAL>` "an interval".
fn a_value(s: &str) -> String {
    let name = arg_name(s).to_lowercase();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// The command's own usage line (`plumb hdparm [OPTIONS] <DEVICE>...`), for a command
/// without subcommands of its own; `None` for the others, whose usage depends on which one.
fn plain_usage(command: &str) -> Option<String> {
    let mut cli = <super::Cli as clap::CommandFactory>::command();
    cli.build();
    let sub = cli.find_subcommand_mut(command)?;
    if sub.has_subcommands() {
        return None;
    }
    Some(sub.render_usage().to_string())
}

fn one_line(e: &clap::Error, command: &str) -> String {
    let ctx = |k| e.get(k).map(|v| v.to_string()).unwrap_or_default();
    // For a missing argument clap's usage repeats the arguments given ("plumb hdparm
    // --no-history <DEVICE>..."), which reads as if they were required.
    let usage = match e.kind() {
        ErrorKind::MissingRequiredArgument => plain_usage(command),
        _ => None,
    }
    .unwrap_or_else(|| ctx(ContextKind::Usage));
    let usage = usage
        .lines()
        .next()
        .map(|l| l.trim_start_matches("Usage:").trim().to_string())
        .filter(|l| !l.is_empty())
        .map(|l| format!(" (usage: {l})"))
        .unwrap_or_default();
    let arg = ctx(ContextKind::InvalidArg);
    let value = ctx(ContextKind::InvalidValue);
    match e.kind() {
        ErrorKind::UnknownArgument if arg.starts_with('-') => {
            let hint = match ctx(ContextKind::SuggestedArg) {
                s if s.is_empty() => String::new(),
                s => format!(", did you mean {s}?"),
            };
            format!("unknown option {arg} for {command}{hint}{usage}")
        }
        ErrorKind::UnknownArgument => {
            format!("unexpected argument '{arg}' for {command}{usage}")
        }
        ErrorKind::InvalidValue if value.is_empty() => format!(
            "option {} needs a value (allowed: {})",
            arg_name(&arg),
            ctx(ContextKind::ValidValue)
        ),
        ErrorKind::InvalidValue => format!(
            "invalid value for {}: '{value}' (allowed: {})",
            arg_name(&arg),
            ctx(ContextKind::ValidValue)
        ),
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            format!("invalid value for {}: '{value}'{why}", arg_name(&arg))
        }
        ErrorKind::MissingRequiredArgument => {
            let missing: Vec<String> = arg.split(", ").map(a_value).collect();
            format!("{command} needs {}{usage}", missing.join(" and "))
        }
        _ => {
            // Any other kind: clap's own first line, without its "error: " prefix.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("").trim();
            format!("{}{usage}", first.strip_prefix("error: ").unwrap_or(first))
        }
    }
}
