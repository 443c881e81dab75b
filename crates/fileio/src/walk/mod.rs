//! A job's own walk over the regions of its named files (fio's model, [`JobIo`]).
//!
//! Unlike sysbench's shared stream ([`crate::pattern`]), nothing is shared between threads:
//! each has its files' positions, its random map and its byte count.
//!
//! - Files take turns, one request each (fio's `file_service_type=roundrobin`), or as the
//!   job's other file service says ([`service`]).
//! - Sequential: each direction keeps its own position per file (reads and writes of a mixed
//!   job each walk the file from its start); a request never crosses the region's end. A file
//!   whose next request would cross it is done for the round and the others take its turns,
//!   as fio closes an exhausted file; a region that does not divide by the block size
//!   leaves its tail untouched, as fio does.
//! - Holes (fio's `rw=read:N`): a sequential request starts N bytes past the end of the
//!   previous one of its direction, or, N negative, before it, as fio 3.33's
//!   get_next_seq_offset computes it ([`JobWalk::after_hole`]): a step back below the
//!   region's start goes on near its end, one forward past the file's end starts over. A
//!   time-based job's only file starts over in place only once a request ends at the
//!   region's end; one with no room left is done for the round, as any file is.
//! - Random: offsets are multiples of the alignment inside the region. With the random map
//!   every aligned block is used once per round, in random order: a drawn block already used
//!   moves to the next free one, as fio's map does; a file whose map is used up is done for
//!   the round. A skew ([`plumb_core::random::Skew`], fio's `random_distribution`) draws
//!   each file's blocks with its own hot set and keeps no map (as in fio, where a
//!   non-uniform distribution turns the map off, the zoned ones too); a file's hot set is
//!   placed with the thread's random stream at its first draw, unless a center fixes it.
//! - Zones (fio's `zonemode=strided`, `zones.rs`): before each request the file's zone may
//!   move on, and the request's position or draw is then taken in that zone; every other
//!   rule above and below holds as for a whole region.
//! - Random requests that go on from the previous one: between the draws of
//!   `rw=randread:N`, and for the share of the due draws that fio's `percentage_random`
//!   leaves out, a request starts where the previous one of its direction ended (the first
//!   one at the region's start) and marks nothing in the map (fio flags it busy-ok). With no
//!   room left before the region's end it is drawn after all, except in a time-based job's
//!   only file, which starts over at the region's start, its cached pages dropped first
//!   unless the I/O is direct (fio's get_next_seq_offset and loop_cache_invalidate).
//! - Rounds, as fio 3.33's thread_main runs them (backend.c): each round is one `do_io`,
//!   which issues at most what is left of `io_size` × `loops`, ends when every file is
//!   done, and for an engine that queues also at the job's size ([`JobIo::round_bytes`]:
//!   fio counts its `total_bytes` only for queued requests). It ends by completing every
//!   request in flight ([`Op::Drain`]); with verify, the round's writes are read back
//!   ([`Op::Drain`] again after them); then `keep_running` decides: the first `loops`
//!   rounds always run, later ones while the bytes done (read-back included) fall short
//!   of `io_size` by at least a largest request, and a round with nothing left to issue
//!   ends the job. Every round starts the files over (positions, maps) and opens them
//!   again. So `loops=2` with `io_size` twice the size is two rounds in all, as fio does
//!   it. A time-based job has no byte limit: its rounds end when every file is done, which
//!   happens to a job walking several files in order (or at `round_bytes`); its only file
//!   walked in order, or a random file whose map is used up, starts over in place.
//! - Verify while writing (fio's `verify_backlog=N`): whenever N writes wait to be read
//!   back and the request before was no read, the next `verify_backlog_batch` (N)
//!   requests read back the first of them ([`history::History`]'s order), unless the
//!   round ends first; what is left is read back at the round's end as below.
//! - Verify: a round's writes are read back in the order written when the job keeps a
//!   random map, otherwise by file and offset, a later write replacing the earlier ones it
//!   overlaps (fio's log_io_piece keeps those in a tree).
//! - After every N writes (fio's `fsync=N`) the next request is a sync, issued only if the
//!   job goes on; it takes the next file's round-robin turn and syncs that file, because fio
//!   decides on the sync when it fetches the next request, after picking its file. fio
//!   asks for one whenever the writes so far are a multiple of N and its last request was
//!   not a sync, so a read or trim after the sync (a mixed job) brings another one before
//!   the next request, and so does the start of a round, which forgets the last request
//!   (fio's reset_io_counters clears `last_was_sync`).
//! - Cached pages (fio's `invalidate`): fio drops a file's pages each time it opens the
//!   file, and it opens its files lazily, at their first request of each round and of the
//!   read-back. A time-based job that starts a file over in place drops them then too,
//!   unless the I/O is direct. So a file starting over is marked, and its drop
//!   ([`Op::DropCache`]) comes just before its next request.
//! - Trims (fio's `rw=trim`, `randtrim`) walk like writes, with their own size (fio's third
//!   block size) and their own sequential position.
//! - Trim then write (fio's `trimwrite`, `randtrimwrite`): the file comes first, then its
//!   direction: a trim when the latest trim and write of that file started at the same
//!   offset (fio's `last_start`), a write otherwise. Sequentially each direction keeps its own
//!   position, and draws its sizes from a stream of its own that starts as the other's
//!   does (as fio seeds them), so where both take the same sizes every block is trimmed,
//!   then written whole, whatever the size range or split. Randomly
//!   the trim draws the block and the write covers exactly the range just trimmed; a trim
//!   drawn where the previous one was still makes the next request a write, as in fio. Only
//!   the writes count toward `io_size` (fio's byte limit of a trimwrite job is its writes).

