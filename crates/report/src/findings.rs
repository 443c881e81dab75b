//! The "Findings" section: what plumb concluded about the run's validity.

use std::fmt::Write;

use plumb_advise::Finding;

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
