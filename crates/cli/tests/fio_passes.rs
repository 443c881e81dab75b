//! A job's rounds (`loops`, `io_size`) and its read-back (`verify`), against Debian's fio
//! 3.33 (/usr/bin/fio): the same job, run by fio and by plumb through a symlink named
//! `fio`, must make the same requests, in the same order, with the same waits between the
//! rounds.
//!
//! What fio 3.33 does (backend.c):
//!
//! - `thread_main` runs rounds while `keep_running` says so: the first `loops` always, then
//!   more while the bytes done (`io_bytes`, read-back included) fall short of `io_size` by
//!   a largest request. Each round is one `do_io`, which issues at most what is left of
//!   `io_size` × `loops` (`io_issue_bytes_exceeded`) and ends when every file is done; a
//!   round with nothing to issue ends the job. So `loops=2` with `io_size` twice the size
//!   makes two rounds in all, and `loops=2` with `io_size` half the size one round of the
//!   whole size. `do_io` also stops at the job's size (`total_bytes`), but the bytes it
//!   compares (`io_queue_event`'s `bytes_issued`) grow only for requests the engine queues
//!   (`FIO_Q_QUEUED`): a random job without a map is one round on psync, a round per size
//!   on libaio; and a time-based job (which stops there only to verify) verifies on libaio
//!   but never on psync, whose only file starts over in place.
//! - `do_io` ends by completing everything in flight in one call
//!   (`io_u_queued_complete(td, cur_depth)`), before the next round closes and opens the
//!   files again (`clear_io_state`), dropping their cached pages at the first request of
//!   each (`td_io_open_file`, `invalidate`). A queued engine's requests never cross a round.
//! - With `verify` and `do_verify=1`, `do_verify` follows every `do_io`, not just the last:
//!   it reads back that round's writes (`prune_io_piece_log` forgets the earlier ones),
//!   in the order written when the job keeps a random map, otherwise by file and offset
//!   (iolog.c `log_io_piece` sorts them into a tree), and completes them in one call too.
//! - With `randrepeat=1` (the default), `clear_io_state` seeds the random generators again
//!   (libfio.c `td_fill_rand_seeds`) as each round starts: every loop of a random job
//!   makes the same offsets as the first.
//!
//! Both programs run under `strace -f -y` on a file laid out (and cached) beforehand; the
//! calls on the job's files and the queueing calls become a list of words, which must be
//! equal. Without fio or strace the comparisons are skipped with a message, except under
//! CI.

mod common;
use common::peers::{DropIn, FIO as PEER};

use std::path::Path;

use tempfile::TempDir;

fn tools() -> bool {
    common::peers::fio_and_strace("the fio rounds comparison")
}

/// strace, which even plumb's own expectations need.
fn strace() -> bool {
    common::peers::strace("the fio rounds comparison")
}

/// The run's calls, in order, as words: `r f 4096@0` (pread64 of file `f`), `w f 4096@0`,
/// `drop f 0+65536` (POSIX_FADV_DONTNEED), `submit 1 r` (io_submit's count and what each
/// request does), `getevents 3 3` (min and max).
fn calls(bin: &Path, dir: &Path, args: &[&str]) -> Vec<String> {
    let text = common::peers::traced_ok(
        bin,
        dir,
        "pread64,pwrite64,fadvise64,io_submit,io_getevents",
        args,
    );
    let prefix = format!("{}/", dir.canonicalize().unwrap().display());
    let mut v = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some((call, args)) = rest.split_once('(') else {
            continue;
        };
        let list: Vec<&str> = args.split(", ").collect();
        // The job's file a descriptor names: `6</tmp/x/data>`.
        let file = || -> Option<String> {
            let a = list[0];
            let path = &a[a.find('<')? + 1..a.find('>')?];
            Some(path.strip_prefix(&prefix)?.to_string())
        };
        match call {
            "pread64" | "pwrite64" => {
                let Some(f) = file() else { continue };
                let n = list.len();
                let d = if call == "pread64" { "r" } else { "w" };
                v.push(format!(
                    "{d} {f} {}@{}",
                    list[n - 2],
                    list[n - 1].split(')').next().unwrap()
                ));
            }
            "fadvise64" if list[3].starts_with("POSIX_FADV_DONTNEED") => {
                let Some(f) = file() else { continue };
                v.push(format!("drop {f} {}+{}", list[1], list[2]));
            }
            "io_submit" => {
                // What the requests do: `r`, `w` (one letter each).
                let ops: String = args
                    .split("aio_lio_opcode=IOCB_CMD_P")
                    .skip(1)
                    .map(|rest| if rest.starts_with("READ") { 'r' } else { 'w' })
                    .collect();
                v.push(format!("submit {} {ops}", list[1]));
            }
            "io_getevents" => v.push(format!("getevents {} {}", list[1], list[2])),
            _ => {}
        }
    }
    v
}

