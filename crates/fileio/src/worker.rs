//! The one worker loop, for every engine.
//!
//! Each thread takes a ticket, asks the pattern for the next operation and hands it to its
//! engine. A request that completes inside its submission (blocking engines) is timed
//! around that call and recorded at once. A queued request holds its own ticket and slot
//! and is timed from when it is queued to just after the call that collects its completion
//! (sysbench times only the submit), with its submission ending when the call that submits
//! it returns. The loop keeps queueing while slots are free, handing the queue to the
//! kernel in batches ([`Batch`]), then collects. A periodic fsync first waits for this thread's
//! writes to that file still in flight, so it covers every write issued before it. With an
//! open-loop rate, the loop collects completions while it waits for the next intended start
//! (latency then runs from the intended start, as for every open-loop event).
//!
//! A trim completes inside its submission on every engine (fio's engines all trim
//! synchronously); on an engine that says so ([`Engine::trim_waits_for_queue`]) it first
//! waits for every request in flight.
//!
//! With think time ([`crate::think`]), the loop checks after each read or write it issues
//! and after each collection whether a stall is due; it then collects everything in flight
//! and stalls before it asks for the next event.
//!
//! The loop is generic over the engine, so each engine gets its own compiled copy and a
//! request costs no dynamic dispatch.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plumb_core::clock::Stamp;
use plumb_core::{Poll, Ticket, Worker, WorkerCtx, WorkloadError};

use crate::engine::{Buffers, Dir, Engine, EngineOptions, Errno, Request, Shared, Submitted};
use crate::error::{is_full, FailedRequest};
use crate::fileset::FileTable;
use crate::fill::{check, Filler};
use crate::min_rate::MinRateCheck;
use crate::pattern::{Io, Op, Pattern};
use crate::spec::FsyncMode;
use crate::think::Thinker;
use crate::workload::{
    batch_bucket, depth_bucket, Figures, BYTES_READ, BYTES_WRITTEN, DEPTH, END_FSYNCS, FSYNC, READ,
    READ_COMPLETE, READ_SUBMIT, REAP, SUBMIT, WRITE, WRITE_COMPLETE, WRITE_SUBMIT,
};

/// What an engine's `worker` function gets to build one thread's engine.
pub struct Setup {
    /// The run's open files (engines that need files only).
    pub files: Option<Arc<FileTable>>,
    /// This thread's request buffers, one per slot.
    pub bufs: Buffers,
    pub fsync: FsyncMode,
    /// What the engine's threads share ([`crate::engine::EngineDef::share`]).
    pub shared: Option<Shared>,
    /// The engine options the job sets.
    pub options: EngineOptions,
    /// Runs the engine once it is built.
    pub driver: Driver,
}

impl Setup {
    /// The open files, for engines that need them.
    pub fn files(&self) -> Result<Arc<FileTable>, WorkloadError> {
        self.files
            .clone()
            .ok_or_else(|| WorkloadError::new("this engine needs the file set, none is open"))
    }
}

/// The worker loop, waiting for its engine.
pub struct Driver {
    pub(crate) state: WorkerState,
    pub(crate) submits_on_queue: bool,
    pub(crate) submits_with_wait: bool,
    /// The last buffer is kept for reads (a blocking engine in a mode that both reads and
    /// writes): a write never carries what a read left in its buffer, at no cost per request.
    pub(crate) read_buffer: bool,
}

impl Driver {
    /// The thread's worker: `engine` driven by the common loop.
    pub fn drive<E: Engine>(self, engine: E) -> Box<dyn Worker> {
        Box::new(IoWorker::new(engine, self))
    }
}

/// Blocks in use by requests, for validation: a request never overlaps one in flight.
pub(crate) struct Busy {
    pub(crate) slots: Vec<AtomicU64>,
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

/// How many requests go to the kernel at once and come back per collection, resolved from
/// [`crate::spec::QueueBatch`] and the queue depth.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Batch {
    /// Queued requests are flushed once this many wait.
    pub(crate) submit: usize,
    /// Completions waited for per collection; 0: poll, spinning until one is there.
    pub(crate) reap_min: usize,
    /// Completions taken per collection at most.
    pub(crate) reap_max: usize,
    /// Collect after every request queued.
    pub(crate) poll_each: bool,
}

impl Batch {
    /// plumb's own default, and sysbench's: one request per submission, every completion
    /// there taken at once.
    pub(crate) fn one_in_all_out(depth: usize) -> Batch {
        Batch {
            submit: 1,
            reap_min: 1,
            reap_max: depth.max(1),
            poll_each: false,
        }
    }
    /// A job's batching as fio resolves it: a submit batch of 0 or above the depth is the
    /// depth; the completion maximum is at least the minimum.
    pub(crate) fn of(b: crate::spec::QueueBatch, depth: usize) -> Batch {
        let depth = depth.max(1);
        let submit = match b.submit as usize {
            0 => depth,
            n => n.min(depth),
        };
        Batch {
            submit,
            reap_min: b.reap_min as usize,
            reap_max: (b.reap_max.max(b.reap_min) as usize).clamp(1, depth),
            poll_each: b.poll_each,
        }
    }
}

