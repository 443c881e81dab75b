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
    fn threads_measured(&self) -> bool {
        true
    }
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

/// `n % d` as a 64-bit `div`, the instruction sysbench's build (gcc) uses. LLVM would
/// otherwise test whether both operands fit in 32 bits and use the much cheaper 32-bit
/// `div` (they always fit here): on CPUs where the 64-bit divide is slow (Cascade Lake and
/// older) that made plumb's events 40% cheaper than sysbench's, measuring less work.
#[inline(always)]
fn rem64(n: u64, d: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let rem: u64;
        // SAFETY: `div` with rdx = 0 divides rdx:rax by `d`; `d` is never 0 (divisors start
        // at 2), and the quotient fits since the high half is 0. No memory is touched.
        unsafe {
            std::arch::asm!(
                "div {d}",
                d = in(reg) d,
                inout("rax") n => _,
                inout("rdx") 0u64 => rem,
                options(pure, nomem, nostack),
            );
        }
        rem
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        n % d
    }
}

/// Count the primes in 3..max_prime the way sysbench does. Returned so the caller can make it
/// observable; otherwise the compiler may delete the loop. `None` when `stop` turned true
/// first: with a huge --cpu-max-prime one event can take minutes, and Ctrl-C must still stop
/// the run within a second.
#[inline(never)]
pub fn count_primes(max_prime: u64, stop: &dyn Fn() -> bool) -> Option<u64> {
    let mut n = 0u64;
    let mut c = 3u64;
    while c < max_prime {
        if c & 0xFFFF == 0 && stop() {
            return None;
        }
        let t = (c as f64).sqrt();
        let mut l = 2u64;
        // The divisor 2 as sysbench's build (gcc) compiles it: a parity test, not a `div`.
        if (l as f64) <= t && c & 1 != 0 {
            l = 3;
            while (l as f64) <= t {
                // The modulo is the work sysbench measures.
                if rem64(c, l) == 0 {
                    break;
                }
                l += 1;
            }
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
