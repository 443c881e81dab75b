//! The fileio workload under the core harness.
//!
//! Operation kinds: read, write and fsync, each an event as in sysbench (so events/s and the
//! general latency mean what they mean there), each also reported on its own. With
//! `--file-fsync-all` the fsync belongs to its write's event: the write's latency covers
//! both, and the fsync alone is recorded as a non-event part.
//!
//! Two event loops, compiled per engine:
//! - blocking engines (sync, mmap, null): take a ticket, pick the operation, time it.
//! - queueing engines (io_uring, libaio): keep `--file-async-backlog` requests in flight; each
//!   request holds its own ticket and is timed from just before the system call that submits
//!   it to just after the one that collects its completion (sysbench times only the submit).
//!   A periodic fsync first waits for this thread's writes to that file still in flight, so
//!   it covers every write issued before it. With an open-loop `--rate`, the loop collects
//!   completions while it waits for the next intended start (latency then runs from the
//!   intended start, as for every open-loop event).
//!
//! The end-of-run fsync (`--file-fsync-end`) runs in `finish`: inside the measured time, as
//! sysbench counts it, but reported apart (count and wall time) instead of hiding in totals.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plumb_core::clock::Stamp;

use plumb_core::random::RandType;
use plumb_core::size::format_compact;
use plumb_core::{KindId, OpKind, Poll, Ticket, Worker, WorkerCtx, Workload, WorkloadError};
use plumb_observe::{meminfo, Roots};

use crate::engine::libaio::LibaioEngine;
use crate::engine::mmap::{Mappings, MmapEngine};
use crate::engine::null::NullEngine;
use crate::engine::recording::{Log, RecordingEngine};
use crate::engine::sync::SyncEngine;
use crate::engine::uring::{self, UringEngine};
use crate::engine::{Buffers, Dir, Engine, Errno, QueueEngine, Request};
use crate::error::FileioError;
use crate::fileset::open::{open_for_run, RunFiles};
use crate::fileset::FileTable;
use crate::fill::{check, Filler};
use crate::pattern::{Io, Op, Pattern, SharedStream};
use crate::spec::{AsyncEngine, FileioSpec, IoMode, TestMode};

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

/// Which engine the workers use.
#[derive(Clone)]
pub enum EngineChoice {
    Sync,
    Mmap,
    Null,
    IoUring,
    Libaio,
    /// Tests: record every operation; `queued` exercises the async loop; `fail_at` fails
    /// that completion (1-based) with EIO.
    Recording {
        log: Log,
        queued: bool,
        fail_at: Option<u64>,
    },
}

impl EngineChoice {
    pub fn name(&self) -> &'static str {
        match self {
            EngineChoice::Sync => "sync",
            EngineChoice::Mmap => "mmap",
            EngineChoice::Null => "null",
            EngineChoice::IoUring => "io_uring",
            EngineChoice::Libaio => "libaio",
            EngineChoice::Recording { .. } => "recording",
        }
    }
}

/// Request buffers are allocated up front (and pinned when io_uring registers them): refuse
/// a combination that would take more than half of the memory available now.
fn check_buffer_memory(spec: &FileioSpec) -> Result<(), FileioError> {
    let need = spec.depth() as u64 * spec.max_io() * spec.threads.max(1) as u64;
    let avail = meminfo::read(&Roots::default()).and_then(|m| meminfo::field(&m, "MemAvailable"));
    match avail {
        Some(a) if need > a / 2 => Err(FileioError::Other(format!(
            "request buffers would take {} ({} in flight per thread × {} bytes × {} threads), more than half of the {} of memory available: lower --file-async-backlog, --file-block-size or --file-merged-requests",
            format_compact(need),
            spec.depth(),
            spec.max_io(),
            spec.threads.max(1),
            format_compact(a)
        ))),
        _ => Ok(()),
    }
}

/// The engine for --file-io-mode=async: io_uring when it works here (`probe`), libaio when
/// it does not and the user left the choice to plumb (with the reason, for the report).
pub fn choose_async(
    pref: AsyncEngine,
    probe: impl FnOnce() -> std::io::Result<()>,
) -> Result<(EngineChoice, Option<String>), FileioError> {
    Ok(match pref {
        AsyncEngine::Libaio => (EngineChoice::Libaio, None),
        AsyncEngine::IoUring => match probe() {
            Ok(()) => (EngineChoice::IoUring, None),
            Err(e) => {
                return Err(FileioError::Other(format!(
                    "io_uring is not available here ({e}); use --file-async-engine=libaio"
                )))
            }
        },
        AsyncEngine::Auto => match probe() {
            Ok(()) => (EngineChoice::IoUring, None),
            Err(e) => (
                EngineChoice::Libaio,
                Some(format!(
                    "io_uring is not available here ({e}); using libaio"
                )),
            ),
        },
    })
}

