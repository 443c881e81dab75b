//! Opening the file set for `run`, and completing it after a timed seqwr run.
//!
//! Before a run: every file is plumb's, holds at least the run's file size of valid data
//! (checked in the manifest and with fstat, so a file truncated since prepare is caught), and
//! O_DIRECT's alignment rules hold for the sizes asked for. seqwr starts from empty files,
//! as sysbench's does (it measures writing new files); when the run ends before every file
//! is full, plumb writes the rest after the measurement, so the next run finds a complete
//! set (sysbench leaves the files short and the next read test fails, sysbench #385).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use plumb_core::size::format_compact;
use plumb_core::StopFlag;

use super::manifest::{Entry, Manifest, Ownership, MIXED};
use super::prepare::check_names;
use super::write::{WriteStop, Writer};
use super::{check_dir, file_name, open_raw, FileTable};
use crate::buf::page_size;
use crate::direct::{support, AlignSource, DirectSupport};
use crate::error::{errno_text, FileioError};
use crate::message;
use crate::pattern::Geometry;
use crate::setting::{Message, Setting};
use crate::spec::FileioSpec;

/// The run's files, opened.
pub struct RunFiles {
    pub table: Arc<FileTable>,
    /// Alignment for request buffers.
    pub buf_align: usize,
    /// O_DIRECT alignment of offsets and lengths, and where it came from (direct runs).
    pub direct_align: Option<(u32, AlignSource)>,
}

/// Make sure `needed` descriptors fit under RLIMIT_NOFILE, raising the soft limit if the
/// hard one allows.
fn ensure_fd_limit(needed: u64) -> Result<(), FileioError> {
    // SAFETY: rl is written by getrlimit before it is read.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return Ok(());
    }
    let want = needed + 64;
    if rl.rlim_cur >= want {
        return Ok(());
    }
    if rl.rlim_max >= want {
        let raised = libc::rlimit {
            rlim_cur: want.max(rl.rlim_cur),
            rlim_max: rl.rlim_max,
        };
        // SAFETY: setrlimit with a valid struct.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Ok(());
        }
    }
    Err(FileioError::Settings(message![
        "too many open files: ",
        Setting::FileCount,
        format!(
            "={needed} needs about {want} descriptors, but the limit is {} (raise it with 'ulimit -n', or use fewer files)",
            rl.rlim_max
        )
    ]))
}

fn not_prepared(what: String) -> FileioError {
    FileioError::NotPrepared(message![what])
}

