//! The "Findings" section: what plumb concluded about the run's validity.

use std::fmt::Write;

use plumb_advise::Finding;

/// Every finding of `jobs` once (by id, in first-raised order), with the names of the jobs
/// that raised it: for layouts that report several jobs as one result.
pub fn distinct<'a>(
    jobs: impl Iterator<Item = &'a plumb_pipeline::JobRecord>,
) -> Vec<(Finding, Vec<String>)> {
    let mut out: Vec<(Finding, Vec<String>)> = Vec::new();
    for j in jobs {
        for f in &j.findings {
            match out.iter_mut().find(|(x, _)| x.id == f.id) {
                Some((_, by)) => by.push(j.name.clone()),
                None => out.push((f.clone(), vec![j.name.clone()])),
            }
        }
    }
    out
}

/// Findings, most severe first; nothing when there are none.
pub fn section(findings: &[Finding]) -> String {
    let mut out = String::new();
    if findings.is_empty() {
        return out;
    }
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let _ = writeln!(out, "Findings:");
    for f in sorted {
        let _ = writeln!(out, "    [{}] {} ({})", f.severity.name(), f.message, f.id);
        for (k, v) in &f.evidence {
            let _ = writeln!(out, "        {k}: {v}");
        }
        if !f.advice.is_empty() {
            let _ = writeln!(out, "        what to do: {}", f.advice);
        }
    }
    let _ = writeln!(out);
    out
}
