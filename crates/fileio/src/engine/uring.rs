//! io_uring: requests go through shared rings, many per system call.
//!
//! The run's files and this thread's buffers are registered with the ring once, so the
//! kernel does not look up the descriptor or pin the pages on every request (READ_FIXED /
//! WRITE_FIXED on fixed files). The ring is built on the worker thread itself (a
//! single-issuer ring with deferred task work when the kernel has them, 6.1+): completions
//! are then processed only when the worker asks for them, in the same system call that
//! submits the next batch.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use io_uring::{opcode, types, IoUring};

use plumb_core::{Worker, WorkloadError};

use super::{
    nothing_shared, Buffers, Caps, Dir, Engine, EngineDef, EngineOption, Errno, Request, Submitted,
};
use crate::fileset::FileTable;
use crate::spec::FsyncMode;
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "io_uring",
    caps: Caps {
        queued: true,
        submits_with_wait: true,
        registers: true,
        ..Caps::FILE_CALLS
    },
    options: &[
        EngineOption {
            name: REGISTER_FILES,
            default: true,
            help: "register the run's files with the ring (fixed files)",
        },
        EngineOption {
            name: FIXED_BUFS,
            default: true,
            help: "register the thread's buffers with the ring (READ_FIXED / WRITE_FIXED)",
        },
    ],
    available: probe,
    share: nothing_shared,
    worker,
};

/// Option names (fio's).
pub const REGISTER_FILES: &str = "registerfiles";
pub const FIXED_BUFS: &str = "fixedbufs";

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    let register = Register {
        files: DEF.option(&s.options, REGISTER_FILES).unwrap_or(true),
        bufs: DEF.option(&s.options, FIXED_BUFS).unwrap_or(true),
    };
    Ok(s.driver
        .drive(UringEngine::new(files, s.bufs, s.fsync).registering(register)))
}

/// linux/io_uring.h: an enter that also runs completions and posts them (the crate keeps
/// its flag constants private).
const IORING_ENTER_GETEVENTS: u32 = 1;

/// What the engine tries to register with its ring (registration that fails falls back to
/// plain requests).
#[derive(Clone, Copy, Debug)]
pub struct Register {
    pub files: bool,
    pub bufs: bool,
}

/// Whether io_uring can be used here (kernel support, not blocked by seccomp or
/// kernel.io_uring_disabled). The error says why not.
pub fn probe() -> io::Result<()> {
    IoUring::new(2).map(|_| ())
}

struct Ring {
    ring: IoUring,
    fixed_files: bool,
    fixed_bufs: bool,
}

pub struct UringEngine {
    files: Arc<FileTable>,
    bufs: Buffers,
    fsync: FsyncMode,
    ring: Option<Ring>,
    register: Register,
    queued: usize,
    in_flight: usize,
}

impl UringEngine {
    pub fn new(files: Arc<FileTable>, bufs: Buffers, fsync: FsyncMode) -> UringEngine {
        UringEngine {
            files,
            bufs,
            fsync,
            ring: None,
            register: Register {
                files: true,
                bufs: true,
            },
            queued: 0,
            in_flight: 0,
        }
    }

    /// The same engine, registering only what `register` says.
    pub fn registering(mut self, register: Register) -> UringEngine {
        self.register = register;
        self
    }

    fn build(&mut self) -> Result<&mut Ring, Errno> {
        if self.ring.is_none() {
            let entries = self.bufs.len().next_power_of_two().max(2) as u32;
            let attempts: [fn(&mut io_uring::Builder); 3] = [
                |b| {
                    b.setup_single_issuer().setup_defer_taskrun();
                },
                |b| {
                    b.setup_coop_taskrun();
                },
                |_| {},
            ];
            let mut last = None;
            let mut ring = None;
            for a in attempts {
                let mut b = IoUring::builder();
                a(&mut b);
                match b.build(entries) {
                    Ok(r) => {
                        ring = Some(r);
                        break;
                    }
                    Err(e) => last = Some(e),
                }
            }
            let ring = ring.ok_or_else(|| Errno {
                call: "io_uring_setup",
                errno: last.and_then(|e| e.raw_os_error()).unwrap_or(libc::ENOSYS),
            })?;
            let fixed_files =
                self.register.files && ring.submitter().register_files(self.files.fds()).is_ok();
            let iovecs: Vec<libc::iovec> = self
                .bufs
                .iter_mut()
                .map(|b| libc::iovec {
                    iov_base: b.as_mut_ptr().cast(),
                    iov_len: b.len(),
                })
                .collect();
            // SAFETY: the buffers live as long as the engine, which owns the ring and drops
            // it first (field order), so they outlive the registration.
            let fixed_bufs = self.register.bufs
                && iovecs.len() <= u16::MAX as usize
                && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
            self.ring = Some(Ring {
                ring,
                fixed_files,
                fixed_bufs,
            });
        }
        Ok(self.ring.as_mut().expect("built above"))
    }
}

impl UringEngine {
    /// Submit what is queued without waiting.
    fn submit_queued(&mut self) -> Result<(), Errno> {
        let queued = self.queued;
        let r = self.build()?;
        let submitted = loop {
            match r.ring.submit() {
                Ok(n) => break n.min(queued),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // Completion queue full: the next reap collects and submits.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => break 0,
                Err(e) => {
                    return Err(Errno {
                        call: "io_uring_enter",
                        errno: e.raw_os_error().unwrap_or(libc::EIO),
                    })
                }
            }
        };
        self.queued -= submitted;
        self.in_flight += submitted;
        Ok(())
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // Dropping the ring waits for nothing: let requests in flight finish first so the
        // kernel never writes into freed buffers.
        while self.in_flight > 0 {
            if self.reap(1, usize::MAX, None, |_, _| {}).is_err() {
                break;
            }
        }
        self.ring = None;
    }
}

