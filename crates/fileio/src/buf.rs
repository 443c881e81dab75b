//! Heap buffers with a chosen alignment, as O_DIRECT needs (the buffer's address must be a
//! multiple of the device's DMA alignment; plumb always aligns to at least a page).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is plain owned memory; access follows Rust's borrowing rules.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

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
        Some(AlignedBuf { ptr, layout })
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised (zeroed) bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
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
}
