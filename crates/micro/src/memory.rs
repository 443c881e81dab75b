//! sysbench's memory test (1.0.20 semantics).
//!
//! The buffer is ONE block: shared by every thread (global scope) or one per thread (local
//! scope). An event walks the whole block once with 8-byte loads or stores, in order (seq) or
//! at `block / 8` random word offsets, one random number each (rnd). Each thread runs
//! `total / block / threads` events (integer division, as sysbench does; `--events` is not
//! used), or runs until the time limit when the total size is 0.
//!
//! With the default 1 KiB block the buffer sits in L1 cache: the figure is cache bandwidth,
//! not memory bandwidth. That is sysbench's definition, kept so numbers compare.

use plumb_core::clock::Stamp;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use plumb_core::random::Rng;
use plumb_core::{OpKind, Worker, WorkerCtx, Workload, WorkloadError};
use thiserror::Error;

use crate::buffer::{check_fits, Buffer, BufferError, MemInfo};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Global,
    Local,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Oper {
    Read,
    Write,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Seq,
    Rnd,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Local => "local",
        }
    }
    pub fn parse(s: &str) -> Option<Scope> {
        [Scope::Global, Scope::Local]
            .into_iter()
            .find(|v| v.name() == s)
    }
}

impl Oper {
    pub fn name(self) -> &'static str {
        match self {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        }
    }
    pub fn parse(s: &str) -> Option<Oper> {
        [Oper::Read, Oper::Write, Oper::None]
            .into_iter()
            .find(|v| v.name() == s)
    }
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Seq => "seq",
            Access::Rnd => "rnd",
        }
    }
    pub fn parse(s: &str) -> Option<Access> {
        [Access::Seq, Access::Rnd]
            .into_iter()
            .find(|v| v.name() == s)
    }
}

/// The smallest block: one machine word.
pub const MIN_BLOCK: u64 = 8;

/// Whether sysbench accepts `block` as --memory-block-size: a power of two, at least 8.
pub fn valid_block_size(block: u64) -> bool {
    block >= MIN_BLOCK && block.is_power_of_two()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySpec {
    pub block_size: u64,
    /// 0: no quota, run until the time limit.
    pub total_size: u64,
    pub scope: Scope,
    pub oper: Oper,
    pub access: Access,
    pub hugetlb: bool,
    pub threads: usize,
}

impl MemorySpec {
    /// Events each thread runs, or `None` without a quota (total size 0).
    pub fn events_per_thread(&self) -> Option<u64> {
        (self.total_size > 0).then(|| self.total_size / self.block_size / self.threads as u64)
    }
}

#[derive(Debug, Error)]
pub enum MemoryError {
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error("--memory-block-size={0} is larger than this machine's address space")]
    TooLarge(u64),
}

pub struct Memory {
    spec: MemorySpec,
    buffers: Vec<Arc<Buffer>>,
}

const KINDS: &[OpKind] = &[OpKind::event("event")];
/// Bytes covered by completed events (block size per event; also for `none`, as sysbench's
/// interval MiB/sec counts them).
pub const COUNTERS: &[&str] = &["bytes"];

impl Memory {
    /// Map and zero-fill the block(s) now, before any header is printed or clock started, as
    /// sysbench does in its init.
    pub fn new(spec: MemorySpec) -> Result<Memory, MemoryError> {
        let block: usize = spec
            .block_size
            .try_into()
            .map_err(|_| MemoryError::TooLarge(spec.block_size))?;
        let count = match spec.scope {
            Scope::Global => 1,
            Scope::Local => spec.threads.max(1),
        };
        let info = MemInfo::read();
        check_fits(spec.block_size, count as u64, spec.hugetlb, &info)?;
        let buffers = (0..count)
            .map(|_| Buffer::new(block, spec.hugetlb, &info).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Memory { spec, buffers })
    }

    pub fn spec(&self) -> &MemorySpec {
        &self.spec
    }
}

impl Workload for Memory {
    fn threads_measured(&self) -> bool {
        true
    }
    fn kinds(&self) -> &[OpKind] {
        KINDS
    }
    fn counters(&self) -> &[&'static str] {
        COUNTERS
    }
    fn worker(&self, thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        let buf = match self.spec.scope {
            Scope::Global => self.buffers[0].clone(),
            Scope::Local => self.buffers[thread % self.buffers.len()].clone(),
        };
        Ok(Box::new(MemoryWorker {
            buf,
            quota: self.spec.events_per_thread(),
            oper: self.spec.oper,
            access: self.spec.access,
        }))
    }
}

