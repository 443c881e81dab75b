//! readv/writev after lseek, blocking: fio's `vsync`, one buffer per call.
//!
//! fio's vsync also gathers requests that continue one another (same file, same direction)
//! into one readv/writev when its iodepth is above 1; plumb's requests are one per call,
//! which is what fio does at its default iodepth of 1. The position is kept as the `sync`
//! engine keeps it: per thread, lseek only when it is not already at the offset.
//!
//! A trim here is BLKDISCARD, as the sync engine's. fio 3.33's vsync does not trim: it
//! queues the trim as an iovec and writes it (writev) at commit, so the fio front end
//! refuses trim modes on vsync rather than discard where fio writes.

use plumb_core::{Worker, WorkloadError};

use super::sync::SeekingFiles;
use super::{
    always, nothing_shared, retry, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
};
use crate::spec::FsyncMode;
use crate::worker::Setup;
use plumb_core::rawsys;

pub static DEF: EngineDef = EngineDef {
    name: "vsync",
    caps: Caps::FILE_CALLS,
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = SeekingFiles::for_thread(&s)?;
    Ok(s.driver.drive(VsyncEngine::new(files, s.bufs, s.fsync)))
}

pub struct VsyncEngine {
    files: SeekingFiles,
    bufs: Buffers,
    fsync: FsyncMode,
}

impl VsyncEngine {
    pub fn new(files: SeekingFiles, bufs: Buffers, fsync: FsyncMode) -> VsyncEngine {
        VsyncEngine { files, bufs, fsync }
    }
}

impl Engine for VsyncEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        let (file, off) = (req.io.file, req.io.offset);
        let fd = match self.files.at(file, off) {
            Ok(fd) => fd,
            Err(e) => return Ok(Submitted::Done(Err(e))),
        };
        let iov = libc::iovec {
            iov_base: self.bufs.get(slot).as_mut_ptr().cast(),
            iov_len: req.io.len as usize,
        };
        // SAFETY: the iovec covers len bytes of this slot's buffer (sized for the largest
        // request) and fd is open for the life of the file table.
        let res = match req.dir {
            Dir::Read => retry("readv", || unsafe { rawsys::readv(fd, &iov, 1) }),
            Dir::Write => retry("writev", || unsafe { rawsys::writev(fd, &iov, 1) }),
            Dir::Trim => return Ok(Submitted::Done(super::discard(fd, off, req.io.len))),
        };
        self.files.moved(file, off, &res);
        Ok(Submitted::Done(res))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        self.files.sync(file, self.fsync)
    }
}
