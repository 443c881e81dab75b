//! A dd-style copy: GNU dd 9.1's I/O for the same operands. One read of `ibs` bytes per
//! input record (or as many reads as it takes, with `fullblock`), written as it came when
//! `bs=` set both sizes, gathered into `obs`-byte writes otherwise; `conv=sync` pads short
//! records with zeros; `conv=fdatasync|fsync` flushes once at the end, inside the timed
//! copy, also after a failed read or write (dd's cleanup), then both ends are closed.
//! The records and bytes it counts are dd's own, so the front end can print dd's lines
//! from the result alone.

use std::ffi::CString;
use std::fmt::Write as _;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
    /// What the copy printed while it ran, for a replay. Not asked for: it travels with the
    /// spec because every copy of the run's settings (the record's among them) is cloned
    /// from the spec and shares it, so the record holds what the copy said by the time it
    /// is rendered.
    #[serde(default, skip_serializing_if = "DdPrinted::is_plain")]
    pub printed: DdPrinted,
}

/// What a dd copy printed besides its last lines: its warnings and the statistics an info
/// signal asked for, in order, and whether dd printed its last statistics at all (dd exits
/// without them when the flush after a failed block write fails, or closing an end does).
#[derive(Clone, Debug, Default)]
pub struct DdPrinted(Arc<Mutex<Printed>>);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Printed {
    /// Before the last lines, in the order printed.
    #[serde(default)]
    pub notes: Vec<DdNote>,
    #[serde(default = "yes")]
    pub final_stats: bool,
}

fn yes() -> bool {
    true
}

impl Default for Printed {
    fn default() -> Self {
        Printed {
            notes: Vec::new(),
            final_stats: true,
        }
    }
}

impl DdPrinted {
    /// As it stands.
    pub fn get(&self) -> Printed {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    fn with(&self, f: impl FnOnce(&mut Printed)) {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
    }
    /// Nothing but the last lines (what a record from before this field reads as).
    pub fn is_plain(&self) -> bool {
        self.get() == Printed::default()
    }
}

impl PartialEq for DdPrinted {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.get() == other.get()
    }
}

impl Serialize for DdPrinted {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> Deserialize<'de> for DdPrinted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Printed::deserialize(d).map(|p| DdPrinted(Arc::new(Mutex::new(p))))
    }
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
    /// dd says "writing to" for a whole obs-sized block, "error writing" otherwise.
    #[error("{what} {name}: {}", strerror(source))]
    Write {
        what: &'static str,
        name: String,
        source: std::io::Error,
    },
    #[error("{call} failed for {name}: {}", strerror(source))]
    Sync {
        call: &'static str,
        name: String,
        source: std::io::Error,
    },
    #[error(
        "memory exhausted by {side} buffer of size {size} bytes ({})",
        human_bytes(*size, false)
    )]
    Buffer { side: &'static str, size: u64 },
    #[error("closing {side} file {name}: {}", strerror(source))]
    Close {
        side: &'static str,
        name: String,
        source: std::io::Error,
    },
    /// Several of dd's error lines, in the order dd prints them (a failed write, then the
    /// flush that still follows it): one line each.
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Lines(Vec<DdError>),
}

impl DdError {
    /// One error for all of `errors` (none: None).
    fn of(mut errors: Vec<DdError>) -> Option<DdError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(DdError::Lines(errors)),
        }
    }
}

/// What the copy says while it runs; dd prints these on stderr the moment they happen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DdNote {
    /// An info signal (SIGUSR1) came: dd's statistics as they stand.
    Stats(DdTally),
    /// One of dd's warnings, worded as dd words it (without the `dd: `).
    Warning(String),
}

/// dd's running counts, what its `print_stats` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DdTally {
    pub records_in_full: u64,
    pub records_in_partial: u64,
    pub records_out_full: u64,
    pub records_out_partial: u64,
    pub bytes_written: u64,
    /// Since the copy started (before skip=, as dd's clock).
    pub elapsed_s: f64,
}

