use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the number stands.
    Info,
    /// The number is real but probably not what you meant to measure.
    Caution,
    /// The number does not measure what the test claims to measure.
    Invalid,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Caution => "caution",
            Severity::Invalid => "invalid",
        }
    }
}

/// One finding about a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier, e.g. `page-cache-reads`.
    pub id: String,
    pub severity: Severity,
    /// One sentence saying what happened.
    pub message: String,
    /// The measured figures behind it, as (name, value) pairs.
    pub evidence: Vec<(String, String)>,
    /// What to do instead.
    pub advice: String,
}

impl Finding {
    pub fn new(id: &str, severity: Severity, message: impl Into<String>) -> Self {
        Finding {
            id: id.to_string(),
            severity,
            message: message.into(),
            evidence: Vec::new(),
            advice: String::new(),
        }
    }

    pub fn evidence(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.evidence.push((name.to_string(), value.to_string()));
        self
    }

    pub fn advice(mut self, a: impl Into<String>) -> Self {
        self.advice = a.into();
        self
    }
}
