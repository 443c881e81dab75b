//! Linux native AIO (what sysbench's `--file-io-mode=async` uses), through the raw system
//! calls: io_setup, io_submit, io_getevents, io_destroy. No library is needed; the structures
//! below are the kernel's ABI (include/uapi/linux/aio_abi.h).
//!
//! Native AIO is only asynchronous with O_DIRECT; on buffered files io_submit does the copy
//! before returning, which the report's latency then shows as near-zero device time.
//!
//! Completions are taken from the context's ring, which the kernel maps into the process,
//! whenever it already holds them (fio's `userspace_reap`, on by default here): a collection
//! that finds what it asks for makes no io_getevents call. Only a collection that must wait
//! enters the kernel. The collections themselves (how many completions each takes) are
//! unchanged, so the report's IO depths are too.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, Buffers, Caps, Dir, Engine, EngineDef, EngineOption, Errno, Request,
    Submitted,
};
use crate::error::FileioError;
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "libaio",
    caps: Caps {
        queued: true,
        ..Caps::FILE_CALLS
    },
    options: &[EngineOption {
        name: USERSPACE_REAP,
        default: true,
        help: "take completions from the ring in user space when they are there",
    }],
    available: always,
    share: nothing_shared,
    worker,
};

/// The option's name (fio's).
pub const USERSPACE_REAP: &str = "userspace_reap";

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    let reap = DEF.option(&s.options, USERSPACE_REAP).unwrap_or(true);
    let engine = LibaioEngine::new(files, s.bufs, s.fsync)
        .map_err(WorkloadError::new)?
        .reaping_in_user_space(reap);
    Ok(s.driver.drive(engine))
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// struct iocb, little-endian layout (x86_64, aarch64).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

type AioContext = libc::c_ulong;

/// The head of the completion ring an AIO context id points at (fs/aio.c's struct
/// aio_ring); `nr` io_events follow it.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: AtomicU32,
    tail: AtomicU32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

/// fs/aio.c: a ring user space may read.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

pub struct LibaioEngine {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
    ctx: AioContext,
    iocbs: Box<[Iocb]>,
    /// Queued, not yet submitted.
    pending: Vec<*mut Iocb>,
    events: Box<[IoEvent]>,
    in_flight: usize,
    /// The completion ring, when completions are taken from it directly.
    ring: Option<*mut AioRing>,
}

// SAFETY: the raw pointers in `pending` point into `iocbs`, owned by the engine; the engine
// moves between threads only as a whole.
unsafe impl Send for LibaioEngine {}

impl LibaioEngine {
    pub fn new(
        files: Arc<FileTable>,
        bufs: Buffers,
        fsync: FsyncMode,
    ) -> Result<LibaioEngine, FileioError> {
        let depth = bufs.len();
        let mut ctx: AioContext = 0;
        // SAFETY: io_setup writes the context id into ctx.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            let hint = if e.raw_os_error() == Some(libc::EAGAIN) {
                " (the system-wide limit /proc/sys/fs/aio-max-nr is too low for this many requests in flight per thread × threads)"
            } else {
                ""
            };
            return Err(FileioError::io(
                format!("cannot set up a libaio context of {depth} requests{hint}"),
                e,
            ));
        }
        Ok(LibaioEngine {
            files,
            bufs,
            fsync,
            ctx,
            iocbs: vec![Iocb::default(); depth].into_boxed_slice(),
            pending: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth].into_boxed_slice(),
            in_flight: 0,
            ring: None,
        })
    }

    /// The same engine, taking completions from the ring in user space (`on`) when the
    /// kernel's ring has the layout this code knows.
    pub fn reaping_in_user_space(mut self, on: bool) -> LibaioEngine {
        let ring = self.ctx as *mut AioRing;
        // SAFETY: a context id from io_setup is the address of its ring's mapping, which
        // lives until io_destroy; the header is only read here.
        let known = on
            && !ring.is_null()
            && unsafe { (*ring).magic == AIO_RING_MAGIC && (*ring).incompat_features == 0 };
        self.ring = known.then_some(ring);
        self
    }

    /// Up to `max` completions already in the ring, into `events[at..]`, without a system
    /// call; how many.
    fn take_from_ring(&mut self, at: usize, max: usize) -> usize {
        let Some(ring) = self.ring else {
            return 0;
        };
        // SAFETY: see `reaping_in_user_space`; the events follow the header. The kernel
        // writes an event before it publishes the tail (release), and reads the head only
        // to find free room, so the tail is read with acquire and the head stored with
        // release after the events are copied.
        unsafe {
            let nr = (*ring).nr;
            let mut head = (*ring).head.load(Ordering::Relaxed);
            let tail = (*ring).tail.load(Ordering::Acquire);
            let events = ring.add(1).cast::<IoEvent>();
            let mut n = 0;
            while head != tail && n < max {
                self.events[at + n] = events.add(head as usize).read();
                head = (head + 1) % nr;
                n += 1;
            }
            if n > 0 {
                (*ring).head.store(head, Ordering::Release);
            }
            n
        }
    }

    fn submit_pending(&mut self) -> Result<(), Errno> {
        let mut done = 0;
        while done < self.pending.len() {
            // SAFETY: the pointers refer to initialised iocbs that stay put until completion.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    (self.pending.len() - done) as libc::c_long,
                    self.pending.as_mut_ptr().add(done),
                )
            };
            if r < 0 {
                let e = Errno::last("io_submit");
                if e.errno == libc::EINTR {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Err(Errno {
                    call: "io_submit",
                    errno: libc::EAGAIN,
                });
            }
            done += r as usize;
            self.in_flight += r as usize;
        }
        self.pending.clear();
        Ok(())
    }
}