use plumb_core::random::{Rng, SkewedBlocks};

use crate::access::{Access, Mix, Order};
use crate::block_map::BlockMap;
use crate::pattern::{Io, Op};
use crate::spec::{JobIo, SizeChoice};

mod file;
mod history;
mod order;
pub mod replay;
mod service;
mod zones;

use file::{Draw, FileWalk, Runs, Wrap, NONE};
use history::History;
use order::BlockOrder;

/// One thread's walk.
pub struct JobWalk {
    access: Access,
    files: Vec<FileWalk>,
    /// Read, write and trim sizes.
    sizes: [SizeChoice; 3],
    /// Each direction's smallest size (at least 1), asked for on every sequential request;
    /// a split's would be a walk over its entries.
    min_sizes: [u64; 3],
    align: u64,
    next_file: usize,
    /// Bytes a round issues at most ([`JobIo::round_bytes`]); `u64::MAX`: no limit.
    round_cap: u64,
    /// Bytes the round has issued, and where it ends: its cap, or what is left of the
    /// job's bytes when less (a trimwrite job's writes are counted apart).
    in_round: u64,
    round_limit: u64,
    /// Requests issued, read-backs aside, and where the job stops (fio's number_ios).
    ios: u64,
    ios_cap: u64,
    /// Bytes the job issues at most (fio's `io_size` × `loops`, counting what fio's
    /// io_issue_bytes counts: a trimwrite job's writes only); `u64::MAX`: time-based.
    budget: u64,
    /// Those bytes issued before this round, and a trimwrite round's writes.
    issued: u64,
    round_writes: u64,
    /// Bytes done before this round, read-back included (fio's io_bytes, which decides on
    /// more rounds).
    done_bytes: u64,
    /// Rounds ended, and how many always run (fio's `loops`; 0: time-based, no end).
    rounds: u64,
    loops: u64,
    /// After `loops` rounds, more run while `done_bytes` falls short of this by a largest
    /// request (fio's keep_running, with `io_size`).
    more_until: u64,
    /// `io_size` was given (beside the regions' size), so a round whose files were all done
    /// is followed by another one even without reaching `more_until` (fio's keep_running).
    io_size_given: bool,
    /// Every file was done when the round ended.
    all_done: bool,
    /// The round ends before the next request (its bytes are done, every file is, or the
    /// job is over): the cold path of [`JobWalk::next`].
    round_over: bool,
    finished: bool,
    /// A round ends when every file is done (fio: a job with a byte limit, or a time-based
    /// one walking several files in order); otherwise a file starts over in place.
    rounds_end_when_done: bool,
    sync_every: u64,
    writes: u64,
    /// The writes so far are a nonzero multiple of `sync_every`.
    at_sync_multiple: bool,
    /// At a multiple and the last request was no sync: the next request is one.
    sync_due: bool,
    /// The writes not read back yet (verify), what the round's end reads back of them, and
    /// how far that got (`None`: the round's requests are still going).
    written: Option<History>,
    read_back: Vec<Io>,
    reading_back: Option<usize>,
    /// verify_backlog and its batch (0: none), the reads left of the batch under way, and
    /// whether the last request was a read.
    backlog: u64,
    backlog_batch: u64,
    batch_left: u64,
    last_was_read: bool,
    /// The longest region: no request is longer.
    longest: u64,
    /// rw=write:N: the hole after each sequential request (negative: a step back), never 0.
    hole: Option<i64>,
    /// How random requests go on between draws.
    runs: Runs,
    /// Files marked `drop_due`.
    drops_due: usize,
    /// fio drops a file's cached pages each time it opens it (the first request of each
    /// round, and of the read-back).
    drop_on_open: bool,
    /// A logged sequence replayed in place of the walk (fio's `read_iolog`).
    replay: Option<replay::Replay>,
    /// Files served otherwise than one request each in turn.
    service: Option<service::Service>,
    /// Files done since the last look, for a job whose requests are logged (fio closes a
    /// file as soon as it finds it done); `None` when nobody looks.
    closed: Option<Vec<u32>>,
    /// ... and when a time-based job starts a file over in place (not under direct I/O).
    drop_on_wrap: bool,
    /// The first request is still to come (it goes through the cold path, which keeps the
    /// random state there when rounds repeat it).
    started: bool,
    /// The random state at the first request, put back at each round's start (fio's
    /// `randrepeat` seeds its generators again for each round).
    first_rng: Option<Rng>,
    repeat_each_round: bool,
    /// Sequential trim then write: the trims' and the writes' request sizes, drawn from two
    /// streams that start alike (fio seeds them alike so that each block trimmed is then
    /// written whole), made at the first request.
    pair_sizes: Option<[Rng; 2]>,
    /// fio's zonemode=strided ([`zones`]); none: each region walked whole.
    zones: Option<Box<zones::Zones>>,
}

