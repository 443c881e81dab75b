//! The random map of a job's walk: which blocks of a file this round has used.

/// Blocks used in the current pass, one bit each, with a summary bit per word of the map
/// that says the word is full: finding the next free block skips 64 full words at a time
/// (fio's axmap does the same), so a pass stays cheap to its last blocks.
pub(crate) struct BlockMap {
    words: Vec<u64>,
    /// Bit `i` of `full[i / 64]`: `words[i]` has no free block left.
    full: Vec<u64>,
    blocks: u64,
    used: u64,
}

impl BlockMap {
    pub(crate) fn new(blocks: u64) -> BlockMap {
        let nwords = blocks.div_ceil(64) as usize;
        let mut m = BlockMap {
            words: vec![0; nwords],
            full: vec![0; nwords.div_ceil(64)],
            blocks,
            used: 0,
        };
        m.clear();
        m
    }
    pub(crate) fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        // Bits past the last block are marked used, so every word can fill up.
        let tail = self.blocks % 64;
        if tail != 0 {
            let last = self.words.len() - 1;
            self.words[last] = !0u64 << tail;
        }
        self.used = 0;
    }
    /// The first word at or after `w` with a free block (wrapping), `None` if all are full.
    pub(crate) fn next_open_word(&self, w: usize) -> Option<usize> {
        let n = self.words.len();
        let (mut s, bit) = (w / 64, w % 64);
        let mut mask = !0u64 << bit;
        for _ in 0..=self.full.len() {
            let open = !self.full[s] & mask;
            if open != 0 {
                let found = s * 64 + open.trailing_zeros() as usize;
                if found < n {
                    return Some(found);
                }
            }
            s = if s + 1 == self.full.len() { 0 } else { s + 1 };
            mask = !0;
        }
        None
    }
    /// Mark block `b` used (a request went there without drawing it).
    pub(crate) fn mark(&mut self, b: u64) {
        if b >= self.blocks {
            return;
        }
        let (w, bit) = ((b / 64) as usize, b % 64);
        if self.words[w] & (1 << bit) == 0 {
            self.words[w] |= 1 << bit;
            self.used += 1;
            if self.words[w] == !0 {
                self.full[w / 64] |= 1 << (w % 64);
            }
        }
    }
    /// Mark the free blocks from `b` on, up to `n` of them, stopping at the first used one
    /// (fio's axmap_set_nr); how many.
    #[cold]
    pub(crate) fn mark_free_run(&mut self, b: u64, n: u64) -> u64 {
        let mut k = 0;
        while k < n && b + k < self.blocks {
            let (w, bit) = (((b + k) / 64) as usize, (b + k) % 64);
            if self.words[w] & (1 << bit) != 0 {
                break;
            }
            self.mark(b + k);
            k += 1;
        }
        k
    }

    /// Take block `b`, or the next free one after it (wrapping). `None` when all are used.
    pub(crate) fn take(&mut self, b: u64) -> Option<u64> {
        if self.used >= self.blocks {
            return None;
        }
        let (w, bit) = ((b / 64) as usize, b % 64);
        let mut free = !self.words[w] & (!0u64 << bit);
        let mut at = w;
        if free == 0 {
            let next = if w + 1 == self.words.len() { 0 } else { w + 1 };
            at = self.next_open_word(next)?;
            free = !self.words[at];
        }
        let found = at as u64 * 64 + free.trailing_zeros() as u64;
        self.words[at] |= 1 << (found % 64);
        if self.words[at] == !0 {
            self.full[at / 64] |= 1 << (at % 64);
        }
        self.used += 1;
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::random::Rng;

    #[test]
    fn block_map_hands_out_every_block_once_whatever_the_draws() {
        for blocks in [1u64, 63, 64, 65, 130, 4096, 5000, 70_000] {
            let mut m = BlockMap::new(blocks);
            let mut rng = Rng::new(9, blocks);
            let mut seen = vec![false; blocks as usize];
            for _ in 0..blocks {
                let b = m.take(rng.below(blocks)).expect("a free block");
                assert!(!seen[b as usize], "{b} twice of {blocks}");
                seen[b as usize] = true;
            }
            assert_eq!(m.take(0), None);
            m.clear();
            assert!(m.take(blocks - 1).is_some());
        }
    }

    #[test]
    fn block_map_wraps_to_the_next_free_block() {
        let mut m = BlockMap::new(130);
        assert_eq!(m.take(129), Some(129));
        assert_eq!(m.take(129), Some(0));
        assert_eq!(m.take(0), Some(1));
        for _ in 0..127 {
            assert!(m.take(5).is_some());
        }
        assert_eq!(m.take(5), None);
    }
}
