//! Files a job names itself (fio's `filename`, or names a front end generates): laid out
//! before the run when missing or too short, opened for the run, removed afterwards only if
//! the job created them and asked for it.
//!
//! Layout follows fio ([`lay_out`]): a job that reads gets files written in full from their
//! start (so reads find data, not holes); a job that only writes gets them created and
//! allocated. A short file is laid out anew, not extended. A file that already holds the
//! region is used as it is. Block devices are never laid out or removed.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt};
use std::path::{Path, PathBuf};

use plumb_core::random::Rng;
use plumb_core::StopFlag;

use super::{open_raw, FileTable};
use crate::error::FileioError;
use crate::fileset::open::{with_direct_checks, RunFiles};
use crate::fill::randomize;
use crate::message;
use crate::setting::Setting;
use crate::spec::{Allocation, FileioSpec, Fill, JobIo, NamedFile};

/// What laying out the files did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LayoutOutcome {
    /// Files that were laid out, and their sizes in all.
    pub files: Vec<PathBuf>,
    pub bytes: u64,
    /// Files this job created (removed by `unlink`).
    pub created: Vec<PathBuf>,
    /// What went wrong without stopping the layout, in fio's words (a failed
    /// `posix_fallocate`).
    pub warnings: Vec<String>,
}

/// Whether `p` is a block or character device: never laid out, sized or grown.
pub fn is_device(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device() || m.file_type().is_char_device())
}

/// Files that are missing or shorter than their region, with the size each must reach.
pub fn needs_layout(job: &JobIo) -> Vec<(&NamedFile, u64)> {
    job.files
        .iter()
        .filter_map(|f| {
            let want = f.offset + f.length;
            if is_device(&f.path) {
                return None;
            }
            match fs::metadata(&f.path) {
                Ok(m) if m.len() >= want => None,
                _ => Some((f, want)),
            }
        })
        .collect()
}

/// Lay out the files of `spec.job` that are missing or too short, as fio 3.33's
/// `extend_file` (filesetup.c) does: a job that reads or writes first unlinks a short file,
/// so it is laid out anew from offset 0, never extended; every file is opened write-only
/// (created, mode 0644, unless `no_create`; truncated when data follows), allocated as
/// `allocate` says (fio's `fallocate`, default `native`: `fallocate(fd, 0, 0, size)`, a
/// failure ignored); a file that must hold data (`lay_out_data`) is then sized with
/// `ftruncate` and written from its start with `write` calls of the job's largest write
/// size, and synced unless `layout_unsynced` (fio's `create_fsync=0`). fio then drops from
/// the cache what lies beyond the old size only. `stop` ends it between writes; a write that fails ends it with
/// [`FileioError::LayoutWrite`], leaving the file as it is (as fio does).
pub fn lay_out(spec: &FileioSpec, stop: &StopFlag) -> Result<LayoutOutcome, FileioError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let Some(job) = &spec.job else {
        return Ok(LayoutOutcome::default());
    };
    let mut out = LayoutOutcome::default();
    // fio unlinks before the layout for jobs that read or write (a trim-only job keeps
    // the file and only allocates it).
    let replace = spec.access.is_some_and(|a| a.reads() || a.issues_writes());
    let mut rng = Rng::new(0x5eed, 7);
    let mut buf = Vec::new();
    for (f, want) in needs_layout(job) {
        if job.create_at_open {
            // Created by the run when it opens them: still the job's own files.
            if !f.path.exists() {
                out.created.push(f.path.clone());
            }
            continue;
        }
        if let Some(parent) = f.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.exists() {
                // fio creates missing directories (mode 0700) on the way to a file name.
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .map_err(|e| {
                        FileioError::io(format!("cannot create directory {}", parent.display()), e)
                    })?;
            }
        }
        // What the file held: fio drops the cached pages from there on after the layout.
        let have = fs::metadata(&f.path).map(|m| m.len()).ok();
        if have.is_none() {
            out.created.push(f.path.clone());
        }
        let have = have.unwrap_or(0);
        if replace {
            match fs::remove_file(&f.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(FileioError::io(
                        format!("cannot unlink {}", f.path.display()),
                        e,
                    ))
                }
                _ => {}
            }
        }
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(!job.no_create)
            .truncate(job.lay_out_data)
            .mode(0o644)
            .open(&f.path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound if job.no_create => FileioError::CreateDisallowed {
                    path: f.path.clone(),
                },
                _ => FileioError::io(format!("cannot create {}", f.path.display()), e),
            })?;
        allocate(&file, &f.path, want, job.allocate, &mut out.warnings)?;
        if job.lay_out_data {
            file.set_len(want)
                .map_err(|e| FileioError::io(format!("cannot size {}", f.path.display()), e))?;
            let chunk = job.sizes.write.max().clamp(1, want.max(1)) as usize;
            if buf.len() != chunk {
                buf = vec![0u8; chunk];
                if spec.fill == Fill::Pattern {
                    crate::fill::tile(&mut buf, spec.pattern.as_deref().unwrap_or(&[0]));
                } else if spec.fill != Fill::Zero {
                    randomize(&mut buf, &mut rng);
                }
                if let Fill::Compressible { pct } = spec.fill {
                    crate::fill::compressible(&mut buf, pct);
                }
            }
            let mut left = want;
            while left > 0 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) != 0 {
                    return Err(FileioError::Interrupted(
                        stop.load(std::sync::atomic::Ordering::Relaxed) as i32,
                    ));
                }
                let n = (left as usize).min(chunk);
                if !matches!(spec.fill, Fill::Zero | Fill::Pattern) && buf.len() >= 8 {
                    // Each write differs, so the data neither dedupes nor compresses.
                    buf[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
                }
                // A write that stops short with no errno is fio's EIO.
                file.write_all(&buf[..n])
                    .map_err(|e| FileioError::LayoutWrite {
                        path: f.path.clone(),
                        errno: e.raw_os_error().unwrap_or(libc::EIO),
                    })?;
                left -= n as u64;
            }
            if !job.layout_unsynced {
                file.sync_all()
                    .map_err(|e| FileioError::io(format!("cannot sync {}", f.path.display()), e))?;
            }
        }
        // fio drops what its layout added from the cache, whatever `invalidate` says, so a
        // run never starts on pages the layout left behind (from the old size on, as fio's
        // __file_invalidate_cache is told).
        // SAFETY: the file is open; DONTNEED only drops clean cached pages.
        unsafe {
            libc::posix_fadvise(
                file.as_raw_fd(),
                have as libc::off_t,
                want.saturating_sub(have) as libc::off_t,
                libc::POSIX_FADV_DONTNEED,
            )
        };
        out.bytes += want;
        out.files.push(f.path.clone());
    }
    Ok(out)
}

