//! fio's `zonemode=strided`: a job's requests stay in one zone of each file until
//! `zonesize` bytes are done, then move `zonerange + zoneskip` on, as fio 3.33's
//! setup_strided_zone_mode moves them before each read, write or trim.
//!
//! - The bytes are counted for the job, not per file (fio's `td->zone_bytes`): the request
//!   that finds them at `zonesize` moves its own file's zone on, whichever file did them.
//! - A zone that would start at or past the file's end (fio's real_file_size, which may
//!   lie past the region in a larger file or device) starts over at the region's start;
//!   so a job whose bytes outlast its zones walks them again, as fio does.
//! - In a zone, sequential requests go on from the previous one of their direction, and
//!   start over at the zone's start once they reach its range (`zonesize` above
//!   `zonerange` reads a zone several times). Random offsets are drawn among the blocks of
//!   one range, the random map holding one range.
//! - Each time the bytes reach a multiple of the range (the zone's first request
//!   included), every direction starts over at the zone's start and the map is cleared
//!   (fio's fio_file_reset).
//! - A request starting at or past the file's end, or running past it, ends the file for
//!   the round, as fio's fill_io_u fails it; a time-based job's only file walked in order
//!   starts its zone over once it reaches the region's end.

use plumb_core::random::Rng;

use super::file::{Draw, FileWalk, Wrap, NONE};
use super::JobWalk;
use crate::pattern::Op;
use crate::spec::StridedZones;

pub(super) struct Zones {
    size: u64,
    range: u64,
    skip: u64,
    /// Bytes done since the current zone began (fio's zone_bytes, one count for the job).
    bytes: u64,
    /// Each file's current zone, from the file's start (fio's file_offset while zoned).
    start: Vec<u64>,
    /// Each file's end (its real_file_size), from the file's start.
    pub(super) end: Vec<u64>,
    /// The time-based zone restart just dropped the file's cached pages: the request
    /// asked for again after the drop does not drop them again.
    pub(super) dropped: bool,
}

impl Zones {
    pub(super) fn new(z: &StridedZones, files: &[FileWalk]) -> Zones {
        Zones {
            size: z.size,
            range: z.range.max(1),
            skip: z.skip,
            bytes: 0,
            start: files.iter().map(|f| f.offset).collect(),
            end: files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let end = z.file_ends.get(i).copied().unwrap_or(0);
                    end.max(f.offset + f.length)
                })
                .collect(),
            dropped: false,
        }
    }

    /// A new round: every zone back at its region's start, no bytes done (fio's
    /// clear_io_state and reset_io_counters).
    pub(super) fn restart(&mut self, files: &[FileWalk]) {
        self.bytes = 0;
        for (s, f) in self.start.iter_mut().zip(files) {
            *s = f.offset;
        }
    }

    /// Where file `fi`'s zone starts, from its region's start.
    pub(super) fn zone_start(&self, fi: usize, f: &FileWalk) -> u64 {
        self.start[fi].wrapping_sub(f.offset)
    }

    /// Before a request of direction `dir` in file `fi` (fio's setup_strided_zone_mode):
    /// the zone moves on once its bytes are done, the direction goes back to the zone's
    /// start once past its range, and every direction does (the map cleared) at each
    /// multiple of the range. fio's unsigned arithmetic is kept.
    pub(super) fn enter(&mut self, fi: usize, f: &mut FileWalk, dir: usize) {
        if self.bytes >= self.size {
            self.bytes = 0;
            let mut s = self.start[fi]
                .wrapping_add(self.range)
                .wrapping_add(self.skip);
            if s >= self.end[fi] {
                s = f.offset;
            }
            self.start[fi] = s;
            f.pos[dir] = s.wrapping_sub(f.offset);
        }
        let s = self.start[fi];
        if f.offset.wrapping_add(f.pos[dir]) >= s.wrapping_add(self.range) {
            f.pos[dir] = s.wrapping_sub(f.offset);
        }
        if self.bytes.is_multiple_of(self.range) {
            f.pos = [s.wrapping_sub(f.offset); 3];
            f.last_start = [NONE; 2];
            f.restart_random();
        }
    }

    /// A request of `len` bytes was issued.
    pub(super) fn issued(&mut self, len: u64) {
        self.bytes += len;
        self.dropped = false;
    }
}

/// What the zoned walk found for the next request.
enum Next {
    /// In file `.0`, at `.1` from its region's start.
    At(usize, u64),
    /// An operation that comes first (a drop of cached pages).
    First(Op),
    /// Every file is done for the round.
    AllDone,
}

