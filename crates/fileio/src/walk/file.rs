//! One file's state in a job's walk: its sequential positions, its random map or skew,
//! and how a random request finds its block.

use plumb_core::random::{Rng, SkewedBlocks};

use super::order::BlockOrder;
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
    /// The blocks in a seeded order instead of drawn (fio's random_generator=lfsr).
    pub(super) order: Option<BlockOrder>,
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
        self.restart_random();
    }

    /// A new pass of the random blocks: the map cleared, the order from its start.
    pub(super) fn restart_random(&mut self) {
        if let Some(m) = &mut self.map {
            m.clear();
        }
        if let Some(o) = &mut self.order {
            o.reset();
        }
    }

    /// A random order's offset for a request of `len` bytes in direction `dir` (relative),
    /// as fio's get_next_block finds it: between the draws of `rw=randread:N`, and for the
    /// share of requests `percentage_random` leaves out, the request goes on from the end of
    /// the previous one in its direction ([`FileWalk::next_in_line`]); otherwise a block is
    /// drawn. A request longer than a block takes the free blocks after the one drawn and
    /// is cut where a used one starts, as fio's mark_random_map cuts it; a request that goes
    /// on marks nothing, as fio's (flagged busy-ok) does not.
    pub(super) fn draw(
        &mut self,
        dir: usize,
        len: &mut u64,
        align: u64,
        runs: &Runs,
        rng: &mut Rng,
    ) -> Draw {
        let goes_on = if self.run_left[dir] > 0 {
            self.run_left[dir] -= 1;
            true
        } else {
            // A draw is due; fio counts the N requests from here whatever follows.
            if let Some(n) = runs.stride {
                self.run_left[dir] = n.saturating_sub(1);
            }
            let pct = runs.random_pct[dir];
            // fio's should_do_random: a value from 1 to 100 at most the share draws.
            pct < 100 && rng.below(100) >= u64::from(pct)
        };
        if goes_on {
            match self.next_in_line(dir, *len, runs) {
                Some(Draw::At(at)) => {
                    self.pos[dir] = at + *len;
                    return Draw::At(at);
                }
                Some(other) => return other,
                // No room left: drawn after all (fio falls back to get_next_rand_block).
                None => {}
            }
        }
        let drawn = match (&mut self.skew, &mut self.order) {
            (None, Some(o)) => {
                if o.needs_keys() {
                    o.key(rng.next_u64());
                }
                match o.next() {
                    Some(b) => b,
                    None => return Draw::UsedUp,
                }
            }
            (None, None) => rng.below(self.blocks),
            (Some(s), _) => {
                if s.needs_place() {
                    s.place(rng.next_u64());
                }
                s.sample(rng)
            }
        };
        let b = match &mut self.map {
            Some(m) => {
                let Some(b) = m.take(drawn) else {
                    return Draw::UsedUp;
                };
                if *len > align {
                    let more = m.mark_free_run(b + 1, len.div_ceil(align) - 1);
                    *len = (*len).min((1 + more) * align);
                }
                b
            }
            None => drawn,
        };
        if runs.tracks_position() {
            self.pos[dir] = b * align + *len;
        }
        Draw::At(b * align)
    }

    /// Where a request going on from the previous one in `dir` starts (fio's
    /// get_next_seq_offset): right after it, or, past the region's end, at its start again
    /// when the job is time-based with this one file ([`Runs::wrap`]; with the cached pages
    /// dropped first, [`Draw::Wrapped`], when fio drops them there). `None`: no room left,
    /// the request is drawn.
    fn next_in_line(&mut self, dir: usize, len: u64, runs: &Runs) -> Option<Draw> {
        let at = self.pos[dir];
        if at + len <= self.length {
            return Some(Draw::At(at));
        }
        if !runs.wrap || len > self.length {
            return None;
        }
        self.pos[dir] = 0;
        if runs.drop_on_wrap {
            // The request at the start comes after the drop, in this direction's next turn.
            self.run_left[dir] += 1;
            return Some(Draw::Wrapped);
        }
        Some(Draw::At(0))
    }
}

/// How a random file's requests go on between draws (fio's `rw=randread:N` and
/// `percentage_random`).
pub(super) struct Runs {
    /// A new draw only every this many requests of a direction.
    pub(super) stride: Option<u64>,
    /// Per direction, the share of the due draws that are drawn, in percent; the others go
    /// on from the previous request.
    pub(super) random_pct: [u8; 3],
    /// A request going on past the region's end starts it over instead of being drawn: a
    /// time-based job's only file (fio's get_next_seq_offset).
    pub(super) wrap: bool,
    /// ... and the file's cached pages are dropped first (fio's loop_cache_invalidate).
    pub(super) drop_on_wrap: bool,
}

impl Runs {
    /// Whether requests ever go on from the previous one, so positions must be kept.
    fn tracks_position(&self) -> bool {
        self.stride.is_some() || self.random_pct.iter().any(|&p| p < 100)
    }
}

/// Where a random request goes.
pub(super) enum Draw {
    /// At this offset in the region.
    At(u64),
    /// Nowhere: the file's random map is used up (the caller decides what follows).
    UsedUp,
    /// The request went past the region's end and starts it over: the file's pages are
    /// dropped first, then the request comes at the start.
    Wrapped,
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
