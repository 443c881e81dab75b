//! The fileio workload under the core harness.
//!
//! Operation kinds: read, write and fsync, each an event as in sysbench (so events/s and the
//! general latency mean what they mean there), each also reported on its own. A job that
//! trims (fio's trim modes) has a trim kind too, and a `bytes_trimmed` counter; other jobs
//! keep exactly the kinds and counters they always had. When every
//! write is synced the fsync belongs to its write's event: the write's latency covers both,
//! and the fsync alone is recorded as a non-event part.
//!
//! The engine comes from the registry ([`crate::engine::ENGINES`]); every engine runs in the
//! one worker loop of [`crate::worker`].
//!
//! The end-of-run fsync runs in `finish`: inside the measured time, as sysbench counts it,
//! but reported apart (count and wall time) instead of hiding in totals.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use plumb_core::size::format_compact;
use plumb_core::{KindId, OpKind, Worker, Workload, WorkloadError};
use plumb_observe::{meminfo, Roots};

use crate::access::Access;
use crate::engine::{Buffers, EngineDef, Shared};
use crate::error::FileioError;
use crate::fileset::open::{open_for_run, RunFiles};
use crate::fileset::FileTable;
use crate::fill::Filler;
use crate::message;
use crate::pattern::{Pattern, SharedStream};
use crate::setting::Setting;
use crate::spec::FileioSpec;
use crate::think::Thinker;
use crate::worker::{Busy, Driver, Setup, WorkerState};

pub const READ: KindId = 0;
pub const WRITE: KindId = 1;
pub const FSYNC: KindId = 2;

pub const BYTES_READ: usize = 0;
pub const BYTES_WRITTEN: usize = 1;
pub const END_FSYNCS: usize = 2;
/// Writes that found the disk full (ENOSPC, EDQUOT): issued, as fio counts them, but
/// neither timed nor bytes. Last in every list, looked up by name.
pub const WRITES_FULL: &str = "writes_full";
/// fio's jobs: writes the filesystem took only part of, whose rest went out again as a
/// request of its own (fio's `short` count): issued, but neither timed nor bytes.
pub const WRITES_SHORT: &str = "writes_short";
/// Requests that failed with an error the job goes on after ([`crate::tolerate`]):
/// issued, as fio counts them, but neither timed nor bytes. One per direction, after
/// [`WRITES_SHORT`] in every list.
pub const READS_FAILED: &str = "reads_failed";
pub const WRITES_FAILED: &str = "writes_failed";
pub const TRIMS_FAILED: &str = "trims_failed";
pub const COUNTERS: &[&str] = &[
    "bytes_read",
    "bytes_written",
    "end_fsyncs",
    WRITES_FULL,
    WRITES_SHORT,
    READS_FAILED,
    WRITES_FAILED,
    TRIMS_FAILED,
];
/// Engines that queue also count, in fio's buckets: the requests in flight when each was
/// queued (1, 2-3, 4-7, 8-15, 16-31, 32-63, 64+), the requests each submission carried and
/// the completions each reap collected (0, 1-4, 5-8, 9-16, 17-32, 33-64, 65+).
pub const DEPTH: usize = 3;
pub const SUBMIT: usize = DEPTH + 7;
pub const REAP: usize = SUBMIT + 7;
/// The counters of an engine that queues, then `$extra`: one list for every job that queues.
macro_rules! queued_counters {
    ($($extra:expr),*) => {
        &[
            "bytes_read", "bytes_written", "end_fsyncs",
            "depth_1", "depth_2", "depth_4", "depth_8", "depth_16", "depth_32", "depth_64",
            "submit_0", "submit_4", "submit_8", "submit_16", "submit_32", "submit_64", "submit_65",
            "reap_0", "reap_4", "reap_8", "reap_16", "reap_32", "reap_64", "reap_65",
            $($extra),*
        ]
    };
}
pub const COUNTERS_QUEUED: &[&str] = queued_counters!(
    WRITES_FULL,
    WRITES_SHORT,
    READS_FAILED,
    WRITES_FAILED,
    TRIMS_FAILED
);

