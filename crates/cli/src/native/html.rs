//! `plumb html RUN... -o FILE`: one self-contained HTML page with charts (plumb-report's
//! `html` renderer): a run alone, several runs on the same axes (two: with `plumb compare`'s
//! figures), or a sweep (`sweep:ID` from the history, or a `plumb sweep --json` file).
//! Runs are named as `plumb compare` names them; findings are evaluated again by today's
//! rules, as `plumb show` does. See docs/html.md.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use plumb_history::{Side, Store};
use plumb_pipeline::Record;

use super::{compare, report, when};
use crate::exit::UsageError;
use crate::sweep::table::{self, Merged};

/// Runs drawn on one page at most: beyond that the lines cannot be told apart.
pub const MAX_RUNS: usize = 8;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Runs: an id, a tag (its newest run), baseline:NAME or a result file; two or more are
    /// drawn on the same axes. Or one sweep: sweep:ID, or a plumb sweep --json file
    #[arg(value_name = "RUN", required = true, num_args = 1..)]
    runs: Vec<String>,
    /// Write the page to FILE (whole or not at all); without it, stdout when that is not a
    /// terminal
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// What one argument names.
enum Named {
    Run(Side, Vec<String>),
    Sweep(plumb_report::html::Sweep),
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    if a.output.is_none() && std::io::stdout().is_terminal() {
        return Err(UsageError(
            "plumb html writes a page, not text for a terminal: give -o FILE (or redirect stdout)"
                .into(),
        )
        .into());
    }
    if a.runs.len() > MAX_RUNS {
        return Err(UsageError(format!(
            "plumb html draws at most {MAX_RUNS} runs on one page ({} given)",
            a.runs.len()
        ))
        .into());
    }
    let mut store = None;
    let mut named = Vec::new();
    for r in &a.runs {
        named.push(name(r, &mut store)?);
    }
    let sweeps = named
        .iter()
        .filter(|n| matches!(n, Named::Sweep(_)))
        .count();
    let page = match named.as_slice() {
        [Named::Sweep(s)] => plumb_report::html::sweep(s),
        _ if sweeps > 0 => {
            return Err(UsageError(
                "plumb html draws a sweep alone: plumb html sweep:ID -o FILE".into(),
            )
            .into())
        }
        _ => {
            let sides: Vec<(Side, Vec<String>)> = named
                .into_iter()
                .map(|n| match n {
                    Named::Run(s, t) => (s, t),
                    Named::Sweep(_) => unreachable!("refused above"),
                })
                .collect();
            let rows = match sides.as_slice() {
                [(a, _), (b, _)] => compare::figure_rows(&plumb_history::compare(a, b)),
                _ => Vec::new(),
            };
            let runs: Vec<plumb_report::html::Run> = sides
                .iter()
                .map(|(s, tags)| plumb_report::html::Run {
                    label: s.label.clone(),
                    when: when::format(s.record.started_at_unix_s),
                    tags: tags.clone(),
                    record: &s.record,
                })
                .collect();
            if runs.len() == 1 {
                plumb_report::html::run(&runs[0])
            } else {
                plumb_report::html::runs(&runs, &rows)
            }
        }
    };
    match &a.output {
        Some(path) => write(path, &page)?,
        None => super::print_out(&page),
    }
    Ok(0)
}

/// A run (as `plumb compare` resolves it, with its tags) or a sweep.
fn name(s: &str, store: &mut Option<Store>) -> anyhow::Result<Named> {
    if let Some(id) = s.strip_prefix("sweep:") {
        let id: i64 = id
            .parse()
            .map_err(|_| UsageError(format!("'{s}': a sweep is named sweep:ID (a number)")))?;
        let st = opened(store)?;
        let sw = st.sweep(id)?;
        let mut runs = Vec::new();
        for (run, point) in &sw.runs {
            let mut record = st.record(*run)?;
            report::refresh(&mut record);
            let values = point
                .values
                .split(' ')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            runs.push(SweepRun {
                point: point.index as usize,
                label: format!("run {run}"),
                values,
                record,
            });
        }
        return Ok(Named::Sweep(sweep_page(
            format!("sweep {id}"),
            sw.started_at_unix_s,
            Some(sw.plan),
            runs,
        )));
    }
    if s.contains('/') || s.ends_with(".json") {
        let text = std::fs::read_to_string(s).with_context(|| format!("cannot read {s}"))?;
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) {
            if doc["schema"] == "plumb.sweep/1" {
                return sweep_file(s, &doc).map(Named::Sweep);
            }
        }
    }
    let mut side = compare::load(s, store)?;
    report::refresh(&mut side.record);
    let tags = match plumb_history::RunRef::parse(s) {
        Ok(plumb_history::RunRef::File(_)) | Err(_) => Vec::new(),
        Ok(r) => {
            let st = opened(store)?;
            st.summary(st.resolve(&r)?)?.tags
        }
    };
    Ok(Named::Run(side, tags))
}

fn opened(store: &mut Option<Store>) -> anyhow::Result<&Store> {
    if store.is_none() {
        *store = Some(Store::open_default()?);
    }
    Ok(store.as_ref().expect("opened above"))
}

