use super::*;
use crate::spec::{Allocation, BlockSizes, NamedFile};
use plumb_core::random::{RandType, Skew};
use std::collections::HashMap;

fn job(files: &[(u64, u64)], bs: u64) -> JobIo {
    JobIo {
        files: files
            .iter()
            .enumerate()
            .map(|(i, &(offset, length))| NamedFile {
                path: format!("f{i}").into(),
                offset,
                length,
            })
            .collect(),
        sizes: BlockSizes::fixed(bs),
        align: bs,
        random_map: true,
        lfsr: false,
        skew: Skew::Uniform,
        think: None,
        pass_bytes: files.iter().map(|f| f.1).sum(),
        passes: Some(1),
        round_bytes: None,
        repeat_each_round: false,
        sync_every_writes: 0,
        lay_out_data: true,
        allocate: Allocation::None,
        layout_unsynced: false,
        no_create: false,
        tolerate: None,
        unlink: false,
        invalidate: false,
        invalidate_on_wrap: false,
        advice: None,
        create_at_open: false,
        fill_device: false,
        queue_low: None,
        batch: None,
        stride: None,
        log: None,
        trace: None,
        zones: None,
        replay: None,
        pre_read: false,
        serialize_overlap: false,
        number_ios: None,
        service: Default::default(),
        min_rate: None,
        max_latency: None,
        flow: None,
        verify: None,
    }
}

/// Every operation up to the end, the drains between rounds left out ([`spelled`]
/// shows them).
fn run(w: &mut JobWalk) -> Vec<Op> {
    let mut rng = Rng::new(3, 0);
    let mut v = Vec::new();
    loop {
        match w.next(&mut rng) {
            Op::Done => return v,
            Op::Drain => {}
            op => v.push(op),
        }
    }
}

#[test]
fn sequential_files_take_turns_from_their_offsets() {
    let mut w = JobWalk::new(Access::seq_read(), &job(&[(0, 8192), (4096, 8192)], 4096));
    let ops = run(&mut w);
    let r = |file, offset| {
        Op::Read(Io {
            file,
            offset,
            len: 4096,
        })
    };
    assert_eq!(ops, [r(0, 0), r(1, 4096), r(0, 4096), r(1, 8192)]);
}

#[test]
fn random_map_uses_every_block_once_per_pass() {
    let mut j = job(&[(0, 1 << 20)], 4096);
    j.passes = Some(3);
    let mut w = JobWalk::new(Access::rand_write(), &j);
    let ops = run(&mut w);
    assert_eq!(ops.len(), 3 * 256);
    for pass in ops.chunks(256) {
        let mut seen = HashMap::new();
        for o in pass {
            let Op::Write(io) = o else { panic!("{o:?}") };
            assert_eq!(io.offset % 4096, 0);
            *seen.entry(io.offset).or_insert(0) += 1;
        }
        assert_eq!(seen.len(), 256);
    }
}

#[test]
fn share_mix_and_sync_every_writes() {
    let mut j = job(&[(0, 4 << 20)], 4096);
    j.sync_every_writes = 4;
    let mut w = JobWalk::new(
        Access::new(Mix::Share { read_pct: 70 }, Order::Sequential),
        &j,
    );
    let ops = run(&mut w);
    let reads = ops.iter().filter(|o| matches!(o, Op::Read(_))).count();
    let writes = ops.iter().filter(|o| matches!(o, Op::Write(_))).count();
    let syncs = ops.iter().filter(|o| matches!(o, Op::Fsync(_))).count();
    assert_eq!(reads + writes, 1024);
    assert!((650..780).contains(&reads), "{reads}");
    // A sync comes before any request while the writes so far are a nonzero multiple of 4
    // and the request before was no sync (fio's rule), so a read after the sync brings
    // another; none comes after the last request.
    let (mut written, mut last_sync, mut want) = (0, false, 0);
    for (i, o) in ops.iter().enumerate() {
        let due = written > 0 && written % 4 == 0 && !last_sync;
        assert_eq!(matches!(o, Op::Fsync(_)), due, "op {i}: {o:?}");
        want += usize::from(due);
        written += usize::from(matches!(o, Op::Write(_)));
        last_sync = matches!(o, Op::Fsync(_));
    }
    assert_eq!(syncs, want);
    assert!(syncs > writes / 4, "{syncs} syncs for {writes} writes");
    // Each direction walks the file on its own from offset 0.
    let first_write = ops.iter().find_map(|o| match o {
        Op::Write(io) => Some(io.offset),
        _ => None,
    });
    assert_eq!(first_write, Some(0));
}

