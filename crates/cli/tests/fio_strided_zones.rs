//! fio's `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`) against Debian's fio 3.33
//! (/usr/bin/fio): the same job run by fio and by plumb through a symlink named `fio`, each
//! in a fresh directory under strace. In order, each thread's offsets are compared exactly
//! (libaio's in the order submitted), with fio's written out where its arithmetic is
//! surprising; at random, what the options promise: every offset in the zone of the
//! moment, fio's zone order and bytes per zone. Time-based jobs are compared over their
//! first requests; fio's `write_iolog` shows where a file is closed and opened again.
//!
//! Without fio or strace the comparisons are skipped with a message, except under CI.

mod common;
use common::peers::{logged, requests_of_both, DropIn, FIO};
use common::strace::Req;

use std::path::Path;

const PURPOSE: &str = "the strided zones comparison";

/// fio's and plumb's requests for the same job.
fn both(args: &[&str]) -> Option<[Vec<Vec<Req>>; 2]> {
    requests_of_both(PURPOSE, "pread64,pwrite64,io_submit", args)
}

/// The job `name=z filename=f bs=4k zonemode=strided ioengine=psync` with `extra`.
fn job<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "--name=z",
        "--filename=f",
        "--bs=4k",
        "--zonemode=strided",
        "--ioengine=psync",
        "--output=/dev/null",
    ];
    v.extend_from_slice(extra);
    v
}

/// The offsets (KiB) of a one-thread job's 4 KiB requests in file `f`, fio's and plumb's,
/// which must be the same.
fn same_offsets(args: &[&str]) -> Option<Vec<u64>> {
    let [theirs, ours] = both(args)?;
    assert_eq!(theirs.len(), 1, "{args:?}: fio's threads {theirs:?}");
    assert_eq!(theirs, ours, "{args:?}");
    assert!(
        theirs[0].iter().all(|r| r.0 == "f" && r.3 == 4),
        "{args:?}: {theirs:?}"
    );
    Some(theirs[0].iter().map(|r| r.2).collect())
}

/// Four blocks from each zone start in turn.
fn fours(zones: &[u64]) -> Vec<u64> {
    zones
        .iter()
        .flat_map(|&z| (0..4).map(move |b| z + 4 * b))
        .collect()
}

#[test]
fn zones_smaller_than_their_range_are_walked_again_until_the_size_is_done() {
    // 16 KiB of every 96: eleven zones, then from the start again, 1 MiB in all.
    let zones: Vec<u64> = (0..11).map(|z| z * 96).collect();
    let pass = fours(&zones);
    let want: Vec<u64> = pass.iter().copied().cycle().take(256).collect();
    for rw in ["--rw=read", "--rw=write"] {
        let args = job(&[
            "--size=1m",
            "--zonesize=16k",
            "--zonerange=32k",
            "--zoneskip=64k",
            rw,
        ]);
        let Some(offs) = same_offsets(&args) else {
            return;
        };
        assert_eq!(offs, want, "{rw}");
    }
}

#[test]
fn a_zonesize_above_the_range_reads_each_zone_several_times() {
    let args = job(&[
        "--size=256k",
        "--zonesize=48k",
        "--zonerange=16k",
        "--zoneskip=64k",
        "--rw=read",
    ]);
    let Some(offs) = same_offsets(&args) else {
        return;
    };
    let zones = [
        0, 0, 0, 80, 80, 80, 160, 160, 160, 240, 240, 240, 0, 0, 0, 80,
    ];
    assert_eq!(offs, fours(&zones));
}

