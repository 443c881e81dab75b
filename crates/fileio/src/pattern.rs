//! Which operation comes next: sysbench fileio's request stream, without its global mutex.
//!
//! sysbench generates every request under one mutex, from a global state: the sequential
//! cursor (file, position), the number of requests done, a dirty flag and the next file to
//! fsync. Every `--file-fsync-freq` requests, once something was written since the last
//! round, it emits one fsync per file (each an event of its own) before the next request.
//!
//! That stream is a pure function of one number, the stream slot: with F = fsync-freq and
//! N = file-num, slots repeat in periods of F + N, the first F being requests and the last N
//! the fsyncs of files 0..N-1. Request number k of a sequential mode maps to one (file,
//! offset): files are walked in order in chunks of block × merged-requests, cut at the end of
//! the file, wrapping after the last file. So threads share one atomic slot counter and get
//! exactly the sequence sysbench's cursor hands out, with one `fetch_add` instead of a lock.
//!
//! Random modes draw offsets per thread (uniform over all blocks, or `--rand-type` when
//! given); they touch the shared counter only when periodic fsyncs apply. rndrw picks read or
//! write with sysbench's fixed rule: read while (reads + 1) / (writes + 1) < ratio, counted
//! per thread (sysbench 1.0 counts completed operations of all threads, which makes the
//! interleave depend on timing; with one thread both are the same sequence).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use plumb_core::random::{Distribution, RandType, Rng};

use crate::access::{Access, Mix, Order};
use crate::spec::FileioSpec;
use crate::walk::JobWalk;

/// Sizes that decide offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub num_files: u32,
    pub file_size: u64,
    pub block: u64,
    /// Sequential request size: block × merged requests.
    pub request: u64,
}

impl Geometry {
    pub fn from_spec(s: &FileioSpec) -> Geometry {
        Geometry {
            num_files: s.num_files,
            file_size: s.file_size(),
            block: s.block_size,
            request: s.request_size(),
        }
    }
    /// Sequential requests per file (the last one may be short).
    pub fn chunks_per_file(&self) -> u64 {
        self.file_size.div_ceil(self.request)
    }
    /// Blocks per file for random modes (the last one may be short).
    pub fn blocks_per_file(&self) -> u64 {
        self.file_size.div_ceil(self.block)
    }
    /// Sequential requests in one pass over all files.
    pub fn seq_pass(&self) -> u64 {
        self.chunks_per_file() * self.num_files as u64
    }

    /// Sequential request number `k` (0-based, across passes).
    #[inline]
    pub fn seq_io(&self, k: u64) -> Io {
        let cpf = self.chunks_per_file();
        let q = k % (cpf * self.num_files as u64);
        let offset = (q % cpf) * self.request;
        Io {
            file: (q / cpf) as u32,
            offset,
            len: self.request.min(self.file_size - offset) as u32,
        }
    }

    /// Random block number `b` (0-based over all files).
    #[inline]
    pub fn block_io(&self, b: u64) -> Io {
        let bpf = self.blocks_per_file();
        let offset = (b % bpf) * self.block;
        Io {
            file: (b / bpf) as u32,
            offset,
            len: self.block.min(self.file_size - offset) as u32,
        }
    }
}

/// Division by a run constant: a shift and a mask when it is a power of two (the usual
/// case: sizes are powers of two), a hardware divide otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    shift: Option<u32>,
}

impl Divisor {
    pub fn new(d: u64) -> Divisor {
        let d = d.max(1);
        Divisor {
            d,
            shift: d.is_power_of_two().then(|| d.trailing_zeros()),
        }
    }
    /// (n / d, n % d)
    #[inline(always)]
    pub fn div_rem(&self, n: u64) -> (u64, u64) {
        match self.shift {
            Some(s) => (n >> s, n & (self.d - 1)),
            None => (n / self.d, n % self.d),
        }
    }
}