impl JobWalk {
    pub fn new(access: Access, job: &JobIo) -> JobWalk {
        let random = !access.is_sequential();
        let align = job.align.max(1);
        let skewed = random && !job.skew.is_uniform();
        // Random requests keep a map of the blocks used (fio's axmap: none under lfsr or a
        // skew).
        let mapped = random && job.random_map && !job.lfsr && !skewed;
        // Regions of one length share the skew's constants (zipf's sum is long to make).
        let mut made: Vec<SkewedBlocks> = Vec::new();
        let files = job
            .files
            .iter()
            .map(|f| {
                // A zoned job draws its random blocks in one zone's range.
                let span = match &job.zones {
                    Some(z) if random => z.range,
                    _ => f.length,
                };
                let blocks = (span / align).max(1);
                let skew = if skewed {
                    match made.iter().find(|s| s.blocks() == blocks) {
                        Some(s) => Some(s.clone()),
                        None => {
                            let s = SkewedBlocks::new(&job.skew, blocks, align);
                            made.extend(s.clone());
                            s
                        }
                    }
                } else {
                    None
                };
                FileWalk {
                    offset: f.offset,
                    length: f.length,
                    pos: [0; 3],
                    done: false,
                    map: mapped.then(|| BlockMap::new(blocks)),
                    order: (random && job.lfsr && !skewed).then(|| BlockOrder::new(blocks)),
                    blocks,
                    skew,
                    run_left: [0; 3],
                    drop_due: job.invalidate,
                    last_start: [NONE; 2],
                    trim_len: 0,
                }
            })
            .collect::<Vec<_>>();
        let zones = job
            .zones
            .as_ref()
            .map(|z| Box::new(zones::Zones::new(z, &files)));
        let bounded = job.passes.is_some();
        let regions: u64 = job.files.iter().map(|f| f.length).sum();
        let pass_bytes = job.pass_bytes.max(1);
        // fio 3.33 reads back what a job wrote after each of its rounds (thread_main calls
        // do_verify after every do_io), time-based or not.
        let verify = job
            .verify
            .as_ref()
            .filter(|v| v.after_writes && matches!(access.mix, Mix::Write | Mix::Share { .. }));
        // In the order written under a random map (no block twice) or with
        // experimental_verify (fio walks the requests again), otherwise by file and offset,
        // each block once (fio's io_hist tree, also under lfsr, which keeps no map).
        let written = verify.map(|v| History::new(mapped || v.in_write_order));
        let loops = job.passes.unwrap_or(0).max(1);
        let budget = if bounded {
            pass_bytes.saturating_mul(loops)
        } else {
            u64::MAX
        };
        let round_cap = job.round_bytes.unwrap_or(u64::MAX).max(1);
        // fio's exceeds_number_ios: the requests of every round together, against
        // number_ios times loops (twice that for trimwrite, whose trims count too).
        let ios_cap = match job.number_ios.filter(|_| bounded) {
            None => u64::MAX,
            Some(n) => {
                let n = n.saturating_mul(loops);
                if access.mix == Mix::TrimWrite {
                    n.saturating_mul(2)
                } else {
                    n
                }
            }
        };
        JobWalk {
            access,
            files,
            sizes: job.sizes.by_dir().map(Clone::clone),
            min_sizes: job.sizes.by_dir().map(|s| s.min().max(1)),
            align,
            next_file: 0,
            round_cap,
            in_round: 0,
            ios: 0,
            ios_cap,
            round_limit: if access.mix == Mix::TrimWrite {
                round_cap
            } else {
                round_cap.min(budget)
            },
            budget,
            issued: 0,
            round_writes: 0,
            done_bytes: 0,
            rounds: 0,
            loops: if bounded { loops } else { 0 },
            more_until: pass_bytes,
            io_size_given: pass_bytes != regions,
            all_done: false,
            // The first request takes the cold path (see `started`).
            round_over: job.repeat_each_round || job.replay.is_some(),
            finished: false,
            rounds_end_when_done: bounded || (!random && job.files.len() > 1),
            sync_every: job.sync_every_writes,
            writes: 0,
            at_sync_multiple: false,
            sync_due: false,
            written,
            read_back: Vec::new(),
            reading_back: None,
            backlog: verify.map_or(0, |v| v.backlog),
            backlog_batch: verify.map_or(0, |v| if v.batch > 0 { v.batch } else { v.backlog }),
            batch_left: 0,
            last_was_read: false,
            longest: job.files.iter().map(|f| f.length).max().unwrap_or(1),
            hole: job.stride.filter(|&n| n != 0 && !random),
            runs: Runs {
                stride: job
                    .stride
                    .filter(|&n| n > 0 && random)
                    .map(|n| n.unsigned_abs()),
                random_pct: access.random_pct,
                wrap: !bounded && job.files.len() == 1,
                drop_on_wrap: !bounded && job.files.len() == 1 && job.invalidate_on_wrap,
            },
            drops_due: if job.invalidate { job.files.len() } else { 0 },
            drop_on_open: job.invalidate,
            replay: job
                .replay
                .clone()
                .map(|s| replay::Replay::new(s, job.invalidate)),
            service: service::Service::new(job.service),
            closed: job.trace.is_some().then(Vec::new),
            // Without a map a random file never starts over (fio); in order, one file
            // wraps in place.
            drop_on_wrap: job.invalidate_on_wrap
                && if random {
                    job.covers_blocks() && !skewed
                } else {
                    job.files.len() == 1
                },
            started: !job.repeat_each_round,
            first_rng: None,
            repeat_each_round: job.repeat_each_round,
            pair_sizes: None,
            zones,
        }
    }

