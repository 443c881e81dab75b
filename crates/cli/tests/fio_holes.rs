//! Holes between sequential requests (`rw=read:N`), negative ones above all (`rw=read:-8k`
//! reads backwards), against Debian's fio 3.33 (/usr/bin/fio): the same job run by fio and
//! by plumb through a symlink named `fio`, each in a fresh directory under strace, the
//! offsets of each thread's requests compared exactly, and where fio's arithmetic is
//! surprising, with the offsets it issues written out. Time-based jobs are compared over
//! their first requests; fio's `write_iolog` shows where a file is closed and opened again.
//!
//! Without fio or strace the comparisons are skipped with a message, except under CI.

mod common;
use common::peers::{logged, traced_ok, DropIn, FIO};
use common::strace::{requests, Req};

use std::path::Path;
use tempfile::TempDir;

fn tools() -> bool {
    common::peers::fio_and_strace("the holes comparison")
}

/// fio's and plumb's requests for the same job, each run in a fresh directory.
fn both(args: &[&str]) -> Option<[Vec<Vec<Req>>; 2]> {
    common::peers::requests_of_both("the holes comparison", "pread64,pwrite64", args)
}

/// The job `name=h filename=f size=64k ioengine=psync` with `extra`.
fn job<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "--name=h",
        "--filename=f",
        "--size=64k",
        "--ioengine=psync",
        "--output=/dev/null",
    ];
    v.extend_from_slice(extra);
    v
}

/// The offsets (KiB) of a one-thread job's requests, fio's and plumb's, which must be the
/// same, in one file of the given `len` (KiB).
fn same_offsets(args: &[&str], len: u64) -> Option<Vec<u64>> {
    let [theirs, ours] = both(args)?;
    assert_eq!(theirs.len(), 1, "{args:?}: fio's threads {theirs:?}");
    assert_eq!(theirs, ours, "{args:?}");
    assert!(
        theirs[0].iter().all(|r| r.0 == "f" && r.3 == len),
        "{args:?}: {theirs:?}"
    );
    Some(theirs[0].iter().map(|r| r.2).collect())
}

/// 0, then 56 down to 4 in steps of 4, then 0: 64 KiB read 8 KiB back from each end.
const BACKWARDS: [u64; 16] = [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0];

#[test]
fn a_negative_hole_reads_and_writes_backwards_wrapping_to_the_end() {
    for rw in ["--rw=read:-8k", "--rw=write:-8k"] {
        let Some(offs) = same_offsets(&job(&["--bs=4k", rw]), 4) else {
            return;
        };
        assert_eq!(offs, BACKWARDS, "{rw}");
    }
    // With blanks around the number and in other units, as fio reads them.
    let Some(offs) = same_offsets(&job(&["--bs=4k", "--rw=read: -8192 "]), 4) else {
        return;
    };
    assert_eq!(offs, BACKWARDS);
}

#[test]
fn holes_unlike_the_block_size_step_by_their_difference() {
    let cases: [(&str, &str, u64, &[u64]); 3] = [
        // 12 KiB back from the end of 8 KiB: 4 KiB down, wrapping to 64k - 12k.
        (
            "--bs=8k",
            "--rw=read:-12k",
            8,
            &[0, 52, 48, 44, 40, 36, 32, 28],
        ),
        // Back less than a block: forward, each request over half the previous one.
        (
            "--bs=8k",
            "--rw=read:-4k",
            8,
            &[0, 4, 8, 12, 16, 20, 24, 28],
        ),
        // 2 KiB down, by halves of blocks.
        (
            "--bs=4k",
            "--rw=read:-6k",
            4,
            &[
                0, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30,
            ],
        ),
    ];
    for (bs, rw, len, want) in cases {
        let Some(offs) = same_offsets(&job(&[bs, rw]), len) else {
            return;
        };
        assert_eq!(offs, want, "{bs} {rw}");
    }
    // A hole of a block back: the same block every time.
    let Some(offs) = same_offsets(&job(&["--bs=4k", "--rw=read:-4k"]), 4) else {
        return;
    };
    assert_eq!(offs, [0; 16]);
}