/// Open the file set for a run of `spec` (its access must be set; not for engines without
/// files).
pub fn open_for_run(spec: &FileioSpec) -> Result<RunFiles, FileioError> {
    let access = spec.access.expect("run needs an access pattern");
    let dir = spec.dir.as_path();
    check_dir(dir)?;
    let existing = Manifest::load(dir)?;
    let owners = check_names(dir, existing.as_ref(), spec.num_files)?;
    let seqwr = access.creates_files;
    let Some(mut manifest) = existing.or_else(|| seqwr.then(Manifest::default)) else {
        return Err(not_prepared(format!(
            "no prepared file set in {}",
            dir.display()
        )));
    };
    let size = spec.file_size();
    let fill = spec.effective_fill();

    if !seqwr {
        for (i, own) in owners.iter().enumerate() {
            let name = file_name(i as u32);
            let entry = manifest.entry(&name);
            match (own, entry) {
                (Ownership::Owned, Some(e)) if e.valid_bytes >= size => {
                    // Only reads check blocks; writes lay down checksummed blocks on any
                    // prepared set (sysbench's --validate rndwr runs on plain files) and
                    // mark it mixed below, so a later validating read is refused.
                    if spec.validate
                        && access.reads()
                        && (e.fill != "validate" || e.block_size != spec.block_size)
                    {
                        return Err(FileioError::Settings(message![
                            Setting::Validate,
                            " needs files prepared with ",
                            Setting::Validate,
                            " and ",
                            Setting::BlockSize,
                            format!(
                                "={}, but {name} holds '{}' data{}: run prepare again with ",
                                spec.block_size,
                                e.fill,
                                if e.fill == "validate" {
                                    format!(" in {}-byte blocks", e.block_size)
                                } else {
                                    String::new()
                                }
                            ),
                            Setting::Validate
                        ]));
                    }
                }
                (Ownership::Owned, Some(e)) => {
                    return Err(not_prepared(
                        format!(
                            "{name} holds {} of data but this run needs {} per file (prepared with other sizes, or a prepare or seqwr run was interrupted)",
                            format_compact(e.valid_bytes),
                            format_compact(size)
                        ),
                    ))
                }
                _ => {
                    return Err(not_prepared(
                        format!("{} is missing", dir.join(&name).display()),
                    ))
                }
            }
        }
    }

    if seqwr {
        // Listed before they are created or emptied, so an interrupted run leaves a set the
        // next prepare or cleanup recognises.
        for (i, own) in owners.iter().enumerate() {
            let e = manifest.upsert(&file_name(i as u32));
            e.valid_bytes = 0;
            e.fill = fill.name().into();
            e.block_size = spec.block_size;
            if *own == Ownership::Absent {
                e.dev = 0;
                e.ino = 0;
            }
        }
        manifest.save(dir)?;
    }
    ensure_fd_limit(spec.num_files as u64)?;
    let mut table = FileTable::new(dir.to_path_buf());
    let flags = libc::O_RDWR | spec.flags.open_flags();
    for (i, own) in owners.iter().enumerate() {
        let name = file_name(i as u32);
        let path = dir.join(&name);
        let mut f = flags;
        if seqwr {
            f |= if *own == Ownership::Absent {
                libc::O_CREAT | libc::O_EXCL
            } else {
                libc::O_TRUNC
            };
        }
        let fd = open_raw(&path, f).map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) if spec.flags.direct => FileioError::Direct(message![
                format!("the filesystem holding {} refuses O_DIRECT (", dir.display()),
                Setting::Direct,
                "): it cannot do direct I/O (tmpfs before Linux 6.6, some network and FUSE filesystems); test a directory on a disk filesystem"
            ]),
            Some(libc::EMFILE) | Some(libc::ENFILE) => FileioError::Settings(message![
                format!(
                    "too many open files while opening {name} of {}: raise the limit with 'ulimit -n' or use fewer ",
                    spec.num_files
                ),
                Setting::FileCount
            ]),
            _ => FileioError::io(format!("cannot open {}", path.display()), e),
        })?;
        table.push(fd, name.clone());
        let meta = fs::metadata(&path)
            .map_err(|e| FileioError::io(format!("cannot stat {}", path.display()), e))?;
        if seqwr {
            let e = manifest.upsert(&name);
            e.dev = meta.dev();
            e.ino = meta.ino();
        } else if meta.len() < size {
            return Err(not_prepared(format!(
                "{} is {} but this run needs {}: it was truncated or replaced after prepare",
                path.display(),
                format_compact(meta.len()),
                format_compact(size)
            )));
        }
        if seqwr && spec.engine.caps.maps_files {
            // A mapping needs the file's full length (sysbench does the same).
            // SAFETY: fd is open for writing.
            if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
                return Err(FileioError::io(
                    format!("cannot size {}", path.display()),
                    std::io::Error::last_os_error(),
                ));
            }
        }
    }
    // seqwr's files are new (their inodes are recorded); another writing run changes the
    // manifest only when it writes another fill over the prepared one. An unchanged manifest
    // is not written again: a run on a full disk then reaches its writes (and says so)
    // instead of failing on plumb's own bookkeeping.
    let mut changed = seqwr;
    if access.writes() && !seqwr {
        for i in 0..spec.num_files {
            let e = manifest.upsert(&file_name(i));
            if e.fill != fill.name() && e.fill != MIXED {
                e.fill = MIXED.into();
                changed = true;
            }
        }
    }
    if changed {
        manifest.save(dir)?;
    }

    use Setting as S;
    let mut checks = vec![(message![S::BlockSize], spec.block_size)];
    if access.is_sequential() && spec.merged_requests > 1 {
        checks.push((
            message![S::BlockSize, " × ", S::MergedRequests],
            Geometry::from_spec(spec).request,
        ));
    }
    checks.push((
        message!["the file size (", S::TotalSize, " / ", S::FileCount, ")"],
        size,
    ));
    with_direct_checks(table, spec.flags.direct, dir, checks)
}

