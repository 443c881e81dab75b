//! glibc's default mutex (`pthread_mutex_t`, PTHREAD_MUTEX_NORMAL), the lock sysbench's
//! threads and mutex tests use.
//!
//! Rust's `std::sync::Mutex` is also a futex lock, but it spins about a hundred times before
//! sleeping when the lock is taken; glibc's default mutex goes to the futex at once. What a
//! contended lock costs is what these tests measure, so plumb takes the same lock as sysbench
//! (docs/performance.md has the comparison).

use std::cell::UnsafeCell;

pub struct PthreadMutex(UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be shared between threads; all access goes through
// pthread_mutex_lock / pthread_mutex_unlock.
unsafe impl Send for PthreadMutex {}
unsafe impl Sync for PthreadMutex {}

impl PthreadMutex {
    pub const fn new() -> Self {
        PthreadMutex(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER))
    }

    /// Lock; the guard unlocks when dropped.
    #[inline(always)]
    pub fn lock(&self) -> Guard<'_> {
        // SAFETY: the mutex is initialised and never moved while in use (it lives in a
        // boxed slice for the whole run). A normal mutex locked twice by one thread would
        // deadlock; every caller unlocks (drops the guard) before locking again.
        unsafe { libc::pthread_mutex_lock(self.0.get()) };
        Guard(self)
    }
}

impl Default for PthreadMutex {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: no guard can outlive the mutex, so it is unlocked here.
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

pub struct Guard<'a>(&'a PthreadMutex);

impl Drop for Guard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: this thread locked the mutex when it made the guard.
        unsafe { libc::pthread_mutex_unlock(self.0 .0.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::Arc;

    #[test]
    fn excludes_other_threads() {
        struct Shared {
            m: PthreadMutex,
            // Incremented with a separate load and store: only mutual exclusion keeps
            // every increment.
            n: AtomicU64,
        }
        let s = Arc::new(Shared {
            m: PthreadMutex::new(),
            n: AtomicU64::new(0),
        });
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let _g = s.m.lock();
                        s.n.store(s.n.load(Relaxed) + 1, Relaxed);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.n.load(Relaxed), 80_000);
    }

    #[test]
    fn has_glibc_size() {
        assert_eq!(std::mem::size_of::<PthreadMutex>(), 40);
    }
}