/// fio's depth bucket of `n` requests in flight (1, 2-3, 4-7, ... 64+).
#[inline(always)]
pub fn depth_bucket(n: usize) -> usize {
    (usize::BITS - 1 - n.max(1).leading_zeros()).min(6) as usize
}

/// fio's batch bucket of `n` requests per call (0, 1-4, 5-8, 9-16, 17-32, 33-64, 65+).
#[inline(always)]
pub fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

const KINDS: &[OpKind] = &[
    OpKind::event("read"),
    OpKind::event("write"),
    OpKind::event("fsync"),
];
const KINDS_FSYNC_ALL: &[OpKind] = &[
    OpKind::event("read"),
    OpKind::event("write"),
    OpKind::part("fsync"),
];
/// A job on an engine that submits each request with a call of its own (libaio, posixaio)
/// also keeps the two halves of each request apart: submission (fio's slat) and the wait
/// for its completion (fio's clat).
pub const READ_SUBMIT: KindId = 3;
pub const WRITE_SUBMIT: KindId = 4;
pub const READ_COMPLETE: KindId = 5;
pub const WRITE_COMPLETE: KindId = 6;
const KINDS_SPLIT: &[OpKind] = &[
    OpKind::event("read"),
    OpKind::event("write"),
    OpKind::event("fsync"),
    OpKind::part("read_submit"),
    OpKind::part("write_submit"),
    OpKind::part("read_complete"),
    OpKind::part("write_complete"),
];
/// The lists above with a trim kind after their own (its id is looked up by name).
const KINDS_TRIM: &[OpKind] = &[
    OpKind::event("read"),
    OpKind::event("write"),
    OpKind::event("fsync"),
    OpKind::event("trim"),
];
const KINDS_SPLIT_TRIM: &[OpKind] = &[
    OpKind::event("read"),
    OpKind::event("write"),
    OpKind::event("fsync"),
    OpKind::part("read_submit"),
    OpKind::part("write_submit"),
    OpKind::part("read_complete"),
    OpKind::part("write_complete"),
    OpKind::event("trim"),
];
/// The byte counter of trims, after a list's own counters.
pub const BYTES_TRIMMED: &str = "bytes_trimmed";
const COUNTERS_TRIM: &[&str] = &[
    "bytes_read",
    "bytes_written",
    "end_fsyncs",
    BYTES_TRIMMED,
    WRITES_FULL,
    WRITES_SHORT,
    READS_FAILED,
    WRITES_FAILED,
    TRIMS_FAILED,
];
const COUNTERS_QUEUED_TRIM: &[&str] = queued_counters!(
    BYTES_TRIMMED,
    WRITES_FULL,
    WRITES_SHORT,
    READS_FAILED,
    WRITES_FAILED,
    TRIMS_FAILED
);

/// A job's progress as fio counts it for steady-state detection (its io_blocks and
/// io_bytes): the requests and bytes of reads, writes and trims, syncs left out.
pub const PROGRESS: plumb_core::steady::Tally = plumb_core::steady::Tally {
    ios: &["read", "write", "trim"],
    bytes: &["bytes_read", "bytes_written", BYTES_TRIMMED],
};

/// Request buffers are allocated up front (and pinned when io_uring registers them): refuse
/// a combination that would take more than half of the memory available now.
fn check_buffer_memory(spec: &FileioSpec) -> Result<(), FileioError> {
    let need = spec.depth() as u64 * spec.max_io() * spec.threads.max(1) as u64;
    let avail = meminfo::read(&Roots::default()).and_then(|m| meminfo::field(&m, "MemAvailable"));
    match avail {
        Some(a) if need > a / 2 => Err(FileioError::Settings(message![
            format!(
                "request buffers would take {} ({} in flight per thread × {} bytes × {} threads), more than half of the {} of memory available: lower ",
                format_compact(need),
                spec.depth(),
                spec.max_io(),
                spec.threads.max(1),
                format_compact(a)
            ),
            Setting::QueueDepth,
            ", ",
            Setting::BlockSize,
            " or ",
            Setting::MergedRequests
        ])),
        _ => Ok(()),
    }
}

