//! The fio drop-in against Debian's fio 3.33 (/usr/bin/fio): the same job, run by fio and by
//! plumb through a symlink named `fio`, each in its own fresh temp directory, must do the
//! same I/O (the exact file/offset/length sequence for sequential jobs, the same set of
//! blocks for random jobs with the random map), print the same report structure, the same
//! JSON keys and types, and the same errors.
//!
//! I/O is compared with strace: each program first runs the job once untraced, which lays
//! its files out, then again under `strace -ff`, which now sees only the job's own I/O (the
//! files exist at full size, so neither program writes a layout). Per process, every
//! read/write on a file in the job's directory becomes (direction, offset, length) in order;
//! the sync engine's offsets are tracked through lseek, libaio's come from the io_submit
//! control blocks. Per file, the list of per-process sequences is sorted, so clones are
//! compared without depending on how their processes or threads are scheduled.
//!
//! Without /usr/bin/fio or strace these tests are skipped with a message, except under CI
//! (`CI=true`), where a missing peer is a failure.

mod common;
use common::fio_text::{fd_path, field, mask_normal, mask_numbers, shape_diff};
use common::peers::{fio_and_drop_in, installed, run_named as run_in, DropIn, Printed as Output};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

const PEER: &str = "/usr/bin/fio";
const STRACE: &str = "/usr/bin/strace";

/// fio and strace, or None (with a message) when one is missing outside CI.
fn peer() -> Option<&'static str> {
    installed(
        &[PEER, STRACE],
        "apt-get install fio strace",
        "the fio drop-in comparison",
    )
    .then_some(PEER)
}

/// Both programs on `args`, each in a fresh directory holding `files` (name, text).
fn run_both_with(files: &[(&str, &str)], args: &[&str]) -> Option<(Output, Output)> {
    peer()?;
    Some(fio_and_drop_in(files, args))
}

fn run_both(args: &[&str]) -> Option<(Output, Output)> {
    run_both_with(&[], args)
}

// ---------------------------------------------------------------------------------------
// I/O traces

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Dir {
    Read,
    Write,
    Sync,
}

/// (direction, offset, length); a sync has offset and length 0.
type IoOp = (Dir, u64, u64);

/// Per file (relative to the job's directory): one sequence per process, sorted.
type Trace = BTreeMap<String, Vec<Vec<IoOp>>>;

const TRACED: &str = "trace=pread64,pwrite64,read,write,lseek,preadv,pwritev,preadv2,pwritev2,io_submit,fsync,fdatasync";

/// The operations of one process's strace log on files under `dir`.
fn parse_trace(log: &str, dir: &str) -> BTreeMap<String, Vec<IoOp>> {
    let prefix = format!("{dir}/");
    let mut ops: BTreeMap<String, Vec<IoOp>> = BTreeMap::new();
    let mut pos: BTreeMap<String, u64> = BTreeMap::new();
    for line in log.lines() {
        let Some(open) = line.find('(') else { continue };
        let call = &line[..open];
        let args = &line[open + 1..];
        if call == "io_submit" {
            for cb in common::strace::iocbs(args, line) {
                let Some((_, path, _)) = fd_path(cb.fd) else {
                    continue;
                };
                let Some(rel) = path.strip_prefix(&prefix) else {
                    continue;
                };
                let d = if cb.op.contains("READ") {
                    Dir::Read
                } else {
                    Dir::Write
                };
                ops.entry(rel.to_string())
                    .or_default()
                    .push((d, cb.offset, cb.nbytes));
            }
            continue;
        }
        let Some((fd, path, rest)) = fd_path(args) else {
            continue;
        };
        let Some(rel) = path.strip_prefix(&prefix) else {
            continue;
        };
        // strace pads a short call's line before " = " (`fsync(7</f>)        = 0`).
        let Some((call_args, ret)) = rest.rsplit_once(" = ") else {
            continue;
        };
        let Some(call_args) = call_args.trim_end().strip_suffix(')') else {
            continue;
        };
        let ret: i64 = ret.split_whitespace().next().unwrap().parse().unwrap();
        assert!(ret >= 0, "failed I/O call: {line}");
        let key = format!("{fd}<{rel}>");
        let list: Vec<&str> = call_args.split(", ").collect();
        let num = |i: usize| -> u64 { list[list.len() - i].trim().parse().unwrap() };
        let dir_of = |c: &str| {
            if c.contains("read") {
                Dir::Read
            } else {
                Dir::Write
            }
        };
        let op = match call {
            "fsync" | "fdatasync" => (Dir::Sync, 0, 0),
            "lseek" => {
                pos.insert(key, ret as u64);
                continue;
            }
            "read" | "write" => {
                let at = pos.get(&key).copied().unwrap_or(0);
                pos.insert(key, at + ret as u64);
                (dir_of(call), at, num(1))
            }
            "pread64" | "pwrite64" => (dir_of(call), num(1), num(2)),
            "preadv" | "pwritev" | "preadv2" | "pwritev2" => {
                let len = field(call_args, "iov_len=").unwrap().parse().unwrap();
                let off = if call.ends_with('2') { num(2) } else { num(1) };
                (dir_of(call), off, len)
            }
            _ => continue,
        };
        ops.entry(rel.to_string()).or_default().push(op);
    }
    ops
}

