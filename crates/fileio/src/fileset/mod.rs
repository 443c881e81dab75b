//! The test files: `test_file.0` … `test_file.N-1` in one directory, as sysbench names them,
//! plus plumb's manifest of what it created there.
//!
//! - [`prepare`]: create, extend or reuse the files (large sequential writes, fsync each),
//!   after checking names and free space.
//! - [`cleanup`]: remove exactly the files the manifest lists.
//! - [`open`]: open the set for a run, checking it is complete and what O_DIRECT needs.
//! - [`write`]: the sequential writer prepare and seqwr's completion share.

pub mod cleanup;
pub mod manifest;
pub mod named;
pub mod open;
pub mod prepare;
pub mod write;

use std::ffi::CString;
use std::fs;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::FileioError;
use crate::message;
use crate::setting::Setting;

pub use manifest::{Manifest, Ownership, MANIFEST};

/// sysbench's file names.
pub fn file_name(i: u32) -> String {
    format!("test_file.{i}")
}

/// Whether `name` looks like a sysbench test file (test_file.<digits>).
pub fn is_test_file_name(name: &str) -> bool {
    name.strip_prefix("test_file.")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The open files of a run, shared by every worker.
pub struct FileTable {
    fds: Vec<RawFd>,
    names: Vec<String>,
    dir: PathBuf,
}

impl FileTable {
    pub fn new(dir: PathBuf) -> FileTable {
        FileTable {
            fds: Vec::new(),
            names: Vec::new(),
            dir,
        }
    }
    pub fn push(&mut self, fd: RawFd, name: String) {
        self.fds.push(fd);
        self.names.push(name);
    }
    #[inline(always)]
    pub fn fd(&self, i: u32) -> RawFd {
        self.fds[i as usize]
    }
    pub fn fds(&self) -> &[RawFd] {
        &self.fds
    }
    pub fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }
    pub fn len(&self) -> usize {
        self.fds.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fds.is_empty()
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The same files on new descriptors, with the same access mode and status flags
    /// (O_DIRECT, O_SYNC, O_DSYNC). A new open file description has a file position of its
    /// own: engines that seek before read(2)/write(2) would move each other's requests if
    /// threads shared one. Opened through /proc/self/fd, so it is the very inode of the run
    /// even if the name was replaced since.
    pub fn reopen(&self) -> std::io::Result<FileTable> {
        let mut t = FileTable::new(self.dir.clone());
        for (&fd, name) in self.fds.iter().zip(&self.names) {
            // SAFETY: fcntl on a descriptor this table keeps open.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if flags < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let keep = libc::O_ACCMODE | libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC;
            let own = open_raw(Path::new(&format!("/proc/self/fd/{fd}")), flags & keep)?;
            t.push(own, name.clone());
        }
        Ok(t)
    }
}

impl Drop for FileTable {
    fn drop(&mut self) {
        for &fd in &self.fds {
            // SAFETY: each descriptor was opened for this table and is closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// open(2) with plain flags; returns the descriptor or the OS error.
pub fn open_raw(path: &Path, flags: libc::c_int) -> std::io::Result<RawFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    loop {
        // SAFETY: c is a valid C string; mode is used only with O_CREAT.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600 as libc::c_uint) };
        if fd >= 0 {
            return Ok(fd);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// The directory must exist, be a directory and accept new files.
pub fn check_dir(dir: &Path) -> Result<(), FileioError> {
    match fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(FileioError::Settings(message![
            format!(
                "directory {} does not exist (create it, or pick another with ",
                dir.display()
            ),
            Setting::Dir,
            ")"
        ])),
        Err(e) => Err(FileioError::io(
            format!("cannot use directory {}", dir.display()),
            e,
        )),
        Ok(m) if !m.is_dir() => Err(FileioError::Settings(message![
            format!("{} is not a directory (", dir.display()),
            Setting::Dir,
            " names the directory that holds the test files)"
        ])),
        Ok(_) => Ok(()),
    }
}

/// Try to create and remove a file, so an unwritable directory fails before any work.
pub fn check_writable(dir: &Path) -> Result<(), FileioError> {
    let probe = dir.join(format!(".plumb-write-probe.{}", std::process::id()));
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(FileioError::io(
            format!("cannot create files in {}", dir.display()),
            e,
        )),
    }
}

/// Bytes available to an unprivileged writer in the filesystem holding `dir`.
pub fn available_bytes(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: st is written by statvfs before it is read.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(file_name(7), "test_file.7");
        assert!(is_test_file_name("test_file.12"));
        assert!(!is_test_file_name("test_file."));
        assert!(!is_test_file_name("test_file.1a"));
        assert!(!is_test_file_name("plumb-fileio.manifest"));
    }

    #[test]
    fn directory_checks() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_dir(d.path()).is_ok());
        assert!(check_writable(d.path()).is_ok());
        let missing = d.path().join("nope");
        assert!(check_dir(&missing)
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        let f = d.path().join("f");
        fs::write(&f, b"").unwrap();
        assert!(check_dir(&f)
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
        assert!(available_bytes(d.path()).unwrap() > 0);
    }
}
