//! `plumb tag ID NAME`: label a kept run (then `plumb show NAME`, `plumb compare NAME ...`,
//! `plumb history --tag=NAME`).

use plumb_history::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run: its id, a tag or baseline:NAME
    #[arg(value_name = "ID")]
    run: String,
    /// The label: letters, digits, '.', '_' or '-', not a number alone
    #[arg(value_name = "NAME")]
    name: String,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    crate::keep::check_tag(&a.name).map_err(crate::exit::UsageError)?;
    let mut store = Store::open_default()?;
    let id = super::history::resolve(&store, &a.run, "tag")?;
    let new = store.tag(id, &a.name)?;
    let already = if new { "" } else { " (already)" };
    super::print_out(&format!("run {id} tagged '{}'{already}\n", a.name));
    Ok(0)
}