/// Run `bin` on `args` once to lay the files out, then under strace; the trace and the
/// traced run's stdout.
fn traced(bin: &Path, args: &[&str]) -> (Trace, String) {
    let work = TempDir::new().unwrap();
    let logs = TempDir::new().unwrap();
    let prep = run_in(bin, work.path(), args);
    assert_eq!(prep.code, 0, "{bin:?} {args:?}: {}", prep.stderr);
    let mut cmd = vec![
        "-ff".to_string(),
        "-qq".into(),
        "-s8".into(),
        "-y".into(),
        "-e".into(),
        TRACED.into(),
        "-o".into(),
        logs.path().join("t").display().to_string(),
        bin.display().to_string(),
    ];
    cmd.extend(args.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let out = run_in(Path::new(STRACE), work.path(), &refs);
    assert_eq!(out.code, 0, "strace {bin:?} {args:?}: {}", out.stderr);
    let dir = work.path().canonicalize().unwrap().display().to_string();
    let mut per_file: Trace = BTreeMap::new();
    for entry in std::fs::read_dir(logs.path()).unwrap() {
        let log = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for (file, ops) in parse_trace(&log, &dir) {
            per_file.entry(file).or_default().push(ops);
        }
    }
    per_file.values_mut().for_each(|v| v.sort());
    (per_file, out.stdout)
}

/// Each `issued rwts:` line of a normal report, in order.
fn issued(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.contains("issued rwts:"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// (io_bytes, total_ios) of read and write for each job of a JSON report.
fn json_io(stdout: &str) -> Vec<[(u64, u64); 2]> {
    let doc: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            ["read", "write"].map(|d| {
                (
                    j[d]["io_bytes"].as_u64().unwrap(),
                    j[d]["total_ios"].as_u64().unwrap(),
                )
            })
        })
        .collect()
}

/// Both programs' traces and reports (normal, then JSON) on one job; None when skipped.
struct IoRun {
    trace: [Trace; 2],
    issued: [Vec<String>; 2],
    json: [Vec<[(u64, u64); 2]>; 2],
}

fn io_both(args: &[&str]) -> Option<IoRun> {
    let peer = peer()?;
    let drop_in = DropIn::named("fio");
    let (ta, na) = traced(Path::new(peer), args);
    let (tb, nb) = traced(&drop_in.bin(), args);
    let mut json_args = args.to_vec();
    json_args.push("--output-format=json");
    let w = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let ja = run_in(Path::new(peer), w.0.path(), &json_args);
    let jb = run_in(&drop_in.bin(), w.1.path(), &json_args);
    assert_eq!((ja.code, jb.code), (0, 0), "{}\n{}", ja.stderr, jb.stderr);
    Some(IoRun {
        trace: [ta, tb],
        issued: [issued(&na), issued(&nb)],
        json: [json_io(&ja.stdout), json_io(&jb.stdout)],
    })
}

/// The exact I/O of a deterministic (sequential, unmixed) job.
fn same_io(args: &[&str]) {
    let Some(r) = io_both(args) else { return };
    assert!(!r.trace[0].is_empty(), "fio did no traced I/O: {args:?}");
    assert_eq!(r.issued[0], r.issued[1], "issued rwts of {args:?}");
    assert_eq!(r.json[0], r.json[1], "io_bytes/total_ios of {args:?}");
    assert_eq!(r.trace[0], r.trace[1], "I/O sequence of {args:?}");
}

#[test]
fn sequential_reads_and_writes_over_files() {
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=32k",
        "--bs=4k",
        "--nrfiles=2",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=48k",
        "--bs=8k",
        "--nrfiles=3",
    ]);
    // 32k over 3 files: 10922 bytes each, whose tails shorter than a block stay untouched.
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--nrfiles=3",
    ]);
    same_io(&["--name=j", "--rw=read", "--size=10k", "--bs=4k"]);
}

#[test]
fn sequential_engines() {
    for engine in ["psync", "sync", "pvsync", "libaio"] {
        let e = format!("--ioengine={engine}");
        same_io(&[
            "--name=j",
            "--rw=read",
            "--size=32k",
            "--bs=4k",
            "--nrfiles=2",
            &e,
        ]);
        same_io(&["--name=j", "--rw=write", "--size=32k", "--bs=8k", &e]);
    }
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=32k",
        "--bs=4k",
        "--ioengine=libaio",
        "--iodepth=4",
    ]);
}

#[test]
fn clones_offsets_and_loops() {
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=32k",
        "--bs=4k",
        "--numjobs=2",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--numjobs=2",
        "--filename=shared",
        "--offset=8k",
        "--offset_increment=16k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=48k",
        "--bs=4k",
        "--nrfiles=3",
        "--offset=8k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--nrfiles=2",
        "--loops=2",
    ]);
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=32k",
        "--bs=8k",
        "--loops=2",
        "--nrfiles=3",
    ]);
}

#[test]
fn io_size_beyond_size() {
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=32k",
        "--io_size=80k",
        "--bs=4k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=24k",
        "--io_size=64k",
        "--bs=8k",
        "--nrfiles=2",
    ]);
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=32k",
        "--io_size=64k",
        "--bs=4k",
        "--nrfiles=3",
    ]);
}

#[test]
fn block_size_pairs_and_one_sided_mixes() {
    // rwmixread=100/0: the mix never draws, so the walk is exact.
    same_io(&[
        "--name=j",
        "--rw=rw",
        "--rwmixread=100",
        "--size=32k",
        "--bs=4k,8k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=rw",
        "--rwmixread=0",
        "--size=32k",
        "--bs=4k,8k",
        "--nrfiles=2",
    ]);
    same_io(&["--name=j", "--rw=write", "--size=32k", "--bs=2k,8k"]);
}

#[test]
fn syncs_every_n_writes() {
    // fio syncs when it fetches the request after the Nth write, so none after the last
    // write, and the sync takes the next file's turn.
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--fsync=3",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=16k",
        "--bs=4k",
        "--fsync=2",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=16k",
        "--bs=4k",
        "--fsync=1",
        "--nrfiles=2",
    ]);
    // Each round after the first starts with a sync when the writes so far divide by N:
    // fio forgets at a round's start that its last request was a sync (reset_io_counters
    // clears last_was_sync), so the sync of the round before is followed by another.
    same_io(&[
        "--name=j",
        "--rw=write",
        "--filename=a:b",
        "--size=64k",
        "--bs=16k",
        "--fsync=2",
        "--loops=2",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--size=16k",
        "--bs=4k",
        "--fsync=3",
        "--loops=3",
    ]);
}

