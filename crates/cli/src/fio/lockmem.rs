//! fio's `lockmem`: each job pins that much anonymous memory (mmap, then mlock, which
//! faults every page in) from before its I/O to its end, so the page cache has that much
//! less to work with, as fio's fio_pin_memory does. As in fio, no more than the machine's
//! memory less 128 MiB is pinned (`fio: limiting mlocked memory to NMiB`). Where fio ends a
//! job it cannot pin with `mlock: ...` on stderr and error 0, plumb fails it in one line.

use std::io;

/// Memory held locked until dropped.
pub struct Pinned {
    addr: *mut libc::c_void,
    len: usize,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: addr/len are the mapping made in `pin`, unmapped only here.
        unsafe {
            libc::munlock(self.addr, self.len);
            libc::munmap(self.addr, self.len);
        }
    }
}

/// The size fio pins for `asked` bytes, and its note when it had to pin less.
pub fn limited(asked: u64) -> (u64, Option<String>) {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let phys = (pages.max(0) as u64).saturating_mul(page.max(0) as u64);
    const SPARE: u64 = 128 << 20;
    if phys > 0 && asked.saturating_add(SPARE) > phys {
        let len = phys.saturating_sub(SPARE);
        return (
            len,
            Some(format!("fio: limiting mlocked memory to {}MiB", len >> 20)),
        );
    }
    (asked, None)
}

/// Map and lock `len` bytes.
pub fn pin(len: u64) -> io::Result<Pinned> {
    let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the mapping just made, whole.
    if unsafe { libc::mlock(addr, len) } != 0 {
        let e = io::Error::last_os_error();
        // SAFETY: as above; nothing else refers to it.
        unsafe { libc::munmap(addr, len) };
        return Err(e);
    }
    Ok(Pinned { addr, len })
}