    /// Rounds ended so far, and whether the round's writes are being read back.
    pub fn phase(&self) -> (u64, bool) {
        (self.rounds, self.reading_back.is_some())
    }

    /// Mark every file to have its cached pages dropped before its next request.
    fn drop_all(&mut self) {
        for f in &mut self.files {
            f.drop_due = true;
        }
        self.drops_due = self.files.len();
    }

    /// The drop due for `file`, if one is.
    #[cold]
    fn take_drop(&mut self, file: usize) -> Option<Op> {
        let f = &mut self.files[file];
        if !std::mem::take(&mut f.drop_due) {
            return None;
        }
        self.drops_due -= 1;
        Some(Op::DropCache(file as u32))
    }

    /// Count a request of `len` bytes; the round ends when its bytes are done.
    #[inline(always)]
    fn count(&mut self, len: u64) {
        self.in_round += len;
        if self.in_round >= self.round_limit {
            self.round_over = true;
        }
        // Counted only under number_ios: a store per request cost the null engine 1.5%.
        if self.ios_cap != u64::MAX {
            self.ios += 1;
            if self.ios >= self.ios_cap {
                self.round_over = true;
            }
        }
    }

    /// Every file is done: the round ends.
    #[cold]
    fn files_done(&mut self) {
        self.all_done = true;
        self.round_over = true;
    }

    /// Between rounds (the cold path of [`JobWalk::next`]): fio's do_io ends by completing
    /// everything in flight, do_verify reads back the round's writes (opening the files
    /// again) and completes those, and keep_running decides on another round, which opens
    /// the files again. `None`: the next round has begun.
    #[cold]
    fn between_rounds(&mut self, rng: &mut Rng) -> Option<Op> {
        // A replay keeps `round_over` set: every request comes this way.
        if let Some(r) = &mut self.replay {
            return Some(r.next());
        }
        if !self.started {
            self.started = true;
            self.round_over = false;
            self.first_rng = Some(rng.clone());
            return None;
        }
        if self.finished {
            return Some(Op::Done);
        }
        let Some(i) = self.reading_back else {
            self.reading_back = Some(0);
            self.done_bytes += self.in_round;
            self.issued += if self.access.mix == Mix::TrimWrite {
                self.round_writes
            } else {
                self.in_round
            };
            if let Some(w) = &mut self.written {
                self.read_back = w.take_all();
                self.batch_left = 0;
                if !self.read_back.is_empty() && self.drop_on_open {
                    self.drop_all();
                }
            }
            return Some(Op::Drain);
        };
        if let Some(&io) = self.read_back.get(i) {
            if self.drops_due > 0 {
                if let Some(op) = self.take_drop(io.file as usize) {
                    return Some(op);
                }
            }
            self.reading_back = Some(i + 1);
            self.done_bytes += io.len as u64;
            return Some(Op::ReadBack(io));
        }
        let read_back = !self.read_back.is_empty();
        self.read_back.clear();
        if read_back {
            // do_verify ends by completing its reads.
            return Some(Op::Drain);
        }
        self.reading_back = None;
        self.rounds += 1;
        if !self.keep_running() {
            self.finished = true;
            return Some(Op::Done);
        }
        self.round_over = false;
        self.all_done = false;
        if let Some(first) = self.first_rng.as_ref().filter(|_| self.repeat_each_round) {
            *rng = first.clone();
        }
        self.in_round = 0;
        self.round_writes = 0;
        self.round_limit = if self.access.mix == Mix::TrimWrite {
            self.round_cap
        } else {
            self.round_cap.min(self.budget - self.issued)
        };
        for f in &mut self.files {
            f.reset();
        }
        if let Some(z) = &mut self.zones {
            z.restart(&self.files);
        }
        if self.drop_on_open {
            self.drop_all();
        } else {
            for f in &mut self.files {
                f.drop_due = false;
            }
            self.drops_due = 0;
        }
        self.sync_due = self.at_sync_multiple;
        None
    }

