//! sysbench's threads test (1.0.20 semantics): scheduler and mutex hand-off under load.
//!
//! `locks` glibc mutexes are shared by all threads. An event takes the next number of a global
//! counter modulo `locks` to pick its mutex, then `yields` times locks it, calls
//! `sched_yield()` while holding it, and unlocks it.

use plumb_core::clock::Stamp;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

use plumb_core::{OpKind, Worker, WorkerCtx, Workload, WorkloadError};

use crate::pmutex::PthreadMutex;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadsSpec {
    pub yields: u64,
    pub locks: u32,
}

struct Shared {
    /// A plain array of pthread mutexes, 40 bytes each, as sysbench allocates them.
    locks: Box<[PthreadMutex]>,
    /// sysbench's `req_performed`: an unsigned int, so it wraps at 2^32.
    issued: AtomicU32,
}

pub struct Threads {
    spec: ThreadsSpec,
    shared: Arc<Shared>,
}

impl Threads {
    pub fn new(spec: ThreadsSpec) -> Self {
        let locks = (0..spec.locks.max(1))
            .map(|_| PthreadMutex::new())
            .collect();
        Threads {
            spec,
            shared: Arc::new(Shared {
                locks,
                issued: AtomicU32::new(0),
            }),
        }
    }
}

const KINDS: &[OpKind] = &[OpKind::event("event")];

impl Workload for Threads {
    fn threads_measured(&self) -> bool {
        true
    }
    fn kinds(&self) -> &[OpKind] {
        KINDS
    }
    fn worker(&self, _thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        Ok(Box::new(ThreadsWorker {
            yields: self.spec.yields,
            shared: self.shared.clone(),
        }))
    }
}

/// The mutex an event uses: sysbench's `counter++ % locks`.
pub fn lock_for(counter: u32, locks: u32) -> usize {
    (counter % locks) as usize
}

struct ThreadsWorker {
    yields: u64,
    shared: Arc<Shared>,
}

impl Worker for ThreadsWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        let shared = self.shared.clone();
        let nlocks = shared.locks.len() as u32;
        while let Some(t) = ctx.next_event() {
            let m = &shared.locks[lock_for(shared.issued.fetch_add(1, Relaxed), nlocks)];
            let start = Stamp::now();
            let mut complete = true;
            for _ in 0..self.yields {
                // A contended event can last seconds with many threads; look at the stop
                // flag (one relaxed load) so an interrupt is honoured promptly.
                if ctx.stopping() {
                    complete = false;
                    break;
                }
                let g = m.lock();
                // SAFETY: sched_yield takes no arguments and cannot fail on Linux.
                unsafe { libc::sched_yield() };
                drop(g);
            }
            let end = Stamp::now();
            if !complete {
                // Stopped part way: not an event.
                break;
            }
            ctx.record(0, t, start, end);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_cycle_through_the_locks() {
        let picked: Vec<usize> = (0..10).map(|c| lock_for(c, 4)).collect();
        assert_eq!(picked, vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        // The counter is a C unsigned int: after 2^32 - 1 it wraps to 0.
        assert_eq!(lock_for(u32::MAX, 8), 7);
        assert_eq!(lock_for(u32::MAX.wrapping_add(1), 8), 0);
    }
}
