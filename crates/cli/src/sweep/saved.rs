//! A sweep named on the command line: `sweep:ID` (the history) or a `plumb sweep --json`
//! file (`plumb.sweep/1`). `plumb html` draws one, `plumb compare` puts two side by side.

use anyhow::Context;
use plumb_history::{Store, SweepRun, SweepSide};
use plumb_pipeline::Record;

use crate::exit::UsageError;

/// The sweep `s` names, or None when it names something else (a run, a result file).
pub fn named(s: &str, store: &mut Option<Store>) -> anyhow::Result<Option<SweepSide>> {
    if let Some(id) = s.strip_prefix("sweep:") {
        let id: i64 = id
            .parse()
            .map_err(|_| UsageError(format!("'{s}': a sweep is named sweep:ID (a number)")))?;
        return from_history(id, opened(store)?).map(Some);
    }
    if s.contains('/') || s.ends_with(".json") {
        let text = std::fs::read_to_string(s).with_context(|| format!("cannot read {s}"))?;
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) {
            if doc["schema"] == "plumb.sweep/1" {
                return from_file(s, &doc).map(Some);
            }
        }
    }
    Ok(None)
}

/// The history, opened on first need.
pub fn opened(store: &mut Option<Store>) -> anyhow::Result<&Store> {
    if store.is_none() {
        *store = Some(Store::open_default()?);
    }
    Ok(store.as_ref().expect("opened above"))
}

fn from_history(id: i64, st: &Store) -> anyhow::Result<SweepSide> {
    let sw = st.sweep(id)?;
    let mut runs = Vec::new();
    for (run, point) in &sw.runs {
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
            record: st.record(*run)?,
        });
    }
    // A sweep killed outright never wrote how it ended: its runs are all that is known.
    let stopped = match sw.ended.as_deref() {
        Some("completed") => None,
        Some(why) => Some(why.to_string()),
        None => Some("no end recorded (still running, or killed outright)".to_string()),
    };
    Ok(SweepSide {
        label: format!("sweep {id}"),
        started_at_unix_s: sw.started_at_unix_s,
        stopped,
        command: command_of(&sw.plan),
        plan: Some(sw.plan),
        runs,
    })
}

/// A `plumb sweep --json` document.
pub(crate) fn from_file(path: &str, doc: &serde_json::Value) -> anyhow::Result<SweepSide> {
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
        let record = Record::from_json(&r["record"].to_string())
            .with_context(|| format!("{path}: point {point}"))?;
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
    let points_done = {
        let mut p: Vec<usize> = runs.iter().map(|r| r.point).collect();
        p.dedup();
        p.len()
    };
    let planned = doc["points_planned"].as_u64().unwrap_or(0);
    let stopped = match (doc["interrupted"].as_bool(), doc["error"].as_str()) {
        (Some(true), _) => Some(format!(
            "stopped by a signal: {points_done} of {planned} point(s) done"
        )),
        (_, Some(e)) => Some(format!(
            "stopped by an error: {points_done} of {planned} point(s) done ({e})"
        )),
        _ => None,
    };
    Ok(SweepSide {
        label: path.to_string(),
        started_at_unix_s: started,
        stopped,
        command: plan.as_deref().and_then(command_of),
        plan,
        runs,
    })
}

/// The plan's `command`.
fn command_of(plan: &str) -> Option<String> {
    let t: toml::Table = toml::from_str(plan).ok()?;
    t.get("command")?.as_str().map(str::to_string)
}
