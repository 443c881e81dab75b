//! sysbench's mutex test (1.0.20 semantics): lock acquisition cost with a little work
//! between locks.
//!
//! `num` mutexes, each padded to its own 296 bytes as in sysbench. Every thread runs exactly
//! one event: `locks` times, pick a random mutex, spin `loops` empty iterations, lock it,
//! increment a global counter, unlock. The global counter is shared by all mutexes, so its
//! increments race exactly as sysbench's do; it only keeps the critical section real.

use plumb_core::clock::Stamp;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

use plumb_core::random::Rng;
use plumb_core::{OpKind, Worker, WorkerCtx, Workload, WorkloadError};

use crate::memory::compiler_barrier;
use crate::pmutex::PthreadMutex;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutexSpec {
    pub num: u32,
    pub locks: u64,
    pub loops: u64,
}

/// sysbench's `thread_lock`: a `pthread_mutex_t` (40 bytes) and 256 bytes of padding.
#[repr(C)]
struct PaddedLock {
    m: PthreadMutex,
    _pad: [u8; 256],
}

struct Shared {
    locks: Box<[PaddedLock]>,
    global: AtomicU32,
}

pub struct MutexTest {
    spec: MutexSpec,
    shared: Arc<Shared>,
}

impl MutexTest {
    pub fn new(spec: MutexSpec) -> Self {
        let locks = (0..spec.num.max(1))
            .map(|_| PaddedLock {
                m: PthreadMutex::new(),
                _pad: [0; 256],
            })
            .collect();
        MutexTest {
            spec,
            shared: Arc::new(Shared {
                locks,
                global: AtomicU32::new(0),
            }),
        }
    }

    /// The shared counter's value (lost updates included, as in sysbench).
    pub fn global(&self) -> u32 {
        self.shared.global.load(Relaxed)
    }
}

const KINDS: &[OpKind] = &[OpKind::event("event")];
/// Lock acquisitions done, complete events or not.
pub const COUNTERS: &[&str] = &["locks"];

impl Workload for MutexTest {
    fn threads_measured(&self) -> bool {
        true
    }
    fn kinds(&self) -> &[OpKind] {
        KINDS
    }
    fn counters(&self) -> &[&'static str] {
        COUNTERS
    }
    fn worker(&self, _thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        Ok(Box::new(MutexWorker {
            locks: self.spec.locks,
            loops: self.spec.loops,
            shared: self.shared.clone(),
        }))
    }
}

/// sysbench's `sb_rand_uniform(0, n - 1)`: a uniform double times n, truncated.
#[inline(always)]
pub fn pick(rng: &mut Rng, n: usize) -> usize {
    ((rng.next_f64() * n as f64) as usize).min(n - 1)
}

struct MutexWorker {
    locks: u64,
    loops: u64,
    shared: Arc<Shared>,
}

impl Worker for MutexWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        // One event per thread, whatever the time or event limits allow.
        let Some(t) = ctx.next_event() else {
            return Ok(());
        };
        let shared = self.shared.clone();
        let n = shared.locks.len();
        let mut rng = ctx.rng.clone();
        let mut done = 0u64;
        let start = Stamp::now();
        let complete = loop {
            let m = &shared.locks[pick(&mut rng, n)].m;
            for _ in 0..self.loops {
                compiler_barrier();
            }
            let g = m.lock();
            // A plain load and store, not an atomic add: the increment is as racy as
            // sysbench's `global_var++` when two threads hold different mutexes.
            shared
                .global
                .store(shared.global.load(Relaxed).wrapping_add(1), Relaxed);
            drop(g);
            done += 1;
            if done >= self.locks {
                break true;
            }
            // The event lasts as long as the options make it; stop promptly when asked.
            if ctx.stopping() {
                break false;
            }
        };
        let end = Stamp::now();
        ctx.rng = rng;
        ctx.add(0, done);
        if complete {
            ctx.record(0, t, start, end);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_lock_has_sysbench_stride() {
        assert_eq!(std::mem::size_of::<PaddedLock>(), 296);
    }

    #[test]
    fn pick_covers_every_mutex_and_stays_in_range() {
        let mut rng = Rng::new(5, 0);
        let mut seen = [0u32; 7];
        for _ in 0..70_000 {
            seen[pick(&mut rng, 7)] += 1;
        }
        assert!(
            seen.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{seen:?}"
        );
        assert_eq!(pick(&mut rng, 1), 0);
    }
}
