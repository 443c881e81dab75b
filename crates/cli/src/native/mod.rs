//! plumb's own commands (not sysbench or fio syntax), parsed with clap.
//!
//! A new command is one module here plus one variant of [`Native`] (and its arm in
//! [`Native::run`]): dispatch, `plumb help`, completions and the man page all follow from it.

pub mod baseline;
pub mod compare;
mod compare_sweeps;
pub mod completions;
pub mod disk;
mod errors;
mod fio_jobs;
pub mod front_ends;
pub mod hdparm;
pub mod help;
pub mod history;
pub mod html;
pub mod inspect;
pub mod iostat;
pub mod manpage;
pub mod report;
pub mod show;
pub mod sweep;
pub mod tag;
pub(crate) mod text;
mod when;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "plumb",
    disable_version_flag = true,
    about = "benchmarks that say what really happened underneath each number",
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Native,
}

#[derive(Subcommand, Debug)]
pub enum Native {
    /// What stores PATH (filesystem, device, system disk or not, free space) and the host,
    /// and what that means for a benchmark, without running one
    Inspect(inspect::Args),
    /// Live block-device statistics in iostat -x's layout (Ctrl-C stops)
    Iostat(iostat::Args),
    /// A quick disk check that does not lie: CrystalDiskMark's presets (SEQ1M Q8T1/Q1T1,
    /// RND4K Q32T1/Q1T1, read and write) with O_DIRECT on preconditioned data, one table,
    /// what happened underneath and the findings (--quick: about 30 s)
    Disk(disk::Args),
    /// hdparm's -T (cached reads) and -t (buffered disk reads) timings with hdparm's lines,
    /// then what each one really measures
    Hdparm(hdparm::Args),
    /// A saved result (--json=FILE) shown again as the run printed it, findings evaluated
    /// again from the document
    Report(report::Args),
    /// The runs kept in the history, newest first (filters: --test, --host, --since,
    /// --until, --tag); `plumb history import FILE.json` keeps saved results
    History(history::Args),
    /// A matrix of option values run point by point (prepare and cleanup once per data
    /// set), kept as one sweep: plumb sweep PLAN.toml [--dry-run]
    Sweep(sweep::Args),
    /// A kept run (its id, a tag or baseline:NAME) shown again as the run printed it
    Show(show::Args),
    /// Label a kept run: plumb tag ID NAME
    Tag(tag::Args),
    /// Named reference runs: plumb baseline set NAME ID, plumb baseline list
    Baseline(baseline::Args),
    /// Two runs side by side: what differs, whether they are comparable, each figure's
    /// ratio and whether it is beyond noise (--fail-if-slower=PCT for CI); or two sweeps
    /// (sweep:ID), point by point
    Compare(compare::Args),
    /// One self-contained HTML page with charts: a run, several runs on the same axes, or a
    /// sweep (sweep:ID): plumb html RUN... -o report.html
    Html(html::Args),
    /// Shell completion script for plumb's commands, tests and options
    Completions(completions::Args),
    /// plumb's man page (roff), e.g. plumb manpage > plumb.1
    #[command(alias = "man")]
    Manpage,
    /// The general help, or the help of one command or test
    Help(help::Args),
    /// plumb's version
    Version,
}

impl Native {
    fn run(self) -> anyhow::Result<i32> {
        match self {
            Native::Inspect(a) => inspect::run(a),
            Native::Iostat(a) => iostat::run(a),
            Native::Disk(a) => disk::run(a),
            Native::Hdparm(a) => hdparm::run(a),
            Native::Report(a) => report::run(a),
            Native::History(a) => history::run(a),
            Native::Sweep(a) => sweep::run(a),
            Native::Show(a) => show::run(a),
            Native::Tag(a) => tag::run(a),
            Native::Baseline(a) => baseline::run(a),
            Native::Compare(a) => compare::run(a),
            Native::Html(a) => html::run(a),
            Native::Completions(a) => completions::run(a),
            Native::Manpage => manpage::run(),
            Native::Help(a) => help::run(a),
            Native::Version => {
                print_out(&format!("plumb {}\n", env!("CARGO_PKG_VERSION")));
                Ok(0)
            }
        }
    }
}

/// Write `text` to stdout; a closed pipe (plumb help | head) ends the output quietly
/// rather than with print!'s panic.
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Whether `word` (the first argument) names one of these commands.
pub fn is_command(word: &str) -> bool {
    Cli::command().find_subcommand(word).is_some()
}

/// Parse and run a native command line (`args[0]` names the command).
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let argv = std::iter::once("plumb").chain(args.iter().map(String::as_str));
    match Cli::try_parse_from(argv) {
        Ok(cli) => cli.command.run(),
        Err(e) => errors::handle(e, args.first().map_or("plumb", String::as_str)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_consistent() {
        // clap's own checks (duplicate names, bad combinations), which parsing only runs
        // for the command actually used.
        Cli::command().debug_assert();
        help::full_command().debug_assert();
    }

    #[test]
    fn native_words_are_told_from_sysbench_ones() {
        for w in [
            "inspect",
            "iostat",
            "disk",
            "hdparm",
            "completions",
            "manpage",
            "man",
            "help",
            "version",
            "report",
            "history",
            "show",
            "tag",
            "baseline",
            "compare",
            "sweep",
            "html",
        ] {
            assert!(is_command(w), "{w}");
        }
        for w in ["cpu", "fileio", "run", "--help", "--threads=2", ""] {
            assert!(!is_command(w), "{w}");
        }
    }
}
