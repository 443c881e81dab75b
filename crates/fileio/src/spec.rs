//! The file-I/O job model: what a run or prepare is asked to do, in no front end's terms,
//! checked once before anything touches a file. Front ends (sysbench's fileio, fio) translate
//! their options into a [`FileioSpec`]; docs/fileio.md ("The I/O job model") says how.

use std::path::PathBuf;

use thiserror::Error;

use crate::access::{Access, Mix};
use crate::engine::{EngineDef, EngineOptions};
use crate::setting::{plain, Setting, Spelling};
use crate::think::Think;
use plumb_core::random::Skew;

/// Flags the files are opened with for a run: synchronous writes (O_SYNC, O_DSYNC) and
/// direct I/O (O_DIRECT), combinable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenFlags {
    pub sync: bool,
    pub dsync: bool,
    pub direct: bool,
}

impl OpenFlags {
    pub fn any(self) -> bool {
        self.sync || self.dsync || self.direct
    }
    pub fn open_flags(self) -> libc::c_int {
        let mut fl = 0;
        if self.sync {
            fl |= libc::O_SYNC;
        }
        if self.dsync {
            fl |= libc::O_DSYNC;
        }
        if self.direct {
            fl |= libc::O_DIRECT;
        }
        fl
    }
    /// The flags set, by name ("sync", "dsync", "direct").
    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.sync {
            v.push("sync");
        }
        if self.dsync {
            v.push("dsync");
        }
        if self.direct {
            v.push("direct");
        }
        v
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncMode {
    Fsync,
    Fdatasync,
}

impl FsyncMode {
    pub fn name(self) -> &'static str {
        match self {
            FsyncMode::Fsync => "fsync",
            FsyncMode::Fdatasync => "fdatasync",
        }
    }
}

/// When written data is synced to stable storage. Each kind applies to patterns that write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncPolicy {
    /// A sync round after every N requests of the run's shared request stream: each file
    /// synced once, each sync an event of its own (0: none).
    pub every_requests: u64,
    /// Sync the written file right after each write, inside the write's event.
    pub each_write: bool,
    /// Each thread syncs every file after its last request, inside the measured time.
    pub at_end: bool,
    /// fsync or fdatasync (engines that map files msync whatever this says).
    pub call: FsyncMode,
}

impl Default for SyncPolicy {
    /// sysbench's defaults: a round every 100 requests, and at the end.
    fn default() -> Self {
        SyncPolicy {
            every_requests: 100,
            each_write: false,
            at_end: true,
            call: FsyncMode::Fsync,
        }
    }
}

impl SyncPolicy {
    /// No syncs at all.
    pub const NONE: SyncPolicy = SyncPolicy {
        every_requests: 0,
        each_write: false,
        at_end: false,
        call: FsyncMode::Fsync,
    };
    /// A sync after each write, and no other.
    pub const EACH_WRITE: SyncPolicy = SyncPolicy {
        each_write: true,
        ..SyncPolicy::NONE
    };
}

/// What the data written looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fill {
    /// Random bytes, every block stamped unique: neither compressible nor deduplicable.
    Random,
    /// Zeros, as sysbench writes them.
    Zero,
    /// sysbench's --validate layout: random bytes, CRC32 and the block's offset at its end.
    Validate,
    /// Random bytes with this share of every 512 bytes zeroed, so compressing storage saves
    /// about that share (fio's buffer_compress_percentage); still stamped unique per block.
    Compressible { pct: u8 },
    /// Each request buffer's first contents (random bytes, this share of every 512 bytes
    /// zeroed), written unchanged every time: deduplicating storage keeps one copy per
    /// buffer (fio's scramble_buffers=0 without refill_buffers).
    Repeated { pct: u8 },
    /// The spec's byte pattern over and over from each buffer's start (fio's
    /// buffer_pattern): as compressible and deduplicable as the pattern is short.
    Pattern,
}

impl Fill {
    pub fn name(self) -> &'static str {
        match self {
            Fill::Random => "random",
            Fill::Zero => "zero",
            Fill::Validate => "validate",
            Fill::Compressible { .. } => "compressible",
            Fill::Repeated { .. } => "repeated",
            Fill::Pattern => "pattern",
        }
    }
}

