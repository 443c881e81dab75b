//! I/O engines: how one request reaches the kernel.
//!
//! An engine is one file here. It declares itself with an [`EngineDef`] (its name, its
//! [`Caps`], how to check it can run, what its threads share, how to build one thread's
//! engine) and is listed once in [`ENGINES`]. Nothing outside this table compares engine
//! names: callers ask the capabilities.
//!
//! Each engine owns its request buffers (one per slot, aligned for O_DIRECT) and shares the
//! run's open files. Every engine implements [`Engine`]; one generic worker loop
//! ([`crate::worker`]) drives them all, compiled once per engine, so a request costs no
//! dynamic dispatch.

pub mod falloc;
pub mod libaio;
pub mod mmap;
pub mod null;
pub mod posixaio;
pub mod psync;
pub mod pvsync;
pub mod pvsync2;
pub mod sync;
pub mod uring;
pub mod vsync;

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use plumb_core::{Worker, WorkloadError};

use crate::buf::{AlignedBuf, BufferMemory};
use crate::error::{errno_text, FileioError};
use crate::fileset::open::RunFiles;
use crate::pattern::Io;
use crate::spec::{FileioSpec, FsyncMode};
use crate::worker::Setup;

/// Every engine plumb has, each registered once.
pub static ENGINES: &[&EngineDef] = &[
    &psync::DEF,
    &sync::DEF,
    &vsync::DEF,
    &pvsync::DEF,
    &pvsync2::DEF,
    &posixaio::DEF,
    &uring::DEF,
    &libaio::DEF,
    &mmap::DEF,
    &falloc::DEF,
    &null::DEF,
];

/// The registered engine called `name`.
pub fn find(name: &str) -> Option<&'static EngineDef> {
    ENGINES.iter().copied().find(|d| d.name == name)
}

/// What an engine can do, for callers that must not know engines by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Caps {
    /// Requests stay in flight until reaped, so a queue depth applies (io_uring, libaio).
    /// Otherwise every request completes inside its submission (pread, a memory copy).
    pub queued: bool,
    /// A queued request reaches the kernel inside the call that queues it (posixaio),
    /// rather than when the loop flushes the queue ([`Engine::flush`]) or reaps.
    pub submits_on_queue: bool,
    /// The call that waits for completions also hands the queued requests to the kernel
    /// (io_uring_enter does both), so the last submission of a refill costs no call of its
    /// own.
    #[serde(default)]
    pub submits_with_wait: bool,
    /// It reads and writes data (the null engine does not).
    pub does_io: bool,
    /// It needs the file set opened for the run.
    pub needs_files: bool,
    /// It maps the files into memory: open(2) flags do not change it, syncs are msync(),
    /// and files written from scratch are sized first.
    pub maps_files: bool,
    /// open(2) flags (O_DIRECT, O_SYNC, O_DSYNC) apply to its requests.
    pub open_flags: bool,
    /// It registers files and buffers with the kernel when it can (reported per run).
    pub registers: bool,
    /// Its requests change the files whatever their direction (falloc's reads allocate):
    /// the files are opened for writing even by a job that only reads.
    #[serde(default)]
    pub opens_read_write: bool,
}

impl Caps {
    /// A blocking engine that reads and writes the files with system calls (pread, pwrite):
    /// the others are stated as their differences from it.
    pub const FILE_CALLS: Caps = Caps {
        queued: false,
        submits_on_queue: false,
        submits_with_wait: false,
        does_io: true,
        needs_files: true,
        maps_files: false,
        open_flags: true,
        registers: false,
        opens_read_write: false,
    };
    /// An engine that does nothing at all.
    pub const NONE: Caps = Caps {
        queued: false,
        submits_on_queue: false,
        submits_with_wait: false,
        does_io: false,
        needs_files: false,
        maps_files: false,
        open_flags: false,
        registers: false,
        opens_read_write: false,
    };
}

/// A switch an engine takes (fio calls these engine options: io_uring's `fixedbufs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOption {
    pub name: &'static str,
    /// Its value when the job does not set it.
    pub default: bool,
    pub help: &'static str,
}

/// The engine options a job sets, by name; the rest keep their defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions(pub Vec<(&'static str, bool)>);

impl EngineOptions {
    /// Set `name` (the engine's own option name) to `value`.
    pub fn set(&mut self, name: &'static str, value: bool) {
        self.0.retain(|(n, _)| *n != name);
        self.0.push((name, value));
    }
}

/// What an engine's threads share, built once per run ([`EngineDef::share`]) or given by
/// the caller ([`crate::FileioWorkload::with_engine`]); each engine knows its own type.
pub type Shared = Arc<dyn Any + Send + Sync>;

