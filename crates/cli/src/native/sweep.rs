//! `plumb sweep PLAN.toml`: see crate::sweep and docs/sweep.md.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan file (TOML): command, [matrix], repeat, warmup, pause, tag, prepare
    #[arg(value_name = "PLAN.toml")]
    plan: PathBuf,
    /// Print the points and where prepare and cleanup go, without running anything
    #[arg(long)]
    dry_run: bool,
    /// Do not keep the sweep's runs in the history
    #[arg(long)]
    no_history: bool,
    /// Also write the sweep (its runs with their points and records) to FILE
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Label the sweep in the history, as the plan's `tag =` does (given both, they must
    /// agree)
    #[arg(long, value_name = "NAME")]
    tag: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    crate::sweep::run(crate::sweep::Options {
        plan: a.plan,
        dry_run: a.dry_run,
        no_history: a.no_history,
        json: a.json,
        tag: a.tag,
    })
}
