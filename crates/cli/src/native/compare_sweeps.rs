//! `plumb compare sweep:A sweep:B` as text: the two sweeps, what differs between them, one
//! row per point both ran (throughput, p95 and p99 of A and B, each ratio B/A and its
//! verdict in `plumb compare`'s words), seed 002's comparability checks per point with
//! their warnings (and what differs at that point alone) under it, the points only one
//! ran, the noise method.

use std::fmt::Write as _;

use plumb_history::compare::{CheckVerdict, Figure, SweepComparison, SweepInfo};

use super::compare::{check_verdict, check_warning, differences, value, verdict};
use super::text::table;
use super::when;

pub fn render(c: &SweepComparison) -> String {
    let mut out = String::new();
    for (name, s) in [("A", &c.a), ("B", &c.b)] {
        side(&mut out, name, s);
    }
    out.push('\n');
    differences(&mut out, &c.differences);
    let _ = writeln!(
        out,
        "\nPoints both sweeps ran ({}): {} (all events over all measured time of the point's runs), p95 and p99 (their histograms merged):",
        c.points.len(),
        c.unit
    );
    if c.points.is_empty() {
        out.push_str("  none\n");
    } else {
        out.push_str(&points(c));
        out.push_str(
            "\nComparability per point (seed 002: these must match before two I/O results are compared; each side's figure is the mean of the point's runs):\n",
        );
        out.push_str(&checks(c));
    }
    for (name, only) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !only.is_empty() {
            let _ = writeln!(out, "\nOnly in {name} ({}):", only.len());
            for p in only {
                let _ = writeln!(out, "  {p}");
            }
        }
    }
    let _ = writeln!(out, "\nNoise: {}.", c.noise_method);
    out
}

fn side(out: &mut String, name: &str, s: &SweepInfo) {
    let _ = writeln!(
        out,
        "{name}: {}, {}, {}: {} ({} point(s), {} run(s); swept: {})",
        s.label,
        when::format(s.started_at_unix_s),
        s.host.as_deref().unwrap_or("unknown host"),
        s.command.as_deref().unwrap_or("command unknown"),
        s.points,
        s.runs,
        s.keys.join(" ")
    );
}

/// One row per point: its values, then throughput (A, B, B/A, interval, verdict), p95 (A,
/// B, B/A, verdict) and p99 (A, B, B/A).
fn points(c: &SweepComparison) -> String {
    let keys = &c.a.keys;
    let mut head: Vec<String> = keys.clone();
    let unit = c.unit;
    head.extend(
        [
            &format!("A {unit}"),
            &format!("B {unit}"),
            "B/A",
            "95% interval",
            "verdict",
            "A p95",
            "B p95",
            "B/A",
            "verdict",
            "A p99",
            "B p99",
            "B/A",
        ]
        .map(str::to_string),
    );
    let mut rows = vec![head];
    for p in &c.points {
        let mut row: Vec<String> = keys
            .iter()
            .map(|k| p.values.get(k).cloned().unwrap_or_default())
            .collect();
        let fig = |i: usize| p.figures.get(i);
        let ratio = |f: Option<&Figure>| {
            f.and_then(|f| f.ratio)
                .map_or("-".to_string(), |r| format!("{r:.3}"))
        };
        let v = |f: Option<&Figure>, b: bool| {
            f.map_or("-".to_string(), |f| {
                value(f.unit, if b { f.b } else { f.a })
            })
        };
        let (t, p95, p99) = (fig(0), fig(1), fig(2));
        row.extend([
            v(t, false),
            v(t, true),
            ratio(t),
            t.and_then(|f| f.interval)
                .map_or("-".to_string(), |i| format!("{:.3}..{:.3}", i.low, i.high)),
            t.map_or("-".to_string(), verdict),
            v(p95, false),
            v(p95, true),
            ratio(p95),
            p95.map_or("-".to_string(), verdict),
            v(p99, false),
            v(p99, true),
            ratio(p99),
        ]);
        rows.push(row);
    }
    let k = keys.len();
    table(
        &rows,
        &[k, k + 1, k + 2, k + 5, k + 6, k + 7, k + 9, k + 10, k + 11],
        "  ",
    )
}

/// One row per point: its values, then each check's verdict (over the point's groups: DIFFER
/// when one differs); under a row, the warnings of the checks that differ and what differs
/// at that point alone.
fn checks(c: &SweepComparison) -> String {
    let keys = &c.a.keys;
    let mut names: Vec<&str> = Vec::new();
    for ch in c.points.iter().flat_map(|p| &p.checks) {
        if !names.contains(&ch.name) {
            names.push(ch.name);
        }
    }
    let mut head = keys.clone();
    head.extend(names.iter().map(|n| n.to_string()));
    let mut rows = vec![head];
    let mut under = vec![Vec::new()];
    for p in &c.points {
        let mut row: Vec<String> = keys
            .iter()
            .map(|k| p.values.get(k).cloned().unwrap_or_default())
            .collect();
        let groups = p
            .checks
            .iter()
            .map(|ch| ch.group)
            .max()
            .map_or(0, |g| g + 1);
        for name in &names {
            let verdicts: Vec<CheckVerdict> = p
                .checks
                .iter()
                .filter(|ch| ch.name == *name)
                .map(|ch| ch.verdict)
                .collect();
            let v = [CheckVerdict::Differ, CheckVerdict::Match]
                .into_iter()
                .find(|v| verdicts.contains(v));
            row.push(match v {
                Some(v) => check_verdict(v).to_string(),
                None if verdicts.is_empty() => "-".to_string(),
                None => check_verdict(CheckVerdict::NotApplicable).to_string(),
            });
        }
        rows.push(row);
        let mut lines: Vec<String> = p
            .checks
            .iter()
            .filter_map(|ch| {
                let w = check_warning(ch)?;
                Some(if groups > 1 {
                    format!("group {}: {w}", ch.group + 1)
                } else {
                    w
                })
            })
            .collect();
        lines.extend(p.differences.iter().map(|d| {
            format!(
                "differs at this point: {} {}: A {}, B {}",
                d.area, d.what, d.a, d.b
            )
        }));
        under.push(lines);
    }
    let mut out = String::new();
    for (line, notes) in table(&rows, &[], "  ").lines().zip(&under) {
        let _ = writeln!(out, "{line}");
        for n in notes {
            let _ = writeln!(out, "    {n}");
        }
    }
    out
}
