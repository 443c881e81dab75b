//! The sweep's results on stdout: a line as each run ends, then the table of every point
//! done (its runs merged) and the knee of each swept variable.

use super::points::{Done, Point};
use super::table::{self, Merged};
use crate::native::text::{latency, table};

/// The line a run gets as it ends: `label` names its point, one of `n`.
pub(super) fn point_line(d: &Done, label: &str, unit: &str, n: usize) -> String {
    let m = Merged::of(std::iter::once(&d.record));
    let ids = m.ids();
    let p95 = m
        .hist
        .percentile(95.0)
        .map_or("-".into(), |v| latency(v as f64));
    let run = d.run_id.map_or(String::new(), |id| format!("  run {id}"));
    let rep = if d.repeat > 1 {
        format!(" #{}", d.repeat)
    } else {
        String::new()
    };
    format!(
        "point {}/{n}{rep}: {}  {:.2} {unit}  p95 {p95}  findings: {}{run}",
        d.point + 1,
        label,
        m.rate(),
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(",")
        }
    )
}

/// The table of every point done (its runs merged: events over measured time, histograms
/// added), then each swept variable's knee.
pub(super) fn summary(points: &[Point], keys: &[&str], done: &[Done], unit: &str) -> String {
    let mut head: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    head.extend(["runs", unit, "p95", "p99", "findings"].map(str::to_string));
    let mut rows = vec![head];
    let mut tput: Vec<Option<f64>> = vec![None; points.len()];
    for (i, pt) in points.iter().enumerate() {
        let runs: Vec<&Done> = done.iter().filter(|d| d.point == i).collect();
        if runs.is_empty() {
            continue;
        }
        let m = Merged::of(runs.iter().map(|d| &d.record));
        let r = m.rate();
        tput[i] = Some(r);
        let pct = |p| {
            m.hist
                .percentile(p)
                .map_or("-".into(), |v| latency(v as f64))
        };
        let mut row = pt.values.clone();
        row.extend([
            runs.len().to_string(),
            format!("{r:.2}"),
            pct(95.0),
            pct(99.0),
            if m.findings.is_empty() {
                "-".into()
            } else {
                m.ids().join(",")
            },
        ]);
        rows.push(row);
    }
    let k = keys.len();
    let mut s = String::from("\nSweep results:\n");
    s.push_str(&table(&rows, &[k, k + 1, k + 2, k + 3], "  "));
    s.push_str(&format!(
        "\nKnee (per swept variable, along points that agree on the others: {}):\n",
        table::knee_rule(unit)
    ));
    let values: Vec<Vec<String>> = points.iter().map(|p| p.values.clone()).collect();
    let lines = table::lines(keys.len(), &values, &tput);
    for (k, key) in keys.iter().enumerate() {
        if let Some(why) = table::no_line(k, key, &values, &lines) {
            s.push_str(&format!("  {key}: no knee: {why}\n"));
        }
        for line in lines.iter().filter(|l| l.key == k) {
            s.push_str(&knee_line(key, line, keys, points));
        }
    }
    s
}

/// A line's knee, or that it has none.
fn knee_line(key: &str, line: &table::Line, keys: &[&str], points: &[Point]) -> String {
    let at: Vec<String> = line
        .others
        .iter()
        .map(|(j, x)| format!("{}={x}", keys[*j]))
        .collect();
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" ({})", at.join(" "))
    };
    match line.knee {
        Some(i) => format!("  {key}: knee at {}{at}\n", points[i].values[line.key]),
        None => {
            format!("  {key}: no knee: still growing by more than 10% at its last step{at}\n")
        }
    }
}