/// Where one request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Io {
    pub file: u32,
    pub offset: u64,
    pub len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read(Io),
    /// A read of a block written earlier, its data checked against the verify header the
    /// write sealed in (fio's verify reads: while writing, or at a round's end). A job that
    /// reads and writes checks only these; it waits for the writes to its file in flight.
    ReadBack(Io),
    Write(Io),
    /// Discard the range (fio's trim): only a job's own walk issues them.
    Trim(Io),
    /// Periodic fsync of one file: an event of its own, as in sysbench.
    Fsync(u32),
    /// The job has done all its work (jobs with a byte limit, [`crate::walk`]).
    Done,
    /// Wait for every request in flight before the next one (a read-back follows).
    Drain,
    /// Drop the cached pages of one file's region (fio's `invalidate`, when a job opens a
    /// file or starts it over; [`crate::walk`]).
    DropCache(u32),
    /// Drop the cached pages of one file from this offset for its region's length: a zoned
    /// job starts its zone over in place, and fio drops from the zone's start
    /// ([`crate::walk`]).
    DropZone(u32, u64),
    /// Wait this many microseconds before the next request (a replay's timing,
    /// [`crate::walk::replay`]).
    Pause(u64),
}

#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// State shared by all threads of one run.
#[derive(Default)]
pub struct SharedStream {
    next_slot: Padded,
    /// 1 + the period in which the latest write was issued (rndrw only: a period without
    /// writes gets no fsync round, as sysbench skips fsyncs when nothing is dirty).
    last_write_period: Padded,
}

impl SharedStream {
    pub fn new() -> Arc<SharedStream> {
        Arc::new(SharedStream::default())
    }
    /// Slots handed out so far.
    pub fn slots(&self) -> u64 {
        self.next_slot.0.load(Relaxed)
    }
}

/// One thread's view of the stream.
pub struct Pattern {
    access: Access,
    geo: Geometry,
    shared: Arc<SharedStream>,
    /// (fsync-freq, period = freq + files) when periodic fsyncs apply.
    period: Option<(u64, u64)>,
    /// Whether slots come from the shared counter.
    counted: bool,
    /// Uniform random requests of one direction, nothing shared (`Some(true)`: writes).
    plain_random: Option<bool>,
    reads: u64,
    writes: u64,
    ratio: f64,
    total_blocks: u64,
    dist: Option<Distribution>,
    /// Blocks per file, chunks per file, one sequential pass.
    bpf: Divisor,
    cpf: Divisor,
    pass: u64,
    /// A job with named files walks them on its own instead.
    walk: Option<Box<JobWalk>>,
}

impl Pattern {
    pub fn new(spec: &FileioSpec, shared: Arc<SharedStream>) -> Pattern {
        let access = spec.access.unwrap_or(Access::rand_read());
        let geo = Geometry::from_spec(spec);
        let period = spec
            .periodic_fsync()
            .map(|f| (f, f + spec.num_files as u64));
        let total_blocks = geo.blocks_per_file() * geo.num_files as u64;
        let ratio = match access.mix {
            Mix::Interleaved { reads_per_write } => reads_per_write,
            _ => 0.0,
        };
        Pattern {
            access,
            geo,
            counted: access.is_sequential() || period.is_some(),
            plain_random: match (access.order, access.mix) {
                _ if spec.job.is_some() || period.is_some() => None,
                (
                    Order::Random {
                        dist: RandType::Uniform,
                    },
                    Mix::Read,
                ) => Some(false),
                (
                    Order::Random {
                        dist: RandType::Uniform,
                    },
                    Mix::Write,
                ) => Some(true),
                _ => None,
            },
            shared,
            period,
            reads: 0,
            writes: 0,
            // sysbench 1.0 keeps the ratio in a float; compare against the same value.
            ratio: ratio as f32 as f64,
            total_blocks,
            dist: match access.order {
                Order::Random { dist } if dist != RandType::Uniform => Some(Distribution::shaped(
                    dist,
                    &spec.rand_shape,
                    0,
                    total_blocks - 1,
                )),
                _ => None,
            },
            bpf: Divisor::new(geo.blocks_per_file()),
            cpf: Divisor::new(geo.chunks_per_file()),
            pass: geo.seq_pass(),
            walk: spec.job.as_ref().map(|j| Box::new(JobWalk::new(access, j))),
        }
    }

    #[inline(always)]
    fn interleaved(&self) -> bool {
        matches!(self.access.mix, Mix::Interleaved { .. })
    }

    /// Whether every request is a uniform random one of a single direction (`Some(true)`:
    /// writes), to be drawn with [`Pattern::next_plain`].
    #[inline(always)]
    pub fn plain_random(&self) -> Option<bool> {
        self.plain_random
    }

