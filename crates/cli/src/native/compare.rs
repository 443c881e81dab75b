//! `plumb compare A B`: two runs side by side (ids, tags, baseline:NAME, or result files).
//! What differs between them comes first, then seed 002's comparability checks, then each
//! job's figures with the ratio B/A and its noise, the device, and the findings that differ.
//! `--fail-if-slower=PCT` exits 4 when B's throughput is lower by more than PCT percent and
//! beyond noise (1 when the drop is there but its noise cannot be judged). Two sweeps
//! (`sweep:ID`, `plumb sweep --json` files) are compared point by point (`compare_sweeps`).

use std::fmt::Write as _;

use anyhow::Context;
use plumb_history::compare::{
    Better, Check, CheckVerdict, Comparison, Difference, Figure, FindingDifference, Gate, Verdict,
};
use plumb_history::{RunRef, Side, Store};
use plumb_pipeline::Record;

use super::text::{command_line, latency, table};
use super::{compare_sweeps, when};
use crate::exit::{self, UsageError};
use crate::sweep::saved;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The reference run: an id, a tag (its newest run), baseline:NAME or a result file
    /// (a name with a '/' or ending in .json); or a sweep: sweep:ID or a plumb sweep --json
    /// file
    #[arg(value_name = "A")]
    a: String,
    /// The run (or sweep) compared with it (same forms)
    #[arg(value_name = "B")]
    b: String,
    /// Exit 4 when B's events/s are lower than A's by more than PCT percent, beyond noise
    /// (sweeps: at any point)
    #[arg(long, value_name = "PCT", value_parser = percent)]
    fail_if_slower: Option<f64>,
    /// The comparison as one JSON document (plumb.compare/1; sweeps: plumb.sweep-compare/1)
    /// on stdout
    #[arg(long)]
    json: bool,
}