/// Words walked between two looks at the stop flag: a 1 GiB block still stops within a
/// fraction of a second, and blocks up to 512 KiB never look.
pub const CHUNK_WORDS: usize = 1 << 16;

/// One kind of walk over words `from..to` of a block (seq: those words; rnd: that many
/// random words anywhere in the block). Returns a value the caller keeps observable.
trait Walk {
    fn walk(words: &[AtomicU64], from: usize, to: usize, rng: &mut Rng) -> u64;
}

/// Offset of a random word. sysbench computes `(size_t)(uniform_double * n)` with a double
/// built from the top 52 bits of one xoroshiro128+ draw; for a power-of-two `n` that is the
/// top log2(n) bits of the draw, which `below` takes with one multiply instead of two float
/// conversions. The mask is a no-op (the result is below n) that drops the bounds check.
#[inline(always)]
fn random_word(rng: &mut Rng, n: usize) -> usize {
    (rng.below(n as u64) as usize) & (n - 1)
}

struct SeqWrite;
struct SeqRead;
struct SeqNone;
struct RndWrite;
struct RndRead;
struct RndNone;

// The sequential walks go eight words per step, as sysbench's loops do once its compiler
// has unrolled them; a word-per-step loop spends more on loop control than on memory and
// reads a cached block at half sysbench's speed.

impl Walk for SeqWrite {
    #[inline(always)]
    fn walk(words: &[AtomicU64], from: usize, to: usize, _: &mut Rng) -> u64 {
        // sysbench stores the distance to the end of the block.
        let n = words.len();
        let groups = words[from..to].chunks_exact(8);
        let rest = groups.remainder();
        let mut left = (n - from) as u64;
        for g in groups {
            let g: &[AtomicU64; 8] = g.try_into().expect("chunks of 8");
            for (k, w) in g.iter().enumerate() {
                w.store(left - k as u64, Relaxed);
            }
            left -= 8;
        }
        for (k, w) in rest.iter().enumerate() {
            w.store(left - k as u64, Relaxed);
        }
        0
    }
}

impl Walk for SeqRead {
    #[inline(always)]
    fn walk(words: &[AtomicU64], from: usize, to: usize, _: &mut Rng) -> u64 {
        let groups = words[from..to].chunks_exact(8);
        let rest = groups.remainder();
        for g in groups {
            let g: &[AtomicU64; 8] = g.try_into().expect("chunks of 8");
            // A relaxed atomic load is never removed, even with its value unused.
            for w in g {
                w.load(Relaxed);
            }
        }
        for w in rest {
            w.load(Relaxed);
        }
        0
    }
}

impl Walk for SeqNone {
    #[inline(always)]
    fn walk(_: &[AtomicU64], from: usize, to: usize, _: &mut Rng) -> u64 {
        let len = to - from;
        for _ in 0..len / 8 {
            for _ in 0..8 {
                compiler_barrier();
            }
        }
        for _ in 0..len % 8 {
            compiler_barrier();
        }
        0
    }
}

impl Walk for RndWrite {
    #[inline(always)]
    fn walk(words: &[AtomicU64], from: usize, to: usize, rng: &mut Rng) -> u64 {
        let n = words.len();
        for i in from..to {
            words[random_word(rng, n)].store(i as u64, Relaxed);
        }
        0
    }
}

impl Walk for RndRead {
    #[inline(always)]
    fn walk(words: &[AtomicU64], from: usize, to: usize, rng: &mut Rng) -> u64 {
        let n = words.len();
        for _ in from..to {
            words[random_word(rng, n)].load(Relaxed);
        }
        0
    }
}

impl Walk for RndNone {
    #[inline(always)]
    fn walk(words: &[AtomicU64], from: usize, to: usize, rng: &mut Rng) -> u64 {
        let n = words.len();
        let mut acc = 0;
        for _ in from..to {
            acc ^= random_word(rng, n) as u64;
        }
        acc
    }
}

/// An empty statement the compiler must keep in place (sysbench's `ck_pr_barrier()`).
#[inline(always)]
pub(crate) fn compiler_barrier() {
    // SAFETY: an empty asm block; it only stops the compiler from removing the loop or
    // moving memory accesses across it.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) }
}

struct MemoryWorker {
    buf: Arc<Buffer>,
    quota: Option<u64>,
    oper: Oper,
    access: Access,
}

