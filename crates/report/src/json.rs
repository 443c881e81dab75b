//! The JSON document (`plumb.result/1`): the run's result with what plumb concluded about it.

use plumb_advise::Finding;
use plumb_core::result::RunResult;
use plumb_observe::Observations;
use serde::Serialize;

/// Everything one run produced, serialised flat: the result's fields, then `findings`.
#[derive(Serialize)]
pub struct Document<'a> {
    #[serde(flatten)]
    pub result: &'a RunResult,
    /// What was observed underneath the run (host, target, devices, system, process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observations: Option<&'a Observations>,
    pub findings: &'a [Finding],
}

/// Pretty-printed JSON with a trailing newline.
pub fn render(doc: &Document<'_>) -> String {
    let mut s = serde_json::to_string_pretty(doc).expect("a result always serialises");
    s.push('\n');
    s
}