#[test]
fn the_range_defaults_to_the_size_and_a_skip_of_zero_reads_on() {
    let cases: [(&[&str], &[u64]); 4] = [
        // No zonerange: 8 KiB zones, 8 KiB apart.
        (
            &["--zonesize=8k", "--zoneskip=8k"],
            &[
                0, 4, 16, 20, 32, 36, 48, 52, 64, 68, 80, 84, 96, 100, 112, 116,
            ],
        ),
        (
            &["--zonesize=8k", "--zonerange=16k", "--zoneskip=0"],
            &[
                0, 4, 16, 20, 32, 36, 48, 52, 64, 68, 80, 84, 96, 100, 112, 116,
            ],
        ),
        // zoneskip=1z: one zone size.
        (
            &["--zonesize=8k", "--zoneskip=1z"],
            &[
                0, 4, 16, 20, 32, 36, 48, 52, 64, 68, 80, 84, 96, 100, 112, 116,
            ],
        ),
        // A zone size that is no multiple of the block: whole blocks, three a zone, and
        // the zone's count starts again at 0.
        (
            &["--zonesize=10k", "--zonerange=16k", "--zoneskip=16k"],
            &[0, 4, 8, 32, 36, 40, 64, 68, 72, 96, 100, 104, 0, 4, 8, 32],
        ),
    ];
    for (zone, want) in cases {
        let mut args = job(&["--size=128k", "--rw=read"]);
        args.extend_from_slice(zone);
        let Some(offs) = same_offsets(&args) else {
            return;
        };
        assert_eq!(offs[..16], want[..], "{zone:?}");
        assert_eq!(offs.len(), 32, "{zone:?}");
    }
}

#[test]
fn an_offset_moves_the_zones_and_where_they_start_over() {
    let args = job(&[
        "--size=128k",
        "--offset=32k",
        "--zonesize=8k",
        "--zonerange=16k",
        "--zoneskip=16k",
        "--rw=read",
    ]);
    let Some(offs) = same_offsets(&args) else {
        return;
    };
    assert_eq!(offs, [32, 36, 64, 68, 96, 100, 128, 132].repeat(4));
}

#[test]
fn the_bytes_of_io_size_loops_and_number_ios_decide_the_end() {
    let pass = [0, 4, 32, 36];
    let cases: [(&str, Vec<u64>); 4] = [
        ("--loops=2", pass.repeat(8)),
        ("--io_size=40k", pass.repeat(3)[..10].to_vec()),
        ("--io_size=100k", pass.repeat(7)[..25].to_vec()),
        ("--number_ios=5", pass.repeat(2)[..5].to_vec()),
    ];
    for (extra, want) in cases {
        let args = job(&[
            "--size=64k",
            "--zonesize=8k",
            "--zonerange=16k",
            "--zoneskip=16k",
            "--rw=read",
            extra,
        ]);
        let Some(offs) = same_offsets(&args) else {
            return;
        };
        assert_eq!(offs, want, "{extra}");
    }
}

/// 100 KiB in zones of 32 KiB, 16 KiB each: the zone at 96k holds one block.
const SHORT_LAST: [&str; 5] = [
    "--size=100k",
    "--zonesize=16k",
    "--zonerange=32k",
    "--zoneskip=0",
    "--rw=read",
];

#[test]
fn a_zone_cut_short_by_the_file_s_end_ends_the_file() {
    let one = [0, 4, 8, 12, 32, 36, 40, 44, 64, 68, 72, 76, 96];
    let Some(offs) = same_offsets(&job(&SHORT_LAST)) else {
        return;
    };
    assert_eq!(offs, one);
    // loops=2: the file is closed and opened again for the second round, which starts
    // over at the first zone.
    let mut args = job(&SHORT_LAST);
    args.push("--loops=2");
    let Some(offs) = same_offsets(&args) else {
        return;
    };
    assert_eq!(offs, one.repeat(2));
    let drop_in = DropIn::named("fio");
    let theirs = logged(Path::new(FIO), &args, 40);
    assert_eq!(theirs, logged(&drop_in.bin(), &args, 40));
    let count = |what: &str| theirs.iter().filter(|l| *l == what).count();
    assert_eq!((count("f open"), count("f close")), (2, 2), "{theirs:?}");
}