/// A mixed job with fsync=N (the mix is drawn, so no exact sequence): in both programs a
/// sync comes exactly when the writes so far are a nonzero multiple of N and the request
/// before was no sync, so a read after the sync brings another one (fio's rule), and both
/// report the syncs they made.
#[test]
fn mixed_jobs_sync_again_after_a_read_at_a_multiple() {
    let args = ["--name=j", "--rw=rw", "--size=256k", "--bs=4k", "--fsync=2"];
    let Some(r) = io_both(&args) else { return };
    for (k, who) in ["fio", "plumb"].iter().enumerate() {
        let ops = &r.trace[k]["j.0.0"][0];
        let (mut writes, mut last_sync, mut syncs, mut again) = (0u64, false, 0u64, 0u64);
        for (i, op) in ops.iter().enumerate() {
            let due = writes > 0 && writes % 2 == 0 && !last_sync;
            assert_eq!(op.0 == Dir::Sync, due, "{who}: request {i} {op:?}");
            if op.0 == Dir::Sync && i > 0 && ops[i - 1].0 == Dir::Read {
                again += 1;
            }
            syncs += u64::from(op.0 == Dir::Sync);
            writes += u64::from(op.0 == Dir::Write);
            last_sync = op.0 == Dir::Sync;
        }
        assert!(again > 0, "{who}: no read was followed by a sync");
        let said = format!(",{syncs} short=");
        assert!(r.issued[k][0].contains(&said), "{who}: {:?}", r.issued[k]);
    }
}

/// For a job whose read share is drawn at random: each (file, direction) walks its region
/// in order from the start in both programs, and both stop at the byte limit.
#[test]
fn mixed_sequential_walks_each_direction_in_order() {
    let args = [
        "--name=j",
        "--rw=rw",
        "--rwmixread=70",
        "--size=64k",
        "--bs=4k,8k",
        "--nrfiles=2",
    ];
    let Some(r) = io_both(&args) else { return };
    for (who, trace) in ["fio", "plumb"].iter().zip(&r.trace) {
        let mut bytes = 0;
        for (file, seqs) in trace {
            assert_eq!(seqs.len(), 1, "{who} {file}");
            for (dir, bs) in [(Dir::Read, 4096), (Dir::Write, 8192)] {
                let offs: Vec<u64> = seqs[0]
                    .iter()
                    .filter(|o| o.0 == dir)
                    .map(|o| {
                        assert_eq!(o.2, bs, "{who} {file} {o:?}");
                        o.1
                    })
                    .collect();
                let want: Vec<u64> = (0..offs.len() as u64).map(|i| i * bs).collect();
                assert_eq!(offs, want, "{who} {file} {dir:?}");
                bytes += offs.len() as u64 * bs;
            }
        }
        assert!(
            (64 << 10..(64 << 10) + 8192).contains(&bytes),
            "{who}: {bytes}"
        );
    }
}

/// Random jobs with the random map: the same count, and each file's blocks each exactly
/// once per pass in both (fio's generator differs from plumb's, so not in the same order).
fn same_random_blocks(args: &[&str], passes: usize) {
    let Some(r) = io_both(args) else { return };
    assert_eq!(r.issued[0], r.issued[1], "issued rwts of {args:?}");
    assert_eq!(r.json[0], r.json[1], "io_bytes/total_ios of {args:?}");
    let sets = |t: &Trace| -> BTreeMap<String, BTreeMap<(u64, u64), usize>> {
        t.iter()
            .map(|(f, seqs)| {
                let mut m = BTreeMap::new();
                for o in seqs.iter().flatten() {
                    *m.entry((o.1, o.2)).or_insert(0) += 1;
                }
                (f.clone(), m)
            })
            .collect()
    };
    let (a, b) = (sets(&r.trace[0]), sets(&r.trace[1]));
    assert_eq!(a, b, "blocks of {args:?}");
    for m in a.values() {
        assert!(m.values().all(|&n| n == passes), "{args:?}: {m:?}");
    }
}

#[test]
fn random_map_blocks() {
    same_random_blocks(
        &[
            "--name=j",
            "--rw=randread",
            "--size=64k",
            "--bs=4k",
            "--randseed=7",
        ],
        1,
    );
    same_random_blocks(
        &[
            "--name=j",
            "--rw=randwrite",
            "--size=64k",
            "--bs=4k",
            "--nrfiles=2",
            "--randseed=3",
        ],
        1,
    );
    same_random_blocks(
        &[
            "--name=j",
            "--rw=randread",
            "--size=32k",
            "--bs=8k",
            "--loops=2",
        ],
        2,
    );
}

#[test]
fn norandommap_counts() {
    let args = [
        "--name=j",
        "--rw=randread",
        "--size=64k",
        "--bs=4k",
        "--norandommap",
        "--randseed=5",
    ];
    let Some(r) = io_both(&args) else { return };
    assert_eq!(r.issued[0], r.issued[1]);
    assert_eq!(r.json[0], r.json[1]);
    let count = |t: &Trace| t.values().flatten().map(Vec::len).sum::<usize>();
    assert_eq!(count(&r.trace[0]), count(&r.trace[1]));
}

// ---------------------------------------------------------------------------------------
// Normal output

fn same_normal(args: &[&str]) {
    let Some((theirs, ours)) = run_both(args) else {
        return;
    };
    assert_eq!(theirs.code, 0, "fio {args:?}: {}", theirs.stderr);
    assert_eq!(ours.code, 0, "plumb {args:?}: {}", ours.stderr);
    assert_eq!(ours.stderr, "", "{args:?}");
    let (a, b) = (mask_normal(&theirs.stdout), mask_normal(&ours.stdout));
    assert_eq!(
        a, b,
        "{args:?}\n--- fio:\n{}\n--- plumb:\n{}",
        theirs.stdout, ours.stdout
    );
}

#[test]
fn mask_keeps_structure_and_drops_figures() {
    assert_eq!(
        mask_numbers("  read: IOPS=16.0k, BW=62.5MiB/s (65.5MB/s)(64.0KiB/1msec)"),
        "  read: IOPS=N, BW=N/s (N/s)(N/Nmsec)"
    );
    assert_eq!(
        mask_numbers("  cpu          : usr=0.00%, ctx=2"),
        "  cpu          : usr=N%, ctx=N"
    );
    assert_eq!(mask_numbers("bs=(R) 4096B-4096B"), "bs=(R) N-N");
    let text = "x\n  lat (usec)   : 2=6.25%\n     |  1.00th=[  410]\n\nDisk stats (read/write):\n  vda: ios=0/0\n";
    assert_eq!(mask_normal(text), "x\n");
}