/// Figures the workers leave for the report besides the core's.
#[derive(Default)]
pub struct Figures {
    /// Longest time one thread spent in its end-of-run fsyncs.
    pub end_fsync_wall_ns: AtomicU64,
    /// Whether io_uring rings used registered files and buffers (1 = yes), per kind.
    pub uring_fixed_files: AtomicU64,
    pub uring_fixed_bufs: AtomicU64,
}

pub struct FileioWorkload {
    spec: FileioSpec,
    kinds: &'static [OpKind],
    files: Option<RunFiles>,
    maps: Option<Arc<Mappings>>,
    shared: Arc<SharedStream>,
    rand: Option<RandType>,
    engine: EngineChoice,
    /// Why the engine differs from the one asked for (io_uring unavailable).
    pub fallback: Option<String>,
    pub figures: Arc<Figures>,
    busy: Option<Arc<Busy>>,
}

/// Blocks in use by requests, for --validate: a request never overlaps one in flight.
struct Busy {
    slots: Vec<AtomicU64>,
}

impl Busy {
    fn key(io: &Io) -> u64 {
        ((io.file as u64) << 44 | io.offset) + 1
    }
    fn taken(&self, me: usize, key: u64) -> bool {
        self.slots
            .iter()
            .enumerate()
            .any(|(i, s)| i != me && s.load(Relaxed) == key)
    }
    fn set(&self, me: usize, key: u64) {
        self.slots[me].store(key, Relaxed);
    }
}

impl FileioWorkload {
    /// Check `spec`, pick the engine and open the files. `rand`: the --rand-type given.
    pub fn open(spec: FileioSpec, rand: Option<RandType>) -> Result<FileioWorkload, FileioError> {
        spec.check_run()?;
        let mode = spec.mode.expect("checked");
        check_buffer_memory(&spec)?;
        let (engine, fallback) = match spec.io_mode {
            IoMode::Sync => (EngineChoice::Sync, None),
            IoMode::Mmap => (EngineChoice::Mmap, None),
            IoMode::Null => (EngineChoice::Null, None),
            IoMode::Async => choose_async(spec.async_engine, uring::probe)?,
        };
        let files = if engine.name() == "null" {
            None
        } else {
            Some(open_for_run(&spec)?)
        };
        let maps = match (&engine, &files) {
            (EngineChoice::Mmap, Some(f)) => {
                Some(Arc::new(Mappings::map(&f.table, spec.file_size())?))
            }
            _ => None,
        };
        let mut w = FileioWorkload::with_engine(spec, rand, engine);
        w.files = files;
        w.maps = maps;
        w.fallback = fallback;
        if w.spec.validate {
            w.check_validate_room(mode)?;
        }
        Ok(w)
    }

    /// A workload on an engine that needs no files (null, recording).
    pub fn with_engine(
        spec: FileioSpec,
        rand: Option<RandType>,
        engine: EngineChoice,
    ) -> FileioWorkload {
        let per_thread = spec.depth();
        let busy = spec.validate.then(|| {
            Arc::new(Busy {
                slots: (0..spec.threads.max(1) * per_thread)
                    .map(|_| AtomicU64::new(0))
                    .collect(),
            })
        });
        FileioWorkload {
            kinds: if spec.fsync_all {
                KINDS_FSYNC_ALL
            } else {
                KINDS
            },
            spec,
            files: None,
            maps: None,
            shared: SharedStream::new(),
            rand,
            engine,
            fallback: None,
            figures: Arc::default(),
            busy,
        }
    }

    fn check_validate_room(&self, mode: TestMode) -> Result<(), FileioError> {
        let geo = crate::pattern::Geometry::from_spec(&self.spec);
        let in_flight = (self.spec.threads.max(1) * self.spec.depth()) as u64;
        let room = if mode.is_sequential() {
            geo.seq_pass()
        } else {
            geo.blocks_per_file() * geo.num_files as u64
        };
        if room <= 2 * in_flight {
            return Err(FileioError::Other(format!(
                "--validate needs more blocks than requests in flight: {room} requests cover the file set, {in_flight} can be in flight (fewer --threads or --file-async-backlog, or larger files)"
            )));
        }
        Ok(())
    }