fn percent(s: &str) -> Result<f64, String> {
    s.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| (0.0..100.0).contains(v))
        .ok_or_else(|| "a percentage from 0 to below 100".to_string())
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let mut store = None;
    match (
        saved::named(&a.a, &mut store)?,
        saved::named(&a.b, &mut store)?,
    ) {
        (Some(sa), Some(sb)) => {
            let c = plumb_history::compare_sweeps(&sa, &sb);
            let gate = a.fail_if_slower.map(|pct| (pct, c.gate(pct)));
            if a.json {
                let mut doc = serde_json::to_value(&c)?;
                if let Some((pct, g)) = &gate {
                    doc["gate"] = serde_json::json!({"fail_if_slower_pct": pct, "result": g});
                }
                super::print_out(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
            } else {
                super::print_out(&compare_sweeps::render(&c));
            }
            return Ok(gate_status(gate));
        }
        (Some(_), None) => return Err(mixed(&a.a, &a.b, "A").into()),
        (None, Some(_)) => return Err(mixed(&a.b, &a.a, "B").into()),
        (None, None) => {}
    }
    let side_a = load(&a.a, &mut store)?;
    let side_b = load(&a.b, &mut store)?;
    let c = plumb_history::compare(&side_a, &side_b);
    let gate = a.fail_if_slower.map(|pct| (pct, c.gate(pct)));
    if a.json {
        let mut doc = serde_json::to_value(&c)?;
        if let Some((pct, g)) = &gate {
            doc["gate"] = serde_json::json!({"fail_if_slower_pct": pct, "result": g});
        }
        super::print_out(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
    } else {
        super::print_out(&render(&c));
    }
    Ok(gate_status(gate))
}

/// A sweep named beside a run.
fn mixed(sweep: &str, run: &str, which: &str) -> UsageError {
    let other = if which == "A" { "B" } else { "A" };
    UsageError(format!(
        "{which} ({sweep}) is a sweep and {other} ({run}) is not: plumb compare puts two runs or two sweeps side by side"
    ))
}

/// The exit status of `--fail-if-slower`, its verdict said on stderr.
fn gate_status(gate: Option<(f64, Gate)>) -> i32 {
    match gate {
        None | Some((_, Gate::Pass)) => 0,
        Some((pct, Gate::Slower(jobs))) => {
            eprintln!(
                "plumb: --fail-if-slower={pct}: B is slower beyond noise: {}",
                jobs.join("; ")
            );
            exit::SLOWER
        }
        Some((pct, Gate::Nothing)) => {
            eprintln!("plumb: --fail-if-slower={pct}: nothing to judge: A and B have no throughput in common (no point both sweeps ran)");
            exit::RUNTIME
        }
        Some((pct, Gate::Unjudged(jobs))) => {
            eprintln!(
                "plumb: --fail-if-slower={pct}: B is slower but its noise cannot be judged: {}",
                jobs.join("; ")
            );
            exit::RUNTIME
        }
    }
}

/// A side named as the user typed it; the history is opened on first need.
pub(crate) fn load(s: &str, store: &mut Option<Store>) -> anyhow::Result<Side> {
    let r = RunRef::parse(s).map_err(UsageError)?;
    if let RunRef::File(p) = &r {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        let record = Record::from_json(&text).with_context(|| format!("{}", p.display()))?;
        return Ok(Side {
            label: p.display().to_string(),
            record,
        });
    }
    if store.is_none() {
        *store = Some(Store::open_default()?);
    }
    let st = store.as_ref().expect("opened above");
    let id = st.resolve(&r)?;
    let label = match &r {
        RunRef::Id(_) => format!("run {id}"),
        _ => format!("run {id} ({s})"),
    };
    Ok(Side {
        label,
        record: st.record(id)?,
    })
}

/// Each job's figures as one table (header row first): what `plumb html` shows of a
/// comparison, in the words the text uses.
pub(crate) fn figure_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = vec![
        ["job", "figure", "A", "B", "B/A", "95% interval", "verdict"]
            .map(str::to_string)
            .to_vec(),
    ];
    for j in &c.jobs {
        for f in &j.figures {
            rows.push(vec![
                pair(&j.name_a, &j.name_b),
                f.name.clone(),
                value(f.unit, f.a),
                value(f.unit, f.b),
                f.ratio.map_or("-".to_string(), |r| format!("{r:.3}")),
                f.interval
                    .map_or("-".to_string(), |i| format!("{:.3}..{:.3}", i.low, i.high)),
                verdict(f),
            ]);
        }
    }
    rows
}

fn render(c: &Comparison) -> String {
    let mut out = String::new();
    for (name, s) in [("A", &c.a), ("B", &c.b)] {
        let _ = writeln!(
            out,
            "{name}: {}, {}, {}: {}",
            s.label,
            when::format(s.started_at_unix_s),
            s.host.as_deref().unwrap_or("unknown host"),
            command_line(&s.command_line)
        );
    }
    out.push('\n');
    differences(&mut out, &c.differences);
    out.push('\n');
    checks(&mut out, &c.checks);
    for j in &c.jobs {
        let _ = writeln!(out, "\nJob {}:", pair(&j.name_a, &j.name_b));
        figures(&mut out, &j.figures);
        if !j.findings.is_empty() {
            out.push_str("  findings that differ:\n");
            out.push_str(&finding_rows(&j.findings));
        }
    }
    for d in &c.devices {
        let _ = writeln!(
            out,
            "\nDevice {} (the filesystem's):",
            pair(&d.name_a, &d.name_b)
        );
        figures(&mut out, &d.figures);
    }
    for u in &c.unpaired {
        let _ = writeln!(out, "\nNot compared: {u}");
    }
    let _ = writeln!(out, "\nNoise: {}.", c.noise_method);
    out
}

/// What differs between the two sides, as a table (or one line saying nothing does).
pub(crate) fn differences(out: &mut String, d: &[Difference]) {
    if d.is_empty() {
        out.push_str("Differences: none (same host, kernel, target, filesystem and settings)\n");
    } else {
        out.push_str("Differences:\n");
        let mut rows = vec![["", "", "A", "B"].map(str::to_string).to_vec()];
        rows.extend(
            d.iter()
                .map(|d| vec![d.area.to_string(), d.what.clone(), d.a.clone(), d.b.clone()]),
        );
        out.push_str(&table(&rows, &[], "  "));
    }
}