#[test]
fn a_hole_as_deep_as_the_file_or_deeper_goes_nowhere_or_ends_it() {
    // fio's length + hole: 0 for a hole of the file's size, every request at 0.
    let Some(offs) = same_offsets(&job(&["--bs=4k", "--rw=read:-64k"]), 4) else {
        return;
    };
    assert_eq!(offs, [0; 16]);
    // Deeper: that wraps past the file too, so after block 0 the file is done and so is
    // the job, exit 0, one request.
    let Some(offs) = same_offsets(&job(&["--bs=4k", "--rw=read:-128k"]), 4) else {
        return;
    };
    assert_eq!(offs, [0]);
    // Each round (loops) or round that io_size asks for opens it again for one more.
    for extra in ["--loops=2", "--io_size=8k"] {
        let args = job(&["--bs=4k", "--rw=read:-128k", extra]);
        let Some(offs) = same_offsets(&args, 4) else {
            return;
        };
        assert_eq!(offs, [0, 0], "{extra}");
    }
}

#[test]
fn more_bytes_than_the_file_go_on_walking_back_in_place() {
    // loops=2 and io_size=96k: the walk never ends a request at the file's end, so the
    // first round takes all the bytes; fio opens the file once.
    let mut twice = BACKWARDS.to_vec();
    twice.extend_from_slice(&BACKWARDS[1..]);
    twice.push(56);
    let Some(offs) = same_offsets(&job(&["--bs=4k", "--rw=read:-8k", "--loops=2"]), 4) else {
        return;
    };
    assert_eq!(offs, twice);
    let Some(offs) = same_offsets(&job(&["--bs=4k", "--rw=read:-8k", "--io_size=96k"]), 4) else {
        return;
    };
    assert_eq!(offs, twice[..24]);
}

#[test]
fn files_take_turns_each_walking_back_on_its_own() {
    for names in [&["--nrfiles=2"][..], &["--filename=a:b"][..]] {
        let mut args = vec!["--name=h", "--size=64k", "--ioengine=psync", "--bs=4k"];
        args.extend_from_slice(names);
        args.extend(["--rw=read:-8k", "--output=/dev/null"]);
        let Some([theirs, ours]) = both(&args) else {
            return;
        };
        assert_eq!(theirs, ours, "{args:?}");
        let offs: Vec<u64> = theirs[0].iter().map(|r| r.2).collect();
        assert_eq!(
            offs,
            [0, 0, 24, 24, 20, 20, 16, 16, 12, 12, 8, 8, 4, 4, 0, 0],
            "{args:?}"
        );
        let files: Vec<&str> = theirs[0].iter().map(|r| r.0.as_str()).collect();
        assert_eq!(files[..2], files[2..4], "turns: {files:?}");
    }
}

#[test]
fn an_offset_starts_the_walk_back_where_fio_s_arithmetic_puts_it() {
    // fio starts a backward walk at io_size - offset + hole in the region (a position in
    // the region computed from io_size as if it were one in the file), here 40k, 56k in
    // the file; below the region's start it goes on from 56k in the region.
    const FROM_16K: [u64; 16] = [
        56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 72, 68, 64, 60, 56,
    ];
    let cases: [(&str, &str, &[u64]); 4] = [
        ("--offset=16k", "--rw=read:-8k", &FROM_16K),
        ("--offset=16k", "--rw=write:-8k", &FROM_16K),
        // io_size - offset = 0: the first request at the region's start.
        (
            "--offset=64k",
            "--rw=read:-8k",
            &[
                64, 120, 116, 112, 108, 104, 100, 96, 92, 88, 84, 80, 76, 72, 68, 64,
            ],
        ),
        // Below 0: it wraps, so from the region's end.
        (
            "--offset=96k",
            "--rw=read:-8k",
            &[
                152, 148, 144, 140, 136, 132, 128, 124, 120, 116, 112, 108, 104, 100, 96, 152,
            ],
        ),
    ];
    for (offset, rw, want) in cases {
        let Some(offs) = same_offsets(&job(&["--bs=4k", offset, rw]), 4) else {
            return;
        };
        assert_eq!(offs, want, "{offset} {rw}");
    }
}

