//! fileio's errors: one line each, naming the file, the directory or the option involved.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::setting::{plain, Message, Setting, Spelling};
use crate::spec::SpecError;

#[derive(Debug, Error)]
pub enum FileioError {
    /// Options that cannot work together (a usage error).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A file named like a test file that plumb did not create.
    #[error("{}", self.describe(&plain))]
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
    /// The run needs a prepared file set that is not there or not complete: what is wrong
    /// (the caller says how to prepare it, in its own syntax).
    #[error("{0}: prepare the file set first")]
    NotPrepared(Message),
    /// O_DIRECT refused or impossible with these sizes.
    #[error("{0}")]
    Direct(Message),
    /// Settings that do not fit this machine or this file set.
    #[error("{0}")]
    Settings(Message),
    /// Stopped by a signal (its number) before finishing.
    #[error("interrupted")]
    Interrupted(i32),
    /// The I/O error is in the message, so it is not also the error's source: a chain
    /// printed in full (anyhow's `{:#}`) would say it twice.
    #[error("{what}: {error}")]
    Io { what: String, error: io::Error },
    /// A write that laid out a job's file failed (the disk is full): the file and the errno.
    #[error("cannot write {} while laying it out: {}", path.display(), errno_text(*errno))]
    LayoutWrite { path: PathBuf, errno: i32 },
    /// Another call of a job's layout failed (`fallocate`, `ftruncate`): the file, the call
    /// and the errno.
    #[error("cannot {call} {} while laying it out: {}", path.display(), errno_text(*errno))]
    LayoutCall {
        path: PathBuf,
        call: &'static str,
        errno: i32,
    },
    /// A file the job needs is missing and the job may not create it (fio's
    /// `allow_file_create=0`).
    #[error("{} does not exist and the job may not create it", path.display())]
    CreateDisallowed { path: PathBuf },
    #[error("{0}")]
    Other(String),
}

impl FileioError {
    /// The error in one line, settings written by `spell`. A front end that can say how
    /// to prepare a file set words [`FileioError::NotPrepared`] itself.
    pub fn describe(&self, spell: Spelling<'_>) -> String {
        match self {
            FileioError::Spec(e) => e.describe(spell),
            FileioError::NotPrepared(m) => {
                format!("{}: prepare the file set first", m.describe(spell))
            }
            FileioError::Direct(m) | FileioError::Settings(m) => m.describe(spell),
            FileioError::Foreign { path, dir, why } => format!(
                "{} exists but plumb did not create it ({why}); plumb will not overwrite or remove it. If it is left over from sysbench, run 'sysbench fileio cleanup' with the same {} in {} or delete the test_file.* files yourself; or use another directory with {}",
                path.display(),
                spell(Setting::FileCount),
                dir.display(),
                spell(Setting::Dir)
            ),
            other => other.to_string(),
        }
    }

    pub fn io(what: impl Into<String>, error: io::Error) -> FileioError {
        FileioError::Io {
            what: what.into(),
            error,
        }
    }
}

/// The last OS error, as an io::Error.
pub fn last_os_error() -> io::Error {
    io::Error::last_os_error()
}

/// A request that failed while a job ran (a write that found the disk full, fill_device's
/// included, or any request whose call failed), for a front end that reports each one
/// (fio prints a line per failed request).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedRequest {
    pub dir: crate::engine::Dir,
    /// The file's index in the job's files, and its path.
    pub file: u32,
    pub path: String,
    pub offset: u64,
    pub len: u64,
    pub errno: i32,
}

/// Whether `errno` says the disk (or the user's quota) is full.
pub fn is_full(errno: i32) -> bool {
    errno == libc::ENOSPC || errno == libc::EDQUOT
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