fn io(file: u32, offset: u64) -> Io {
    Io {
        file,
        offset,
        len: 4096,
    }
}

#[test]
fn a_region_tail_shorter_than_a_block_is_left_untouched() {
    // fio's size=32k over nrfiles=3: 10922 bytes each, two whole blocks per file.
    let j = job(&[(0, 10922), (0, 10922), (0, 10922)], 4096);
    let ops = run(&mut JobWalk::new(Access::seq_read(), &j));
    let want: Vec<Op> = [0, 4096]
        .iter()
        .flat_map(|&o| (0..3).map(move |f| Op::Read(io(f, o))))
        .collect();
    assert_eq!(ops, want);
}

#[test]
fn io_size_beyond_the_regions_starts_the_files_over_while_a_block_fits() {
    let mut j = job(&[(0, 10922), (0, 10922), (0, 10922)], 4096);
    j.pass_bytes = 64 << 10;
    let ops = run(&mut JobWalk::new(Access::seq_write(), &j));
    // Two rounds of 6 blocks (48 KiB), then 4 of the third round reach 64 KiB.
    assert_eq!(ops.len(), 16);
    let w = |f, o| Op::Write(io(f, o));
    assert_eq!(ops[12..], [w(0, 0), w(1, 0), w(2, 0), w(0, 4096)]);
}

#[test]
fn a_sync_takes_the_next_turn_and_only_when_the_job_goes_on() {
    let mut j = job(&[(0, 8192), (0, 8192)], 4096);
    j.sync_every_writes = 1;
    let ops = run(&mut JobWalk::new(Access::seq_write(), &j));
    let w = |f, o| Op::Write(io(f, o));
    assert_eq!(
        ops,
        [
            w(0, 0),
            Op::Fsync(1),
            w(0, 4096),
            Op::Fsync(1),
            w(1, 0),
            Op::Fsync(1),
            w(1, 4096)
        ]
    );
    j.sync_every_writes = 2;
    let ops = run(&mut JobWalk::new(Access::seq_write(), &j));
    assert_eq!(ops.iter().filter(|o| matches!(o, Op::Fsync(_))).count(), 1);
}

#[test]
fn split_sizes_follow_their_weights() {
    // Without a map, so no request is cut where a used block starts.
    let mut j = job(&[(0, 64 << 20)], 4096);
    j.sizes.read = SizeChoice::Split(vec![(4096, 25), (65536, 75)]);
    j.random_map = false;
    let mut w = JobWalk::new(Access::rand_read(), &j);
    let ops = run(&mut w);
    let big = ops
        .iter()
        .filter(|o| matches!(o, Op::Read(io) if io.len == 65536))
        .count() as f64;
    let share = big / ops.len() as f64;
    assert!((0.70..0.80).contains(&share), "{share}");
    let bytes: u64 = ops
        .iter()
        .map(|o| match o {
            Op::Read(io) => io.len as u64,
            _ => 0,
        })
        .sum();
    assert!(bytes >= 64 << 20);
}

#[test]
fn a_long_random_request_takes_the_free_blocks_after_its_own() {
    // 4k and 16k requests over a mapped region: every block once per round, none
    // twice (a request is cut where a used block starts, as fio's axmap_set_nr cuts it).
    let mut j = job(&[(0, 1 << 20)], 4096);
    j.sizes.read = SizeChoice::Split(vec![(4096, 50), (16384, 50)]);
    j.passes = Some(2);
    let mut w = JobWalk::new(Access::rand_read(), &j);
    let mut rng = Rng::new(7, 0);
    let mut rounds = vec![vec![0u8; 256]];
    let mut cut = 0;
    loop {
        match w.next(&mut rng) {
            Op::Read(io) => {
                let r = rounds.last_mut().unwrap();
                assert_eq!(io.offset % 4096, 0);
                if io.len != 4096 && io.len != 16384 {
                    cut += 1;
                }
                for b in io.offset / 4096..(io.offset + io.len as u64) / 4096 {
                    r[b as usize] += 1;
                }
            }
            Op::Drain => rounds.push(vec![0u8; 256]),
            Op::Done => break,
            o => panic!("{o:?}"),
        }
    }
    rounds.pop();
    assert_eq!(rounds.len(), 2);
    for r in &rounds {
        assert!(r.iter().all(|&n| n == 1), "{r:?}");
    }
    assert!(cut > 0, "some 16k requests met a used block");
}