/// One engine, as the registry lists it.
pub struct EngineDef {
    /// What reports and options call it: fio's engine names ("psync", "io_uring", ...).
    pub name: &'static str,
    pub caps: Caps,
    /// Its own options.
    pub options: &'static [EngineOption],
    /// Whether it can run on this machine (kernel support, not disabled); the error says
    /// why not.
    pub available: fn() -> std::io::Result<()>,
    /// Once per run, after the files are open: what all its threads share.
    pub share: fn(Option<&RunFiles>, &FileioSpec) -> Result<Option<Shared>, FileioError>,
    /// One worker thread: build the engine and hand it to `setup.driver`.
    pub worker: fn(Setup) -> Result<Box<dyn Worker>, WorkloadError>,
}

impl EngineDef {
    /// The value of its option `name` in `set` (its default when not set). `None`: the
    /// engine has no such option.
    pub fn option(&self, set: &EngineOptions, name: &str) -> Option<bool> {
        let opt = self.options.iter().find(|o| o.name == name)?;
        Some(
            set.0
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(opt.default, |&(_, v)| v),
        )
    }
}

impl fmt::Debug for EngineDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineDef")
            .field("name", &self.name)
            .field("caps", &self.caps)
            .finish()
    }
}

impl PartialEq for EngineDef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// For engines that run everywhere.
pub fn always() -> std::io::Result<()> {
    Ok(())
}

/// For engines whose threads share nothing beyond the files.
pub fn nothing_shared(_: Option<&RunFiles>, _: &FileioSpec) -> Result<Option<Shared>, FileioError> {
    Ok(None)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Read,
    Write,
    /// Discard the range (fio's trim). Every engine does it at once, inside `submit`: fio's
    /// engines all trim synchronously, the queueing ones included.
    Trim,
}

/// One read, write or trim.
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

/// What became of a submitted request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submitted {
    /// Done already (blocking engines): bytes transferred, or the failure.
    Done(Result<usize, Errno>),
    /// In flight: its completion comes from [`Engine::reap`].
    Queued,
}

/// One thread's engine. Blocking engines implement `submit` (returning
/// [`Submitted::Done`]) and `sync`; queueing engines also `reap`.
pub trait Engine: Send + 'static {
    /// Whether every request completes inside `submit` without waiting for anything (the
    /// null engine). Then, in a closed loop, one request's end is the next one's start: one
    /// clock read per request, and a request's time is the whole turn of the loop, so the
    /// mean latency is exactly the inverse of the thread's IOPS.
    const COMPLETES_INLINE: bool = false;
    /// Number of request slots (requests that can be in flight).
    fn slots(&self) -> usize;
    /// The buffer of `slot`, at least as long as the largest request.
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Set up what must be built on the submitting thread (called there, before any
    /// request).
    fn start(&mut self) -> Result<(), Errno> {
        Ok(())
    }
    /// Whether files and buffers are registered with the kernel, if the engine can.
    fn registered(&self) -> Option<(bool, bool)> {
        None
    }
    /// Do or queue `req` with `slot`'s buffer. `Err` means it could not even be queued.
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno>;
    /// Hand the requests queued so far to the kernel without waiting for any (engines that
    /// queue before they submit: io_uring, libaio).
    fn flush(&mut self) -> Result<(), Errno> {
        Ok(())
    }
    /// Submit what is queued, wait until at least `min` requests have completed (0: do not
    /// wait) or until `deadline` when there is one (open-loop runs wait for the next intended
    /// start this way), and call `done(slot, result)` for at most `max` completions (result:
    /// bytes, or -errno); the others stay for the next call. Returns how many were handed
    /// over. Blocking engines never have anything in flight.
    fn reap<F: FnMut(usize, i64)>(
        &mut self,
        _min: usize,
        _max: usize,
        _deadline: Option<Instant>,
        _done: F,
    ) -> Result<usize, Errno> {
        Ok(0)
    }
    /// What a failed completion is called in an error ("io_uring request").
    fn request_call(&self) -> &'static str {
        "request"
    }
    /// Whether a trim must wait until nothing is in flight (fio's posixaio answers busy to a
    /// trim while any request is queued); others trim beside requests already submitted.
    fn trim_waits_for_queue(&self) -> bool {
        false
    }
    /// fsync (or fdatasync / msync) one file, blocking.
    fn sync(&mut self, file: u32) -> Result<(), Errno>;
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
    /// What the buffers point into, when they come from one mapping; dropped after them.
    _mapping: Option<crate::buf::Mapping>,
}