    pub fn spec(&self) -> &FileioSpec {
        &self.spec
    }
    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
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

    fn files(&self) -> Arc<FileTable> {
        self.files
            .as_ref()
            .expect("engine with files")
            .table
            .clone()
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
        let queued = self.spec.io_mode == IoMode::Async;
        // A blocking loop that both reads and writes reads into a buffer of its own, so its
        // writes keep the fill's bytes (see BlockingWorker).
        let mixed = self.spec.mode.is_some_and(|m| m.reads() && m.writes());
        let bufs = self.buffers(usize::from(mixed && !queued))?;
        let fsync = self.spec.fsync_mode;
        let state = WorkerState {
            pattern: Pattern::new(&self.spec, self.shared.clone(), self.rand),
            filler: Filler::new(
                self.spec.effective_fill(),
                self.spec.block_size,
                thread as u64,
            ),
            names: self.files.as_ref().map(|f| f.table.clone()),
            validate: self.spec.validate,
            block: self.spec.block_size,
            fsync_all: self.spec.fsync_all,
            end_fsync: self.spec.end_fsync(),
            num_files: self.spec.num_files,
            random: !self.spec.mode.is_some_and(TestMode::is_sequential),
            busy: self.busy.clone(),
            busy_base: thread * self.spec.depth(),
            figures: self.figures.clone(),
        };
        Ok(match &self.engine {
            EngineChoice::Sync => Box::new(BlockingWorker::new(
                SyncEngine::new(self.files(), bufs, fsync),
                state,
            )),
            EngineChoice::Mmap => Box::new(BlockingWorker::new(
                MmapEngine::new(self.maps.clone().expect("mapped"), bufs),
                state,
            )),
            EngineChoice::Null if queued => {
                Box::new(QueueWorker::new(NullEngine::new(bufs), state))
            }
            EngineChoice::Null => Box::new(BlockingWorker::new(NullEngine::new(bufs), state)),
            EngineChoice::IoUring => Box::new(QueueWorker::new(
                UringEngine::new(self.files(), bufs, fsync),
                state,
            )),
            EngineChoice::Libaio => Box::new(QueueWorker::new(
                LibaioEngine::new(self.files(), bufs, fsync).map_err(WorkloadError::new)?,
                state,
            )),
            EngineChoice::Recording {
                log,
                queued: true,
                fail_at,
            } => Box::new(QueueWorker::new(
                RecordingEngine::new(bufs, log.clone()).failing_at(*fail_at),
                state,
            )),
            EngineChoice::Recording { log, .. } => Box::new(BlockingWorker::new(
                RecordingEngine::new(bufs, log.clone()),
                state,
            )),
        })
    }
}

/// What both loops share.
struct WorkerState {
    pattern: Pattern,
    filler: Filler,
    names: Option<Arc<FileTable>>,
    validate: bool,
    block: u64,
    fsync_all: bool,
    end_fsync: bool,
    num_files: u32,
    random: bool,
    busy: Option<Arc<Busy>>,
    busy_base: usize,
    figures: Arc<Figures>,
}

impl WorkerState {
    fn name(&self, file: u32) -> String {
        match &self.names {
            Some(t) => t.dir().join(t.name(file)).display().to_string(),
            None => crate::fileset::file_name(file),
        }
    }

    fn fail(&self, what: &str, io: &Io, e: Errno) -> WorkloadError {
        WorkloadError::new(format!(
            "{what} {} at offset {} ({} bytes): {e}",
            self.name(io.file),
            io.offset,
            io.len
        ))
    }

    fn short(&self, dir: Dir, io: &Io, got: u64) -> WorkloadError {
        WorkloadError::new(match dir {
            Dir::Read => format!(
                "short read from {} at offset {}: {got} of {} bytes (was the file truncated while the test ran?)",
                self.name(io.file),
                io.offset,
                io.len
            ),
            Dir::Write => format!(
                "short write to {} at offset {}: {got} of {} bytes (disk full?)",
                self.name(io.file),
                io.offset,
                io.len
            ),
        })
    }

    fn sync_failed(&self, file: u32, e: Errno) -> WorkloadError {
        WorkloadError::new(format!("sync of {}: {e}", self.name(file)))
    }

