//! Request buffers with a chosen alignment, as O_DIRECT needs (the buffer's address must be a
//! multiple of the device's DMA alignment; plumb always aligns to at least a page), from the
//! heap or from one anonymous mapping, in huge pages when asked.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use serde::{Deserialize, Serialize};

/// Where a job's request buffers live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferMemory {
    /// The heap allocator (sysbench; fio's mem=malloc).
    #[default]
    Heap,
    /// One anonymous private mapping for all of them (fio's mem=mmap).
    Mapped,
    /// One mapping in reserved huge pages of this size (fio's mem=mmaphuge, MAP_HUGETLB): the
    /// size is rounded up to whole pages, and it fails when vm.nr_hugepages holds too few.
    HugeTlb { page: u64 },
    /// One 2 MiB-aligned mapping with transparent huge pages asked for
    /// (madvise MADV_HUGEPAGE). A buffer inside one huge page is physically contiguous, so
    /// a large direct request needs one device segment per huge page rather than one per
    /// 4 KiB page: it is not cut by the disk's segment limit depending on where the kernel
    /// happened to place each page. Falls back to small pages where THP is off.
    Transparent,
}

impl BufferMemory {
    /// Whether the buffers are asked to be in huge pages.
    pub fn huge(self) -> bool {
        matches!(
            self,
            BufferMemory::HugeTlb { .. } | BufferMemory::Transparent
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            BufferMemory::Heap => "heap",
            BufferMemory::Mapped => "mapped",
            BufferMemory::HugeTlb { .. } => "hugetlb",
            BufferMemory::Transparent => "transparent huge pages",
        }
    }
}

/// One buffer: owns its heap allocation, or points into a [`Mapping`] that outlives it.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// The heap layout to free with; none inside a mapping.
    heap: Option<Layout>,
}

// SAFETY: the buffer is plain owned memory; access follows Rust's borrowing rules.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

/// An anonymous mapping the buffers of one [`crate::engine::Buffers`] are carved from. Crate
/// private with [`mapped`]: the buffers point into it, so whoever holds them must hold it.
pub(crate) struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
    /// Bytes of the buffers the kernel backs with huge pages (huge-page kinds only).
    huge_bytes: Option<u64>,
}

impl Mapping {
    pub(crate) fn huge_bytes(&self) -> Option<u64> {
        self.huge_bytes
    }
}

// SAFETY: the mapping is plain memory, unmapped once, on drop.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr and len are what mmap returned.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

const TWO_MIB: usize = 2 << 20;

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// `count` zeroed buffers of `len` bytes (at least 1), each aligned to `align` (a power of
/// two), in one mapping of the kind `memory` names (not [`BufferMemory::Heap`]). The buffers
/// are valid as long as the mapping is.
pub(crate) fn mapped(
    count: usize,
    len: usize,
    align: usize,
    memory: BufferMemory,
) -> std::io::Result<(Mapping, Vec<AlignedBuf>)> {
    let stride = round_up(len.max(1), align.max(page_size()));
    let want = stride
        .checked_mul(count.max(1))
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOMEM))?;
    // Where the first buffer starts: on a 2 MiB boundary for transparent huge pages (only
    // aligned ranges get them), else on the alignment asked for when a page is not enough.
    let lead = match memory {
        BufferMemory::Transparent => TWO_MIB.max(align),
        _ if align > page_size() => align,
        _ => 0,
    };
    let (map_len, flags) = match memory {
        BufferMemory::Heap | BufferMemory::Mapped => (want + lead, 0),
        BufferMemory::HugeTlb { page } => (
            round_up(want + lead, page.max(1) as usize),
            libc::MAP_HUGETLB,
        ),
        BufferMemory::Transparent => (round_up(want, TWO_MIB) + lead, 0),
    };
    // SAFETY: an anonymous private mapping at an address the kernel picks.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let mut map = Mapping {
        ptr,
        len: map_len,
        huge_bytes: None,
    };
    let mut start = ptr as usize;
    if lead > 0 {
        start = round_up(start, lead);
    }
    // The buffers' own bytes: what a huge-page figure is counted against.
    let bytes = (count * len.max(1)) as u64;
    match memory {
        BufferMemory::Transparent => {
            let advised = round_up(want, TWO_MIB);
            // SAFETY: the range lies inside the mapping. A kernel without THP refuses the
            // advice: the buffers then use small pages, which is what the heap gives too.
            unsafe { libc::madvise(start as *mut libc::c_void, advised, libc::MADV_HUGEPAGE) };
            // Touch each huge page now: the kernel grants (or refuses) them here, compacting
            // memory if it must, not during the run's first requests; then ask how much it
            // granted. The advised range is bounded by unadvised pages on both sides, so its
            // VMA holds this mapping's huge pages only.
            for at in (start..start + advised).step_by(TWO_MIB) {
                // SAFETY: inside the mapping; writing the zero it already holds.
                unsafe { std::ptr::write_volatile(at as *mut u8, 0) };
            }
            map.huge_bytes = Some(anon_huge_bytes(start).unwrap_or(0).min(bytes));
        }
        BufferMemory::HugeTlb { .. } => map.huge_bytes = Some(bytes),
        _ => {}
    }
    let bufs = (0..count)
        .map(|i| AlignedBuf {
            // SAFETY: start + i * stride + len lies inside the mapping, which is not null.
            ptr: unsafe { NonNull::new_unchecked((start + i * stride) as *mut u8) },
            len: len.max(1),
            heap: None,
        })
        .collect();
    Ok((map, bufs))
}