/// Give a file laid out its blocks (or its length) before any data, as fio's
/// `fallocate_file` does for each mode: `native` ignores a failure, `posix` reports it and
/// goes on, `keep` and `truncate` fail the job.
fn allocate(
    file: &fs::File,
    path: &Path,
    size: u64,
    how: Allocation,
    warnings: &mut Vec<String>,
) -> Result<(), FileioError> {
    let fd = file.as_raw_fd();
    let size = size as libc::off_t;
    // The errno of the call that just failed.
    let failed = |call: &'static str| FileioError::LayoutCall {
        path: path.to_path_buf(),
        call,
        errno: io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    };
    // SAFETY (each call): fd is open for writing; no memory is passed.
    match how {
        Allocation::None => {}
        Allocation::Native => {
            unsafe { libc::fallocate(fd, 0, 0, size) };
        }
        Allocation::Posix => {
            let r = unsafe { libc::posix_fallocate(fd, 0, size) };
            if r > 0 {
                warnings.push(format!(
                    "fio: posix_fallocate fails: {}",
                    crate::error::errno_text(r)
                ));
            }
        }
        Allocation::Keep => {
            if unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, size) } != 0 {
                return Err(failed("fallocate"));
            }
        }
        Allocation::Truncate => {
            if unsafe { libc::ftruncate(fd, size) } != 0 {
                return Err(failed("ftruncate"));
            }
        }
    }
    Ok(())
}

/// Open the job's files for a run.
pub fn open_named(spec: &FileioSpec, job: &JobIo) -> Result<RunFiles, FileioError> {
    let access = spec.access.expect("run needs an access pattern");
    let mut table = FileTable::new(PathBuf::new());
    // A job that only reads opens read-only, so a device or a file it must not change
    // cannot be written by mistake (unless its engine changes files to read them).
    let mode = if access.writes() || spec.engine.caps.opens_read_write {
        libc::O_RDWR
    } else {
        libc::O_RDONLY
    };
    let mut flags = mode | spec.flags.open_flags();
    if job.create_at_open && !job.no_create {
        flags |= libc::O_CREAT;
    }
    for f in &job.files {
        let fd: RawFd = open_raw(&f.path, flags).map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) if spec.flags.direct => FileioError::Direct(message![
                format!(
                    "the filesystem holding {} refuses O_DIRECT (",
                    f.path.display()
                ),
                Setting::Direct,
                "): test a file on a disk filesystem"
            ]),
            _ => FileioError::io(format!("cannot open {}", f.path.display()), e),
        })?;
        table.push(fd, f.path.display().to_string());
        if let Some(a) = job.advice {
            // SAFETY: fd was just opened; advice never changes the file's data.
            unsafe {
                libc::posix_fadvise(
                    fd,
                    f.offset as libc::off_t,
                    f.length as libc::off_t,
                    a.flag(),
                )
            };
        }
        let size = size_of(&f.path).unwrap_or(0);
        // A job that only writes extends its files as it goes (fio's layout leaves them
        // short when fallocate fails), so only one that reads needs the whole region.
        if job.lay_out_data
            && !job.create_at_open
            && !is_device(&f.path)
            && size < f.offset + f.length
        {
            return Err(FileioError::Other(format!(
                "{} is {size} bytes, shorter than the job's region ({} bytes from offset {})",
                f.path.display(),
                f.length,
                f.offset
            )));
        }
    }
    let mut checks = vec![
        (
            message![Setting::BlockSize, " (reads)"],
            job.sizes.read.min(),
        ),
        (
            message![Setting::BlockSize, " (writes)"],
            job.sizes.write.min(),
        ),
        (message!["the alignment of random offsets"], job.align),
    ];
    checks.extend(job.files.iter().map(|f| {
        (
            message![format!("the offset in {}", f.path.display())],
            f.offset,
        )
    }));
    let place = job.files[0].path.parent().unwrap_or(Path::new("."));
    with_direct_checks(table, spec.flags.direct, place, checks)
}

