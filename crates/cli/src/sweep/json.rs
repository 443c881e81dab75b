//! The `plumb.sweep/1` document `--json` writes (saved.rs reads it back): the plan, and
//! every run kept with its point's values and its whole record.

use std::path::Path;

use super::points::{Done, Point};
use super::stop::Cause;

pub(super) fn write(
    path: &Path,
    sweep_id: Option<i64>,
    plan: &str,
    points: &[Point],
    keys: &[&str],
    done: &[Done],
    stopped: Option<&Cause>,
) -> anyhow::Result<()> {
    let (interrupted, error) = match stopped {
        Some(Cause::Signal(_)) => (true, None),
        Some(Cause::Error { line, .. }) => (false, Some(line)),
        None => (false, None),
    };
    let pts: Vec<serde_json::Value> = done
        .iter()
        .map(|d| {
            let values: serde_json::Map<String, serde_json::Value> = keys
                .iter()
                .zip(&points[d.point].values)
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "point": d.point + 1,
                "repeat": d.repeat,
                "values": values,
                "run_id": d.run_id,
                "record": d.record,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "schema": "plumb.sweep/1",
        "sweep_id": sweep_id,
        "plan": plan,
        "points_planned": points.len(),
        "interrupted": interrupted,
        "error": error,
        "runs": pts,
    });
    std::fs::write(path, format!("{}\n", serde_json::to_string_pretty(&doc)?))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}
