//! Linux native AIO (what sysbench's `--file-io-mode=async` uses), through the raw system
//! calls: io_setup, io_submit, io_getevents, io_destroy. No library is needed; the structures
//! below are the kernel's ABI (include/uapi/linux/aio_abi.h).
//!
//! Native AIO is only asynchronous with O_DIRECT; on buffered files io_submit does the copy
//! before returning, which the report's latency then shows as near-zero device time.

use std::sync::Arc;
use std::time::Instant;

use plumb_core::{Worker, WorkloadError};

use super::{
    always, nothing_shared, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
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
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    let engine = LibaioEngine::new(files, s.bufs, s.fsync).map_err(WorkloadError::new)?;
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
        })
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
        let n = loop {
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
                    self.events.as_mut_ptr(),
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
        self.in_flight -= n;
        for ev in &self.events[..n] {
            done(ev.data as usize, ev.res);
        }
        Ok(n)
    }
}
