//! A dd-style copy: GNU dd 9.1's I/O for the same operands. One read of `ibs` bytes per
//! input record (or as many reads as it takes, with `fullblock`), written as it came when
//! `bs=` set both sizes, gathered into `obs`-byte writes otherwise; `conv=sync` pads short
//! records with zeros; `conv=fdatasync|fsync` flushes once at the end, inside the timed
//! copy. The records and bytes it counts are dd's own, so the front end can print dd's
//! lines from the result alone.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use plumb_core::clock::Stamp;
use plumb_core::{OpKind, Ticket, Worker, WorkerCtx, Workload, WorkloadError};
use serde::{Deserialize, Serialize};

use crate::buf::{page_size, AlignedBuf};

/// Open flags of one side (dd's `iflag=` / `oflag=`), the ones plumb carries out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdFlags {
    pub direct: bool,
    pub dsync: bool,
    pub sync: bool,
    /// Input: read until a whole block is in (or end of input).
    pub fullblock: bool,
    /// Input: `count=` is in bytes.
    pub count_bytes: bool,
    /// Input: `skip=` is in bytes.
    pub skip_bytes: bool,
    /// Output: `seek=` is in bytes.
    pub seek_bytes: bool,
}

/// dd's `conv=` conversions that plumb carries out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdConv {
    pub fdatasync: bool,
    pub fsync: bool,
    pub notrunc: bool,
    /// Pad every short input record with zeros to `ibs`.
    pub sync: bool,
    pub excl: bool,
    pub nocreat: bool,
}

/// What a dd run is asked to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DdSpec {
    /// None: standard input.
    pub input: Option<PathBuf>,
    /// None: standard output.
    pub output: Option<PathBuf>,
    pub ibs: u64,
    pub obs: u64,
    /// `bs=` was given: each input record is written as it came (dd's one-buffer copy).
    pub one_buffer: bool,
    /// Records (bytes with `count_bytes`); None: to the end of the input.
    pub count: Option<u64>,
    pub skip: u64,
    pub seek: u64,
    pub iflag: DdFlags,
    pub oflag: DdFlags,
    pub conv: DdConv,
}

/// What one end of the copy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndKind {
    File,
    Block,
    /// A character device (/dev/zero, /dev/null): no storage behind it.
    Char,
    /// A pipe, socket or terminal.
    Stream,
}

impl EndKind {
    /// Data read or written here goes through storage (and the page cache, unless direct).
    pub fn is_storage(self) -> bool {
        matches!(self, EndKind::File | EndKind::Block)
    }
}

/// A dd run's settings as the record keeps them: the spec and what opening found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DdSettings {
    #[serde(flatten)]
    pub spec: DdSpec,
    pub input_kind: Option<EndKind>,
    pub output_kind: Option<EndKind>,
    /// The input's size when it is a file or a device.
    pub input_size_bytes: Option<u64>,
}

/// Why a dd copy cannot start or stopped, worded as dd words it (without the `dd: `).
#[derive(Debug, thiserror::Error)]
pub enum DdError {
    #[error("failed to open {name}: {}", strerror(source), name = quote_file(path))]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{name}: cannot skip: {}", strerror(source))]
    Skip {
        name: String,
        source: std::io::Error,
    },
    #[error("{name}: cannot seek: {}", strerror(source))]
    Seek {
        name: String,
        source: std::io::Error,
    },
    #[error(
        "failed to truncate to {size} bytes in output file {name}: {}",
        strerror(source)
    )]
    Truncate {
        size: u64,
        name: String,
        source: std::io::Error,
    },
    #[error("error reading {name}: {}", strerror(source))]
    Read {
        name: String,
        source: std::io::Error,
    },
    #[error("error writing {name}: {}", strerror(source))]
    Write {
        name: String,
        source: std::io::Error,
    },
    #[error("{call} failed for {name}: {}", strerror(source))]
    Sync {
        call: &'static str,
        name: String,
        source: std::io::Error,
    },
    #[error("cannot allocate a {0}-byte buffer")]
    Buffer(u64),
}

/// The C library's text for an error, as dd prints it (no "(os error N)").
pub fn strerror(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => crate::error::errno_text(n),
        None => e.to_string(),
    }
}