impl Buffers {
    pub fn new(slots: usize, len: usize, align: usize) -> Result<Buffers, FileioError> {
        Buffers::in_memory(slots, len, align, BufferMemory::Heap)
    }

    pub fn in_memory(
        slots: usize,
        len: usize,
        align: usize,
        memory: BufferMemory,
    ) -> Result<Buffers, FileioError> {
        if memory != BufferMemory::Heap {
            let (map, bufs) = crate::buf::mapped(slots, len, align, memory).map_err(|e| {
                let hint = match memory {
                    BufferMemory::HugeTlb { .. } => {
                        " (huge pages must be reserved first: sysctl vm.nr_hugepages)"
                    }
                    _ => "",
                };
                FileioError::Other(format!(
                    "cannot map {slots} request buffers of {len} bytes in {} memory: {e}{hint}",
                    memory.name()
                ))
            })?;
            return Ok(Buffers {
                bufs,
                _mapping: Some(map),
            });
        }
        let mut bufs = Vec::with_capacity(slots);
        for _ in 0..slots {
            bufs.push(AlignedBuf::new(len, align).ok_or_else(|| {
                FileioError::Other(format!(
                    "cannot allocate {slots} request buffers of {len} bytes"
                ))
            })?);
        }
        Ok(Buffers {
            bufs,
            _mapping: None,
        })
    }
    #[inline(always)]
    pub fn get(&mut self, slot: usize) -> &mut AlignedBuf {
        &mut self.bufs[slot]
    }
    pub fn len(&self) -> usize {
        self.bufs.len()
    }
    /// Bytes of the buffers the kernel backs with huge pages (huge-page kinds only).
    pub fn huge_page_bytes(&self) -> Option<u64> {
        self._mapping.as_ref().and_then(|m| m.huge_bytes())
    }
    /// Bytes of all the buffers.
    pub fn bytes(&self) -> u64 {
        self.bufs.iter().map(|b| b.len() as u64).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut AlignedBuf> {
        self.bufs.iter_mut()
    }
}

/// BLKDISCARD, `_IO(0x12, 119)` in linux/fs.h (the libc crate does not define it).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discard `len` bytes at `offset` of a block device, as fio's `os_trim` does on Linux
/// (ioctl BLKDISCARD, whatever the file is: on a regular file it fails with ENOTTY, as
/// fio's trims do; the falloc engine punches holes instead). Returns the bytes trimmed.
pub(crate) fn discard(fd: i32, offset: u64, len: u32) -> Result<usize, Errno> {
    let range: [u64; 2] = [offset, len as u64];
    // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, which outlives the
    // call; fd is an open descriptor owned by the file table.
    retry("BLKDISCARD", || unsafe {
        libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) as isize
    })
    .map(|_| len as usize)
}

/// fsync or fdatasync one descriptor, as the job's sync mode says.
pub(crate) fn sync_fd(fd: i32, mode: FsyncMode) -> Result<(), Errno> {
    let (name, f): (&'static str, unsafe extern "C" fn(i32) -> i32) = match mode {
        FsyncMode::Fsync => ("fsync", libc::fsync),
        FsyncMode::Fdatasync => ("fdatasync", libc::fdatasync),
    };
    // SAFETY: fd is an open descriptor owned by the file table.
    retry(name, || unsafe { f(fd) } as isize).map(|_| ())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_finds_each_engine_by_its_one_name() {
        for def in ENGINES {
            assert!(std::ptr::eq(find(def.name).unwrap(), *def), "{}", def.name);
            assert_eq!(
                ENGINES.iter().filter(|d| d.name == def.name).count(),
                1,
                "{} listed twice",
                def.name
            );
        }
        assert!(
            find("recording").is_none(),
            "test engines stay out of the table"
        );
        assert!(find("nosuch").is_none());
    }

    #[test]
    fn capabilities_agree_with_each_other() {
        for def in ENGINES {
            let c = def.caps;
            // Engines that do I/O work on files; open flags need real read/write calls.
            assert!(!c.does_io || c.needs_files, "{}", def.name);
            assert!(
                !c.open_flags || (c.does_io && !c.maps_files),
                "{}",
                def.name
            );
            // Only queueing engines have submissions that differ from completions.
            assert!(!c.submits_on_queue || c.queued, "{}", def.name);
            assert!(!c.submits_with_wait || c.queued, "{}", def.name);
            assert!(!(c.submits_with_wait && c.submits_on_queue), "{}", def.name);
            assert!(!c.registers || c.queued, "{}", def.name);
        }
    }
}