#[test]
fn no_pass_limit_runs_on() {
    let mut j = job(&[(0, 8192)], 4096);
    j.passes = None;
    let mut w = JobWalk::new(Access::seq_write(), &j);
    let mut rng = Rng::new(1, 0);
    let offs: Vec<u64> = (0..5)
        .map(|_| match w.next(&mut rng) {
            Op::Write(io) => io.offset,
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(offs, [0, 4096, 0, 4096, 0]);
}

#[test]
fn holes_after_each_sequential_request_wrap_at_the_end() {
    // fio's rw=write:4k over 32 KiB: 0, 8k, 16k, 24k, then over again until 32 KiB done.
    let mut j = job(&[(0, 32768)], 4096);
    j.stride = Some(4096);
    let offs: Vec<u64> = run(&mut JobWalk::new(Access::seq_write(), &j))
        .iter()
        .map(|o| match o {
            Op::Write(io) => io.offset,
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(offs, [0, 8192, 16384, 24576, 0, 8192, 16384, 24576]);
}

#[test]
fn random_runs_draw_a_new_offset_every_n_requests() {
    let mut j = job(&[(0, 1 << 20)], 4096);
    j.stride = Some(4);
    j.random_map = false;
    let ops = run(&mut JobWalk::new(Access::rand_read(), &j));
    let offs: Vec<u64> = ops
        .iter()
        .map(|o| match o {
            Op::Read(io) => io.offset,
            o => panic!("{o:?}"),
        })
        .collect();
    // Within each run of 4 that fits the region, the offsets follow on.
    let mut sequential = 0;
    for w in offs.windows(2) {
        if w[1] == w[0] + 4096 {
            sequential += 1;
        }
    }
    assert!(
        sequential >= offs.len() * 3 / 4 - 8,
        "{sequential} of {}",
        offs.len()
    );
}

fn trim(file: u32, offset: u64, len: u32) -> Op {
    Op::Trim(Io { file, offset, len })
}

fn write(file: u32, offset: u64, len: u32) -> Op {
    Op::Write(Io { file, offset, len })
}

#[test]
fn trims_walk_with_their_own_size() {
    let mut j = job(&[(0, 8192)], 4096);
    j.sizes.trim = SizeChoice::Fixed(2048);
    j.pass_bytes = 8192;
    let ops = run(&mut JobWalk::new(
        Access::new(Mix::Trim, Order::Sequential),
        &j,
    ));
    assert_eq!(
        ops,
        [
            trim(0, 0, 2048),
            trim(0, 2048, 2048),
            trim(0, 4096, 2048),
            trim(0, 6144, 2048)
        ]
    );
}

#[test]
fn trimwrite_trims_each_file_s_block_then_writes_it() {
    // fio 3.33, trimwrite over nrfiles=2: each file's turn decides its direction.
    let j = job(&[(0, 8192), (0, 8192)], 4096);
    let ops = run(&mut JobWalk::new(
        Access::new(Mix::TrimWrite, Order::Sequential),
        &j,
    ));
    assert_eq!(
        ops,
        [
            trim(0, 0, 4096),
            trim(1, 0, 4096),
            write(0, 0, 4096),
            write(1, 0, 4096),
            trim(0, 4096, 4096),
            trim(1, 4096, 4096),
            write(0, 4096, 4096),
            write(1, 4096, 4096)
        ]
    );
}

#[test]
fn trimwrite_with_other_sizes_follows_fio_s_last_start_rule() {
    // fio 3.33 with bs=4k,8k,2k over 32k: the positions part after the second trim,
    // so the writes run on without trims, and only the writes count toward the size.
    let mut j = job(&[(0, 32768)], 8192);
    j.sizes.trim = SizeChoice::Fixed(2048);
    let ops = run(&mut JobWalk::new(
        Access::new(Mix::TrimWrite, Order::Sequential),
        &j,
    ));
    assert_eq!(
        ops,
        [
            trim(0, 0, 2048),
            write(0, 0, 8192),
            trim(0, 2048, 2048),
            write(0, 8192, 8192),
            write(0, 16384, 8192),
            write(0, 24576, 8192)
        ]
    );
}

#[test]
fn randtrimwrite_writes_exactly_the_range_just_trimmed() {
    let mut j = job(&[(0, 1 << 20)], 4096);
    j.passes = Some(2);
    let ops = run(&mut JobWalk::new(
        Access::new(
            Mix::TrimWrite,
            Order::Random {
                dist: RandType::Uniform,
            },
        ),
        &j,
    ));
    assert_eq!(ops.len(), 2 * 2 * 256);
    for pair in ops.chunks(2) {
        let (Op::Trim(t), Op::Write(w)) = (pair[0], pair[1]) else {
            panic!("{pair:?}")
        };
        assert_eq!(t, w);
    }
    for pass in ops.chunks(512) {
        let trimmed: std::collections::HashSet<u64> = pass
            .iter()
            .filter_map(|o| match o {
                Op::Trim(io) => Some(io.offset),
                _ => None,
            })
            .collect();
        assert_eq!(trimmed.len(), 256, "every block once per pass");
    }
}

/// Offsets of a random read walk, counted per block.
fn block_counts(j: &JobIo, seed: u64) -> HashMap<(u32, u64), u64> {
    let mut w = JobWalk::new(Access::rand_read(), j);
    let mut rng = Rng::new(seed, 0);
    let mut c = HashMap::new();
    loop {
        match w.next(&mut rng) {
            Op::Read(io) => *c.entry((io.file, io.offset)).or_insert(0) += 1,
            Op::Done => return c,
            Op::Drain => {}
            o => panic!("{o:?}"),
        }
    }
}

fn hottest_tenth_share(c: &HashMap<(u32, u64), u64>, blocks: usize) -> f64 {
    let mut v: Vec<u64> = c.values().copied().collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = v.iter().sum();
    v.iter().take(blocks / 10).sum::<u64>() as f64 / total as f64
}

#[test]
fn zipf_concentrates_io_on_few_blocks_and_drops_the_map() {
    // 1024 blocks, 20 passes' worth of reads.
    let mut j = job(&[(0, 4 << 20)], 4096);
    j.pass_bytes = 80 << 20;
    let uniform = hottest_tenth_share(&block_counts(&j, 9), 1024);
    j.skew = Skew::Zipf {
        theta: 1.2,
        center: None,
    };
    let c = block_counts(&j, 9);
    let zipf = hottest_tenth_share(&c, 1024);
    assert!(uniform < 0.15, "uniform: {uniform}");
    assert!(zipf > 0.7, "zipf 1.2: {zipf}");
    // No map: blocks repeat within a pass and some are never touched.
    assert!(c.len() < 1024, "{}", c.len());
    for &(_, off) in c.keys() {
        assert!(off % 4096 == 0 && off < 4 << 20);
    }
}

#[test]
fn each_file_gets_its_own_hot_set_unless_a_center_fixes_it() {
    let mut j = job(&[(0, 4 << 20), (0, 4 << 20)], 4096);
    j.pass_bytes = 80 << 20;
    j.skew = Skew::Pareto {
        h: 0.1,
        center: None,
    };
    let hottest = |c: &HashMap<(u32, u64), u64>, file: u32| {
        c.iter()
            .filter(|(k, _)| k.0 == file)
            .max_by_key(|(_, n)| **n)
            .map(|(k, _)| k.1)
            .unwrap()
    };
    let c = block_counts(&j, 10);
    assert_ne!(hottest(&c, 0), hottest(&c, 1));
    j.skew = Skew::Pareto {
        h: 0.1,
        center: Some(0.5),
    };
    let c = block_counts(&j, 10);
    assert_eq!(hottest(&c, 0), 512 * 4096);
    assert_eq!(hottest(&c, 1), 512 * 4096);
}

#[test]
fn a_region_offset_moves_the_skewed_blocks_with_it() {
    let mut j = job(&[(1 << 20, 1 << 20)], 4096);
    j.pass_bytes = 16 << 20;
    j.skew = Skew::Normal {
        spread_pct: 10.0,
        center: Some(0.25),
    };
    let c = block_counts(&j, 11);
    for &(_, off) in c.keys() {
        assert!((1 << 20..2 << 20).contains(&off), "{off}");
    }
    assert!(hottest_tenth_share(&c, 256) > 0.3);
}

#[test]
fn sequential_orders_ignore_the_skew() {
    let mut j = job(&[(0, 16384)], 4096);
    j.skew = Skew::Zipf {
        theta: 1.2,
        center: None,
    };
    let mut w = JobWalk::new(Access::seq_read(), &j);
    let offs: Vec<u64> = run(&mut w)
        .into_iter()
        .map(|o| match o {
            Op::Read(io) => io.offset,
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(offs, [0, 4096, 8192, 12288]);
}

/// The first `n` operations, spelled `D0` (drop file 0's cache), `R1`, `W0`, `T0`, `S0`, `-`
/// (drain), up to the end.
fn spelled(w: &mut JobWalk, n: usize) -> String {
    let mut rng = Rng::new(3, 0);
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(match w.next(&mut rng) {
            Op::Done => break,
            Op::DropCache(f) | Op::DropZone(f, _) => format!("D{f}"),
            Op::Read(io) => format!("R{}", io.file),
            Op::ReadBack(io) => format!("V{}", io.file),
            Op::Write(io) => format!("W{}", io.file),
            Op::Trim(io) => format!("T{}", io.file),
            Op::Fsync(f) => format!("S{f}"),
            Op::Drain => "-".into(),
            Op::Pause(_) => "P".into(),
        });
    }
    v.join(" ")
}

fn dropping(mut j: JobIo, on_wrap: bool) -> JobIo {
    j.invalidate = true;
    j.invalidate_on_wrap = on_wrap;
    j
}

#[test]
fn each_pass_drops_each_file_before_its_first_request() {
    let mut j = dropping(job(&[(0, 16384)], 4096), true);
    j.passes = Some(3);
    for access in [Access::seq_read(), Access::rand_read()] {
        assert_eq!(
            spelled(&mut JobWalk::new(access, &j), 100),
            "D0 R0 R0 R0 R0 - D0 R0 R0 R0 R0 - D0 R0 R0 R0 R0 -"
        );
    }
    // Several files: each just before its turn, as fio opens them when it first uses
    // them.
    let mut j = dropping(job(&[(0, 8192), (0, 8192)], 4096), false);
    j.passes = Some(2);
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
        "D0 W0 D1 W1 W0 W1 - D0 W0 D1 W1 W0 W1 -"
    );
    // io_size beyond the regions: fio opens the files again for the rest.
    let mut j = dropping(job(&[(0, 8192)], 4096), false);
    j.pass_bytes = 20480;
    for access in [Access::seq_read(), Access::rand_read()] {
        assert_eq!(
            spelled(&mut JobWalk::new(access, &j), 100),
            "D0 R0 R0 - D0 R0 R0 - D0 R0 -"
        );
    }
    j.invalidate = false;
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_read(), &j), 100),
        "R0 R0 - R0 R0 - R0 -"
    );
}

#[test]
fn time_based_jobs_drop_where_fio_wraps_or_opens_again() {
    let timed = |files: &[(u64, u64)], on_wrap| {
        let mut j = dropping(job(files, 4096), on_wrap);
        j.passes = None;
        j
    };
    let one = timed(&[(0, 8192)], true);
    for access in [Access::seq_read(), Access::rand_read()] {
        assert_eq!(
            spelled(&mut JobWalk::new(access, &one), 7),
            "D0 R0 R0 D0 R0 R0 D0"
        );
    }
    // Direct I/O: fio drops nothing when a file wraps in place.
    let one = timed(&[(0, 8192)], false);
    for access in [Access::seq_read(), Access::rand_read()] {
        assert_eq!(
            spelled(&mut JobWalk::new(access, &one), 5),
            "D0 R0 R0 R0 R0"
        );
    }
    // Without a random map fio never starts a file over.
    let mut no_map = timed(&[(0, 8192)], true);
    no_map.random_map = false;
    assert_eq!(
        spelled(&mut JobWalk::new(Access::rand_read(), &no_map), 5),
        "D0 R0 R0 R0 R0"
    );
    // Several files in order: a new round (everything in flight completed first),
    // which opens them again, direct or not.
    let two = timed(&[(0, 4096), (0, 4096)], false);
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_read(), &two), 9),
        "D0 R0 D1 R1 - D0 R0 D1 R1"
    );
    let mut two = timed(&[(0, 4096), (0, 4096)], true);
    two.pass_bytes = 16384;
    assert_eq!(
        spelled(&mut JobWalk::new(Access::rand_read(), &two), 8),
        "D0 R0 D1 R1 D0 R0 D1 R1"
    );
}

