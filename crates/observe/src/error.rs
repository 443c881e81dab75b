//! Errors of the observe crate. Messages are complete on their own (the io error is part of
//! the text, not a separate source), so a one-line report prints each fact once.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// The path given as a target does not exist or cannot be examined.
    #[error("{}: {err}", path.display())]
    Path { path: PathBuf, err: std::io::Error },
    /// A /proc or /sys file could not be read.
    #[error("cannot read {}: {err}", path.display())]
    Read { path: PathBuf, err: std::io::Error },
    /// A /proc or /sys file did not have the expected layout.
    #[error("unexpected content in {}: {what}", path.display())]
    Parse { path: PathBuf, what: String },
    /// No mount in mountinfo holds the path (a chroot or a private mount namespace).
    #[error("no mount found for {}", path.display())]
    NoMount { path: PathBuf },
}

pub type Result<T> = std::result::Result<T, ObserveError>;
