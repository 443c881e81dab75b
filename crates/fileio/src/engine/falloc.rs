//! fallocate(2) as the request: fio's `falloc` engine, which moves no data. A read is
//! `fallocate(FALLOC_FL_KEEP_SIZE)`, a write `fallocate(0)` (which may extend the file), a
//! trim `fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`: the one way fio trims a
//! regular file. Files are always opened for writing, as fio's engine opens them
//! (O_RDWR, without O_DIRECT or O_SYNC).

use std::sync::Arc;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, retry, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
};
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "falloc",
    caps: Caps {
        // One system call per request on the files, but no data moves.
        does_io: false,
        open_flags: false,
        opens_read_write: true,
        ..Caps::FILE_CALLS
    },
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    Ok(s.driver.drive(FallocEngine::new(files, s.bufs, s.fsync)))
}

pub struct FallocEngine {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
}

impl FallocEngine {
    pub fn new(files: Arc<FileTable>, bufs: Buffers, fsync: FsyncMode) -> FallocEngine {
        FallocEngine { files, bufs, fsync }
    }
}

/// fio's fallocate mode for each direction.
pub fn mode(dir: Dir) -> libc::c_int {
    match dir {
        Dir::Read => libc::FALLOC_FL_KEEP_SIZE,
        Dir::Write => 0,
        Dir::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
    }
}

impl Engine for FallocEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline]
    fn submit(&mut self, _slot: usize, req: Request) -> Result<Submitted, Errno> {
        let fd = self.files.fd(req.io.file);
        let (off, len) = (req.io.offset as libc::off_t, req.io.len as libc::off_t);
        // SAFETY: fallocate on a descriptor the file table keeps open; no memory is passed.
        let r = retry("fallocate", || unsafe {
            libc::fallocate(fd, mode(req.dir), off, len) as isize
        });
        Ok(Submitted::Done(r.map(|_| req.io.len as usize)))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), self.fsync)
    }
}
