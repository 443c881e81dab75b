//! What O_DIRECT requires of a file: buffer address and file offset/length alignment.
//!
//! The kernel says it exactly through statx(STATX_DIOALIGN) (Linux 6.1+, most local
//! filesystems), including "not supported here" (alignment 0). Older kernels: the logical
//! block size of the device holding the file, from /sys/dev/block/MAJ:MIN (or its parent
//! disk for a partition). If neither says, assume 4096, which every common device accepts.

use std::ffi::CString;
use std::fs;
use std::os::fd::RawFd;
use std::path::Path;

/// Where an alignment figure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlignSource {
    Statx,
    Sysfs,
    Assumed,
}

impl AlignSource {
    pub fn name(self) -> &'static str {
        match self {
            AlignSource::Statx => "statx",
            AlignSource::Sysfs => "the device's logical block size",
            AlignSource::Assumed => "assumed",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectSupport {
    /// O_DIRECT works with this alignment of memory and of file offsets/lengths.
    Aligned {
        mem: u32,
        offset: u32,
        source: AlignSource,
    },
    /// The filesystem reports that it cannot do direct I/O on this file.
    Unsupported,
}

/// The direct I/O alignment of an open file.
pub fn support(fd: RawFd) -> DirectSupport {
    if let Some(s) = from_statx(fd) {
        return s;
    }
    // SAFETY: st is written by fstat before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } == 0 {
        let (maj, min) = (libc::major(st.st_dev), libc::minor(st.st_dev));
        if let Some(lbs) = logical_block_size(maj, min) {
            return DirectSupport::Aligned {
                mem: lbs,
                offset: lbs,
                source: AlignSource::Sysfs,
            };
        }
    }
    DirectSupport::Aligned {
        mem: 4096,
        offset: 4096,
        source: AlignSource::Assumed,
    }
}

fn from_statx(fd: RawFd) -> Option<DirectSupport> {
    let empty = CString::new("").expect("no NUL");
    // SAFETY: stx is plain data written by the kernel; the path is a valid C string.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            fd,
            empty.as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    if stx.stx_dio_offset_align == 0 {
        return Some(DirectSupport::Unsupported);
    }
    Some(DirectSupport::Aligned {
        mem: stx.stx_dio_mem_align.max(1),
        offset: stx.stx_dio_offset_align,
        source: AlignSource::Statx,
    })
}

/// Logical block size of block device MAJ:MIN (a partition reads its disk's queue).
pub fn logical_block_size(maj: u32, min: u32) -> Option<u32> {
    let base = format!("/sys/dev/block/{maj}:{min}");
    for p in [
        format!("{base}/queue/logical_block_size"),
        format!("{base}/../queue/logical_block_size"),
    ] {
        if let Ok(s) = fs::read_to_string(Path::new(&p)) {
            if let Ok(v) = s.trim().parse::<u32>() {
                if v > 0 {
                    return Some(v);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn reports_alignment_for_a_file_on_the_work_disk() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let f = fs::File::create(dir.path().join("x")).unwrap();
        match support(f.as_raw_fd()) {
            DirectSupport::Aligned { mem, offset, .. } => {
                assert!(mem.is_power_of_two() && offset.is_power_of_two());
                assert!((512..=65536).contains(&offset), "{offset}");
            }
            DirectSupport::Unsupported => {}
        }
    }
}