/// A `plumb sweep --json` document.
fn sweep_file(path: &str, doc: &serde_json::Value) -> anyhow::Result<plumb_report::html::Sweep> {
    let bad = |why: &str| anyhow::anyhow!("{path}: not a plumb.sweep/1 document: {why}");
    let mut runs = Vec::new();
    for r in doc["runs"].as_array().ok_or_else(|| bad("no runs"))? {
        let point = r["point"]
            .as_u64()
            .ok_or_else(|| bad("a run without its point"))?;
        let values = r["values"]
            .as_object()
            .ok_or_else(|| bad("a run without its values"))?
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        let mut record = Record::from_json(&r["record"].to_string())
            .with_context(|| format!("{path}: point {point}"))?;
        report::refresh(&mut record);
        let label = r["run_id"]
            .as_i64()
            .map_or(format!("point {point}"), |id| format!("run {id}"));
        runs.push(SweepRun {
            point: point as usize,
            label,
            values,
            record,
        });
    }
    let started = runs
        .iter()
        .map(|r| r.record.started_at_unix_s)
        .min()
        .unwrap_or(0);
    let plan = doc["plan"].as_str().map(str::to_string);
    Ok(sweep_page(path.to_string(), started, plan, runs))
}

/// One run of a sweep, wherever it was read from.
struct SweepRun {
    /// The point's number in the sweep.
    point: usize,
    /// `run 12`, or `point 3` for a run not kept in the history.
    label: String,
    /// The point's values by key.
    values: Vec<(String, String)>,
    record: Record,
}

/// A sweep's page from its runs, merged per point as `plumb sweep`'s table merges them.
fn sweep_page(
    label: String,
    started: u64,
    plan: Option<String>,
    runs: Vec<SweepRun>,
) -> plumb_report::html::Sweep {
    // The keys in the plan's order: as the history keeps them; a JSON file's object is in
    // name order, so the plan's text orders them when it names them.
    let mut keys: Vec<String> = Vec::new();
    for r in &runs {
        for (k, _) in &r.values {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    if let Some(p) = &plan {
        let matrix = p.find("[matrix]").map_or("", |i| &p[i..]);
        keys.sort_by_key(|k| {
            matrix
                .lines()
                .position(|l| {
                    let l = l.trim_start().trim_start_matches("--");
                    l.strip_prefix(k.as_str())
                        .is_some_and(|r| r.trim_start().starts_with('='))
                })
                .unwrap_or(usize::MAX)
        });
    }
    let mut order: Vec<usize> = runs.iter().map(|r| r.point).collect();
    order.sort();
    order.dedup();
    let unit = runs
        .first()
        .map_or("events/s", |r| unit_of(&r.record))
        .to_string();
    let mut points = Vec::new();
    let mut values_of = Vec::new();
    let mut per_s = Vec::new();
    for idx in &order {
        let mine: Vec<&SweepRun> = runs.iter().filter(|r| r.point == *idx).collect();
        let m = Merged::of(mine.iter().map(|r| &r.record));
        let values: Vec<String> = keys
            .iter()
            .map(|k| {
                mine[0]
                    .values
                    .iter()
                    .find(|(n, _)| n == k)
                    .map_or(String::new(), |(_, v)| v.clone())
            })
            .collect();
        per_s.push(Some(m.rate()));
        values_of.push(values.clone());
        points.push(plumb_report::html::SweepPoint {
            values,
            runs: mine.iter().map(|r| r.label.clone()).collect(),
            per_s: m.rate(),
            p95_ns: m.hist.percentile(95.0),
            p99_ns: m.hist.percentile(99.0),
            findings: m.findings,
        });
    }
    let lines = table::lines(keys.len(), &values_of, &per_s)
        .into_iter()
        .map(|l| plumb_report::html::SweepLine {
            key: l.key,
            at: l
                .others
                .iter()
                .map(|(j, v)| format!("{}={v}", keys[*j]))
                .collect::<Vec<_>>()
                .join(" "),
            points: l.points,
            knee: l.knee,
        })
        .collect();
    let knee_rule = format!(
        "Knee, as plumb sweep marks it: along each line of points that agree on the other variables, {}; the knee is the value before that step.",
        table::knee_rule(&unit)
    );
    plumb_report::html::Sweep {
        label,
        when: when::format(started),
        plan,
        unit,
        keys,
        points,
        lines,
        knee_rule,
    }
}

/// What a sweep's throughput is counted in, as `plumb sweep` says it.
fn unit_of(r: &Record) -> &'static str {
    match (
        r.front_end.as_str(),
        r.jobs().next().map(|j| j.workload.test()),
    ) {
        (_, Some("oltp")) => "tps",
        ("fio", _) => "IOPS",
        _ => "events/s",
    }
}

/// The page written whole or not at all: into a temporary file beside `path`, then renamed.
fn write(path: &Path, page: &str) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("cannot write {}: not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.plumb-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(page.as_bytes()).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        anyhow::bail!("cannot write {}: {e}", path.display());
    }
    Ok(())
}