    /// fio's keep_running: the first `loops` rounds run, then more while the bytes done
    /// fall short of `io_size` by a largest request; a round with no bytes left to issue
    /// ends the job.
    fn keep_running(&self) -> bool {
        if self.loops == 0 {
            return true;
        }
        // fio would run the loops left with nothing to issue (nor files to open).
        if self.ios >= self.ios_cap {
            return false;
        }
        if self.issued >= self.budget {
            return false;
        }
        if self.rounds < self.loops {
            return true;
        }
        let left = self.more_until.saturating_sub(self.done_bytes);
        left > 0 && left >= self.largest() && (self.io_size_given || !self.all_done)
    }

    fn size(&self, dir: usize, rng: &mut Rng) -> u64 {
        match &self.sizes[dir] {
            SizeChoice::Fixed(b) => *b,
            // fio's get_next_buflen: the minimum plus a uniform share of the maximum,
            // aligned down to the minimum, capped at the maximum; so a maximum that is not
            // a multiple of the minimum is drawn too (bsrange=4k-6k: 6 KiB about a third
            // of the time).
            SizeChoice::Range { min, max } => {
                let m = (*min).max(1);
                if m.is_power_of_two() && max & (m - 1) == 0 {
                    // The usual range (a maximum that is a multiple of a power-of-two
                    // minimum): fio's formula gives each multiple of the minimum up to the
                    // maximum alike; drawn so, with no division.
                    let shift = m.trailing_zeros();
                    return (1 + rng.below(max >> shift)) << shift;
                }
                let drawn = m + (*max as f64 * rng.next_f64()) as u64;
                (drawn - drawn % m).min(*max)
            }
            SizeChoice::Split(v) => {
                let mut r = rng.below(100) as u32;
                for &(b, pct) in v {
                    if r < pct {
                        return b;
                    }
                    r -= pct;
                }
                v.last().map_or(4096, |e| e.0)
            }
        }
    }

    /// A size for direction `dir` that fits in `room` bytes, which the smallest one does:
    /// fio's get_next_buflen draws again until one fits, and of a split takes the first
    /// size at or past the drawn share that fits.
    #[cold]
    fn size_within(&self, dir: usize, rng: &mut Rng, room: u64) -> u64 {
        loop {
            let len = match &self.sizes[dir] {
                SizeChoice::Split(v) => {
                    let r = rng.below(100) as u32;
                    let mut cum = 0;
                    let shares = || v.iter().filter(|e| e.1 > 0);
                    let hit = shares().find(|&&(b, pct)| {
                        cum += pct;
                        r < cum && b <= room
                    });
                    if cum == 0 {
                        // No size has a share: nothing to draw.
                        return self.sizes[dir].min();
                    }
                    // Past every share: fio's loop is left at its last size.
                    hit.or_else(|| shares().next_back()).map(|e| e.0)
                }
                _ => Some(self.size(dir, rng)),
            };
            if let Some(len) = len.filter(|&l| l <= room) {
                return len;
            }
        }
    }

    /// The largest request of the directions this walk issues.
    fn largest(&self) -> u64 {
        let [r, w, t] = &self.sizes;
        match self.access.mix {
            Mix::Trim => t.max(),
            Mix::TrimWrite => w.max().max(t.max()),
            _ => r.max().max(w.max()),
        }
    }