impl Engine for UringEngine {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    fn request_call(&self) -> &'static str {
        "io_uring request"
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        super::sync_fd(self.files.fd(file), self.fsync)
    }
    fn start(&mut self) -> Result<(), Errno> {
        self.build().map(|_| ())
    }
    fn registered(&self) -> Option<(bool, bool)> {
        self.ring.as_ref().map(|r| (r.fixed_files, r.fixed_bufs))
    }
    #[inline]
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        // Queued only: the worker loop flushes (fio's iodepth_batch_submit, one request per
        // io_uring_enter by default), and the last of a refill goes in with the wait for
        // completions (one system call for both). Submitting many at once plugs them (held
        // back and dispatched together), which on the virtio disks tried raised device
        // latency by half.
        let fd = self.files.fd(req.io.file);
        if req.dir == Dir::Trim {
            // fio's io_uring trims synchronously once nothing waits unsubmitted.
            return Ok(Submitted::Done(super::discard(
                fd,
                req.io.offset,
                req.io.len,
            )));
        }
        let buf = self.bufs.get(slot).as_mut_ptr();
        let r = self.build()?;
        let (len, off) = (req.io.len, req.io.offset);
        let entry = match (req.dir, r.fixed_files, r.fixed_bufs) {
            (Dir::Read, true, true) => {
                opcode::ReadFixed::new(types::Fixed(req.io.file), buf, len, slot as u16)
                    .offset(off)
                    .build()
            }
            (Dir::Write, true, true) => {
                opcode::WriteFixed::new(types::Fixed(req.io.file), buf, len, slot as u16)
                    .offset(off)
                    .build()
            }
            (Dir::Read, true, false) => opcode::Read::new(types::Fixed(req.io.file), buf, len)
                .offset(off)
                .build(),
            (Dir::Write, true, false) => opcode::Write::new(types::Fixed(req.io.file), buf, len)
                .offset(off)
                .build(),
            (Dir::Read, false, true) => {
                opcode::ReadFixed::new(types::Fd(fd), buf, len, slot as u16)
                    .offset(off)
                    .build()
            }
            (Dir::Write, false, true) => {
                opcode::WriteFixed::new(types::Fd(fd), buf, len, slot as u16)
                    .offset(off)
                    .build()
            }
            (Dir::Read, false, false) => opcode::Read::new(types::Fd(fd), buf, len)
                .offset(off)
                .build(),
            (Dir::Write, false, false) => opcode::Write::new(types::Fd(fd), buf, len)
                .offset(off)
                .build(),
            (Dir::Trim, _, _) => unreachable!("trims are done above"),
        }
        .user_data(slot as u64);
        // SAFETY: the buffer belongs to this slot and stays untouched until its completion.
        if unsafe { r.ring.submission().push(&entry) }.is_err() {
            // The queue is sized for every slot; full means requests were queued twice.
            return Err(Errno {
                call: "io_uring queue",
                errno: libc::EBUSY,
            });
        }
        self.queued += 1;
        Ok(Submitted::Queued)
    }

    fn flush(&mut self) -> Result<(), Errno> {
        self.submit_queued()
    }

    /// Submit what is queued and wait until `min` requests completed (or `deadline`
    /// passed; `min` 0: do not wait); hand at most `max` completions to `done`, leaving the
    /// rest in the completion queue for the next call.
    fn reap<F: FnMut(usize, i64)>(
        &mut self,
        min: usize,
        max: usize,
        deadline: Option<Instant>,
        mut done: F,
    ) -> Result<usize, Errno> {
        let queued = self.queued;
        let want = min.min(self.in_flight + queued);
        let r = self.build()?;
        let ready = r.ring.completion().len();
        let mut submitted = 0;
        // Completions already in the queue serve without a call, unless requests wait to be
        // submitted; a poll (min 0) with nothing ready still enters, since completions
        // deferred to this task are only posted by an enter that asks for events.
        if queued > 0 || want > ready || (min == 0 && ready == 0) {
            loop {
                let res = match deadline {
                    Some(d) if want > 0 && r.ring.params().is_feature_ext_arg() => {
                        let t = super::timespec_until(d);
                        let ts = types::Timespec::new()
                            .sec(t.tv_sec as u64)
                            .nsec(t.tv_nsec as u32);
                        let args = types::SubmitArgs::new().timespec(&ts);
                        r.ring.submitter().submit_with_args(want, &args)
                    }
                    // Kernels before 5.11 cannot bound the wait: do not wait at all.
                    Some(_) => r.ring.submit(),
                    None if want > 0 => r.ring.submit_and_wait(want),
                    None => {
                        let to_submit = r.ring.submission().len() as u32;
                        // SAFETY: no argument is passed; the count is the queue's own.
                        unsafe {
                            r.ring.submitter().enter::<libc::sigset_t>(
                                to_submit,
                                0,
                                IORING_ENTER_GETEVENTS,
                                None,
                            )
                        }
                    }
                };
                match res {
                    Ok(n) => {
                        submitted = n.min(queued);
                        break;
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    // The deadline passed first.
                    Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                        submitted = queued - r.ring.submission().len().min(queued);
                        break;
                    }
                    // Completion queue full: collect completions below, submit next time.
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => break,
                    Err(e) => {
                        return Err(Errno {
                            call: "io_uring_enter",
                            errno: e.raw_os_error().unwrap_or(libc::EIO),
                        })
                    }
                }
            }
        }
        let mut n = 0;
        for cqe in r.ring.completion().take(max.max(1)) {
            done(cqe.user_data() as usize, cqe.result() as i64);
            n += 1;
        }
        self.queued -= submitted;
        self.in_flight = self.in_flight + submitted - n;
        Ok(n)
    }
}