#[test]
fn a_time_based_job_starts_a_zone_over_at_the_region_s_end() {
    // Its only file read in order: the request at the region's end goes back to the
    // zone's start, so the short zone's block is read until the zone's bytes are done.
    let mut args = job(&SHORT_LAST);
    args.extend(["--time_based", "--runtime=1"]);
    let Some([theirs, ours]) = both(&args) else {
        return;
    };
    let first = |t: &[Vec<Req>]| -> Vec<u64> { t[0].iter().take(40).map(|r| r.2).collect() };
    let mut pass = vec![0, 4, 8, 12, 32, 36, 40, 44, 64, 68, 72, 76, 96, 96, 96, 96];
    pass.extend_from_within(..);
    pass.extend_from_within(..8);
    assert_eq!(first(&theirs), pass);
    assert_eq!(first(&ours), pass);
}

/// File `f`'s cache drops (`D offset length`, KiB) and reads (`R offset`) in a
/// `strace -y -e trace=fadvise64,pread64` log, in order.
fn drops_and_reads(trace: &str) -> Vec<String> {
    let mut v = Vec::new();
    for line in trace.lines() {
        let Some((call, args)) = line.split_once('(') else {
            continue;
        };
        let Some((_, path, rest)) = common::fio_text::fd_path(args) else {
            continue;
        };
        if !path.ends_with("/f") {
            continue;
        }
        let nums: Vec<u64> = rest
            .split([',', ')'])
            .filter_map(|n| n.trim().parse().ok())
            .collect();
        if call.ends_with("fadvise64") && rest.contains("DONTNEED") {
            v.push(format!("D {} {}", nums[0] / 1024, nums[1] / 1024));
        } else if call.ends_with("pread64") {
            v.push(format!("R {}", nums[1] / 1024));
        }
    }
    v
}

#[test]
fn a_time_based_zone_started_over_drops_its_pages_from_the_zone_s_start() {
    // fio drops from the zone's start for the region's length, before each request that
    // starts the short zone over.
    if !common::peers::fio_and_strace(PURPOSE) {
        return;
    }
    let mut args = job(&SHORT_LAST);
    args.extend(["--time_based", "--runtime=1"]);
    let drop_in = DropIn::named("fio");
    let [theirs, ours] = [Path::new(FIO).to_path_buf(), drop_in.bin()].map(|bin| {
        let work = tempfile::TempDir::new().unwrap();
        let trace = common::peers::traced_ok(&bin, work.path(), "fadvise64,pread64", &args);
        drops_and_reads(&trace)
    });
    let n = 24;
    assert!(theirs.len() >= n && ours.len() >= n, "{theirs:?} {ours:?}");
    assert_eq!(theirs[..n], ours[..n]);
    let at_96: Vec<&str> = theirs[14..21].iter().map(String::as_str).collect();
    assert_eq!(
        at_96,
        ["R 96", "D 96 100", "R 96", "D 96 100", "R 96", "D 96 100", "R 96"]
    );
}

#[test]
fn the_job_s_zone_count_moves_only_the_file_that_finds_it_done() {
    // Two files take turns and the count is the job's: the first file always finds it
    // done and moves on, the second walks its first range over and over.
    for names in [&["--nrfiles=2"][..], &["--filename=a:b"][..]] {
        let mut args = vec![
            "--name=z",
            "--size=128k",
            "--bs=4k",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=16k",
            "--zoneskip=16k",
            "--rw=read",
            "--output=/dev/null",
        ];
        args.extend_from_slice(names);
        let Some([theirs, ours]) = both(&args) else {
            return;
        };
        assert_eq!(theirs, ours, "{args:?}");
        let offs: Vec<u64> = theirs[0].iter().map(|r| r.2).collect();
        let want: Vec<u64> = [0, 32]
            .into_iter()
            .cycle()
            .zip([0, 4, 8, 12].into_iter().cycle())
            .take(16)
            .flat_map(|(a, b)| [a, b])
            .collect();
        assert_eq!(offs, want, "{args:?}");
    }
}