    /// The next file in turn with room for a request in direction `dir` (of `len` bytes, or
    /// of the direction's smallest size, which the caller then draws again), and where in
    /// its region the request starts; `None` when no file has room (each file without room
    /// is done for the round; the only file of a time-based job starts over in that
    /// direction instead).
    fn next_sequential_file(&mut self, dir: usize, len: u64) -> Option<(usize, u64)> {
        let len = len.min(self.min_sizes[dir]);
        let n = self.files.len();
        for k in 0..n {
            let fi = (self.next_file + k) % n;
            if self.files[fi].done {
                continue;
            }
            let at = match self.hole {
                None => self.fits_or_wraps(fi, dir, len),
                Some(hole) => self.after_hole(fi, dir, len, hole),
            };
            if let Some(at) = at {
                self.next_file = (fi + 1) % n;
                return Some((fi, at));
            }
            self.files[fi].done = true;
            self.closing(fi);
        }
        None
    }

    /// Where a request of `len` bytes in direction `dir` of file `fi` goes on from the
    /// previous one, `None` if it does not fit before the region's end.
    #[inline]
    fn fits_or_wraps(&mut self, fi: usize, dir: usize, len: u64) -> Option<u64> {
        let f = &mut self.files[fi];
        if f.pos[dir] + len <= f.length {
            return Some(f.pos[dir]);
        }
        if !self.rounds_end_when_done && len <= f.length {
            // fio's get_next_seq_offset: a time-based job's only file wraps in place,
            // dropping its pages unless direct.
            f.pos[dir] = 0;
            self.mark_wrap_drop(fi);
            return Some(0);
        }
        None
    }

    /// A time-based job's only file starts over in place: its pages are dropped first when
    /// fio's loop_cache_invalidate would drop them.
    fn mark_wrap_drop(&mut self, fi: usize) {
        let f = &mut self.files[fi];
        if self.drop_on_wrap && !f.drop_due {
            f.drop_due = true;
            self.drops_due += 1;
        }
    }

    /// Where the next request of `dir` in file `fi` starts with a `hole` after each request
    /// (`rw=read:N`; negative: a step back from the previous request's end), as fio 3.33's
    /// get_next_seq_offset puts it, then get_next_offset and get_next_buflen check it;
    /// `None`: the file is done. fio's arithmetic is kept as it is: unsigned, a step back
    /// below the region's start going on from `length + hole`, and positions in the region
    /// compared with the file's size. So a step past the file's end starts over at the
    /// region's offset taken as a position in the region (twice the offset in the file),
    /// and a backward walk of a region that starts at an offset first goes back from
    /// `length - offset`. Asked again after a drop, it answers the same.
    #[inline]
    fn after_hole(&mut self, fi: usize, dir: usize, len: u64, hole: i64) -> Option<u64> {
        let f = &self.files[fi];
        let (offset, length, mut at) = (f.offset, f.length, f.pos[dir]);
        // fio's real_file_size, as it is for a file laid out for the job: the region's end
        // (a larger file is a difference, docs/fio.md).
        let size = offset + length;
        if at >= length {
            if self.rounds_end_when_done {
                if offset + at >= size {
                    return None;
                }
            } else {
                // A time-based job's only file starts over once a request ends at the
                // region's end, before any hole.
                self.files[fi].pos[dir] = 0;
                self.mark_wrap_drop(fi);
                at = 0;
            }
        }
        if at == 0 && hole < 0 && offset != 0 {
            at = length.wrapping_sub(offset);
        }
        // The first request of a walk starts where it is, with no hole before it.
        if at != 0 {
            at = at.wrapping_add_signed(hole);
            if at >= size {
                at = if hole > 0 {
                    offset
                } else {
                    length.wrapping_add_signed(hole)
                };
            }
        }
        (at < length && len <= length - at).then_some(at)
    }

    /// A random file's map is used up: what follows (see [`Wrap`]).
    #[cold]
    fn map_used_up(&mut self, fi: usize) -> Wrap {
        let f = &mut self.files[fi];
        if self.rounds_end_when_done {
            f.done = true;
            self.closing(fi);
            return Wrap::Done;
        }
        // fio's get_next_rand_block: a time-based job starts the file over in place.
        f.restart_random();
        if self.drop_on_wrap {
            Wrap::Drop
        } else {
            Wrap::Again
        }
    }

    /// The next random file in turn that is not done, `None` when all are.
    #[inline]
    fn next_random_file(&mut self) -> Option<usize> {
        let n = self.files.len();
        let fi = self.next_file;
        if !self.files[fi].done {
            self.next_file = if fi + 1 == n { 0 } else { fi + 1 };
            return Some(fi);
        }
        let fi = (1..n)
            .map(|k| (fi + k) % n)
            .find(|&i| !self.files[i].done)?;
        self.next_file = (fi + 1) % n;
        Some(fi)
    }