    /// The next request of a [`Pattern::plain_random`] stream. The worker takes it apart
    /// from [`Pattern::next`] because an `Op` passed through memory costs the null engine a
    /// store-forwarding stall per request (a third of its time on one host).
    #[inline(always)]
    pub fn next_plain(&mut self, write: bool, rng: &mut Rng) -> Io {
        if write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        self.random_io(rng)
    }

    /// Where a job's own walk is: rounds ended so far, and whether it is reading back what
    /// the round wrote (verify). A shared stream is always in its first round.
    pub fn phase(&self) -> (u64, bool) {
        self.walk.as_ref().map_or((0, false), |w| w.phase())
    }

    /// The files a job's walk found done since the last call, when its requests are
    /// logged ([`crate::io_trace`]).
    pub fn take_closed(&mut self) -> Option<std::vec::Drain<'_, u32>> {
        self.walk.as_mut().and_then(|w| w.take_closed())
    }

    /// The next operation of this thread.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> Op {
        if let Some(w) = &mut self.walk {
            return w.next(rng);
        }
        loop {
            let (k, period) = if self.counted {
                let s = self.shared.next_slot.0.fetch_add(1, Relaxed);
                match self.period {
                    Some((f, p)) => {
                        let (per, r) = (s / p, s % p);
                        if r >= f {
                            if self.interleaved()
                                && self.shared.last_write_period.0.load(Relaxed) <= per
                            {
                                // Nothing written in this period: sysbench skips the round.
                                continue;
                            }
                            return Op::Fsync((r - f) as u32);
                        }
                        (per * f + r, per)
                    }
                    None => (s, 0),
                }
            } else {
                (0, 0)
            };
            let write = match self.access.mix {
                // Trim mixes never reach the shared stream (FileioSpec::check_run).
                Mix::Write | Mix::Trim | Mix::TrimWrite => true,
                Mix::Read => false,
                Mix::Interleaved { .. } => {
                    (self.reads + 1) as f64 / (self.writes + 1) as f64 >= self.ratio
                }
                Mix::Share { read_pct } => rng.below(100) >= read_pct as u64,
            };
            let io = if self.access.is_sequential() {
                self.seq_io(k)
            } else {
                self.random_io(rng)
            };
            return if write {
                self.writes += 1;
                if self.interleaved() && self.period.is_some() {
                    self.shared
                        .last_write_period
                        .0
                        .fetch_max(period + 1, Relaxed);
                }
                Op::Write(io)
            } else {
                self.reads += 1;
                Op::Read(io)
            };
        }
    }

    /// A fresh random block (also used to redraw one that another request holds).
    #[inline(always)]
    pub fn random_io(&mut self, rng: &mut Rng) -> Io {
        let b = match &self.dist {
            None => rng.below(self.total_blocks),
            Some(d) => d.sample(rng),
        };
        let (file, blk) = self.bpf.div_rem(b);
        let offset = blk * self.geo.block;
        Io {
            file: file as u32,
            offset,
            len: self.geo.block.min(self.geo.file_size - offset) as u32,
        }
    }

    /// Sequential request `k`, as [`Geometry::seq_io`] with the divisions precomputed.
    #[inline]
    fn seq_io(&self, k: u64) -> Io {
        let q = if k < self.pass { k } else { k % self.pass };
        let (file, chunk) = self.cpf.div_rem(q);
        let offset = chunk * self.geo.request;
        Io {
            file: file as u32,
            offset,
            len: self.geo.request.min(self.geo.file_size - offset) as u32,
        }
    }

    /// Sequential requests issued by all threads so far (for seqwr: how far the files were
    /// written).
    pub fn requests_issued(shared: &SharedStream, spec: &FileioSpec) -> u64 {
        let s = shared.slots();
        match spec.periodic_fsync() {
            Some(f) => {
                let p = f + spec.num_files as u64;
                (s / p) * f + (s % p).min(f)
            }
            None => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SyncPolicy;

    fn spec(access: Access, files: u32, total: u64, block: u64) -> FileioSpec {
        FileioSpec {
            access: Some(access),
            num_files: files,
            total_size: total,
            block_size: block,
            ..Default::default()
        }
    }

    fn take(p: &mut Pattern, n: usize) -> Vec<Op> {
        let mut rng = Rng::new(7, 0);
        (0..n).map(|_| p.next(&mut rng)).collect()
    }

    #[test]
    fn sequential_walks_files_in_order_and_wraps() {
        let s = FileioSpec {
            sync: SyncPolicy {
                every_requests: 0,
                ..Default::default()
            },
            ..spec(Access::seq_read(), 2, 2 * 40960, 16384)
        };
        let mut p = Pattern::new(&s, SharedStream::new());
        let ops = take(&mut p, 7);
        let r = |file, offset, len| Op::Read(Io { file, offset, len });
        assert_eq!(
            ops,
            [
                r(0, 0, 16384),
                r(0, 16384, 16384),
                r(0, 32768, 8192),
                r(1, 0, 16384),
                r(1, 16384, 16384),
                r(1, 32768, 8192),
                r(0, 0, 16384),
            ]
        );
    }

    #[test]
    fn merged_requests_grow_sequential_chunks_only() {
        let s = FileioSpec {
            merged_requests: 4,
            sync: SyncPolicy {
                every_requests: 0,
                ..Default::default()
            },
            ..spec(Access::seq_write(), 1, 100_000, 4096)
        };
        let mut p = Pattern::new(&s, SharedStream::new());
        let ops = take(&mut p, 8);
        let lens: Vec<u32> = ops
            .iter()
            .map(|o| match o {
                Op::Write(io) => io.len,
                _ => panic!("{o:?}"),
            })
            .collect();
        // 100000 = 6 × 16384 + 1696: six full merged chunks, a short one, then wrap.
        assert_eq!(
            lens,
            [16384, 16384, 16384, 16384, 16384, 16384, 1696, 16384]
        );
        let r = FileioSpec {
            merged_requests: 4,
            ..spec(Access::rand_read(), 1, 1 << 20, 4096)
        };
        let mut p = Pattern::new(&r, SharedStream::new());
        assert!(take(&mut p, 100)
            .iter()
            .all(|o| matches!(o, Op::Read(io) if io.len == 4096)));
    }

    /// W, R, the sync's letter, or `.` for anything else.
    fn letter(o: &Op, sync: impl Fn(u32) -> char) -> char {
        match *o {
            Op::Write(_) => 'W',
            Op::Read(_) => 'R',
            Op::Fsync(f) => sync(f),
            Op::ReadBack(_)
            | Op::Trim(_)
            | Op::Done
            | Op::Drain
            | Op::DropCache(_)
            | Op::DropZone(..)
            | Op::Pause(_) => '.',
        }
    }

    #[test]
    fn fsync_round_is_one_per_file_every_freq_requests() {
        let s = FileioSpec {
            sync: SyncPolicy {
                every_requests: 3,
                ..Default::default()
            },
            ..spec(Access::rand_write(), 2, 1 << 20, 4096)
        };
        let mut p = Pattern::new(&s, SharedStream::new());
        let kinds: String = take(&mut p, 12)
            .iter()
            .map(|o| letter(o, |f| char::from(b'0' + f as u8)))
            .collect();
        assert_eq!(kinds, "WWW01WWW01WW");
    }

    #[test]
    fn rndrw_follows_sysbench_interleave() {
        let s = FileioSpec {
            sync: SyncPolicy {
                every_requests: 0,
                ..Default::default()
            },
            ..spec(Access::rand_mix(1.5), 4, 1 << 20, 4096)
        };
        let mut p = Pattern::new(&s, SharedStream::new());
        let kinds: String = take(&mut p, 12)
            .iter()
            .map(|o| if matches!(o, Op::Read(_)) { 'R' } else { 'W' })
            .collect();
        assert_eq!(kinds, "RWRWRRWRWRRW");
        let ops = take(&mut p, 10_000);
        let reads = ops.iter().filter(|o| matches!(o, Op::Read(_))).count() as f64;
        assert!((reads / (10_000.0 - reads) - 1.5).abs() < 0.01);
    }

    #[test]
    fn rndrw_skips_fsync_round_when_a_period_wrote_nothing() {
        // Ratio 100: reads dominate; with freq 2 some periods hold no write.
        let s = FileioSpec {
            sync: SyncPolicy {
                every_requests: 2,
                ..Default::default()
            },
            ..spec(Access::rand_mix(100.0), 1, 1 << 20, 4096)
        };
        let mut p = Pattern::new(&s, SharedStream::new());
        let kinds: String = take(&mut p, 102)
            .iter()
            .map(|o| letter(o, |_| 'F'))
            .collect();
        // Reads while (r + 1) / (w + 1) < 100: the first write is request 99, the second of
        // period 49. The 49 periods before it wrote nothing and get no fsync round.
        assert_eq!(kinds, format!("{}WFR", "R".repeat(99)));
    }

    #[test]
    fn random_offsets_are_block_aligned_and_cover_every_file() {
        let s = spec(Access::rand_read(), 4, 4 << 20, 16384);
        let mut p = Pattern::new(&s, SharedStream::new());
        let mut files = [0u32; 4];
        for o in take(&mut p, 4000) {
            let Op::Read(io) = o else { panic!() };
            assert_eq!(io.offset % 16384, 0);
            assert!(io.offset + io.len as u64 <= 1 << 20);
            files[io.file as usize] += 1;
        }
        assert!(files.iter().all(|&n| n > 800), "{files:?}");
    }

    #[test]
    fn threads_share_one_sequential_cursor() {
        let s = FileioSpec {
            sync: SyncPolicy {
                every_requests: 5,
                ..Default::default()
            },
            ..spec(Access::seq_create(), 3, 3 * 65536, 4096)
        };
        let shared = SharedStream::new();
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (s, shared) = (s.clone(), shared.clone());
                std::thread::spawn(move || {
                    let mut p = Pattern::new(&s, shared);
                    let mut rng = Rng::new(1, t);
                    (0..2000).map(|_| p.next(&mut rng)).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut writes = std::collections::HashMap::new();
        let mut fsyncs = 0;
        for h in handles {
            for o in h.join().unwrap() {
                match o {
                    Op::Write(io) => *writes.entry((io.file, io.offset)).or_insert(0) += 1,
                    Op::Fsync(_) => fsyncs += 1,
                    Op::Read(_)
                    | Op::ReadBack(_)
                    | Op::Trim(_)
                    | Op::Done
                    | Op::Drain
                    | Op::DropCache(_)
                    | Op::DropZone(..)
                    | Op::Pause(_) => panic!(),
                }
            }
        }
        // 8000 slots in periods of 5 + 3: 1000 periods, 5000 writes, 3000 fsyncs.
        assert_eq!(fsyncs, 3000);
        let total: u32 = writes.values().sum();
        assert_eq!(total, 5000);
        // 48 chunks per pass: every chunk written 5000 / 48 times, give or take one.
        assert_eq!(writes.len(), 48);
        assert!(writes.values().all(|&n| n == 104 || n == 105), "{writes:?}");
        assert_eq!(Pattern::requests_issued(&shared, &s), 5000);
    }

    #[test]
    fn precomputed_paths_match_geometry() {
        for (files, total, block, merged) in [
            (3, 3 * 40960, 16384, 1),
            (4, 1 << 22, 4096, 3),
            (1, 100_000, 1000, 1),
        ] {
            let s = FileioSpec {
                merged_requests: merged,
                ..spec(Access::seq_read(), files, total, block)
            };
            let p = Pattern::new(&s, SharedStream::new());
            let g = p.geo;
            for k in 0..3 * g.seq_pass() {
                assert_eq!(p.seq_io(k), g.seq_io(k));
            }
            let bpf = Divisor::new(g.blocks_per_file());
            for b in 0..g.blocks_per_file() * files as u64 {
                let (f, i) = bpf.div_rem(b);
                assert_eq!(g.block_io(b).file as u64, f);
                assert_eq!(g.block_io(b).offset, i * block);
            }
        }
    }

    #[test]
    fn rand_type_skews_random_offsets() {
        let s = spec(
            Access::rand_read().with_dist(RandType::Pareto),
            1,
            1 << 24,
            4096,
        );
        let mut p = Pattern::new(&s, SharedStream::new());
        let low = take(&mut p, 10_000)
            .iter()
            .filter(|o| matches!(o, Op::Read(io) if io.offset < (1 << 24) / 5))
            .count();
        assert!(low > 7000, "pareto should put ~80% in the first 20%: {low}");
    }
}
