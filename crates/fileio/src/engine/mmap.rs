//! Memory-mapped I/O (sysbench's `--file-io-mode=mmap`, fio's `mmap`): every file mapped
//! whole (MAP_SHARED) once per run; a read or write is a memcpy, a sync is
//! msync(MS_SYNC | MS_INVALIDATE), as sysbench does on 64-bit systems. A trim is
//! BLKDISCARD on the file's descriptor, as fio's mmap engine does.
//!
//! A file truncated by another process while mapped makes the copy fault with SIGBUS; plumb
//! checks sizes before mapping, but cannot guard against that during the run.

use std::sync::Arc;

use plumb_core::{Worker, WorkloadError};

use super::{always, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Shared, Submitted};
use crate::error::FileioError;
use crate::fileset::open::RunFiles;
use crate::fileset::FileTable;
use crate::spec::FileioSpec;
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "mmap",
    caps: Caps {
        maps_files: true,
        open_flags: false,
        ..Caps::FILE_CALLS
    },
    options: &[],
    available: always,
    share,
    worker,
};

/// Every file is mapped once per run, for all threads.
fn share(files: Option<&RunFiles>, spec: &FileioSpec) -> Result<Option<Shared>, FileioError> {
    let files = files.ok_or_else(|| FileioError::Other("mmap needs the file set".into()))?;
    if spec.access.is_some_and(|a| a.writes()) {
        check_room(&files.table, spec.file_size())?;
    }
    Ok(Some(Arc::new(Mappings::map(
        &files.table,
        spec.file_size(),
    )?)))
}

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    let maps = s
        .shared
        .and_then(|a| a.downcast::<Mappings>().ok())
        .ok_or_else(|| WorkloadError::new("mmap: the files are not mapped"))?;
    Ok(s.driver.drive(MmapEngine::new(maps, files, s.bufs)))
}

/// A store through a mapping into a part of a file the disk has no room for kills the
/// process with SIGBUS (sysbench 1.0.20 dies so, exit 135), where a write call fails with
/// ENOSPC. A run that writes therefore first checks that the disk can hold the parts of its
/// files not allocated yet (a seqwr run's new files, holes): a full disk is then one line
/// before the run. Space taken by others during the run can still fault.
fn check_room(files: &FileTable, len: u64) -> Result<(), FileioError> {
    let mut needed = 0u64;
    for i in 0..files.len() as u32 {
        // SAFETY: fstat writes into a zeroed struct it owns for the call.
        let allocated = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(files.fd(i), &mut st) != 0 {
                continue;
            }
            st.st_blocks as u64 * 512
        };
        needed += len.saturating_sub(allocated);
    }
    if needed == 0 || files.is_empty() {
        return Ok(());
    }
    let first = files.dir().join(files.name(0));
    match crate::fileset::available_bytes(&first) {
        Some(avail) if avail < needed => Err(FileioError::NoSpace {
            needed: plumb_core::size::format_compact(needed),
            available: plumb_core::size::format_compact(avail),
            dir: first.parent().map(|p| p.to_path_buf()).unwrap_or_default(),
        }),
        _ => Ok(()),
    }
}

/// The run's mappings, shared by all threads.
pub struct Mappings {
    maps: Vec<(*mut u8, usize)>,
}

// SAFETY: the mappings are plain shared memory; concurrent requests to one block race on
// data only, as concurrent pwrite calls to one block would.
unsafe impl Send for Mappings {}
unsafe impl Sync for Mappings {}

impl Mappings {
    pub fn map(files: &FileTable, len: u64) -> Result<Mappings, FileioError> {
        let mut maps = Vec::with_capacity(files.len());
        for i in 0..files.len() as u32 {
            // A job that only reads opened its files read-only: mapped for reading, as fio
            // maps them (a writable shared mapping of such a file is refused).
            // SAFETY: F_GETFL on an open descriptor.
            let mode = unsafe { libc::fcntl(files.fd(i), libc::F_GETFL) } & libc::O_ACCMODE;
            let prot = if mode == libc::O_RDONLY {
                libc::PROT_READ
            } else {
                libc::PROT_READ | libc::PROT_WRITE
            };
            // SAFETY: mapping an open descriptor; the result is checked.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len as usize,
                    prot,
                    libc::MAP_SHARED,
                    files.fd(i),
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                let e = std::io::Error::last_os_error();
                let m = Mappings { maps };
                drop(m);
                return Err(FileioError::io(format!("cannot mmap {}", files.name(i)), e));
            }
            maps.push((p.cast::<u8>(), len as usize));
        }
        Ok(Mappings { maps })
    }
}

impl Drop for Mappings {
    fn drop(&mut self) {
        for &(p, len) in &self.maps {
            // SAFETY: each entry was returned by mmap with this length.
            unsafe { libc::munmap(p.cast(), len) };
        }
    }
}

pub struct MmapEngine {
    maps: Arc<Mappings>,
    /// The mapped files' descriptors (trims).
    files: Arc<FileTable>,
    bufs: Buffers,
}

impl MmapEngine {
    pub fn new(maps: Arc<Mappings>, files: Arc<FileTable>, bufs: Buffers) -> MmapEngine {
        MmapEngine { maps, files, bufs }
    }
}

impl Engine for MmapEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        if req.dir == Dir::Trim {
            let fd = self.files.fd(req.io.file);
            return Ok(Submitted::Done(super::discard(
                fd,
                req.io.offset,
                req.io.len,
            )));
        }
        let (base, maplen) = self.maps.maps[req.io.file as usize];
        let (off, len) = (req.io.offset as usize, req.io.len as usize);
        if off + len > maplen {
            return Ok(Submitted::Done(Err(Errno {
                call: "mmap copy",
                errno: libc::EINVAL,
            })));
        }
        let buf = self.bufs.get(slot).as_mut_ptr();
        // SAFETY: both ranges are in bounds (checked above; buffers hold the largest request)
        // and a mapping never overlaps a heap buffer.
        unsafe {
            match req.dir {
                Dir::Read => std::ptr::copy_nonoverlapping(base.add(off), buf, len),
                Dir::Write => std::ptr::copy_nonoverlapping(buf, base.add(off), len),
                Dir::Trim => {}
            }
        }
        Ok(Submitted::Done(Ok(len)))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        let (base, len) = self.maps.maps[file as usize];
        // SAFETY: msync of a live mapping.
        let r = unsafe { libc::msync(base.cast(), len, libc::MS_SYNC | libc::MS_INVALIDATE) };
        if r != 0 {
            return Err(Errno::last("msync"));
        }
        Ok(())
    }
}
