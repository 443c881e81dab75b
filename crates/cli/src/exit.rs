//! Exit codes and the usage-error marker.
//!
//! 0 success, 1 runtime failure, 2 usage error, 3 result refused by --strict,
//! 4 `plumb compare --fail-if-slower`: B slower than A beyond the threshold and the noise,
//! 130 / 143 interrupted by SIGINT / SIGTERM.

use std::fmt;

pub const RUNTIME: i32 = 1;
pub const USAGE: i32 = 2;
pub const STRICT: i32 = 3;
pub const SLOWER: i32 = 4;

/// A mistake in the command line: reported in one line, exit 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Work stopped by a signal (its number) outside a run (prepare, cleanup): exit 128 + n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted(pub i32);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "interrupted by {}",
            plumb_core::result::signal_name(self.0)
        )
    }
}

impl std::error::Error for Interrupted {}

/// The exit code an error maps to.
/// An error's one line: its message and each cause's, `: ` between, leaving out a cause the
/// line says already (an error that prints its source in its own message, as
/// `cannot write X: {source}` does, would otherwise say it twice).
pub fn message(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if line.contains(&c) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&c);
    }
    line
}

pub fn code_for(e: &anyhow::Error) -> i32 {
    if e.downcast_ref::<UsageError>().is_some() {
        USAGE
    } else if let Some(i) = e.downcast_ref::<Interrupted>() {
        for_signal(i.0)
    } else {
        RUNTIME
    }
}

/// Exit code for a run stopped by `signal`.
pub fn for_signal(signal: i32) -> i32 {
    128 + signal
}

/// The status of a finished run: a signal's status, 1 when a job failed or the run had to
/// be forced to stop, else 0.
pub fn of_finished(f: &plumb_pipeline::Finished) -> i32 {
    match f.stopped_by {
        Some(plumb_core::StopCause::Signal(s)) => for_signal(s),
        Some(_) => RUNTIME,
        None if f.record.jobs().any(|j| j.error.is_some()) => RUNTIME,
        None => 0,
    }
}

#[cfg(test)]
mod message_tests {
    #[derive(Debug, thiserror::Error)]
    #[error("cannot write f.json: {source}")]
    struct Says {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_says_is_not_repeated() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::new(Says { source: io() });
        assert_eq!(super::message(&e), format!("cannot write f.json: {}", io()));
        let e = anyhow::Error::new(io()).context("reading plan.toml");
        assert_eq!(super::message(&e), format!("reading plan.toml: {}", io()));
    }
}
