//! fileio's errors: one line each, naming the file, the directory or the option involved.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::spec::SpecError;

#[derive(Debug, Error)]
pub enum FileioError {
    /// Options that cannot work together (a usage error).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A file named like a test file that plumb did not create.
    #[error("{path} exists but plumb did not create it ({why}); plumb will not overwrite or remove it. If it is left over from sysbench, run 'sysbench fileio cleanup' with the same --file-num in {dir} or delete the test_file.* files yourself; or use another directory with --file-dir")]
    Foreign {
        path: PathBuf,
        dir: PathBuf,
        why: &'static str,
    },
    #[error("no space left on device: needed {needed}, available {available} in {dir}")]
    NoSpace {
        needed: String,
        available: String,
        dir: PathBuf,
    },
    /// The run needs a prepared file set that is not there or not complete.
    #[error("{0}")]
    NotPrepared(String),
    /// O_DIRECT refused or impossible with these sizes.
    #[error("{0}")]
    Direct(String),
    /// Stopped by a signal (its number) before finishing.
    #[error("interrupted")]
    Interrupted(i32),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}")]
    Other(String),
}

impl FileioError {
    pub fn io(what: impl Into<String>, source: io::Error) -> FileioError {
        FileioError::Io {
            what: what.into(),
            source,
        }
    }
}

/// The last OS error, as an io::Error.
pub fn last_os_error() -> io::Error {
    io::Error::last_os_error()
}

/// A human phrase for an errno value ("No space left on device").
pub fn errno_text(errno: i32) -> String {
    let e = io::Error::from_raw_os_error(errno);
    let s = e.to_string();
    // "No space left on device (os error 28)" → drop the code.
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