#[test]
fn normal_single_job() {
    same_normal(&["--name=one", "--rw=read", "--size=64k", "--bs=4k"]);
    same_normal(&[
        "--name=one",
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--randseed=1",
    ]);
}

#[test]
fn normal_clones_with_and_without_group_reporting() {
    same_normal(&[
        "--name=c",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--numjobs=2",
    ]);
    same_normal(&[
        "--name=c",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--numjobs=2",
        "--group_reporting",
    ]);
}

#[test]
fn normal_two_groups() {
    same_normal(&[
        "--name=a",
        "--rw=read",
        "--size=32k",
        "--bs=4k",
        "--name=b",
        "--stonewall",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
    ]);
}

// Not compared yet: psync with iodepth=4, where fio prints `note: both iodepth >= 1 and
// synchronous I/O engine are selected, queue depth will be capped at 1` on stdout after the
// layout line and plumb prints nothing; and libaio at iodepth=4. plumb does not time submission apart from
// completion, so it prints one ` lat` line with `lat percentiles` where fio prints `slat`,
// `clat`, ` lat` and `clat percentiles` (JSON: percentiles under lat_ns, not clat_ns).
#[test]
fn normal_fsync_block() {
    same_normal(&[
        "--name=s",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--fsync=4",
    ]);
    same_normal(&[
        "--name=s",
        "--rw=randwrite",
        "--size=32k",
        "--bs=4k",
        "--fsync=1",
    ]);
}

// ---------------------------------------------------------------------------------------
// JSON and terse

fn same_json(args: &[&str]) {
    let mut full = args.to_vec();
    full.push("--output-format=json");
    let Some((theirs, ours)) = run_both(&full) else {
        return;
    };
    assert_eq!(
        (theirs.code, ours.code),
        (0, 0),
        "{}\n{}",
        theirs.stderr,
        ours.stderr
    );
    assert_eq!(ours.stderr, "");
    let a: Value = serde_json::from_str(&theirs.stdout).unwrap();
    let b: Value = serde_json::from_str(&ours.stdout)
        .unwrap_or_else(|e| panic!("plumb's JSON ({e}): {}", ours.stdout));
    let mut diffs = Vec::new();
    shape_diff("", &a, &b, &mut diffs);
    assert!(diffs.is_empty(), "{args:?}:\n{}", diffs.join("\n"));
    assert_eq!(a.get("global options"), b.get("global options"));
    let opts = |v: &Value| -> Vec<Value> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["job options"].clone())
            .collect()
    };
    assert_eq!(opts(&a), opts(&b), "{args:?}");
}

#[test]
fn json_keys_types_and_options() {
    same_json(&["--name=j", "--rw=read", "--size=32k", "--bs=4k"]);
    same_json(&[
        "--bs=8k",
        "--name=j",
        "--rw=randrw",
        "--size=64k",
        "--numjobs=2",
        "--group_reporting",
    ]);
    same_json(&[
        "--name=s",
        "--rw=write",
        "--size=32k",
        "--bs=4k",
        "--fsync=2",
    ]);
}

