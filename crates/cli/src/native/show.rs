//! `plumb show ID|TAG`: a run kept in the history, printed as the run printed it (what
//! `plumb report` prints for the same record), or its record with `--format=json`.

use plumb_history::Store;

use super::report::{render, Format};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run: its id (plumb history), a tag (its newest run) or baseline:NAME
    #[arg(value_name = "ID|TAG")]
    run: String,
    /// text: the report as the run printed it; json: its record, findings re-evaluated
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let store = Store::open_default()?;
    let id = super::history::resolve(&store, &a.run, "show")?;
    let out = render(store.record(id)?, a.format)?;
    super::print_out(&out);
    Ok(0)
}
