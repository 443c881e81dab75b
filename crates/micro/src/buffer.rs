//! The memory test's block: page-aligned anonymous memory, optionally from the HugeTLB pool,
//! seen as 64-bit words.
//!
//! Words are atomics accessed with `Relaxed` ordering: on x86-64 and aarch64 that is a plain
//! 8-byte load or store (what sysbench's `ck_pr_load_64` / `ck_pr_store_64` compile to), the
//! compiler may not drop or merge them, and threads sharing one block (global scope) stay
//! within Rust's memory model.

use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use plumb_observe::{meminfo, Roots};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum BufferError {
    #[error(
        "--memory-hugetlb: cannot map {bytes} bytes from the HugeTLB pool ({free} of {total} \
         huge pages of {page_kib} kB free); reserve pages first, e.g. \
         `sysctl vm.nr_hugepages={need}`, or run without --memory-hugetlb"
    )]
    HugePages {
        bytes: usize,
        free: u64,
        total: u64,
        page_kib: u64,
        need: u64,
    },
    #[error(
        "the memory test needs {need} bytes for its blocks but only {available} bytes are \
         available (MemAvailable); use a smaller --memory-block-size, fewer threads or \
         --memory-scope=global"
    )]
    NotEnoughMemory { need: u64, available: u64 },
    #[error("cannot map {bytes} bytes {from} for the memory block: {err}")]
    Map {
        bytes: usize,
        from: &'static str,
        err: std::io::Error,
    },
}

/// One block of `words` 64-bit words, zero-filled and faulted in before any measurement.
pub struct Buffer {
    ptr: NonNull<AtomicU64>,
    words: usize,
    map_len: usize,
}

// SAFETY: the mapping is owned by the Buffer and only reached through `&[AtomicU64]`.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

/// Figures from /proc/meminfo that decide whether a block can be had.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub available_bytes: Option<u64>,
    pub huge_total: u64,
    pub huge_free: u64,
    pub huge_page_bytes: Option<u64>,
}

impl MemInfo {
    pub fn read() -> MemInfo {
        meminfo::read(&Roots::default())
            .map(|s| MemInfo::parse(&s))
            .unwrap_or_default()
    }

    pub fn parse(text: &str) -> MemInfo {
        let mut m = MemInfo::default();
        for (key, v) in meminfo::fields(text) {
            match key {
                "MemAvailable" => m.available_bytes = Some(v),
                "HugePages_Total" => m.huge_total = v,
                "HugePages_Free" => m.huge_free = v,
                "Hugepagesize" => m.huge_page_bytes = Some(v),
                _ => {}
            }
        }
        m
    }
}

/// `len` rounded up to a multiple of `unit` (a power of two).
pub fn round_up(len: usize, unit: usize) -> usize {
    (len + unit - 1) & !(unit - 1)
}

impl Buffer {
    /// Map `bytes` (a multiple of 8) and write zeros over it, as sysbench's memset does, so
    /// every page is backed by its own frame before the run (an untouched anonymous page
    /// reads from the shared zero page and would make reads look faster than memory).
    pub fn new(bytes: usize, hugetlb: bool, info: &MemInfo) -> Result<Buffer, BufferError> {
        debug_assert!(bytes >= 8 && bytes & 7 == 0);
        let page = if hugetlb {
            info.huge_page_bytes.unwrap_or(2 << 20) as usize
        } else {
            4096
        };
        let map_len = round_up(bytes, page);
        let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        if hugetlb {
            flags |= libc::MAP_HUGETLB;
        }
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(BufferError::Map {
                bytes: map_len,
                from: if hugetlb {
                    "from the HugeTLB pool (--memory-hugetlb)"
                } else {
                    "of anonymous memory"
                },
                err: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: p is a writable mapping of map_len >= bytes bytes.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, bytes) };
        Ok(Buffer {
            // SAFETY: mmap succeeded, so p is not null; it is page-aligned, so 8-aligned.
            ptr: unsafe { NonNull::new_unchecked(p as *mut AtomicU64) },
            words: bytes / 8,
            map_len,
        })
    }

    #[inline(always)]
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: ptr covers `words` initialised (zeroed) u64s for the Buffer's lifetime;
        // AtomicU64 has the layout of u64.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.words) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`; no borrow outlives self.
        unsafe {
            libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.map_len);
        }
    }
}

/// Check that `count` blocks of `block` bytes fit before mapping any: a block set larger
/// than the free memory would be killed by the OOM killer half way through zero-filling.
pub fn check_fits(
    block: u64,
    count: u64,
    hugetlb: bool,
    info: &MemInfo,
) -> Result<(), BufferError> {
    let need = block.saturating_mul(count);
    if hugetlb {
        let page = info.huge_page_bytes.unwrap_or(2 << 20);
        let pages = block.div_ceil(page).saturating_mul(count);
        if pages > info.huge_free {
            return Err(BufferError::HugePages {
                bytes: pages.saturating_mul(page) as usize,
                free: info.huge_free,
                total: info.huge_total,
                page_kib: page / 1024,
                need: info.huge_total + (pages - info.huge_free),
            });
        }
        return Ok(());
    }
    match info.available_bytes {
        Some(avail) if need > avail => Err(BufferError::NotEnoughMemory {
            need,
            available: avail,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    const MEMINFO: &str = "MemTotal:       24684000 kB\nMemAvailable:   24158000 kB\n\
        HugePages_Total:       4\nHugePages_Free:        3\nHugePages_Rsvd:        0\n\
        Hugepagesize:       2048 kB\n";

    #[test]
    fn parses_meminfo() {
        let m = MemInfo::parse(MEMINFO);
        assert_eq!(m.available_bytes, Some(24158000 * 1024));
        assert_eq!(m.huge_total, 4);
        assert_eq!(m.huge_free, 3);
        assert_eq!(m.huge_page_bytes, Some(2 << 20));
    }

    #[test]
    fn fit_checks_name_the_shortfall() {
        let m = MemInfo::parse(MEMINFO);
        // 3 free huge pages of 2 MiB: two 2 MiB blocks fit, four 1 MiB blocks take a page
        // each and need a fourth.
        assert!(check_fits(2 << 20, 3, true, &m).is_ok());
        let e = check_fits(1 << 20, 4, true, &m).unwrap_err().to_string();
        assert!(e.contains("3 of 4 huge pages"), "{e}");
        assert!(e.contains("vm.nr_hugepages=5"), "{e}");
        assert!(check_fits(1 << 30, 16, false, &m).is_ok());
        let e = check_fits(1 << 30, 64, false, &m).unwrap_err().to_string();
        assert!(e.contains("MemAvailable"), "{e}");
    }

    #[test]
    fn buffer_is_zeroed_aligned_and_writable() {
        let b = Buffer::new(3 * 4096 + 64, false, &MemInfo::default()).unwrap();
        let w = b.words();
        assert_eq!(w.len(), (3 * 4096 + 64) / 8);
        assert_eq!(w.as_ptr() as usize % 4096, 0);
        assert!(w.iter().all(|x| x.load(Relaxed) == 0));
        w[w.len() - 1].store(7, Relaxed);
        assert_eq!(w[w.len() - 1].load(Relaxed), 7);
        assert_eq!(round_up(4097, 4096), 8192);
    }
}
