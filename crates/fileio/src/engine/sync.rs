//! pread/pwrite, blocking: sysbench's default `--file-io-mode=sync`, fio's `psync`.

use std::sync::Arc;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, retry, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
};
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "sync",
    caps: Caps::FILE_CALLS,
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    Ok(s.driver.drive(SyncEngine::new(files, s.bufs, s.fsync)))
}

pub struct SyncEngine {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
}

impl SyncEngine {
    pub fn new(files: Arc<FileTable>, bufs: Buffers, fsync: FsyncMode) -> SyncEngine {
        SyncEngine { files, bufs, fsync }
    }
}

/// fsync or fdatasync one descriptor.
pub(crate) fn sync_fd(fd: i32, mode: FsyncMode) -> Result<(), Errno> {
    let (name, f): (&'static str, unsafe extern "C" fn(i32) -> i32) = match mode {
        FsyncMode::Fsync => ("fsync", libc::fsync),
        FsyncMode::Fdatasync => ("fdatasync", libc::fdatasync),
    };
    // SAFETY: fd is an open descriptor owned by the file table.
    retry(name, || unsafe { f(fd) } as isize).map(|_| ())
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
        let fd = self.files.fd(req.io.file);
        let buf = self.bufs.get(slot).as_mut_ptr();
        let (len, off) = (req.io.len as usize, req.io.offset as libc::off_t);
        // SAFETY: buf holds at least len bytes (buffers are sized for the largest request)
        // and fd is open for the life of the file table.
        Ok(Submitted::Done(match req.dir {
            Dir::Read => retry("pread", || unsafe { libc::pread(fd, buf.cast(), len, off) }),
            Dir::Write => retry("pwrite", || unsafe {
                libc::pwrite(fd, buf.cast_const().cast(), len, off)
            }),
        }))
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        sync_fd(self.files.fd(file), self.fsync)
    }
}
