//! plumb-advise: validity rules. Each rule is one small function from [`Facts`] (what was
//! asked, what was measured, what was observed underneath) to an optional [`Finding`]: an id,
//! a severity, one sentence, the evidence behind it, and what to do instead.
//!
//! Rules read a flat [`Facts`] record rather than the result and observation types directly,
//! so they can be tested with hand-made scenarios and keep working when a test or an observer
//! changes shape: the binary fills `Facts` from whatever it has; a rule whose facts are
//! missing stays silent.

mod facts;
mod finding;
pub mod knob;
pub mod rules;

pub use facts::*;
pub use finding::{Finding, Severity};
pub use knob::{Knob, Spelling};
pub use rules::database::times;

/// Every rule, in report order.
pub fn evaluate(f: &Facts) -> Vec<Finding> {
    rules::ALL.iter().filter_map(|rule| rule(f)).collect()
}

/// Whether any finding makes the result invalid (for `--strict`).
pub fn any_invalid(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Invalid)
}