/// Figures the workers leave for the report besides the core's.
#[derive(Default)]
pub struct Figures {
    /// Longest time one thread spent in its end-of-run fsyncs.
    pub end_fsync_wall_ns: AtomicU64,
    /// The threads' request buffers, and the part of them in huge pages (huge-page kinds).
    pub buffer_bytes: AtomicU64,
    pub huge_page_bytes: AtomicU64,
    /// Whether the engine registered files and buffers with the kernel (1 = yes), for
    /// engines that register ([`crate::engine::Caps::registers`]).
    pub registered_files: AtomicU64,
    pub registered_bufs: AtomicU64,
    /// The requests that failed, in the order they came back: writes that found the disk
    /// full (fio's fill_device included), and any request whose call failed and stopped
    /// the job.
    pub failed_requests: std::sync::Mutex<Vec<crate::error::FailedRequest>>,
    /// The directions found below their minimum rate, when a job failed so
    /// ([`crate::min_rate`]).
    pub min_rate_misses: std::sync::Mutex<Vec<crate::min_rate::Miss>>,
    /// The request that took longer than the job allows, when one did
    /// ([`crate::max_latency`]); one at most.
    pub max_latency_exceeded: std::sync::Mutex<Vec<crate::max_latency::Exceeded>>,
    /// The job's errors, counted when it tolerates some ([`crate::tolerate`]).
    pub errors: crate::tolerate::ErrorCount,
}

pub struct FileioWorkload {
    spec: FileioSpec,
    kinds: &'static [OpKind],
    files: Option<RunFiles>,
    shared: Arc<SharedStream>,
    engine: &'static EngineDef,
    /// What the engine's threads share.
    engine_state: Option<Shared>,
    pub figures: Arc<Figures>,
    busy: Option<Arc<Busy>>,
    /// The request logs of every thread, when the job keeps them.
    pub logs: Arc<crate::iolog::Logs>,
}

impl FileioWorkload {
    /// Check `spec`, check its engine can run here, open the files.
    pub fn open(spec: FileioSpec) -> Result<FileioWorkload, FileioError> {
        spec.check_run()?;
        let access = spec.access.expect("checked");
        check_buffer_memory(&spec)?;
        let def = spec.engine;
        (def.available)().map_err(|e| {
            FileioError::Other(format!("the {} engine cannot run here: {e}", def.name))
        })?;
        let files = if def.caps.needs_files {
            Some(match &spec.job {
                Some(job) => crate::fileset::named::open_named(&spec, job)?,
                None => open_for_run(&spec)?,
            })
        } else {
            None
        };
        let state = (def.share)(files.as_ref(), &spec)?;
        let mut w = FileioWorkload::with_engine(spec, state);
        w.files = files;
        if w.spec.validate {
            w.check_validate_room(access)?;
        }
        Ok(w)
    }

    /// A workload on `spec.engine` without checks or files, for engines that need none
    /// (null, or a test engine given what its threads share in `state`).
    pub fn with_engine(spec: FileioSpec, state: Option<Shared>) -> FileioWorkload {
        let per_thread = spec.depth();
        let busy = spec.validate.then(|| {
            Arc::new(Busy {
                slots: (0..spec.threads.max(1) * per_thread)
                    .map(|_| AtomicU64::new(0))
                    .collect(),
            })
        });
        let trims = spec.access.is_some_and(|a| a.trims());
        let split = spec.job.is_some() && spec.engine.caps.queued;
        FileioWorkload {
            kinds: match (spec.sync.each_write, split, trims) {
                (true, _, _) => KINDS_FSYNC_ALL,
                (false, true, false) => KINDS_SPLIT,
                (false, true, true) => KINDS_SPLIT_TRIM,
                (false, false, false) => KINDS,
                (false, false, true) => KINDS_TRIM,
            },
            engine: spec.engine,
            spec,
            files: None,
            shared: SharedStream::new(),
            engine_state: state,
            figures: Arc::default(),
            busy,
            logs: Arc::default(),
        }
    }