#[test]
fn trims_walk_the_zones_as_reads_do() {
    // fio's falloc engine punches the holes; its log shows each trim.
    if !common::peers::fio_and_strace(PURPOSE) {
        return;
    }
    let args = job(&[
        "--ioengine=falloc",
        "--size=64k",
        "--zonesize=8k",
        "--zonerange=16k",
        "--zoneskip=16k",
        "--rw=trim",
    ]);
    let drop_in = DropIn::named("fio");
    let theirs = logged(Path::new(FIO), &args, 40);
    assert_eq!(theirs, logged(&drop_in.bin(), &args, 40));
    let trims: Vec<&str> = theirs
        .iter()
        .filter_map(|l| l.strip_prefix("f trim "))
        .collect();
    let want: Vec<String> = [0, 4, 32, 36]
        .repeat(4)
        .iter()
        .map(|k| format!("{} 4096", k * 1024))
        .collect();
    assert_eq!(trims, want);
}

#[test]
fn libaio_submits_the_zones_in_fio_s_order() {
    for extra in [&["--rw=read"][..], &["--rw=write", "--fsync=3"][..]] {
        let mut args = job(&[
            "--size=256k",
            "--zonesize=16k",
            "--zonerange=16k",
            "--zoneskip=32k",
            "--ioengine=libaio",
            "--iodepth=4",
            "--direct=1",
        ]);
        args.extend_from_slice(extra);
        let Some(offs) = same_offsets(&args) else {
            return;
        };
        let zones: Vec<u64> = (0..6).map(|z| z * 48).collect();
        let want: Vec<u64> = fours(&zones).into_iter().cycle().take(64).collect();
        assert_eq!(offs, want, "{extra:?}");
    }
}

#[test]
fn a_larger_file_is_zoned_to_its_end() {
    // fio zones the file as far as it reaches (its real size), past the region.
    if !common::peers::fio_and_strace(PURPOSE) {
        return;
    }
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("big");
    std::fs::write(&file, vec![0u8; 256 * 1024]).unwrap();
    let name = format!("--filename={}", file.display());
    let args = [
        "--name=z",
        &name,
        "--size=64k",
        "--bs=4k",
        "--zonemode=strided",
        "--zonesize=8k",
        "--zonerange=16k",
        "--zoneskip=16k",
        "--rw=read",
        "--output=/dev/null",
    ];
    let drop_in = DropIn::named("fio");
    let theirs = logged(Path::new(FIO), &args, 40);
    assert_eq!(theirs, logged(&drop_in.bin(), &args, 40));
    let offs: Vec<u64> = theirs
        .iter()
        .filter_map(|l| l.split(' ').nth(2)?.parse::<u64>().ok())
        .map(|o| o / 1024)
        .collect();
    let zones: Vec<u64> = (0..8).map(|z| z * 32).collect();
    let want: Vec<u64> = zones.iter().flat_map(|&z| [z, z + 4]).collect();
    assert_eq!(offs, want);
}

/// fio 3.33's examples/disk-zone-profile.fio on a 16 MiB file instead of /dev/sdb, the
/// sizes a thousandth (zones of 256 KiB every 2 MiB, 4 KiB blocks).
const DISK_ZONE_PROFILE: &str = "\
; Read disk in zones of 256m/2g. Generating a plot of that afterwards
; should give a nice picture of the zoning of this drive

[global]
bs=4k
direct=1
rw=read
ioengine=libaio
iodepth=2
zonemode=strided
zonesize=256k
zoneskip=2m

[disk-zone-profile]
filename=disk
write_bw_log
log_offset=1
";