#[test]
fn terse_field_counts() {
    for extra in [&[][..], &["--numjobs=2"][..], &["--terse-version=5"][..]] {
        let mut args = vec![
            "--name=t",
            "--rw=randrw",
            "--size=32k",
            "--bs=4k",
            "--minimal",
        ];
        args.extend_from_slice(extra);
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        assert_eq!(
            (theirs.code, ours.code),
            (0, 0),
            "{}\n{}",
            theirs.stderr,
            ours.stderr
        );
        let fields = |s: &str| -> Vec<usize> { s.lines().map(|l| l.split(';').count()).collect() };
        assert_eq!(fields(&theirs.stdout), fields(&ours.stdout), "{args:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Errors

fn same_error_with(files: &[(&str, &str)], args: &[&str]) {
    let Some((theirs, ours)) = run_both_with(files, args) else {
        return;
    };
    assert_ne!(theirs.code, 0, "fio accepted {args:?}");
    assert_eq!(theirs, ours, "{args:?}");
}

#[test]
fn errors_match() {
    same_error_with(&[], &["--name=x", "--foo=1"]);
    same_error_with(&[], &["--name=x", "--rw=readx"]);
    same_error_with(&[], &["nope.fio"]);
    same_error_with(&[("bad.fio", "[x]\nfoo=1\nsize=1M\n")], &["bad.fio"]);
    same_error_with(&[("bad.fio", "[x]\nrw=readx\nsize=1M\n")], &["bad.fio"]);
    // `--direct` takes the next argument as its value, as getopt gives it.
    same_error_with(&[], &["--name=x", "--direct", "--size=1M"]);
    same_error_with(&[], &["--name=x", "--bs=", "--direct", "--size=1M"]);
    same_error_with(&[], &["--name=x", "--size=1M", "--bs"]);
}

#[test]
fn unified_rw_reporting_mixed_sums_the_directions_as_fio_does() {
    let mixed = [
        "--name=m",
        "--rw=randrw",
        "--size=64k",
        "--bs=4k",
        "--unified_rw_reporting=mixed",
    ];
    same_normal(&mixed);
    same_json(&mixed);
    let mut grouped = mixed.to_vec();
    grouped.extend(["--numjobs=2", "--group_reporting"]);
    same_normal(&grouped);
    same_json(&grouped);
    // The sum lands in the read slot, as fio's: `issued rwts` and the terse read fields.
    let Some((theirs, ours)) = run_both(&mixed) else {
        return;
    };
    assert_eq!(issued(&ours.stdout), issued(&theirs.stdout));
    assert!(ours.stdout.contains("  mixed: IOPS="), "{}", ours.stdout);
    assert!(ours.stdout.contains("\n  MIXED: bw="), "{}", ours.stdout);
    // fio prints a mixed unit's terse line with the read fields only.
    terse_fields_match(&mixed);
}

/// The terse lines of fio and plumb on `args` (plus `--minimal`) have as many fields each.
fn terse_fields_match(args: &[&str]) {
    let mut args = args.to_vec();
    args.push("--minimal");
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    assert_eq!((theirs.code, ours.code), (0, 0), "{}", ours.stderr);
    let fields = |s: &str| -> Vec<usize> { s.lines().map(|l| l.split(';').count()).collect() };
    assert_eq!(fields(&theirs.stdout), fields(&ours.stdout), "{args:?}");
}

/// The directions' I/O counts added, and the `mixed` object's count and bytes, of a JSON
/// report (the split between reads and writes is each program's own random draw).
fn mixed_counts(stdout: &str) -> Vec<[u64; 3]> {
    let v: Value = serde_json::from_str(stdout).unwrap();
    let n = |j: &Value, d: &str, k: &str| j[d][k].as_u64().unwrap_or(u64::MAX);
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            [
                n(j, "read", "total_ios") + n(j, "write", "total_ios"),
                n(j, "mixed", "total_ios"),
                n(j, "mixed", "io_bytes"),
            ]
        })
        .collect()
}

#[test]
fn unified_rw_reporting_both_adds_the_sum_after_the_directions() {
    for both in ["--unified_rw_reporting=both", "--unified_rw_reporting=2"] {
        let job = ["--name=b", "--rw=randrw", "--size=64k", "--bs=4k", both];
        same_normal(&job);
        same_json(&job);
        terse_fields_match(&job);
        let mut grouped = job.to_vec();
        grouped.extend(["--numjobs=2", "--group_reporting"]);
        same_normal(&grouped);
        same_json(&grouped);
        terse_fields_match(&grouped);
        // Every request once, in its direction and in the sum (the random map makes the
        // count exact: 16 blocks of 4 KiB a job).
        let mut json = grouped.clone();
        json.push("--output-format=json");
        let Some((theirs, ours)) = run_both(&json) else {
            return;
        };
        let (a, b) = (mixed_counts(&theirs.stdout), mixed_counts(&ours.stdout));
        assert_eq!(a, b, "{json:?}");
        assert_eq!(b, [[32, 32, 2 * 65536]]);
        // fio 3.33 prints the sum's IOPS, bandwidth and size as 0 (fio #1844), and its
        // group line `MIXED` after the directions'.
        let Some((theirs, ours)) = run_both(&job) else {
            return;
        };
        for out in [&theirs.stdout, &ours.stdout] {
            assert!(out.contains("\n  mixed: IOPS=0, BW=0 (0)(0B/"), "{out}");
            assert!(
                out.contains("\n  WRITE: bw=") && out.contains("\n  MIXED: bw="),
                "{out}"
            );
        }
    }
    // fio reads the word before a `:`; a word it does not know is its own error.
    same_normal(&[
        "--name=b",
        "--rw=randrw",
        "--size=64k",
        "--unified_rw_reporting=both:1",
    ]);
    same_error_with(
        &[],
        &[
            "--name=b",
            "--rw=randrw",
            "--size=64k",
            "--unified_rw_reporting=3",
        ],
    );
    same_error_with(
        &[],
        &["--name=b", "--size=64k", "--unified_rw_reporting=Both"],
    );
}

// ---------------------------------------------------------------------------------------
// Measurement switches and number formats

/// The latency lines of a normal report (series, percentile titles, distribution), each
/// cut to its title: which series a report shows, whatever the figures.
fn latency_lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| {
            ["slat", "clat", "lat (", "lat percentiles"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| {
            // The distribution takes one line per unit its figures span: one entry.
            if l.starts_with("lat (") && l.contains(")   :") {
                "lat distribution".to_string()
            } else {
                l.split([':', '(']).next().unwrap().trim_end().to_string()
            }
        })
        .collect();
    out.dedup();
    out
}

/// fio's measurement switches leave the same lines out of both reports, and the rest of
/// the report keeps its structure; the JSON keeps its keys, with empty series.
#[test]
fn measurement_switches_leave_out_what_fio_leaves_out() {
    let base = [
        "--name=m",
        "--rw=randread",
        "--size=256k",
        "--bs=4k",
        "--randseed=3",
    ];
    let libaio = ["--ioengine=libaio", "--iodepth=4", "--direct=1"];
    let cases: [(&[&str], &[&str]); 6] = [
        (&["--gtod_reduce=1"], &[]),
        (&["--gtod_reduce=1"], &libaio),
        (&["--disable_clat=1"], &[]),
        (&["--disable_lat=1"], &[]),
        (&["--disable_slat=1"], &libaio),
        (
            &[
                "--gtod_reduce=1",
                "--clat_percentiles=1",
                "--disable_clat=0",
            ],
            &[],
        ),
    ];
    for (switch, engine) in cases {
        let args: Vec<&str> = base.iter().chain(engine).chain(switch).copied().collect();
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        assert_eq!(
            (theirs.code, ours.code),
            (0, 0),
            "{args:?}: {}",
            ours.stderr
        );
        assert_eq!(ours.stderr, "", "{args:?}");
        assert_eq!(
            latency_lines(&ours.stdout),
            latency_lines(&theirs.stdout),
            "{args:?}\n--- fio:\n{}\n--- plumb:\n{}",
            theirs.stdout,
            ours.stdout
        );
        assert_eq!(
            mask_normal(&ours.stdout),
            mask_normal(&theirs.stdout),
            "{args:?}"
        );
    }
    // gtod_reduce empties every series in the JSON document too.
    let args = [&base[..], &["--gtod_reduce=1", "--output-format=json"]].concat();
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    for out in [&theirs, &ours] {
        let v: Value = serde_json::from_str(&out.stdout).unwrap();
        let read = &v["jobs"][0]["read"];
        for series in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(read[series]["N"], 0, "{series}: {}", out.stdout);
            assert!(read[series].get("percentile").is_none(), "{series}");
        }
        assert_eq!(read["total_ios"], 64);
    }
}

