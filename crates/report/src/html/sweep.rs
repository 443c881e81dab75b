//! A sweep's page: throughput, p95 and p99 against each swept variable (seed 004's figures
//! 9-1 to 9-3: tps against threads, tps against data size), one line per combination of the
//! other variables, the knee of each line marked.

use super::chart::{Chart, Series, XAxis};
use super::escape::text;
use super::page::{Page, Shown};
use super::runs::human_ns;
use super::{latency_unit, Sweep};

pub fn render(s: &Sweep) -> String {
    let mut p = Page::default();
    let title = format!("plumb: {}", s.label);
    p.heading(1, &title, None);
    let mut facts = vec![
        ("started", s.when.clone()),
        ("points", s.points.len().to_string()),
        ("swept", s.keys.join(", ")),
    ];
    if let Some(why) = &s.stopped {
        // Fewer points than the plan: the charts show what was done.
        facts.push(("stopped part way", why.clone()));
    }
    p.facts(&facts);
    if let Some(plan) = &s.plan {
        p.raw(&format!(
            "<pre class=\"plan\">{}</pre>\n",
            text(plan.trim_end())
        ));
    }

    p.heading(2, "Points", Some("points"));
    let mut rows = vec![s.keys.clone()];
    rows[0].extend(["runs", &s.unit, "p95", "p99", "findings"].map(str::to_string));
    for pt in &s.points {
        let mut r = pt.values.clone();
        let ns = |v: Option<u64>| v.map_or("-".to_string(), |v| human_ns(v as f64));
        r.extend([
            pt.runs.join(", "),
            format!("{:.2}", pt.per_s),
            ns(pt.p95_ns),
            ns(pt.p99_ns),
            if pt.findings.is_empty() {
                "-".to_string()
            } else {
                pt.findings
                    .iter()
                    .map(|f| f.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ]);
        rows.push(r);
    }
    p.table(&rows);

    // Each finding once, with the points that have it.
    let mut seen: Vec<(&plumb_advise::Finding, Vec<String>)> = Vec::new();
    for pt in &s.points {
        let at = point_label(s, pt);
        for f in &pt.findings {
            match seen.iter_mut().find(|(g, _)| g.id == f.id) {
                Some((_, pts)) => pts.push(at.clone()),
                None => seen.push((f, vec![at.clone()])),
            }
        }
    }
    let findings: Vec<Shown> = seen
        .iter()
        .map(|(f, pts)| Shown {
            whose: Some(format!("at {}", pts.join("; "))),
            finding: f,
        })
        .collect();

    let lines_of = |k: usize| -> Vec<&super::SweepLine> {
        s.lines
            .iter()
            .filter(|l| l.key == k && l.points.len() > 1)
            .collect()
    };
    // The findings once, beside the first variable drawn (or the first one, none drawn).
    let findings_at = (0..s.keys.len())
        .find(|&k| !lines_of(k).is_empty())
        .unwrap_or(0);
    for (k, key) in s.keys.iter().enumerate() {
        let lines = lines_of(k);
        let shown: &[Shown] = if k == findings_at { &findings } else { &[] };
        p.heading(2, &format!("Against {key}"), Some(&format!("against-{k}")));
        if lines.is_empty() {
            // A variable the page cannot draw still gets its heading, so that nobody reads
            // its absence as a chart lost.
            p.section(
                &format!("against-{k}-charts"),
                &format!("{} and latency against {key}", s.unit),
                vec![Err(no_line(s, k))],
                shown,
                &[],
            );
            continue;
        }
        // The variable's values in the plan's order, as the lines meet them.
        let mut cats: Vec<String> = Vec::new();
        for l in &lines {
            for &i in &l.points {
                let v = &s.points[i].values[k];
                if !cats.contains(v) {
                    cats.push(v.clone());
                }
            }
        }
        let x = |i: usize| {
            cats.iter()
                .position(|c| *c == s.points[i].values[k])
                .unwrap_or(0) as f64
        };
        let name = |l: &super::SweepLine| {
            if l.at.is_empty() {
                String::new()
            } else {
                format!(" ({})", l.at)
            }
        };
        let mut tput = Vec::new();
        let mut knees = Vec::new();
        for (c, l) in lines.iter().enumerate() {
            tput.push((
                Series::line(format!("{}{}", s.unit, name(l)), c),
                l.points
                    .iter()
                    .map(|&i| (x(i), s.points[i].per_s))
                    .collect::<Vec<_>>(),
            ));
            if let Some(kn) = l.knee {
                tput.push((
                    Series::line(format!("knee{}", name(l)), c).marker(),
                    vec![(x(kn), s.points[kn].per_s)],
                ));
                knees.push(format!(
                    "{key}: knee at {}{}.",
                    s.points[kn].values[k],
                    name(l)
                ));
            } else {
                knees.push(format!("{key}: no knee{}: still growing by more than the rule's step at its last value.", name(l)));
            }
        }
        let max_ns = lines
            .iter()
            .flat_map(|l| l.points.iter())
            .filter_map(|&i| s.points[i].p99_ns.or(s.points[i].p95_ns))
            .max()
            .unwrap_or(0) as f64;
        let (div, unit) = latency_unit(max_ns);
        let mut lat = Vec::new();
        let mut no_latency = Vec::new();
        for (c, l) in lines.iter().enumerate() {
            let pts = |f: &dyn Fn(&super::SweepPoint) -> Option<u64>| {
                l.points
                    .iter()
                    .filter_map(|&i| f(&s.points[i]).map(|v| (x(i), v as f64 / div)))
                    .collect::<Vec<_>>()
            };
            if pts(&|p| p.p95_ns).is_empty() && pts(&|p| p.p99_ns).is_empty() {
                // The chart leaves out a series without a point: say which line it is.
                no_latency.push(format!(
                    "No latency line{}: its points recorded no events.",
                    name(l)
                ));
            }
            lat.push((
                Series::line(format!("p95{}", name(l)), c),
                pts(&|p| p.p95_ns),
            ));
            lat.push((
                Series::line(format!("p99{}", name(l)), c).dashed(),
                pts(&|p| p.p99_ns),
            ));
        }
        let axis = || XAxis::categories(key.clone(), cats.clone());
        let charts = vec![
            Chart::join(
                format!("{} against {key}", s.unit),
                axis(),
                vec![s.unit.clone()],
                tput,
            )
            .ok_or_else(|| "No throughput: the points recorded no events.".to_string()),
            Chart::join(
                format!("p95 and p99 latency against {key}"),
                axis(),
                vec![unit.to_string()],
                lat,
            )
            .ok_or_else(|| "No latency: the points recorded no events.".to_string()),
        ];
        let mut notes = vec![s.knee_rule.clone()];
        notes.extend(knees);
        if no_latency.len() < lines.len() {
            // With none, the chart's own sentence says it.
            notes.extend(no_latency);
        }
        p.section(
            &format!("against-{k}-charts"),
            &format!("{} and latency against {key}", s.unit),
            charts,
            shown,
            &notes,
        );
    }
    p.finish(&title)
}

/// Why variable `k` has no line of two or more points, from the points the page shows (a
/// stopped sweep's are fewer than its plan's).
fn no_line(s: &Sweep, k: usize) -> String {
    let key = &s.keys[k];
    let mut seen: Vec<&str> = Vec::new();
    for pt in &s.points {
        if !seen.contains(&pt.values[k].as_str()) {
            seen.push(&pt.values[k]);
        }
    }
    match seen.as_slice() {
        [v] if s.stopped.is_some() => format!(
            "No chart against {key}: every point done has {key} = {v} (the sweep was stopped before another value ran); a line needs points that differ in {key} alone."
        ),
        [v] => format!(
            "No chart against {key}: every point has {key} = {v}; a line needs points that differ in {key} alone."
        ),
        _ => format!(
            "No chart against {key}: no two points differ in {key} alone (each pair differs in another variable too), so there is no line to draw."
        ),
    }
}

fn point_label(s: &Sweep, pt: &super::SweepPoint) -> String {
    s.keys
        .iter()
        .zip(&pt.values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{SweepLine, SweepPoint};

    fn point(values: &[&str], per_s: f64, p95: Option<u64>) -> SweepPoint {
        SweepPoint {
            values: values.iter().map(|v| v.to_string()).collect(),
            runs: vec!["run 1".into()],
            per_s,
            p95_ns: p95,
            p99_ns: p95,
            findings: Vec::new(),
        }
    }

    #[test]
    fn a_line_left_out_of_the_latency_chart_is_named() {
        // Two lines along bs: at rw=read with latencies, at rw=trim with none (the lines
        // along rw are left out: not what this looks at).
        let s = Sweep {
            label: "sweep 1".into(),
            when: String::new(),
            plan: None,
            stopped: None,
            unit: "IOPS".into(),
            keys: vec!["rw".into(), "bs".into()],
            points: vec![
                point(&["read", "4k"], 100.0, Some(1000)),
                point(&["read", "8k"], 90.0, Some(2000)),
                point(&["trim", "4k"], 0.0, None),
                point(&["trim", "8k"], 0.0, None),
            ],
            lines: vec![
                SweepLine {
                    key: 1,
                    at: "rw=read".into(),
                    points: vec![0, 1],
                    knee: Some(0),
                },
                SweepLine {
                    key: 1,
                    at: "rw=trim".into(),
                    points: vec![2, 3],
                    knee: Some(2),
                },
            ],
            knee_rule: "rule".into(),
        };
        let page = render(&s);
        assert!(page.contains(
            "<p class=\"note\">No latency line (rw=trim): its points recorded no events.</p>"
        ));
        assert!(!page.contains("No latency line (rw=read)"));
        // Both lines stay on the throughput chart.
        assert!(page.contains("\"label\":\"IOPS (rw=trim)\""));
        assert!(!page.contains("\"label\":\"p95 (rw=trim)\""));
    }
}
