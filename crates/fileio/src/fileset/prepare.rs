//! `prepare`: make test_file.0 … N-1 hold `file_size` bytes of the requested data.
//!
//! Every name is checked before anything is written: a file plumb did not create stops
//! prepare with its name. Files plumb created earlier are reused when they already hold the
//! right data, extended when short, rewritten when their data layout differs. The space
//! needed is checked against what the filesystem has before the first write. A write that
//! fails (disk full, file size limit) removes the file it was writing and stops.

use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

use plumb_core::size::{format_compact, KIB, MIB};
use plumb_core::StopFlag;

use super::manifest::{Manifest, Ownership};
use super::write::{WriteStop, Writer};
use super::{available_bytes, check_dir, check_writable, file_name, open_raw};
use crate::error::{errno_text, FileioError};
use crate::spec::{FileioSpec, Fill};

pub use plumb_core::progress::{Progress, Quiet};

#[derive(Clone, Debug, PartialEq)]
pub struct PrepareOutcome {
    pub files_created: u32,
    pub files_reused: u32,
    pub bytes_written: u64,
    pub seconds: f64,
    /// Bytes written with O_DIRECT.
    pub direct_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Reuse,
    Create,
    Extend(u64),
    Rewrite,
}

/// Check that every test file name is free or plumb's own; the foreign one is an error.
pub(crate) fn check_names(
    dir: &Path,
    manifest: Option<&Manifest>,
    count: u32,
) -> Result<Vec<Ownership>, FileioError> {
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        let name = file_name(i);
        let own = match manifest {
            Some(m) => m.ownership(dir, &name),
            None if dir.join(&name).symlink_metadata().is_ok() => Ownership::Unlisted,
            None => Ownership::Absent,
        };
        let why = match (own, manifest.is_some()) {
            (Ownership::Unlisted, false) => "there is no plumb manifest in the directory",
            (Ownership::Unlisted, true) => "it is not listed in plumb's manifest",
            (Ownership::Replaced, _) => "it replaced the file plumb created there",
            _ => {
                out.push(own);
                continue;
            }
        };
        return Err(FileioError::Foreign {
            path: dir.join(&name),
            dir: dir.to_path_buf(),
            why,
        });
    }
    Ok(out)
}

fn plan_actions(
    spec: &FileioSpec,
    manifest: &Manifest,
    owners: &[Ownership],
) -> (Vec<Action>, u64) {
    let dir = &spec.dir;
    let fill = spec.effective_fill();
    let size = spec.file_size();
    let mut needed = 0u64;
    let mut actions = Vec::with_capacity(owners.len());
    for (i, own) in owners.iter().enumerate() {
        let name = file_name(i as u32);
        let on_disk = fs::metadata(dir.join(&name)).map(|m| m.len()).unwrap_or(0);
        let action = match (own, manifest.entry(&name)) {
            (Ownership::Owned, Some(e))
                if e.fill == fill.name()
                    && (fill != Fill::Validate || e.block_size == spec.block_size) =>
            {
                let valid = e.valid_bytes.min(on_disk);
                if valid >= size {
                    Action::Reuse
                } else {
                    // Restart at a block (and page) boundary so the layout stays whole.
                    let unit = spec.block_size.max(4096);
                    Action::Extend(valid / unit * unit)
                }
            }
            (Ownership::Owned, _) => Action::Rewrite,
            _ => Action::Create,
        };
        needed += match action {
            Action::Reuse => 0,
            Action::Create => size,
            Action::Extend(_) | Action::Rewrite => size.saturating_sub(on_disk),
        };
        actions.push(action);
    }
    (actions, needed)
}

