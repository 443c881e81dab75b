//! The files a data set's runs lay out themselves (fio): the job's files that were missing
//! before the data set's first point, and the directories made on the way to them. The
//! sweep removes those after the data set's last point (or when it is stopped), never a
//! file that was there before: a file the user named, a block device, one from an earlier
//! run.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

use plumb_core::StopFlag;

use crate::exit::Interrupted;

/// A data set's files, split by whether they were there before its first point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Laid {
    /// Missing before the first point: the runs' to lay out, the sweep's to remove.
    files: Vec<PathBuf>,
    /// Directories missing before it, deepest first: made by a run on the way to a file.
    dirs: Vec<PathBuf>,
    /// There before: never removed.
    kept: Vec<PathBuf>,
}

/// Whether nothing is at `p` (a dangling symbolic link is something; a path that cannot be
/// looked at is too, so that it is never taken for the sweep's own).
fn missing(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == ErrorKind::NotFound)
}

impl Laid {
    /// Look at `files` (the job's files over the data set's points) before its first point.
    pub fn before(files: &[PathBuf]) -> Laid {
        let mut l = Laid::default();
        for f in files {
            if l.files.contains(f) || l.kept.contains(f) {
                continue;
            }
            if !missing(f) {
                l.kept.push(f.clone());
                continue;
            }
            l.files.push(f.clone());
            let mut dir = f.parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && missing(d)) {
                if !l.dirs.iter().any(|x| x == d) {
                    l.dirs.push(d.to_path_buf());
                }
                dir = d.parent();
            }
        }
        l.dirs
            .sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        l
    }

    /// Whether the job opens no file at all (an engine without files, fio's null).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.kept.is_empty()
    }

    /// The files the runs are to lay out (missing before the first point).
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(PathBuf::as_path)
    }

    /// The files laid out that are there now: what a removal removes.
    pub fn present(&self) -> Vec<&Path> {
        self.files
            .iter()
            .map(PathBuf::as_path)
            .filter(|f| !missing(f))
            .collect()
    }

    /// The directories made by the runs that are there now.
    fn present_dirs(&self) -> Vec<&Path> {
        self.dirs
            .iter()
            .map(PathBuf::as_path)
            .filter(|d| !missing(d))
            .collect()
    }

    /// The job's files that were there before the first point.
    pub fn kept(&self) -> Vec<&Path> {
        self.kept.iter().map(PathBuf::as_path).collect()
    }

    /// Remove the files laid out, one after the other (`stop` ends it between two), then
    /// the directories made for them when nothing else is in them. The files removed.
    pub fn remove(&self, stop: &StopFlag) -> anyhow::Result<Vec<PathBuf>> {
        let mut removed = Vec::new();
        for f in self.present() {
            let sig = stop.load(Relaxed);
            if sig != 0 {
                return Err(Interrupted(sig as i32).into());
            }
            match std::fs::remove_file(f) {
                Ok(()) => removed.push(f.to_path_buf()),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => anyhow::bail!("cannot remove {}: {e}", f.display()),
            }
        }
        for d in &self.dirs {
            // Not empty: something else is in it now, and it stays.
            let _ = std::fs::remove_dir(d);
        }
        Ok(removed)
    }

    /// The shell command that removes what is left of the files and directories laid out.
    pub fn remove_command(&self) -> String {
        let files: Vec<String> = self.present().iter().map(|p| quoted(p)).collect();
        let dirs: Vec<String> = self.present_dirs().iter().map(|p| quoted(p)).collect();
        match (files.is_empty(), dirs.is_empty()) {
            (_, true) => format!("rm -f -- {}", files.join(" ")),
            (true, false) => format!("rmdir -- {}", dirs.join(" ")),
            (false, false) => format!(
                "rm -f -- {} && rmdir -- {}",
                files.join(" "),
                dirs.join(" ")
            ),
        }
    }
}

/// Files in words, by directory: `r.0.0, r.0.1 in /d`; more than four in one directory
/// show the first two and the last (`a.0.0, a.0.1, ..., a.0.99 (100 files) in /d`).
pub fn shown(files: &[&Path]) -> String {
    let mut by_dir: Vec<(&Path, Vec<String>)> = Vec::new();
    for f in files {
        let dir = f.parent().unwrap_or(Path::new(""));
        let name = f.file_name().map_or_else(
            || f.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match by_dir.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, names)) => names.push(name),
            None => by_dir.push((dir, vec![name])),
        }
    }
    by_dir
        .iter()
        .map(|(dir, names)| {
            let list = if names.len() > 4 {
                format!(
                    "{}, {}, ..., {} ({} files)",
                    names[0],
                    names[1],
                    names[names.len() - 1],
                    names.len()
                )
            } else {
                names.join(", ")
            };
            if dir.as_os_str().is_empty() {
                list
            } else {
                format!("{list} in {}", dir.display())
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A path as a shell reads it back: in single quotes unless it is plain.
fn quoted(p: &Path) -> String {
    let s = p.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn only_what_was_missing_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let there = d.path().join("there");
        std::fs::write(&there, b"x").unwrap();
        let new = d.path().join("new");
        let deep = d.path().join("a/b/deep");
        let l = Laid::before(&[there.clone(), new.clone(), deep.clone(), new.clone()]);
        assert_eq!(l.kept(), vec![there.as_path()]);
        assert!(l.present().is_empty(), "nothing laid out yet");
        std::fs::write(&new, b"y").unwrap();
        std::fs::create_dir_all(deep.parent().unwrap()).unwrap();
        std::fs::write(&deep, b"z").unwrap();
        assert_eq!(l.present(), vec![new.as_path(), deep.as_path()]);
        let cmd = l.remove_command();
        assert_eq!(
            cmd,
            format!(
                "rm -f -- {} {} && rmdir -- {} {}",
                new.display(),
                deep.display(),
                d.path().join("a/b").display(),
                d.path().join("a").display()
            )
        );
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        assert_eq!(l.remove(&stop).unwrap(), vec![new.clone(), deep.clone()]);
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["there"]);
    }

    #[test]
    fn a_signal_stops_the_removal_before_the_next_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        let l = Laid::before(std::slice::from_ref(&f));
        std::fs::write(&f, b"y").unwrap();
        let stop: StopFlag = Arc::new(AtomicUsize::new(libc::SIGINT as usize));
        let e = l.remove(&stop).unwrap_err();
        assert_eq!(e.to_string(), "interrupted by SIGINT");
        assert!(f.exists());
    }

    #[test]
    fn files_in_words() {
        let p: Vec<PathBuf> = (0..6)
            .map(|i| PathBuf::from(format!("/d/j.0.{i}")))
            .collect();
        let refs: Vec<&Path> = p.iter().map(PathBuf::as_path).collect();
        assert_eq!(shown(&refs[..2]), "j.0.0, j.0.1 in /d");
        assert_eq!(shown(&refs), "j.0.0, j.0.1, ..., j.0.5 (6 files) in /d");
        assert_eq!(
            shown(&[Path::new("/d/a"), Path::new("/e/b")]),
            "a in /d; b in /e"
        );
        assert_eq!(quoted(Path::new("/d/it's here")), "'/d/it'\\''s here'");
    }
}
