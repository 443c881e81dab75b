//! `plumb help [COMMAND|TEST]`, and the whole command line (native commands and sysbench
//! tests) as one clap definition for help, completions and the man page.

use std::fmt::Write as _;

use clap::CommandFactory;

use super::{front_ends, Cli};
use crate::exit::UsageError;
use crate::sysbench;

/// Show the general help, or one command's or test's.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A native command (inspect, iostat ...) or a sysbench test (cpu, fileio ...)
    #[arg(value_name = "COMMAND|TEST")]
    topic: Option<String>,
}

/// Every command plumb accepts under its own name: the native commands and the sysbench tests.
pub fn full_command() -> clap::Command {
    Cli::command()
        .subcommands(front_ends::sysbench_tests())
        .after_help(
            "Any other first word is read as a sysbench command line: \
             plumb [options]... <test> <command>...",
        )
}

/// The native commands' part of `plumb help`, from their clap definitions.
pub fn listing() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut s = String::from("Native commands:\n");
    for sub in cmd.get_subcommands_mut() {
        let usage = sub.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage:").trim();
        let _ = writeln!(s, "  {usage}");
        if let Some(about) = sub.get_about() {
            s.push_str(&wrap(&about.to_string(), "        ", 96));
        }
    }
    s.push_str("\nSee 'plumb help COMMAND' or 'plumb COMMAND --help' for a command's options.\n");
    s
}

/// `text` in lines of at most `width` columns (a longer word stands alone), each after `indent`.
fn wrap(text: &str, indent: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let Some(topic) = a.topic else {
        super::print_out(&format!("{}\n{}", sysbench::general_help(), listing()));
        return Ok(0);
    };
    let mut cmd = Cli::command();
    cmd.build();
    if let Some(sub) = cmd.find_subcommand_mut(&topic) {
        super::print_out(&sub.render_long_help().to_string());
        return Ok(0);
    }
    if sysbench::testdefs::find(&topic).is_some() {
        return sysbench::main(&[topic, "help".to_string()]);
    }
    Err(UsageError(format!(
        "no command or test named '{topic}' (see 'plumb help')"
    ))
    .into())
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(wrap("aa bb cc", "  ", 7), "  aa bb\n  cc\n");
        assert_eq!(wrap("longword x", "", 4), "longword\nx\n");
        assert_eq!(wrap("", "  ", 10), "");
    }
}