    /// The next operation of this thread.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> Op {
        if self.round_over {
            if let Some(op) = self.between_rounds(rng) {
                return op;
            }
        }
        if self.backlog > 0 {
            if let Some(op) = self.backlog_read() {
                return op;
            }
        }
        if self.sync_due {
            let n = self.files.len();
            let fi = (0..n)
                .map(|k| (self.next_file + k) % n)
                .find(|&i| !self.files[i].done)
                .unwrap_or(self.next_file);
            // fio opens the file (dropping its pages) before it syncs it.
            if self.drops_due > 0 {
                if let Some(op) = self.take_drop(fi) {
                    return op;
                }
            }
            self.sync_due = false;
            self.next_file = (fi + 1) % n;
            if self.service.is_some() {
                self.served(fi, rng);
            }
            return Op::Fsync(fi as u32);
        }
        if self.drops_due > 0 {
            // Files take turns, so the next request goes to `next_file`.
            if let Some(op) = self.take_drop(self.next_file) {
                return op;
            }
        }
        let dir = match self.access.mix {
            Mix::Read => 0,
            Mix::Write => 1,
            Mix::Trim => 2,
            Mix::TrimWrite => return self.next_trim_write(rng),
            Mix::Share { read_pct } => usize::from(rng.below(100) >= read_pct as u64),
            Mix::Interleaved { reads_per_write } => {
                usize::from(rng.next_f64() >= reads_per_write / (1.0 + reads_per_write))
            }
        };
        // A request longer than every region is cut to the longest one, so that a fresh
        // round always has a file it fits in.
        let mut len = self.size(dir, rng).min(self.longest);
        let (fi, rel) = if self.zones.is_some() {
            match self.next_zoned(dir, &mut len, rng) {
                Ok(at) => at,
                Err(op) => return op,
            }
        } else {
            match self.access.order {
                Order::Sequential => {
                    let Some((fi, at)) = self.next_sequential_file(dir, len) else {
                        self.files_done();
                        return self.next(rng);
                    };
                    if self.drops_due > 0 && self.files[fi].drop_due {
                        // Wrapped in place: the drop comes first, the file keeps its turn.
                        self.next_file = fi;
                        return self.take_drop(fi).unwrap_or(Op::DropCache(fi as u32));
                    }
                    let room = self.files[fi].length - at;
                    if len > room {
                        len = self.size_within(dir, rng, room);
                    }
                    self.files[fi].pos[dir] = at + len;
                    (fi, at)
                }
                Order::Random { .. } => loop {
                    let Some(fi) = self.next_random_file() else {
                        self.files_done();
                        return self.next(rng);
                    };
                    if self.drops_due > 0 && self.files[fi].drop_due {
                        // Past a done file to one opened again: its drop comes first.
                        self.next_file = fi;
                        return self.take_drop(fi).unwrap_or(Op::DropCache(fi as u32));
                    }
                    match self.files[fi].draw(dir, &mut len, self.align, &self.runs, rng) {
                        Draw::At(at) => {
                            let f = &self.files[fi];
                            len = len.min(f.length - at.min(f.length)).max(1);
                            break (fi, at);
                        }
                        Draw::Wrapped => {
                            self.next_file = fi;
                            return Op::DropCache(fi as u32);
                        }
                        Draw::UsedUp => match self.map_used_up(fi) {
                            Wrap::Done => {}
                            Wrap::Drop => {
                                self.next_file = fi;
                                return Op::DropCache(fi as u32);
                            }
                            Wrap::Again => {
                                self.next_file = fi;
                            }
                        },
                    }
                },
            }
        };
        if self.service.is_some() {
            self.served(fi, rng);
        }
        let f = &self.files[fi];
        let io = Io {
            file: fi as u32,
            offset: f.offset + rel,
            len: len as u32,
        };
        self.count(len);
        match dir {
            1 => self.wrote(io),
            0 => {
                // fio's last_ddir: a read of the mix holds back a backlog's read-back too.
                self.last_was_read = true;
                self.not_written(Op::Read(io))
            }
            _ => self.not_written(Op::Trim(io)),
        }
    }

    /// File `fi` is done for the round (fio closes it there).
    #[cold]
    fn closing(&mut self, fi: usize) {
        if let Some(c) = &mut self.closed {
            c.push(fi as u32);
        }
    }

    /// The files done since the last call (only for a job whose requests are logged).
    pub fn take_closed(&mut self) -> Option<std::vec::Drain<'_, u32>> {
        self.closed.as_mut().map(|c| c.drain(..))
    }

    /// File `fi` served the request: where the next one goes, as the job's file service
    /// says.
    #[cold]
    fn served(&mut self, fi: usize, rng: &mut Rng) {
        if let Some(s) = &mut self.service {
            self.next_file = s.after(fi, &self.files, rng);
        }
    }

    /// Hand out a read or trim: at a multiple of `sync_every` writes, a sync comes before
    /// the next request again.
    #[inline(always)]
    fn not_written(&mut self, op: Op) -> Op {
        // No store on the usual path (no fsync=N, or writes not at a multiple).
        if self.at_sync_multiple {
            self.sync_due = true;
        }
        op
    }

    /// fio's check_get_verify: the next read of a batch under way, or of one that starts
    /// now (`backlog` writes wait and the last request was no read).
    #[cold]
    fn backlog_read(&mut self) -> Option<Op> {
        let w = self.written.as_mut()?;
        if w.len() == 0 {
            return None;
        }
        if self.batch_left == 0 {
            if self.last_was_read || !(w.len() as u64).is_multiple_of(self.backlog) {
                return None;
            }
            self.batch_left = self.backlog_batch;
        }
        let io = w.pop_first()?;
        self.batch_left -= 1;
        self.last_was_read = true;
        self.done_bytes += io.len as u64;
        Some(self.not_written(Op::ReadBack(io)))
    }

    /// Count a write (a sync may be due after it) and hand it out.
    fn wrote(&mut self, io: Io) -> Op {
        if let Some(w) = &mut self.written {
            w.push(io);
            self.last_was_read = false;
        }
        self.writes += 1;
        if self.sync_every > 0 {
            self.at_sync_multiple = self.writes.is_multiple_of(self.sync_every);
            self.sync_due = self.at_sync_multiple;
        }
        Op::Write(io)
    }

    /// Trim then write (see the module comment): the next file in turn, then its direction.
    fn next_trim_write(&mut self, rng: &mut Rng) -> Op {
        let random = !self.access.is_sequential();
        let n = self.files.len();
        loop {
            let Some(fi) = (0..n)
                .map(|k| (self.next_file + k) % n)
                .find(|&i| !self.files[i].done)
            else {
                self.files_done();
                return self.next(rng);
            };
            let trim = self.files[fi].last_start[0] == self.files[fi].last_start[1];
            let dir = if trim { 2 } else { 1 };
            let mut len = if random && !trim {
                self.files[fi].trim_len
            } else if random {
                self.size(dir, rng).min(self.longest)
            } else {
                let mut pair = self
                    .pair_sizes
                    .take()
                    .unwrap_or_else(|| [rng.clone(), rng.clone()]);
                let f = &self.files[fi];
                let room = f.length.saturating_sub(f.pos[dir]);
                let mut len = self.size(dir, &mut pair[dir - 1]).min(self.longest);
                if len > room && self.min_sizes[dir] <= room {
                    len = self.size_within(dir, &mut pair[dir - 1], room);
                }
                self.pair_sizes = Some(pair);
                len
            };
            let f = &mut self.files[fi];
            let rel = match (random, trim) {
                (true, true) => {
                    let at = match f.draw(2, &mut len, self.align, &self.runs, rng) {
                        Draw::At(at) => at,
                        Draw::Wrapped => {
                            self.next_file = fi;
                            return Op::DropCache(fi as u32);
                        }
                        Draw::UsedUp => {
                            match self.map_used_up(fi) {
                                Wrap::Done => {}
                                Wrap::Drop => {
                                    self.next_file = fi;
                                    return Op::DropCache(fi as u32);
                                }
                                Wrap::Again => self.next_file = fi,
                            }
                            continue;
                        }
                    };
                    if at == f.last_start[1] {
                        // The same block again: fio moves the write's mark so that the write
                        // of this trim still follows.
                        f.last_start[0] = f.last_start[0].wrapping_sub(1);
                    }
                    at
                }
                (true, false) => f.last_start[1],
                (false, _) => {
                    if f.pos[dir] + len > f.length {
                        // This direction has reached the region's end: the file is done.
                        f.done = true;
                        self.closing(fi);
                        continue;
                    }
                    let at = f.pos[dir];
                    f.pos[dir] += len;
                    at
                }
            };
            f.last_start[dir - 1] = rel;
            let len = len.min(f.length - rel.min(f.length)).max(1);
            if trim {
                f.trim_len = len;
            }
            let io = Io {
                file: fi as u32,
                offset: f.offset + rel,
                len: len as u32,
            };
            self.next_file = (fi + 1) % n;
            if self.service.is_some() {
                self.served(fi, rng);
            }
            self.count(len);
            if trim {
                return self.not_written(Op::Trim(io));
            }
            // Only the writes count toward the job's bytes (fio's io_issue_bytes of a
            // trimwrite job).
            self.round_writes += len;
            if self.issued + self.round_writes >= self.budget {
                self.round_over = true;
            }
            return self.wrote(io);
        }
    }
}

#[cfg(test)]
mod tests;
