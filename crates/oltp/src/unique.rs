//! sysbench's `rand.unique()`: 32-bit values that never repeat within a run, shared by all
//! threads (oltp_insert with `auto_inc` off turns them into ids).
//!
//! A counter walks through a permutation of the 32-bit values. The permutation is the
//! quadratic-residue one over the prime p = 2^32 - 5 (for x < p, x^2 mod p or its
//! complement is a bijection when p = 3 mod 4), applied twice around an offset and an xor;
//! the five values at or above p map to themselves.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

const PRIME: u64 = 4_294_967_291;

fn permute(x: u32) -> u32 {
    let x64 = u64::from(x);
    if x64 >= PRIME {
        return x;
    }
    let residue = (x64 * x64 % PRIME) as u32;
    if x64 <= PRIME / 2 {
        residue
    } else {
        (PRIME - u64::from(residue)) as u32
    }
}

/// The shared generator. Each call returns a value not returned before (until 2^32 calls).
#[derive(Debug)]
pub struct UniqueIds {
    index: AtomicU32,
    offset: u32,
}

impl UniqueIds {
    pub fn new(seed: u64) -> Self {
        // The start and offset come from the seed so two runs with different seeds insert
        // different ids.
        let mixed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
        UniqueIds {
            index: AtomicU32::new(permute(mixed as u32)),
            offset: permute((mixed >> 32) as u32),
        }
    }

    pub fn next(&self) -> u32 {
        let i = self.index.fetch_add(1, Relaxed);
        permute(permute(i).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn values_do_not_repeat() {
        let u = UniqueIds::new(42);
        let mut seen = HashSet::new();
        for _ in 0..200_000 {
            assert!(seen.insert(u.next()));
        }
    }

    #[test]
    fn permutation_is_injective_on_a_window() {
        let mut seen = HashSet::new();
        for x in (PRIME as u32 - 100_000)..=u32::MAX {
            assert!(seen.insert(permute(x)), "{x} collides");
        }
    }
}