/// Create the file set `spec` describes.
pub fn prepare(
    spec: &FileioSpec,
    stop: &StopFlag,
    log: &mut dyn Write,
    progress: &mut dyn Progress,
) -> Result<PrepareOutcome, FileioError> {
    spec.check_files()?;
    let dir = spec.dir.as_path();
    check_dir(dir)?;
    check_writable(dir)?;
    let existing = Manifest::load(dir)?;
    let owners = check_names(dir, existing.as_ref(), spec.num_files)?;
    let mut manifest = existing.unwrap_or_default();
    let (actions, needed) = plan_actions(spec, &manifest, &owners);
    if let Some(avail) = available_bytes(dir) {
        if needed > avail {
            return Err(FileioError::NoSpace {
                needed: format_compact(needed),
                available: format_compact(avail),
                dir: dir.to_path_buf(),
            });
        }
    }

    let size = spec.file_size();
    let fill = spec.effective_fill();
    let _ = writeln!(
        log,
        "{} files, {}Kb each, {}Mb total",
        spec.num_files,
        size / KIB,
        size * spec.num_files as u64 / MIB
    );
    let _ = writeln!(log, "Creating files for the test...");
    let _ = writeln!(
        log,
        "Data: {}; {} writes, O_DIRECT where the filesystem takes it, fsync after each file",
        match fill {
            Fill::Random => "random, incompressible (sysbench writes zeros)",
            Fill::Zero => "zeros, as sysbench writes them",
            Fill::Validate => "checksummed blocks, for validation",
            Fill::Compressible { .. } => "random, partly zeroed (compressible)",
            Fill::Repeated { .. } => "the same buffers again and again (deduplicable)",
            Fill::Pattern => "a byte pattern over and over",
        },
        format_compact(super::write::CHUNK)
    );

    // List every file this prepare will create or rewrite before touching any, in one
    // manifest write: an interruption anywhere later leaves them recognisably plumb's.
    let old_fills: Vec<String> = (0..spec.num_files)
        .map(|i| {
            manifest
                .entry(&file_name(i))
                .map(|e| e.fill.clone())
                .unwrap_or_default()
        })
        .collect();
    for (i, action) in actions.iter().enumerate() {
        let name = file_name(i as u32);
        match action {
            Action::Create => {
                *manifest.upsert(&name) = super::manifest::Entry {
                    name: name.clone(),
                    valid_bytes: 0,
                    dev: 0,
                    ino: 0,
                    fill: fill.name().into(),
                    block_size: spec.block_size,
                }
            }
            Action::Rewrite => {
                let e = manifest.upsert(&name);
                e.fill = fill.name().into();
                e.block_size = spec.block_size;
                e.valid_bytes = 0;
            }
            Action::Extend(from) => manifest.upsert(&name).valid_bytes = *from,
            Action::Reuse => {}
        }
    }
    manifest.save(dir)?;
    let mut saved = Instant::now();

    let mut writer = Writer::new(fill, spec.block_size)
        .ok_or_else(|| FileioError::Other("cannot allocate the prepare buffer".into()))?;
    progress.start(needed);
    let started = Instant::now();
    let mut out = PrepareOutcome {
        files_created: 0,
        files_reused: 0,
        bytes_written: 0,
        seconds: 0.0,
        direct_bytes: 0,
    };
    for (i, action) in actions.iter().enumerate() {
        let name = file_name(i as u32);
        let path = dir.join(&name);
        let from = match *action {
            Action::Reuse => {
                let _ = writeln!(log, "Reusing existing file {name}");
                out.files_reused += 1;
                continue;
            }
            Action::Create => {
                let _ = writeln!(log, "Creating file {name}");
                out.files_created += 1;
                0
            }
            Action::Extend(from) => {
                let _ = writeln!(log, "Extending existing file {name}");
                from
            }
            Action::Rewrite => {
                let _ = writeln!(
                    log,
                    "Rewriting existing file {name} (its data was '{}', now '{}')",
                    old_fills[i],
                    fill.name()
                );
                0
            }
        };
        let flags = libc::O_WRONLY
            | if *action == Action::Create {
                libc::O_CREAT | libc::O_EXCL
            } else {
                0
            };
        let fd = match open_raw(&path, flags) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                manifest.remove(&name);
                manifest.save(dir)?;
                return Err(FileioError::Foreign {
                    path,
                    dir: dir.to_path_buf(),
                    why: "it appeared while plumb was preparing the directory",
                });
            }
            Err(e) => {
                return Err(FileioError::io(
                    format!("cannot open {}", path.display()),
                    e,
                ))
            }
        };
        if *action == Action::Create {
            if let Ok(m) = fs::metadata(&path) {
                let e = manifest.upsert(&name);
                e.dev = m.dev();
                e.ino = m.ino();
            }
        }
        let mut done_here = 0u64;
        let res = writer.fill(fd, from, size, stop, &mut |n| {
            done_here += n;
            progress.advance(n);
        });
        // SAFETY: fd was opened above and is closed once.
        unsafe { libc::close(fd) };
        out.bytes_written += done_here;
        match res {
            Ok(()) => {
                manifest.upsert(&name).valid_bytes = size;
                // Thousands of small files would make one save per file quadratic: save
                // at most once a second (a file not yet recorded complete is rewritten by
                // the next prepare, never lost or mistaken).
                if saved.elapsed().as_secs_f64() >= 1.0 {
                    manifest.save(dir)?;
                    saved = Instant::now();
                }
            }
            Err(WriteStop::Interrupted { written, signal }) => {
                manifest.upsert(&name).valid_bytes = from + written;
                manifest.save(dir)?;
                progress.finish();
                return Err(FileioError::Interrupted(signal));
            }
            Err(WriteStop::Failed {
                written,
                call,
                errno,
            }) => {
                progress.finish();
                let _ = fs::remove_file(&path);
                manifest.remove(&name);
                manifest.save(dir)?;
                let what = match errno {
                    libc::ENOSPC => "no space left on device".to_string(),
                    libc::EDQUOT => "disk quota exceeded".to_string(),
                    libc::EFBIG => {
                        "file too large (the file size limit, ulimit -f, or the filesystem's maximum)"
                            .to_string()
                    }
                    e => format!("{call} failed: {}", errno_text(e)),
                };
                return Err(FileioError::Other(format!(
                    "{what} while writing {} ({} of {} written); removed the partial file",
                    path.display(),
                    format_compact(from + written),
                    format_compact(size)
                )));
            }
        }
    }
    manifest.save(dir)?;
    progress.finish();
    out.seconds = started.elapsed().as_secs_f64();
    out.direct_bytes = writer.direct_bytes;
    if out.bytes_written > 0 {
        let _ = writeln!(
            log,
            "{} bytes written in {:.2} seconds ({:.2} MiB/sec).",
            out.bytes_written,
            out.seconds,
            out.bytes_written as f64 / MIB as f64 / out.seconds.max(1e-9)
        );
    } else {
        let _ = writeln!(log, "No bytes written.");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileset::MANIFEST;

    fn spec(dir: &Path, files: u32, total: u64) -> FileioSpec {
        FileioSpec {
            dir: dir.to_path_buf(),
            num_files: files,
            total_size: total,
            ..Default::default()
        }
    }

    fn run(s: &FileioSpec) -> Result<(PrepareOutcome, String), FileioError> {
        let mut log = Vec::new();
        let o = prepare(s, &StopFlag::default(), &mut log, &mut Quiet)?;
        Ok((o, String::from_utf8(log).unwrap()))
    }

    #[test]
    fn creates_then_reuses_then_extends() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), 3, 3 << 20);
        let (o, log) = run(&s).unwrap();
        assert_eq!(o.files_created, 3);
        assert_eq!(o.bytes_written, 3 << 20);
        assert!(
            log.starts_with("3 files, 1024Kb each, 3Mb total\n"),
            "{log}"
        );
        assert!(log.contains("Creating file test_file.2"));
        assert!(log.contains("3145728 bytes written in"));
        for i in 0..3 {
            assert_eq!(
                fs::metadata(d.path().join(file_name(i))).unwrap().len(),
                1 << 20
            );
        }
        let (o, log) = run(&s).unwrap();
        assert_eq!((o.files_reused, o.bytes_written), (3, 0));
        assert!(log.contains("Reusing existing file test_file.0"));
        assert!(log.contains("No bytes written."));
        let big = spec(d.path(), 3, 6 << 20);
        let (o, log) = run(&big).unwrap();
        assert_eq!(o.bytes_written, 3 << 20);
        assert!(log.contains("Extending existing file test_file.1"));
        // Another fill rewrites.
        let zero = FileioSpec {
            fill: Fill::Zero,
            ..big
        };
        let (_, log) = run(&zero).unwrap();
        assert!(log.contains("Rewriting existing file test_file.0"), "{log}");
        assert!(fs::read(d.path().join("test_file.0"))
            .unwrap()
            .iter()
            .all(|&b| b == 0));
    }

    #[test]
    fn refuses_a_file_it_did_not_create() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("test_file.1"), b"sysbench").unwrap();
        let e = run(&spec(d.path(), 2, 2 << 20)).unwrap_err().to_string();
        assert!(
            e.contains("test_file.1") && e.contains("plumb did not create it"),
            "{e}"
        );
        assert!(
            !d.path().join("test_file.0").exists(),
            "nothing written before the check"
        );
        assert_eq!(fs::read(d.path().join("test_file.1")).unwrap(), b"sysbench");
        // With a manifest present, an unlisted file is refused too.
        let d2 = tempfile::tempdir().unwrap();
        run(&spec(d2.path(), 1, 1 << 20)).unwrap();
        fs::write(d2.path().join("test_file.1"), b"x").unwrap();
        let e = run(&spec(d2.path(), 2, 2 << 20)).unwrap_err().to_string();
        assert!(e.contains("not listed"), "{e}");
    }

    #[test]
    fn checks_free_space_first() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), 2, 1 << 60);
        let e = run(&s).unwrap_err().to_string();
        assert!(e.starts_with("no space left on device: needed"), "{e}");
        assert!(!d.path().join(MANIFEST).exists());
    }

    #[test]
    fn interrupted_prepare_is_resumed() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), 2, 16 << 20);
        let stop = StopFlag::default();
        stop.store(2, std::sync::atomic::Ordering::Relaxed);
        let e = prepare(&s, &stop, &mut Vec::new(), &mut Quiet).unwrap_err();
        assert!(matches!(e, FileioError::Interrupted(2)));
        let m = Manifest::load(d.path()).unwrap().unwrap();
        assert_eq!(m.entry("test_file.0").unwrap().valid_bytes, 0);
        let (o, _) = run(&s).unwrap();
        assert_eq!(o.bytes_written, 16 << 20);
    }
}