/// `AnonHugePages` of the mapping (VMA) that holds address `at`, from /proc/self/smaps.
fn anon_huge_bytes(at: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        // A VMA's header: "start-end perms offset dev inode [path]", addresses in hex.
        let range = line
            .split_once(' ')
            .and_then(|(r, _)| r.split_once('-'))
            .and_then(|(a, b)| {
                Some((
                    usize::from_str_radix(a, 16).ok()?,
                    usize::from_str_radix(b, 16).ok()?,
                ))
            });
        if let Some((a, b)) = range {
            inside = a <= at && at < b;
            continue;
        }
        // The VMA's body is "Key: N kB" lines, as /proc/meminfo's.
        if inside {
            if let Some(b) = plumb_observe::meminfo::field(line, "AnonHugePages") {
                return Some(b);
            }
        }
    }
    None
}

/// Page size, the smallest alignment plumb uses for I/O buffers.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least 1) aligned to `align` (a power of two).
    pub fn new(len: usize, align: usize) -> Option<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), align.max(1)).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        Some(AlignedBuf {
            ptr,
            len: layout.size(),
            heap: Some(layout),
        })
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised (zeroed) bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if let Some(layout) = self.heap {
            // SAFETY: allocated with this layout in `new`.
            unsafe { dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::new(10000, 4096).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % 4096, 0);
        assert_eq!(b.len(), 10000);
        assert!(b.iter().all(|&x| x == 0));
        b[9999] = 1;
        assert_eq!(b[9999], 1);
    }

    #[test]
    fn mapped_buffers_are_aligned_zeroed_and_apart() {
        for memory in [BufferMemory::Mapped, BufferMemory::Transparent] {
            let (_map, mut bufs) = mapped(3, 5000, 4096, memory).unwrap();
            assert_eq!(bufs.len(), 3);
            for (i, b) in bufs.iter_mut().enumerate() {
                assert_eq!(b.as_mut_ptr() as usize % 4096, 0, "{memory:?}");
                assert_eq!(b.len(), 5000);
                assert!(b.iter().all(|&x| x == 0));
                b.fill(i as u8 + 1);
            }
            // Writing one buffer touched no other.
            for (i, b) in bufs.iter().enumerate() {
                assert!(b.iter().all(|&x| x == i as u8 + 1), "{memory:?} {i}");
            }
        }
    }

    #[test]
    fn mapped_buffers_take_an_alignment_above_a_page() {
        let (_map, mut bufs) = mapped(3, 5000, 4 * page_size(), BufferMemory::Mapped).unwrap();
        for b in bufs.iter_mut() {
            assert_eq!(b.as_mut_ptr() as usize % (4 * page_size()), 0);
        }
    }

    #[test]
    fn transparent_buffers_start_on_a_huge_page() {
        let (map, mut bufs) = mapped(8, 1 << 20, 4096, BufferMemory::Transparent).unwrap();
        assert_eq!(bufs[0].as_mut_ptr() as usize % TWO_MIB, 0);
        // What the kernel granted, at most the 8 MiB of buffers; all of it where THP is on and
        // memory is not too fragmented, none where it is off.
        let granted = map.huge_bytes().unwrap();
        assert!(granted <= 8 << 20 && granted % (2 << 20) == 0, "{granted}");
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if thp.contains("[never]") {
            assert_eq!(granted, 0);
        }
        // 1 MiB buffers two to a huge page: none straddles a 2 MiB boundary.
        for b in bufs.iter_mut() {
            let at = b.as_mut_ptr() as usize;
            assert_eq!(at / TWO_MIB, (at + (1 << 20) - 1) / TWO_MIB);
        }
    }
}
