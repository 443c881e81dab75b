//! The fileio workload under the core harness.
//!
//! Operation kinds: read, write and fsync, each an event as in sysbench (so events/s and the
//! general latency mean what they mean there), each also reported on its own. When every
//! write is synced the fsync belongs to its write's event: the write's latency covers both,
//! and the fsync alone is recorded as a non-event part.
//!
//! The engine comes from the registry ([`crate::engine::ENGINES`]); every engine runs in the
//! one worker loop of [`crate::worker`].
//!
//! The end-of-run fsync runs in `finish`: inside the measured time, as sysbench counts it,
//! but reported apart (count and wall time) instead of hiding in totals.

use std::sync::atomic::AtomicU64;
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
use crate::worker::{Busy, Driver, Setup, WorkerState};

pub const READ: KindId = 0;
pub const WRITE: KindId = 1;
pub const FSYNC: KindId = 2;

pub const BYTES_READ: usize = 0;
pub const BYTES_WRITTEN: usize = 1;
pub const END_FSYNCS: usize = 2;
pub const COUNTERS: &[&str] = &["bytes_read", "bytes_written", "end_fsyncs"];

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
    /// Whether the engine registered files and buffers with the kernel (1 = yes), for
    /// engines that register ([`crate::engine::Caps::registers`]).
    pub registered_files: AtomicU64,
    pub registered_bufs: AtomicU64,
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
            Some(open_for_run(&spec)?)
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
        FileioWorkload {
            kinds: if spec.sync.each_write {
                KINDS_FSYNC_ALL
            } else {
                KINDS
            },
            engine: spec.engine,
            spec,
            files: None,
            shared: SharedStream::new(),
            engine_state: state,
            figures: Arc::default(),
            busy,
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
        Buffers::new(
            self.spec.depth() + extra,
            self.spec.max_io() as usize,
            align,
        )
        .map_err(WorkloadError::new)
    }
}

impl Workload for FileioWorkload {
    fn kinds(&self) -> &[OpKind] {
        self.kinds
    }
    fn counters(&self) -> &[&'static str] {
        COUNTERS
    }
    fn worker(&self, thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        // A blocking engine that both reads and writes reads into a buffer of its own.
        let read_buffer =
            !self.engine.caps.queued && self.spec.access.is_some_and(|a| a.reads() && a.writes());
        let state = WorkerState {
            pattern: Pattern::new(&self.spec, self.shared.clone()),
            filler: Filler::new(
                self.spec.effective_fill(),
                self.spec.block_size,
                thread as u64,
            ),
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
                read_buffer,
            },
        })
    }
}