/// How big each request of one direction is.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeChoice {
    Fixed(u64),
    /// Any multiple of `min` from `min` to `max`, drawn per request.
    Range {
        min: u64,
        max: u64,
    },
    /// Weighted sizes (bytes, percent of requests), drawn per request; percents sum to 100.
    Split(Vec<(u64, u32)>),
}

impl SizeChoice {
    pub fn min(&self) -> u64 {
        match self {
            SizeChoice::Fixed(b) => *b,
            SizeChoice::Range { min, .. } => *min,
            SizeChoice::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            SizeChoice::Fixed(b) => *b,
            SizeChoice::Range { max, .. } => *max,
            SizeChoice::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(0),
        }
    }
}

/// Request sizes per direction.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockSizes {
    pub read: SizeChoice,
    pub write: SizeChoice,
    /// Trims (fio's third block size); records made before trims existed hold none.
    #[serde(default = "default_trim_size")]
    pub trim: SizeChoice,
}

fn default_trim_size() -> SizeChoice {
    SizeChoice::Fixed(4096)
}

impl BlockSizes {
    pub fn fixed(b: u64) -> BlockSizes {
        BlockSizes {
            read: SizeChoice::Fixed(b),
            write: SizeChoice::Fixed(b),
            trim: SizeChoice::Fixed(b),
        }
    }
    /// The sizes of read, write and trim, in that order (the walk's direction index).
    pub fn by_dir(&self) -> [&SizeChoice; 3] {
        [&self.read, &self.write, &self.trim]
    }
}

/// One file a job names, and the part of it the job works on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NamedFile {
    pub path: std::path::PathBuf,
    /// Where the job's region starts.
    pub offset: u64,
    /// The region's length: requests stay inside [offset, offset + length).
    pub length: u64,
}

/// fio's verify: how written requests are sealed and when they are read back.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifySpec {
    pub seal: crate::verify::Sealing,
    /// Read back and check everything written once the writes are done (fio's do_verify).
    pub after_writes: bool,
    /// Stop at the first bad request (fio's verify_fatal); otherwise check them all and
    /// fail the job at the end.
    pub fatal: bool,
    /// Read back while writing (fio's verify_backlog): whenever this many writes wait to be
    /// read back, `batch` of them are (0: only once the writes are done).
    #[serde(default)]
    pub backlog: u64,
    #[serde(default)]
    pub batch: u64,
    /// Write each bad chunk as read, and what it should have held, to files (fio's
    /// verify_dump).
    #[serde(default)]
    pub dump: bool,
    /// Read back every write in the order written, whatever the job's map (fio's
    /// experimental_verify, which walks the job's requests again instead of keeping a
    /// sorted list).
    #[serde(default)]
    pub in_write_order: bool,
}

/// How a job's walk moves between its files (fio's `file_service_type`); each request
/// and sync is served by one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileService {
    /// N requests to each file in turn (fio's `roundrobin:N`; the default, N = 1).
    RoundRobin(u64),
    /// Each file until it is done, in order (fio's `sequential`).
    Sequential,
    /// N requests to a file drawn at random among those not done (fio's `random:N`).
    Random(u64),
}

impl Default for FileService {
    fn default() -> Self {
        FileService::RoundRobin(1)
    }
}

/// What a job tells the kernel about its pattern when it opens a file.
/// How a file laid out gets its blocks before any data is written (fio's `fallocate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Allocation {
    /// Nothing: a file only written grows as it is written.
    #[default]
    None,
    /// `fallocate(fd, 0, 0, size)`, its failure ignored (fio's default, `native`).
    Native,
    /// `posix_fallocate`, which the C library carries out by writing where the filesystem
    /// cannot allocate; a failure is reported and the layout goes on.
    Posix,
    /// `fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size)`: blocks, not length; a failure fails
    /// the job.
    Keep,
    /// `ftruncate(fd, size)`: length, not blocks; a failure fails the job.
    Truncate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAdvice {
    /// POSIX_FADV_RANDOM: no readahead.
    Random,
    /// POSIX_FADV_SEQUENTIAL: more readahead.
    Sequential,
}

impl FileAdvice {
    pub fn flag(self) -> libc::c_int {
        match self {
            FileAdvice::Random => libc::POSIX_FADV_RANDOM,
            FileAdvice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        }
    }
}

