//! One file's state in a job's walk: its sequential positions, its random map or skew,
//! and how a random request finds its block.

use plumb_core::random::{Rng, SkewedBlocks};

use crate::block_map::BlockMap;

/// fio's `-1ULL`: no request of that direction yet.
pub(super) const NONE: u64 = u64::MAX;

pub(super) struct FileWalk {
    pub(super) offset: u64,
    pub(super) length: u64,
    /// Next sequential position per direction (read, write, trim), relative to `offset`.
    pub(super) pos: [u64; 3],
    /// No further sequential request fits in this round.
    pub(super) done: bool,
    pub(super) map: Option<BlockMap>,
    pub(super) blocks: u64,
    /// Non-uniform blocks (none: uniform).
    pub(super) skew: Option<SkewedBlocks>,
    /// Random orders with a stride: requests left in the current sequential run, per
    /// direction.
    pub(super) run_left: [u64; 3],
    /// Its cached pages are dropped before its next request.
    pub(super) drop_due: bool,
    /// Trim then write: where the latest write and trim started (relative; [`NONE`] before
    /// the first), and the latest trim's length.
    pub(super) last_start: [u64; 2],
    pub(super) trim_len: u64,
}

impl FileWalk {
    /// Back to the start of the region, the random map cleared (fio's fio_file_reset, when
    /// it opens the file for a new round).
    pub(super) fn reset(&mut self) {
        self.pos = [0; 3];
        self.run_left = [0; 3];
        self.done = false;
        self.last_start = [NONE; 2];
        if let Some(m) = &mut self.map {
            m.clear();
        }
    }

    /// A random offset for a request of `len` bytes in direction `dir` (relative); None
    /// when the file's random map is used up (the caller decides what follows). A request
    /// longer than a block takes the free blocks after the one drawn and is cut where a
    /// used one starts, as fio's mark_random_map cuts it.
    pub(super) fn draw(
        &mut self,
        dir: usize,
        len: &mut u64,
        align: u64,
        stride: Option<u64>,
        rng: &mut Rng,
    ) -> Option<u64> {
        if self.run_left[dir] > 0 && self.pos[dir] + *len <= self.length {
            // rw=randread:N: sequential between the random draws.
            self.run_left[dir] -= 1;
            let at = self.pos[dir];
            if let Some(m) = &mut self.map {
                m.mark(at / align);
            }
            self.pos[dir] = at + *len;
            return Some(at);
        }
        let drawn = match &mut self.skew {
            None => rng.below(self.blocks),
            Some(s) => {
                if s.needs_place() {
                    s.place(rng.next_u64());
                }
                s.sample(rng)
            }
        };
        let b = match &mut self.map {
            Some(m) => {
                let b = m.take(drawn)?;
                if *len > align {
                    let more = m.mark_free_run(b + 1, len.div_ceil(align) - 1);
                    *len = (*len).min((1 + more) * align);
                }
                b
            }
            None => drawn,
        };
        if let Some(n) = stride {
            self.run_left[dir] = n.saturating_sub(1);
            self.pos[dir] = b * align + *len;
        }
        Some(b * align)
    }
}

/// What follows a random file's used-up map.
pub(super) enum Wrap {
    /// The file is done for the round (a job with a byte limit).
    Done,
    /// Its cached pages are dropped first; it keeps its turn.
    Drop,
    /// Draw again from the cleared map.
    Again,
}