#[test]
fn the_read_back_drops_the_files_again() {
    let mut j = dropping(job(&[(0, 8192), (0, 8192)], 4096), false);
    j.verify = Some(crate::spec::VerifySpec {
        seal: crate::verify::Sealing::new(crate::verify::Checksum::Crc32c),
        after_writes: true,
        fatal: false,
        backlog: 0,
        batch: 0,
        dump: false,
        in_write_order: false,
    });
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
        "D0 W0 D1 W1 W0 W1 - D0 V0 V0 D1 V1 V1 -"
    );
}

fn verified(mut j: JobIo) -> JobIo {
    j.verify = Some(crate::spec::VerifySpec {
        seal: crate::verify::Sealing::new(crate::verify::Checksum::Crc32c),
        after_writes: true,
        fatal: false,
        backlog: 0,
        batch: 0,
        dump: false,
        in_write_order: false,
    });
    j
}

#[test]
fn each_round_is_read_back_before_the_next_one() {
    // fio's thread_main: do_io, then do_verify, for each of the loops.
    let mut j = verified(job(&[(0, 8192)], 4096));
    j.passes = Some(2);
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
        "W0 W0 - V0 V0 - W0 W0 - V0 V0 -"
    );
    // io_size beyond the size: the read-back counts toward io_size, so after the one
    // loop fio stops at twice the size (a write round and its read-back).
    let mut j = verified(job(&[(0, 8192)], 4096));
    j.pass_bytes = 16384;
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
        "W0 W0 - V0 V0 -"
    );
    // A time-based job on an engine that queues: its rounds are the size (fio's do_io
    // stops there to verify). Without one, its only file starts over in place and is
    // never read back, as in fio.
    j.passes = None;
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 13),
        "W0 W0 W0 W0 W0 W0 W0 W0 W0 W0 W0 W0 W0"
    );
    j.round_bytes = Some(8192);
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 13),
        "W0 W0 - V0 V0 - W0 W0 - V0 V0 - W0"
    );
}

