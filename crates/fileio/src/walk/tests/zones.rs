//! fio's zonemode=strided, checked against the offsets fio 3.33 issues for the same jobs
//! (4 KiB blocks, its --write_iolog).

use super::*;
use crate::spec::StridedZones;

const K: u64 = 1024;

fn zoned(mut j: JobIo, size: u64, range: u64, skip: u64) -> JobIo {
    j.zones = Some(StridedZones {
        size: size * K,
        range: range * K,
        skip: skip * K,
        file_ends: Vec::new(),
    });
    j
}

/// The (file, offset in KiB) of each request up to the end or the first `n`.
fn walked(access: Access, j: &JobIo, n: usize) -> Vec<(u32, u64)> {
    let mut w = JobWalk::new(access, j);
    let mut rng = Rng::new(3, 0);
    let mut v = Vec::new();
    while v.len() < n {
        match w.next(&mut rng) {
            Op::Done => break,
            Op::Read(io) | Op::Write(io) | Op::Trim(io) => v.push((io.file, io.offset / K)),
            _ => {}
        }
    }
    v
}

fn offsets(access: Access, j: &JobIo, n: usize) -> Vec<u64> {
    walked(access, j, n).into_iter().map(|(_, o)| o).collect()
}

#[test]
fn zones_of_a_smaller_size_than_their_range_are_walked_again_until_the_bytes_are_done() {
    // size=1m zonesize=16k zonerange=32k zoneskip=64k: 16 KiB every 96 KiB, eleven zones,
    // then from the start again until 1 MiB is read.
    let j = zoned(job(&[(0, 1024 * K)], 4096), 16, 32, 64);
    let got = offsets(Access::seq_read(), &j, 1000);
    assert_eq!(got.len(), 256);
    let zone: Vec<u64> = (0..11)
        .flat_map(|z| (0..4).map(move |b| z * 96 + b * 4))
        .collect();
    assert_eq!(got[..44], zone[..]);
    assert_eq!(got[44..88], zone[..]);
    assert_eq!(got[252..], [0, 4, 8, 12].map(|o| o + 96 * 8)[..]);
}