    fn check_validate_room(&self, access: Access) -> Result<(), FileioError> {
        let geo = crate::pattern::Geometry::from_spec(&self.spec);
        let in_flight = (self.spec.threads.max(1) * self.spec.depth()) as u64;
        let room = if access.is_sequential() {
            geo.seq_pass()
        } else {
            geo.blocks_per_file() * geo.num_files as u64
        };
        if room <= 2 * in_flight {
            return Err(FileioError::Settings(message![
                Setting::Validate,
                format!(
                    " needs more blocks than requests in flight: {room} requests cover the file set, {in_flight} can be in flight (fewer "
                ),
                Setting::Threads,
                " or ",
                Setting::QueueDepth,
                ", or larger files)"
            ]));
        }
        Ok(())
    }

    pub fn spec(&self) -> &FileioSpec {
        &self.spec
    }
    fn verify(&self) -> Option<crate::spec::VerifySpec> {
        self.spec.job.as_ref().and_then(|j| j.verify.clone())
    }
    /// The engine the workers use.
    pub fn engine(&self) -> &'static EngineDef {
        self.engine
    }
    pub fn engine_name(&self) -> &'static str {
        self.engine.name
    }
    pub fn direct_align(&self) -> Option<(u32, crate::direct::AlignSource)> {
        self.files.as_ref().and_then(|f| f.direct_align)
    }
    /// Sequential requests issued so far (seqwr's completion).
    pub fn requests_issued(&self) -> u64 {
        Pattern::requests_issued(&self.shared, &self.spec)
    }
    pub fn table(&self) -> Option<&Arc<FileTable>> {
        self.files.as_ref().map(|f| &f.table)
    }

    /// One buffer per request in flight, plus `extra`.
    fn buffers(&self, extra: usize) -> Result<Buffers, WorkloadError> {
        let align = self
            .files
            .as_ref()
            .map(|f| f.buf_align)
            .unwrap_or(crate::buf::page_size());
        let b = Buffers::in_memory(
            self.spec.depth() + extra,
            self.spec.max_io() as usize,
            align,
            self.spec.buffers,
        )
        .map_err(WorkloadError::new)?;
        self.figures.buffer_bytes.fetch_add(b.bytes(), Relaxed);
        if let Some(h) = b.huge_page_bytes() {
            self.figures.huge_page_bytes.fetch_add(h, Relaxed);
        }
        Ok(b)
    }
}

