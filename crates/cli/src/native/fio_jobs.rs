//! plumb's commands built on fio jobs (`disk`, `hdparm`): their fio arguments go through
//! the fio front end's `check` (the same parser and plan as `plumb fio`), then run with the
//! command's own layout and are kept in the history like any run.

use std::path::PathBuf;

use plumb_pipeline::Layout;

use crate::exit;
use crate::keep::{check_tag, keep, Keep};

/// The options every such command takes.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Also write the record as JSON (plumb report FILE shows it again)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Do not keep the run in plumb's history
    #[arg(long)]
    pub no_history: bool,
    /// Label the run in the history (repeatable)
    #[arg(long, value_name = "NAME")]
    pub tag: Vec<String>,
}

impl RunArgs {
    /// Refuse a bad tag before anything is printed or run.
    pub fn check(&self) -> anyhow::Result<()> {
        for t in &self.tag {
            check_tag(t).map_err(exit::UsageError)?;
        }
        Ok(())
    }
}

/// Run `fio_args` as the command `front_end` with `layout`; `choices` are the layout's
/// rendering choices, kept in the record for replays. Returns the exit status.
pub fn run(
    mut fio_args: Vec<String>,
    front_end: &'static str,
    layout: &dyn Layout,
    choices: Option<serde_json::Value>,
    r: &RunArgs,
) -> anyhow::Result<i32> {
    if let Some(j) = &r.json {
        fio_args.push(format!("--plumb-json={}", j.display()));
    }
    let mut built = crate::fio::run::check(&fio_args).map_err(|e| anyhow::anyhow!("{e}"))?;
    built.plan.front_end = front_end;
    let typed: Vec<String> = std::env::args().skip(1).collect();
    built.plan.command_line =
        plumb_core::redact::args(std::iter::once("plumb").chain(typed.iter().map(String::as_str)));
    built.plan.layout = choices;
    let stop = crate::signals::install();
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let mut quiet = plumb_core::progress::Quiet;
    let mut out = plumb_pipeline::Output {
        report: &mut stdout,
        diagnostics: &mut stderr,
        progress: &mut quiet,
        live: None,
    };
    let finished = plumb_pipeline::execute(&built.plan, layout, &stop, &mut out)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    keep(&finished.record, &Keep::plumb(r.no_history, r.tag.clone()));
    Ok(exit::of_finished(&finished))
}
