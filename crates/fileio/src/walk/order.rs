//! A seeded order of a file's blocks, each once per pass, with no map (fio's
//! `random_generator=lfsr`: a full-period generator instead of random draws and a map).
//!
//! Not fio's LFSR stream (plumb does not reproduce fio's random numbers anywhere), but its
//! promise: every block exactly once per pass, in an order with no pattern to it, the same
//! order again each pass. A balanced Feistel network over the smallest even number of bits
//! that counts the blocks is a bijection on that range; its outputs for 0, 1, 2, ... that
//! fall past the last block are skipped (at most three in four), the rest are the pass.

/// Rounds of the network: four make consecutive inputs land far apart.
const ROUNDS: usize = 4;

pub(crate) struct BlockOrder {
    blocks: u64,
    /// Bits in each half of an input.
    half: u32,
    /// The inputs a pass walks: 2^(2 × half).
    span: u128,
    keys: Option<[u64; ROUNDS]>,
    next: u128,
}

impl BlockOrder {
    pub(crate) fn new(blocks: u64) -> BlockOrder {
        let blocks = blocks.max(1);
        let bits = (u64::BITS - (blocks - 1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        BlockOrder {
            blocks,
            half,
            span: 1u128 << (2 * half),
            keys: None,
            next: 0,
        }
    }

    /// Keyed at the first draw, from the job's random state, and kept: every pass walks
    /// the same order, as fio's lfsr_reset starts from the same seed.
    pub(crate) fn needs_keys(&self) -> bool {
        self.keys.is_none()
    }

    pub(crate) fn key(&mut self, seed: u64) {
        let mut s = seed;
        self.keys = Some(std::array::from_fn(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(s)
        }));
    }

    /// The next block of the pass; None once every block has come.
    pub(crate) fn next(&mut self) -> Option<u64> {
        while self.next < self.span {
            let x = self.next as u64;
            self.next += 1;
            let b = self.permute(x);
            if b < self.blocks {
                return Some(b);
            }
        }
        None
    }

    /// A new pass, in the same order.
    pub(crate) fn reset(&mut self) {
        self.next = 0;
    }

    fn permute(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys.unwrap_or_default() {
            (l, r) = (r, l ^ (mix(r ^ k) & mask));
        }
        (l << self.half) | r
    }
}

/// SplitMix64's finaliser: every input bit moves about half the output bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(o: &mut BlockOrder) -> Vec<u64> {
        std::iter::from_fn(|| o.next()).collect()
    }

    #[test]
    fn every_block_once_per_pass_and_the_same_order_again() {
        for blocks in [1, 2, 3, 255, 256, 257, 1000, 4096, 65_537] {
            let mut o = BlockOrder::new(blocks);
            o.key(42);
            let first = pass(&mut o);
            let mut seen = first.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..blocks).collect::<Vec<_>>(), "{blocks}");
            o.reset();
            assert_eq!(pass(&mut o), first, "{blocks}");
        }
    }

    #[test]
    fn no_pattern_and_each_seed_its_own() {
        let mut o = BlockOrder::new(256);
        o.key(7);
        let a = pass(&mut o);
        let consecutive = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(consecutive <= 5, "{consecutive} consecutive in {a:?}");
        let mut p = BlockOrder::new(256);
        p.key(8);
        assert_ne!(pass(&mut p), a);
    }
}