impl JobWalk {
    /// The file and offset (from its region's start) of a zoned job's next request of
    /// direction `dir`, `len` made to fit; `Err`: what comes instead.
    #[inline(never)]
    pub(super) fn next_zoned(
        &mut self,
        dir: usize,
        len: &mut u64,
        rng: &mut Rng,
    ) -> Result<(usize, u64), Op> {
        let Some(mut z) = self.zones.take() else {
            return Err(Op::Done);
        };
        let next = self.zoned(&mut z, dir, len, rng);
        self.zones = Some(z);
        match next {
            Next::At(fi, at) => Ok((fi, at)),
            Next::First(op) => Err(op),
            Next::AllDone => {
                self.files_done();
                Err(self.next(rng))
            }
        }
    }

    /// Files take turns, as fio's get_next_file gives them; a file whose request fails
    /// is done and the next one is asked, with the zone state as the failed one left it
    /// (fio's set_io_u_file).
    fn zoned(&mut self, z: &mut Zones, dir: usize, len: &mut u64, rng: &mut Rng) -> Next {
        let n = self.files.len();
        let random = !self.access.is_sequential();
        loop {
            let Some(fi) = (0..n)
                .map(|k| (self.next_file + k) % n)
                .find(|&i| !self.files[i].done)
            else {
                return Next::AllDone;
            };
            if self.drops_due > 0 && self.files[fi].drop_due {
                // Opened again (a new round): its drop comes first.
                self.next_file = fi;
                return Next::First(self.take_drop(fi).unwrap_or(Op::DropCache(fi as u32)));
            }
            z.enter(fi, &mut self.files[fi], dir);
            let at = if random {
                self.zoned_draw(z, fi, dir, len, rng)
            } else {
                self.zoned_in_order(z, fi, dir, len, rng)
            };
            match at {
                Ok(Some(at)) => {
                    self.next_file = (fi + 1) % n;
                    z.issued(*len);
                    return Next::At(fi, at);
                }
                Ok(None) => {
                    if !self.files[fi].done {
                        self.files[fi].done = true;
                        self.closing(fi);
                    }
                }
                Err(op) => {
                    self.next_file = fi;
                    return Next::First(op);
                }
            }
        }
    }

    /// A sequential request in the zone (fio's get_next_seq_offset, get_next_offset and
    /// get_next_buflen): where the direction's previous request ended; `None` when it
    /// starts at or past the file's end or runs past it. A size range keeps to the
    /// region's end, as fio's io_u_fits does; one fixed size only to the file's.
    fn zoned_in_order(
        &mut self,
        z: &mut Zones,
        fi: usize,
        dir: usize,
        len: &mut u64,
        rng: &mut Rng,
    ) -> Result<Option<u64>, Op> {
        let f = &mut self.files[fi];
        let start = z.zone_start(fi, f);
        let end = z.end[fi] - f.offset;
        if !self.rounds_end_when_done && f.pos[dir] >= f.length {
            // A time-based job's only file: the zone starts over, its pages dropped
            // first unless direct (fio's loop_cache_invalidate).
            f.pos[dir] = start;
            if self.drop_on_wrap && !z.dropped {
                z.dropped = true;
                return Err(Op::DropZone(fi as u32, z.start[fi]));
            }
        }
        let at = f.pos[dir];
        if at >= end || at.wrapping_sub(start) >= f.length {
            return Ok(None);
        }
        let sizes = &self.sizes[dir];
        if sizes.min() == sizes.max() {
            if *len > end - at {
                return Ok(None);
            }
        } else {
            let room = f.length.saturating_sub(at);
            if self.min_sizes[dir] > room {
                return Ok(None);
            }
            if *len > room {
                *len = self.size_within(dir, rng, room);
            }
        }
        self.files[fi].pos[dir] = at + *len;
        Ok(Some(at))
    }

    /// A random request in the zone: a block of the zone's range drawn (fio's
    /// get_next_rand_offset over the range's blocks); `None` when it starts at or past
    /// the file's end or runs past it (a zone cut short by the file's end), or the map is
    /// used up in a job with a byte limit.
    fn zoned_draw(
        &mut self,
        z: &mut Zones,
        fi: usize,
        dir: usize,
        len: &mut u64,
        rng: &mut Rng,
    ) -> Result<Option<u64>, Op> {
        let asked = *len;
        loop {
            let f = &mut self.files[fi];
            match f.draw(dir, len, self.align, &self.runs, rng) {
                Draw::At(rel) => {
                    let end = z.end[fi] - f.offset;
                    let at = z.zone_start(fi, f).wrapping_add(rel);
                    let fits = rel < f.length && at < end && asked <= end - at;
                    return Ok(fits.then_some(at));
                }
                Draw::Wrapped => return Err(Op::DropCache(fi as u32)),
                Draw::UsedUp => match self.map_used_up(fi) {
                    Wrap::Done => return Ok(None),
                    Wrap::Drop => return Err(Op::DropZone(fi as u32, z.start[fi])),
                    Wrap::Again => {}
                },
            }
        }
    }
}