#[test]
fn experimental_verify_reads_back_in_the_order_written() {
    // Two files in turn: fio's sorted list reads one file, then the other; its
    // experimental_verify walks the requests again, the files taking turns.
    let mut j = verified(job(&[(0, 8192), (0, 8192)], 4096));
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
        "W0 W1 W0 W1 - V0 V0 V1 V1 -"
    );
    j.verify.as_mut().unwrap().in_write_order = true;
    assert_eq!(
        spelled(&mut JobWalk::new(Access::seq_write(), &j), 100),
        "W0 W1 W0 W1 - V0 V1 V0 V1 -"
    );
}

#[test]
fn the_read_back_order_is_fio_s() {
    let read_back = |access: Access, j: &JobIo| -> (Vec<Io>, Vec<Io>) {
        let (mut w, mut r) = (Vec::new(), Vec::new());
        for op in run(&mut JobWalk::new(access, j)) {
            match op {
                Op::Write(io) => w.push(io),
                Op::ReadBack(io) => r.push(io),
                o => panic!("{o:?}"),
            }
        }
        (w, r)
    };
    // With a random map: in the order written.
    let j = verified(job(&[(0, 64 << 10), (0, 64 << 10)], 4096));
    let (w, r) = read_back(Access::rand_write(), &j);
    assert_eq!(w.len(), 32);
    assert_eq!(w, r);
    // Without: by file and offset, each block once, the later write kept.
    let mut j = verified(job(&[(0, 64 << 10), (0, 64 << 10)], 4096));
    j.random_map = false;
    let (w, r) = read_back(Access::rand_write(), &j);
    let mut want: Vec<Io> = w.clone();
    want.sort_by_key(|io| (io.file, io.offset));
    want.dedup();
    assert_eq!(r, want);
    assert!(r.len() < w.len(), "some blocks were written twice");
}