#[test]
fn the_disk_zone_profile_example_reads_the_zones_fio_reads() {
    if !common::peers::fio_and_strace(PURPOSE) {
        return;
    }
    let drop_in = DropIn::named("fio");
    let [theirs, ours] = [Path::new(FIO).to_path_buf(), drop_in.bin()].map(|bin| {
        let work = tempfile::TempDir::new().unwrap();
        std::fs::write(work.path().join("disk"), vec![0u8; 16 << 20]).unwrap();
        std::fs::write(work.path().join("z.fio"), DISK_ZONE_PROFILE).unwrap();
        let trace = common::peers::traced_ok(&bin, work.path(), "io_submit", &["z.fio"]);
        let log = std::fs::read_to_string(work.path().join("disk-zone-profile_bw.1.log"))
            .expect("the bw log");
        (common::strace::requests(&trace, work.path()), log)
    });
    assert_eq!(theirs.0, ours.0);
    // 16 MiB in zones of 256 KiB every 2 MiB 256 KiB: 8 zones, read 8 times over.
    let offs: Vec<u64> = theirs.0[0].iter().map(|r| r.2).collect();
    assert_eq!(offs.len(), 4096);
    let pass: Vec<u64> = (0..8)
        .flat_map(|z| (0..64).map(move |b| z * 2304 + 4 * b))
        .collect();
    assert_eq!(offs, pass.repeat(8));
    // log_offset: each line's offset is a request's.
    let logged_offsets = |log: &str| -> Vec<u64> {
        log.lines()
            .filter_map(|l| l.split(", ").nth(4)?.trim().parse::<u64>().ok())
            .map(|o| o / 1024)
            .collect()
    };
    assert_eq!(logged_offsets(&theirs.1), offs);
    assert_eq!(logged_offsets(&ours.1), offs);
}

// ---------------------------------------------------------------------------------------
// Random offsets: each program's own draws, the zones fio's.

/// Each program's requests for the one-thread job `job(extra)`, whose draws are its own.
fn each(extra: &[&str]) -> Option<[Vec<Req>; 2]> {
    let runs = both(&job(extra))?;
    Some(runs.map(|mut t| {
        assert_eq!(t.len(), 1, "one thread: {t:?}");
        t.remove(0)
    }))
}

/// Every request of `reqs` in the zone of its turn, given zones of `range` KiB at `starts`
/// taking `per_zone` requests each, the last one's cut short by the job's end.
fn check_zones(reqs: &[Req], starts: &[u64], range: u64, per_zone: usize) {
    let turns = reqs.len().div_ceil(per_zone);
    assert_eq!(turns, starts.len(), "{reqs:?}");
    for (i, r) in reqs.iter().enumerate() {
        let z = starts[i / per_zone];
        assert!(
            r.2 >= z && r.2 + r.3 <= z + range,
            "request {i} at {}k outside the zone at {z}k: {reqs:?}",
            r.2
        );
    }
}

#[test]
fn random_offsets_keep_to_the_zone_of_the_moment() {
    // 16 KiB of each 32 KiB zone, 48 KiB apart: zones 0, 48, 96, then 0 again.
    let Some(runs) = each(&[
        "--size=128k",
        "--zonesize=16k",
        "--zonerange=32k",
        "--zoneskip=16k",
        "--rw=randread",
    ]) else {
        return;
    };
    let starts = [0, 48, 96, 0, 48, 96, 0, 48];
    for t in &runs {
        check_zones(t, &starts, 32, 4);
        // The map holds one range: no block twice in a zone's turn.
        for turn in t.chunks(4) {
            let mut o: Vec<u64> = turn.iter().map(|r| r.2).collect();
            o.sort_unstable();
            o.dedup();
            assert_eq!(o.len(), 4, "{t:?}");
        }
    }
}

#[test]
fn random_offsets_use_each_block_of_the_range_once_per_range_of_bytes() {
    // zonesize 48k over a 16k range: each zone's four blocks three times, each time all
    // four; without the map only the zone is promised.
    for extra in [&[][..], &["--norandommap"][..]] {
        let mut args = vec![
            "--size=128k",
            "--zonesize=48k",
            "--zonerange=16k",
            "--zoneskip=16k",
            "--rw=randread",
        ];
        args.extend_from_slice(extra);
        let Some(runs) = each(&args) else {
            return;
        };
        for t in &runs {
            check_zones(t, &[0, 32, 64], 16, 12);
            if extra.is_empty() {
                for quad in t.chunks(4) {
                    let mut o: Vec<u64> = quad.iter().map(|r| r.2 % 32).collect();
                    o.sort_unstable();
                    assert_eq!(o, [0, 4, 8, 12], "{t:?}");
                }
            }
        }
    }
}

