//! POSIX AIO through the C library (aio_read, aio_write, aio_error, aio_return,
//! aio_suspend): fio's `posixaio`. Requests stay in flight up to the queue depth.
//!
//! glibc implements POSIX AIO in user space: helper threads it starts do each request
//! with pread/pwrite, so the kernel sees blocking calls from other threads, not an
//! asynchronous interface. A sync is a plain fsync/fdatasync: the worker waits for its
//! writes to that file in flight before it syncs, so nothing of this engine is pending then.

use std::sync::Arc;
use std::time::Instant;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
};
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "posixaio",
    caps: Caps {
        queued: true,
        submits_on_queue: true,
        ..Caps::FILE_CALLS
    },
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    Ok(s.driver.drive(PosixAioEngine::new(files, s.bufs, s.fsync)))
}

pub struct PosixAioEngine {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
    /// One control block per slot. Boxed so they stay put while the C library holds them.
    cbs: Box<[libc::aiocb]>,
    /// Slots in flight.
    in_flight: Vec<usize>,
    /// aio_suspend's list, rebuilt before each wait.
    waiting: Vec<*const libc::aiocb>,
}

// SAFETY: the raw pointers in `waiting` point into `cbs`, owned by the engine, and are
// rebuilt before each use; the engine moves between threads only as a whole.
unsafe impl Send for PosixAioEngine {}

fn idle_cb() -> libc::aiocb {
    // SAFETY: aiocb is plain data (integers and pointers) for which all-zero is valid.
    unsafe { std::mem::zeroed() }
}

impl PosixAioEngine {
    pub fn new(files: Arc<FileTable>, bufs: Buffers, fsync: FsyncMode) -> PosixAioEngine {
        let depth = bufs.len();
        PosixAioEngine {
            files,
            bufs,
            fsync,
            cbs: (0..depth).map(|_| idle_cb()).collect(),
            in_flight: Vec::with_capacity(depth),
            waiting: Vec::with_capacity(depth),
        }
    }

    /// Hand up to `max` finished requests to `done` (bytes, or -errno); returns how many.
    fn harvest<F: FnMut(usize, i64)>(&mut self, max: usize, done: &mut F) -> Result<usize, Errno> {
        let mut n = 0;
        let mut i = 0;
        while i < self.in_flight.len() && n < max {
            let slot = self.in_flight[i];
            let cb = &mut self.cbs[slot];
            // SAFETY: cb was submitted by this engine and not yet returned.
            let err = unsafe { libc::aio_error(cb) };
            if err == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            if err < 0 {
                return Err(Errno::last("aio_error"));
            }
            // SAFETY: the request finished; aio_return releases it, once.
            let ret = unsafe { libc::aio_return(cb) };
            self.in_flight.swap_remove(i);
            done(slot, if err == 0 { ret as i64 } else { -(err as i64) });
            n += 1;
        }
        Ok(n)
    }

    /// Block until one request in flight finishes, or `deadline` passes. Returns false
    /// when the deadline passed.
    fn suspend(&mut self, deadline: Option<Instant>) -> Result<bool, Errno> {
        self.waiting.clear();
        for &slot in &self.in_flight {
            self.waiting.push(&self.cbs[slot]);
        }
        let ts = deadline.map(super::timespec_until);
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: every entry points at a submitted control block owned by the engine;
        // tsp is null (no timeout) or valid.
        let r = unsafe {
            libc::aio_suspend(
                self.waiting.as_ptr(),
                self.waiting.len() as libc::c_int,
                tsp,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let e = Errno::last("aio_suspend");
        match e.errno {
            libc::EINTR => Ok(true),
            libc::EAGAIN => Ok(false),
            _ => Err(e),
        }
    }
}

impl Drop for PosixAioEngine {
    fn drop(&mut self) {
        // The C library's threads write into the buffers until a request finishes: cancel
        // what has not started and wait for the rest before the buffers go.
        for &slot in &self.in_flight {
            let cb = &mut self.cbs[slot];
            // SAFETY: a submitted control block of an open descriptor.
            unsafe { libc::aio_cancel(cb.aio_fildes, cb) };
        }
        while !self.in_flight.is_empty() {
            match self.harvest(usize::MAX, &mut |_, _| {}) {
                Ok(_) if self.in_flight.is_empty() => break,
                Ok(_) => {}
                Err(_) => break,
            }
            if self.suspend(None).is_err() {
                break;
            }
        }
    }
}

impl Engine for PosixAioEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    fn request_call(&self) -> &'static str {
        "posixaio request"
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), self.fsync)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        if req.dir == Dir::Trim {
            // Done at once, after everything in flight ([`Engine::trim_waits_for_queue`]).
            let fd = self.files.fd(req.io.file);
            return Ok(Submitted::Done(super::discard(
                fd,
                req.io.offset,
                req.io.len,
            )));
        }
        let buf = self.bufs.get(slot).as_mut_ptr();
        let cb = &mut self.cbs[slot];
        *cb = idle_cb();
        cb.aio_fildes = self.files.fd(req.io.file);
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = req.io.len as usize;
        cb.aio_offset = req.io.offset as libc::off_t;
        // Completion is polled with aio_error/aio_suspend, no signal or thread callback.
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        let (call, r) = match req.dir {
            // SAFETY: cb and its buffer stay put and untouched until the request finishes
            // (slots are not reused while in flight; Drop waits for every request).
            Dir::Read => ("aio_read", unsafe { libc::aio_read(cb) }),
            Dir::Write => ("aio_write", unsafe { libc::aio_write(cb) }),
            Dir::Trim => unreachable!("trims are done above"),
        };
        if r != 0 {
            return Err(Errno::last(call));
        }
        self.in_flight.push(slot);
        Ok(Submitted::Queued)
    }

    fn trim_waits_for_queue(&self) -> bool {
        true
    }

    /// Wait until `min` requests finished (or `deadline` passed); hand over at most `max`
    /// of those finished.
    fn reap<F: FnMut(usize, i64)>(
        &mut self,
        min: usize,
        max: usize,
        deadline: Option<Instant>,
        mut done: F,
    ) -> Result<usize, Errno> {
        let want = min.min(self.in_flight.len());
        let max = max.max(want).max(1);
        let mut n = self.harvest(max, &mut done)?;
        while n < want {
            if !self.suspend(deadline)? {
                return Ok(n + self.harvest(max - n, &mut done)?);
            }
            n += self.harvest(max - n, &mut done)?;
        }
        Ok(n)
    }
}