#[test]
fn overlapping_writes_leave_the_latest_one_to_read_back() {
    let io = |file, offset, len| Io { file, offset, len };
    let w = [
        io(0, 8192, 8192),
        io(1, 0, 4096),
        io(0, 0, 4096),
        io(0, 4096, 8192),
        io(0, 20480, 4096),
    ];
    let mut h = super::history::History::new(false);
    for x in &w {
        h.push(*x);
    }
    assert_eq!(
        h.take_all(),
        [
            io(0, 0, 4096),
            io(0, 4096, 8192),
            io(0, 20480, 4096),
            io(1, 0, 4096)
        ]
    );
}

#[test]
fn loops_and_io_size_make_fio_s_rounds() {
    // A 16 KiB region, 4 KiB requests: requests per round, as fio 3.33 issues them.
    let rounds = |loops: u64, io_size: u64| -> Vec<usize> {
        let mut j = job(&[(0, 16384)], 4096);
        j.passes = Some(loops);
        j.pass_bytes = io_size;
        let s = spelled(&mut JobWalk::new(Access::seq_read(), &j), 1000);
        s.split(" - ")
            .map(|r| r.trim_end_matches(" -").split(' ').count())
            .collect()
    };
    // loops=2, io_size=2×size: two rounds in all (keep_running stops at io_size).
    assert_eq!(rounds(2, 32768), [4, 4]);
    // loops=3, io_size=48k: the three loops reach io_size.
    assert_eq!(rounds(3, 49152), [4, 4, 4]);
    // loops=3, io_size=12k: rounds of the size until io_size × loops (36 KiB).
    assert_eq!(rounds(3, 12288), [4, 4, 1]);
    // loops=2, io_size=8k: 16 KiB in all, one round of the whole region.
    assert_eq!(rounds(2, 8192), [4]);
    // loops=1, io_size=40k: rounds until io_size, the last one cut.
    assert_eq!(rounds(1, 40960), [4, 4, 2]);
    // loops=0 is one round, as in fio.
    assert_eq!(rounds(0, 16384), [4]);
}

