//! fio's trim modes (`rw=trim`, `randtrim`, `trimwrite`, `randtrimwrite`) against Debian's
//! fio 3.33, in the style of fio_differential.rs: the same job run by fio and by plumb
//! through a symlink named `fio`, each in its own fresh directory, must make the same trim
//! and write calls and print reports of the same structure.
//!
//! How fio 3.33 trims (engines/*.c, io_u.c, os/os-linux.h): every engine but falloc and null
//! calls `ioctl(BLKDISCARD)` (a regular file answers ENOTTY and the job fails at its first
//! trim); `falloc` punches holes, `fallocate(FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE)`, and
//! writes are `fallocate(0)` there. So regular files are compared on falloc, the BLKDISCARD
//! engines on a loop device (root only; skipped elsewhere, a failure under CI) and, on a
//! regular file, by the one failing trim.
//!
//! Traces: each program runs the job once untraced (which lays the files out), then again
//! under `strace -ff`; per process, every trim or write on the job's files becomes (call,
//! offset, length) in order. Without /usr/bin/fio or strace the comparisons are skipped with
//! a message, except under CI (`CI=true`); plumb's own checks run regardless.

mod common;
use common::fio_text::{fd_path, mask_normal, shape_diff};
use common::peers::{installed, run_named as run_in, under_ci, DropIn, Printed as Output};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

/// plumb under its own name, in `dir`.
fn plumb_fio(dir: &Path, args: &[&str]) -> Output {
    let out = common::plumb()
        .arg("fio")
        .arg("--plumb-findings=off")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// ---------------------------------------------------------------------------------------
// Traces

/// A call that changes a file: a trim (BLKDISCARD or a punched hole), a write, or a
/// fallocate in another mode.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Call {
    Discard,
    /// fallocate with its mode as strace prints it (`0`, `FALLOC_FL_KEEP_SIZE|...`).
    Fallocate(String),
    /// write, pwrite64 or an io_submit'ted IOCB_CMD_PWRITE.
    Write,
}

const PUNCH: &str = "FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE";

type Op = (Call, u64, u64);

/// Per traced file (relative to the job's directory, or the device path): one sequence per
/// process or thread, sorted.
type Trace = BTreeMap<String, Vec<Vec<Op>>>;

const TRACED: &str = "trace=ioctl,fallocate,pwrite64,write,lseek,io_submit";

/// The name a traced path is kept under, when it is one of the job's files.
fn traced_name(path: &str, dir: &str, device: Option<&str>) -> Option<String> {
    if Some(path) == device {
        return Some(path.to_string());
    }
    path.strip_prefix(&format!("{dir}/")).map(str::to_string)
}

/// One process's strace log: the trims and writes on the job's files, failed ones included
/// (a trim of a regular file fails).
fn parse_trace(log: &str, dir: &str, device: Option<&str>) -> BTreeMap<String, Vec<Op>> {
    let mut ops: BTreeMap<String, Vec<Op>> = BTreeMap::new();
    let mut pos: BTreeMap<String, u64> = BTreeMap::new();
    for line in log.lines() {
        let Some(open) = line.find('(') else { continue };
        let (call, args) = (&line[..open], &line[open + 1..]);
        if call == "io_submit" {
            for cb in common::strace::iocbs(args, line) {
                let Some(name) = fd_path(cb.fd).and_then(|(_, p, _)| traced_name(p, dir, device))
                else {
                    continue;
                };
                if cb.op.contains("PWRITE") {
                    let op = (Call::Write, cb.offset, cb.nbytes);
                    ops.entry(name).or_default().push(op);
                }
            }
            continue;
        }
        let Some((fd, path, rest)) = fd_path(args) else {
            continue;
        };
        let Some(name) = traced_name(path, dir, device) else {
            continue;
        };
        // strace pads short calls before their result: `lseek(3</f>, 0, SEEK_SET)   = 0`.
        let Some((call_args, ret)) = rest.rsplit_once(" = ") else {
            continue;
        };
        let call_args = call_args.trim_end().trim_end_matches(')');
        let ret: i64 = ret.split_whitespace().next().unwrap().parse().unwrap();
        let key = format!("{fd}<{name}>");
        let list: Vec<&str> = call_args.trim_start_matches(", ").split(", ").collect();
        let num = |s: &str| -> u64 { s.trim_matches(['[', ']']).trim().parse().unwrap() };
        let op = match call {
            "lseek" => {
                pos.insert(key, ret as u64);
                continue;
            }
            // ioctl(fd, BLKDISCARD, [offset, length])
            "ioctl" if list.first() == Some(&"BLKDISCARD") => {
                (Call::Discard, num(list[1]), num(list[2]))
            }
            "fallocate" => {
                let call = if list[0] == PUNCH {
                    Call::Discard
                } else {
                    Call::Fallocate(list[0].to_string())
                };
                (call, num(list[1]), num(list[2]))
            }
            "write" => {
                let at = pos.get(&key).copied().unwrap_or(0);
                pos.insert(key, at + ret.max(0) as u64);
                (Call::Write, at, num(list[list.len() - 1]))
            }
            "pwrite64" => (
                Call::Write,
                num(list[list.len() - 1]),
                num(list[list.len() - 2]),
            ),
            _ => continue,
        };
        ops.entry(name).or_default().push(op);
    }
    ops
}