/// A job that names its own files and walks them on its own (fio's model): every thread
/// has its own positions, random map and byte count; nothing is shared with other threads.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobIo {
    pub files: Vec<NamedFile>,
    pub sizes: BlockSizes,
    /// Random offsets are multiples of this inside each region.
    pub align: u64,
    /// Touch every block once per pass before any repeats (fio's random map); otherwise
    /// blocks are drawn independently. Only a uniform `skew` keeps a map.
    pub random_map: bool,
    /// Random offsets walk a seeded order of each file's blocks, each once per pass and the
    /// same order every pass, with no map (fio's `random_generator=lfsr`); takes the place
    /// of `random_map`. Only a uniform `skew` uses it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lfsr: bool,
    /// How random offsets are drawn inside each file's region. The job's own walk uses this,
    /// not the distribution of [`crate::access::Order::Random`] (which is sysbench's, over
    /// the blocks of all files at once): a skew is per file, and it turns the map off.
    #[serde(default)]
    pub skew: Skew,
    /// A stall between requests, inside each worker's loop (none: no stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// fio's `io_size` (reads and writes together; by default the regions' size): with
    /// `passes`, what decides the job's rounds as fio's keep_running does
    /// ([`crate::walk`]).
    pub pass_bytes: u64,
    /// fio's `loops`: rounds that always run (`None`: time-based, until its time limit).
    pub passes: Option<u64>,
    /// Bytes after which a round ends (fio's do_io stops at its `total_bytes`, which it
    /// counts only for requests an engine queues); `None`: a round ends only when every
    /// file is done or the job's bytes are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_bytes: Option<u64>,
    /// Every round draws the same random numbers as the first (fio's `randrepeat`: it
    /// seeds its generators again when it starts a round over), so a random job's loops
    /// repeat their offsets.
    #[serde(default)]
    pub repeat_each_round: bool,
    /// A sync of the file just written after every N writes (0: none).
    pub sync_every_writes: u64,
    /// Files missing or shorter than their region are laid out anew and written in full
    /// before the run (false: created and allocated only, for jobs that only write).
    pub lay_out_data: bool,
    /// How a file laid out is allocated before any data (fio's `fallocate`).
    #[serde(default)]
    pub allocate: Allocation,
    /// Laid-out data is not synced (fio's `create_fsync=0`).
    #[serde(default)]
    pub layout_unsynced: bool,
    /// A missing file is an error, not created (fio's `allow_file_create=0`).
    #[serde(default)]
    pub no_create: bool,
    /// The I/O errors the job counts and goes on after (fio's `continue_on_error`,
    /// `ignore_error`); none: every error stops it, and none is counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerate: Option<crate::tolerate::Tolerate>,
    /// Remove the files the job created once it is done.
    pub unlink: bool,
    /// Drop the cached pages of a file's region each time the job opens it, as fio's
    /// `invalidate` does: before the file's first request of each round (fio opens its
    /// files again for each) and of each read-back.
    pub invalidate: bool,
    /// Also drop them each time a time-based job starts a file over without opening it
    /// again (fio: its random map is used up, or its only file walked in order reaches
    /// the region's end). fio skips this under direct I/O.
    #[serde(default)]
    pub invalidate_on_wrap: bool,
    /// The access pattern told to the kernel when a file is opened (fio's fadvise_hint):
    /// random turns readahead off, which shapes a buffered run's numbers.
    #[serde(default)]
    pub advice: Option<FileAdvice>,
    /// Missing files are created when the run opens them, not laid out before (fio's
    /// create_on_open; jobs that only write).
    #[serde(default)]
    pub create_at_open: bool,
    /// Write until the filesystem is full: ENOSPC or EDQUOT on a write ends the job, not as
    /// an error (fio's fill_device).
    #[serde(default)]
    pub fill_device: bool,
    /// fio's `rw=...:N`: sequential orders skip this many bytes after each request (holes;
    /// negative: they step back, fio's signed `ddir_seq_add`); random orders draw a new
    /// offset only every this many requests (positive), going on sequentially in between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<i64>,
    /// Once the queue is full, refill it only when it has drained to this many requests in
    /// flight (fio's iodepth_low); none: keep it full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_low: Option<u32>,
    /// How queued requests go to the kernel and come back in batches (fio's iodepth_batch
    /// options); none: one at a time in, everything completed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<QueueBatch>,
    /// Verified writes, and checked reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySpec>,
    /// Keep a log of every request, or of per-window averages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<crate::iolog::LogSpec>,
    /// Log each request as it is issued, in fio's iolog text ([`crate::io_trace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::io_trace::TraceSpec>,
    /// How the walk moves from file to file (fio's `file_service_type`).
    #[serde(default)]
    pub service: FileService,
    /// Read each file's region once before the job's requests (fio's `pre_read`).
    #[serde(default)]
    pub pre_read: bool,
    /// A request that overlaps one in flight waits for completions first (fio's
    /// `serialize_overlap`, which compares offsets whatever the file).
    #[serde(default)]
    pub serialize_overlap: bool,
    /// Requests the job issues at most in each of its `passes` (fio's `number_ios`; none
    /// in a time-based job, where fio ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// fio's `zonemode=strided`: the walk moves through each file in zones
    /// ([`crate::walk`]); none: over each whole region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<StridedZones>,
    /// Replay these requests instead of walking the files (fio's `read_iolog`).
    #[serde(skip)]
    pub replay: Option<std::sync::Arc<crate::walk::replay::Script>>,
    /// Rates the job must keep while it runs, or it fails ([`crate::min_rate`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<crate::min_rate::MinRate>,
    /// The longest a read or write may take, or the job fails ([`crate::max_latency`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency: Option<crate::max_latency::MaxLatency>,
    /// Issue requests in a ratio with other jobs of a flow ([`crate::flow`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<crate::flow::FlowSpec>,
}