#[test]
fn a_random_zone_cut_short_by_the_file_s_end_ends_it_at_the_first_draw_past_it() {
    // The zone at 96k of a 100 KiB file holds one block of its eight: the first draw past
    // the end ends the file, after 0 to 8 requests there (zones 0, 32 and 64 whole).
    let Some(runs) = each(&[
        "--size=100k",
        "--zonesize=32k",
        "--zonerange=32k",
        "--zoneskip=0",
        "--rw=randread",
    ]) else {
        return;
    };
    for t in &runs {
        check_zones(&t[..24], &[0, 32, 64], 32, 8);
        assert!(t[24..].iter().all(|r| r.2 == 96), "{t:?}");
        assert!(t.len() <= 25, "{t:?}");
    }
}

#[test]
fn a_random_mix_keeps_its_directions_in_the_zone() {
    let Some(runs) = each(&[
        "--size=64k",
        "--zonesize=8k",
        "--zonerange=16k",
        "--zoneskip=16k",
        "--rw=randrw",
    ]) else {
        return;
    };
    for t in &runs {
        check_zones(t, &[0, 32].repeat(4), 16, 2);
        assert!(t.iter().any(|r| r.1 == 'r') && t.iter().any(|r| r.1 == 'w'));
    }
}

// ---------------------------------------------------------------------------------------
// fio's complaints, and plumb's refusals

#[test]
fn fio_s_fixups_and_plumb_s_refusals_are_one_line_and_exit_1() {
    let drop_in = DropIn::named("fio");
    let run = |bin: &Path, extra: &[&str]| {
        let dir = tempfile::TempDir::new().unwrap();
        let mut args = vec![
            "--name=z",
            "--filename=f",
            "--size=64k",
            "--output=/dev/null",
        ];
        args.extend_from_slice(extra);
        let out = common::peers::run_named(bin, dir.path(), &args);
        (out.code, out.stderr.trim_end().to_string())
    };
    let fixups: [(&[&str], &str); 3] = [
        (
            &["--zonesize=8k"],
            "fio: --zonemode=none and --zonesize are not compatible.",
        ),
        (
            &["--zonemode=strided"],
            "fio: --zonesize must be specified when using --zonemode=strided.",
        ),
        (
            &["--zonemode=strided", "--zonesize=1z"],
            "zonesize: 'z' suffix isn't applicable\nfio: failed parsing zonesize=1z",
        ),
    ];
    for (extra, said) in fixups {
        let ours = run(&drop_in.bin(), extra);
        assert_eq!(ours, (1, said.to_string()), "{extra:?}");
        if Path::new(FIO).exists() {
            assert_eq!(run(Path::new(FIO), extra), ours, "{extra:?}");
        }
    }
    let refused: [(&[&str], &str); 6] = [
        (
            &["--rw=read:4k"],
            "'rw' (value 'read:4k') is not supported yet: holes or runs",
        ),
        (
            &["--rw=randread", "--random_generator=lfsr"],
            "'zonemode' (value 'strided') is not supported yet: with random_generator=lfsr",
        ),
        (
            &["--rw=randread", "--bsrange=4k-8k"],
            "'zonemode' (value 'strided') is not supported yet: on a random job with more",
        ),
        (
            &["--rw=write", "--verify=crc32c"],
            "'zonemode' (value 'strided') is not supported yet: with verify",
        ),
        (
            &["--rw=randread", "--zonerange=128k"],
            "'zonerange' (value '128k') is not supported yet: larger than a random job's region",
        ),
        (
            &["--zonemode=zbd"],
            "'zonemode' (value 'zbd') is not supported yet: plumb has no zoned block device",
        ),
    ];
    for (extra, said) in refused {
        let mut args = vec!["--zonemode=strided", "--zonesize=8k"];
        args.extend_from_slice(extra);
        let (code, err) = run(&drop_in.bin(), &args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("plumb: fio option {said}")),
            "{args:?}: {err}"
        );
    }
}