/// `stats=0` runs the job and leaves it out of the report, as a preconditioning job is
/// meant to be; its group's status line stays, empty.
#[test]
fn stats_off_hides_a_job_but_runs_it() {
    let job = "[global]\nfilename=data\nsize=128k\nbs=4k\n[pre]\nrw=write\nstats=0\n[main]\nstonewall\nrw=read\n";
    let Some((theirs, ours)) = run_both_with(&[("s.fio", job)], &["s.fio"]) else {
        return;
    };
    assert_eq!((theirs.code, ours.code), (0, 0), "{}", ours.stderr);
    assert_eq!(mask_normal(&ours.stdout), mask_normal(&theirs.stdout));
    for out in [&theirs.stdout, &ours.stdout] {
        assert!(!out.contains("pre: (groupid"), "{out}");
        assert!(out.contains("main: (groupid=1"), "{out}");
        assert!(
            out.contains("Run status group 0 (all jobs):\n\nRun status group 1"),
            "{out}"
        );
    }
}

/// significant_figures and unit_base change the figures fio prints; the deterministic ones
/// (the header's sizes, the bytes moved) must read the same.
#[test]
fn significant_figures_and_unit_base_print_as_fio_prints() {
    for extra in [
        &["--significant_figures=6"][..],
        &["--significant_figures=2", "--bs=1536k"],
        &["--unit_base=1"],
        &["--unit_base=8", "--significant_figures=10"],
    ] {
        let args = [
            &["--name=f", "--rw=read", "--size=3m", "--bs=4k"][..],
            extra,
        ]
        .concat();
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        assert_eq!(
            (theirs.code, ours.code),
            (0, 0),
            "{extra:?}: {}",
            ours.stderr
        );
        let fixed = |out: &str| -> Vec<String> {
            out.lines()
                .filter_map(|l| {
                    if l.starts_with("f: (g=0)") {
                        Some(l.to_string())
                    } else if l.trim_start().starts_with("READ:") {
                        // io=... (...), run=: the bytes are the job's, not the disk's.
                        l.find("io=")
                            .map(|i| l[i..l.find(", run=").unwrap()].to_string())
                    } else if l.starts_with("  read: IOPS=") {
                        // The bandwidth unit (bytes or bits) and the bytes moved.
                        let unit = l.contains("bit/s");
                        Some(format!(
                            "bits {unit} {}",
                            &l[l.rfind('(').unwrap()..l.rfind('/').unwrap()]
                        ))
                    } else {
                        None
                    }
                })
                .collect()
        };
        assert_eq!(
            fixed(&ours.stdout),
            fixed(&theirs.stdout),
            "{extra:?}\n{}",
            theirs.stdout
        );
        assert_eq!(
            mask_normal(&ours.stdout),
            mask_normal(&theirs.stdout),
            "{extra:?}"
        );
    }
}

/// The per-request logs would lose the entries a switch turns off: refused, not written
/// differently.
#[test]
fn a_switch_that_would_empty_a_per_request_log_is_refused() {
    let d = TempDir::new().unwrap();
    let o = run_in(
        &DropIn::named("fio").bin(),
        d.path(),
        &[
            "--name=l",
            "--rw=read",
            "--size=64k",
            "--write_lat_log=l",
            "--disable_clat=1",
        ],
    );
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "plumb: fio option 'disable_clat' (value '1') is not supported yet: with the per-request log it empties (fio leaves those entries out; plumb does not yet)\n"
    );
    assert!(!d.path().join("l").exists());
}

/// Jobs that share a file: the first that needs it lays it out and says so; a later job
/// says so only when it needs the file larger.
#[test]
fn a_shared_file_is_laid_out_once_unless_a_later_job_needs_more() {
    for job in [
        "[global]\nfilename=data\nsize=128k\nbs=4k\n[a]\nrw=read\n[b]\nrw=read\n",
        "[global]\nfilename=data\nbs=4k\n[a]\nrw=read\nsize=64k\n[b]\nstonewall\nrw=read\nsize=128k\n",
        "[global]\nfilename=data\nbs=4k\n[a]\nrw=read\nsize=128k\n[b]\nstonewall\nrw=read\nsize=64k\n",
    ] {
        let Some((theirs, ours)) = run_both_with(&[("j.fio", job)], &["j.fio"]) else {
            return;
        };
        assert_eq!((theirs.code, ours.code), (0, 0), "{}", ours.stderr);
        let laying = |out: &str| -> Vec<String> {
            out.lines()
                .filter(|l| l.contains("Laying out"))
                .map(String::from)
                .collect()
        };
        assert_eq!(laying(&ours.stdout), laying(&theirs.stdout), "{job}");
    }
}

/// The CPU masks a run's tasks are pinned to, from strace: mask text -> calls.
fn affinities(bin: &Path, args: &[&str]) -> BTreeMap<String, usize> {
    let d = TempDir::new().unwrap();
    let out = Command::new(STRACE)
        .args(["-f", "-qq", "-e", "trace=sched_setaffinity", "-o"])
        .arg(d.path().join("trace"))
        .arg(bin)
        .args(args)
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(d.path().join("trace")).unwrap();
    let mut masks = BTreeMap::new();
    for line in log.lines().filter(|l| l.contains("sched_setaffinity(")) {
        let mask = &line[line.find('[').unwrap()..=line.find(']').unwrap()];
        *masks.entry(mask.to_string()).or_insert(0) += 1;
    }
    masks
}