/// fio's `zonemode=strided` (zonesize, zonerange, zoneskip), as fio 3.33's
/// setup_strided_zone_mode walks it ([`crate::walk`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StridedZones {
    /// Bytes done in a zone, counted over all the job's files, before the next one.
    pub size: u64,
    /// A zone's length from its start (at least 1).
    pub range: u64,
    /// Bytes left out after each zone's range.
    pub skip: u64,
    /// Each file's size as fio finds it when the job starts (its real_file_size: the
    /// region's end, or further in a larger file or device), in the order of `files`: a
    /// zone starting there starts the walk over at the region's start, and no request
    /// goes past it.
    pub file_ends: Vec<u64>,
}

/// Batching of a queueing engine's submissions and completions (fio's `iodepth_batch_submit`,
/// `iodepth_batch_complete_min`, `iodepth_batch_complete_max`), as fio resolves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueBatch {
    /// Requests queued before they are handed to the kernel together (1 or more).
    pub submit: u32,
    /// Completions to wait for at each collection; 0: poll without sleeping.
    pub reap_min: u32,
    /// Completions taken at most per collection (at least `reap_min`, at least 1).
    pub reap_max: u32,
    /// Collect after every request queued, not only when the queue is full (fio polls so
    /// when both completion bounds are 0).
    pub poll_each: bool,
}

impl JobIo {
    /// Random requests touch every block once per pass (a map, or lfsr's order), so a
    /// time-based job's file starts over when the pass is done.
    pub fn covers_blocks(&self) -> bool {
        self.random_map || self.lfsr
    }
    /// Bytes of all regions together.
    pub fn region_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.length).sum()
    }
    /// The largest request of any direction (trims included: fio sizes its buffers so).
    pub fn max_request(&self) -> u64 {
        self.sizes
            .by_dir()
            .iter()
            .map(|s| s.max())
            .max()
            .unwrap_or(0)
    }
    /// The smallest request of any direction (fio's td_min_bs).
    pub fn min_request(&self) -> u64 {
        self.sizes
            .by_dir()
            .iter()
            .map(|s| s.min())
            .min()
            .unwrap_or(0)
    }
}

