//! fio's `log_offset` and `per_job_logs`, and the block sizes a sequential job draws near
//! the end of its file, against Debian's fio 3.33 (/usr/bin/fio), each tool in its own
//! fresh temp directory. fio's own suite (t/run-fio-tests.py, jobs t0019-t0024) reads
//! which offsets a job touched from exactly these logs.
//!
//! Without /usr/bin/fio these tests are skipped with a message, except under CI
//! (`CI=true`), where a missing peer is a failure.

mod common;
use common::peers::{installed, run_named, DropIn};

use std::collections::BTreeSet;
use std::path::Path;

use tempfile::TempDir;

const PEER: &str = "/usr/bin/fio";

fn peer() -> Option<&'static str> {
    installed(&[PEER], "apt-get install fio", "the fio drop-in comparison").then_some(PEER)
}

/// fio's and plumb's directories after each ran `args` there (each must succeed).
fn run_both(args: &[&str]) -> Option<(TempDir, TempDir)> {
    let peer = peer()?;
    let drop_in = DropIn::named("fio");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    for (bin, d) in [(Path::new(peer), &a), (drop_in.bin().as_path(), &b)] {
        let out = run_named(bin, d.path(), args);
        assert_eq!(out.code, 0, "{} {args:?}: {}", bin.display(), out.stderr);
    }
    Some((a, b))
}

/// A log's lines as their comma-separated numbers.
fn lines(dir: &Path, name: &str) -> Vec<Vec<u64>> {
    let path = dir.join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
        .collect()
}