#[test]
fn a_round_stops_at_its_bytes_only_where_fio_counts_them() {
    // Random reads without a map, io_size four times the size: one round on an engine
    // that completes requests at once, four on one that queues them.
    let mut j = job(&[(0, 16384)], 4096);
    j.random_map = false;
    j.pass_bytes = 65536;
    let s = spelled(&mut JobWalk::new(Access::rand_read(), &j), 100);
    assert_eq!(s.matches('-').count(), 1, "{s}");
    j.round_bytes = Some(16384);
    let s = spelled(&mut JobWalk::new(Access::rand_read(), &j), 100);
    assert_eq!(s, ["R0 R0 R0 R0 -"; 4].join(" "));
}

#[test]
fn rounds_repeat_their_random_offsets_as_fio_s_randrepeat_does() {
    let offsets = |repeat: bool| -> Vec<Vec<u64>> {
        let mut j = job(&[(0, 256 << 10)], 4096);
        j.passes = Some(3);
        j.repeat_each_round = repeat;
        let s = run(&mut JobWalk::new(Access::rand_read(), &j));
        s.chunks(64)
            .map(|r| {
                r.iter()
                    .map(|o| match o {
                        Op::Read(io) => io.offset,
                        o => panic!("{o:?}"),
                    })
                    .collect()
            })
            .collect()
    };
    let r = offsets(true);
    assert_eq!(r.len(), 3);
    assert!(r[0] == r[1] && r[1] == r[2]);
    let r = offsets(false);
    assert!(r[0] != r[1] && r[1] != r[2]);
}

#[test]
fn a_random_file_whose_map_is_used_up_waits_for_the_round_to_end() {
    // Rounds of 2 files of 4 blocks: every block once per file per round.
    let mut j = job(&[(0, 16384), (0, 16384)], 4096);
    j.passes = Some(2);
    let ops = run(&mut JobWalk::new(Access::rand_read(), &j));
    assert_eq!(ops.len(), 16);
    for round in ops.chunks(8) {
        let mut seen: Vec<(u32, u64)> = round
            .iter()
            .map(|o| match o {
                Op::Read(io) => (io.file, io.offset),
                o => panic!("{o:?}"),
            })
            .collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 8);
    }
}

#[test]
fn a_time_based_mixed_job_wraps_each_direction_at_the_end_of_its_only_file() {
    let mut j = job(&[(0, 8192)], 4096);
    j.passes = None;
    let mut w = JobWalk::new(
        Access::new(Mix::Share { read_pct: 50 }, Order::Sequential),
        &j,
    );
    let mut rng = Rng::new(5, 0);
    let mut next = [0u64; 2];
    for _ in 0..200 {
        let (dir, io) = match w.next(&mut rng) {
            Op::Read(io) => (0, io),
            Op::Write(io) => (1, io),
            o => panic!("{o:?}"),
        };
        assert_eq!(io.offset, next[dir], "direction {dir}");
        next[dir] = (io.offset + 4096) % 8192;
    }
}

