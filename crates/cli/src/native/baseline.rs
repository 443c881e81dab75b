//! `plumb baseline set NAME ID`, `plumb baseline list`: named reference runs, for
//! `plumb compare baseline:NAME ID`. A baseline names one run; setting it again moves it.

use clap::Subcommand;
use plumb_history::Store;

use super::text::table;
use super::when;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Make NAME name run ID (an id, a tag or another baseline:NAME)
    Set {
        #[arg(value_name = "NAME")]
        name: String,
        #[arg(value_name = "ID")]
        run: String,
    },
    /// The baselines and their runs
    List {
        /// As one JSON document (plumb.baselines/1) on stdout
        #[arg(long)]
        json: bool,
    },
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    match a.action {
        Action::Set { name, run } => {
            plumb_history::check_name("baseline", &name).map_err(crate::exit::UsageError)?;
            let mut store = Store::open_default()?;
            let id = super::history::resolve(&store, &run, "baseline set")?;
            let before = store.set_baseline(&name, id)?;
            let was = match before {
                Some(b) if b != id => format!(" (was run {b})"),
                _ => String::new(),
            };
            super::print_out(&format!("baseline '{name}' is run {id}{was}\n"));
        }
        Action::List { json } => {
            let store = Store::open_default()?;
            let baselines = store.baselines()?;
            if json {
                let doc =
                    serde_json::json!({"schema": "plumb.baselines/1", "baselines": baselines});
                super::print_out(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
                return Ok(0);
            }
            if baselines.is_empty() {
                eprintln!(
                    "plumb: no baselines in {} (plumb baseline set NAME ID)",
                    store.path().display()
                );
                return Ok(0);
            }
            let mut rows = vec![["BASELINE", "RUN", "SET", "TEST", "HOST", "STARTED"]
                .map(str::to_string)
                .to_vec()];
            for b in &baselines {
                let s = store.summary(b.run_id)?;
                rows.push(vec![
                    b.name.clone(),
                    b.run_id.to_string(),
                    when::format(b.set_at_unix_s),
                    s.test,
                    s.host,
                    when::format(s.started_at_unix_s),
                ]);
            }
            super::print_out(&table(&rows, &[1], ""));
        }
    }
    Ok(0)
}