#[test]
fn a_size_above_the_range_reads_the_zone_several_times() {
    // size=256k zonesize=48k zonerange=16k zoneskip=64k.
    let j = zoned(job(&[(0, 256 * K)], 4096), 48, 16, 64);
    let got = offsets(Access::seq_read(), &j, 1000);
    let thrice = |z: u64| (0..12).map(move |i| z + (i % 4) * 4);
    let want: Vec<u64> = [0, 80, 160, 240, 0, 80]
        .into_iter()
        .flat_map(thrice)
        .take(64)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_zone_cut_short_by_the_file_s_end_ends_the_file() {
    // size=100k zonesize=16k zonerange=32k zoneskip=0: the zone at 96k has one block.
    let want = [0, 4, 8, 12, 32, 36, 40, 44, 64, 68, 72, 76, 96];
    let j = zoned(job(&[(0, 100 * K)], 4096), 16, 32, 0);
    assert_eq!(offsets(Access::seq_read(), &j, 1000), want);
    // loops=2: each round starts over at the first zone.
    let mut j2 = j.clone();
    j2.passes = Some(2);
    assert_eq!(
        offsets(Access::seq_read(), &j2, 1000),
        [want, want].concat()
    );
    // A time-based job reads the short zone's block until the zone's bytes are done.
    let mut tb = j.clone();
    tb.passes = None;
    let got = offsets(Access::seq_read(), &tb, 40);
    let mut pass = want[..12].to_vec();
    pass.extend([96; 4]);
    assert_eq!(got, [&pass[..], &pass[..], &want[..8]].concat());
}

#[test]
fn zone_sizes_that_do_not_divide_by_the_block_take_whole_blocks() {
    // size=128k zonesize=10k zonerange=16k zoneskip=16k: three blocks a zone.
    let j = zoned(job(&[(0, 128 * K)], 4096), 10, 16, 16);
    let got = offsets(Access::seq_read(), &j, 1000);
    let pass: Vec<u64> = [0, 32, 64, 96]
        .into_iter()
        .flat_map(|z| [z, z + 4, z + 8])
        .collect();
    assert_eq!(got, [&pass[..], &pass[..], &pass[..8]].concat());
}

#[test]
fn an_offset_moves_the_zones_and_the_start_they_wrap_to() {
    // offset=32k size=128k zonesize=8k zonerange=16k zoneskip=16k.
    let j = zoned(job(&[(32 * K, 128 * K)], 4096), 8, 16, 16);
    let pass = [32, 36, 64, 68, 96, 100, 128, 132];
    assert_eq!(offsets(Access::seq_read(), &j, 1000), pass.repeat(4));
}

#[test]
fn the_zone_count_is_the_job_s_so_the_first_file_takes_every_move() {
    // nrfiles=2 (64 KiB each) zonesize=8k zonerange=16k zoneskip=16k: the second file
    // never finds the zone's bytes done, and walks its first range over and over.
    let j = zoned(job(&[(0, 64 * K), (0, 64 * K)], 4096), 8, 16, 16);
    let got = walked(Access::seq_read(), &j, 1000);
    let want: Vec<(u32, u64)> = [0, 32]
        .into_iter()
        .cycle()
        .zip([0, 4, 8, 12].into_iter().cycle())
        .take(16)
        .flat_map(|(a, b)| [(0, a), (1, b)])
        .collect();
    assert_eq!(got, want);
}

#[test]
fn random_offsets_stay_in_the_zone_and_use_its_blocks_once_a_range() {
    // size=128k zonesize=48k zonerange=16k zoneskip=16k: each zone's four blocks three
    // times over, each time in some order.
    let j = zoned(job(&[(0, 128 * K)], 4096), 48, 16, 16);
    let got = offsets(Access::rand_read(), &j, 1000);
    assert_eq!(got.len(), 32);
    for (i, quad) in got.chunks(4).enumerate() {
        let zone = [0, 32, 64][i / 3];
        let mut q = quad.to_vec();
        q.sort_unstable();
        assert_eq!(q, [zone, zone + 4, zone + 8, zone + 12], "{got:?}");
    }
}

#[test]
fn a_mixed_job_shares_the_zone_between_its_directions() {
    // rw=rw size=64k zonesize=8k zonerange=16k zoneskip=16k: whatever the directions,
    // every two requests move the zone, and each starts at the zone's start.
    let j = zoned(job(&[(0, 64 * K)], 4096), 8, 16, 16);
    let got = offsets(
        Access::new(Mix::Share { read_pct: 50 }, Order::Sequential),
        &j,
        1000,
    );
    assert_eq!(got.len(), 16);
    for (i, pair) in got.chunks(2).enumerate() {
        let zone = [0, 32][i % 2];
        assert_eq!(pair[0], zone, "{got:?}");
        assert!(pair[1] == zone || pair[1] == zone + 4, "{got:?}");
    }
}

#[test]
fn a_time_based_zone_started_over_drops_its_pages_from_the_zone_s_start() {
    // As fio's loop_cache_invalidate, before each request that starts the short zone
    // over: from the zone's start for the region's length.
    let mut j = zoned(job(&[(0, 100 * K)], 4096), 16, 32, 0);
    j.passes = None;
    j.invalidate_on_wrap = true;
    let mut w = JobWalk::new(Access::seq_read(), &j);
    let mut rng = Rng::new(3, 0);
    let ops: Vec<Op> = (0..20).map(|_| w.next(&mut rng)).collect();
    let read = |k: u64| {
        Op::Read(Io {
            file: 0,
            offset: k * K,
            len: 4096,
        })
    };
    let drop = Op::DropZone(0, 96 * K);
    assert_eq!(
        ops[12..],
        [
            read(96),
            drop,
            read(96),
            drop,
            read(96),
            drop,
            read(96),
            read(0)
        ]
    );
}