/// The logs a directory holds, by name.
fn logs(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

#[test]
fn offsets_in_one_log_for_all_the_jobs() {
    let args = [
        "--name=j",
        "--ioengine=null",
        "--size=64k",
        "--bs=16k",
        "--numjobs=2",
        "--write_bw_log=a",
        "--write_lat_log=l",
        "--write_iops_log=i",
        "--log_offset=1",
        "--per_job_logs=0",
    ];
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    // One file per log, with no job number; both jobs' requests in it.
    assert_eq!(logs(ours.path()), logs(theirs.path()));
    for name in logs(ours.path()) {
        let (t, o) = (lines(theirs.path(), &name), lines(ours.path(), &name));
        assert_eq!(o.len(), t.len(), "{name}");
        // time, value, ddir, bs, offset, prio: each job read 0, 16k, 32k, 48k once.
        let shape = |v: &[Vec<u64>]| {
            let mut s: Vec<(usize, u64, u64, u64)> =
                v.iter().map(|l| (l.len(), l[2], l[3], l[4])).collect();
            s.sort_unstable();
            s
        };
        assert_eq!(shape(&o), shape(&t), "{name}");
    }
    assert_eq!(lines(ours.path(), "a_bw.log").len(), 8);

    // Without per_job_logs the jobs append, as fio does, to what the file held before.
    let drop_in = DropIn::named("fio");
    let again = run_named(&drop_in.bin(), ours.path(), &args);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(lines(ours.path(), "a_bw.log").len(), 16);

    // Averaged over windows, the offset column is there and 0, as fio writes it.
    let windowed = [
        "--name=w",
        "--ioengine=null",
        "--size=1g",
        "--bs=4k",
        "--time_based",
        "--runtime=1",
        "--write_bw_log=w",
        "--log_offset=1",
        "--log_avg_msec=200",
    ];
    let Some((theirs, ours)) = run_both(&windowed) else {
        return;
    };
    for dir in [theirs.path(), ours.path()] {
        let l = lines(dir, "w_bw.1.log");
        assert!(!l.is_empty());
        assert!(
            l.iter().all(|l| l.len() == 6 && l[3] == 0 && l[4] == 0),
            "{l:?}"
        );
    }
}

/// Every trim of `trimwrite` is followed by a write of the same offset and length, and
/// the pairs cover the file, with block sizes drawn from a range or a split (fio seeds
/// the two directions' size draws alike for this).
#[test]
fn trimwrite_writes_each_block_it_trimmed() {
    for sizes in ["--bsrange=512-4k", "--bssplit=512/25:1k/25:2k/25:4k/25"] {
        let args = [
            "--name=tw",
            "--ioengine=null",
            "--filesize=1M",
            "--rw=trimwrite",
            sizes,
            "--randrepeat=0",
            "--write_bw_log=tw",
            "--log_offset=1",
            "--per_job_logs=0",
        ];
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        for (who, dir) in [("fio", theirs.path()), ("plumb", ours.path())] {
            let l = lines(dir, "tw_bw.log");
            assert!(l.len().is_multiple_of(2), "{who} {sizes}");
            let mut end = 0;
            for pair in l.chunks(2) {
                let (trim, write) = (&pair[0], &pair[1]);
                assert_eq!((trim[2], write[2]), (2, 1), "{who} {sizes}: {pair:?}");
                assert_eq!((trim[3], trim[4]), (write[3], write[4]), "{who} {sizes}");
                assert_eq!(trim[4], end, "{who} {sizes}: in order, no gap");
                end += trim[3];
            }
            assert_eq!(end, 1 << 20, "{who} {sizes}: the whole file");
        }
    }
}

/// A sequential job whose sizes vary draws again near the end of its file until a size
/// fits, as fio does, so it does all of the file's bytes.
#[test]
fn a_sequential_job_of_varied_sizes_does_the_whole_file() {
    for sizes in [
        "--bsrange=512-4k",
        "--bssplit=512/10:64k/90",
        "--bsrange=1k-64k",
    ] {
        let args = [
            "--name=w",
            "--ioengine=null",
            "--filesize=1M",
            "--rw=write",
            sizes,
            "--randrepeat=0",
            "--output-format=json",
            "--output=out.json",
        ];
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        for (who, dir) in [("fio", theirs.path()), ("plumb", ours.path())] {
            let text = std::fs::read_to_string(dir.join("out.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20, "{who} {sizes}");
        }
    }
}

/// fio draws a range's size as the minimum plus a uniform share of the maximum, aligned
/// down to the minimum and capped at the maximum: with bsrange=4k-6k a third of the
/// requests are 6 KiB (not a multiple of the minimum), the rest 4 KiB.
#[test]
fn a_range_whose_maximum_is_no_multiple_of_its_minimum() {
    let args = [
        "--name=r",
        "--ioengine=null",
        "--size=10m",
        "--rw=read",
        "--bsrange=4k-6k",
        "--write_bw_log=r",
        "--per_job_logs=0",
    ];
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    for (who, dir) in [("fio", theirs.path()), ("plumb", ours.path())] {
        let sizes: Vec<u64> = lines(dir, "r_bw.log").iter().map(|l| l[3]).collect();
        assert!(sizes.iter().all(|&s| s == 4096 || s == 6144), "{who}");
        let big = sizes.iter().filter(|&&s| s == 6144).count() as f64 / sizes.len() as f64;
        assert!((0.25..0.42).contains(&big), "{who}: {big}");
    }
}

/// `random_generator=lfsr` (fio's own t0021): with no random map every block of the file
/// is still read exactly once per pass, in an order with hardly a run in it; a second pass
/// walks the same order again, as fio's lfsr_reset starts from the same seed. Both tools.
#[test]
fn lfsr_reads_every_block_once_per_pass_in_one_order() {
    let args = [
        "--name=test",
        "--ioengine=null",
        "--filesize=1M",
        "--rw=randread",
        "--write_bw_log=test",
        "--per_job_logs=0",
        "--log_offset=1",
        "--norandommap=1",
        "--random_generator=lfsr",
        "--loops=2",
    ];
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    for dir in [theirs.path(), ours.path()] {
        let offsets: Vec<u64> = lines(dir, "test_bw.log").iter().map(|l| l[4]).collect();
        assert_eq!(offsets.len(), 512, "{dir:?}");
        let (first, second) = offsets.split_at(256);
        let mut blocks: Vec<u64> = first.iter().map(|o| o / 4096).collect();
        blocks.sort_unstable();
        assert_eq!(blocks, (0..256).collect::<Vec<_>>(), "{dir:?}");
        assert_eq!(first, second, "{dir:?}: the second pass in another order");
        let runs = first.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!(runs <= 10, "{dir:?}: {runs} consecutive offsets");
    }
}
