//! I/O engines: how one request reaches the kernel. Each engine owns its request buffers
//! (one per slot, aligned for O_DIRECT) and shares the run's open files.
//!
//! [`Engine`] is the blocking interface every engine has: do one request, return when done.
//! [`QueueEngine`] adds what async engines do: queue requests on slots, hand them to the
//! kernel in batches, and report completions by slot, so the worker can time each request
//! from submission to completion.

pub mod libaio;
pub mod mmap;
pub mod null;
pub mod recording;
pub mod sync;
pub mod uring;

use std::fmt;
use std::time::Instant;

use crate::buf::AlignedBuf;
use crate::error::{errno_text, FileioError};
use crate::pattern::Io;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Read,
    Write,
}

/// One read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub dir: Dir,
    pub io: Io,
}

/// A failed system call: which one and its errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno {
    pub call: &'static str,
    pub errno: i32,
}

impl Errno {
    pub fn last(call: &'static str) -> Errno {
        Errno {
            call,
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.call, errno_text(self.errno))
    }
}

pub trait Engine: Send {
    /// What the report calls it ("sync", "io_uring", ...).
    fn name(&self) -> &'static str;
    /// Number of request slots (requests that can be in flight).
    fn slots(&self) -> usize;
    /// The buffer of `slot`, at least as long as the largest request.
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Do `req` with `slot`'s buffer and return the bytes transferred, blocking until done.
    fn execute(&mut self, slot: usize, req: Request) -> Result<usize, Errno>;
    /// fsync (or fdatasync / msync) one file, blocking.
    fn sync(&mut self, file: u32) -> Result<(), Errno>;
}

/// Engines that keep many requests in flight.
/// One request start to finish on a queueing engine: queue it, wait for its completion.
/// `call` names the engine's request in an error ("io_uring request").
pub(crate) fn execute_queued<E: QueueEngine>(
    engine: &mut E,
    slot: usize,
    req: Request,
    call: &'static str,
) -> Result<usize, Errno> {
    engine.queue(slot, req)?;
    let mut res = 0i64;
    while engine.reap(1, |_, r| res = r)? == 0 {}
    if res < 0 {
        return Err(Errno {
            call,
            errno: -res as i32,
        });
    }
    Ok(res as usize)
}

pub trait QueueEngine: Engine {
    /// Set up what must be built on the submitting thread (called there, before any queue).
    fn start(&mut self) -> Result<(), Errno> {
        Ok(())
    }
    /// Whether `queue` hands each request to the kernel at once (then its start time is the
    /// moment it was queued) rather than at the next `reap`.
    fn submits_on_queue(&self) -> bool {
        false
    }
    /// Whether files and buffers are registered with the kernel, if the engine can.
    fn registered(&self) -> Option<(bool, bool)> {
        None
    }
    /// Queue `req` on `slot`; it reaches the kernel at the next [`QueueEngine::reap`].
    fn queue(&mut self, slot: usize, req: Request) -> Result<(), Errno>;
    /// Submit what is queued, wait until at least `min` requests have completed, and call
    /// `done(slot, result)` for each completion (result: bytes, or -errno). Returns how many
    /// completed.
    fn reap<F: FnMut(usize, i64)>(&mut self, min: usize, done: F) -> Result<usize, Errno>;
    /// Like [`QueueEngine::reap`], but stop waiting at `deadline` (open-loop runs wait for the
    /// next intended start this way). Engines whose requests complete at once keep `reap`.
    fn reap_until<F: FnMut(usize, i64)>(
        &mut self,
        min: usize,
        _deadline: Instant,
        done: F,
    ) -> Result<usize, Errno> {
        self.reap(min, done)
    }
}

/// Time left until `deadline`, as a timespec (zero if it passed).
pub(crate) fn timespec_until(deadline: Instant) -> libc::timespec {
    let left = deadline.saturating_duration_since(Instant::now());
    libc::timespec {
        tv_sec: left.as_secs() as libc::time_t,
        tv_nsec: left.subsec_nanos() as libc::c_long,
    }
}

/// Request buffers, one per slot, each aligned for O_DIRECT.
pub struct Buffers {
    bufs: Vec<AlignedBuf>,
}

impl Buffers {
    pub fn new(slots: usize, len: usize, align: usize) -> Result<Buffers, FileioError> {
        let mut bufs = Vec::with_capacity(slots);
        for _ in 0..slots {
            bufs.push(AlignedBuf::new(len, align).ok_or_else(|| {
                FileioError::Other(format!(
                    "cannot allocate {slots} request buffers of {len} bytes"
                ))
            })?);
        }
        Ok(Buffers { bufs })
    }
    #[inline(always)]
    pub fn get(&mut self, slot: usize) -> &mut AlignedBuf {
        &mut self.bufs[slot]
    }
    pub fn len(&self) -> usize {
        self.bufs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut AlignedBuf> {
        self.bufs.iter_mut()
    }
}

/// Retry a system call interrupted by a signal.
#[inline]
pub(crate) fn retry<F: FnMut() -> isize>(call: &'static str, mut f: F) -> Result<usize, Errno> {
    loop {
        let r = f();
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = Errno::last(call);
        if e.errno != libc::EINTR {
            return Err(e);
        }
    }
}