impl Workload for FileioWorkload {
    fn kinds(&self) -> &[OpKind] {
        self.kinds
    }
    fn counters(&self) -> &[&'static str] {
        let trims = self.spec.access.is_some_and(|a| a.trims());
        match (self.engine.caps.queued, trims) {
            (true, false) => COUNTERS_QUEUED,
            (true, true) => COUNTERS_QUEUED_TRIM,
            (false, false) => COUNTERS,
            (false, true) => COUNTERS_TRIM,
        }
    }
    fn worker(&self, thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        if let (Some(job), Some(table)) = (self.spec.job.as_ref(), self.table()) {
            if job.pre_read {
                crate::pre_read::pre_read(table, &job.files, job.sizes.read.max())
                    .map_err(WorkloadError::new)?;
            }
        }
        // A blocking engine that both reads and writes reads into a buffer of its own.
        let read_buffer =
            !self.engine.caps.queued && self.spec.access.is_some_and(|a| a.reads() && a.writes());
        let split_latency = self.kinds.iter().any(|k| k.name == "read_submit");
        let state = WorkerState {
            pattern: Pattern::new(&self.spec, self.shared.clone()),
            filler: Filler::new(
                self.spec.effective_fill(),
                self.spec.block_size,
                thread as u64,
            )
            .verified(self.verify().map(|v| v.seal))
            .patterned(self.spec.pattern.clone()),
            names: self.table().cloned(),
            validate: self.spec.validate,
            block: self.spec.block_size,
            sync_each_write: self.spec.sync.each_write,
            end_fsync: self.spec.end_fsync(),
            num_files: self.spec.num_files,
            random: !self.spec.access.is_some_and(|a| a.is_sequential()),
            busy: self.busy.clone(),
            busy_base: thread * self.spec.depth(),
            figures: self.figures.clone(),
            placement: self.spec.placement.clone(),
            queue_low: self
                .spec
                .job
                .as_ref()
                .and_then(|j| j.queue_low)
                .filter(|_| self.engine.caps.queued)
                .map(|l| l as usize),
            batch: match self.spec.job.as_ref().and_then(|j| j.batch) {
                Some(b) => crate::worker::Batch::of(b, self.spec.depth()),
                None => crate::worker::Batch::one_in_all_out(self.spec.depth()),
            },
            log: self
                .spec
                .job
                .as_ref()
                .and_then(|j| j.log)
                .map(|l| crate::iolog::IoLog::new(l, split_latency, self.logs.clone())),
            trace: match self.spec.job.as_ref().and_then(|j| j.trace.as_ref()) {
                Some(t) => Some(Box::new(
                    crate::io_trace::IoTrace::open(t)
                        .map_err(|e| WorkloadError::new(e.to_string()))?,
                )),
                None => None,
            },
            verify: self.verify(),
            check_reads: self.verify().is_some() && !self.spec.access.is_some_and(|a| a.writes()),
            verify_failures: 0,
            serialize_overlap: self.spec.job.as_ref().is_some_and(|j| j.serialize_overlap),
            flow: self
                .spec
                .job
                .as_ref()
                .and_then(|j| j.flow.as_ref())
                .and_then(crate::flow::Gate::new),
            split_latency,
            first_verify_failure: None,
            think: self
                .spec
                .job
                .as_ref()
                .and_then(|j| j.think)
                .and_then(Thinker::new),
            cache: self
                .spec
                .job
                .as_ref()
                .filter(|j| j.invalidate || j.invalidate_on_wrap)
                .zip(self.table())
                .map(|(j, t)| crate::cache_drop::CacheDrop::new(t.clone(), &j.files)),
            trim: self
                .kinds
                .iter()
                .position(|k| k.name == "trim")
                .zip(self.counters().iter().position(|c| *c == BYTES_TRIMMED)),
            counts_depth: self.engine.caps.queued,
            writes_full: self.counters().iter().position(|c| *c == WRITES_FULL),
            tolerate: self.spec.job.as_ref().and_then(|j| j.tolerate.clone()),
            failed: [READS_FAILED, WRITES_FAILED, TRIMS_FAILED]
                .map(|n| self.counters().iter().position(|c| *c == n)),
            error_counted: false,
            // sysbench fails a short write; fio writes the rest.
            writes_short: self
                .spec
                .job
                .as_ref()
                .and(self.counters().iter().position(|c| *c == WRITES_SHORT)),
            fill_device: self.spec.job.as_ref().is_some_and(|j| j.fill_device),
            filled: false,
            min_rate: self
                .spec
                .job
                .as_ref()
                .and_then(|j| j.min_rate)
                .and_then(crate::min_rate::MinRateCheck::new),
            min_rate_round: None,
            max_latency: self
                .spec
                .job
                .as_ref()
                .and_then(|j| j.max_latency)
                .filter(|m| m.any()),
        };
        (self.engine.worker)(Setup {
            files: self.table().cloned(),
            bufs: self.buffers(usize::from(read_buffer))?,
            fsync: self.spec.sync.call,
            shared: self.engine_state.clone(),
            options: self.spec.engine_options.clone(),
            driver: Driver {
                state,
                submits_on_queue: self.engine.caps.submits_on_queue,
                submits_with_wait: self.engine.caps.submits_with_wait,
                read_buffer,
            },
        })
    }
}