/// A file name as dd's messages quote it (shell quoting: 'name').
pub fn quote_file(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%^=".contains(c))
    {
        return format!("'{s}'");
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn end_name(path: &Option<PathBuf>, stdio: &str) -> String {
    match path {
        Some(p) => quote_file(p),
        None => format!("'{stdio}'"),
    }
}

pub const COUNTERS: &[&str] = &[
    "bytes_read",
    "bytes_written",
    "records_in_full",
    "records_in_partial",
    "records_out_full",
    "records_out_partial",
    "end_fsyncs",
];
const BYTES_READ: usize = 0;
const BYTES_WRITTEN: usize = 1;
const IN_FULL: usize = 2;
const IN_PARTIAL: usize = 3;
const OUT_FULL: usize = 4;
const OUT_PARTIAL: usize = 5;
const END_FSYNCS: usize = 6;

const KINDS: &[OpKind] = &[
    OpKind::event("read"),
    OpKind::part("write"),
    OpKind::part("fsync"),
];
const READ: usize = 0;
const WRITE: usize = 1;
const FSYNC: usize = 2;

/// The opened copy: both ends, taken by its one worker.
pub struct DdWorkload {
    spec: DdSpec,
    ends: Mutex<Option<(OwnedFd, OwnedFd)>>,
    /// Both ends' numbers in the process's descriptor table, closed here once the worker has
    /// taken copies into a table of its own (see [`DdWorker::own_table`]).
    raw: (RawFd, RawFd),
    own_table: Arc<AtomicBool>,
    pub settings: DdSettings,
}

impl Drop for DdWorkload {
    fn drop(&mut self) {
        if self.own_table.load(Relaxed) {
            // SAFETY: these numbers were opened by `open` and handed to the worker, which
            // closed its copies in its own table; nothing in this table owns them.
            unsafe {
                libc::close(self.raw.0);
                libc::close(self.raw.1);
            }
        }
    }
}

fn open_flags(f: &DdFlags) -> libc::c_int {
    let mut o = 0;
    if f.direct {
        o |= libc::O_DIRECT;
    }
    if f.dsync {
        o |= libc::O_DSYNC;
    }
    if f.sync {
        o |= libc::O_SYNC;
    }
    o
}

fn open(path: &Path, flags: libc::c_int) -> Result<OwnedFd, DdError> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| DdError::Open {
        path: path.to_path_buf(),
        source: std::io::Error::from_raw_os_error(libc::EINVAL),
    })?;
    // SAFETY: c is a valid NUL-terminated path; the fd is owned from here on.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o666) };
    if fd < 0 {
        return Err(DdError::Open {
            path: path.to_path_buf(),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: fd was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A duplicate of a standard stream, so the copy owns its descriptor.
fn stdio(fd: libc::c_int, path: &str) -> Result<OwnedFd, DdError> {
    // SAFETY: dup has no memory preconditions.
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if d < 0 {
        return Err(DdError::Open {
            path: PathBuf::from(path),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: d was just created and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(d) })
}

fn kind_of(fd: &OwnedFd) -> (EndKind, Option<u64>) {
    // SAFETY: st is written by fstat before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return (EndKind::Stream, None);
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => (EndKind::File, Some(st.st_size as u64)),
        libc::S_IFBLK => (EndKind::Block, block_size(fd)),
        libc::S_IFCHR => (EndKind::Char, None),
        _ => (EndKind::Stream, None),
    }
}

/// A block device's size (BLKGETSIZE64), without moving its file position.
fn block_size(fd: &OwnedFd) -> Option<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size = 0u64;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), BLKGETSIZE64, &mut size) };
    (r == 0).then_some(size)
}