impl MemoryWorker {
    fn run_loop<W: Walk>(&mut self, ctx: &mut WorkerCtx<'_>) {
        let buf = self.buf.clone();
        let words = buf.words();
        let n = words.len();
        let bytes = n as u64 * 8;
        // The stream is this thread's; a local copy stays in registers through the walk.
        let mut rng = ctx.rng.clone();
        let mut left = self.quota;
        loop {
            if let Some(l) = left.as_mut() {
                if *l == 0 {
                    break;
                }
                *l -= 1;
            }
            let Some(t) = ctx.next_event() else { break };
            let start = Stamp::now();
            let mut from = 0;
            let mut acc = 0;
            let complete = loop {
                let to = (from + CHUNK_WORDS).min(n);
                acc ^= W::walk(words, from, to, &mut rng);
                from = to;
                if from == n {
                    break true;
                }
                if ctx.stopping() {
                    break false;
                }
            };
            let end = Stamp::now();
            black_box(acc);
            if !complete {
                // Stopped half way through a large block: not an event.
                break;
            }
            ctx.record(0, t, start, end);
            ctx.add(0, bytes);
        }
        ctx.rng = rng;
    }
}

impl Worker for MemoryWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        match (self.oper, self.access) {
            (Oper::Write, Access::Seq) => self.run_loop::<SeqWrite>(ctx),
            (Oper::Read, Access::Seq) => self.run_loop::<SeqRead>(ctx),
            (Oper::None, Access::Seq) => self.run_loop::<SeqNone>(ctx),
            (Oper::Write, Access::Rnd) => self.run_loop::<RndWrite>(ctx),
            (Oper::Read, Access::Rnd) => self.run_loop::<RndRead>(ctx),
            (Oper::None, Access::Rnd) => self.run_loop::<RndNone>(ctx),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(block: u64, total: u64, threads: usize) -> MemorySpec {
        MemorySpec {
            block_size: block,
            total_size: total,
            scope: Scope::Global,
            oper: Oper::Write,
            access: Access::Seq,
            hugetlb: false,
            threads,
        }
    }

    #[test]
    fn block_sizes_sysbench_accepts() {
        for ok in [8, 16, 1024, 8192, 1 << 20, 1 << 30] {
            assert!(valid_block_size(ok), "{ok}");
        }
        for bad in [0, 1, 4, 3 * 1024, 1000, 12, (1 << 20) + 8] {
            assert!(!valid_block_size(bad), "{bad}");
        }
    }

    #[test]
    fn quota_is_integer_division_per_thread() {
        assert_eq!(spec(1024, 1 << 30, 1).events_per_thread(), Some(1 << 20));
        // 1 GiB of 1 MiB blocks over 3 threads: 341 each, 1023 in all (sysbench prints 1023).
        assert_eq!(spec(1 << 20, 1 << 30, 3).events_per_thread(), Some(341));
        assert_eq!(spec(1 << 20, 1 << 19, 1).events_per_thread(), Some(0));
        assert_eq!(spec(1024, 0, 4).events_per_thread(), None);
    }

    fn words(n: usize) -> Vec<AtomicU64> {
        (0..n).map(|_| AtomicU64::new(0)).collect()
    }

    #[test]
    fn seq_write_stores_distance_to_end_in_every_word() {
        let w = words(100);
        let mut rng = Rng::new(1, 0);
        SeqWrite::walk(&w, 0, 43, &mut rng);
        SeqWrite::walk(&w, 43, 100, &mut rng);
        let got: Vec<u64> = w.iter().map(|x| x.load(Relaxed)).collect();
        let want: Vec<u64> = (0..100).map(|i| 100 - i).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn rnd_walks_one_random_word_per_step_within_the_block() {
        let w = words(64);
        let mut rng = Rng::new(3, 0);
        RndWrite::walk(&w, 0, 64, &mut rng);
        let touched = w.iter().filter(|x| x.load(Relaxed) != 0).count();
        // 64 draws over 64 words: some repeat, so fewer than 64 words but many of them
        // (word 0 written with value 0 is not counted).
        assert!((20..64).contains(&touched), "{touched}");
        // Same offsets as sysbench's formula (uniform double times the word count).
        for n in [1usize, 2, 128, 1 << 20, 1 << 37] {
            let mut a = Rng::new(9, 0);
            let mut b = Rng::new(9, 0);
            for _ in 0..1000 {
                let o = random_word(&mut a, n);
                assert!(o < n);
                assert_eq!(o, (b.next_f64() * n as f64) as usize, "n={n}");
            }
        }
    }
}