/// The run's files, ready: with O_DIRECT, the filesystem holding `place` must take it and
/// every size in `checks` (what it is, bytes) must be a multiple of its alignment.
pub(crate) fn with_direct_checks(
    table: FileTable,
    direct: bool,
    place: &std::path::Path,
    checks: Vec<(Message, u64)>,
) -> Result<RunFiles, FileioError> {
    let mut buf_align = page_size().max(4096);
    let mut direct_align = None;
    if direct && !table.is_empty() {
        match support(table.fd(0)) {
            DirectSupport::Unsupported => {
                return Err(FileioError::Direct(message![
                    format!(
                        "the filesystem holding {} cannot do direct I/O (",
                        place.display()
                    ),
                    Setting::Direct,
                    ")"
                ]))
            }
            DirectSupport::Aligned {
                mem,
                offset,
                source,
            } => {
                let a = offset as u64;
                if let Some((what, v)) = checks.into_iter().find(|(_, v)| v % a != 0) {
                    let mut m = what.0;
                    m.extend(
                        message![
                            format!(
                                " is {v} bytes, not a multiple of {a}, the direct I/O alignment of {} ({}): with ",
                                place.display(),
                                source.name()
                            ),
                            Setting::Direct,
                            " every request size and offset must be a multiple of it"
                        ]
                        .0,
                    );
                    return Err(FileioError::Direct(Message(m)));
                }
                buf_align = buf_align.max(mem as usize);
                direct_align = Some((offset, source));
            }
        }
    }
    Ok(RunFiles {
        table: Arc::new(table),
        buf_align,
        direct_align,
    })
}

/// After seqwr: write what the run did not, so every file holds its full size. `issued`:
/// sequential requests the run issued (all complete). Returns bytes written.
pub fn complete_seqwr(spec: &FileioSpec, issued: u64, stop: &StopFlag) -> Result<u64, FileioError> {
    let dir = spec.dir.as_path();
    let geo = Geometry::from_spec(spec);
    let size = spec.file_size();
    let cpf = geo.chunks_per_file();
    let mut manifest = Manifest::load(dir)?.unwrap_or_default();
    let fill = spec.effective_fill();
    let mut writer = Writer::new(fill, spec.block_size)
        .ok_or_else(|| FileioError::Other("cannot allocate a write buffer".into()))?;
    let mut written = 0u64;
    for i in 0..spec.num_files {
        let name = file_name(i);
        // How far the run's cursor got in this file.
        let reached = if issued >= geo.seq_pass() {
            size
        } else {
            let k = issued as i128 - i as i128 * cpf as i128;
            if k <= 0 {
                0
            } else {
                (k as u64 * geo.request).min(size)
            }
        };
        if reached < size {
            let path = dir.join(&name);
            let fd = open_raw(&path, libc::O_WRONLY)
                .map_err(|e| FileioError::io(format!("cannot open {}", path.display()), e))?;
            let res = writer.fill(fd, reached, size, stop, &mut |n| written += n);
            // SAFETY: opened above, closed once.
            unsafe { libc::close(fd) };
            match res {
                Ok(()) => {}
                Err(WriteStop::Interrupted { written: w, signal }) => {
                    let e = manifest.upsert(&name);
                    e.valid_bytes = reached + w;
                    manifest.save(dir)?;
                    return Err(FileioError::Interrupted(signal));
                }
                Err(WriteStop::Failed {
                    written: w,
                    call,
                    errno,
                }) => {
                    manifest.upsert(&name).valid_bytes = reached + w;
                    manifest.save(dir)?;
                    return Err(FileioError::Other(format!(
                        "completing {} after seqwr: {call} failed: {} (the file set is incomplete; prepare will finish it)",
                        path.display(),
                        errno_text(errno)
                    )));
                }
            }
        }
        let e: &mut Entry = manifest.upsert(&name);
        e.valid_bytes = size;
    }
    manifest.save(dir)?;
    Ok(written)
}