impl DdWorkload {
    /// Open both ends as dd does: the input read-only with its flags; the output created
    /// (unless nocreat), truncated unless seek= or notrunc, read-write first when seek=
    /// may need it; then, with seek= and without notrunc, truncated to the seek offset.
    pub fn open(spec: DdSpec) -> Result<DdWorkload, DdError> {
        let input = match &spec.input {
            Some(p) => open(p, libc::O_RDONLY | open_flags(&spec.iflag))?,
            None => stdio(0, "standard input")?,
        };
        let seek_bytes = spec.seek_offset();
        let output = match &spec.output {
            Some(p) => {
                let mut opts = open_flags(&spec.oflag);
                if !spec.conv.nocreat {
                    opts |= libc::O_CREAT;
                }
                if spec.conv.excl {
                    opts |= libc::O_EXCL;
                }
                if spec.seek == 0 && !spec.conv.notrunc {
                    opts |= libc::O_TRUNC;
                }
                let fd = if spec.seek != 0 {
                    open(p, libc::O_RDWR | opts).or_else(|_| open(p, libc::O_WRONLY | opts))?
                } else {
                    open(p, libc::O_WRONLY | opts)?
                };
                if spec.seek != 0 && !spec.conv.notrunc {
                    // SAFETY: plain syscall on an fd we own.
                    let r = unsafe { libc::ftruncate(fd.as_raw_fd(), seek_bytes as libc::off_t) };
                    // dd complains only about a regular file it could not truncate.
                    if r != 0 && kind_of(&fd).0 == EndKind::File {
                        return Err(DdError::Truncate {
                            size: seek_bytes,
                            name: quote_file(p),
                            source: std::io::Error::last_os_error(),
                        });
                    }
                }
                fd
            }
            None => stdio(1, "standard output")?,
        };
        let (ik, isize) = kind_of(&input);
        let (ok, _) = kind_of(&output);
        let settings = DdSettings {
            spec: spec.clone(),
            input_kind: Some(ik),
            output_kind: Some(ok),
            input_size_bytes: isize,
        };
        Ok(DdWorkload {
            spec,
            raw: (input.as_raw_fd(), output.as_raw_fd()),
            ends: Mutex::new(Some((input, output))),
            own_table: Arc::new(AtomicBool::new(false)),
            settings,
        })
    }
}

impl DdSpec {
    /// Where the output starts, in bytes.
    pub fn seek_offset(&self) -> u64 {
        if self.oflag.seek_bytes {
            self.seek
        } else {
            self.seek.saturating_mul(self.obs)
        }
    }
    /// Where the input starts, in bytes.
    pub fn skip_offset(&self) -> u64 {
        if self.iflag.skip_bytes {
            self.skip
        } else {
            self.skip.saturating_mul(self.ibs)
        }
    }
    /// Whole records to copy, and the bytes of a last partial one (`count_bytes`).
    fn limits(&self) -> (u64, u64) {
        match self.count {
            None => (u64::MAX, 0),
            Some(c) if self.iflag.count_bytes => (c / self.ibs, c % self.ibs),
            Some(c) => (c, 0),
        }
    }
}

impl Workload for DdWorkload {
    fn kinds(&self) -> &[OpKind] {
        KINDS
    }
    fn counters(&self) -> &[&'static str] {
        COUNTERS
    }
    fn worker(&self, _thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        let (input, output) = self
            .ends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| WorkloadError::new("a dd copy runs once, on one thread"))?;
        let align = page_size();
        let ibuf = AlignedBuf::new(self.spec.ibs as usize, align)
            .ok_or_else(|| WorkloadError::new(DdError::Buffer(self.spec.ibs)))?;
        let obuf = if self.spec.one_buffer {
            None
        } else {
            Some(
                AlignedBuf::new(self.spec.obs as usize, align)
                    .ok_or_else(|| WorkloadError::new(DdError::Buffer(self.spec.obs)))?,
            )
        };
        Ok(Box::new(DdWorker {
            spec: self.spec.clone(),
            input,
            output,
            ibuf,
            obuf,
            oc: 0,
            out_direct: self.spec.oflag.direct,
            fsync_after_direct: false,
            own_table: Some(self.own_table.clone()),
            last: None,
        }))
    }
}

struct DdWorker {
    spec: DdSpec,
    input: OwnedFd,
    output: OwnedFd,
    ibuf: AlignedBuf,
    obuf: Option<AlignedBuf>,
    /// Bytes waiting in obuf.
    oc: usize,
    /// O_DIRECT still set on the output (dd drops it for a last short write).
    out_direct: bool,
    /// O_DIRECT was dropped: dd then fsyncs at the end to keep some of its meaning.
    fsync_after_direct: bool,
    /// Set once the copying thread has a descriptor table of its own, until then the
    /// workload's.
    own_table: Option<Arc<AtomicBool>>,
    /// When the last read or write ended, if the next one starts there: a record is timed
    /// with one clock read per call, the loop's own bookkeeping counted in the call that
    /// follows it.
    last: Option<Stamp>,
}

