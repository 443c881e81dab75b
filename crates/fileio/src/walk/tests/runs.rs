//! Zoned distributions and random requests that go on from the previous one
//! (`percentage_random`, `rw=randread:N`).

use super::*;
use plumb_core::random::{ZoneBytes, ZoneShare};

fn zoned(zones: &[(u8, u8)]) -> Skew {
    Skew::Zoned {
        zones: zones
            .iter()
            .map(|&(access_pct, size_pct)| ZoneShare {
                access_pct,
                size_pct,
            })
            .collect(),
    }
}

/// The offsets of every request of `access` over `j`, in order.
fn offsets(access: Access, j: &JobIo) -> Vec<u64> {
    run(&mut JobWalk::new(access, j))
        .into_iter()
        .filter_map(|o| match o {
            Op::Read(io) | Op::Write(io) | Op::Trim(io) => Some(io.offset),
            _ => None,
        })
        .collect()
}

fn with_random_pct(access: Access, random_pct: [u8; 3]) -> Access {
    Access {
        random_pct,
        ..access
    }
}

#[test]
fn zones_get_their_share_of_the_requests_and_no_map() {
    // 1024 blocks read ten times over: 10240 requests.
    let mut j = job(&[(0, 4 << 20)], 4096);
    j.pass_bytes = 40 << 20;
    j.skew = zoned(&[(60, 10), (30, 20), (10, 70)]);
    let c = block_counts(&j, 12);
    let total: u64 = c.values().sum();
    assert_eq!(total, 10240);
    let share = |r: std::ops::Range<u64>| {
        c.iter()
            .filter(|(k, _)| r.contains(&(k.1 / 4096)))
            .map(|(_, n)| n)
            .sum::<u64>() as f64
            / total as f64
    };
    // fio's zones over 1024 blocks: [0, 102), [102, 306), [307, 1023).
    let (a, b, t) = (share(0..102), share(102..306), share(307..1023));
    // A share's standard deviation is at most 0.005 here: ±0.03 is six of them.
    assert!((a - 0.6).abs() < 0.03, "{a}");
    assert!((b - 0.3).abs() < 0.03, "{b}");
    assert!((t - 0.1).abs() < 0.03, "{t}");
    assert_eq!(
        share(306..307) + share(1023..1024),
        0.0,
        "fio's rounding gaps"
    );
}

#[test]
fn absolute_zones_stay_inside_a_region_that_starts_later() {
    let mut j = job(&[(1 << 20, 1 << 20)], 4096);
    j.pass_bytes = 4 << 20;
    j.skew = Skew::ZonedAbs {
        zones: vec![
            ZoneBytes {
                access_pct: 50,
                bytes: 64 << 10,
            },
            ZoneBytes {
                access_pct: 50,
                bytes: 128 << 10,
            },
        ],
    };
    let c = block_counts(&j, 13);
    assert_eq!(c.values().sum::<u64>(), 1024);
    let first: u64 = c
        .iter()
        .filter(|(k, _)| k.1 < (1 << 20) + (64 << 10))
        .map(|(_, n)| n)
        .sum();
    assert!(
        (412..=612).contains(&first),
        "{first} of 1024 in the first zone"
    );
    for &(_, off) in c.keys() {
        assert!(((1 << 20)..(1 << 20) + (192 << 10)).contains(&off), "{off}");
    }
}

#[test]
fn no_share_drawn_walks_on_from_the_region_s_start() {
    let j = job(&[(0, 16384)], 4096);
    let access = with_random_pct(Access::rand_read(), [0, 100, 100]);
    assert_eq!(offsets(access, &j), [0, 4096, 8192, 12288]);
    // A sequential order has nothing to share out.
    let seq = with_random_pct(Access::seq_read(), [0; 3]);
    assert_eq!(offsets(seq, &j), [0, 4096, 8192, 12288]);
}

#[test]
fn going_on_marks_nothing_so_a_draw_past_the_end_finds_the_map_free() {
    // io_size of five blocks over four: the fifth request has no room to go on and is
    // drawn, from a map the four before did not fill (fio flags them busy-ok), in the same
    // round.
    let mut j = job(&[(0, 16384)], 4096);
    j.pass_bytes = 20480;
    let access = with_random_pct(Access::rand_read(), [0, 100, 100]);
    assert_eq!(
        spelled(&mut JobWalk::new(access, &j), 100),
        "R0 R0 R0 R0 R0 -"
    );
    let offs = offsets(access, &j);
    assert_eq!(offs[..4], [0, 4096, 8192, 12288]);
    assert!(offs[4] < 16384 && offs[4].is_multiple_of(4096));
}