#[test]
fn a_forward_hole_past_the_file_starts_over_at_the_offset_read_as_a_position() {
    // offset=16k, rw=read:76k: 4k + 76k reaches the file's end (80k), and fio starts over
    // at 16k in the region, 32k in the file, again and again.
    let args = job(&["--bs=4k", "--offset=16k", "--rw=read:76k"]);
    let Some(offs) = same_offsets(&args, 4) else {
        return;
    };
    assert_eq!(offs, [[16].as_slice(), &[32; 15]].concat());
    // Landing between the region's end and the file's: the file is done, then the next
    // round (io_size) begins at the region's start.
    let args = job(&["--bs=4k", "--offset=16k", "--rw=read:8k", "--io_size=40k"]);
    let Some(offs) = same_offsets(&args, 4) else {
        return;
    };
    assert_eq!(offs, [16, 28, 40, 52, 64, 76, 16, 28, 40, 52]);
}

#[test]
fn reads_and_writes_of_a_mix_each_walk_back_on_their_own() {
    let Some([theirs, ours]) = both(&job(&["--bs=4k", "--rw=rw:-8k"])) else {
        return;
    };
    // The mix's draws are each program's own; each direction's offsets are fio's.
    for d in ['r', 'w'] {
        let offs = |t: &[Vec<Req>]| -> Vec<u64> {
            t[0].iter().filter(|r| r.1 == d).map(|r| r.2).collect()
        };
        let (a, b) = (offs(&theirs), offs(&ours));
        let n = a.len().min(b.len());
        assert!(n >= 4, "{d}: {a:?} {b:?}");
        assert_eq!(a[..n], BACKWARDS[..n], "{d}");
        assert_eq!(b[..n], BACKWARDS[..n], "{d}");
    }
}

// ---------------------------------------------------------------------------------------
// Time-based jobs

/// The first `n` offsets of a time-based one-file job, fio's and plumb's, which must be
/// the same.
fn same_first(extra: &[&str], n: usize) -> Option<Vec<u64>> {
    let mut args = job(&["--time_based", "--runtime=1"]);
    args.extend_from_slice(extra);
    let [theirs, ours] = both(&args)?;
    let offs = |t: &[Vec<Req>]| -> Vec<u64> { t[0].iter().take(n).map(|r| r.2).collect() };
    let (a, b) = (offs(&theirs), offs(&ours));
    assert_eq!(a.len(), n, "{args:?}: fio's {a:?}");
    assert_eq!(a, b, "{args:?}");
    Some(a)
}

#[test]
fn a_time_based_walk_back_cycles_in_place() {
    let Some(offs) = same_first(&["--bs=4k", "--rw=read:-8k"], 40) else {
        return;
    };
    let cycle = &BACKWARDS[1..];
    let want: Vec<u64> = std::iter::once(0)
        .chain(cycle.iter().copied().cycle())
        .take(40)
        .collect();
    assert_eq!(offs, want);
    // A request that ends at the region's end starts it over; with an offset the walk
    // then goes back from io_size - offset again.
    let Some(offs) = same_first(&["--bs=8k", "--offset=16k", "--rw=read:-4k"], 12) else {
        return;
    };
    assert_eq!(offs, [60, 64, 68, 72, 60, 64, 68, 72, 60, 64, 68, 72]);
}

#[test]
fn a_time_based_file_with_no_room_left_is_closed_and_opened_again() {
    if !tools() {
        return;
    }
    // bs=12k, rw=read:-4k: from 56k a request would cross the end, so fio finds the file
    // done and opens it again for a new round (a backward hole as a forward one).
    for rw in ["--rw=read:-4k", "--rw=read:2k"] {
        let args = job(&["--time_based", "--runtime=1", "--bs=12k", rw]);
        let drop_in = DropIn::named("fio");
        let theirs = logged(Path::new(FIO), &args, 20);
        let ours = logged(&drop_in.bin(), &args, 20);
        assert_eq!(theirs, ours, "{rw}");
        assert_eq!(theirs[0..2], ["f add", "f open"], "{rw}");
        let count = |what: &str| theirs.iter().filter(|l| *l == what).count();
        assert!(count("f close") >= 2, "{rw}: {theirs:?}");
        assert_eq!(count("f open"), count("f close") + 1, "{rw}: {theirs:?}");
    }
}