impl DdWorker {
    /// Give the copying thread a descriptor table of its own. In a process with several
    /// threads the kernel takes and drops a reference on the file at every read and write
    /// when the table is shared; GNU dd, single-threaded, never does. The workload closes
    /// the shared table's copies when it is dropped.
    fn own_table(&mut self) {
        let Some(flag) = self.own_table.take() else {
            return;
        };
        // SAFETY: unshare(CLONE_FILES) only copies this thread's descriptor table.
        if unsafe { libc::unshare(libc::CLONE_FILES) } == 0 {
            flag.store(true, Relaxed);
        }
    }
}

/// Move an fd's position forward by `offset` bytes (dd's skip= and seek=).
fn advance(fd: &OwnedFd, offset: u64) -> std::io::Result<()> {
    // SAFETY: plain syscall on an fd we own.
    let r = unsafe { libc::lseek(fd.as_raw_fd(), offset as libc::off_t, libc::SEEK_CUR) };
    if r < 0 {
        return Err(errno());
    }
    Ok(())
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

impl DdWorker {
    fn in_name(&self) -> String {
        end_name(&self.spec.input, "standard input")
    }
    fn out_name(&self) -> String {
        end_name(&self.spec.output, "standard output")
    }

    /// One read call, retried on EINTR; dd's end of input under O_DIRECT after a short read
    /// (EINVAL) reads as 0.
    fn read_once(&mut self, at: usize, len: usize, prev: &mut isize) -> std::io::Result<usize> {
        loop {
            // SAFETY: at + len is within ibuf.
            let n = unsafe {
                plumb_core::rawsys::read(
                    self.input.as_raw_fd(),
                    self.ibuf.as_mut_ptr().add(at),
                    len,
                )
            };
            if n >= 0 {
                *prev = n;
                return Ok(n as usize);
            }
            let e = errno();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EINVAL)
                    if self.spec.iflag.direct && *prev > 0 && (*prev as usize) < len =>
                {
                    return Ok(0)
                }
                _ => return Err(e),
            }
        }
    }

    /// One input record: one read, or reads until `len` bytes with fullblock.
    fn read_record(&mut self, ctx: &mut WorkerCtx<'_>, len: usize) -> Result<usize, DdError> {
        let mut prev = -1isize;
        let mut got = 0;
        loop {
            let start = self.last.take().unwrap_or_else(Stamp::now);
            let n = self
                .read_once(got, len - got, &mut prev)
                .map_err(|source| DdError::Read {
                    name: self.in_name(),
                    source,
                })?;
            let end = Stamp::now();
            ctx.record(READ, Ticket::inner(), start, end);
            self.last = Some(end);
            got += n;
            if n == 0 || got == len || !self.spec.iflag.fullblock {
                return Ok(got);
            }
        }
    }

    /// dd's iwrite: all of `buf[..len]`, in as many calls as it takes; a short write under
    /// O_DIRECT first turns O_DIRECT off, as dd does.
    fn write_all(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        from_obuf: bool,
        len: usize,
    ) -> Result<usize, DdError> {
        if self.out_direct && (len as u64) < self.spec.obs {
            let fd = self.output.as_raw_fd();
            // SAFETY: plain fcntl calls on an fd we own.
            unsafe {
                let old = libc::fcntl(fd, libc::F_GETFL);
                libc::fcntl(fd, libc::F_SETFL, old & !libc::O_DIRECT);
                // What was written directly should not linger in the cache either.
                libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
            }
            self.out_direct = false;
            self.fsync_after_direct = true;
        }
        let mut done = 0;
        while done < len {
            let ptr = match (&self.obuf, from_obuf) {
                (Some(o), true) => o.as_ptr(),
                _ => self.ibuf.as_ptr(),
            };
            let start = self.last.take().unwrap_or_else(Stamp::now);
            // SAFETY: ptr + done .. len is within the buffer.
            let n = unsafe {
                plumb_core::rawsys::write(self.output.as_raw_fd(), ptr.add(done), len - done)
            };
            if n < 0 {
                let e = errno();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                ctx.add(BYTES_WRITTEN, done as u64);
                return Err(DdError::Write {
                    name: self.out_name(),
                    source: e,
                });
            }
            let end = Stamp::now();
            ctx.record(WRITE, Ticket::inner(), start, end);
            self.last = Some(end);
            if n == 0 {
                ctx.add(BYTES_WRITTEN, done as u64);
                return Err(DdError::Write {
                    name: self.out_name(),
                    source: std::io::Error::from_raw_os_error(libc::ENOSPC),
                });
            }
            done += n as usize;
        }
        ctx.add(BYTES_WRITTEN, done as u64);
        Ok(done)
    }

    fn skip_input(&mut self) -> Result<(), DdError> {
        let offset = self.spec.skip_offset();
        if offset == 0 {
            return Ok(());
        }
        if advance(&self.input, offset).is_ok() {
            return Ok(());
        }
        // Not seekable (a pipe): read and drop, as dd does.
        let mut left = offset;
        while left > 0 {
            let len = left.min(self.spec.ibs) as usize;
            let mut prev = -1;
            let n = self
                .read_once(0, len, &mut prev)
                .map_err(|source| DdError::Skip {
                    name: self.in_name(),
                    source,
                })?;
            if n == 0 {
                break;
            }
            left -= n as u64;
        }
        Ok(())
    }

    fn seek_output(&mut self) -> Result<(), DdError> {
        let offset = self.spec.seek_offset();
        if offset == 0 {
            return Ok(());
        }
        advance(&self.output, offset).map_err(|source| DdError::Seek {
            name: self.out_name(),
            source,
        })
    }

    fn copy(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), DdError> {
        self.skip_input()?;
        self.seek_output()?;
        let ibs = self.spec.ibs as usize;
        let obs = self.spec.obs as usize;
        let (max_records, max_bytes) = self.spec.limits();
        let mut records = 0u64;
        loop {
            if records >= max_records.saturating_add(u64::from(max_bytes > 0)) {
                break;
            }
            if ctx.next_event().is_none() {
                break;
            }
            let want = if records >= max_records {
                max_bytes as usize
            } else {
                ibs
            };
            let mut n = self.read_record(ctx, want)?;
            if n == 0 {
                break;
            }
            ctx.add(BYTES_READ, n as u64);
            records += 1;
            if n < ibs {
                ctx.add(IN_PARTIAL, 1);
                if self.spec.conv.sync {
                    self.last = None;
                    self.ibuf[n..ibs].fill(0);
                    n = ibs;
                }
            } else {
                ctx.add(IN_FULL, 1);
            }
            if self.obuf.is_none() {
                self.write_all(ctx, false, n)?;
                ctx.add(if n == ibs { OUT_FULL } else { OUT_PARTIAL }, 1);
                continue;
            }
            // Gather into obs-sized writes.
            let mut at = 0;
            while at < n {
                let take = (n - at).min(obs - self.oc);
                let o = self.obuf.as_mut().expect("two buffers");
                o[self.oc..self.oc + take].copy_from_slice(&self.ibuf[at..at + take]);
                // The copy is neither call's.
                self.last = None;
                self.oc += take;
                at += take;
                if self.oc == obs {
                    self.write_all(ctx, true, obs)?;
                    ctx.add(OUT_FULL, 1);
                    self.oc = 0;
                }
            }
        }
        self.last = None;
        if self.oc > 0 {
            let oc = self.oc;
            self.oc = 0;
            self.write_all(ctx, true, oc)?;
            ctx.add(OUT_PARTIAL, 1);
        }
        self.synchronize(ctx)
    }

    /// conv=fdatasync, then conv=fsync (also when fdatasync is not supported), as dd.
    fn synchronize(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), DdError> {
        let fd = self.output.as_raw_fd();
        let mut fsync = self.spec.conv.fsync || self.fsync_after_direct;
        if self.spec.conv.fdatasync {
            let start = Stamp::now();
            // SAFETY: plain syscall on an fd we own.
            if unsafe { libc::fdatasync(fd) } != 0 {
                let e = errno();
                if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
                    return Err(DdError::Sync {
                        call: "fdatasync",
                        name: self.out_name(),
                        source: e,
                    });
                }
                fsync = true;
            } else {
                ctx.record(FSYNC, Ticket::inner(), start, Stamp::now());
                ctx.add(END_FSYNCS, 1);
            }
        }
        if fsync {
            let start = Stamp::now();
            // SAFETY: plain syscall on an fd we own.
            if unsafe { libc::fsync(fd) } != 0 {
                return Err(DdError::Sync {
                    call: "fsync",
                    name: self.out_name(),
                    source: errno(),
                });
            }
            ctx.record(FSYNC, Ticket::inner(), start, Stamp::now());
            ctx.add(END_FSYNCS, 1);
        }
        Ok(())
    }
}

impl Worker for DdWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.own_table();
        self.copy(ctx).map_err(WorkloadError::new)
    }
}

/// Whether `path` is a block device (the safety rules apply to writing it).
pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}