/// One file-I/O job (defaults are sysbench's, for tests and the sysbench front end).
#[derive(Clone, Debug)]
pub struct FileioSpec {
    /// Directory holding the files, named test_file.0 .. test_file.N-1.
    pub dir: PathBuf,
    pub num_files: u32,
    /// Bytes per request (random orders) or per merged unit (sequential orders).
    pub block_size: u64,
    /// Bytes of all files together; each file holds total / files.
    pub total_size: u64,
    /// What is read and written, in which order. Required for `run` only.
    pub access: Option<Access>,
    /// The tuning of a random order's distribution (sysbench's `--rand-spec-*`).
    pub rand_shape: plumb_core::random::Shape,
    /// The engine, from the registry.
    pub engine: &'static EngineDef,
    /// The engine's own options the job sets (the rest keep the engine's defaults).
    pub engine_options: EngineOptions,
    /// Requests in flight per thread, for engines that queue ([`crate::engine::Caps::queued`]).
    pub queue_depth: u32,
    /// How the files are opened for a run.
    pub flags: OpenFlags,
    /// When written data is synced.
    pub sync: SyncPolicy,
    /// Sequential requests are this many blocks long (0 or 1: one block).
    pub merged_requests: u64,
    /// Write checksummed blocks and check every block read.
    pub validate: bool,
    /// The data written (validation implies its own layout).
    pub fill: Fill,
    /// The bytes of [`Fill::Pattern`].
    pub pattern: Option<std::sync::Arc<[u8]>>,
    /// Where the request buffers live.
    pub buffers: crate::buf::BufferMemory,
    pub threads: usize,
    /// Named files walked per thread (fio); `None`: the shared sysbench file set in `dir`.
    pub job: Option<JobIo>,
    /// CPUs, nice value and I/O priority of the threads.
    pub placement: crate::placement::Placement,
}

impl Default for FileioSpec {
    fn default() -> Self {
        FileioSpec {
            dir: PathBuf::from("."),
            num_files: 128,
            block_size: 16384,
            total_size: 2 << 30,
            access: None,
            rand_shape: Default::default(),
            engine: &crate::engine::psync::DEF,
            engine_options: EngineOptions::default(),
            queue_depth: 128,
            flags: OpenFlags::default(),
            sync: SyncPolicy::default(),
            merged_requests: 0,
            validate: false,
            fill: Fill::Random,
            pattern: None,
            buffers: Default::default(),
            threads: 1,
            job: None,
            placement: Default::default(),
        }
    }
}

/// A combination of settings that cannot work. [`SpecError::describe`] says it in one line
/// naming the settings the way the caller spells them.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{}", self.describe(&plain))]
pub enum SpecError {
    NoFiles,
    /// Fewer bytes than files.
    EmptyFiles {
        total: u64,
        files: u32,
    },
    BlockSizeZero,
    ValidateZeroFill,
    /// Validation needs room for a CRC32 and an offset in each block.
    ValidateBlockTooSmall {
        block: u64,
    },
    ValidatePartialBlock {
        file_size: u64,
        block: u64,
    },
    /// No access pattern: nothing to run.
    NoAccess,
    /// Files written from scratch by the run itself take sequential writes only.
    CreateNeedsSequentialWrites,
    /// Trims exist only in a job that walks its own files (fio's model).
    TrimNeedsJob,
    /// Sequential requests mixed into a random order (fio's percentage_random) exist only
    /// in a job that walks its own files.
    SequentialShareNeedsJob,
    RequestTooLarge {
        bytes: u64,
        max: u64,
    },
    /// Open flags on an engine they do not change.
    OpenFlagsUnused {
        flags: Vec<&'static str>,
        engine: &'static str,
        mapped: bool,
    },
    /// Validation on an engine that moves no data.
    ValidateWithoutData {
        engine: &'static str,
    },
    /// A named file's region smaller than the smallest request.
    RegionTooSmall {
        length: u64,
        block: u64,
    },
    /// A skew of random offsets whose parameters cannot work (why, in words).
    BadSkew(String),
    /// An engine option the engine does not have.
    UnknownEngineOption {
        engine: &'static str,
        option: &'static str,
        known: Vec<&'static str>,
    },
}

