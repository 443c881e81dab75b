//! `plumb history`: the runs kept in the history, newest first, with the filters the store
//! indexes; `plumb history import FILE.json...` keeps saved results (from another machine,
//! or runs made with --no-history).

use anyhow::Context;
use clap::Subcommand;
use plumb_history::{Filter, RunSummary, Store};
use plumb_pipeline::Record;

use super::text::{command_line, latency, table};
use super::when::{self, End};
use crate::exit::UsageError;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Runs of this test, front end, job or workload (cpu, oltp_read_write, fio, fileio)
    #[arg(long, value_name = "NAME")]
    test: Option<String>,
    /// Runs made on this host (its hostname)
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Runs started at or after TIME: YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]' (local time) or an
    /// age such as 12h, 7d, 2w
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Runs started before TIME (a date alone: until the end of that day)
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Runs carrying this tag (repeat it: runs carrying every one)
    #[arg(long = "tag", value_name = "NAME")]
    tags: Vec<String>,
    /// The runs of one sweep (plumb sweep prints its id), with each run's point
    #[arg(long, value_name = "ID")]
    sweep: Option<i64>,
    /// At most N runs, newest first (0: all of them)
    #[arg(long, value_name = "N", default_value_t = 20)]
    limit: u64,
    /// The runs as one JSON document (plumb.history/1) on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Keep saved results (--json=FILE, --format=json) in the history, e.g. from another
    /// machine
    Import {
        #[arg(value_name = "FILE.json", required = true)]
        files: Vec<std::path::PathBuf>,
        /// Label the imported runs (repeatable)
        #[arg(long = "tag", value_name = "NAME")]
        tags: Vec<String>,
    },
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    if let Some(Action::Import { files, tags }) = a.action {
        return import(&files, &tags);
    }
    let now = when::now();
    let time = |s: &Option<String>, end, opt: &str| -> anyhow::Result<Option<u64>> {
        s.as_deref()
            .map(|s| when::parse(s, end, now).map_err(|e| UsageError(format!("--{opt}: {e}"))))
            .transpose()
            .map_err(Into::into)
    };
    let filter = Filter {
        test: a.test,
        host: a.host,
        since: time(&a.since, End::Since, "since")?,
        until: time(&a.until, End::Until, "until")?,
        tags: a.tags,
        sweep: a.sweep,
        limit: (a.limit > 0).then_some(a.limit),
    };
    let store = Store::open_default()?;
    if let Some(id) = filter.sweep {
        // A sweep that does not exist is a mistake, as compare and html say, not an empty
        // listing.
        store.sweep(id)?;
    }
    let runs = store.list(&filter)?;
    let total = store.count(&filter)?;
    if a.json {
        let doc = serde_json::json!({
            "schema": "plumb.history/1",
            "database": store.path(),
            "total": total,
            "runs": runs,
        });
        super::print_out(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
        return Ok(0);
    }
    if runs.is_empty() {
        eprintln!("plumb: no runs match in {}", store.path().display());
        return Ok(0);
    }
    super::print_out(&listing(&runs));
    if total > runs.len() as u64 {
        eprintln!(
            "plumb: the newest {} of {total} runs (--limit=0 lists all)",
            runs.len()
        );
    }
    Ok(0)
}

fn listing(runs: &[RunSummary]) -> String {
    let mut rows = vec![[
        "ID", "STARTED", "HOST", "TEST", "THREADS", "TIME", "EVENTS/S", "P95", "FINDINGS", "TAGS",
        "SWEEP", "COMMAND",
    ]
    .map(str::to_string)
    .to_vec()];
    for r in runs {
        let dash = |s: String| if s.is_empty() { "-".to_string() } else { s };
        let mut status = String::new();
        if r.status != "completed" {
            status = format!(" ({})", r.status);
        }
        rows.push(vec![
            r.id.to_string(),
            when::format(r.started_at_unix_s),
            dash(r.host.clone()),
            format!("{}{status}", r.test),
            r.threads.to_string(),
            format!("{:.1}s", r.duration_s),
            format!("{:.2}", r.events_per_s),
            r.latency_p95_ns
                .map_or("-".to_string(), |v| latency(v as f64)),
            dash(findings(r)),
            dash(r.tags.join(",")),
            sweep(r),
            command_line(&r.command_line),
        ]);
    }
    table(&rows, &[0, 4, 5, 6, 7], "")
}

