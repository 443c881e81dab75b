//! read/write after lseek, blocking: fio's `sync`. A trim is BLKDISCARD ([`super::discard`]).
//!
//! As fio does, the lseek is skipped when the file position is already at the request's
//! offset (the previous request on that file ended there: sequential access makes one
//! lseek per file, not one per request). The position belongs to the open file description,
//! so each thread reopens the run's files ([`FileTable::reopen`]): threads sharing one
//! would move each other's requests, where fio's jobs each open their own.

use std::os::fd::RawFd;
use std::sync::Arc;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, retry, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
};
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;
use plumb_core::rawsys;

pub static DEF: EngineDef = EngineDef {
    name: "sync",
    caps: Caps::FILE_CALLS,
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = SeekingFiles::for_thread(&s)?;
    Ok(s.driver.drive(SyncEngine::new(files, s.bufs, s.fsync)))
}

/// One thread's own descriptors of the run's files, and where each one's position is.
pub struct SeekingFiles {
    files: Arc<FileTable>,
    /// The file position, when known (unknown before the first request and after a
    /// failed one).
    pos: Vec<Option<u64>>,
}

impl SeekingFiles {
    /// `files` must not be shared with another thread that seeks.
    pub fn new(files: Arc<FileTable>) -> SeekingFiles {
        SeekingFiles {
            pos: vec![None; files.len()],
            files,
        }
    }

    /// This thread's own descriptors of the run's files.
    pub(crate) fn for_thread(s: &Setup) -> Result<SeekingFiles, WorkloadError> {
        let run = s.files()?;
        let own = run.reopen().map_err(|e| {
            WorkloadError::new(format!(
                "cannot reopen the files in {} for this thread: {e}",
                run.dir().display()
            ))
        })?;
        Ok(SeekingFiles::new(Arc::new(own)))
    }

    /// The descriptor of `file`, its position moved to `offset` if it is not there.
    #[inline]
    pub fn at(&mut self, file: u32, offset: u64) -> Result<RawFd, Errno> {
        let fd = self.files.fd(file);
        let pos = &mut self.pos[file as usize];
        if *pos != Some(offset) {
            *pos = None;
            // SAFETY: lseek on a descriptor the table keeps open.
            retry("lseek", || unsafe {
                libc::lseek(fd, offset as libc::off_t, libc::SEEK_SET) as isize
            })?;
            *pos = Some(offset);
        }
        Ok(fd)
    }

    /// Record where a transfer that started at `offset` left the position.
    #[inline]
    pub fn moved(&mut self, file: u32, offset: u64, res: &Result<usize, Errno>) {
        self.pos[file as usize] = match res {
            Ok(n) => Some(offset + *n as u64),
            Err(_) => None,
        };
    }

    pub fn sync(&self, file: u32, mode: FsyncMode) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), mode)
    }
}

pub struct SyncEngine {
    files: SeekingFiles,
    bufs: Buffers,
    fsync: FsyncMode,
}

impl SyncEngine {
    pub fn new(files: SeekingFiles, bufs: Buffers, fsync: FsyncMode) -> SyncEngine {
        SyncEngine { files, bufs, fsync }
    }
}

impl Engine for SyncEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        let (file, off, len) = (req.io.file, req.io.offset, req.io.len as usize);
        let fd = match self.files.at(file, off) {
            Ok(fd) => fd,
            Err(e) => return Ok(Submitted::Done(Err(e))),
        };
        let buf = self.bufs.get(slot).as_mut_ptr();
        // SAFETY: buf holds at least len bytes (buffers are sized for the largest request)
        // and fd is open for the life of the file table.
        let res = match req.dir {
            Dir::Read => retry("read", || unsafe { rawsys::read(fd, buf, len) }),
            Dir::Write => retry("write", || unsafe { rawsys::write(fd, buf, len) }),
            // A trim leaves the file position where the seek put it (fio seeks for a trim
            // too, then discards).
            Dir::Trim => return Ok(Submitted::Done(super::discard(fd, off, req.io.len))),
        };
        self.files.moved(file, off, &res);
        Ok(Submitted::Done(res))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        self.files.sync(file, self.fsync)
    }
}