/// Everything a thread's loop needs besides its engine.
pub(crate) struct WorkerState {
    pub(crate) pattern: Pattern,
    pub(crate) filler: Filler,
    pub(crate) names: Option<Arc<FileTable>>,
    pub(crate) validate: bool,
    pub(crate) block: u64,
    pub(crate) sync_each_write: bool,
    pub(crate) end_fsync: bool,
    pub(crate) num_files: u32,
    pub(crate) random: bool,
    pub(crate) busy: Option<Arc<Busy>>,
    pub(crate) busy_base: usize,
    pub(crate) figures: Arc<Figures>,
    pub(crate) placement: crate::placement::Placement,
    /// Refill the queue only when it has drained to this many (engines that queue).
    pub(crate) queue_low: Option<usize>,
    /// Submission and completion batches (engines that queue).
    pub(crate) batch: Batch,
    pub(crate) log: Option<crate::iolog::IoLog>,
    /// fio's write_iolog: each request logged as it is issued.
    pub(crate) trace: Option<Box<crate::io_trace::IoTrace>>,
    /// How written requests were sealed, for the reads that check them (fio's verify).
    pub(crate) verify: Option<crate::spec::VerifySpec>,
    /// Every read is checked, not only the read-backs ([`Op::ReadBack`]): a verifying job
    /// that does not write (fio checks every read of a job that does not both read and
    /// write).
    pub(crate) check_reads: bool,
    pub(crate) verify_failures: u64,
    /// A request waits for the requests in flight it overlaps (fio's serialize_overlap).
    pub(crate) serialize_overlap: bool,
    /// The job's gate into its flow (fio's `flow`).
    pub(crate) flow: Option<crate::flow::Gate>,
    /// Record submission and completion apart ([`crate::workload::READ_SUBMIT`]).
    pub(crate) split_latency: bool,
    pub(crate) first_verify_failure: Option<String>,
    pub(crate) think: Option<Thinker>,
    /// Drops the cached pages of a file when the walk asks ([`Op::DropCache`]).
    pub(crate) cache: Option<crate::cache_drop::CacheDrop>,
    /// The trim kind and its byte counter, for jobs that trim.
    pub(crate) trim: Option<(plumb_core::KindId, usize)>,
    /// The engine queues, so the depth, submit and reap counters exist.
    pub(crate) counts_depth: bool,
    /// The counter of writes that found the disk full ([`crate::workload::WRITES_FULL`]).
    pub(crate) writes_full: Option<usize>,
    /// The errors the job goes on after, when it tolerates some (fio's continue_on_error),
    /// the counters of the requests they failed (reads, writes, trims), and whether the
    /// error that stops the job was counted (once, as fio counts it).
    pub(crate) tolerate: Option<crate::tolerate::Tolerate>,
    pub(crate) failed: [Option<usize>; 3],
    pub(crate) error_counted: bool,
    /// The counter of writes cut short, whose rest is written by a request of its own
    /// ([`crate::workload::WRITES_SHORT`]; fio's jobs). None: a short write fails the job.
    pub(crate) writes_short: Option<usize>,
    /// ENOSPC on a write ends the job cleanly (fio's fill_device) ...
    pub(crate) fill_device: bool,
    /// ... and it came (with or without fill_device: no more requests are issued).
    pub(crate) filled: bool,
    /// The minimum rates the job must keep, and the walk's round at the latest completion
    /// (a new round settles again).
    pub(crate) min_rate: Option<MinRateCheck>,
    pub(crate) min_rate_round: Option<u64>,
    pub(crate) max_latency: Option<crate::max_latency::MaxLatency>,
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
            Dir::Trim => format!(
                "short trim of {} at offset {}: {got} of {} bytes",
                self.name(io.file),
                io.offset,
                io.len
            ),
            Dir::Read => format!(
                "short read from {} at offset {}: {got} of {} bytes (was the file truncated while the test ran?)",
                self.name(io.file),
                io.offset,
                io.len
            ),
            Dir::Write => {
                let name = self.name(io.file);
                // A write stops short where the disk fills: say so when it has.
                let why = if no_space_left(&name) {
                    ": No space left on device"
                } else {
                    " (disk full?)"
                };
                format!(
                    "short write to {name} at offset {}: {got} of {} bytes{why}",
                    io.offset, io.len
                )
            }
        })
    }

    /// A read that failed its check: the job fails now (verify_fatal) or at its end, the
    /// bad chunk dumped first when asked (verify_dump).
    #[cold]
    #[inline(never)]
    fn verify_failed(
        &mut self,
        buf: &[u8],
        io: &Io,
        bad: crate::verify::Bad,
    ) -> Result<(), WorkloadError> {
        if self.tolerate.is_some() && self.counted_error(Dir::Read, libc::EILSEQ) {
            return Ok(());
        }
        let v = self.verify.as_ref().expect("checked reads verify");
        let name = self.name(io.file);
        let mut msg = format!("{} in {name}", bad.error);
        if v.dump {
            let done = crate::verify::dump(&v.seal, &name, buf, io.offset, &bad);
            msg = format!("{msg} ({})", done.join(", "));
        }
        if v.fatal {
            return Err(WorkloadError::new(msg));
        }
        self.verify_failures += 1;
        self.first_verify_failure.get_or_insert(msg);
        Ok(())
    }

    /// An error of a job that tolerates some: counted, and whether the job goes on after
    /// it (the request then counts as failed). The error that stops the job is counted
    /// once.
    #[cold]
    #[inline(never)]
    fn counted_error(&mut self, dir: Dir, errno: i32) -> bool {
        let Some(t) = &self.tolerate else {
            return false;
        };
        let goes_on = t.allows(dir, errno);
        if goes_on || (t.counts(dir, errno) && !self.error_counted) {
            self.figures.errors.add(errno);
            self.error_counted |= !goes_on;
        }
        goes_on
    }

    /// A request the engine would not take: counted as fio counts a failed submission, and
    /// the job stops (even for an error it would go on after once a request completed
    /// with it: plumb has no request to count).
    #[cold]
    fn queue_failed(&mut self, dir: Dir, io: &Io, e: Errno) -> WorkloadError {
        self.counted_error(dir, e.errno);
        self.fail("queueing a request for", io, e)
    }

    /// A trim that fails because the file is not a block device: say what trims a file.
    fn trim_hint(&self, err: WorkloadError, dir: Dir, e: Errno) -> WorkloadError {
        if dir == Dir::Trim && e.call == "BLKDISCARD" && e.errno == libc::ENOTTY {
            return WorkloadError::new(format!(
                "{err} (BLKDISCARD trims block devices only, as fio's trims do; fio's falloc engine punches holes in a regular file)"
            ));
        }
        err
    }

    /// A failed request, kept for the front end's report.
    #[cold]
    fn keep_failed(&self, dir: Dir, io: &Io, errno: i32) {
        let w = FailedRequest {
            dir,
            file: io.file,
            path: self.name(io.file),
            offset: io.offset,
            len: io.len as u64,
            errno,
        };
        self.figures
            .failed_requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(w);
    }

    /// A request whose call failed: counted as issued and kept for the front end, as fio
    /// reports every failed request, and the job stops.
    #[cold]
    #[inline(never)]
    fn request_failed(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        dir: Dir,
        io: &Io,
        what: &str,
        e: Errno,
    ) -> WorkloadError {
        if let Some(c) = self.failed[dir as usize] {
            ctx.add(c, 1);
        }
        self.keep_failed(dir, io, e.errno);
        self.trim_hint(self.fail(what, io, e), dir, e)
    }

    fn sync_failed(&self, file: u32, e: Errno) -> WorkloadError {
        WorkloadError::new(format!("sync of {}: {e}", self.name(file)))
    }

    /// For validation: move a random request off blocks other requests hold.
    #[inline(always)]
    fn claim(&mut self, slot: usize, io: &mut Io, rng: &mut plumb_core::random::Rng) {
        if self.busy.is_some() {
            self.claim_busy(slot, io, rng);
        }
    }

    /// Validation's share of [`WorkerState::claim`]: a block another request holds is drawn
    /// again.
    #[cold]
    fn claim_busy(&mut self, slot: usize, io: &mut Io, rng: &mut plumb_core::random::Rng) {
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

    /// fio's write_iolog: the files the walk found done, then `op`.
    #[cold]
    fn trace_op(&mut self, op: &Op) {
        if let Some(t) = self.trace.as_mut() {
            if let Some(done) = self.pattern.take_closed() {
                t.closed(done);
            }
            t.op(op);
        }
    }

    #[cold]
    fn drop_cache(&self, file: u32, from: Option<u64>) {
        if let Some(c) = &self.cache {
            c.drop_file(file, from);
        }
    }

    /// Hold a completed request to the job's maximum latency: the first one over it fails
    /// the job (once: the check is gone after it).
    #[cold]
    fn check_max_latency(
        &mut self,
        measured_from: Stamp,
        f: &InFlight,
        end: Stamp,
    ) -> Result<(), WorkloadError> {
        let dir = f.dir as usize;
        let Some(max) = self.max_latency.and_then(|m| m.of(dir)) else {
            return Ok(());
        };
        let latency = end.ns_since(f.start);
        if end < measured_from || latency <= max {
            return Ok(());
        }
        self.max_latency = None;
        let e = crate::max_latency::Exceeded {
            latency_ns: latency,
            max_ns: max,
            file: f.io.file,
            path: self.name(f.io.file),
            dir,
            offset: f.io.offset,
            len: f.io.len as u64,
        };
        let text = e.to_string();
        self.figures
            .max_latency_exceeded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
        Err(WorkloadError::new(text))
    }

    /// Count a completed request towards the minimum rates and check them; the job fails
    /// when a direction is short (once: the check is gone after it).
    #[cold]
    fn check_min_rate(
        &mut self,
        measured_from: Stamp,
        dir: Dir,
        bytes: u64,
        end: Stamp,
    ) -> Result<(), WorkloadError> {
        let (round, reading_back) = self.pattern.phase();
        let new_round = self
            .min_rate_round
            .replace(round)
            .is_some_and(|r| r != round);
        let Some(m) = self.min_rate.as_mut() else {
            return Ok(());
        };
        if end < measured_from || reading_back {
            return Ok(());
        }
        if !m.started() {
            m.restart(measured_from);
        } else if new_round {
            m.restart(end);
        }
        let misses = m.completed(dir as usize, bytes, end);
        if misses.is_empty() {
            return Ok(());
        }
        // The job ends here: the completions still to come are not checked again.
        self.min_rate = None;
        let text: Vec<String> = misses.iter().map(ToString::to_string).collect();
        self.figures
            .min_rate_misses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(misses);
        Err(WorkloadError::new(text.join("; ")))
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

/// Whether the filesystem holding `path` has no space left for this user.
#[cold]
fn no_space_left(path: &str) -> bool {
    crate::fileset::available_bytes(std::path::Path::new(path)) == Some(0)
}

#[derive(Clone, Copy)]
struct InFlight {
    ticket: Ticket,
    start: Stamp,
    /// When the call that submitted it returned (engines that submit on queueing).
    submitted: Stamp,
    dir: Dir,
    /// A read whose data is checked against its verify header.
    check: bool,
    io: Io,
}

struct IoWorker<E: Engine> {
    engine: E,
    s: WorkerState,
    submits_on_queue: bool,
    submits_with_wait: bool,
    slots: Vec<Option<InFlight>>,
    free: Vec<usize>,
    /// Queued but not yet handed to the kernel.
    fresh: Vec<usize>,
    done: Vec<(usize, i64)>,
    /// This thread's writes in flight, per file (a fsync waits for them).
    writes_in_flight: Vec<u32>,
    /// The buffer reads use when they have their own (see [`Driver::read_buffer`]).
    read_slot: Option<usize>,
    /// Slots whose buffer holds what a read brought in: refilled before they carry a write
    /// (engines that keep requests in flight share their buffers between reads and writes).
    read_into: Vec<bool>,
    in_flight: usize,
    started: bool,
    /// Requests are timed end to end (see [`Engine::COMPLETES_INLINE`]): set for the run
    /// when the engine completes inline and nothing waits between requests (no schedule, no
    /// think time).
    chain: bool,
    /// The end of the last request, when it is the start of the next: cleared by anything
    /// else the loop times (a fsync, a cache drop).
    chained: Option<Stamp>,
}

impl<E: Engine> IoWorker<E> {
    fn new(engine: E, d: Driver) -> Self {
        let n = engine.slots();
        let read_slot = (d.read_buffer && n > 1).then(|| n - 1);
        IoWorker {
            slots: vec![None; n],
            free: (0..read_slot.unwrap_or(n)).rev().collect(),
            read_slot,
            read_into: vec![false; n],
            fresh: Vec::with_capacity(n),
            done: Vec::with_capacity(n),
            writes_in_flight: vec![0; d.state.num_files as usize],
            in_flight: 0,
            started: false,
            chain: false,
            chained: None,
            submits_on_queue: d.submits_on_queue,
            submits_with_wait: d.submits_with_wait,
            engine,
            s: d.state,
        }
    }

    fn start(&mut self) -> Result<(), WorkloadError> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        if !self.s.placement.is_default() {
            self.s.placement.apply().map_err(|e| {
                WorkloadError::new(format!(
                    "cannot place the worker thread as asked ({:?}): {e}",
                    self.s.placement
                ))
            })?;
        }
        // io_uring rings are built on the thread that submits to them.
        self.engine
            .start()
            .map_err(|e| WorkloadError::new(e.to_string()))?;
        if let Some((files, bufs)) = self.engine.registered() {
            self.s.figures.registered_files.store(files as u64, Relaxed);
            self.s.figures.registered_bufs.store(bufs as u64, Relaxed);
        }
        Ok(())
    }

    fn run_loop(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        let mut stop = false;
        // With a low-water mark (fio's iodepth_low), a full queue is refilled only once it has
        // drained to the mark.
        let mut refilling = true;
        self.chain = E::COMPLETES_INLINE
            && !ctx.paced()
            && self.s.think.is_none()
            && !self.s.sync_each_write;
        self.chained = None;
        loop {
            // Open loop: when the next event is not due yet, wait for completions until it is.
            let mut due = None;
            if self.s.queue_low.is_some_and(|low| self.in_flight <= low) {
                refilling = true;
            }
            while !stop && !self.free.is_empty() && refilling {
                if self.s.filled {
                    stop = true;
                    break;
                }
                if self.s.flow.as_mut().is_some_and(|g| !g.pass()) {
                    self.held_back(ctx)?;
                    stop = ctx.stopping();
                    continue;
                }
                let t = if self.in_flight == 0 {
                    // Nothing to collect: wait for the schedule itself.
                    match ctx.next_event() {
                        Some(t) => t,
                        None => {
                            stop = true;
                            break;
                        }
                    }
                } else {
                    match ctx.poll_event() {
                        Poll::Ready(t) => t,
                        Poll::NotBefore(at) => {
                            // Wake a little early and poll the rest: a timed kernel wait
                            // overshoots by the timer slack (~50 µs), as the core's pacing
                            // knows.
                            due = Some(
                                Instant::now()
                                    + at.until().saturating_sub(Duration::from_micros(60)),
                            );
                            break;
                        }
                        Poll::Stop => {
                            stop = true;
                            break;
                        }
                    }
                };
                if let Some(write) = self.s.pattern.plain_random() {
                    let io = self.s.pattern.next_plain(write, &mut ctx.rng);
                    let dir = if write { Dir::Write } else { Dir::Read };
                    self.issue(ctx, t, dir, io, false)?;
                    self.after_issue(ctx)?;
                    continue;
                }
                let mut op = self.s.pattern.next(&mut ctx.rng);
                // A drop, a drain or a pause is no event: the request that follows keeps
                // the ticket.
                while let Op::DropCache(_) | Op::DropZone(..) | Op::Drain | Op::Pause(_) = op {
                    self.chained = None;
                    self.between(ctx, op)?;
                    op = self.s.pattern.next(&mut ctx.rng);
                }
                if self.s.trace.is_some() {
                    self.s.trace_op(&op);
                }
                match op {
                    Op::Fsync(file) => {
                        while self.writes_in_flight[file as usize] > 0 {
                            self.complete(ctx, None)?;
                        }
                        let start = Stamp::now();
                        let r = self.engine.sync(file);
                        let end = Stamp::now();
                        r.map_err(|e| self.s.sync_failed(file, e))?;
                        ctx.record(FSYNC, t, start, end);
                        self.chained = None;
                    }
                    Op::Read(io) => {
                        self.issue(ctx, t, Dir::Read, io, self.s.check_reads)?;
                        self.after_issue(ctx)?;
                    }
                    Op::ReadBack(io) => {
                        // A read back while writing waits for the writes to its file
                        // still in flight (fio reads back only completed writes).
                        while self.writes_in_flight[io.file as usize] > 0 {
                            self.complete(ctx, None)?;
                        }
                        self.issue(ctx, t, Dir::Read, io, true)?;
                        self.after_issue(ctx)?;
                    }
                    Op::Write(io) => {
                        self.issue(ctx, t, Dir::Write, io, false)?;
                        self.after_issue(ctx)?;
                    }
                    Op::Trim(io) => {
                        if self.engine.trim_waits_for_queue() {
                            self.drain(ctx)?;
                        }
                        self.issue(ctx, t, Dir::Trim, io, false)?;
                        self.after_issue(ctx)?;
                    }
                    Op::Done => {
                        stop = true;
                        break;
                    }
                    // Taken above; never reaches here.
                    Op::Drain | Op::DropCache(_) | Op::DropZone(..) | Op::Pause(_) => {
                        self.between(ctx, op)?
                    }
                }
            }
            if self.s.queue_low.is_some() && self.free.is_empty() {
                // Full: wait until it drains to the mark.
                refilling = false;
            }
            if self.in_flight == 0 {
                if stop {
                    return Ok(());
                }
                continue;
            }
            if stop {
                // The caller collects what is still in flight, all at once.
                return Ok(());
            }
            self.complete(ctx, due)?;
            if self.s.think.is_some() {
                self.think(ctx, 0)?;
            }
        }
    }

    /// Over the job's share of its flow: wait before asking again, as fio does (with
    /// `flow_sleep`, the requests in flight completed first, then the sleep; without, a
    /// yield of the CPU where fio spins).
    #[cold]
    #[inline(never)]
    fn held_back(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        let sleep = self.s.flow.as_ref().map_or(Duration::ZERO, |g| g.sleep);
        if sleep.is_zero() {
            std::thread::yield_now();
            return Ok(());
        }
        if self.in_flight > 0 {
            let n = self.in_flight;
            self.collect(ctx, None, n, n)?;
        }
        crate::think::sleep_until(Instant::now() + sleep, || ctx.stopping());
        Ok(())
    }

    /// A drop of a file's cached pages, or a drain: everything in flight completed before
    /// the next request, collected in one call as fio's do_io and do_verify end theirs.
    #[cold]
    fn between(&mut self, ctx: &mut WorkerCtx<'_>, op: Op) -> Result<(), WorkloadError> {
        self.s.trace_op(&op);
        match op {
            Op::DropCache(file) => self.s.drop_cache(file, None),
            Op::DropZone(file, from) => self.s.drop_cache(file, Some(from)),
            // A replay's wait: requests in flight stay there, as fio sleeps in a replay
            // without reaping; the run's end cuts it short.
            Op::Pause(us) => {
                crate::think::sleep_until(Instant::now() + Duration::from_micros(us), || {
                    ctx.stopping()
                })
            }
            Op::Drain if self.in_flight > 0 => {
                let n = self.in_flight;
                self.collect(ctx, None, n, n)?;
                self.drain(ctx)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// What follows each request issued: a poll for completions when the job polls after
    /// every request, and think time.
    #[inline(always)]
    fn after_issue(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        if self.s.batch.poll_each && self.in_flight > 0 {
            self.complete(ctx, None)?;
        }
        if self.s.think.is_some() {
            self.think(ctx, 1)?;
        }
        Ok(())
    }

    /// Count `issued` requests and stall when think time is due: everything in flight is
    /// collected first, so the stall is outside every request's time.
    #[cold]
    fn think(&mut self, ctx: &mut WorkerCtx<'_>, issued: u64) -> Result<(), WorkloadError> {
        let in_flight = self.in_flight as u64;
        let Some(th) = self.s.think.as_mut() else {
            return Ok(());
        };
        th.issued(issued);
        if !th.due(in_flight) {
            return Ok(());
        }
        self.drain(ctx)?;
        if let Some(th) = self.s.think.as_mut() {
            let stalled = th.stall(|| ctx.stopping());
            if let Some((even, gap)) = ctx.schedule_gap() {
                let skip = th.skipped(stalled, even, gap);
                if skip > 0 {
                    ctx.push_schedule_back(skip);
                }
            }
        }
        Ok(())
    }

    // Inlined into the loop: for engines that complete at submission this is the whole
    // per-request path, and a call here and in finish_request cost ~20% of the null engine.
    #[inline(always)]
    fn issue(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        ticket: Ticket,
        dir: Dir,
        mut io: Io,
        check: bool,
    ) -> Result<(), WorkloadError> {
        if self.s.serialize_overlap && self.in_flight > 0 {
            self.wait_out_overlap(ctx, &io)?;
        }
        // The slot is taken only if the request stays in flight.
        let slot = match (dir, self.read_slot) {
            (Dir::Read, Some(r)) => r,
            _ => *self.free.last().expect("a free slot"),
        };
        // Validation's busy table has one entry per request in flight; the read buffer of a
        // blocking engine shares the thread's only entry.
        let busy = if Some(slot) == self.read_slot {
            0
        } else {
            slot
        };
        self.s.claim(busy, &mut io, &mut ctx.rng);
        if dir == Dir::Write {
            let buf = self.engine.buffer(slot);
            if self.read_into[slot] {
                self.s.filler.reset(buf, &mut ctx.rng);
            }
            self.s
                .filler
                .prepare(&mut buf[..io.len as usize], io.offset);
        }
        if dir != Dir::Trim {
            self.read_into[slot] = dir == Dir::Read;
        }
        let start = match self.chained.take() {
            Some(s) if E::COMPLETES_INLINE => s,
            _ => Stamp::now(),
        };
        let submitted = self.engine.submit(slot, Request { dir, io });
        let mut f = InFlight {
            ticket,
            start,
            submitted: start,
            dir,
            check,
            io,
        };
        match submitted {
            Ok(Submitted::Done(r)) => {
                let end = Stamp::now();
                if E::COMPLETES_INLINE && self.chain {
                    self.chained = Some(end);
                }
                if dir == Dir::Trim && self.s.counts_depth {
                    // fio counts a trim on a queueing engine as one submitted and one
                    // completed request, at the depth it joins.
                    ctx.add(DEPTH + depth_bucket(self.in_flight + 1), 1);
                    ctx.add(SUBMIT + 1, 1);
                    ctx.add(REAP + 1, 1);
                }
                self.finish_request(ctx, slot, r, &f, end)
            }
            Ok(Submitted::Queued) => {
                if self.submits_on_queue && self.s.split_latency {
                    f.submitted = Stamp::now();
                }
                self.free.pop();
                if dir == Dir::Write {
                    self.writes_in_flight[io.file as usize] += 1;
                }
                self.slots[slot] = Some(f);
                self.in_flight += 1;
                if self.submits_on_queue {
                    // fio counts a request at the depth it joins when it is submitted.
                    ctx.add(DEPTH + depth_bucket(self.in_flight), 1);
                    ctx.add(SUBMIT + 1, 1);
                } else {
                    self.fresh.push(slot);
                    // A full batch goes now (fio commits at iodepth_batch_submit), unless
                    // the queue is full: then it rides on the collection that follows.
                    if self.fresh.len() >= self.s.batch.submit && !self.free.is_empty() {
                        self.flush(ctx)?;
                    }
                }
                Ok(())
            }
            Err(e) => Err(self.s.queue_failed(dir, &io, e)),
        }
    }

    /// fio's serialize_overlap: while a request in flight overlaps `io` (by offset, in any
    /// file, as fio compares them), collect completions.
    #[cold]
    #[inline(never)]
    fn wait_out_overlap(&mut self, ctx: &mut WorkerCtx<'_>, io: &Io) -> Result<(), WorkloadError> {
        let (x1, x2) = (io.offset, io.offset + u64::from(io.len));
        let overlaps = |s: &[Option<InFlight>]| {
            s.iter()
                .flatten()
                .any(|f| f.io.offset < x2 && x1 < f.io.offset + u64::from(f.io.len))
        };
        // A collection hands what is queued to the kernel first.
        while self.in_flight > 0 && overlaps(&self.slots) {
            self.complete(ctx, None)?;
        }
        Ok(())
    }

    /// Hand the queued requests to the kernel now, without waiting for completions.
    fn flush(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.engine
            .flush()
            .map_err(|e| WorkloadError::new(e.to_string()))?;
        self.submitted(ctx, Stamp::now());
        Ok(())
    }

    /// The queued requests reached the kernel at `at` (the end of their submission).
    fn submitted(&mut self, ctx: &mut WorkerCtx<'_>, at: Stamp) {
        if self.fresh.is_empty() {
            return;
        }
        if self.s.split_latency {
            for &slot in &self.fresh {
                if let Some(f) = self.slots[slot].as_mut() {
                    f.submitted = at;
                }
            }
        }
        // fio counts a batch at the depth the queue holds when it is submitted (queued
        // requests included).
        let n = self.fresh.len();
        ctx.add(DEPTH + depth_bucket(self.in_flight), n as u64);
        ctx.add(SUBMIT + batch_bucket(n), 1);
        self.fresh.clear();
    }

    /// Submit what is queued and handle the completions the job's batch asks for, or what
    /// completed by `until` when it is given.
    fn complete(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        until: Option<Instant>,
    ) -> Result<(), WorkloadError> {
        let b = self.s.batch;
        let min = match b.reap_min {
            0 => 0,
            m => m.min(self.in_flight).max(1),
        };
        let max = b.reap_max.min(self.in_flight).max(min).max(1);
        self.collect(ctx, until, min, max)
    }

    /// Submit what is queued, wait for `min` completions (0: poll until there is one) and
    /// handle at most `max`.
    fn collect(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        until: Option<Instant>,
        min: usize,
        max: usize,
    ) -> Result<(), WorkloadError> {
        if !self.fresh.is_empty() {
            // The collection below can submit them in the same call, unless submission is
            // timed apart (fio's slat ends when the submitting call returns).
            if self.submits_with_wait && !self.s.split_latency {
                self.submitted(ctx, Stamp::now());
            } else {
                self.flush(ctx)?;
            }
        }
        let done = &mut self.done;
        loop {
            self.engine
                .reap(min, max, until, |slot, res| done.push((slot, res)))
                .map_err(|e| WorkloadError::new(e.to_string()))?;
            // A job that polls (iodepth_batch_complete_min=0) spins until one is there.
            if min > 0 || !done.is_empty() || until.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            std::hint::spin_loop();
        }
        let end = Stamp::now();
        ctx.add(REAP + batch_bucket(self.done.len()), 1);
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
            let r = if res < 0 {
                Err(Errno {
                    call: self.engine.request_call(),
                    errno: -res as i32,
                })
            } else {
                Ok(res as usize)
            };
            // The requests that come back after a failure are still counted, and a full
            // disk is heard of from each of them (fio reports every request in flight).
            if let Err(e) = self.finish_request(ctx, slot, r, &f, end) {
                first_error.get_or_insert(e);
            }
        }
        self.done.clear();
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Check and record one completed request.
    #[inline(always)]
    fn finish_request(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        slot: usize,
        res: Result<usize, Errno>,
        f: &InFlight,
        end: Stamp,
    ) -> Result<(), WorkloadError> {
        let (kind, counter, what) = match f.dir {
            Dir::Read => (READ, BYTES_READ, "read from"),
            Dir::Write => (WRITE, BYTES_WRITTEN, "write to"),
            Dir::Trim => {
                let (k, c) = self
                    .s
                    .trim
                    .ok_or_else(|| WorkloadError::new("a trim in a job that does not trim"))?;
                (k, c, "trim of")
            }
        };
        if let Err(e) = res {
            if self.s.tolerate.is_some() && self.s.counted_error(f.dir, e.errno) {
                if let Some(c) = self.s.failed[f.dir as usize] {
                    ctx.add(c, 1);
                }
                return Ok(());
            }
        }
        if f.dir == Dir::Write {
            let full = match res {
                Err(e) => is_full(e.errno),
                Ok(n) => self.s.fill_device && n < f.io.len as usize,
            };
            if full {
                // Counted as issued, as fio counts it, and kept for the front end: under
                // fill_device the job ends cleanly, otherwise it fails.
                self.filled(ctx, res.unwrap_or(0), f, end);
                if let Err(e) = res {
                    self.s.keep_failed(Dir::Write, &f.io, e.errno);
                    if !self.s.fill_device {
                        return Err(self.s.fail(what, &f.io, e));
                    }
                }
                return Ok(());
            }
        }
        let n = match res {
            Ok(n) => n,
            Err(e) => return Err(self.s.request_failed(ctx, f.dir, &f.io, what, e)),
        };
        if n as u64 != f.io.len as u64 {
            if let (Dir::Write, Some(c), 1..) = (f.dir, self.s.writes_short, n) {
                return self.write_rest(ctx, slot, c, n, f);
            }
            return Err(self.s.short(f.dir, &f.io, n as u64));
        }
        if f.dir == Dir::Read && self.s.validate {
            self.s.validate_read(self.engine.buffer(slot), &f.io)?;
        }
        if f.dir == Dir::Write && self.s.sync_each_write {
            // The fsync belongs to its write's event: the write's latency covers both.
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
        if self.s.split_latency {
            // A trim is done inside its submission: no halves (fio has no slat for it).
            let halves = match f.dir {
                Dir::Read => Some((READ_SUBMIT, READ_COMPLETE)),
                Dir::Write => Some((WRITE_SUBMIT, WRITE_COMPLETE)),
                Dir::Trim => None,
            };
            if let Some((sub, done)) = halves {
                ctx.record(sub, Ticket::inner(), f.start, f.submitted);
                ctx.record(done, Ticket::inner(), f.submitted, end);
            }
        }
        if let Some(log) = &mut self.s.log {
            log.add(
                f.dir as u8,
                (f.io.offset, n as u64),
                f.start,
                f.submitted,
                end,
            );
        }
        ctx.add(counter, n as u64);
        if self.s.max_latency.is_some() {
            self.s.check_max_latency(ctx.measured_from(), f, end)?;
        }
        if self.s.min_rate.is_some() {
            self.s
                .check_min_rate(ctx.measured_from(), f.dir, n as u64, end)?;
        }
        // A read that fails its check was still done: counted above, as fio counts it.
        if let (true, Some(v)) = (f.check, &self.s.verify) {
            let buf = &self.engine.buffer(slot)[..f.io.len as usize];
            if let Err(bad) = crate::verify::check_chunks(&v.seal, buf, f.io.offset) {
                self.s.verify_failed(buf, &f.io, bad)?;
            }
        }
        Ok(())
    }

    /// fio's answer to a write the filesystem took only part of (a disk filling up): the
    /// part counts as a short, untimed issue, and the rest goes out again from the same
    /// buffer as a request of its own, whose end is the write's end (its failure, ENOSPC
    /// as a rule, is the job's).
    #[cold]
    #[inline(never)]
    fn write_rest(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        slot: usize,
        counter: usize,
        wrote: usize,
        f: &InFlight,
    ) -> Result<(), WorkloadError> {
        ctx.add(counter, 1);
        let len = f.io.len as usize;
        self.engine.buffer(slot).copy_within(wrote..len, 0);
        let io = Io {
            offset: f.io.offset + wrote as u64,
            len: (len - wrote) as u32,
            ..f.io
        };
        let rest = InFlight { io, ..*f };
        match self.engine.submit(
            slot,
            Request {
                dir: Dir::Write,
                io,
            },
        ) {
            Ok(Submitted::Done(r)) => {
                let end = Stamp::now();
                self.finish_request(ctx, slot, r, &rest, end)
            }
            Ok(Submitted::Queued) => {
                // The short write's completion gave its slot back; the rest holds it again.
                if let Some(k) = self.free.iter().rposition(|&s| s == slot) {
                    self.free.swap_remove(k);
                }
                self.writes_in_flight[io.file as usize] += 1;
                self.slots[slot] = Some(rest);
                self.in_flight += 1;
                if self.submits_on_queue {
                    ctx.add(DEPTH + depth_bucket(self.in_flight), 1);
                    ctx.add(SUBMIT + 1, 1);
                } else {
                    self.fresh.push(slot);
                }
                Ok(())
            }
            Err(e) => Err(self.s.queue_failed(Dir::Write, &io, e)),
        }
    }

    /// The filesystem is full: the write that found it so counts as issued (fio's
    /// `issued rwts`), and the job issues no more. One that wrote nothing is not timed, as
    /// fio times no failed request; a short one did write, and is a write with its bytes.
    #[cold]
    fn filled(&mut self, ctx: &mut WorkerCtx<'_>, wrote: usize, f: &InFlight, end: Stamp) {
        if wrote > 0 {
            ctx.record(WRITE, f.ticket, f.start, end);
            ctx.add(BYTES_WRITTEN, wrote as u64);
        } else if let Some(c) = self.s.writes_full {
            ctx.add(c, 1);
        }
        self.s.filled = true;
    }

    fn drain(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        while self.in_flight > 0 {
            let before = self.in_flight;
            self.complete(ctx, None)?;
            if self.in_flight == before {
                return Err(WorkloadError::new(format!(
                    "{} requests never completed",
                    self.in_flight
                )));
            }
        }
        Ok(())
    }
}

impl<E: Engine> Worker for IoWorker<E> {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.start()?;
        if let Some(log) = &mut self.s.log {
            log.start(ctx.measured_from());
        }
        for slot in 0..self.engine.slots() {
            self.s.filler.init(self.engine.buffer(slot), &mut ctx.rng);
        }
        let res = self.run_loop(ctx);
        // Whatever happened, nothing may stay in flight once the worker returns. fio waits
        // for the whole queue in one collection at the end of a job.
        let drained = match self.in_flight {
            0 => Ok(()),
            n => self.collect(ctx, None, n, n).and_then(|()| self.drain(ctx)),
        };
        res.and(drained)
    }

    fn finish(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        self.drain(ctx)?;
        if let Some(log) = &mut self.s.log {
            log.finish();
        }
        if let Some(t) = self.s.trace.as_mut() {
            t.finish().map_err(|e| WorkloadError::new(e.to_string()))?;
        }
        if let Some(first) = &self.s.first_verify_failure {
            return Err(WorkloadError::new(format!(
                "{first} ({} requests failed verification)",
                self.s.verify_failures
            )));
        }
        self.s.end_fsync(&mut self.engine, ctx)
    }
}