/// One name when both runs use it, else A's and B's.
fn pair(a: &str, b: &str) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a} (A) / {b} (B)")
    }
}

fn checks(out: &mut String, checks: &[Check]) {
    out.push_str(
        "Comparability (seed 002: these must match before two I/O results are compared):\n",
    );
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    for ch in checks {
        let v = |x: Option<f64>| x.map_or("-".to_string(), |x| check_value(ch.unit, x));
        rows.push(vec![
            ch.name.to_string(),
            format!("A {}", v(ch.a)),
            format!("B {}", v(ch.b)),
            ch.unit.to_string(),
            check_verdict(ch.verdict).to_string(),
        ]);
        warnings.extend(check_warning(ch));
    }
    out.push_str(&table(&rows, &[], "  "));
    for w in warnings {
        let _ = writeln!(out, "{w}");
    }
}

/// A check's verdict in the text's words.
pub(crate) fn check_verdict(v: CheckVerdict) -> &'static str {
    match v {
        CheckVerdict::Match => "match",
        CheckVerdict::Differ => "DIFFER",
        CheckVerdict::NotApplicable => "n/a",
    }
}

/// The warning line of a check that differs.
pub(crate) fn check_warning(ch: &Check) -> Option<String> {
    let v = |x: Option<f64>| x.map_or("-".to_string(), |x| check_value(ch.unit, x));
    (ch.verdict == CheckVerdict::Differ).then(|| {
        format!(
            "warning: {}: A {}, B {} {}: the runs did not do the same thing underneath",
            ch.name,
            v(ch.a),
            v(ch.b),
            ch.unit
        )
    })
}

fn check_value(unit: &str, x: f64) -> String {
    match unit {
        "%" => format!("{x:.1}"),
        "of read bytes" => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}

fn figures(out: &mut String, figures: &[Figure]) {
    let mut rows = vec![["", "A", "B", "B/A", "95% interval", ""]
        .map(str::to_string)
        .to_vec()];
    for f in figures {
        rows.push(vec![
            f.name.clone(),
            value(f.unit, f.a),
            value(f.unit, f.b),
            f.ratio.map_or("-".to_string(), |r| format!("{r:.3}")),
            f.interval
                .map_or("-".to_string(), |i| format!("{:.3}..{:.3}", i.low, i.high)),
            verdict(f),
        ]);
    }
    out.push_str(&table(&rows, &[1, 2, 3], "  "));
}

pub(crate) fn value(unit: &str, x: f64) -> String {
    match unit {
        "ns" => latency(x),
        "ms" => format!("{x:.2} ms"),
        "%" => format!("{x:.1}%"),
        "MiB/s" => format!("{x:.2}"),
        _ => format!("{x:.2}"),
    }
}

pub(crate) fn verdict(f: &Figure) -> String {
    let direction = |higher: bool| {
        let word = if higher { "higher" } else { "lower" };
        let judged = match (f.better, higher) {
            (Better::Neither, _) => "",
            (Better::Higher, true) | (Better::Lower, false) => " (better)",
            _ => " (worse)",
        };
        format!("B {word}, beyond noise{judged}")
    };
    match f.verdict {
        Verdict::WithinNoise => "within noise".to_string(),
        Verdict::Higher => direction(true),
        Verdict::Lower => direction(false),
        Verdict::Unknown => format!("noise unknown: {}", f.noise.as_deref().unwrap_or("")),
    }
}

fn finding_rows(f: &[FindingDifference]) -> String {
    let sev = |s: Option<plumb_advise::Severity>| s.map_or("-", |s| s.name());
    let rows: Vec<Vec<String>> = f
        .iter()
        .map(|d| {
            vec![
                d.id.clone(),
                format!("A {}", sev(d.severity_a)),
                format!("B {}", sev(d.severity_b)),
                d.message.clone(),
            ]
        })
        .collect();
    table(&rows, &[], "    ")
}