/// The size of a file, or of a block device (its length, not its inode's); `None` when it
/// does not exist.
pub fn size_of(path: &Path) -> Option<u64> {
    let m = fs::metadata(path).ok()?;
    if m.file_type().is_block_device() {
        use std::io::Seek;
        return fs::File::open(path).ok()?.seek(io::SeekFrom::End(0)).ok();
    }
    Some(m.len())
}

/// Remove the files this job created (fio's `unlink=1`).
pub fn unlink_created(created: &[PathBuf]) -> io::Result<()> {
    for p in created {
        match fs::remove_file(p) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::spec::BlockSizes;

    fn spec(dir: &Path, access: Access, data: bool) -> FileioSpec {
        FileioSpec {
            access: Some(access),
            job: Some(JobIo {
                files: vec![NamedFile {
                    path: dir.join("sub/j.0.0"),
                    offset: 4096,
                    length: 3 << 20,
                }],
                sizes: BlockSizes::fixed(4096),
                align: 4096,
                random_map: true,
                lfsr: false,
                skew: Default::default(),
                think: None,
                pass_bytes: 3 << 20,
                passes: Some(1),
                round_bytes: None,
                repeat_each_round: false,
                sync_every_writes: 0,
                lay_out_data: data,
                allocate: Allocation::None,
                layout_unsynced: false,
                no_create: false,
                tolerate: None,
                unlink: true,
                invalidate: false,
                invalidate_on_wrap: false,
                advice: None,
                create_at_open: false,
                fill_device: false,
                queue_low: None,
                batch: None,
                stride: None,
                log: None,
                trace: None,
                zones: None,
                replay: None,
                pre_read: false,
                serialize_overlap: false,
                number_ios: None,
                service: Default::default(),
                min_rate: None,
                max_latency: None,
                flow: None,
                verify: None,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn readers_get_data_writers_get_allocated_files() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), Access::seq_read(), true);
        let out = lay_out(&s, &StopFlag::default()).unwrap();
        let p = d.path().join("sub/j.0.0");
        assert_eq!(out.created, vec![p.clone()]);
        assert_eq!(out.bytes, 4096 + (3 << 20));
        let m = fs::metadata(&p).unwrap();
        assert_eq!(m.len(), 4096 + (3 << 20));
        assert!(m.blocks() * 512 >= 3 << 20, "written, not sparse");
        // Already long enough: left alone.
        assert_eq!(
            lay_out(&s, &StopFlag::default()).unwrap(),
            LayoutOutcome::default()
        );
        let files = open_named(&s, s.job.as_ref().unwrap()).unwrap();
        assert_eq!(files.table.len(), 1);
        unlink_created(&out.created).unwrap();
        assert!(!p.exists());

        // A writer's file: allocated (fallocate gives it its length), not written; without
        // allocation (fio's fallocate=none) only created, as fio leaves it.
        let mut w = spec(d.path(), Access::rand_write(), false);
        lay_out(&w, &StopFlag::default()).unwrap();
        assert_eq!(fs::metadata(&p).unwrap().len(), 0);
        fs::remove_file(&p).unwrap();
        w.job.as_mut().unwrap().allocate = Allocation::Native;
        lay_out(&w, &StopFlag::default()).unwrap();
        let m = fs::metadata(&p).unwrap();
        assert_eq!(m.len(), 4096 + (3 << 20));
        assert!(fs::read(&p).unwrap().iter().all(|&b| b == 0), "not written");
    }

    #[test]
    fn a_short_file_is_laid_out_anew_not_extended() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), Access::seq_read(), true);
        let p = d.path().join("sub/j.0.0");
        fs::create_dir_all(d.path().join("sub")).unwrap();
        fs::write(&p, vec![7u8; 8192]).unwrap();
        let out = lay_out(&s, &StopFlag::default()).unwrap();
        assert!(out.created.is_empty(), "it existed");
        let data = fs::read(&p).unwrap();
        assert_eq!(data.len(), 4096 + (3 << 20));
        assert!(data[..8192].iter().filter(|&&b| b == 7).count() < 1024);
    }

    #[test]
    fn a_short_file_is_refused_at_open() {
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), Access::seq_read(), true);
        fs::create_dir_all(d.path().join("sub")).unwrap();
        fs::write(d.path().join("sub/j.0.0"), b"abc").unwrap();
        let e = open_named(&s, s.job.as_ref().unwrap()).err().unwrap();
        assert!(
            e.to_string().contains("shorter than the job's region"),
            "{e}"
        );
    }
}