/// A directory `d/job` with the file `data` of `size` laid out by plumb (so cached).
fn laid_out(size: &str) -> (TempDir, std::path::PathBuf) {
    let d = TempDir::new().unwrap();
    let job = d.path().join("job");
    std::fs::create_dir(&job).unwrap();
    let out = common::plumb()
        .args(["fio", "--name=l", "--filename=data", "--rw=read"])
        .arg(format!("--size={size}"))
        .current_dir(&job)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (d, job)
}

type Setup<'a> = &'a dyn Fn() -> (TempDir, std::path::PathBuf);

/// plumb's calls for `args` on a fresh copy of the files `setup` makes, then fio's (when
/// installed), which must be the same.
fn compare(args: &[&str], setup: Setup) -> Vec<String> {
    compare_by(args, setup, <[String]>::to_vec)
}

/// [`compare`] of the calls as `norm` gives them.
///
/// libaio jobs run with `userspace_reap=0`: plumb then collects completions with fio's own
/// io_getevents calls (by default it takes those already in the ring without one; fio_batch.rs).
fn compare_by(args: &[&str], setup: Setup, norm: fn(&[String]) -> Vec<String>) -> Vec<String> {
    let mut args = args.to_vec();
    if args.contains(&"--ioengine=libaio") {
        args.push("--userspace_reap=0");
    }
    let args = &args[..];
    let fio = DropIn::named("fio");
    let (_keep, dir) = setup();
    let mine = norm(&calls(&fio.bin(), &dir, args));
    if tools() {
        let (_keep, dir) = setup();
        let theirs = norm(&calls(Path::new(PEER), &dir, args));
        assert_eq!(mine, theirs, "calls of {args:?}: plumb, then fio");
    }
    mine
}

