//! fio's zoned distributions: the region cut into zones one after another from its start,
//! each drawn with its own share of the draws, its block uniform inside it.
//!
//! As fio 3.33 draws them (io_u.c, `__get_next_rand_offset_zoned[_abs]`): a number v from 1
//! to 100 picks the zone whose shares of the draws, added up in order, first reach v, then a
//! block uniform over the zone's length. A `zoned` zone of s% starts at ⌊p·n/100⌋ (p: the
//! percentages before it) and is ⌊n·s/100⌋ blocks long, so rounding can leave a block
//! between zones untouched; a `zoned_abs` zone runs from ⌊bytes before/block⌋ to ⌊bytes up
//! to its end/block⌋. A zone of no length gives its first block every time. The table of
//! the hundred values is built once, so a draw is two random numbers and a lookup.

/// One zone of `zoned`: its share of the draws and of the region, in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ZoneShare {
    pub access_pct: u8,
    pub size_pct: u8,
}

/// One zone of `zoned_abs`: its share of the draws in percent, and its length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ZoneBytes {
    pub access_pct: u8,
    pub bytes: u64,
}

/// Where a zone lies in the region, in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneBlocks {
    pub start: u64,
    pub len: u64,
}

/// The `zoned` zones over `n` blocks, in order.
pub fn share_blocks(zones: &[ZoneShare], n: u64) -> Vec<ZoneBlocks> {
    let mut before = 0u128;
    zones
        .iter()
        .map(|z| {
            let start = before * n as u128 / 100;
            before += z.size_pct as u128;
            ZoneBlocks {
                start: start as u64,
                len: (n as u128 * z.size_pct as u128 / 100) as u64,
            }
        })
        .collect()
}

/// The `zoned_abs` zones in blocks of `block` bytes, in order (not cut at any region's end).
pub fn byte_blocks(zones: &[ZoneBytes], block: u64) -> Vec<ZoneBlocks> {
    let block = block.max(1) as u128;
    let mut before = 0u128;
    zones
        .iter()
        .map(|z| {
            let start = before / block;
            before += z.bytes as u128;
            let end = before / block;
            ZoneBlocks {
                start: start.min(u64::MAX as u128) as u64,
                len: (end - start).min(u64::MAX as u128) as u64,
            }
        })
        .collect()
}

/// The zone each of the hundred draw values picks, over `n` blocks.
#[derive(Clone, Debug)]
pub struct ZoneTable {
    /// Indexed by v − 1; empty when the zones do not share the draws out (then uniform).
    by_value: Vec<ZoneBlocks>,
}

impl ZoneTable {
    /// `zones` with their shares of the draws, in order. A zone that reaches past the
    /// region's n blocks is cut at its end (fio's front end refuses such jobs first), so a
    /// draw never leaves the region.
    pub fn new(zones: &[(u8, ZoneBlocks)], n: u64) -> ZoneTable {
        let n = n.max(1);
        let mut by_value = Vec::with_capacity(100);
        for &(share, z) in zones {
            let start = z.start.min(n - 1);
            let len = z.len.min(n - start);
            by_value.extend(std::iter::repeat_n(
                ZoneBlocks { start, len },
                share as usize,
            ));
        }
        if by_value.len() != 100 {
            by_value.clear();
        }
        ZoneTable { by_value }
    }

    /// The zone value `v` (1 to 100) picks; `None` without zones.
    pub fn zone(&self, v: u64) -> Option<ZoneBlocks> {
        self.by_value.get((v as usize).wrapping_sub(1)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(access_pct: u8, size_pct: u8) -> ZoneShare {
        ZoneShare {
            access_pct,
            size_pct,
        }
    }

    #[test]
    fn percent_zones_round_as_fio_rounds() {
        // 256 blocks, 10% then 90%: the second zone starts at block 25 and is 230 long, so
        // block 255 is never drawn (fio's arithmetic).
        let z = share_blocks(&[share(60, 10), share(40, 90)], 256);
        assert_eq!(
            z,
            [
                ZoneBlocks { start: 0, len: 25 },
                ZoneBlocks {
                    start: 25,
                    len: 230
                }
            ]
        );
        // A zone of 0% after the others: no length, at the region's end.
        let z = share_blocks(&[share(100, 100), share(0, 0)], 100);
        assert_eq!(z[1], ZoneBlocks { start: 100, len: 0 });
    }

    #[test]
    fn byte_zones_floor_their_bounds_by_the_block() {
        let z = byte_blocks(
            &[
                ZoneBytes {
                    access_pct: 50,
                    bytes: 6144,
                },
                ZoneBytes {
                    access_pct: 50,
                    bytes: 6144,
                },
            ],
            4096,
        );
        assert_eq!(
            z,
            [
                ZoneBlocks { start: 0, len: 1 },
                ZoneBlocks { start: 1, len: 2 }
            ]
        );
    }

    #[test]
    fn the_table_gives_each_zone_its_values_in_order() {
        let zones = share_blocks(&[share(60, 10), share(40, 90)], 100);
        let t = ZoneTable::new(&[(60, zones[0]), (40, zones[1])], 100);
        assert_eq!(t.zone(1), Some(zones[0]));
        assert_eq!(t.zone(60), Some(zones[0]));
        assert_eq!(t.zone(61), Some(zones[1]));
        assert_eq!(t.zone(100), Some(zones[1]));
        assert_eq!(t.zone(0), None);
        assert_eq!(t.zone(101), None);
    }

    #[test]
    fn zones_past_the_region_are_cut_at_its_end() {
        let t = ZoneTable::new(
            &[
                (50, ZoneBlocks { start: 0, len: 10 }),
                (50, ZoneBlocks { start: 8, len: 10 }),
            ],
            12,
        );
        assert_eq!(t.zone(100), Some(ZoneBlocks { start: 8, len: 4 }));
        let t = ZoneTable::new(&[(100, ZoneBlocks { start: 30, len: 0 })], 12);
        assert_eq!(t.zone(1), Some(ZoneBlocks { start: 11, len: 0 }));
    }

    #[test]
    fn shares_that_do_not_add_up_to_100_make_no_table() {
        let t = ZoneTable::new(&[(60, ZoneBlocks { start: 0, len: 1 })], 10);
        assert_eq!(t.zone(1), None);
    }
}