impl SpecError {
    /// The problem in one line, each setting written by `spell`.
    pub fn describe(&self, spell: Spelling<'_>) -> String {
        use Setting as S;
        match self {
            SpecError::NoFiles => format!("{} must be at least 1", spell(S::FileCount)),
            SpecError::EmptyFiles { total, files } => format!(
                "{} ({total}) is smaller than {} ({files}): every file would be empty",
                spell(S::TotalSize),
                spell(S::FileCount)
            ),
            SpecError::BlockSizeZero => format!("{} must be at least 1", spell(S::BlockSize)),
            SpecError::ValidateZeroFill => format!(
                "{} writes checksummed random blocks; it cannot be combined with {}",
                spell(S::Validate),
                spell(S::ZeroFill)
            ),
            SpecError::ValidateBlockTooSmall { block } => format!(
                "{} needs {} larger than 12 bytes (a CRC32 and an offset end each block), got {block}",
                spell(S::Validate),
                spell(S::BlockSize)
            ),
            SpecError::ValidatePartialBlock { file_size, block } => format!(
                "{} needs files made of whole blocks: file size {file_size} ({} / {}) is not a multiple of {} {block}",
                spell(S::Validate),
                spell(S::TotalSize),
                spell(S::FileCount),
                spell(S::BlockSize)
            ),
            SpecError::NoAccess => format!("no {} given: nothing to run", spell(S::Access)),
            SpecError::CreateNeedsSequentialWrites => format!(
                "{}: files the run creates itself can only be written sequentially",
                spell(S::Access)
            ),
            SpecError::TrimNeedsJob => format!(
                "{}: trims need a job that names its own files (fio's rw=trim)",
                spell(S::Access)
            ),
            SpecError::SequentialShareNeedsJob => format!(
                "{}: sequential requests inside a random order need a job that names its own files (fio's percentage_random)",
                spell(S::Access)
            ),
            SpecError::RequestTooLarge { bytes, max } => format!(
                "{} times {} is {bytes} bytes; plumb allows at most {max} per request",
                spell(S::BlockSize),
                spell(S::MergedRequests)
            ),
            SpecError::OpenFlagsUnused {
                flags,
                engine,
                mapped,
            } => format!(
                "{}={} cannot apply to {}={engine}: {}",
                spell(S::OpenFlags),
                flags.join(","),
                spell(S::Engine),
                if *mapped {
                    "memory-mapped I/O does not go through read/write, so open flags do not change it".to_string()
                } else {
                    format!("the {engine} engine does no I/O")
                }
            ),
            SpecError::UnknownEngineOption {
                engine,
                option,
                known,
            } => format!(
                "{}={engine} has no option '{option}' ({})",
                spell(S::Engine),
                if known.is_empty() {
                    "it takes none".to_string()
                } else {
                    format!("it takes: {}", known.join(", "))
                }
            ),
            SpecError::BadSkew(why) => format!("random offsets: {why}"),
            SpecError::RegionTooSmall { length, block } => format!(
                "{} too small, must not be less than the minimum {}: {length} < {block}",
                spell(S::TotalSize),
                spell(S::BlockSize)
            ),
            SpecError::ValidateWithoutData { engine } => format!(
                "{} needs data: it cannot be combined with {}={engine}",
                spell(S::Validate),
                spell(S::Engine)
            ),
        }
    }
}

/// Largest request buffer plumb allocates (per in-flight request).
pub const MAX_REQUEST: u64 = 1 << 30;

impl FileioSpec {
    /// Bytes per file: total / num, as sysbench computes it.
    pub fn file_size(&self) -> u64 {
        self.total_size / self.num_files as u64
    }

    /// Bytes per sequential request: block size times --file-merged-requests.
    pub fn request_size(&self) -> u64 {
        self.block_size * self.merged_requests.max(1)
    }

    /// The size of the largest single I/O.
    pub fn max_io(&self) -> u64 {
        if let Some(j) = &self.job {
            return j.max_request();
        }
        match self.access {
            Some(a) if a.is_sequential() => self.request_size(),
            _ => self.block_size,
        }
        .min(self.file_size().max(1))
    }

    /// Requests in flight per thread.
    pub fn depth(&self) -> usize {
        if self.engine.caps.queued {
            self.queue_depth as usize
        } else {
            1
        }
    }

    /// Periodic fsync every N requests, when it applies (`None` otherwise).
    pub fn periodic_fsync(&self) -> Option<u64> {
        let writes = self.access.is_some_and(|a| a.writes());
        let every = self.sync.every_requests;
        (writes && every > 0).then_some(every)
    }

    /// Whether each thread fsyncs every file at the end (modes that issue writes only, as
    /// sysbench; fio's trim-only jobs do not sync either).
    pub fn end_fsync(&self) -> bool {
        self.sync.at_end && self.access.is_some_and(|a| a.issues_writes())
    }

    /// The data layout files are written with.
    pub fn effective_fill(&self) -> Fill {
        if self.validate {
            Fill::Validate
        } else {
            self.fill
        }
    }