/// `calls` with repeats counted: `["drop data 0+65536",
/// "submit 1 ×4", ...]`.
fn runs(calls: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for c in calls {
        match out.last_mut() {
            Some((last, n)) if last == c => *n += 1,
            _ => out.push((c.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(c, n)| if n == 1 { c } else { format!("{c} ×{n}") })
        .collect()
}

#[test]
fn a_queued_engine_completes_a_round_before_the_next_one() {
    if !strace() {
        return;
    }
    // 16 requests a round at depth 4, one completion waited for after each once the queue
    // is full; the last three are collected together (fio's io_u_queued_complete) before
    // the file is opened again (its pages dropped).
    let args = [
        "--name=j",
        "--filename=data",
        "--size=64k",
        "--rw=randread",
        "--ioengine=libaio",
        "--iodepth=4",
        "--loops=2",
    ];
    let setup = || laid_out("64k");
    let mine = runs(&compare(&args, &setup));
    let mut want: Vec<String> = vec!["drop data 0+65536".into(), "submit 1 r ×4".into()];
    for _ in 0..12 {
        want.push("getevents 1 1".into());
        want.push("submit 1 r".into());
    }
    want.push("getevents 1 1".into());
    want.push("getevents 3 3".into());
    let want: Vec<String> = want.iter().chain(want.iter()).cloned().collect();
    assert_eq!(mine, want);

    // io_size beyond the size: the rounds are the same, three of them.
    let args = [
        "--name=j",
        "--filename=data",
        "--size=64k",
        "--io_size=192k",
        "--rw=read",
        "--ioengine=libaio",
        "--iodepth=4",
    ];
    let mine = compare(&args, &setup);
    let drains: Vec<usize> = mine
        .iter()
        .enumerate()
        .filter(|(_, c)| *c == "getevents 3 3")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(drains.len(), 3, "{mine:?}");
    for &i in &drains[..2] {
        assert_eq!(mine[i + 1], "drop data 0+65536", "{mine:?}");
    }
}

#[test]
fn loops_and_io_size_make_the_same_rounds_as_fio() {
    if !strace() {
        return;
    }
    let setup = || laid_out("16k");
    // (loops, io_size) and the reads each round makes (4 KiB each, from offset 0).
    let cases: &[(&str, &str, &[usize])] = &[
        // Two rounds in all: keep_running stops at io_size.
        ("2", "32k", &[4, 4]),
        // Rounds of the size until io_size × loops: 36 KiB.
        ("3", "12k", &[4, 4, 1]),
        // io_size × loops below the size: one round of 16 KiB.
        ("2", "8k", &[4]),
        // After the one loop, rounds until io_size, the last one cut.
        ("1", "40k", &[4, 4, 2]),
    ];
    for &(loops, io_size, want) in cases {
        let loops = format!("--loops={loops}");
        let io_size = format!("--io_size={io_size}");
        let args = [
            "--name=j",
            "--filename=data",
            "--size=16k",
            "--rw=read",
            &loops,
            &io_size,
        ];
        let mine = compare(&args, &setup);
        let mut rounds: Vec<usize> = Vec::new();
        for c in &mine {
            if c.starts_with("drop ") {
                rounds.push(0);
            } else {
                let k = *rounds.last().unwrap() as u64;
                assert_eq!(*c, format!("r data 4096@{}", k * 4096), "{mine:?}");
                *rounds.last_mut().unwrap() += 1;
            }
        }
        assert_eq!(rounds, want, "{args:?}: {mine:?}");
    }
}

#[test]
fn each_loop_is_read_back_before_the_next_one() {
    if !strace() {
        return;
    }
    // Two files in order, two loops: each loop's writes, then their read-back, file by
    // file (fio sorts what it verifies without a random map).
    let args = [
        "--name=j",
        "--nrfiles=2",
        "--size=16k",
        "--rw=write",
        "--verify=crc32c",
        "--loops=2",
    ];
    let setup = || {
        let d = TempDir::new().unwrap();
        let job = d.path().join("job");
        std::fs::create_dir(&job).unwrap();
        (d, job)
    };
    let mine = compare(&args, &setup);
    let (a, b) = ("j.0.0", "j.0.1");
    let mut round = Vec::new();
    for f in [a, b] {
        round.push(format!("drop {f} 0+8192"));
    }
    let mut want = Vec::new();
    for _ in 0..2 {
        want.push(format!("drop {a} 0+8192"));
        want.push(format!("w {a} 4096@0"));
        want.push(format!("drop {b} 0+8192"));
        want.push(format!("w {b} 4096@0"));
        want.push(format!("w {a} 4096@4096"));
        want.push(format!("w {b} 4096@4096"));
        for f in [a, b] {
            want.push(format!("drop {f} 0+8192"));
            want.push(format!("r {f} 4096@0"));
            want.push(format!("r {f} 4096@4096"));
        }
    }
    // The layout's own drops come first.
    let run: Vec<String> = mine.iter().skip(2).cloned().collect();
    assert_eq!(&mine[..2], &round[..], "{mine:?}");
    assert_eq!(run, want);

    // A queued engine: each loop's writes are completed before the read-back, and the
    // read-back before the next loop.
    let args = [
        "--name=j",
        "--filename=data",
        "--size=32k",
        "--rw=randwrite",
        "--verify=md5",
        "--ioengine=libaio",
        "--iodepth=4",
        "--loops=2",
    ];
    let mine = runs(&compare(&args, &setup));
    let drains = mine.iter().filter(|c| *c == "getevents 3 3").count();
    assert_eq!(drains, 4, "{mine:?}");
}

/// `calls` without the offsets of the requests (random ones differ between the programs).
fn without_offsets(calls: &[String]) -> Vec<String> {
    calls
        .iter()
        .map(|c| match c.split_once('@') {
            Some((head, _)) if c.starts_with("r ") || c.starts_with("w ") => head.to_string(),
            _ => c.clone(),
        })
        .collect()
}

#[test]
fn a_round_ends_at_the_size_only_on_an_engine_that_queues() {
    if !strace() {
        return;
    }
    // fio's do_io counts the bytes it compares with the size only for queued requests: a
    // random job without a map and io_size four times the size is one round on psync,
    // four (each opening the file again) on libaio.
    let setup = || laid_out("16k");
    let job = |engine: &'static str| {
        [
            "--name=j",
            "--filename=data",
            "--size=16k",
            "--io_size=64k",
            "--rw=randread",
            "--norandommap",
            engine,
        ]
    };
    let mine = runs(&compare_by(
        &job("--ioengine=psync"),
        &setup,
        without_offsets,
    ));
    assert_eq!(mine, ["drop data 0+16384", "r data 4096 ×16"]);
    let mine = runs(&compare(&job("--ioengine=libaio"), &setup));
    let round = ["drop data 0+16384", "submit 1 r", "getevents 1 1"];
    let mut want = Vec::new();
    for _ in 0..4 {
        want.push(round[0].to_string());
        for _ in 0..4 {
            want.extend(round[1..].iter().map(|s| s.to_string()));
        }
    }
    assert_eq!(mine, want);
}

#[test]
fn a_time_based_job_verifies_only_where_fio_does() {
    if !strace() {
        return;
    }
    let fresh = || {
        let d = TempDir::new().unwrap();
        let job = d.path().join("job");
        std::fs::create_dir(&job).unwrap();
        (d, job)
    };
    let job = |engine: &'static str| {
        [
            "--name=j",
            "--filename=data",
            "--size=16k",
            "--rw=write",
            "--verify=crc32c",
            "--time_based",
            "--runtime=1",
            "--iodepth=1",
            engine,
        ]
    };
    // psync: the file starts over in place, the round never ends, nothing is read back
    // (fio warns that the verification read phase will never start).
    let check_psync = |calls: &[String]| {
        assert!(!calls.is_empty());
        assert!(calls.iter().all(|c| !c.starts_with("r ")), "{calls:?}");
    };
    // libaio: rounds of the size (16 KiB), each read back before the next.
    let check_libaio = |calls: &[String]| {
        let calls = runs(calls);
        let rounds: Vec<&[String]> = calls
            .split(|c| c.starts_with("drop "))
            .filter(|r| !r.is_empty())
            .collect();
        assert!(rounds.len() >= 4, "{calls:?}");
        // The last one may be cut by the time limit.
        for (i, r) in rounds[..rounds.len() - 1].iter().enumerate() {
            let op = if i % 2 == 0 { "w" } else { "r" };
            let want: Vec<String> = (0..4)
                .flat_map(|_| [format!("submit 1 {op}"), "getevents 1 1".to_string()])
                .collect();
            assert_eq!(runs(&want), r.to_vec(), "round {i} of {calls:?}");
        }
    };
    let fio = DropIn::named("fio");
    let mut bins = vec![fio.bin()];
    if tools() {
        bins.push(PEER.into());
    }
    for bin in &bins {
        let (_keep, dir) = fresh();
        check_psync(&calls(bin, &dir, &job("--ioengine=psync")));
        let (_keep, dir) = fresh();
        // The layout's drop comes first. fio's own io_getevents calls: see `compare_by`.
        let mut args = job("--ioengine=libaio").to_vec();
        args.push("--userspace_reap=0");
        let c = calls(bin, &dir, &args);
        assert_eq!(c[0], "drop data 0+16384", "{}", bin.display());
        check_libaio(&c[1..]);
    }
}

#[test]
fn every_loop_repeats_the_random_offsets_unless_randrepeat_is_off() {
    if !strace() {
        return;
    }
    // 64 blocks read at random, three loops: the same order each loop (each program its
    // own), and with randrepeat=0 never the same (1 in 64! that two are).
    let rounds = |bin: &Path, repeat: &str| -> Vec<Vec<String>> {
        let (_keep, dir) = laid_out("256k");
        let args = [
            "--name=j",
            "--filename=data",
            "--size=256k",
            "--rw=randread",
            "--loops=3",
            repeat,
        ];
        let c = calls(bin, &dir, &args);
        let r: Vec<Vec<String>> = c
            .split(|c| c.starts_with("drop "))
            .filter(|r| !r.is_empty())
            .map(<[String]>::to_vec)
            .collect();
        assert_eq!(r.len(), 3, "{c:?}");
        assert!(r.iter().all(|r| r.len() == 64), "{c:?}");
        r
    };
    let fio = DropIn::named("fio");
    let mut bins = vec![fio.bin()];
    if tools() {
        bins.push(PEER.into());
    }
    for bin in &bins {
        let r = rounds(bin, "--randrepeat=1");
        assert!(r[0] == r[1] && r[1] == r[2], "{}: {r:?}", bin.display());
        let r = rounds(bin, "--randrepeat=0");
        assert!(r[0] != r[1] && r[1] != r[2], "{}: {r:?}", bin.display());
    }
}

#[test]
fn random_requests_of_several_sizes_cover_each_block_once_a_round() {
    if !strace() {
        return;
    }
    // fio's mark_random_map: a 16k request takes the free blocks after the one drawn and
    // is cut where a used one starts, so a round (its map used up) reads every 4k block
    // exactly once, and psync's rounds end there. Each program its own offsets.
    let args = [
        "--name=j",
        "--filename=data",
        "--size=256k",
        "--rw=randread",
        "--bssplit=4k/50:16k/50",
        "--loops=2",
    ];
    let fio = DropIn::named("fio");
    let mut bins = vec![fio.bin()];
    if tools() {
        bins.push(PEER.into());
    }
    for bin in &bins {
        let (_keep, dir) = laid_out("256k");
        let c = calls(bin, &dir, &args);
        let mut rounds: Vec<Vec<u32>> = Vec::new();
        for w in &c {
            if w.starts_with("drop ") {
                rounds.push(vec![0; 64]);
                continue;
            }
            // `r data 16384@4096`
            let (len, off) = w["r data ".len()..].split_once('@').unwrap();
            let (len, off): (u64, u64) = (len.parse().unwrap(), off.parse().unwrap());
            assert!(len % 4096 == 0 && len <= 16384, "{w}");
            for b in off / 4096..(off + len) / 4096 {
                rounds.last_mut().unwrap()[b as usize] += 1;
            }
        }
        assert_eq!(rounds.len(), 2, "{}: {c:?}", bin.display());
        for r in &rounds {
            assert!(r.iter().all(|&n| n == 1), "{}: {r:?}", bin.display());
        }
    }
}