/// cpus_allowed_policy=split: job n of the run gets the ((n-1) mod count)th CPU of the set,
/// the CPUs fio's job tasks are pinned to.
#[test]
fn cpus_allowed_policy_split_gives_each_job_a_cpu_of_the_set() {
    let Some(peer) = peer() else {
        return;
    };
    if common::peers::under_ci() && std::thread::available_parallelism().unwrap().get() < 2 {
        panic!("the split test needs 2 CPUs");
    }
    let args = [
        "--name=c",
        "--rw=read",
        "--size=64k",
        "--bs=4k",
        "--numjobs=3",
        "--cpus_allowed=0-1",
        "--cpus_allowed_policy=split",
        "--output=/dev/null",
    ];
    let ours = affinities(&DropIn::named("fio").bin(), &args);
    // Three jobs on CPUs 0, 1, 0: one worker thread each.
    assert_eq!(
        ours,
        BTreeMap::from([("[0]".to_string(), 2), ("[1]".to_string(), 1)])
    );
    // fio pins more tasks than its jobs, but to the same CPUs.
    let theirs = affinities(Path::new(peer), &args);
    assert_eq!(
        theirs.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>()
    );
    // shared (the default): every job on the whole set.
    let shared = affinities(
        &DropIn::named("fio").bin(),
        &[&args[..6], &["--output=/dev/null"]].concat(),
    );
    assert_eq!(shared, BTreeMap::from([("[0 1]".to_string(), 3)]));
}

/// bwavgtime/iopsavgtime set the sample windows: a 2 s time-based job makes about 2 s /
/// window samples of each kind in both tools (fio's helper thread may miss the last one).
#[test]
fn sample_windows_follow_bwavgtime() {
    for (ms, most) in [(250u64, 8u64), (1000, 2)] {
        let args = [
            "--name=w".to_string(),
            "--rw=read".into(),
            "--size=256k".into(),
            "--bs=4k".into(),
            "--time_based".into(),
            "--runtime=2".into(),
            format!("--bwavgtime={ms}"),
            format!("--iopsavgtime={ms}"),
            "--output-format=json".into(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        for (who, out) in [("fio", &theirs), ("plumb", &ours)] {
            assert_eq!(out.code, 0, "{who}: {}", out.stderr);
            let v: Value = serde_json::from_str(&out.stdout).unwrap();
            let read = &v["jobs"][0]["read"];
            for key in ["bw_samples", "iops_samples"] {
                let n = read[key].as_u64().unwrap();
                assert!((most - 1..=most).contains(&n), "{who} {ms} ms: {key}={n}");
            }
        }
    }
    let d = TempDir::new().unwrap();
    let o = run_in(
        &DropIn::named("fio").bin(),
        d.path(),
        &["--name=w", "--rw=read", "--size=64k", "--bwavgtime=250"],
    );
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "plumb: fio option 'bwavgtime' (value '250') is not supported yet: bwavgtime and iopsavgtime must be equal (plumb samples both from the same windows)\n"
    );
}

/// Options at the values that describe what plumb does anyway (fio's defaults) run; their
/// other values are refused with one line naming the value.
#[test]
fn defaults_of_unsupported_modes_run_and_other_values_are_refused() {
    let base = ["--name=d", "--rw=read", "--size=64k", "--bs=4k"];
    let plain = [
        &base[..],
        &[
            "--mem=mmap",
            "--io_submit_mode=inline",
            "--continue_on_error=none",
        ],
    ]
    .concat();
    let Some((theirs, ours)) = run_both(&plain) else {
        return;
    };
    assert_eq!((theirs.code, ours.code), (0, 0), "{}", ours.stderr);
    assert_eq!(mask_normal(&ours.stdout), mask_normal(&theirs.stdout));
    let d = TempDir::new().unwrap();
    for (opt, line) in [
        ("--iomem=shm", "plumb: fio option 'mem' (value 'shm') is not supported yet: plumb's I/O buffers come from the heap (malloc) or an anonymous mapping (mmap, mmaphuge)\n"),
        ("--mem=mmap:/tmp/plumb-buffers", "plumb: fio option 'mem' (value 'mmap:/tmp/plumb-buffers') is not supported yet: plumb maps anonymous memory only (mem=mmap or mem=mmaphuge without a file)\n"),
        ("--io_submit_mode=offload", "plumb: fio option 'io_submit_mode' (value 'offload') is not supported yet: plumb submits from the job's own thread (fio's inline)\n"),
        ("--error_dump=1", "plumb: fio option 'error_dump' (value '1') is not supported yet: the errors a job goes on after are counted, not printed\n"),
    ] {
        let o = run_in(&DropIn::named("fio").bin(), d.path(), &[&base[..], &[opt]].concat());
        assert_eq!((o.code, o.stderr.as_str()), (1, line), "{opt}");
    }
}

// ---------------------------------------------------------------------------------------
// Values read as fio reads them: kb_base in force, directory, filesize

/// Both programs on a JSON run of `args` with `files`: the same (io_bytes, total_ios) and
/// the same `job options`.
fn same_json_io_with(files: &[(&str, &str)], args: &[&str]) {
    let mut full = args.to_vec();
    full.push("--output-format=json");
    let Some((theirs, ours)) = run_both_with(files, &full) else {
        return;
    };
    assert_eq!(
        (theirs.code, ours.code),
        (0, 0),
        "{args:?}\n{}\n{}",
        theirs.stderr,
        ours.stderr
    );
    assert_eq!(
        json_io(&theirs.stdout),
        json_io(&ours.stdout),
        "io_bytes/total_ios of {args:?} {files:?}"
    );
    let opts = |s: &str| -> Vec<Value> {
        let v: Value = serde_json::from_str(s).unwrap();
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["job options"].clone())
            .collect()
    };
    assert_eq!(opts(&theirs.stdout), opts(&ours.stdout), "{args:?}");
}

