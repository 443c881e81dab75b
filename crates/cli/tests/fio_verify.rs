//! fio's verify on a job that both reads and writes, against Debian's fio 3.33.
//!
//! fio 3.33 (backend.c do_io, io_u.c check_get_verify): a mixed job seals and logs its
//! writes as a writing job does, and reads them back while writing (`verify_backlog`) and
//! after each round (`do_verify`); the reads of the mix itself are not checked (only a job
//! that does not write checks every read). fio counts the read-backs as reads but not
//! toward the job's size, so a mixed job over a random map reads its size in all: the
//! mix's reads plus the read-back of every block it wrote.
//!
//! The mix is drawn from each program's own random stream, so the requests differ; what
//! is compared is what follows from the rules above, in the JSON and in each program's
//! `write_iolog`.

mod common;
use common::peers::{installed, run_named, DropIn, FIO};

use std::path::Path;
use tempfile::TempDir;

fn peer() -> bool {
    installed(&[FIO], "apt-get install fio", "the verify comparison")
}

struct Run {
    read_kib: u64,
    write_kib: u64,
    /// The logged requests: (is a read, offset, length), in order.
    requests: Vec<(bool, u64, u64)>,
}

fn run(bin: &Path, args: &[&str]) -> Run {
    let work = TempDir::new().unwrap();
    let mut a = vec!["--name=mix", "--bs=4k", "--size=1m"];
    a.extend_from_slice(args);
    a.extend(["--write_iolog=log", "--output-format=json"]);
    let out = run_named(bin, work.path(), &a);
    assert_eq!(out.code, 0, "{bin:?} {args:?}: {}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    let job = &json["jobs"][0];
    assert_eq!(job["error"], 0, "{bin:?} {args:?}");
    let log = std::fs::read_to_string(work.path().join("log")).unwrap();
    let requests = log
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            match w.get(2).copied() {
                Some(dir @ ("read" | "write")) => {
                    Some((dir == "read", w[3].parse().unwrap(), w[4].parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect();
    Run {
        read_kib: job["read"]["io_kbytes"].as_u64().unwrap(),
        write_kib: job["write"]["io_kbytes"].as_u64().unwrap(),
        requests,
    }
}

fn both(args: &[&str]) -> [Run; 2] {
    let drop_in = DropIn::named("fio");
    [run(Path::new(FIO), args), run(&drop_in.bin(), args)]
}

#[test]
fn a_mixed_job_reads_back_each_write_at_once_with_a_backlog_of_one() {
    if !peer() {
        return;
    }
    for args in [
        &["--rw=readwrite", "--verify=crc32c", "--verify_backlog=1"][..],
        &[
            "--rw=randrw",
            "--rwmixread=70",
            "--verify=md5",
            "--verify_backlog=1",
        ],
    ] {
        for (who, r) in ["fio", "plumb"].iter().zip(both(args)) {
            // The size in all: the mix's reads and writes, then the read-backs.
            assert_eq!(
                r.read_kib + r.write_kib,
                1024 + r.write_kib,
                "{who} {args:?}"
            );
            assert!(
                r.write_kib > 0 && r.read_kib > r.write_kib,
                "{who} {args:?}"
            );
            // A blocking engine: every write is followed by its read-back.
            let mut writes = 0;
            for (i, &(read, off, len)) in r.requests.iter().enumerate() {
                if !read {
                    writes += 1;
                    assert_eq!(
                        r.requests.get(i + 1),
                        Some(&(true, off, len)),
                        "{who} {args:?}: the write at {off} is not read back next"
                    );
                }
            }
            assert_eq!(writes * 4, r.write_kib, "{who} {args:?}");
        }
    }
}

#[test]
fn a_mixed_job_reads_back_its_round_s_writes_in_order_at_the_end() {
    if !peer() {
        return;
    }
    for args in [
        &["--rw=randrw", "--verify=crc32c"][..],
        &["--rw=randrw", "--verify=md5", "--loops=2"],
        &[
            "--rw=randrw",
            "--verify=crc32c",
            "--ioengine=libaio",
            "--iodepth=4",
            "--direct=1",
        ],
    ] {
        let loops = if args.contains(&"--loops=2") { 2 } else { 1 };
        for (who, r) in ["fio", "plumb"].iter().zip(both(args)) {
            assert_eq!(r.read_kib, 1024 * loops, "{who} {args:?}");
            // Each round: its requests (each block once, by the random map), then its
            // writes read back in the order written.
            let per_round = r.requests.len() / loops as usize;
            for round in r.requests.chunks(per_round) {
                let writes: Vec<_> = round.iter().filter(|q| !q.0).map(|q| (q.1, q.2)).collect();
                let tail: Vec<_> = round[round.len() - writes.len()..]
                    .iter()
                    .map(|q| {
                        assert!(q.0, "{who} {args:?}: a write among the read-backs");
                        (q.1, q.2)
                    })
                    .collect();
                assert_eq!(tail, writes, "{who} {args:?}");
                assert_eq!(round.len(), 256 + writes.len(), "{who} {args:?}");
            }
        }
    }
}

#[test]
fn the_reads_of_the_mix_are_not_checked() {
    if !peer() {
        return;
    }
    // Blocks written without verify headers: fio and plumb read them in the mix without
    // a complaint, and check only what the job itself wrote.
    let drop_in = DropIn::named("fio");
    for bin in [Path::new(FIO), &drop_in.bin()] {
        let work = TempDir::new().unwrap();
        let plain = ["--name=mix", "--bs=4k", "--size=1m", "--rw=write"];
        assert_eq!(run_named(bin, work.path(), &plain).code, 0);
        let out = run_named(
            bin,
            work.path(),
            &[
                "--name=mix",
                "--bs=4k",
                "--size=1m",
                "--rw=readwrite",
                "--verify=crc32c",
                "--verify_fatal=1",
                "--output-format=json",
            ],
        );
        assert_eq!(out.code, 0, "{bin:?}: {}", out.stderr);
        let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(json["jobs"][0]["error"], 0, "{bin:?}");
        // A job reading only checks every read: the file's last quarter, which the mix's
        // writes (about half the blocks, from the start) did not reach, fails.
        let out = run_named(
            bin,
            work.path(),
            &[
                "--name=mix",
                "--bs=4k",
                "--offset=768k",
                "--size=256k",
                "--rw=read",
                "--verify=crc32c",
                "--verify_fatal=1",
            ],
        );
        assert_ne!(
            out.code, 0,
            "{bin:?}: a read-only verify of unsealed blocks passed"
        );
    }
}