/// Run `bin` on `args` under strace in `work` (its files laid out already): the trace and
/// the run's output.
fn strace(bin: &Path, work: &Path, args: &[&str], device: Option<&str>) -> (Trace, Output) {
    let logs = TempDir::new().unwrap();
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
    let out = run_in(Path::new(STRACE), work, &refs);
    let dir = work.canonicalize().unwrap().display().to_string();
    let mut per_file: Trace = BTreeMap::new();
    for entry in std::fs::read_dir(logs.path()).unwrap() {
        let log = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for (file, ops) in parse_trace(&log, &dir, device) {
            per_file.entry(file).or_default().push(ops);
        }
    }
    per_file.values_mut().for_each(|v| v.sort());
    (per_file, out)
}

/// Lay the files out with an untraced run, then trace the job.
fn traced(bin: &Path, args: &[&str], device: Option<&str>) -> (Trace, Output) {
    let work = TempDir::new().unwrap();
    let prep = run_in(bin, work.path(), args);
    assert_eq!(prep.code, 0, "{bin:?} {args:?}: {}", prep.stderr);
    let (trace, out) = strace(bin, work.path(), args, device);
    assert_eq!(out.code, 0, "strace {bin:?} {args:?}: {}", out.stderr);
    (trace, out)
}

/// Each `issued rwts:` line of a normal report.
fn issued(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.contains("issued rwts:"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Both programs' traces and `issued rwts` lines on one job; None when skipped.
fn trace_both(args: &[&str], device: Option<&str>) -> Option<([Trace; 2], [Vec<String>; 2])> {
    let peer = peer()?;
    let drop_in = DropIn::named("fio");
    let (ta, oa) = traced(Path::new(peer), args, device);
    let (tb, ob) = traced(&drop_in.bin(), args, device);
    assert!(!ta.is_empty(), "fio made no traced call: {args:?}");
    Some(([ta, tb], [issued(&oa.stdout), issued(&ob.stdout)]))
}

/// The exact calls of a deterministic job, in order.
fn same_calls(args: &[&str], device: Option<&str>) {
    let Some((t, i)) = trace_both(args, device) else {
        return;
    };
    assert_eq!(i[0], i[1], "issued rwts of {args:?}");
    assert_eq!(t[0], t[1], "calls of {args:?}");
}

/// A random job with the random map: per file, every block trimmed once in both (fio's
/// generator differs from plumb's, so not in the same order). With `paired`, every trim is
/// followed by a write of exactly its range (randtrimwrite).
fn same_random_trims(args: &[&str], device: Option<&str>, paired: bool) {
    let Some((t, i)) = trace_both(args, device) else {
        return;
    };
    assert_eq!(i[0], i[1], "issued rwts of {args:?}");
    let blocks = |t: &Trace| -> BTreeMap<String, BTreeMap<(u64, u64), usize>> {
        t.iter()
            .map(|(f, seqs)| {
                let mut m = BTreeMap::new();
                for o in seqs.iter().flatten().filter(|o| o.0 == Call::Discard) {
                    *m.entry((o.1, o.2)).or_insert(0) += 1;
                }
                (f.clone(), m)
            })
            .collect()
    };
    let (a, b) = (blocks(&t[0]), blocks(&t[1]));
    assert_eq!(a, b, "trimmed blocks of {args:?}");
    assert!(a.values().flat_map(|m| m.values()).all(|&n| n == 1));
    if paired {
        for (who, trace) in ["fio", "plumb"].iter().zip(&t) {
            for seq in trace.values().flatten() {
                for pair in seq.chunks(2) {
                    assert_eq!(pair.len(), 2, "{who}: {seq:?}");
                    assert_eq!(pair[0].0, Call::Discard, "{who}: {seq:?}");
                    assert_ne!(pair[1].0, Call::Discard, "{who}: {seq:?}");
                    assert_eq!((pair[0].1, pair[0].2), (pair[1].1, pair[1].2), "{who}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Regular files: the falloc engine

#[test]
fn falloc_trims_punch_the_holes_fio_punches() {
    same_calls(
        &[
            "--name=j",
            "--rw=trim",
            "--size=32k",
            "--bs=4k",
            "--ioengine=falloc",
        ],
        None,
    );
    // The trim size is bs's third value; two files take turns.
    same_calls(
        &[
            "--name=j",
            "--rw=trim",
            "--size=64k",
            "--bs=4k,4k,8k",
            "--nrfiles=2",
            "--ioengine=falloc",
        ],
        None,
    );
}

#[test]
fn falloc_randtrim_punches_every_block_once() {
    same_random_trims(
        &[
            "--name=j",
            "--rw=randtrim",
            "--size=64k",
            "--bs=4k",
            "--randseed=7",
            "--ioengine=falloc",
        ],
        None,
        false,
    );
}

#[test]
fn falloc_trimwrite_trims_then_writes_each_block_as_fio_does() {
    same_calls(
        &[
            "--name=j",
            "--rw=trimwrite",
            "--size=32k",
            "--bs=4k",
            "--nrfiles=2",
            "--ioengine=falloc",
        ],
        None,
    );
    // Unequal sizes: fio's last_start rule lets the writes run on without trims.
    same_calls(
        &[
            "--name=j",
            "--rw=trimwrite",
            "--size=32k",
            "--bs=4k,8k,2k",
            "--ioengine=falloc",
        ],
        None,
    );
    same_random_trims(
        &[
            "--name=j",
            "--rw=randtrimwrite",
            "--size=64k",
            "--bs=4k",
            "--randseed=3",
            "--ioengine=falloc",
        ],
        None,
        true,
    );
}

/// On a regular file the BLKDISCARD engines fail at their first trim, in fio and in plumb:
/// one ioctl at offset 0, exit status 1, ENOTTY named.
#[test]
fn blkdiscard_engines_fail_on_a_regular_file_as_fio_does() {
    let Some(peer) = peer() else { return };
    let drop_in = DropIn::named("fio");
    for engine in ["sync", "psync"] {
        let e = format!("--ioengine={engine}");
        let args = ["--name=j", "--rw=trim", "--size=32k", "--bs=4k", &e];
        let mut traces = Vec::new();
        for bin in [Path::new(peer), &drop_in.bin()] {
            let work = TempDir::new().unwrap();
            let (trace, out) = strace(bin, work.path(), &args, None);
            assert_eq!(out.code, 1, "{bin:?} {args:?}: {}", out.stderr);
            // fio prints its error line on stdout, plumb on stderr.
            let said = format!("{}{}", out.stdout, out.stderr);
            assert!(
                said.contains("Inappropriate ioctl for device"),
                "{bin:?}: {said}"
            );
            // The trims alone: both also lay the file out (fio in its parent process).
            let trims: Vec<Op> = trace
                .values()
                .flatten()
                .flatten()
                .filter(|o| o.0 == Call::Discard)
                .cloned()
                .collect();
            traces.push(trims);
        }
        let want = vec![(Call::Discard, 0, 4096)];
        assert_eq!(traces[0], want, "fio {engine}");
        assert_eq!(traces[1], want, "plumb {engine}");
    }
}

// ---------------------------------------------------------------------------------------
// A block device: BLKDISCARD, interleaved with the engine's writes

/// A loop device over a 16 MiB file, detached when dropped.
struct Loop {
    dev: PathBuf,
    _dir: TempDir,
}

impl Loop {
    fn new() -> Option<Loop> {
        let dir = TempDir::new().unwrap();
        let img = dir.path().join("disk.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(16 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(Loop {
            dev: PathBuf::from(dev),
            _dir: dir,
        })
    }
    fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

fn loop_device() -> Option<Loop> {
    let lo = Loop::new();
    if lo.is_none() {
        assert!(
            !under_ci(),
            "CI=true: a loop device is needed (root and losetup)"
        );
        eprintln!("skipped: cannot set up a loop device (needs root and losetup)");
    }
    lo
}

#[test]
fn blkdiscard_on_a_device_matches_fio_for_each_engine() {
    if peer().is_none() {
        return;
    }
    let Some(lo) = loop_device() else { return };
    let f = format!("--filename={}", lo.path());
    for engine in ["sync", "psync", "pvsync", "libaio"] {
        let e = format!("--ioengine={engine}");
        same_calls(
            &["--name=j", &f, "--rw=trim", "--size=64k", "--bs=4k", &e],
            Some(lo.path()),
        );
        same_calls(
            &[
                "--name=j",
                &f,
                "--rw=trimwrite",
                "--size=64k",
                "--bs=8k",
                &e,
            ],
            Some(lo.path()),
        );
    }
    same_calls(
        &[
            "--name=j",
            &f,
            "--rw=trimwrite",
            "--size=32k",
            "--bs=4k,8k,2k",
        ],
        Some(lo.path()),
    );
    same_random_trims(
        &[
            "--name=j",
            &f,
            "--rw=randtrim",
            "--size=64k",
            "--bs=4k",
            "--randseed=11",
        ],
        Some(lo.path()),
        false,
    );
    same_random_trims(
        &[
            "--name=j",
            &f,
            "--rw=randtrimwrite",
            "--size=64k",
            "--bs=4k",
            "--randseed=5",
            "--ioengine=sync",
        ],
        Some(lo.path()),
        true,
    );
}

// ---------------------------------------------------------------------------------------
// Reports

/// Both programs on `args` in fresh directories; None when fio is missing.
fn run_both(args: &[&str]) -> Option<(Output, Output)> {
    let peer = peer()?;
    let drop_in = DropIn::named("fio");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let theirs = run_in(Path::new(peer), a.path(), args);
    let ours = run_in(&drop_in.bin(), b.path(), args);
    assert_eq!(theirs.code, 0, "fio {args:?}: {}", theirs.stderr);
    assert_eq!(ours.code, 0, "plumb {args:?}: {}", ours.stderr);
    assert_eq!(ours.stderr, "", "{args:?}");
    Some((theirs, ours))
}

const TRIM_JOB: [&str; 5] = [
    "--name=t",
    "--rw=trim",
    "--size=32k",
    "--bs=4k",
    "--ioengine=falloc",
];
const TRIMWRITE_JOB: [&str; 5] = [
    "--name=t",
    "--rw=trimwrite",
    "--size=32k",
    "--bs=4k",
    "--ioengine=falloc",
];

#[test]
fn normal_report_has_fio_s_trim_section() {
    for job in [&TRIM_JOB[..], &TRIMWRITE_JOB[..]] {
        let Some((theirs, ours)) = run_both(job) else {
            return;
        };
        let (a, b) = (mask_normal(&theirs.stdout), mask_normal(&ours.stdout));
        assert_eq!(
            a, b,
            "{job:?}\n--- fio:\n{}\n--- plumb:\n{}",
            theirs.stdout, ours.stdout
        );
        assert_eq!(issued(&theirs.stdout), issued(&ours.stdout));
    }
}

#[test]
fn json_trim_object_has_fio_s_keys_and_counts() {
    for job in [&TRIM_JOB[..], &TRIMWRITE_JOB[..]] {
        let mut args = job.to_vec();
        args.push("--output-format=json");
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        let a: Value = serde_json::from_str(&theirs.stdout).unwrap();
        let b: Value = serde_json::from_str(&ours.stdout)
            .unwrap_or_else(|e| panic!("plumb's JSON ({e}): {}", ours.stdout));
        let mut diffs = Vec::new();
        shape_diff("", &a, &b, &mut diffs);
        assert!(diffs.is_empty(), "{job:?}:\n{}", diffs.join("\n"));
        for d in ["read", "write", "trim"] {
            for k in ["total_ios", "io_bytes", "io_kbytes"] {
                assert_eq!(a["jobs"][0][d][k], b["jobs"][0][d][k], "{job:?} {d}.{k}");
            }
        }
        assert_eq!(a["jobs"][0]["job options"], b["jobs"][0]["job options"]);
    }
}

#[test]
fn terse_trim_fields_as_fio_prints_them() {
    for version in ["3", "4", "5"] {
        let v = format!("--terse-version={version}");
        let mut args = TRIMWRITE_JOB.to_vec();
        args.extend(["--minimal", &v]);
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        let fields =
            |s: &str| -> Vec<String> { s.trim_end().split(';').map(String::from).collect() };
        let (a, b) = (fields(&theirs.stdout), fields(&ours.stdout));
        assert_eq!(a.len(), b.len(), "{args:?}");
        // io KiB of each direction: the first field of each direction's block (v3 has no
        // trim block).
        let per_dir = if version == "5" { 47 } else { 41 };
        let dirs = if version == "3" { 2 } else { 3 };
        for d in 0..dirs {
            let i = 5 + d * per_dir;
            assert_eq!(a[i], b[i], "{args:?} field {i}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// plumb alone: counts and sections, refusals

#[test]
fn trim_sections_in_every_format() {
    let d = TempDir::new().unwrap();
    let out = plumb_fio(d.path(), &TRIM_JOB);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.contains(
        "rw=trim, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=falloc"
    ));
    assert!(text.contains("\n  trim: IOPS="), "{text}");
    assert!(!text.contains("\n  write: IOPS="), "{text}");
    assert!(
        text.contains("issued rwts: total=0,0,8,0 short=0,0,0,0"),
        "{text}"
    );
    assert!(text.contains("\n   TRIM: bw="), "{text}");
    assert!(text.contains("io=32.0KiB (32.8kB)"), "{text}");

    let out = plumb_fio(
        d.path(),
        &[&TRIMWRITE_JOB[..], &["--output-format=json"]].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!(job["trim"]["total_ios"], 8);
    assert_eq!(job["trim"]["io_bytes"], 32768);
    assert_eq!(job["write"]["total_ios"], 8);
    assert_eq!(job["trim"]["clat_ns"]["N"], 8);
    assert!(job["trim"]["clat_ns"]["percentile"].is_object(), "{job}");

    let out = plumb_fio(
        d.path(),
        &[&TRIM_JOB[..], &["--minimal", "--terse-version=4"]].concat(),
    );
    let f: Vec<&str> = out.stdout.trim_end().split(';').collect();
    assert_eq!((f[5], f[46], f[87]), ("0", "0", "32"), "{}", out.stdout);

    // The trim size is bs's third value.
    let out = plumb_fio(
        d.path(),
        &[
            "--name=t",
            "--rw=trim",
            "--size=16k",
            "--bs=1k,1k,4k",
            "--ioengine=falloc",
        ],
    );
    assert!(
        out.stdout.contains("issued rwts: total=0,0,4,0"),
        "{}",
        out.stdout
    );
}

#[test]
fn refusals_where_fio_does_not_trim() {
    let d = TempDir::new().unwrap();
    // fio 3.33's vsync writes (writev) the blocks a trim job asks to discard.
    let out = plumb_fio(
        d.path(),
        &["--name=t", "--rw=trim", "--size=32k", "--ioengine=vsync"],
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "plumb: fio option 'ioengine' (value 'vsync') is not supported yet: with a trim mode: fio 3.33's vsync writes the blocks it is asked to trim\n"
    );
    // fio's falloc fails every sync.
    let out = plumb_fio(
        d.path(),
        &[
            "--name=t",
            "--rw=trimwrite",
            "--size=32k",
            "--ioengine=falloc",
            "--fsync=2",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("'fsync' (value '2')"), "{}", out.stderr);
    // --readonly names trims as fio does.
    let out = plumb_fio(
        d.path(),
        &["--readonly", "--name=t", "--rw=randtrim", "--size=32k"],
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "fio: job <t> has write or trim bit set, but fio is in read-only mode\n"
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing ran"
    );
}

/// The BLKDISCARD engines on a regular file: the job fails, fio's errno in the report.
#[test]
fn a_trim_of_a_regular_file_fails_with_enotty() {
    let d = TempDir::new().unwrap();
    let out = plumb_fio(
        d.path(),
        &[
            "--name=t",
            "--rw=trim",
            "--size=32k",
            "--ioengine=psync",
            "--output-format=json",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("BLKDISCARD failed: Inappropriate ioctl for device")
            && out.stderr.contains("falloc engine"),
        "{}",
        out.stderr
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["error"], 25, "{doc}");
}