    /// For --validate: move a random request off blocks other requests hold.
    fn claim(&mut self, slot: usize, io: &mut Io, rng: &mut plumb_core::random::Rng) {
        let Some(b) = self.busy.as_ref() else { return };
        let me = self.busy_base + slot;
        if self.random {
            while b.taken(me, Busy::key(io)) {
                *io = self.pattern.random_io(rng);
            }
        }
        b.set(me, Busy::key(io));
    }

    fn validate_read(&self, buf: &[u8], io: &Io) -> Result<(), WorkloadError> {
        check(&buf[..io.len as usize], io.offset, self.block).map_err(|e| {
            WorkloadError::new(format!("validation failed in {}: {e}", self.name(io.file)))
        })
    }

    fn end_fsync<E: Engine>(
        &self,
        engine: &mut E,
        ctx: &mut WorkerCtx<'_>,
    ) -> Result<(), WorkloadError> {
        if !self.end_fsync {
            return Ok(());
        }
        let t0 = Instant::now();
        for f in 0..self.num_files {
            engine.sync(f).map_err(|e| self.sync_failed(f, e))?;
        }
        let ns = t0.elapsed().as_nanos() as u64;
        ctx.add(END_FSYNCS, self.num_files as u64);
        self.figures.end_fsync_wall_ns.fetch_max(ns, Relaxed);
        Ok(())
    }
}

/// The loop for engines whose calls block until done. Writes use buffer 0; reads use the
/// last buffer, which is a separate one in modes that both read and write: a read into the
/// write buffer would make the next write carry the file's old bytes instead of the fill's
/// (zeros for --file-fill=zero, fresh random data otherwise).
struct BlockingWorker<E: Engine> {
    engine: E,
    s: WorkerState,
    read_slot: usize,
}

impl<E: Engine> BlockingWorker<E> {
    fn new(engine: E, s: WorkerState) -> Self {
        BlockingWorker {
            read_slot: engine.slots().saturating_sub(1),
            engine,
            s,
        }
    }
}