impl LibaioEngine {}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // io_destroy waits for requests still in flight, so buffers outlive them.
        // SAFETY: ctx came from io_setup.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

impl Engine for LibaioEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    fn request_call(&self) -> &'static str {
        "libaio request"
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), self.fsync)
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        let opcode = match req.dir {
            Dir::Read => IOCB_CMD_PREAD,
            Dir::Write => IOCB_CMD_PWRITE,
            // fio's libaio trims synchronously, beside the requests already submitted.
            Dir::Trim => {
                let fd = self.files.fd(req.io.file);
                return Ok(Submitted::Done(super::discard(
                    fd,
                    req.io.offset,
                    req.io.len,
                )));
            }
        };
        let buf = self.bufs.get(slot).as_mut_ptr() as u64;
        let cb = &mut self.iocbs[slot];
        *cb = Iocb {
            aio_data: slot as u64,
            aio_lio_opcode: opcode,
            aio_fildes: self.files.fd(req.io.file) as u32,
            aio_buf: buf,
            aio_nbytes: req.io.len as u64,
            aio_offset: req.io.offset as i64,
            ..Iocb::default()
        };
        self.pending.push(cb as *mut Iocb);
        // Submitted when the worker loop flushes: one request per io_submit by default, as
        // sysbench and fio submit (several at once are plugged and dispatched together,
        // which raised device latency on the disks tried), more with iodepth_batch_submit.
        Ok(Submitted::Queued)
    }

    fn flush(&mut self) -> Result<(), Errno> {
        self.submit_pending()
    }

    /// Submit what is pending, then wait for `min` completions (or until `deadline`; 0: do
    /// not wait) and take at most `max`.
    fn reap<F: FnMut(usize, i64)>(
        &mut self,
        min: usize,
        max: usize,
        deadline: Option<Instant>,
        mut done: F,
    ) -> Result<usize, Errno> {
        if !self.pending.is_empty() {
            self.submit_pending()?;
        }
        if self.in_flight == 0 {
            return Ok(0);
        }
        let min = min.min(self.in_flight);
        let max = max.clamp(min.max(1), self.events.len());
        let ready = self.take_from_ring(0, max);
        if ready >= min.max(1) || (min == 0 && ready == 0 && self.ring.is_some()) {
            self.in_flight -= ready;
            for ev in &self.events[..ready] {
                done(ev.data as usize, ev.res);
            }
            return Ok(ready);
        }
        let (min, max) = (min.saturating_sub(ready), max - ready);
        let got = loop {
            let mut ts = match (min, deadline) {
                (0, _) => Some(libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                }),
                (_, d) => d.map(super::timespec_until),
            };
            let tsp = ts
                .as_mut()
                .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
            // SAFETY: events has room for `len` entries; tsp is null (no timeout) or valid.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr().add(ready),
                    tsp,
                )
            };
            if r >= 0 {
                break r as usize;
            }
            let e = Errno::last("io_getevents");
            if e.errno != libc::EINTR {
                return Err(e);
            }
        };
        let n = ready + got;
        self.in_flight -= n;
        for ev in &self.events[..n] {
            done(ev.data as usize, ev.res);
        }
        Ok(n)
    }
}
