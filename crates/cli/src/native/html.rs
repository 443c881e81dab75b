//! `plumb html RUN... -o FILE`: one self-contained HTML page with charts (plumb-report's
//! `html` renderer): a run alone, several runs on the same axes (two: with `plumb compare`'s
//! figures), or a sweep (`sweep:ID` from the history, or a `plumb sweep --json` file).
//! Runs are named as `plumb compare` names them; findings are evaluated again by today's
//! rules, as `plumb show` does. See docs/html.md.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use plumb_history::{Side, Store, SweepSide};

use super::{compare, report, when};
use crate::exit::UsageError;
use crate::sweep::saved;
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
    if let Some(mut sweep) = saved::named(s, store)? {
        for r in &mut sweep.runs {
            report::refresh(&mut r.record);
        }
        return Ok(Named::Sweep(sweep_page(&sweep)));
    }
    let mut side = compare::load(s, store)?;
    report::refresh(&mut side.record);
    let tags = match plumb_history::RunRef::parse(s) {
        Ok(plumb_history::RunRef::File(_)) | Err(_) => Vec::new(),
        Ok(r) => {
            let st = saved::opened(store)?;
            st.summary(st.resolve(&r)?)?.tags
        }
    };
    Ok(Named::Run(side, tags))
}

/// A sweep's page from its runs, merged per point as `plumb sweep`'s table merges them.
fn sweep_page(sweep: &SweepSide) -> plumb_report::html::Sweep {
    let keys = sweep.keys();
    let unit = sweep.unit().to_string();
    let mut points = Vec::new();
    let mut values_of = Vec::new();
    let mut per_s = Vec::new();
    for p in sweep.points() {
        let m = Merged::of(p.runs.iter().map(|r| &r.record));
        per_s.push(Some(m.rate()));
        values_of.push(p.values.clone());
        points.push(plumb_report::html::SweepPoint {
            values: p.values,
            runs: p.runs.iter().map(|r| r.label.clone()).collect(),
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
        label: sweep.label.clone(),
        when: when::format(sweep.started_at_unix_s),
        plan: sweep.plan.clone(),
        stopped: sweep.stopped.clone(),
        unit,
        keys,
        points,
        lines,
        knee_rule,
    }
}

/// The page written whole or not at all: into a temporary file beside `path`, then renamed.
/// A symbolic link is followed (the file it names is replaced, not the link); what is not
/// a regular file (`/dev/stdout`, a FIFO, a device) is written to as it is, never replaced.
fn write(path: &Path, page: &str) -> anyhow::Result<()> {
    let shown = path.display();
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| anyhow::anyhow!("cannot write {shown}: the link leads nowhere: {e}"))?,
        _ => path.to_path_buf(),
    };
    let path = path.as_path();
    if let Ok(m) = std::fs::metadata(path) {
        if m.is_dir() {
            anyhow::bail!("cannot write {shown}: it is a directory");
        }
        if !m.is_file() {
            return std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|mut f| f.write_all(page.as_bytes()))
                .map_err(|e| anyhow::anyhow!("cannot write {shown}: {e}"));
        }
    }
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
        anyhow::bail!("cannot write {shown}: {e}");
    }
    Ok(())
}