impl<E: Engine> Worker for BlockingWorker<E> {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.s.filler.init(self.engine.buffer(0), &mut ctx.rng);
        while let Some(t) = ctx.next_event() {
            match self.s.pattern.next(&mut ctx.rng) {
                Op::Read(mut io) => {
                    self.s.claim(0, &mut io, &mut ctx.rng);
                    let req = Request { dir: Dir::Read, io };
                    let start = Stamp::now();
                    let r = self.engine.execute(self.read_slot, req);
                    let end = Stamp::now();
                    let n = r.map_err(|e| self.s.fail("read from", &io, e))?;
                    if n != io.len as usize {
                        return Err(self.s.short(Dir::Read, &io, n as u64));
                    }
                    ctx.record(READ, t, start, end);
                    ctx.add(BYTES_READ, n as u64);
                    if self.s.validate {
                        self.s
                            .validate_read(self.engine.buffer(self.read_slot), &io)?;
                    }
                }
                Op::Write(mut io) => {
                    self.s.claim(0, &mut io, &mut ctx.rng);
                    let buf = self.engine.buffer(0);
                    self.s
                        .filler
                        .prepare(&mut buf[..io.len as usize], io.offset);
                    let req = Request {
                        dir: Dir::Write,
                        io,
                    };
                    let start = Stamp::now();
                    let r = self.engine.execute(0, req);
                    let mut end = Stamp::now();
                    let n = r.map_err(|e| self.s.fail("write to", &io, e))?;
                    if n != io.len as usize {
                        return Err(self.s.short(Dir::Write, &io, n as u64));
                    }
                    if self.s.fsync_all {
                        let f0 = end;
                        self.engine
                            .sync(io.file)
                            .map_err(|e| self.s.sync_failed(io.file, e))?;
                        end = Stamp::now();
                        ctx.record(FSYNC, Ticket::inner(), f0, end);
                    }
                    ctx.record(WRITE, t, start, end);
                    ctx.add(BYTES_WRITTEN, n as u64);
                }
                Op::Fsync(file) => {
                    let start = Stamp::now();
                    let r = self.engine.sync(file);
                    let end = Stamp::now();
                    r.map_err(|e| self.s.sync_failed(file, e))?;
                    ctx.record(FSYNC, t, start, end);
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.s.end_fsync(&mut self.engine, ctx)
    }
}

#[derive(Clone, Copy)]
struct InFlight {
    ticket: Ticket,
    start: Stamp,
    dir: Dir,
    io: Io,
}

/// The loop for engines that keep requests in flight.
struct QueueWorker<E: QueueEngine> {
    engine: E,
    s: WorkerState,
    slots: Vec<Option<InFlight>>,
    free: Vec<usize>,
    /// Queued since the last submission; their start is stamped at submission.
    fresh: Vec<usize>,
    done: Vec<(usize, i64)>,
    /// This thread's writes in flight, per file (a fsync waits for them).
    writes_in_flight: Vec<u32>,
    /// Slots whose buffer holds what a read brought in: refilled before they carry a write.
    read_into: Vec<bool>,
    in_flight: usize,
    started: bool,
}

impl<E: QueueEngine> QueueWorker<E> {
    fn new(engine: E, s: WorkerState) -> Self {
        let n = engine.slots();
        QueueWorker {
            read_into: vec![false; n],
            slots: vec![None; n],
            free: (0..n).rev().collect(),
            fresh: Vec::with_capacity(n),
            done: Vec::with_capacity(n),
            writes_in_flight: vec![0; s.num_files as usize],
            in_flight: 0,
            started: false,
            engine,
            s,
        }
    }

    /// Submit what is queued and handle at least `min` completions, or what completed by
    /// `until` when it is given.
    fn complete(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        min: usize,
        until: Option<Instant>,
    ) -> Result<(), WorkloadError> {
        let now = Stamp::now();
        for &slot in &self.fresh {
            if let Some(f) = self.slots[slot].as_mut() {
                f.start = now;
            }
        }
        self.fresh.clear();
        let done = &mut self.done;
        match until {
            None => self.engine.reap(min, |slot, res| done.push((slot, res))),
            Some(d) => self
                .engine
                .reap_until(min, d, |slot, res| done.push((slot, res))),
        }
        .map_err(|e| WorkloadError::new(e.to_string()))?;
        let end = Stamp::now();
        // Every completion is accounted for (slot freed, in-flight counts lowered) even after
        // an error, so draining afterwards waits only for requests really in flight.
        let mut first_error = None;
        for i in 0..self.done.len() {
            let (slot, res) = self.done[i];
            let Some(f) = self.slots[slot].take() else {
                first_error
                    .get_or_insert(WorkloadError::new("completion for an idle request slot"));
                continue;
            };
            self.free.push(slot);
            self.in_flight -= 1;
            if f.dir == Dir::Write {
                self.writes_in_flight[f.io.file as usize] -= 1;
            }
            if first_error.is_some() {
                continue;
            }
            if let Err(e) = self.finish_request(ctx, slot, res, &f, end) {
                first_error = Some(e);
            }
        }
        self.done.clear();
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Check and record one completed request.
    fn finish_request(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        slot: usize,
        res: i64,
        f: &InFlight,
        end: Stamp,
    ) -> Result<(), WorkloadError> {
        let (kind, counter, what) = match f.dir {
            Dir::Read => (READ, BYTES_READ, "read from"),
            Dir::Write => (WRITE, BYTES_WRITTEN, "write to"),
        };
        if res < 0 {
            let call = if self.engine.name() == "libaio" {
                "libaio request"
            } else {
                "io_uring request"
            };
            return Err(self.s.fail(
                what,
                &f.io,
                Errno {
                    call,
                    errno: -res as i32,
                },
            ));
        }
        if res as u64 != f.io.len as u64 {
            return Err(self.s.short(f.dir, &f.io, res as u64));
        }
        if f.dir == Dir::Read && self.s.validate {
            self.s.validate_read(self.engine.buffer(slot), &f.io)?;
        }
        if f.dir == Dir::Write && self.s.fsync_all {
            let f0 = Stamp::now();
            self.engine
                .sync(f.io.file)
                .map_err(|e| self.s.sync_failed(f.io.file, e))?;
            let f1 = Stamp::now();
            ctx.record(FSYNC, Ticket::inner(), f0, f1);
            ctx.record(kind, f.ticket, f.start, f1);
        } else {
            ctx.record(kind, f.ticket, f.start, end);
        }
        ctx.add(counter, res as u64);
        Ok(())
    }

    fn drain(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        while self.in_flight > 0 {
            let before = self.in_flight;
            self.complete(ctx, 1, None)?;
            if self.in_flight == before {
                return Err(WorkloadError::new(format!(
                    "{} requests never completed",
                    self.in_flight
                )));
            }
        }
        Ok(())
    }

    fn start(&mut self) -> Result<(), WorkloadError> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        // io_uring rings are built on the thread that submits to them.
        self.engine
            .start()
            .map_err(|e| WorkloadError::new(e.to_string()))?;
        if let Some((files, bufs)) = self.engine.registered() {
            self.s
                .figures
                .uring_fixed_files
                .store(files as u64, Relaxed);
            self.s.figures.uring_fixed_bufs.store(bufs as u64, Relaxed);
        }
        Ok(())
    }
}

impl<E: QueueEngine + 'static> Worker for QueueWorker<E> {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.start()?;
        for slot in 0..self.engine.slots() {
            self.s.filler.init(self.engine.buffer(slot), &mut ctx.rng);
        }
        let res = self.run_loop(ctx);
        // Whatever happened, nothing may stay in flight once the worker returns.
        let drained = self.drain(ctx);
        res.and(drained)
    }

