//! sysbench's cpu test: one event checks every number in 3..max_prime for primality by trial
//! division, with 64-bit modulo and even divisors included. The work is kept identical to
//! sysbench 1.0 (not a faster algorithm) so that events/s compare directly.

use plumb_core::clock::Stamp;
use std::hint::black_box;

use plumb_core::{OpKind, Worker, WorkerCtx, Workload, WorkloadError};

pub const DEFAULT_MAX_PRIME: u64 = 10_000;

#[derive(Clone, Debug)]
pub struct CpuSpec {
    pub max_prime: u64,
}

pub struct Cpu {
    spec: CpuSpec,
}

impl Cpu {
    pub fn new(spec: CpuSpec) -> Self {
        Cpu { spec }
    }
}

const KINDS: &[OpKind] = &[OpKind::event("event")];

impl Workload for Cpu {
    fn kinds(&self) -> &[OpKind] {
        KINDS
    }
    fn worker(&self, _thread: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        Ok(Box::new(CpuWorker {
            max_prime: self.spec.max_prime,
        }))
    }
}

struct CpuWorker {
    max_prime: u64,
}

/// Count the primes in 3..max_prime the way sysbench does. Returned so the caller can make it
/// observable; otherwise the compiler may delete the loop. `None` when `stop` turned true
/// first: with a huge --cpu-max-prime one event can take minutes, and Ctrl-C must still stop
/// the run within a second.
#[inline(never)]
// The modulo is the work sysbench measures; is_multiple_of would add a zero check.
#[allow(clippy::manual_is_multiple_of)]
pub fn count_primes(max_prime: u64, stop: &dyn Fn() -> bool) -> Option<u64> {
    let mut n = 0u64;
    let mut c = 3u64;
    while c < max_prime {
        if c & 0xFFFF == 0 && stop() {
            return None;
        }
        let t = (c as f64).sqrt();
        let mut l = 2u64;
        while (l as f64) <= t {
            if c.is_multiple_of(l) {
                break;
            }
            l += 1;
        }
        if (l as f64) > t {
            n += 1;
        }
        c += 1;
    }
    Some(n)
}

impl Worker for CpuWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        while let Some(t) = ctx.next_event() {
            let start = Stamp::now();
            let stop = || ctx.stopping();
            // An event cut short by a stop is not a complete event: it is not recorded.
            if black_box(count_primes(black_box(self.max_prime), &stop)).is_none() {
                break;
            }
            ctx.record(0, t, start, Stamp::now());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_odd_primes_below_limit() {
        // Primes in 3..100 (2 excluded, as sysbench starts at 3): 24.
        assert_eq!(count_primes(100, &|| false), Some(24));
        assert_eq!(count_primes(10_000, &|| false), Some(1228));
        assert_eq!(count_primes(1 << 20, &|| true), None);
    }
}