// ---------------------------------------------------------------------------------------
// fio's examples

/// fio 3.33's examples/butterfly.fio, its file here instead of /tmp/testfile; with `halves`
/// its two commented lines are in, so each job stops at the middle of the file.
fn butterfly(halves: bool) -> String {
    let (size, offset) = if halves { ("", "") } else { ("#", "#") };
    format!(
        "# Perform a butterfly/funnel seek pattern. This won't always alternate ends on\n\
         # every I/O but it will get close.\n\
         \n\
         [global]\n\
         filename=testfile\n\
         bs=4k\n\
         direct=1\n\
         \n\
         [forward]\n\
         rw=read\n\
         flow=2\n\
         # Uncomment the size= and offset= lines to prevent each direction going past\n\
         # the middle of the file\n\
         {size}size=50%\n\
         \n\
         [backward]\n\
         rw=read:-8k\n\
         flow=2\n\
         {offset}offset=50%\n"
    )
}

#[test]
fn the_butterfly_example_reads_forward_and_backward_as_fio_does() {
    for (halves, want) in [
        (
            false,
            [
                BACKWARDS.to_vec(),
                (0..16).map(|k| k * 4).collect::<Vec<u64>>(),
            ],
        ),
        (
            true,
            [
                vec![0, 4, 8, 12, 16, 20, 24, 28],
                vec![32, 56, 52, 48, 44, 40, 36, 32],
            ],
        ),
    ] {
        if !tools() {
            return;
        }
        let drop_in = DropIn::named("fio");
        let runs = [Path::new(FIO).to_path_buf(), drop_in.bin()].map(|bin| {
            let work = TempDir::new().unwrap();
            std::fs::write(work.path().join("butterfly.fio"), butterfly(halves)).unwrap();
            let data: Vec<u8> = (0..65536).map(|i| (i * 7) as u8).collect();
            std::fs::write(work.path().join("testfile"), data).unwrap();
            let trace = traced_ok(
                &bin,
                work.path(),
                "pread64",
                &["butterfly.fio", "--output=/dev/null"],
            );
            requests(&trace, work.path())
        });
        let [theirs, ours] = &runs;
        assert_eq!(theirs, ours, "halves: {halves}");
        let mut offs: Vec<Vec<u64>> = theirs
            .iter()
            .map(|t| t.iter().map(|r| r.2).collect())
            .collect();
        offs.sort();
        let mut want = want.to_vec();
        want.sort();
        assert_eq!(offs, want, "halves: {halves}");
    }
}

/// A random mode's suffix is a count of requests between draws, read by C's atoi into an
/// unsigned number: 0 (or no number at all) never draws, so fio walks the file
/// sequentially from its start; `-8` is 2^32-8, one draw and then sequential requests.
#[test]
fn a_random_mode_that_never_draws_walks_sequentially() {
    for rw in ["--rw=randread:0", "--rw=randread:abc", "--rw=randwrite:0"] {
        let Some(offs) = same_offsets(&job(&["--bs=4k", rw]), 4) else {
            return;
        };
        assert_eq!(offs, (0..16).map(|b| b * 4).collect::<Vec<_>>(), "{rw}");
    }
    // One draw, then each request follows on, wrapping to a draw at the file's end.
    let drop_in = DropIn::named("fio");
    let work = TempDir::new().unwrap();
    let trace = traced_ok(
        &drop_in.bin(),
        work.path(),
        "pread64",
        &job(&["--bs=4k", "--rw=randread:-8"]),
    );
    let reads = requests(&trace, work.path());
    let offs: Vec<u64> = reads[0].iter().map(|r| r.2).collect();
    assert_eq!(offs.len(), 16, "{offs:?}");
    // Every request follows on from the one before, but the one after the file's last
    // block, which is drawn.
    assert!(
        offs.windows(2).all(|w| w[1] == w[0] + 4 || w[0] == 60),
        "{offs:?}"
    );
}