mod holes;
mod runs;
mod zones;

/// A replayed script: its entries in order, once, an open as a drop when the job
/// invalidates, a wait that has not passed as a pause before its entry, then the end.
#[test]
fn replay_hands_out_the_script_in_order_once() {
    use super::replay::{Action, Entry, Script, Wait};
    let e = |action, file, offset, wait| Entry {
        action,
        file,
        offset,
        len: 4096,
        wait,
    };
    let script = Script {
        entries: vec![
            e(Action::Open, 1, 0, Wait::None),
            e(Action::Read, 1, 8192, Wait::None),
            e(Action::Wait, 0, 0, Wait::None),
            e(Action::Write, 0, 4096, Wait::AfterLast(0)),
            // An hour after the write: a pause comes first (the walk does not sleep).
            e(Action::Sync, 0, 0, Wait::AfterLast(3_600_000_000)),
            e(Action::Trim, 1, 0, Wait::None),
        ],
    };
    for (invalidate, want) in [(true, "D1 R1 W0 P S0 T1"), (false, "R1 W0 P S0 T1")] {
        let mut j = job(&[(0, 1 << 20), (0, 1 << 20)], 4096);
        j.invalidate = invalidate;
        j.replay = Some(std::sync::Arc::new(script.clone()));
        let mut w = JobWalk::new(Access::new(Mix::Read, Order::Sequential), &j);
        assert_eq!(spelled(&mut w, 100), want);
        // Done for good.
        assert!(matches!(w.next(&mut Rng::new(3, 0)), Op::Done));
    }
    // The request offsets are the script's.
    let mut j = job(&[(0, 1 << 20), (0, 1 << 20)], 4096);
    j.replay = Some(std::sync::Arc::new(script));
    let mut w = JobWalk::new(Access::new(Mix::Read, Order::Sequential), &j);
    let mut rng = Rng::new(3, 0);
    let Op::Read(io) = w.next(&mut rng) else {
        panic!()
    };
    assert_eq!((io.file, io.offset, io.len), (1, 8192, 4096));
}

/// fio's file service types: N requests per pick in turn, each file until done, or N
/// requests to a file drawn among those not done; a sync is served as a request.
#[test]
fn file_service_types_pick_the_files() {
    use crate::spec::FileService;
    let walk = |service, sync_every| {
        let mut j = job(&[(0, 16384), (0, 16384), (0, 16384)], 4096);
        j.service = service;
        j.sync_every_writes = sync_every;
        j
    };
    let read = |j: &JobIo| spelled(&mut JobWalk::new(Access::seq_read(), j), 100);
    assert_eq!(
        read(&walk(FileService::RoundRobin(1), 0)),
        "R0 R1 R2 R0 R1 R2 R0 R1 R2 R0 R1 R2 -"
    );
    assert_eq!(
        read(&walk(FileService::RoundRobin(3), 0)),
        "R0 R0 R0 R1 R1 R1 R2 R2 R2 R0 R1 R2 -"
    );
    assert_eq!(
        read(&walk(FileService::Sequential, 0)),
        "R0 R0 R0 R0 R1 R1 R1 R1 R2 R2 R2 R2 -"
    );
    // The sync after every 2nd write goes to the file whose turn it is, and uses a turn
    // (fio 3.33's sequence for this job, from its write_iolog).
    assert_eq!(
        spelled(
            &mut JobWalk::new(Access::seq_write(), &walk(FileService::RoundRobin(2), 2)),
            100
        ),
        "W0 W0 S1 W1 W2 S2 W0 W0 S1 W1 W2 S2 W1 W1 S2 W2 W2 -"
    );
    // Drawn: runs of 2 except where a file is done; every block read once.
    let s = read(&walk(FileService::Random(2), 0));
    let files: Vec<&str> = s.split(' ').filter(|x| *x != "-").collect();
    assert_eq!(files.len(), 12);
    for f in ["R0", "R1", "R2"] {
        assert_eq!(files.iter().filter(|x| **x == f).count(), 4, "{s}");
    }
    let mut k = 0;
    let mut seen = std::collections::HashMap::new();
    while k < files.len() {
        let run = files[k..].iter().take_while(|x| **x == files[k]).count();
        let n = seen.entry(files[k]).or_insert(0);
        *n += run;
        assert!(run % 2 == 0 || *n == 4, "{s}");
        k += run;
    }
}
