//! pread/pwrite, blocking: fio's `psync`, and what sysbench's default `--file-io-mode=sync`
//! does. The engine is shared with pvsync (preadv/pwritev), which differs only in the call.
//! A trim is BLKDISCARD in both ([`super::discard`]), as fio's psync and pvsync do.

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
    name: "psync",
    caps: Caps::FILE_CALLS,
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    Ok(s.driver.drive(PsyncEngine::new(files, s.bufs, s.fsync)))
}

/// Positional reads and writes at the request's offset: one buffer with pread/pwrite, or
/// one iovec with preadv/pwritev (`VECTORED`, chosen at compile time).
pub struct Positional<const VECTORED: bool> {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
}

pub type PsyncEngine = Positional<false>;

impl<const VECTORED: bool> Positional<VECTORED> {
    pub fn new(files: Arc<FileTable>, bufs: Buffers, fsync: FsyncMode) -> Self {
        Positional { files, bufs, fsync }
    }
}

impl<const VECTORED: bool> Engine for Positional<VECTORED> {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        let fd = self.files.fd(req.io.file);
        let buf = self.bufs.get(slot).as_mut_ptr();
        let (len, off) = (req.io.len as usize, req.io.offset as libc::off_t);
        let iov = libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        };
        // SAFETY: buf (and the iovec over it) holds at least len bytes (buffers are sized for
        // the largest request) and fd is open for the life of the file table.
        Ok(Submitted::Done(match (req.dir, VECTORED) {
            (Dir::Read, false) => retry("pread", || unsafe { rawsys::pread(fd, buf, len, off) }),
            (Dir::Write, false) => retry("pwrite", || unsafe { rawsys::pwrite(fd, buf, len, off) }),
            (Dir::Read, true) => retry("preadv", || unsafe { rawsys::preadv(fd, &iov, 1, off) }),
            (Dir::Write, true) => retry("pwritev", || unsafe { rawsys::pwritev(fd, &iov, 1, off) }),
            (Dir::Trim, _) => super::discard(fd, req.io.offset, req.io.len),
        }))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), self.fsync)
    }
}
