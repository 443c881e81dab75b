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
    p.facts(&[
        ("started", s.when.clone()),
        ("points", s.points.len().to_string()),
        ("swept", s.keys.join(", ")),
    ]);
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

    let mut placed_findings = false;
    for (k, key) in s.keys.iter().enumerate() {
        let lines: Vec<_> = s
            .lines
            .iter()
            .filter(|l| l.key == k && l.points.len() > 1)
            .collect();
        if lines.is_empty() {
            continue;
        }
        p.heading(2, &format!("Against {key}"), Some(&format!("against-{k}")));
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
        for (c, l) in lines.iter().enumerate() {
            let pts = |f: &dyn Fn(&super::SweepPoint) -> Option<u64>| {
                l.points
                    .iter()
                    .filter_map(|&i| f(&s.points[i]).map(|v| (x(i), v as f64 / div)))
                    .collect::<Vec<_>>()
            };
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
        // The findings once, beside the first variable's charts.
        let shown: &[Shown] = if placed_findings { &[] } else { &findings };
        placed_findings = true;
        p.section(
            &format!("against-{k}-charts"),
            &format!("{} and latency against {key}", s.unit),
            charts,
            shown,
            &notes,
        );
    }
    if !placed_findings {
        p.section(
            "no-lines",
            "Charts",
            vec![Err("No chart: no swept variable has two or more points that agree on the other variables.".to_string())],
            &findings,
            &[],
        );
    }
    p.finish(&title)
}

fn point_label(s: &Sweep, pt: &super::SweepPoint) -> String {
    s.keys
        .iter()
        .zip(&pt.values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}