    /// Check the options that matter for every command (prepare, run, cleanup).
    pub fn check_files(&self) -> Result<(), SpecError> {
        if self.num_files == 0 {
            return Err(SpecError::NoFiles);
        }
        if self.file_size() == 0 {
            return Err(SpecError::EmptyFiles {
                total: self.total_size,
                files: self.num_files,
            });
        }
        if self.block_size == 0 {
            return Err(SpecError::BlockSizeZero);
        }
        if self.validate {
            if self.fill == Fill::Zero {
                return Err(SpecError::ValidateZeroFill);
            }
            if self.block_size <= 12 {
                return Err(SpecError::ValidateBlockTooSmall {
                    block: self.block_size,
                });
            }
            if !self.file_size().is_multiple_of(self.block_size) {
                return Err(SpecError::ValidatePartialBlock {
                    file_size: self.file_size(),
                    block: self.block_size,
                });
            }
        }
        Ok(())
    }

    /// Check everything `run` needs.
    pub fn check_run(&self) -> Result<(), SpecError> {
        self.check_files()?;
        let Some(access) = self.access else {
            return Err(SpecError::NoAccess);
        };
        if let Some(j) = &self.job {
            if j.files.is_empty() {
                return Err(SpecError::NoFiles);
            }
            let min = j.min_request();
            if min == 0 {
                return Err(SpecError::BlockSizeZero);
            }
            if let Some(f) = j.files.iter().find(|f| f.length < min) {
                return Err(SpecError::RegionTooSmall {
                    length: f.length,
                    block: min,
                });
            }
            j.skew
                .check()
                .map_err(|e| SpecError::BadSkew(e.to_string()))?;
        }
        if access.creates_files && (access.mix != Mix::Write || !access.is_sequential()) {
            return Err(SpecError::CreateNeedsSequentialWrites);
        }
        if access.trims() && self.job.is_none() {
            return Err(SpecError::TrimNeedsJob);
        }
        if access.mixes_in_sequential() && self.job.is_none() {
            return Err(SpecError::SequentialShareNeedsJob);
        }
        if self.request_size() > MAX_REQUEST {
            return Err(SpecError::RequestTooLarge {
                bytes: self.request_size(),
                max: MAX_REQUEST,
            });
        }
        let caps = self.engine.caps;
        if self.flags.any() && !caps.open_flags {
            return Err(SpecError::OpenFlagsUnused {
                flags: self.flags.names(),
                engine: self.engine.name,
                mapped: caps.maps_files,
            });
        }
        for &(option, _) in &self.engine_options.0 {
            if self.engine.option(&self.engine_options, option).is_none() {
                return Err(SpecError::UnknownEngineOption {
                    engine: self.engine.name,
                    option,
                    known: self.engine.options.iter().map(|o| o.name).collect(),
                });
            }
        }
        if self.validate && !caps.does_io {
            return Err(SpecError::ValidateWithoutData {
                engine: self.engine.name,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(access: Access) -> FileioSpec {
        FileioSpec {
            access: Some(access),
            ..Default::default()
        }
    }

    #[test]
    fn sysbench_defaults() {
        let s = FileioSpec::default();
        assert_eq!(s.num_files, 128);
        assert_eq!(s.block_size, 16384);
        assert_eq!(s.file_size(), 16 << 20);
        assert_eq!(s.sync.every_requests, 100);
        assert!(s.sync.at_end && !s.sync.each_write);
        assert_eq!(s.queue_depth, 128);
    }

    #[test]
    fn syncs_apply_to_patterns_that_write() {
        assert_eq!(spec(Access::rand_write()).periodic_fsync(), Some(100));
        assert_eq!(spec(Access::rand_read()).periodic_fsync(), None);
        assert!(!spec(Access::seq_read()).end_fsync());
        assert!(spec(Access::seq_write()).end_fsync());
        let each = FileioSpec {
            sync: SyncPolicy::EACH_WRITE,
            ..spec(Access::rand_write())
        };
        assert_eq!(each.periodic_fsync(), None);
        assert!(!each.end_fsync());
    }

    #[test]
    fn refuses_impossible_combinations() {
        let s = FileioSpec {
            engine: &crate::engine::mmap::DEF,
            flags: OpenFlags {
                direct: true,
                ..Default::default()
            },
            ..spec(Access::rand_read())
        };
        assert_eq!(
            s.check_run().unwrap_err(),
            SpecError::OpenFlagsUnused {
                flags: vec!["direct"],
                engine: "mmap",
                mapped: true
            }
        );
        let s = FileioSpec {
            validate: true,
            fill: Fill::Zero,
            ..spec(Access::rand_read())
        };
        assert!(s.check_files().is_err());
        let s = FileioSpec {
            total_size: 3,
            num_files: 4,
            ..spec(Access::rand_read())
        };
        assert_eq!(
            s.check_files().unwrap_err(),
            SpecError::EmptyFiles { total: 3, files: 4 }
        );
        assert_eq!(
            FileioSpec::default().check_run().unwrap_err(),
            SpecError::NoAccess
        );
    }

    #[test]
    fn engine_options_must_be_the_engine_s() {
        let mut opts = EngineOptions::default();
        opts.set("fixedbufs", false);
        let uring = FileioSpec {
            engine: &crate::engine::uring::DEF,
            engine_options: opts.clone(),
            ..spec(Access::rand_read())
        };
        assert_eq!(uring.check_run(), Ok(()));
        assert_eq!(uring.engine.option(&opts, "fixedbufs"), Some(false));
        assert_eq!(uring.engine.option(&opts, "registerfiles"), Some(true));
        let psync = FileioSpec {
            engine_options: opts.clone(),
            ..spec(Access::rand_read())
        };
        assert_eq!(
            psync.check_run().unwrap_err().to_string(),
            "engine=psync has no option 'fixedbufs' (it takes none)"
        );
        let pvsync2 = FileioSpec {
            engine: &crate::engine::pvsync2::DEF,
            engine_options: opts,
            ..spec(Access::rand_read())
        };
        let e = pvsync2.check_run().unwrap_err().to_string();
        assert!(
            e.contains("engine=pvsync2 has no option 'fixedbufs'"),
            "{e}"
        );
        let mut hipri = EngineOptions::default();
        hipri.set(crate::engine::pvsync2::HIPRI, true);
        assert_eq!(pvsync2.engine.option(&hipri, "hipri"), Some(true));
        assert_eq!(pvsync2.engine.option(&hipri, "nowait"), Some(false));
    }

    #[test]
    fn only_sequential_writes_create_files() {
        let reads = Access {
            creates_files: true,
            ..Access::seq_read()
        };
        assert_eq!(
            spec(reads).check_run().unwrap_err(),
            SpecError::CreateNeedsSequentialWrites
        );
        assert_eq!(spec(Access::seq_create()).check_run(), Ok(()));
    }

    #[test]
    fn only_a_job_s_own_walk_mixes_sequential_requests_into_a_random_order() {
        let mixed = Access {
            random_pct: [50, 100, 100],
            ..Access::rand_read()
        };
        assert_eq!(
            spec(mixed).check_run().unwrap_err(),
            SpecError::SequentialShareNeedsJob
        );
        assert_eq!(spec(Access::rand_read()).check_run(), Ok(()));
        // A sequential order has no draws to share out.
        let seq = Access {
            random_pct: [50; 3],
            ..Access::seq_read()
        };
        assert_eq!(spec(seq).check_run(), Ok(()));
    }

    #[test]
    fn errors_name_settings_as_the_caller_spells_them() {
        let e = SpecError::ValidatePartialBlock {
            file_size: 1000,
            block: 300,
        };
        assert_eq!(
            e.to_string(),
            "validation needs files made of whole blocks: file size 1000 (total size / number of files) is not a multiple of block size 300"
        );
        let fio = |s: Setting| match s {
            Setting::Validate => "verify".to_string(),
            Setting::TotalSize => "size".into(),
            Setting::FileCount => "nrfiles".into(),
            Setting::BlockSize => "bs".into(),
            other => other.plain().into(),
        };
        assert_eq!(
            e.describe(&fio),
            "verify needs files made of whole blocks: file size 1000 (size / nrfiles) is not a multiple of bs 300"
        );
    }

    #[test]
    fn open_flags_combine() {
        let f = OpenFlags {
            sync: true,
            direct: true,
            ..Default::default()
        };
        assert_eq!(f.open_flags(), libc::O_SYNC | libc::O_DIRECT);
        assert_eq!(f.names(), ["sync", "direct"]);
        assert!(!OpenFlags::default().any());
    }
}
