//! Dropping the cached pages of a job's file regions (fio's `invalidate`), the way fio 3.33
//! does it: `posix_fadvise(POSIX_FADV_DONTNEED)` over the region for a regular file, the
//! BLKFLSBUF ioctl (write back and drop the device's whole buffer cache) for a block device,
//! nothing for anything else (character devices, pipes).
//!
//! fio needs root for BLKFLSBUF and goes on without the flush when refused; plumb then
//! drops the region's pages with `posix_fadvise`, which any reader may do, so the run reads
//! the device as the job asked. A failed drop is never an error: as in fio, the cache is a
//! hint the kernel may partly keep.

use std::sync::Arc;

use crate::fileset::FileTable;
use crate::spec::NamedFile;

/// `_IO(0x12, 97)` from linux/fs.h.
const BLKFLSBUF: libc::c_ulong = 0x1261;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Block,
    Other,
}

/// The run's files, their regions and kinds, looked up once per thread.
pub struct CacheDrop {
    table: Arc<FileTable>,
    /// Per file: offset, length, kind.
    regions: Vec<(u64, u64, Kind)>,
}

impl CacheDrop {
    pub fn new(table: Arc<FileTable>, files: &[NamedFile]) -> CacheDrop {
        let regions = files
            .iter()
            .zip(table.fds())
            .map(|(f, &fd)| (f.offset, f.length, kind_of(fd)))
            .collect();
        CacheDrop { table, regions }
    }

    /// Drop the cached pages of `file`'s region, or from `from` for the region's length
    /// (fio drops from where a zoned file's zone starts).
    pub fn drop_file(&self, file: u32, from: Option<u64>) {
        let Some(&(start, length, kind)) = self.regions.get(file as usize) else {
            return;
        };
        let offset = from.unwrap_or(start);
        let fd = self.table.fd(file);
        if kind == Kind::Block {
            // SAFETY: BLKFLSBUF takes no argument; fd is open while the table lives.
            if unsafe { libc::ioctl(fd, BLKFLSBUF) } == 0 {
                return;
            }
        }
        if kind != Kind::Other {
            // SAFETY: fd is open while the table lives; DONTNEED only drops clean pages.
            unsafe {
                libc::posix_fadvise(
                    fd,
                    offset as libc::off_t,
                    length as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
        }
    }
}

fn kind_of(fd: libc::c_int) -> Kind {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the struct when it returns 0; fd is open.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Kind::Other;
    }
    // SAFETY: fstat returned 0.
    match unsafe { st.assume_init() }.st_mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFBLK => Kind::Block,
        _ => Kind::Other,
    }
}