#[test]
fn kb_base_applies_to_the_sizes_parsed_after_it() {
    // On the command line in the order given; bs's default is 4096 bytes whatever kb_base
    // says (64000 bytes of size: 15 requests of 4096).
    same_io(&["--name=j", "--rw=read", "--kb_base=1000", "--size=64k"]);
    same_io(&[
        "--name=j",
        "--rw=read",
        "--size=64k",
        "--kb_base=1000",
        "--bs=4k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--kb_base=1000",
        "--size=64k",
    ]);
    same_io(&[
        "--kb_base=1000",
        "--name=j",
        "--rw=read",
        "--size=64k",
        "--bs=4k",
    ]);
    // In a job file a section's own kb_base comes first; [global] values keep the global
    // section's.
    for text in [
        "[j]\nrw=read\nsize=64k\nbs=4k\nkb_base=1000\n",
        "[j]\nrw=read\nsize=64k\nkb_base=1000\n",
        "[global]\nsize=64k\nbs=4k\n[j]\nrw=read\nkb_base=1000\n",
        "[global]\nkb_base=1000\n[j]\nrw=read\nsize=64k\nbs=4k\n",
    ] {
        same_json_io_with(&[("k.fio", text)], &["k.fio"]);
    }
}

#[test]
fn a_directory_that_is_not_one_fails_as_in_fio() {
    same_error_with(&[], &["--name=x", "--size=64k", "--directory=nope/d"]);
    same_error_with(&[], &["--name=x", "--size=64k", "--directory=.:nope"]);
    // Checked as the option is parsed, so also where a later value would replace it; in
    // the global set there is no job to record the error on stdout.
    same_error_with(&[], &["--directory=nope", "--name=x", "--size=64k"]);
    same_error_with(
        &[],
        &[
            "--name=x",
            "--directory=nope",
            "--directory=.",
            "--size=64k",
        ],
    );
    same_error_with(&[], &["--name=x", "--size=64k", "--directory=.::"]);
    same_error_with(&[("f", "")], &["--name=x", "--size=64k", "--directory=f"]);
    same_error_with(&[("d.fio", "[x]\nsize=64k\ndirectory=nope\n")], &["d.fio"]);
    same_error_with(
        &[("d.fio", "[global]\ndirectory=nope\n[x]\nsize=64k\n")],
        &["d.fio"],
    );
    // --parse-only looks at no directory, as fio's dry run.
    let Some((theirs, ours)) = run_both_with(
        &[("d.fio", "[x]\nsize=64k\ndirectory=nope\n")],
        &["--parse-only", "d.fio"],
    ) else {
        return;
    };
    assert_eq!(theirs.code, 0);
    assert_eq!(theirs, ours);
}

#[test]
fn a_fixed_filesize_holds_the_offset_and_size_caps_the_bytes() {
    same_io(&[
        "--name=j",
        "--rw=write",
        "--filesize=32k",
        "--nrfiles=3",
        "--size=64k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=read",
        "--filesize=32k",
        "--nrfiles=3",
        "--offset=8k",
    ]);
    same_io(&[
        "--name=j",
        "--rw=write",
        "--filesize=32k",
        "--nrfiles=2",
        "--size=1m",
    ]);
}

/// The sizes of the files `a.0.*` in `dir`, by file number.
fn sizes_of(dir: &Path) -> Vec<u64> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("a.0."))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, n)| n).collect()
}

#[test]
fn a_filesize_range_draws_each_file_s_size_within_it() {
    let Some(peer) = peer() else { return };
    let drop_in = DropIn::named("fio");
    let args = [
        "--name=a",
        "--rw=write",
        "--filesize=100k-300k",
        "--nrfiles=3",
        "--output-format=json",
    ];
    // fio draws from its own generator, plumb from its own: the same rules, not the same
    // sizes. Each lies in [100k, 300k), is a whole number of blocks, and is written whole;
    // a second run keeps files already within the range.
    let mut drawn = Vec::new();
    for bin in [Path::new(peer), drop_in.bin().as_path()] {
        let d = TempDir::new().unwrap();
        let first = run_in(bin, d.path(), &args);
        assert_eq!(first.code, 0, "{bin:?}: {}", first.stderr);
        let sizes = sizes_of(d.path());
        assert_eq!(sizes.len(), 3, "{bin:?}");
        for &n in &sizes {
            assert!(
                (102_400..307_200).contains(&n) && n % 4096 == 0,
                "{bin:?}: {sizes:?}"
            );
        }
        let written: u64 = json_io(&first.stdout).iter().map(|j| j[1].0).sum();
        assert_eq!(written, sizes.iter().sum::<u64>(), "{bin:?}");
        let again = run_in(bin, d.path(), &args);
        assert_eq!(again.code, 0, "{bin:?}: {}", again.stderr);
        assert_eq!(sizes_of(d.path()), sizes, "{bin:?}: a second run");
        drawn.push(sizes);
    }
    // plumb's draws repeat with the job's seed (randrepeat=1).
    let d = TempDir::new().unwrap();
    assert_eq!(run_in(&drop_in.bin(), d.path(), &args).code, 0);
    assert_eq!(sizes_of(d.path()), drawn[1]);
    // A range fio would read as garbage (its high end below its low one, or none) is
    // refused by plumb alone: fio would write gigabytes.
    for bad in ["--filesize=300k-100k", "--filesize=100k-"] {
        let d = TempDir::new().unwrap();
        let o = run_in(&drop_in.bin(), d.path(), &["--name=a", "--nrfiles=3", bad]);
        assert_eq!(o.code, 1, "{bad}");
        assert_eq!(o.stderr.lines().count(), 1, "{bad}: {}", o.stderr);
        assert!(o.stderr.contains("filesize"), "{}", o.stderr);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "{bad}");
    }
}

#[test]
fn a_block_size_below_its_minimum_says_so_first() {
    same_error_with(&[], &["--name=x", "--size=64k", "--bs=0"]);
    same_error_with(&[], &["--name=x", "--size=64k", "--ba=0"]);
}

#[test]
fn numjobs_0_is_refused_in_one_line() {
    // plumb alone: fio 3.33 fails on it, or (with a job after it) forks thousands of
    // processes and crashes.
    let drop_in = DropIn::named("fio");
    let d = TempDir::new().unwrap();
    let o = run_in(
        &drop_in.bin(),
        d.path(),
        &[
            "--name=x",
            "--size=64k",
            "--numjobs=0",
            "--name=y",
            "--size=64k",
        ],
    );
    assert_eq!(o.code, 1);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains("numjobs=0"), "{}", o.stderr);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
