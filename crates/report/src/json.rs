//! The JSON document (`plumb.result/1`).

use plumb_core::result::RunResult;

/// Pretty-printed JSON with a trailing newline.
pub fn render(r: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("a result always serialises");
    s.push('\n');
    s
}