/// How the copy reaches its front end while it runs.
#[derive(Clone)]
pub struct DdTalk {
    /// Info signals that came and are not answered yet, counted by the front end's handler.
    pub info: Arc<AtomicUsize>,
    /// The signal counted in `info`. The front end blocks it before any thread starts and
    /// the copying thread unblocks it, so the kernel interrupts that thread: a read blocked
    /// on a pipe returns EINTR and the statistics are printed at once, as dd prints them.
    pub info_signal: Option<libc::c_int>,
    /// dd's interrupt (SIGINT): without it the copy never stops part way on its own.
    pub interrupt: Option<DdInterrupt>,
    pub say: Arc<dyn Fn(&DdNote) + Send + Sync>,
}

/// How an interrupt reaches the copy: the front end's handler stores the signal's number
/// and, when it runs in another thread, sends the signal on to the thread published in
/// `copier`, so that the copy's blocking read or write returns EINTR at once, as dd's
/// does. The copy then ends as dd's does (no flush; dd prints its statistics and dies of
/// the signal).
#[derive(Clone, Debug)]
pub struct DdInterrupt {
    /// The signal's number once one came, else 0.
    pub signal: Arc<AtomicUsize>,
    /// The copying thread's id while it copies, else 0.
    pub copier: Arc<AtomicI32>,
}

impl std::fmt::Debug for DdTalk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DdTalk")
            .field("info_signal", &self.info_signal)
            .finish_non_exhaustive()
    }
}

/// gnulib's human_readable with dd's options (autoscale, round to nearest, a space before
/// the unit, a B suffix), for a whole number of bytes: `197 kB`, `1.0 KiB`, `512 B`.
pub fn human_bytes(n: u64, si: bool) -> String {
    let base: u64 = if si { 1000 } else { 1024 };
    let (mut amount, mut tenths, mut rounding) = (n, 0u64, 0u64);
    let mut exponent = 0usize;
    let mut decimal = None;
    if base <= amount {
        loop {
            let r10 = (amount % base) * 10 + tenths;
            let r2 = (r10 % base) * 2 + (rounding >> 1);
            amount /= base;
            tenths = r10 / base;
            rounding = if r2 < base {
                u64::from(r2 + rounding != 0)
            } else {
                2 + u64::from(base < r2 + rounding)
            };
            exponent += 1;
            if base > amount || exponent >= 10 {
                break;
            }
        }
        if amount < 10 {
            if 2 < rounding + (tenths & 1) {
                tenths += 1;
                rounding = 0;
                if tenths == 10 {
                    amount += 1;
                    tenths = 0;
                }
            }
            if amount < 10 {
                decimal = Some(tenths);
                tenths = 0;
                rounding = 0;
            }
        }
    }
    if 5 < tenths + u64::from(0 < rounding + (amount & 1)) {
        amount += 1;
        if amount == base && exponent < 10 {
            exponent += 1;
            amount = 1;
            decimal = Some(0);
        }
    }
    let mut s = amount.to_string();
    if let Some(t) = decimal {
        let _ = write!(s, ".{t}");
    }
    s.push(' ');
    s.push_str(&unit_prefix(exponent, si));
    s.push('B');
    s
}