    fn finish(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.drain(ctx)?;
        self.s.end_fsync(&mut self.engine, ctx)
    }
}

impl<E: QueueEngine + 'static> QueueWorker<E> {
    fn run_loop(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        let mut stop = false;
        loop {
            // Open loop: when the next event is not due yet, wait for completions until it is.
            let mut due = None;
            while !stop && !self.free.is_empty() {
                let t = match ctx.poll_event() {
                    Poll::Ready(t) => t,
                    Poll::NotBefore(at) if self.in_flight > 0 => {
                        // Wake a little early and poll the rest: a timed kernel wait
                        // overshoots by the timer slack (~50 µs), as the core's pacing knows.
                        due = Some(
                            Instant::now() + at.until().saturating_sub(Duration::from_micros(60)),
                        );
                        break;
                    }
                    // Nothing in flight to collect: wait for the schedule itself.
                    Poll::NotBefore(_) => match ctx.next_event() {
                        Some(t) => t,
                        None => {
                            stop = true;
                            break;
                        }
                    },
                    Poll::Stop => {
                        stop = true;
                        break;
                    }
                };
                match self.s.pattern.next(&mut ctx.rng) {
                    Op::Fsync(file) => {
                        while self.writes_in_flight[file as usize] > 0 {
                            self.complete(ctx, 1, None)?;
                        }
                        let start = Stamp::now();
                        let r = self.engine.sync(file);
                        let end = Stamp::now();
                        r.map_err(|e| self.s.sync_failed(file, e))?;
                        ctx.record(FSYNC, t, start, end);
                    }
                    Op::Read(io) => self.queue(ctx, t, Dir::Read, io)?,
                    Op::Write(io) => self.queue(ctx, t, Dir::Write, io)?,
                }
            }
            if self.in_flight == 0 {
                if stop {
                    return Ok(());
                }
                continue;
            }
            self.complete(ctx, 1, due)?;
        }
    }

    #[inline]
    fn queue(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        ticket: Ticket,
        dir: Dir,
        mut io: Io,
    ) -> Result<(), WorkloadError> {
        let slot = self.free.pop().expect("a free slot");
        self.s.claim(slot, &mut io, &mut ctx.rng);
        if dir == Dir::Write {
            let buf = self.engine.buffer(slot);
            if self.read_into[slot] {
                self.s.filler.reset(buf, &mut ctx.rng);
            }
            self.s
                .filler
                .prepare(&mut buf[..io.len as usize], io.offset);
            self.writes_in_flight[io.file as usize] += 1;
        }
        self.read_into[slot] = dir == Dir::Read;
        self.slots[slot] = Some(InFlight {
            ticket,
            start: Stamp::now(),
            dir,
            io,
        });
        self.in_flight += 1;
        if !self.engine.submits_on_queue() {
            self.fresh.push(slot);
        }
        self.engine
            .queue(slot, Request { dir, io })
            .map_err(|e| self.s.fail("queueing a request for", &io, e))
    }
}

/// For tests: the operations a recording engine saw.
pub fn recording_log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> std::io::Result<()> {
        Err(std::io::Error::from_raw_os_error(libc::EPERM))
    }

    #[test]
    fn async_falls_back_to_libaio_only_when_allowed() {
        let (e, note) = choose_async(AsyncEngine::Auto, refused).unwrap();
        assert_eq!(e.name(), "libaio");
        assert!(note.unwrap().contains("io_uring is not available"));
        let (e, note) = choose_async(AsyncEngine::Auto, || Ok(())).unwrap();
        assert_eq!((e.name(), note), ("io_uring", None));
        let err = choose_async(AsyncEngine::IoUring, refused).err().unwrap();
        assert!(err.to_string().contains("--file-async-engine=libaio"));
        assert_eq!(
            choose_async(AsyncEngine::Libaio, refused).unwrap().0.name(),
            "libaio"
        );
    }
}