/// The sweep a run belongs to and its point in it (`3: threads=4 table-size=100`).
fn sweep(r: &RunSummary) -> String {
    match (r.sweep_id, &r.sweep_point) {
        (Some(id), Some(p)) => format!("{id}: {p}"),
        (Some(id), None) => id.to_string(),
        _ => "-".to_string(),
    }
}

fn findings(r: &RunSummary) -> String {
    let f = r.findings;
    [
        (f.invalid, "invalid"),
        (f.caution, "caution"),
        (f.info, "info"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect::<Vec<_>>()
    .join(", ")
}

fn import(files: &[std::path::PathBuf], tags: &[String]) -> anyhow::Result<i32> {
    for t in tags {
        crate::keep::check_tag(t).map_err(UsageError)?;
    }
    // Every file is read and checked before any is kept: all or nothing.
    enum Doc {
        Run(Box<Record>),
        Sweep(plumb_history::SweepSide, u32),
    }
    let mut docs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        let shown = f.to_string_lossy();
        let sweep = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .filter(|d| d["schema"] == "plumb.sweep/1");
        docs.push(match sweep {
            // A sweep run with --no-history, kept later as a sweep of its own.
            Some(d) => {
                let planned = d["points_planned"].as_u64().unwrap_or(0) as u32;
                let side = crate::sweep::saved::from_file(&shown, &d)?;
                Doc::Sweep(side, planned)
            }
            None => Doc::Run(Box::new(
                Record::from_json(&text).with_context(|| format!("{}", f.display()))?,
            )),
        });
    }
    let mut store = Store::open_default()?;
    for (f, doc) in files.iter().zip(&docs) {
        match doc {
            Doc::Run(r) => {
                let id = store.add(r, tags, None)?;
                super::print_out(&format!("{}: kept as run {id}\n", f.display()));
            }
            Doc::Sweep(s, planned) => {
                let id = import_sweep(&mut store, s, *planned, tags)?;
                super::print_out(&format!(
                    "{}: kept as sweep {id} ({} run(s); plumb history --sweep={id})\n",
                    f.display(),
                    s.runs.len()
                ));
            }
        }
    }
    Ok(0)
}

/// Keep a `plumb sweep --json` document as a new sweep: its plan, each run at its point
/// (the values in the plan's order, as the sweep names them), and how it ended.
fn import_sweep(
    store: &mut Store,
    s: &plumb_history::SweepSide,
    planned: u32,
    tags: &[String],
) -> anyhow::Result<i64> {
    let id = store.new_sweep(s.started_at_unix_s, s.plan.as_deref().unwrap_or_default())?;
    let keys = s.keys();
    let mut repeats: std::collections::HashMap<usize, u32> = Default::default();
    for r in &s.runs {
        let repeat = repeats.entry(r.point).or_insert(0);
        *repeat += 1;
        let values = keys
            .iter()
            .filter_map(|k| {
                let (_, v) = r.values.iter().find(|(n, _)| n == k)?;
                Some(format!("{k}={v}"))
            })
            .collect::<Vec<_>>()
            .join(" ");
        let at = plumb_history::SweepPoint {
            sweep: id,
            index: r.point as u32,
            repeat: *repeat,
            values,
        };
        store.add_point(&r.record, tags, &at)?;
    }
    store.end_sweep(id, planned, s.stopped.as_deref().unwrap_or("completed"))?;
    Ok(id)
}

/// The run `s` names in the history (an id, a tag or baseline:NAME); a file is refused
/// with what `command` takes instead.
pub fn resolve(store: &Store, s: &str, command: &str) -> anyhow::Result<i64> {
    match plumb_history::RunRef::parse(s).map_err(UsageError)? {
        plumb_history::RunRef::File(p) => Err(UsageError(format!(
            "plumb {command} takes a run in the history (an id, a tag or baseline:NAME), not a file: {} (plumb history import keeps it)",
            p.display()
        ))
        .into()),
        r => Ok(store.resolve(&r)?),
    }
}
