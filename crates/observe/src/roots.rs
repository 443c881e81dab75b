//! Where /proc and /sys are: injectable so parsers and resolution can run on captured trees.

use std::path::{Path, PathBuf};

use crate::error::{ObserveError, Result};

#[derive(Clone, Debug)]
pub struct Roots {
    pub proc_dir: PathBuf,
    pub sys_dir: PathBuf,
    /// The filesystem root, for container marker files (/.dockerenv, /run/.containerenv).
    pub root_dir: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            proc_dir: PathBuf::from("/proc"),
            sys_dir: PathBuf::from("/sys"),
            root_dir: PathBuf::from("/"),
        }
    }
}

impl Roots {
    pub fn proc(&self, rel: &str) -> PathBuf {
        self.proc_dir.join(rel)
    }
    pub fn sys(&self, rel: &str) -> PathBuf {
        self.sys_dir.join(rel)
    }
    pub fn root(&self, rel: &str) -> PathBuf {
        self.root_dir.join(rel)
    }
    /// Roots under one directory: `<dir>/proc`, `<dir>/sys`, `<dir>`.
    pub fn under(dir: &Path) -> Roots {
        Roots {
            proc_dir: dir.join("proc"),
            sys_dir: dir.join("sys"),
            root_dir: dir.to_path_buf(),
        }
    }
}

/// Read a whole file as text.
pub fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|err| ObserveError::Read {
        path: path.to_path_buf(),
        err,
    })
}

/// Read a one-line sysfs attribute, trimmed; None when absent or unreadable.
pub fn attr(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// A numeric sysfs attribute.
pub fn attr_u64(path: &Path) -> Option<u64> {
    attr(path).and_then(|s| s.parse().ok())
}
