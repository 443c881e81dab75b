//! Fast sequential filling of one file, shared by prepare and by seqwr's completion.
//!
//! Large writes (1 MiB, what dd users measure with; larger ones were no faster on the
//! disks tried), with O_DIRECT when the filesystem takes it and the range is
//! aligned, so filling a file costs the device's sequential bandwidth and no page-cache
//! churn; the unaligned tail (if any) is written through the page cache. The file is synced
//! at the end. The buffer is filled once and only stamped per write (see [`crate::fill`]).

use std::os::fd::RawFd;
use std::sync::atomic::Ordering::Relaxed;

use plumb_core::random::Rng;
use plumb_core::StopFlag;

use crate::buf::{page_size, AlignedBuf};
use crate::direct::{support, DirectSupport};
use crate::fill::Filler;
use crate::spec::Fill;

/// Size of one prepare write.
pub const CHUNK: u64 = 1 << 20;

/// Why a fill stopped early. `written` counts bytes from `from` that are fully written.
#[derive(Debug)]
pub enum WriteStop {
    Interrupted {
        written: u64,
        signal: i32,
    },
    Failed {
        written: u64,
        call: &'static str,
        errno: i32,
    },
}

pub struct Writer {
    buf: AlignedBuf,
    filler: Filler,
    chunk: u64,
    /// Bytes written with O_DIRECT by this writer so far.
    pub direct_bytes: u64,
}

impl Writer {
    /// `block`: the validate layout's block size (chunks are whole blocks).
    pub fn new(fill: Fill, block: u64) -> Option<Writer> {
        let chunk = if block >= CHUNK {
            block
        } else {
            CHUNK / block * block
        };
        let mut buf = AlignedBuf::new(chunk as usize, page_size().max(4096))?;
        let filler = Filler::new(fill, block, u64::MAX);
        filler.init(&mut buf, &mut Rng::new(0x70726570, 0));
        Some(Writer {
            buf,
            filler,
            chunk,
            direct_bytes: 0,
        })
    }

    /// Write bytes [from, to) of `fd`, then sync it. `progress` gets each chunk's length.
    pub fn fill(
        &mut self,
        fd: RawFd,
        from: u64,
        to: u64,
        stop: &StopFlag,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), WriteStop> {
        let align = match support(fd) {
            DirectSupport::Aligned { offset, mem, .. } if mem as usize <= page_size().max(4096) => {
                offset as u64
            }
            _ => 0,
        };
        let mut direct = false;
        let mut off = from;
        while off < to {
            let sig = stop.load(Relaxed);
            if sig != 0 {
                return Err(WriteStop::Interrupted {
                    written: off - from,
                    signal: sig as i32,
                });
            }
            let len = self.chunk.min(to - off);
            let want_direct = align != 0 && off.is_multiple_of(align) && len.is_multiple_of(align);
            if want_direct != direct && set_direct(fd, want_direct) {
                direct = want_direct;
            }
            let buf = &mut self.buf[..len as usize];
            self.filler.prepare(buf, off);
            let mut done = 0usize;
            while done < len as usize {
                // SAFETY: the buffer holds `len` bytes; fd is open for writing.
                let r = unsafe {
                    plumb_core::rawsys::pwrite(
                        fd,
                        buf[done..].as_ptr(),
                        len as usize - done,
                        (off + done as u64) as libc::off_t,
                    )
                };
                if r < 0 {
                    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                    if errno == libc::EINTR {
                        continue;
                    }
                    if errno == libc::EINVAL && direct {
                        // The filesystem refused this direct write: go through the cache.
                        set_direct(fd, false);
                        direct = false;
                        continue;
                    }
                    return Err(WriteStop::Failed {
                        written: off - from,
                        call: "write",
                        errno,
                    });
                }
                if r == 0 {
                    return Err(WriteStop::Failed {
                        written: off - from,
                        call: "write",
                        errno: libc::ENOSPC,
                    });
                }
                done += r as usize;
            }
            if direct {
                self.direct_bytes += len;
            }
            off += len;
            progress(len);
        }
        if direct {
            set_direct(fd, false);
        }
        // SAFETY: fd is open.
        if unsafe { libc::fsync(fd) } != 0 {
            return Err(WriteStop::Failed {
                written: to - from,
                call: "fsync",
                errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            });
        }
        Ok(())
    }
}

/// Turn O_DIRECT on or off for an open file; false if the filesystem refuses.
fn set_direct(fd: RawFd, on: bool) -> bool {
    // SAFETY: fcntl on an open descriptor.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl < 0 {
            return false;
        }
        let new = if on {
            fl | libc::O_DIRECT
        } else {
            fl & !libc::O_DIRECT
        };
        libc::fcntl(fd, libc::F_SETFL, new) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fill::check;
    use std::os::fd::AsRawFd;

    #[test]
    fn fills_a_range_with_validated_blocks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        let mut w = Writer::new(Fill::Validate, 4096).unwrap();
        let stop = StopFlag::default();
        let mut seen = 0;
        w.fill(f.as_raw_fd(), 0, 9 << 20, &stop, &mut |n| seen += n)
            .unwrap();
        assert_eq!(seen, 9 << 20);
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 9 << 20);
        check(&data, 0, 4096).unwrap();
    }

    #[test]
    fn writes_an_unaligned_tail_through_the_cache() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let f = std::fs::File::create(&p).unwrap();
        let mut w = Writer::new(Fill::Random, 16384).unwrap();
        let stop = StopFlag::default();
        let size = (5 << 20) + 100;
        w.fill(f.as_raw_fd(), 0, size, &stop, &mut |_| {}).unwrap();
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len() as u64, size);
        assert!(data[size as usize - 100..].iter().any(|&b| b != 0));
    }

    #[test]
    fn stops_between_chunks_when_asked() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(d.path().join("f")).unwrap();
        let mut w = Writer::new(Fill::Zero, 4096).unwrap();
        let stop = StopFlag::default();
        stop.store(2, Relaxed);
        match w.fill(f.as_raw_fd(), 0, 1 << 20, &stop, &mut |_| {}) {
            Err(WriteStop::Interrupted {
                written: 0,
                signal: 2,
            }) => {}
            other => panic!("{other:?}"),
        }
    }
}
