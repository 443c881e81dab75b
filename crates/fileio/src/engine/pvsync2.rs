//! preadv2/pwritev2, blocking: fio's `pvsync2`, one buffer per call, with its per-call
//! flags as engine options: `hipri` (RWF_HIPRI: poll for completion, which only direct I/O
//! on a device with poll queues honours) and `nowait` (RWF_NOWAIT: fail with EAGAIN rather
//! than block, e.g. on a read of data not in the page cache). fio's `hipri_percentage` and
//! `uncached` are not offered.

use std::sync::Arc;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, retry, Buffers, Caps, Dir, Engine, EngineDef, EngineOption, Errno,
    Request, Submitted,
};
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;

/// Option names (fio's).
pub const HIPRI: &str = "hipri";
pub const NOWAIT: &str = "nowait";

pub static DEF: EngineDef = EngineDef {
    name: "pvsync2",
    caps: Caps::FILE_CALLS,
    options: &[
        EngineOption {
            name: HIPRI,
            default: false,
            help: "set RWF_HIPRI on every request (polled completion)",
        },
        EngineOption {
            name: NOWAIT,
            default: false,
            help: "set RWF_NOWAIT on every request (EAGAIN instead of blocking)",
        },
    ],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    let mut flags = 0;
    if DEF.option(&s.options, HIPRI).unwrap_or(false) {
        flags |= libc::RWF_HIPRI;
    }
    if DEF.option(&s.options, NOWAIT).unwrap_or(false) {
        flags |= libc::RWF_NOWAIT;
    }
    Ok(s.driver
        .drive(Pvsync2Engine::new(files, s.bufs, s.fsync, flags)))
}

pub struct Pvsync2Engine {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
    /// RWF_* flags for every call.
    flags: libc::c_int,
}

impl Pvsync2Engine {
    pub fn new(
        files: Arc<FileTable>,
        bufs: Buffers,
        fsync: FsyncMode,
        flags: libc::c_int,
    ) -> Pvsync2Engine {
        Pvsync2Engine {
            files,
            bufs,
            fsync,
            flags,
        }
    }
}

impl Engine for Pvsync2Engine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        let fd = self.files.fd(req.io.file);
        let iov = libc::iovec {
            iov_base: self.bufs.get(slot).as_mut_ptr().cast(),
            iov_len: req.io.len as usize,
        };
        let (off, flags) = (req.io.offset as libc::off_t, self.flags);
        // SAFETY: the iovec covers len bytes of this slot's buffer (sized for the largest
        // request) and fd is open for the life of the file table.
        Ok(Submitted::Done(match req.dir {
            Dir::Read => retry("preadv2", || unsafe {
                libc::preadv2(fd, &iov, 1, off, flags)
            }),
            Dir::Write => retry("pwritev2", || unsafe {
                libc::pwritev2(fd, &iov, 1, off, flags)
            }),
            Dir::Trim => super::discard(fd, req.io.offset, req.io.len),
        }))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), self.fsync)
    }
}
