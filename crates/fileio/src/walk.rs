//! A job's own walk over the regions of its named files (fio's model, [`JobIo`]).
//!
//! Unlike sysbench's shared stream ([`crate::pattern`]), nothing is shared between threads:
//! each has its files' positions, its random map and its byte count.
//!
//! - Files take turns, one request each (fio's `file_service_type=roundrobin`).
//! - Sequential: each direction keeps its own position per file (reads and writes of a mixed
//!   job each walk the file from its start); a request never crosses the region's end. A file
//!   whose next request would cross it is done for the round and the others take its turns,
//!   as fio closes an exhausted file; a region that does not divide by the block size
//!   leaves its tail untouched, as fio does.
//! - Random: offsets are multiples of the alignment inside the region. With the random map
//!   every aligned block is used once per round, in random order: a drawn block already used
//!   moves to the next free one, as fio's map does; a file whose map is used up is done for
//!   the round. A skew ([`plumb_core::random::Skew`], fio's `random_distribution`) draws
//!   each file's blocks with its own hot set and keeps no map (as in fio, where a
//!   non-uniform distribution turns the map off); a file's hot set is placed with the
//!   thread's random stream at its first draw, unless a center fixes it.
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
//! - Verify: a round's writes are read back in the order written when the job keeps a
//!   random map, otherwise by file and offset, a later write replacing the earlier ones it
//!   overlaps (fio's log_io_piece keeps those in a tree).
//! - After every N writes (fio's `fsync=N`) the next request is a sync, issued only if the
//!   job goes on; it takes the next file's round-robin turn and syncs that file, because fio
//!   decides on the sync when it fetches the next request, after picking its file.
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
//!   position and size, so with equal sizes every block is trimmed, then written. Randomly
//!   the trim draws the block and the write covers exactly the range just trimmed; a trim
//!   drawn where the previous one was still makes the next request a write, as in fio. Only
//!   the writes count toward `io_size` (fio's byte limit of a trimwrite job is its writes).

use plumb_core::random::{Rng, SkewedBlocks};

use crate::access::{Access, Mix, Order};
use crate::block_map::BlockMap;
use crate::pattern::{Io, Op};
use crate::spec::{JobIo, SizeChoice};

/// fio's `-1ULL`: no request of that direction yet.
const NONE: u64 = u64::MAX;

struct FileWalk {
    offset: u64,
    length: u64,
    /// Next sequential position per direction (read, write, trim), relative to `offset`.
    pos: [u64; 3],
    /// No further sequential request fits in this round.
    done: bool,
    map: Option<BlockMap>,
    blocks: u64,
    /// Non-uniform blocks (none: uniform).
    skew: Option<SkewedBlocks>,
    /// Random orders with a stride: requests left in the current sequential run, per
    /// direction.
    run_left: [u64; 3],
    /// Its cached pages are dropped before its next request.
    drop_due: bool,
    /// Trim then write: where the latest write and trim started (relative; [`NONE`] before
    /// the first), and the latest trim's length.
    last_start: [u64; 2],
    trim_len: u64,
}

impl FileWalk {
    /// Back to the start of the region, the random map cleared (fio's fio_file_reset, when
    /// it opens the file for a new round).
    fn reset(&mut self) {
        self.pos = [0; 3];
        self.run_left = [0; 3];
        self.done = false;
        self.last_start = [NONE; 2];
        if let Some(m) = &mut self.map {
            m.clear();
        }
    }

    /// A random offset for a request of `len` bytes in direction `dir` (relative); None
    /// when the file's random map is used up (the caller decides what follows). A request
    /// longer than a block takes the free blocks after the one drawn and is cut where a
    /// used one starts, as fio's mark_random_map cuts it.
    fn draw(
        &mut self,
        dir: usize,
        len: &mut u64,
        align: u64,
        stride: Option<u64>,
        rng: &mut Rng,
    ) -> Option<u64> {
        if self.run_left[dir] > 0 && self.pos[dir] + *len <= self.length {
            // rw=randread:N: sequential between the random draws.
            self.run_left[dir] -= 1;
            let at = self.pos[dir];
            if let Some(m) = &mut self.map {
                m.mark(at / align);
            }
            self.pos[dir] = at + *len;
            return Some(at);
        }
        let drawn = match &mut self.skew {
            None => rng.below(self.blocks),
            Some(s) => {
                if s.needs_place() {
                    s.place(rng.next_u64());
                }
                s.sample(rng)
            }
        };
        let b = match &mut self.map {
            Some(m) => {
                let b = m.take(drawn)?;
                if *len > align {
                    let more = m.mark_free_run(b + 1, len.div_ceil(align) - 1);
                    *len = (*len).min((1 + more) * align);
                }
                b
            }
            None => drawn,
        };
        if let Some(n) = stride {
            self.run_left[dir] = n.saturating_sub(1);
            self.pos[dir] = b * align + *len;
        }
        Some(b * align)
    }
}

/// What follows a random file's used-up map.
enum Wrap {
    /// The file is done for the round (a job with a byte limit).
    Done,
    /// Its cached pages are dropped first; it keeps its turn.
    Drop,
    /// Draw again from the cleared map.
    Again,
}

