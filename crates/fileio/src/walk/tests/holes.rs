//! Holes between sequential requests (fio's `rw=read:N`), forward and backward, checked
//! against the offsets fio 3.33 issues for the same jobs (64 KiB regions, 4 KiB blocks).

use super::*;

const K: u64 = 1024;

/// A sequential walk of `j` with a `hole` after each request: the offsets of its first `n`
/// requests (read or written) in KiB, drops and drains left out.
fn holed(access: Access, mut j: JobIo, hole: i64, n: usize) -> Vec<u64> {
    j.stride = Some(hole);
    let mut w = JobWalk::new(access, &j);
    let mut rng = Rng::new(3, 0);
    let mut v = Vec::new();
    while v.len() < n {
        match w.next(&mut rng) {
            Op::Done => break,
            Op::Read(io) | Op::Write(io) => v.push(io.offset / K),
            _ => {}
        }
    }
    v
}

#[test]
fn a_negative_hole_walks_back_and_wraps_below_the_start_to_the_end() {
    // fio's rw=read:-8k: each request 8 KiB back from the previous one's end, 4 KiB below
    // its start; below 0 it goes on from the region's length less 8 KiB, so block 0 is read
    // twice and the last block never.
    let want = [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0];
    for access in [Access::seq_read(), Access::seq_write()] {
        assert_eq!(holed(access, job(&[(0, 64 * K)], 4096), -8192, 100), want);
    }
    // Twice the bytes: the walk goes on in place, never starting over at 0.
    let mut j = job(&[(0, 64 * K)], 4096);
    j.pass_bytes = 128 * K;
    let got = holed(Access::seq_read(), j, -8192, 100);
    assert_eq!(got.len(), 32);
    assert_eq!(
        got[16..],
        [56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 56]
    );
}

#[test]
fn a_hole_shorter_than_the_block_overlaps_forward() {
    // bs=8k, rw=read:-4k: each request starts 4 KiB into the previous one.
    let j = job(&[(0, 64 * K)], 8192);
    assert_eq!(
        holed(Access::seq_read(), j, -4096, 100),
        [0, 4, 8, 12, 16, 20, 24, 28]
    );
    // bs=4k, rw=read:-4k: the same block over and over.
    let j = job(&[(0, 64 * K)], 4096);
    assert_eq!(holed(Access::seq_read(), j, -4096, 100), [0; 16]);
}

#[test]
fn a_hole_past_the_region_ends_the_file_after_one_request() {
    // rw=read:-128k over 64 KiB: length - 128k wraps too, past the region: fio reads block
    // 0 and finds the file done.
    let j = job(&[(0, 64 * K)], 4096);
    assert_eq!(holed(Access::seq_read(), j, -128 * 1024, 100), [0]);
    // As deep as the region: back to 0 every time.
    let j = job(&[(0, 64 * K)], 4096);
    assert_eq!(holed(Access::seq_read(), j, -64 * 1024, 100), [0; 16]);
}

#[test]
fn a_region_at_an_offset_walks_back_from_its_length_taken_as_a_position() {
    // offset=16k, size=64k, rw=read:-8k: fio starts from io_size (64k) less the offset,
    // then the hole, so at 40k in the region (56k in the file), down to the region's start,
    // then from 56k in the region (72k).
    let j = job(&[(16 * K, 64 * K)], 4096);
    assert_eq!(
        holed(Access::seq_read(), j, -8192, 100),
        [56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 72, 68, 64, 60, 56]
    );
    // An offset past the region's length: that start wraps, then goes on from the end.
    let j = job(&[(96 * K, 64 * K)], 4096);
    assert_eq!(
        holed(Access::seq_read(), j, -8192, 100),
        [152, 148, 144, 140, 136, 132, 128, 124, 120, 116, 112, 108, 104, 100, 96, 152]
    );
}

#[test]
fn a_forward_hole_past_the_file_starts_over_at_the_offset_taken_as_a_position() {
    // offset=16k, size=64k, rw=read:76k: past the file's end (80k) fio starts over at 16k
    // in the region, 32k in the file.
    let j = job(&[(16 * K, 64 * K)], 4096);
    assert_eq!(holed(Access::seq_read(), j, 76 * 1024, 4), [16, 32, 32, 32]);
    // A hole that lands between the region's end and the file's: the file is done.
    let j = job(&[(16 * K, 64 * K)], 4096);
    assert_eq!(
        holed(Access::seq_read(), j, 8192, 100),
        [16, 28, 40, 52, 64, 76]
    );
}

#[test]
fn files_take_turns_each_walking_back_on_its_own() {
    let j = job(&[(0, 32 * K), (0, 32 * K)], 4096);
    let got = holed(Access::seq_read(), j, -8192, 100);
    assert_eq!(
        got,
        [0, 0, 24, 24, 20, 20, 16, 16, 12, 12, 8, 8, 4, 4, 0, 0]
    );
}

#[test]
fn a_time_based_file_starts_over_in_place_only_at_the_region_s_end() {
    let timed = |files: &[(u64, u64)], bs| {
        let mut j = job(files, bs);
        j.passes = None;
        j
    };
    // bs=8k, rw=read:-4k, offset=16k: the request that ends at the region's end sends the
    // walk back to its start, where it goes back from length - offset again.
    assert_eq!(
        holed(
            Access::seq_read(),
            timed(&[(16 * K, 64 * K)], 8192),
            -4096,
            12
        ),
        [60, 64, 68, 72, 60, 64, 68, 72, 60, 64, 68, 72]
    );
    // bs=12k, rw=read:-4k: 56k leaves no room for 12 KiB, so the file is done and the next
    // round opens it again (fio closes it): a drain between.
    let mut j = timed(&[(0, 64 * K)], 12288);
    j.stride = Some(-4096);
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_read(), &j), 16),
        "R0 R0 R0 R0 R0 R0 R0 - R0 R0 R0 R0 R0 R0 R0 -"
    );
    // A walk backward never ends a request at the region's end: it cycles in place.
    assert_eq!(
        holed(Access::seq_read(), timed(&[(0, 64 * K)], 4096), -8192, 20),
        [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 56, 52, 48, 44]
    );
}

#[test]
fn a_time_based_start_over_drops_the_pages_before_the_hole_is_taken() {
    let mut j = dropping(job(&[(16 * K, 64 * K)], 8192), true);
    j.passes = None;
    j.stride = Some(-4096);
    let mut w = JobWalk::new(Access::seq_read(), &j);
    let mut rng = Rng::new(3, 0);
    let got: Vec<String> = (0..12)
        .map(|_| match w.next(&mut rng) {
            Op::DropCache(f) => format!("D{f}"),
            Op::Read(io) => (io.offset / K).to_string(),
            o => format!("{o:?}"),
        })
        .collect();
    assert_eq!(
        got,
        ["D0", "60", "64", "68", "72", "D0", "60", "64", "68", "72", "D0", "60"]
    );
}