#[test]
fn a_share_of_the_requests_goes_on_from_the_previous_one() {
    let mut j = job(&[(0, 4 << 20)], 4096);
    j.random_map = false;
    j.pass_bytes = 40 << 20;
    for pct in [25u8, 50, 90] {
        let offs = offsets(with_random_pct(Access::rand_read(), [pct, 100, 100]), &j);
        assert_eq!(offs.len(), 10240);
        let on = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        let share = on as f64 / (offs.len() - 1) as f64;
        let want = 1.0 - pct as f64 / 100.0;
        // A standard deviation below 0.005; a draw lands right after the previous request
        // 1 time in 1024.
        assert!((share - want).abs() < 0.03, "{pct}%: {share}");
    }
}

#[test]
fn each_direction_has_its_own_share_and_position() {
    let mut j = job(&[(0, 4 << 20)], 4096);
    j.random_map = false;
    j.pass_bytes = 4 << 20;
    let access = with_random_pct(
        Access::new(Mix::Share { read_pct: 50 }, Access::rand_read().order),
        [100, 0, 100],
    );
    let ops = run(&mut JobWalk::new(access, &j));
    let writes: Vec<u64> = ops
        .iter()
        .filter_map(|o| match o {
            Op::Write(io) => Some(io.offset),
            _ => None,
        })
        .collect();
    let reads = ops.iter().filter(|o| matches!(o, Op::Read(_))).count();
    assert!(writes.len() > 400 && reads > 400);
    let expect: Vec<u64> = (0..writes.len() as u64).map(|k| k * 4096).collect();
    assert_eq!(writes, expect, "writes walk on from the start");
}

#[test]
fn a_time_based_job_s_only_file_starts_over_where_fio_wraps() {
    let timed = |files: &[(u64, u64)], on_wrap| {
        let mut j = dropping(job(files, 4096), on_wrap);
        j.passes = None;
        j.random_map = false;
        j
    };
    let access = with_random_pct(Access::rand_read(), [0, 100, 100]);
    let one = timed(&[(0, 8192)], true);
    assert_eq!(
        spelled(&mut JobWalk::new(access, &one), 7),
        "D0 R0 R0 D0 R0 R0 D0"
    );
    let mut w = JobWalk::new(access, &one);
    let mut rng = Rng::new(1, 0);
    let offs: Vec<u64> = std::iter::from_fn(|| Some(w.next(&mut rng)))
        .filter_map(|o| match o {
            Op::Read(io) => Some(io.offset),
            _ => None,
        })
        .take(6)
        .collect();
    assert_eq!(offs, [0, 4096, 0, 4096, 0, 4096]);
    // Direct I/O: no drop.
    let one = timed(&[(0, 8192)], false);
    assert_eq!(
        spelled(&mut JobWalk::new(access, &one), 5),
        "D0 R0 R0 R0 R0"
    );
    // Two files: a request with no room left is drawn; nothing is dropped.
    let two = timed(&[(0, 8192), (0, 8192)], true);
    assert_eq!(
        spelled(&mut JobWalk::new(access, &two), 9),
        "D0 R0 D1 R1 R0 R1 R0 R1 R0"
    );
}

#[test]
fn strides_count_their_requests_from_each_due_draw() {
    // rw=randread:3 with half the due draws going on: runs of three, each the previous
    // request's successor unless drawn.
    let mut j = job(&[(0, 4 << 20)], 4096);
    j.random_map = false;
    j.stride = Some(3);
    j.pass_bytes = 4 << 20;
    let offs = offsets(Access::rand_read(), &j);
    // Within each run of three, the second and third follow on.
    let on = offs
        .chunks(3)
        .filter(|c| c.len() == 3 && c[1] == c[0] + 4096 && c[2] == c[1] + 4096)
        .count();
    assert!(on >= offs.len() / 3 - 4, "{on} of {}", offs.len() / 3);
    let mixed = offsets(with_random_pct(Access::rand_read(), [0, 100, 100]), &j);
    assert_eq!(
        mixed,
        (0..1024u64).map(|k| k * 4096).collect::<Vec<_>>(),
        "no draw at all"
    );
}