/// One thread's walk.
pub struct JobWalk {
    access: Access,
    files: Vec<FileWalk>,
    /// Read, write and trim sizes.
    sizes: [SizeChoice; 3],
    align: u64,
    next_file: usize,
    /// Bytes a round issues at most ([`JobIo::round_bytes`]); `u64::MAX`: no limit.
    round_cap: u64,
    /// Bytes the round has issued, and where it ends: its cap, or what is left of the
    /// job's bytes when less (a trimwrite job's writes are counted apart).
    in_round: u64,
    round_limit: u64,
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
    sync_due: bool,
    /// The round's writes, read back once it ends (verify), and how far the read-back got
    /// (`None`: the round's requests are still going).
    written: Option<Vec<Io>>,
    reading_back: Option<usize>,
    /// The read-back goes in the order written (a random map: no block twice); otherwise by
    /// file and offset, each block once (fio's io_hist tree).
    read_back_in_order: bool,
    /// The longest region: no request is longer.
    longest: u64,
    stride: Option<u64>,
    /// Files marked `drop_due`.
    drops_due: usize,
    /// fio drops a file's cached pages each time it opens it (the first request of each
    /// round, and of the read-back).
    drop_on_open: bool,
    /// ... and when a time-based job starts a file over in place (not under direct I/O).
    drop_on_wrap: bool,
    /// The first request is still to come (it goes through the cold path, which keeps the
    /// random state there when rounds repeat it).
    started: bool,
    /// The random state at the first request, put back at each round's start (fio's
    /// `randrepeat` seeds its generators again for each round).
    first_rng: Option<Rng>,
    repeat_each_round: bool,
}

impl JobWalk {
    pub fn new(access: Access, job: &JobIo) -> JobWalk {
        let random = !access.is_sequential();
        let align = job.align.max(1);
        let skewed = random && !job.skew.is_uniform();
        // Regions of one length share the skew's constants (zipf's sum is long to make).
        let mut made: Vec<SkewedBlocks> = Vec::new();
        let files = job
            .files
            .iter()
            .map(|f| {
                let blocks = (f.length / align).max(1);
                let skew = if skewed {
                    match made.iter().find(|s| s.blocks() == blocks) {
                        Some(s) => Some(s.clone()),
                        None => {
                            let s = SkewedBlocks::new(job.skew, blocks);
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
                    map: (random && job.random_map && !skewed).then(|| BlockMap::new(blocks)),
                    blocks,
                    skew,
                    run_left: [0; 3],
                    drop_due: job.invalidate,
                    last_start: [NONE; 2],
                    trim_len: 0,
                }
            })
            .collect();
        let bounded = job.passes.is_some();
        let regions: u64 = job.files.iter().map(|f| f.length).sum();
        let pass_bytes = job.pass_bytes.max(1);
        // fio 3.33 reads back what a job wrote after each of its rounds (thread_main calls
        // do_verify after every do_io), time-based or not.
        let written = job
            .verify
            .filter(|v| v.after_writes && access.mix == Mix::Write)
            .map(|_| Vec::new());
        let loops = job.passes.unwrap_or(0).max(1);
        let budget = if bounded {
            pass_bytes.saturating_mul(loops)
        } else {
            u64::MAX
        };
        let round_cap = job.round_bytes.unwrap_or(u64::MAX).max(1);
        JobWalk {
            access,
            files,
            sizes: job.sizes.by_dir().map(Clone::clone),
            align,
            next_file: 0,
            round_cap,
            in_round: 0,
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
            round_over: job.repeat_each_round,
            finished: false,
            rounds_end_when_done: bounded || (!random && job.files.len() > 1),
            sync_every: job.sync_every_writes,
            writes: 0,
            sync_due: false,
            read_back_in_order: random && job.random_map && !skewed,
            written,
            reading_back: None,
            longest: job.files.iter().map(|f| f.length).max().unwrap_or(1),
            stride: job.stride.filter(|&n| n > 0),
            drops_due: if job.invalidate { job.files.len() } else { 0 },
            drop_on_open: job.invalidate,
            // Without a map a random file never starts over (fio); in order, one file
            // wraps in place.
            drop_on_wrap: job.invalidate_on_wrap
                && if random {
                    job.random_map && !skewed
                } else {
                    job.files.len() == 1
                },
            started: !job.repeat_each_round,
            first_rng: None,
            repeat_each_round: job.repeat_each_round,
        }
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
                if !w.is_empty() {
                    if !self.read_back_in_order {
                        *w = by_file_and_offset(w);
                    }
                    if self.drop_on_open {
                        self.drop_all();
                    }
                }
            }
            return Some(Op::Drain);
        };
        if let Some(w) = &self.written {
            if let Some(&io) = w.get(i) {
                if self.drops_due > 0 {
                    if let Some(op) = self.take_drop(io.file as usize) {
                        return Some(op);
                    }
                }
                self.reading_back = Some(i + 1);
                self.done_bytes += io.len as u64;
                return Some(Op::Read(io));
            }
        }
        let read_back = self.written.as_mut().is_some_and(|w| {
            let any = !w.is_empty();
            w.clear();
            any
        });
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
        if self.drop_on_open {
            self.drop_all();
        } else {
            for f in &mut self.files {
                f.drop_due = false;
            }
            self.drops_due = 0;
        }
        None
    }