/// The unit prefix for 1000^exponent (`k`, `M`...) or 1024^exponent (`Ki`, `Mi`...).
pub fn unit_prefix(exponent: usize, si: bool) -> String {
    const LETTERS: &[u8] = b" KMGTPEZYRQ";
    if exponent == 0 {
        return String::new();
    }
    let letter = if si && exponent == 1 {
        'k'
    } else {
        LETTERS[exponent.min(10)] as char
    };
    if si {
        letter.to_string()
    } else {
        format!("{letter}i")
    }
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

/// A file name as dd's `quotef` writes it: bare when the shell would need no quotes.
pub fn quotef(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%^=".contains(c))
    {
        return s.into_owned();
    }
    quote_file(path)
}

fn end_name(path: &Option<PathBuf>, stdio: &str) -> String {
    match path {
        Some(p) => quote_file(p),
        None => format!("'{stdio}'"),
    }
}

fn end_name_f(path: &Option<PathBuf>, stdio: &str) -> String {
    match path {
        Some(p) => quotef(p),
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

type Opened = ((OwnedFd, OwnedFd), (AlignedBuf, Option<AlignedBuf>));

/// The opened copy: both ends, taken by its one worker.
pub struct DdWorkload {
    spec: DdSpec,
    /// Both ends, the input buffer and, without bs=, the output one.
    taken: Mutex<Option<Opened>>,
    /// Both ends' numbers in the process's descriptor table, closed here once the worker has
    /// taken copies into a table of its own (see [`DdWorker::own_table`]).
    raw: (RawFd, RawFd),
    own_table: Arc<AtomicBool>,
    talk: Option<DdTalk>,
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
        // dd decides on whole obs-sized records: with seek_bytes a seek shorter than obs is
        // no record, so the output is opened with O_TRUNC and not ftruncated (the bytes
        // before the offset read back as zeros), as GNU dd 9.1 does.
        let seek_records = spec.seek_records();
        let output = match &spec.output {
            Some(p) => {
                let mut opts = open_flags(&spec.oflag);
                if !spec.conv.nocreat {
                    opts |= libc::O_CREAT;
                }
                if spec.conv.excl {
                    opts |= libc::O_EXCL;
                }
                if seek_records == 0 && !spec.conv.notrunc {
                    opts |= libc::O_TRUNC;
                }
                let fd = if seek_records != 0 {
                    open(p, libc::O_RDWR | opts).or_else(|_| open(p, libc::O_WRONLY | opts))?
                } else {
                    open(p, libc::O_WRONLY | opts)?
                };
                if seek_records != 0 && !spec.conv.notrunc {
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
        // Allocated as the ends are opened, so that a size the memory cannot hold is dd's
        // one line and no copy, as dd's die().
        let align = page_size();
        let alloc = |size: u64, side| {
            usize::try_from(size)
                .ok()
                .and_then(|n| AlignedBuf::new(n, align))
                .ok_or(DdError::Buffer { side, size })
        };
        let ibuf = alloc(spec.ibs, "input")?;
        let obuf = if spec.one_buffer {
            None
        } else {
            Some(alloc(spec.obs, "output")?)
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
            taken: Mutex::new(Some(((input, output), (ibuf, obuf)))),
            own_table: Arc::new(AtomicBool::new(false)),
            talk: None,
            settings,
        })
    }

    /// Where the copy's statistics on SIGUSR1 and its warnings go; without it, nowhere.
    pub fn with_talk(mut self, talk: Option<DdTalk>) -> Self {
        self.talk = talk;
        self
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
    /// Whole obs-sized records in seek= (dd truncates the output only when there are some).
    fn seek_records(&self) -> u64 {
        if self.oflag.seek_bytes {
            self.seek / self.obs
        } else {
            self.seek
        }
    }
    /// skip= as dd splits it: whole ibs-sized records, then bytes.
    fn skip_parts(&self) -> (u64, u64) {
        if self.iflag.skip_bytes {
            (self.skip / self.ibs, self.skip % self.ibs)
        } else {
            (self.skip, 0)
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
        let ((input, output), (ibuf, obuf)) = self
            .taken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| WorkloadError::new("a dd copy runs once, on one thread"))?;
        let (skip_records, _) = self.spec.skip_parts();
        let (max_records, _) = self.spec.limits();
        // dd's warn_partial_read: bs= without fullblock, and a count, a skip or direct I/O
        // that a short read would make mean something else than asked.
        let warn_partial = self.spec.one_buffer
            && !self.spec.iflag.fullblock
            && (skip_records != 0
                || (0 < max_records && max_records < i64::MAX as u64)
                || self.spec.iflag.direct
                || self.spec.oflag.direct);
        Ok(Box::new(DdWorker {
            spec: self.spec.clone(),
            talk: self.talk.clone(),
            tally: [0; COUNTERS.len()],
            started: Instant::now(),
            prev_nread: 0,
            warn_partial,
            input: Some(input),
            output: Some(output),
            ibuf,
            obuf,
            oc: 0,
            out_direct: self.spec.oflag.direct,
            fsync_after_direct: false,
            own_table: Some(self.own_table.clone()),
            last: None,
            interrupted: false,
        }))
    }
}

struct DdWorker {
    spec: DdSpec,
    talk: Option<DdTalk>,
    /// The counters as added so far, for the statistics an info signal asks for.
    tally: [u64; COUNTERS.len()],
    started: Instant,
    /// The last read's result, across records and skip= (dd's static prev_nread): the
    /// end of an O_DIRECT input and the partial-read warning look at it.
    prev_nread: isize,
    warn_partial: bool,
    /// Both ends, until [`close_ends`](DdWorker::close_ends) closes them.
    input: Option<OwnedFd>,
    output: Option<OwnedFd>,
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
    /// An interrupt came: the copy ends as dd's does on one.
    interrupted: bool,
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
fn advance(fd: RawFd, offset: u64) -> std::io::Result<()> {
    // SAFETY: plain syscall on an fd we own.
    let r = unsafe { libc::lseek(fd, offset as libc::off_t, libc::SEEK_CUR) };
    if r < 0 {
        return Err(errno());
    }
    Ok(())
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

impl DdWorker {
    fn write_error(&self, what: &'static str, source: std::io::Error) -> DdError {
        DdError::Write {
            what,
            name: self.out_name(),
            source,
        }
    }

    /// The input's descriptor (-1 once closed: a call on it fails with EBADF).
    fn in_fd(&self) -> RawFd {
        self.input.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }
    fn out_fd(&self) -> RawFd {
        self.output.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    fn in_name(&self) -> String {
        end_name(&self.spec.input, "standard input")
    }
    fn out_name(&self) -> String {
        end_name(&self.spec.output, "standard output")
    }

    /// Add to a counter, keeping the tally an info signal prints.
    fn add(&mut self, ctx: &mut WorkerCtx<'_>, counter: usize, n: u64) {
        self.tally[counter] += n;
        ctx.add(counter, n);
    }

    /// Print a note (when a front end listens) and keep it for the record's replay.
    fn say(&self, note: DdNote) {
        if let Some(t) = &self.talk {
            (t.say)(&note);
        }
        self.spec.printed.with(|p| p.notes.push(note));
    }

    /// dd's process_signals: the statistics once per info signal that came; an interrupt
    /// instead ends the copy (see [`Stop::Interrupted`]) and returns true. Called where dd
    /// calls it: before every read and write and after an interrupted one.
    fn process_signals(&mut self) -> bool {
        let Some(t) = &self.talk else {
            return false;
        };
        let interrupt = t.interrupt.as_ref();
        if interrupt.is_some_and(|i| i.signal.load(Relaxed) != 0) {
            self.interrupted = true;
            return true;
        }
        if t.info.load(Relaxed) == 0 {
            return false;
        }
        let pending = t.info.swap(0, Relaxed);
        for _ in 0..pending {
            let c = &self.tally;
            let tally = DdTally {
                records_in_full: c[IN_FULL],
                records_in_partial: c[IN_PARTIAL],
                records_out_full: c[OUT_FULL],
                records_out_partial: c[OUT_PARTIAL],
                bytes_written: c[BYTES_WRITTEN],
                elapsed_s: self.started.elapsed().as_secs_f64(),
            };
            self.say(DdNote::Stats(tally));
        }
        // What was printed belongs to no call.
        self.last = None;
        false
    }

    /// dd's iread: one read call, retried on EINTR; dd's end of input under O_DIRECT after
    /// a short read (EINVAL) reads as 0; the first record after a short one warns of the
    /// partial read when dd would. An interrupt reads as EINTR, with `interrupted` set.
    fn read_once(&mut self, at: usize, len: usize) -> std::io::Result<usize> {
        let r = self.read_call(at, len);
        let n = match &r {
            Ok(n) => *n as isize,
            Err(_) => -1,
        };
        // A short read may be a signal's doing; an interrupt drops what it read, as dd dies
        // with it unwritten.
        if 0 < n && (n as usize) < len && self.process_signals() {
            return Err(std::io::Error::from_raw_os_error(libc::EINTR));
        }
        if 0 < n && self.warn_partial && 0 < self.prev_nread && (self.prev_nread as usize) < len {
            let prev = self.prev_nread;
            let unit = if prev == 1 { "byte" } else { "bytes" };
            self.say(DdNote::Warning(format!(
                "warning: partial read ({prev} {unit}); suggest iflag=fullblock"
            )));
            self.warn_partial = false;
        }
        self.prev_nread = n;
        r
    }

    fn read_call(&mut self, at: usize, len: usize) -> std::io::Result<usize> {
        loop {
            if self.process_signals() {
                return Err(std::io::Error::from_raw_os_error(libc::EINTR));
            }
            // SAFETY: at + len is within ibuf.
            let n = unsafe {
                plumb_core::rawsys::read(self.in_fd(), self.ibuf.as_mut_ptr().add(at), len)
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = errno();
            let prev = self.prev_nread;
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EINVAL)
                    if self.spec.iflag.direct && prev > 0 && (prev as usize) < len =>
                {
                    return Ok(0)
                }
                _ => return Err(e),
            }
        }
    }

    /// One input record: one read, or reads until `len` bytes with fullblock.
    fn read_record(&mut self, ctx: &mut WorkerCtx<'_>, len: usize) -> Result<usize, Stop> {
        let mut got = 0;
        loop {
            let start = self.last.take().unwrap_or_else(Stamp::now);
            let n = match self.read_once(got, len - got) {
                Ok(n) => n,
                Err(source) => {
                    return Err(self.stop(DdError::Read {
                        name: self.in_name(),
                        source,
                    }))
                }
            };
            let end = Stamp::now();
            ctx.record(READ, Ticket::inner(), start, end);
            self.last = Some(end);
            got += n;
            if n == 0 || got == len || !self.spec.iflag.fullblock {
                return Ok(got);
            }
        }
    }

    /// How a failure ends the copy: as the interrupt that caused it, if one did; else by
    /// dd's return from its copy loop (the flush and the statistics follow).
    fn stop(&self, e: DdError) -> Stop {
        if self.interrupted {
            Stop::Interrupted
        } else {
            Stop::Failed(vec![e])
        }
    }

    /// [`stop`](Self::stop), for the failures dd meets in its `quit()` paths.
    fn quit(&self, e: DdError) -> Stop {
        if self.interrupted {
            Stop::Interrupted
        } else {
            Stop::Quit(e)
        }
    }

    /// dd's iwrite: all of `buf[..len]`, in as many calls as it takes; a short write under
    /// O_DIRECT first turns O_DIRECT off, as dd does. An interrupt fails it with EINTR and
    /// `interrupted` set, its bytes not counted (dd dies inside iwrite, before it counts).
    fn write_all(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        from_obuf: bool,
        len: usize,
    ) -> Result<usize, (usize, std::io::Error)> {
        if self.out_direct && (len as u64) < self.spec.obs {
            let fd = self.out_fd();
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
            if self.process_signals() {
                return Err((done, std::io::Error::from_raw_os_error(libc::EINTR)));
            }
            let ptr = match (&self.obuf, from_obuf) {
                (Some(o), true) => o.as_ptr(),
                _ => self.ibuf.as_ptr(),
            };
            let start = self.last.take().unwrap_or_else(Stamp::now);
            // SAFETY: ptr + done .. len is within the buffer.
            let n = unsafe { plumb_core::rawsys::write(self.out_fd(), ptr.add(done), len - done) };
            if n < 0 {
                let e = errno();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                self.add(ctx, BYTES_WRITTEN, done as u64);
                return Err((done, e));
            }
            let end = Stamp::now();
            ctx.record(WRITE, Ticket::inner(), start, end);
            self.last = Some(end);
            if n == 0 {
                self.add(ctx, BYTES_WRITTEN, done as u64);
                return Err((done, std::io::Error::from_raw_os_error(libc::ENOSPC)));
            }
            done += n as usize;
        }
        self.add(ctx, BYTES_WRITTEN, done as u64);
        Ok(done)
    }

    /// dd's skip() for the input: lseek when the input seeks (warning when that lands past
    /// the end of a file); a seekable input that refuses the offset is an error; otherwise
    /// ibs-sized reads, one per record however short (as the copy counts records), then
    /// the bytes of skip_bytes. Warns, as dd, when the input ended or came short first.
    /// Its failures are dd's quit().
    fn skip_input(&mut self) -> Result<(), Stop> {
        let (mut records, mut bytes) = self.spec.skip_parts();
        if records == 0 && bytes == 0 {
            return Ok(());
        }
        let fd = self.in_fd();
        // SAFETY (these lseeks and fstat): plain syscalls on an fd we own.
        let start = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) }.max(0) as u64;
        let offset = records
            .checked_mul(self.spec.ibs)
            .and_then(|o| o.checked_add(bytes))
            .filter(|o| *o <= i64::MAX as u64);
        let mut lseek_errno = 0;
        if let Some(off) = offset {
            if unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_CUR) } >= 0 {
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                let regular = unsafe { libc::fstat(fd, &mut st) } == 0
                    && st.st_mode & libc::S_IFMT == libc::S_IFREG;
                if regular && (st.st_size as i64 - start as i64) < off as i64 {
                    self.cannot_skip_to_offset();
                }
                return Ok(());
            }
            lseek_errno = errno().raw_os_error().unwrap_or(0);
        }
        if unsafe { libc::lseek(fd, 0, libc::SEEK_END) } >= 0 {
            // Seekable, but not to there: dd gives up rather than read its way.
            let code = if lseek_errno == 0 {
                libc::EOVERFLOW
            } else {
                lseek_errno
            };
            return Err(Stop::Quit(DdError::Skip {
                name: end_name_f(&self.spec.input, "standard input"),
                source: std::io::Error::from_raw_os_error(code),
            }));
        }
        let ibs = self.spec.ibs as usize;
        let mut skipped = 0u64;
        while records != 0 || bytes != 0 {
            let len = if records != 0 { ibs } else { bytes as usize };
            let mut got = 0;
            loop {
                let n = match self.read_once(got, len - got) {
                    Ok(n) => n,
                    Err(source) => {
                        return Err(self.quit(DdError::Read {
                            name: self.in_name(),
                            source,
                        }))
                    }
                };
                got += n;
                if n == 0 || got == len || !self.spec.iflag.fullblock {
                    break;
                }
            }
            if got == 0 {
                break;
            }
            skipped += got as u64;
            if records != 0 {
                records -= 1;
            } else {
                bytes = 0;
            }
        }
        if records != 0 || offset != Some(skipped) {
            self.cannot_skip_to_offset();
        }
        Ok(())
    }

    fn cannot_skip_to_offset(&self) {
        let name = end_name_f(&self.spec.input, "standard input");
        self.say(DdNote::Warning(format!(
            "{name}: cannot skip to specified offset"
        )));
    }

    fn seek_output(&mut self) -> Result<(), Stop> {
        let offset = self.spec.seek_offset();
        if offset == 0 {
            return Ok(());
        }
        advance(self.out_fd(), offset).map_err(|source| {
            Stop::Quit(DdError::Seek {
                name: end_name_f(&self.spec.output, "standard output"),
                source,
            })
        })
    }

    /// dd's dd_copy: skip=, seek=, then the records, then the last partial output block
    /// (also after a read error, as dd writes what it has before it gives up).
    fn copy(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), Stop> {
        self.skip_input()?;
        self.seek_output()?;
        let ibs = self.spec.ibs as usize;
        let obs = self.spec.obs as usize;
        let (max_records, max_bytes) = self.spec.limits();
        let mut records = 0u64;
        let mut read_error = None;
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
            let mut n = match self.read_record(ctx, want) {
                Ok(n) => n,
                Err(Stop::Failed(e)) => {
                    read_error = Some(e);
                    break;
                }
                Err(stop) => return Err(stop),
            };
            if n == 0 {
                break;
            }
            self.add(ctx, BYTES_READ, n as u64);
            records += 1;
            if n < ibs {
                self.add(ctx, IN_PARTIAL, 1);
                if self.spec.conv.sync {
                    self.last = None;
                    self.ibuf[n..ibs].fill(0);
                    n = ibs;
                }
            } else {
                self.add(ctx, IN_FULL, 1);
            }
            if self.obuf.is_none() {
                // dd counts no record for a failed write of a record as read.
                if let Err((_, e)) = self.write_all(ctx, false, n) {
                    return Err(self.stop(self.write_error("error writing", e)));
                }
                self.add(ctx, if n == ibs { OUT_FULL } else { OUT_PARTIAL }, 1);
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
                    if let Err((done, e)) = self.write_all(ctx, true, obs) {
                        if self.interrupted {
                            return Err(Stop::Interrupted);
                        }
                        if done != 0 {
                            self.add(ctx, OUT_PARTIAL, 1);
                        }
                        return Err(Stop::Quit(self.write_error("writing to", e)));
                    }
                    self.add(ctx, OUT_FULL, 1);
                    self.oc = 0;
                }
            }
        }
        self.last = None;
        let mut errors = read_error.unwrap_or_default();
        if self.oc > 0 {
            let oc = self.oc;
            self.oc = 0;
            match self.write_all(ctx, true, oc) {
                Err(_) if self.interrupted => return Err(Stop::Interrupted),
                Err((done, e)) => {
                    if done != 0 {
                        self.add(ctx, OUT_PARTIAL, 1);
                    }
                    errors.push(self.write_error("error writing", e));
                }
                Ok(_) => self.add(ctx, OUT_PARTIAL, 1),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Stop::Failed(errors))
        }
    }

    /// A flush, retried when a signal interrupts it (dd's ifdatasync / ifsync); None when
    /// an interrupt came first.
    fn sync_call(&mut self, call: impl Fn() -> libc::c_int) -> Option<libc::c_int> {
        loop {
            if self.process_signals() {
                return None;
            }
            let r = call();
            if r == 0 || errno().raw_os_error() != Some(libc::EINTR) {
                return Some(r);
            }
        }
    }

    /// dd's synchronize_output: conv=fdatasync, then conv=fsync (also when fdatasync
    /// failed, whatever the reason), each failure one more of dd's lines in `errors`.
    /// Whether one failed (dd's non-zero sync status); Err on an interrupt.
    fn synchronize(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        errors: &mut Vec<DdError>,
    ) -> Result<bool, Stop> {
        let fd = self.out_fd();
        let mut fsync = self.spec.conv.fsync || self.fsync_after_direct;
        let mut failed = false;
        if self.spec.conv.fdatasync {
            let start = Stamp::now();
            // SAFETY: plain syscall on an fd we own.
            let r = self
                .sync_call(|| unsafe { libc::fdatasync(fd) })
                .ok_or(Stop::Interrupted)?;
            if r != 0 {
                let e = errno();
                if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
                    errors.push(DdError::Sync {
                        call: "fdatasync",
                        name: self.out_name(),
                        source: e,
                    });
                    failed = true;
                }
                fsync = true;
            } else {
                ctx.record(FSYNC, Ticket::inner(), start, Stamp::now());
                self.add(ctx, END_FSYNCS, 1);
            }
        }
        if fsync {
            let start = Stamp::now();
            // SAFETY: plain syscall on an fd we own.
            let r = self
                .sync_call(|| unsafe { libc::fsync(fd) })
                .ok_or(Stop::Interrupted)?;
            if r != 0 {
                errors.push(DdError::Sync {
                    call: "fsync",
                    name: self.out_name(),
                    source: errno(),
                });
                return Ok(true);
            }
            ctx.record(FSYNC, Ticket::inner(), start, Stamp::now());
            self.add(ctx, END_FSYNCS, 1);
        }
        Ok(failed)
    }

    /// dd's iclose of both ends (input first), whose failure dd reports and exits on,
    /// before its statistics.
    fn close_ends(&mut self) -> Result<(), DdError> {
        let ends = [("input", self.input.take()), ("output", self.output.take())];
        for (side, fd) in ends {
            let Some(raw) = fd.map(IntoRawFd::into_raw_fd) else {
                continue;
            };
            // SAFETY: raw was owned and is closed once, here.
            if unsafe { libc::close(raw) } != 0 {
                let e = errno();
                // Closed anyway, as Linux's close always closes; EINTR is no failure.
                if e.raw_os_error() != Some(libc::EINTR) {
                    let name = if side == "input" {
                        self.in_name()
                    } else {
                        self.out_name()
                    };
                    return Err(DdError::Close {
                        side,
                        name,
                        source: e,
                    });
                }
            }
        }
        Ok(())
    }

    /// The copy, then dd's ending for the way it stopped: the flush after a failure too
    /// (dd's cleanup), then both ends closed. Errors come out as dd prints them, in order;
    /// where dd exits before its statistics, the record says so.
    fn run_copy(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), DdError> {
        // dd's clock starts once both ends are open, before skip=.
        self.started = Instant::now();
        let (mut errors, quit) = match self.copy(ctx) {
            Ok(()) => (Vec::new(), false),
            Err(Stop::Failed(e)) => (e, false),
            Err(Stop::Quit(e)) => (vec![e], true),
            Err(Stop::Interrupted) => (Vec::new(), false),
        };
        if !self.interrupted {
            match self.synchronize(ctx, &mut errors) {
                // dd's quit() flushes in cleanup() and exits at once when that fails.
                Ok(true) if quit => {
                    self.spec.printed.with(|p| p.final_stats = false);
                    return Err(DdError::of(errors).expect("the failures"));
                }
                Ok(_) | Err(_) => {}
            }
        }
        // dd's cleanup() closes both ends, also on an interrupt; dies if that fails.
        if let Err(e) = self.close_ends() {
            errors.push(e);
            self.spec.printed.with(|p| p.final_stats = false);
        }
        DdError::of(errors).map_or(Ok(()), Err)
    }
}

/// Why the copy stopped before its end, as dd's code parts the ways.
enum Stop {
    /// dd's copy loop returned a failure (a record's write, the last block's, a read):
    /// the flush still follows, then the statistics.
    Failed(Vec<DdError>),
    /// dd's quit(): the flush follows in its cleanup, and when that fails dd exits there,
    /// without its statistics.
    Quit(DdError),
    /// An interrupt: no flush; both ends closed, the statistics, then death by the signal
    /// (the front end's part).
    Interrupted,
}

impl Worker for DdWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.own_table();
        if let Some(sig) = self.talk.as_ref().and_then(|t| t.info_signal) {
            // SAFETY: a sigset on the stack, filled before use; only this thread's mask.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            }
        }
        let copier = self
            .talk
            .as_ref()
            .and_then(|t| t.interrupt.as_ref())
            .map(|i| i.copier.clone());
        if let Some(c) = &copier {
            // SAFETY: gettid has no preconditions.
            c.store(unsafe { libc::gettid() }, Relaxed);
        }
        let r = self.run_copy(ctx);
        if let Some(c) = &copier {
            c.store(0, Relaxed);
        }
        r.map_err(WorkloadError::new)
    }
}

/// Whether `path` is a block device (the safety rules apply to writing it).
pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}