    /// fio's keep_running: the first `loops` rounds run, then more while the bytes done
    /// fall short of `io_size` by a largest request; a round with no bytes left to issue
    /// ends the job.
    fn keep_running(&self) -> bool {
        if self.loops == 0 {
            return true;
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
            SizeChoice::Range { min, max } => {
                let steps = (max - min) / min.max(&1) + 1;
                min + rng.below(steps) * min
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

    /// The largest request of the directions this walk issues.
    fn largest(&self) -> u64 {
        let [r, w, t] = &self.sizes;
        match self.access.mix {
            Mix::Trim => t.max(),
            Mix::TrimWrite => w.max().max(t.max()),
            _ => r.max().max(w.max()),
        }
    }

    /// The next file in turn whose next request of `len` bytes in direction `dir` fits, or
    /// `None` when none does (each file that does not fit is done for the round; the only
    /// file of a time-based job starts over in that direction instead).
    fn next_sequential_file(&mut self, dir: usize, len: u64) -> Option<usize> {
        let n = self.files.len();
        for k in 0..n {
            let fi = (self.next_file + k) % n;
            let f = &mut self.files[fi];
            if f.done {
                continue;
            }
            // rw=write:N leaves a hole after each request (not before the first); a hole
            // that reaches the region's end starts it over, as fio's holed I/O does.
            if let Some(hole) = self.stride.filter(|_| f.pos[dir] > 0) {
                let next = f.pos[dir] + hole;
                f.pos[dir] = if next >= f.length { 0 } else { next };
            }
            if f.pos[dir] + len <= f.length {
                self.next_file = (fi + 1) % n;
                return Some(fi);
            }
            if !self.rounds_end_when_done && len <= f.length {
                // fio's get_next_seq_offset: a time-based job's only file wraps in place,
                // dropping its pages unless direct.
                f.pos[dir] = 0;
                if self.drop_on_wrap && !f.drop_due {
                    f.drop_due = true;
                    self.drops_due += 1;
                }
                self.next_file = (fi + 1) % n;
                return Some(fi);
            }
            f.done = true;
        }
        None
    }

    /// A random file's map is used up: what follows (see [`Wrap`]).
    #[cold]
    fn map_used_up(&mut self, fi: usize) -> Wrap {
        let f = &mut self.files[fi];
        if self.rounds_end_when_done {
            f.done = true;
            return Wrap::Done;
        }
        // fio's get_next_rand_block: a time-based job starts the file over in place.
        if let Some(m) = &mut f.map {
            m.clear();
        }
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
        let (fi, rel) = match self.access.order {
            Order::Sequential => {
                let Some(fi) = self.next_sequential_file(dir, len) else {
                    self.files_done();
                    return self.next(rng);
                };
                if self.drops_due > 0 && self.files[fi].drop_due {
                    // Wrapped in place: the drop comes first, the file keeps its turn.
                    self.next_file = fi;
                    return self.take_drop(fi).unwrap_or(Op::DropCache(fi as u32));
                }
                let f = &mut self.files[fi];
                let at = f.pos[dir];
                f.pos[dir] += len;
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
                let (align, stride) = (self.align, self.stride);
                match self.files[fi].draw(dir, &mut len, align, stride, rng) {
                    Some(at) => break (fi, at),
                    None => match self.map_used_up(fi) {
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
        };
        let f = &self.files[fi];
        len = len.min(f.length - rel.min(f.length)).max(1);
        let io = Io {
            file: fi as u32,
            offset: f.offset + rel,
            len: len as u32,
        };
        self.count(len);
        match dir {
            0 => Op::Read(io),
            1 => self.wrote(io),
            _ => Op::Trim(io),
        }
    }

    /// Count a write (a sync may be due after it) and hand it out.
    fn wrote(&mut self, io: Io) -> Op {
        if let Some(w) = &mut self.written {
            w.push(io);
        }
        self.writes += 1;
        if self.sync_every > 0 && self.writes.is_multiple_of(self.sync_every) {
            self.sync_due = true;
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
            let mut len = if trim || !random {
                self.size(dir, rng).min(self.longest)
            } else {
                self.files[fi].trim_len
            };
            let (align, stride) = (self.align, self.stride);
            let f = &mut self.files[fi];
            let rel = match (random, trim) {
                (true, true) => {
                    let Some(at) = f.draw(2, &mut len, align, stride, rng) else {
                        match self.map_used_up(fi) {
                            Wrap::Done => {}
                            Wrap::Drop => {
                                self.next_file = fi;
                                return Op::DropCache(fi as u32);
                            }
                            Wrap::Again => self.next_file = fi,
                        }
                        continue;
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
            self.count(len);
            if trim {
                return Op::Trim(io);
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

/// A round's writes in fio's verify order without a random map: by file, then offset,
/// a later write replacing every earlier one it overlaps (fio's io_hist rb-tree).
fn by_file_and_offset(written: &[Io]) -> Vec<Io> {
    let mut tree: std::collections::BTreeMap<(u32, u64), u32> = Default::default();
    for io in written {
        let end = io.offset + io.len as u64;
        // Earlier writes that overlap this one (the tree holds no overlaps): the one
        // starting before it if it reaches into it, and those starting inside it.
        if let Some((&k, &len)) = tree.range((io.file, 0)..(io.file, io.offset)).next_back() {
            if k.1 + len as u64 > io.offset {
                tree.remove(&k);
            }
        }
        while let Some((&k, _)) = tree.range((io.file, io.offset)..(io.file, end)).next() {
            tree.remove(&k);
        }
        tree.insert((io.file, io.offset), io.len);
    }
    tree.into_iter()
        .map(|((file, offset), len)| Io { file, offset, len })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{BlockSizes, NamedFile};
    use plumb_core::random::{RandType, Skew};
    use std::collections::HashMap;

    fn job(files: &[(u64, u64)], bs: u64) -> JobIo {
        JobIo {
            files: files
                .iter()
                .enumerate()
                .map(|(i, &(offset, length))| NamedFile {
                    path: format!("f{i}").into(),
                    offset,
                    length,
                })
                .collect(),
            sizes: BlockSizes::fixed(bs),
            align: bs,
            random_map: true,
            skew: Skew::Uniform,
            think: None,
            pass_bytes: files.iter().map(|f| f.1).sum(),
            passes: Some(1),
            round_bytes: None,
            repeat_each_round: false,
            sync_every_writes: 0,
            lay_out_data: true,
            allocate: false,
            unlink: false,
            invalidate: false,
            invalidate_on_wrap: false,
            advice: None,
            create_at_open: false,
            fill_device: false,
            queue_low: None,
            batch: None,
            stride: None,
            log: None,
            verify: None,
        }
    }

    /// Every operation up to the end, the drains between rounds left out ([`spelled`]
    /// shows them).
    fn run(w: &mut JobWalk) -> Vec<Op> {
        let mut rng = Rng::new(3, 0);
        let mut v = Vec::new();
        loop {
            match w.next(&mut rng) {
                Op::Done => return v,
                Op::Drain => {}
                op => v.push(op),
            }
        }
    }

    #[test]
    fn sequential_files_take_turns_from_their_offsets() {
        let mut w = JobWalk::new(Access::seq_read(), &job(&[(0, 8192), (4096, 8192)], 4096));
        let ops = run(&mut w);
        let r = |file, offset| {
            Op::Read(Io {
                file,
                offset,
                len: 4096,
            })
        };
        assert_eq!(ops, [r(0, 0), r(1, 4096), r(0, 4096), r(1, 8192)]);
    }

    #[test]
    fn random_map_uses_every_block_once_per_pass() {
        let mut j = job(&[(0, 1 << 20)], 4096);
        j.passes = Some(3);
        let mut w = JobWalk::new(Access::rand_write(), &j);
        let ops = run(&mut w);
        assert_eq!(ops.len(), 3 * 256);
        for pass in ops.chunks(256) {
            let mut seen = HashMap::new();
            for o in pass {
                let Op::Write(io) = o else { panic!("{o:?}") };
                assert_eq!(io.offset % 4096, 0);
                *seen.entry(io.offset).or_insert(0) += 1;
            }
            assert_eq!(seen.len(), 256);
        }
    }

    #[test]
    fn share_mix_and_sync_every_writes() {
        let mut j = job(&[(0, 4 << 20)], 4096);
        j.sync_every_writes = 4;
        let mut w = JobWalk::new(
            Access::new(Mix::Share { read_pct: 70 }, Order::Sequential),
            &j,
        );
        let ops = run(&mut w);
        let reads = ops.iter().filter(|o| matches!(o, Op::Read(_))).count();
        let writes = ops.iter().filter(|o| matches!(o, Op::Write(_))).count();
        let syncs = ops.iter().filter(|o| matches!(o, Op::Fsync(_))).count();
        assert_eq!(reads + writes, 1024);
        assert!((650..780).contains(&reads), "{reads}");
        // A sync comes after every 4th write only when another request follows it.
        let ends_on_sync_point = matches!(ops.last(), Some(Op::Write(_))) && writes % 4 == 0;
        assert_eq!(syncs, writes / 4 - usize::from(ends_on_sync_point));
        // Each direction walks the file on its own from offset 0.
        let first_write = ops.iter().find_map(|o| match o {
            Op::Write(io) => Some(io.offset),
            _ => None,
        });
        assert_eq!(first_write, Some(0));
    }

    fn io(file: u32, offset: u64) -> Io {
        Io {
            file,
            offset,
            len: 4096,
        }
    }

    #[test]
    fn a_region_tail_shorter_than_a_block_is_left_untouched() {
        // fio's size=32k over nrfiles=3: 10922 bytes each, two whole blocks per file.
        let j = job(&[(0, 10922), (0, 10922), (0, 10922)], 4096);
        let ops = run(&mut JobWalk::new(Access::seq_read(), &j));
        let want: Vec<Op> = [0, 4096]
            .iter()
            .flat_map(|&o| (0..3).map(move |f| Op::Read(io(f, o))))
            .collect();
        assert_eq!(ops, want);
    }

    #[test]
    fn io_size_beyond_the_regions_starts_the_files_over_while_a_block_fits() {
        let mut j = job(&[(0, 10922), (0, 10922), (0, 10922)], 4096);
        j.pass_bytes = 64 << 10;
        let ops = run(&mut JobWalk::new(Access::seq_write(), &j));
        // Two rounds of 6 blocks (48 KiB), then 4 of the third round reach 64 KiB.
        assert_eq!(ops.len(), 16);
        let w = |f, o| Op::Write(io(f, o));
        assert_eq!(ops[12..], [w(0, 0), w(1, 0), w(2, 0), w(0, 4096)]);
    }

    #[test]
    fn a_sync_takes_the_next_turn_and_only_when_the_job_goes_on() {
        let mut j = job(&[(0, 8192), (0, 8192)], 4096);
        j.sync_every_writes = 1;
        let ops = run(&mut JobWalk::new(Access::seq_write(), &j));
        let w = |f, o| Op::Write(io(f, o));
        assert_eq!(
            ops,
            [
                w(0, 0),
                Op::Fsync(1),
                w(0, 4096),
                Op::Fsync(1),
                w(1, 0),
                Op::Fsync(1),
                w(1, 4096)
            ]
        );
        j.sync_every_writes = 2;
        let ops = run(&mut JobWalk::new(Access::seq_write(), &j));
        assert_eq!(ops.iter().filter(|o| matches!(o, Op::Fsync(_))).count(), 1);
    }

    #[test]
    fn split_sizes_follow_their_weights() {
        // Without a map, so no request is cut where a used block starts.
        let mut j = job(&[(0, 64 << 20)], 4096);
        j.sizes.read = SizeChoice::Split(vec![(4096, 25), (65536, 75)]);
        j.random_map = false;
        let mut w = JobWalk::new(Access::rand_read(), &j);
        let ops = run(&mut w);
        let big = ops
            .iter()
            .filter(|o| matches!(o, Op::Read(io) if io.len == 65536))
            .count() as f64;
        let share = big / ops.len() as f64;
        assert!((0.70..0.80).contains(&share), "{share}");
        let bytes: u64 = ops
            .iter()
            .map(|o| match o {
                Op::Read(io) => io.len as u64,
                _ => 0,
            })
            .sum();
        assert!(bytes >= 64 << 20);
    }

    #[test]
    fn a_long_random_request_takes_the_free_blocks_after_its_own() {
        // 4k and 16k requests over a mapped region: every block once per round, none
        // twice (a request is cut where a used block starts, as fio's axmap_set_nr cuts it).
        let mut j = job(&[(0, 1 << 20)], 4096);
        j.sizes.read = SizeChoice::Split(vec![(4096, 50), (16384, 50)]);
        j.passes = Some(2);
        let mut w = JobWalk::new(Access::rand_read(), &j);
        let mut rng = Rng::new(7, 0);
        let mut rounds = vec![vec![0u8; 256]];
        let mut cut = 0;
        loop {
            match w.next(&mut rng) {
                Op::Read(io) => {
                    let r = rounds.last_mut().unwrap();
                    assert_eq!(io.offset % 4096, 0);
                    if io.len != 4096 && io.len != 16384 {
                        cut += 1;
                    }
                    for b in io.offset / 4096..(io.offset + io.len as u64) / 4096 {
                        r[b as usize] += 1;
                    }
                }
                Op::Drain => rounds.push(vec![0u8; 256]),
                Op::Done => break,
                o => panic!("{o:?}"),
            }
        }
        rounds.pop();
        assert_eq!(rounds.len(), 2);
        for r in &rounds {
            assert!(r.iter().all(|&n| n == 1), "{r:?}");
        }
        assert!(cut > 0, "some 16k requests met a used block");
    }

    #[test]
    fn no_pass_limit_runs_on() {
        let mut j = job(&[(0, 8192)], 4096);
        j.passes = None;
        let mut w = JobWalk::new(Access::seq_write(), &j);
        let mut rng = Rng::new(1, 0);
        let offs: Vec<u64> = (0..5)
            .map(|_| match w.next(&mut rng) {
                Op::Write(io) => io.offset,
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(offs, [0, 4096, 0, 4096, 0]);
    }

    #[test]
    fn holes_after_each_sequential_request_wrap_at_the_end() {
        // fio's rw=write:4k over 32 KiB: 0, 8k, 16k, 24k, then over again until 32 KiB done.
        let mut j = job(&[(0, 32768)], 4096);
        j.stride = Some(4096);
        let offs: Vec<u64> = run(&mut JobWalk::new(Access::seq_write(), &j))
            .iter()
            .map(|o| match o {
                Op::Write(io) => io.offset,
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(offs, [0, 8192, 16384, 24576, 0, 8192, 16384, 24576]);
    }

    #[test]
    fn random_runs_draw_a_new_offset_every_n_requests() {
        let mut j = job(&[(0, 1 << 20)], 4096);
        j.stride = Some(4);
        j.random_map = false;
        let ops = run(&mut JobWalk::new(Access::rand_read(), &j));
        let offs: Vec<u64> = ops
            .iter()
            .map(|o| match o {
                Op::Read(io) => io.offset,
                o => panic!("{o:?}"),
            })
            .collect();
        // Within each run of 4 that fits the region, the offsets follow on.
        let mut sequential = 0;
        for w in offs.windows(2) {
            if w[1] == w[0] + 4096 {
                sequential += 1;
            }
        }
        assert!(
            sequential >= offs.len() * 3 / 4 - 8,
            "{sequential} of {}",
            offs.len()
        );
    }

    fn trim(file: u32, offset: u64, len: u32) -> Op {
        Op::Trim(Io { file, offset, len })
    }

    fn write(file: u32, offset: u64, len: u32) -> Op {
        Op::Write(Io { file, offset, len })
    }

    #[test]
    fn trims_walk_with_their_own_size() {
        let mut j = job(&[(0, 8192)], 4096);
        j.sizes.trim = SizeChoice::Fixed(2048);
        j.pass_bytes = 8192;
        let ops = run(&mut JobWalk::new(
            Access::new(Mix::Trim, Order::Sequential),
            &j,
        ));
        assert_eq!(
            ops,
            [
                trim(0, 0, 2048),
                trim(0, 2048, 2048),
                trim(0, 4096, 2048),
                trim(0, 6144, 2048)
            ]
        );
    }

    #[test]
    fn trimwrite_trims_each_file_s_block_then_writes_it() {
        // fio 3.33, trimwrite over nrfiles=2: each file's turn decides its direction.
        let j = job(&[(0, 8192), (0, 8192)], 4096);
        let ops = run(&mut JobWalk::new(
            Access::new(Mix::TrimWrite, Order::Sequential),
            &j,
        ));
        assert_eq!(
            ops,
            [
                trim(0, 0, 4096),
                trim(1, 0, 4096),
                write(0, 0, 4096),
                write(1, 0, 4096),
                trim(0, 4096, 4096),
                trim(1, 4096, 4096),
                write(0, 4096, 4096),
                write(1, 4096, 4096)
            ]
        );
    }

    #[test]
    fn trimwrite_with_other_sizes_follows_fio_s_last_start_rule() {
        // fio 3.33 with bs=4k,8k,2k over 32k: the positions part after the second trim,
        // so the writes run on without trims, and only the writes count toward the size.
        let mut j = job(&[(0, 32768)], 8192);
        j.sizes.trim = SizeChoice::Fixed(2048);
        let ops = run(&mut JobWalk::new(
            Access::new(Mix::TrimWrite, Order::Sequential),
            &j,
        ));
        assert_eq!(
            ops,
            [
                trim(0, 0, 2048),
                write(0, 0, 8192),
                trim(0, 2048, 2048),
                write(0, 8192, 8192),
                write(0, 16384, 8192),
                write(0, 24576, 8192)
            ]
        );
    }

    #[test]
    fn randtrimwrite_writes_exactly_the_range_just_trimmed() {
        let mut j = job(&[(0, 1 << 20)], 4096);
        j.passes = Some(2);
        let ops = run(&mut JobWalk::new(
            Access::new(
                Mix::TrimWrite,
                Order::Random {
                    dist: RandType::Uniform,
                },
            ),
            &j,
        ));
        assert_eq!(ops.len(), 2 * 2 * 256);
        for pair in ops.chunks(2) {
            let (Op::Trim(t), Op::Write(w)) = (pair[0], pair[1]) else {
                panic!("{pair:?}")
            };
            assert_eq!(t, w);
        }
        for pass in ops.chunks(512) {
            let trimmed: std::collections::HashSet<u64> = pass
                .iter()
                .filter_map(|o| match o {
                    Op::Trim(io) => Some(io.offset),
                    _ => None,
                })
                .collect();
            assert_eq!(trimmed.len(), 256, "every block once per pass");
        }
    }

    /// Offsets of a random read walk, counted per block.
    fn block_counts(j: &JobIo, seed: u64) -> HashMap<(u32, u64), u64> {
        let mut w = JobWalk::new(Access::rand_read(), j);
        let mut rng = Rng::new(seed, 0);
        let mut c = HashMap::new();
        loop {
            match w.next(&mut rng) {
                Op::Read(io) => *c.entry((io.file, io.offset)).or_insert(0) += 1,
                Op::Done => return c,
                Op::Drain => {}
                o => panic!("{o:?}"),
            }
        }
    }

    fn hottest_tenth_share(c: &HashMap<(u32, u64), u64>, blocks: usize) -> f64 {
        let mut v: Vec<u64> = c.values().copied().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = v.iter().sum();
        v.iter().take(blocks / 10).sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn zipf_concentrates_io_on_few_blocks_and_drops_the_map() {
        // 1024 blocks, 20 passes' worth of reads.
        let mut j = job(&[(0, 4 << 20)], 4096);
        j.pass_bytes = 80 << 20;
        let uniform = hottest_tenth_share(&block_counts(&j, 9), 1024);
        j.skew = Skew::Zipf {
            theta: 1.2,
            center: None,
        };
        let c = block_counts(&j, 9);
        let zipf = hottest_tenth_share(&c, 1024);
        assert!(uniform < 0.15, "uniform: {uniform}");
        assert!(zipf > 0.7, "zipf 1.2: {zipf}");
        // No map: blocks repeat within a pass and some are never touched.
        assert!(c.len() < 1024, "{}", c.len());
        for &(_, off) in c.keys() {
            assert!(off % 4096 == 0 && off < 4 << 20);
        }
    }

    #[test]
    fn each_file_gets_its_own_hot_set_unless_a_center_fixes_it() {
        let mut j = job(&[(0, 4 << 20), (0, 4 << 20)], 4096);
        j.pass_bytes = 80 << 20;
        j.skew = Skew::Pareto {
            h: 0.1,
            center: None,
        };
        let hottest = |c: &HashMap<(u32, u64), u64>, file: u32| {
            c.iter()
                .filter(|(k, _)| k.0 == file)
                .max_by_key(|(_, n)| **n)
                .map(|(k, _)| k.1)
                .unwrap()
        };
        let c = block_counts(&j, 10);
        assert_ne!(hottest(&c, 0), hottest(&c, 1));
        j.skew = Skew::Pareto {
            h: 0.1,
            center: Some(0.5),
        };
        let c = block_counts(&j, 10);
        assert_eq!(hottest(&c, 0), 512 * 4096);
        assert_eq!(hottest(&c, 1), 512 * 4096);
    }

    #[test]
    fn a_region_offset_moves_the_skewed_blocks_with_it() {
        let mut j = job(&[(1 << 20, 1 << 20)], 4096);
        j.pass_bytes = 16 << 20;
        j.skew = Skew::Normal {
            spread_pct: 10.0,
            center: Some(0.25),
        };
        let c = block_counts(&j, 11);
        for &(_, off) in c.keys() {
            assert!((1 << 20..2 << 20).contains(&off), "{off}");
        }
        assert!(hottest_tenth_share(&c, 256) > 0.3);
    }

    #[test]
    fn sequential_orders_ignore_the_skew() {
        let mut j = job(&[(0, 16384)], 4096);
        j.skew = Skew::Zipf {
            theta: 1.2,
            center: None,
        };
        let mut w = JobWalk::new(Access::seq_read(), &j);
        let offs: Vec<u64> = run(&mut w)
            .into_iter()
            .map(|o| match o {
                Op::Read(io) => io.offset,
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(offs, [0, 4096, 8192, 12288]);
    }

    /// The first `n` operations, spelled `D0` (drop file 0's cache), `R1`, `W0`, `T0`, `S0`, `-`
    /// (drain), up to the end.
    fn spelled(w: &mut JobWalk, n: usize) -> String {
        let mut rng = Rng::new(3, 0);
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(match w.next(&mut rng) {
                Op::Done => break,
                Op::DropCache(f) => format!("D{f}"),
                Op::Read(io) => format!("R{}", io.file),
                Op::Write(io) => format!("W{}", io.file),
                Op::Trim(io) => format!("T{}", io.file),
                Op::Fsync(f) => format!("S{f}"),
                Op::Drain => "-".into(),
            });
        }
        v.join(" ")
    }

    fn dropping(mut j: JobIo, on_wrap: bool) -> JobIo {
        j.invalidate = true;
        j.invalidate_on_wrap = on_wrap;
        j
    }

    #[test]
    fn each_pass_drops_each_file_before_its_first_request() {
        let mut j = dropping(job(&[(0, 16384)], 4096), true);
        j.passes = Some(3);
        for access in [Access::seq_read(), Access::rand_read()] {
            assert_eq!(
                spelled(&mut JobWalk::new(access, &j), 100),
                "D0 R0 R0 R0 R0 - D0 R0 R0 R0 R0 - D0 R0 R0 R0 R0 -"
            );
        }
        // Several files: each just before its turn, as fio opens them when it first uses
        // them.
        let mut j = dropping(job(&[(0, 8192), (0, 8192)], 4096), false);
        j.passes = Some(2);
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
            "D0 W0 D1 W1 W0 W1 - D0 W0 D1 W1 W0 W1 -"
        );
        // io_size beyond the regions: fio opens the files again for the rest.
        let mut j = dropping(job(&[(0, 8192)], 4096), false);
        j.pass_bytes = 20480;
        for access in [Access::seq_read(), Access::rand_read()] {
            assert_eq!(
                spelled(&mut JobWalk::new(access, &j), 100),
                "D0 R0 R0 - D0 R0 R0 - D0 R0 -"
            );
        }
        j.invalidate = false;
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_read(), &j), 100),
            "R0 R0 - R0 R0 - R0 -"
        );
    }

    #[test]
    fn time_based_jobs_drop_where_fio_wraps_or_opens_again() {
        let timed = |files: &[(u64, u64)], on_wrap| {
            let mut j = dropping(job(files, 4096), on_wrap);
            j.passes = None;
            j
        };
        let one = timed(&[(0, 8192)], true);
        for access in [Access::seq_read(), Access::rand_read()] {
            assert_eq!(
                spelled(&mut JobWalk::new(access, &one), 7),
                "D0 R0 R0 D0 R0 R0 D0"
            );
        }
        // Direct I/O: fio drops nothing when a file wraps in place.
        let one = timed(&[(0, 8192)], false);
        for access in [Access::seq_read(), Access::rand_read()] {
            assert_eq!(
                spelled(&mut JobWalk::new(access, &one), 5),
                "D0 R0 R0 R0 R0"
            );
        }
        // Without a random map fio never starts a file over.
        let mut no_map = timed(&[(0, 8192)], true);
        no_map.random_map = false;
        assert_eq!(
            spelled(&mut JobWalk::new(Access::rand_read(), &no_map), 5),
            "D0 R0 R0 R0 R0"
        );
        // Several files in order: a new round (everything in flight completed first),
        // which opens them again, direct or not.
        let two = timed(&[(0, 4096), (0, 4096)], false);
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_read(), &two), 9),
            "D0 R0 D1 R1 - D0 R0 D1 R1"
        );
        let mut two = timed(&[(0, 4096), (0, 4096)], true);
        two.pass_bytes = 16384;
        assert_eq!(
            spelled(&mut JobWalk::new(Access::rand_read(), &two), 8),
            "D0 R0 D1 R1 D0 R0 D1 R1"
        );
    }

    #[test]
    fn the_read_back_drops_the_files_again() {
        let mut j = dropping(job(&[(0, 8192), (0, 8192)], 4096), false);
        j.verify = Some(crate::spec::VerifySpec {
            checksum: crate::verify::Checksum::Crc32c,
            after_writes: true,
            fatal: false,
        });
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
            "D0 W0 D1 W1 W0 W1 - D0 R0 R0 D1 R1 R1 -"
        );
    }

    fn verified(mut j: JobIo) -> JobIo {
        j.verify = Some(crate::spec::VerifySpec {
            checksum: crate::verify::Checksum::Crc32c,
            after_writes: true,
            fatal: false,
        });
        j
    }

    #[test]
    fn each_round_is_read_back_before_the_next_one() {
        // fio's thread_main: do_io, then do_verify, for each of the loops.
        let mut j = verified(job(&[(0, 8192)], 4096));
        j.passes = Some(2);
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
            "W0 W0 - R0 R0 - W0 W0 - R0 R0 -"
        );
        // io_size beyond the size: the read-back counts toward io_size, so after the one
        // loop fio stops at twice the size (a write round and its read-back).
        let mut j = verified(job(&[(0, 8192)], 4096));
        j.pass_bytes = 16384;
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
            "W0 W0 - R0 R0 -"
        );
        // A time-based job on an engine that queues: its rounds are the size (fio's do_io
        // stops there to verify). Without one, its only file starts over in place and is
        // never read back, as in fio.
        j.passes = None;
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_write(), &j), 13),
            "W0 W0 W0 W0 W0 W0 W0 W0 W0 W0 W0 W0 W0"
        );
        j.round_bytes = Some(8192);
        assert_eq!(
            spelled(&mut JobWalk::new(Access::seq_write(), &j), 13),
            "W0 W0 - R0 R0 - W0 W0 - R0 R0 - W0"
        );
    }

    #[test]
    fn the_read_back_order_is_fio_s() {
        let read_back = |access: Access, j: &JobIo| -> (Vec<Io>, Vec<Io>) {
            let (mut w, mut r) = (Vec::new(), Vec::new());
            for op in run(&mut JobWalk::new(access, j)) {
                match op {
                    Op::Write(io) => w.push(io),
                    Op::Read(io) => r.push(io),
                    o => panic!("{o:?}"),
                }
            }
            (w, r)
        };
        // With a random map: in the order written.
        let j = verified(job(&[(0, 64 << 10), (0, 64 << 10)], 4096));
        let (w, r) = read_back(Access::rand_write(), &j);
        assert_eq!(w.len(), 32);
        assert_eq!(w, r);
        // Without: by file and offset, each block once, the later write kept.
        let mut j = verified(job(&[(0, 64 << 10), (0, 64 << 10)], 4096));
        j.random_map = false;
        let (w, r) = read_back(Access::rand_write(), &j);
        let mut want: Vec<Io> = w.clone();
        want.sort_by_key(|io| (io.file, io.offset));
        want.dedup();
        assert_eq!(r, want);
        assert!(r.len() < w.len(), "some blocks were written twice");
    }

    #[test]
    fn overlapping_writes_leave_the_latest_one_to_read_back() {
        let io = |file, offset, len| Io { file, offset, len };
        let w = [
            io(0, 8192, 8192),
            io(1, 0, 4096),
            io(0, 0, 4096),
            io(0, 4096, 8192),
            io(0, 20480, 4096),
        ];
        assert_eq!(
            by_file_and_offset(&w),
            [
                io(0, 0, 4096),
                io(0, 4096, 8192),
                io(0, 20480, 4096),
                io(1, 0, 4096)
            ]
        );
    }

    #[test]
    fn loops_and_io_size_make_fio_s_rounds() {
        // A 16 KiB region, 4 KiB requests: requests per round, as fio 3.33 issues them.
        let rounds = |loops: u64, io_size: u64| -> Vec<usize> {
            let mut j = job(&[(0, 16384)], 4096);
            j.passes = Some(loops);
            j.pass_bytes = io_size;
            let s = spelled(&mut JobWalk::new(Access::seq_read(), &j), 1000);
            s.split(" - ")
                .map(|r| r.trim_end_matches(" -").split(' ').count())
                .collect()
        };
        // loops=2, io_size=2×size: two rounds in all (keep_running stops at io_size).
        assert_eq!(rounds(2, 32768), [4, 4]);
        // loops=3, io_size=48k: the three loops reach io_size.
        assert_eq!(rounds(3, 49152), [4, 4, 4]);
        // loops=3, io_size=12k: rounds of the size until io_size × loops (36 KiB).
        assert_eq!(rounds(3, 12288), [4, 4, 1]);
        // loops=2, io_size=8k: 16 KiB in all, one round of the whole region.
        assert_eq!(rounds(2, 8192), [4]);
        // loops=1, io_size=40k: rounds until io_size, the last one cut.
        assert_eq!(rounds(1, 40960), [4, 4, 2]);
        // loops=0 is one round, as in fio.
        assert_eq!(rounds(0, 16384), [4]);
    }

    #[test]
    fn a_round_stops_at_its_bytes_only_where_fio_counts_them() {
        // Random reads without a map, io_size four times the size: one round on an engine
        // that completes requests at once, four on one that queues them.
        let mut j = job(&[(0, 16384)], 4096);
        j.random_map = false;
        j.pass_bytes = 65536;
        let s = spelled(&mut JobWalk::new(Access::rand_read(), &j), 100);
        assert_eq!(s.matches('-').count(), 1, "{s}");
        j.round_bytes = Some(16384);
        let s = spelled(&mut JobWalk::new(Access::rand_read(), &j), 100);
        assert_eq!(s, ["R0 R0 R0 R0 -"; 4].join(" "));
    }

    #[test]
    fn rounds_repeat_their_random_offsets_as_fio_s_randrepeat_does() {
        let offsets = |repeat: bool| -> Vec<Vec<u64>> {
            let mut j = job(&[(0, 256 << 10)], 4096);
            j.passes = Some(3);
            j.repeat_each_round = repeat;
            let s = run(&mut JobWalk::new(Access::rand_read(), &j));
            s.chunks(64)
                .map(|r| {
                    r.iter()
                        .map(|o| match o {
                            Op::Read(io) => io.offset,
                            o => panic!("{o:?}"),
                        })
                        .collect()
                })
                .collect()
        };
        let r = offsets(true);
        assert_eq!(r.len(), 3);
        assert!(r[0] == r[1] && r[1] == r[2]);
        let r = offsets(false);
        assert!(r[0] != r[1] && r[1] != r[2]);
    }

    #[test]
    fn a_random_file_whose_map_is_used_up_waits_for_the_round_to_end() {
        // Rounds of 2 files of 4 blocks: every block once per file per round.
        let mut j = job(&[(0, 16384), (0, 16384)], 4096);
        j.passes = Some(2);
        let ops = run(&mut JobWalk::new(Access::rand_read(), &j));
        assert_eq!(ops.len(), 16);
        for round in ops.chunks(8) {
            let mut seen: Vec<(u32, u64)> = round
                .iter()
                .map(|o| match o {
                    Op::Read(io) => (io.file, io.offset),
                    o => panic!("{o:?}"),
                })
                .collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 8);
        }
    }

    #[test]
    fn a_time_based_mixed_job_wraps_each_direction_at_the_end_of_its_only_file() {
        let mut j = job(&[(0, 8192)], 4096);
        j.passes = None;
        let mut w = JobWalk::new(
            Access::new(Mix::Share { read_pct: 50 }, Order::Sequential),
            &j,
        );
        let mut rng = Rng::new(5, 0);
        let mut next = [0u64; 2];
        for _ in 0..200 {
            let (dir, io) = match w.next(&mut rng) {
                Op::Read(io) => (0, io),
                Op::Write(io) => (1, io),
                o => panic!("{o:?}"),
            };
            assert_eq!(io.offset, next[dir], "direction {dir}");
            next[dir] = (io.offset + 4096) % 8192;
        }
    }
}
