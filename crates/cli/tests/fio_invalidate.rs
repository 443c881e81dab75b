//! fio's `invalidate` against Debian's fio 3.33 (/usr/bin/fio): the same job, run by fio
//! and by plumb through a symlink named `fio`, must drop the same files' cached pages
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`) as often, over the same regions and at the same
//! points between the requests. fio drops a file's pages each time it opens it (before its
//! first request of every pass and of the read-back), when a time-based job starts a file
//! over in place (not under direct I/O), and after laying a file out, whatever
//! `invalidate` says.
//!
//! Both programs run under `strace -ff -ttt -y`; the calls on the job's files, merged in
//! time order, become per file a list of drops and runs of reads or writes. Counts, never
//! speed: a time-based job's number of passes depends on the machine, so it is checked by
//! its shape (a drop, then a whole pass of requests, again and again).
//!
//! Without /usr/bin/fio or strace these tests are skipped with a message, except under CI
//! (`CI=true`), where a missing peer is a failure.

mod common;
use common::peers::{fio_and_strace, run_named, FIO, STRACE};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// fio and strace, or None (with a message) when one is missing outside CI.
fn peer() -> Option<&'static str> {
    fio_and_strace("the fio drop-in comparison").then_some(FIO)
}

/// What happened to one file, in order; runs of requests are counted.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ev {
    /// posix_fadvise(DONTNEED) over (offset, length).
    Drop(u64, u64),
    Reads(u64),
    Writes(u64),
}

/// Per file (relative to the job's directory).
type Trace = BTreeMap<String, Vec<Ev>>;

/// Run `bin` (named `fio` in argv[0]) in `dir`.
fn run_in(bin: &Path, dir: &Path, args: &[String]) -> (i32, String) {
    let out = run_named(bin, dir, args);
    (out.code, out.stderr)
}

/// One strace line on a file under `prefix`: (time, file, event).
fn parse_line(line: &str, prefix: &str) -> Option<(f64, String, Ev)> {
    let (ts, rest) = line.split_once(' ')?;
    let (call, args) = rest.split_once('(')?;
    let lt = args.find('<')?;
    let gt = lt + args[lt..].find('>')?;
    let rel = args[lt + 1..gt].strip_prefix(prefix)?.to_string();
    let (call_args, ret) = args[gt + 1..].rsplit_once(") = ")?;
    assert!(!ret.starts_with('-'), "failed call: {line}");
    let list: Vec<&str> = call_args
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let ev = match call {
        "fadvise64" if call_args.contains("POSIX_FADV_DONTNEED") => {
            Ev::Drop(list[0].parse().unwrap(), list[1].parse().unwrap())
        }
        "pread64" | "preadv" => Ev::Reads(1),
        "pwrite64" | "pwritev" => Ev::Writes(1),
        _ => return None,
    };
    Some((ts.parse().unwrap(), rel, ev))
}

/// `bin` on `args` in a fresh directory under strace; with `lay_out_first`, an untraced run
/// lays the files out before (so the trace holds the job's own calls only): the same job,
/// once, not for its time.
fn traced(bin: &Path, args: &[String], lay_out_first: bool) -> Trace {
    let work = TempDir::new().unwrap();
    let logs = TempDir::new().unwrap();
    if lay_out_first {
        let once: Vec<String> = args
            .iter()
            .filter(|a| *a != "--time_based" && !a.starts_with("--runtime="))
            .cloned()
            .collect();
        let (code, err) = run_in(bin, work.path(), &once);
        assert_eq!(code, 0, "{bin:?} {once:?}: {err}");
    }
    let mut cmd: Vec<String> = [
        "-ff",
        "-qq",
        "-ttt",
        "-y",
        "-e",
        "trace=fadvise64,pread64,pwrite64,preadv,pwritev",
        "-o",
    ]
    .map(String::from)
    .to_vec();
    cmd.push(logs.path().join("t").display().to_string());
    cmd.push(bin.display().to_string());
    cmd.extend(args.iter().cloned());
    let (code, err) = run_in(Path::new(STRACE), work.path(), &cmd);
    assert_eq!(code, 0, "strace {bin:?} {args:?}: {err}");
    let prefix = format!("{}/", work.path().canonicalize().unwrap().display());
    // Every thread's calls, in time order (a thread's own order breaks ties).
    let mut all = Vec::new();
    for (n, entry) in std::fs::read_dir(logs.path()).unwrap().enumerate() {
        let log = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for (i, line) in log.lines().enumerate() {
            if let Some((ts, file, ev)) = parse_line(line, &prefix) {
                all.push((ts, n, i, file, ev));
            }
        }
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    let mut trace = Trace::new();
    for (_, _, _, file, ev) in all {
        let list = trace.entry(file).or_default();
        match (list.last_mut(), &ev) {
            (Some(Ev::Reads(n)), Ev::Reads(_)) | (Some(Ev::Writes(n)), Ev::Writes(_)) => *n += 1,
            _ => list.push(ev),
        }
    }
    trace
}

/// fio's trace and plumb's on the same job; None when skipped.
fn both(args: &[&str], lay_out_first: bool) -> Option<[Trace; 2]> {
    let peer = peer()?;
    let links = TempDir::new().unwrap();
    let plumb: PathBuf = links.path().join("fio");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &plumb).unwrap();
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.push("--output=/dev/null".into());
    Some([
        traced(Path::new(peer), &args, lay_out_first),
        traced(&plumb, &args, lay_out_first),
    ])
}

/// Both drop and request the same, file by file; fio's trace is returned.
fn same(args: &[&str], lay_out_first: bool) -> Option<Trace> {
    let [fio, plumb] = both(args, lay_out_first)?;
    assert!(!fio.is_empty(), "fio touched no file: {args:?}");
    assert_eq!(
        fio, plumb,
        "drops and requests of {args:?} (fio, then plumb)"
    );
    Some(fio)
}

/// `n` passes of `per_pass` reads, each after a drop of `region`.
fn passes(n: usize, region: (u64, u64), per_pass: u64) -> Vec<Ev> {
    (0..n)
        .flat_map(|_| [Ev::Drop(region.0, region.1), Ev::Reads(per_pass)])
        .collect()
}

/// Whether O_DIRECT opens in a temporary directory (tmpfs may refuse it).
fn direct_works() -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let d = TempDir::new().unwrap();
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(d.path().join("probe"))
        .is_ok();
    if !ok {
        eprintln!("skipped: the temporary directory refuses O_DIRECT");
    }
    ok
}

#[test]
fn every_loop_drops_each_file_before_its_first_request() {
    let job = ["--name=j", "--size=64k", "--bs=16k", "--loops=3"];
    for rw in ["--rw=read", "--rw=randread"] {
        let Some(t) = same(&[&job[..], &[rw]].concat(), true) else {
            return;
        };
        assert_eq!(t["j.0.0"], passes(3, (0, 65536), 4), "{rw}");
    }
    let Some(t) = same(&[&job[..], &["--rw=write"]].concat(), true) else {
        return;
    };
    let writes: Vec<Ev> = (0..3)
        .flat_map(|_| [Ev::Drop(0, 65536), Ev::Writes(4)])
        .collect();
    assert_eq!(t["j.0.0"], writes);
    // Direct I/O: fio drops at every open all the same.
    if direct_works() {
        same(&[&job[..], &["--rw=randread", "--direct=1"]].concat(), true);
    }
    // Several files: each dropped just before its first request of each pass; an offset
    // moves the region dropped.
    let Some(t) = same(
        &[
            "--name=j",
            "--rw=read",
            "--size=64k",
            "--bs=8k",
            "--nrfiles=2",
            "--offset=8k",
            "--loops=2",
        ],
        true,
    ) else {
        return;
    };
    for f in ["j.0.0", "j.0.1"] {
        assert_eq!(t[f], passes(2, (8192, 32768), 4), "{f}");
    }
    // io_size beyond the regions: fio opens the file again for the rest.
    let Some(t) = same(
        &[
            "--name=j",
            "--rw=randread",
            "--size=64k",
            "--bs=16k",
            "--io_size=160k",
        ],
        true,
    ) else {
        return;
    };
    let mut want = passes(3, (0, 65536), 4);
    want[5] = Ev::Reads(2);
    assert_eq!(t["j.0.0"], want);
}

#[test]
fn invalidate_0_drops_nothing() {
    for rw in ["--rw=read", "--rw=randread", "--rw=write"] {
        let Some(t) = same(
            &[
                "--name=j",
                rw,
                "--size=64k",
                "--bs=16k",
                "--loops=3",
                "--invalidate=0",
            ],
            true,
        ) else {
            return;
        };
        assert!(
            t["j.0.0"].iter().all(|e| !matches!(e, Ev::Drop(..))),
            "{rw}: {:?}",
            t["j.0.0"]
        );
    }
}

#[test]
fn the_read_back_and_the_layout_drop_too() {
    // A job that writes and verifies: laid out (sized, then dropped), opened (dropped),
    // written, opened again for the read-back (dropped).
    let Some(t) = same(
        &[
            "--name=j",
            "--rw=write",
            "--size=64k",
            "--bs=16k",
            "--verify=crc32c",
        ],
        false,
    ) else {
        return;
    };
    assert_eq!(
        t["j.0.0"],
        [
            Ev::Drop(0, 65536),
            Ev::Drop(0, 65536),
            Ev::Writes(4),
            Ev::Drop(0, 65536),
            Ev::Reads(4)
        ]
    );
    // The layout's drop does not depend on invalidate.
    let Some(t) = same(
        &[
            "--name=j",
            "--rw=randwrite",
            "--size=64k",
            "--bs=16k",
            "--invalidate=0",
        ],
        false,
    ) else {
        return;
    };
    assert_eq!(t["j.0.0"], [Ev::Drop(0, 65536), Ev::Writes(4)]);
}

/// The passes of a time-based job: a drop before each, then `per_pass` requests, except
/// the last pass, which the time limit may cut short. Returns how many drops there were.
fn time_based_passes(t: &[Ev], region: (u64, u64), per_pass: u64) -> usize {
    let drops = t.iter().step_by(2).count();
    for (i, pair) in t.chunks(2).enumerate() {
        let last = i + 1 == t.len().div_ceil(2);
        assert_eq!(pair[0], Ev::Drop(region.0, region.1), "pass {i} of {t:?}");
        match pair.get(1) {
            Some(Ev::Reads(n)) if *n == per_pass || (last && *n < per_pass) => {}
            other => panic!("pass {i}: {other:?} in {t:?}"),
        }
    }
    drops
}

#[test]
fn time_based_jobs_drop_each_time_a_file_starts_over() {
    // A 16 KiB file read 4 KiB at a time for a second wraps many times: fio drops its
    // pages at each wrap, in order or at random (its random map used up).
    for rw in ["--rw=read", "--rw=randread"] {
        let Some([fio, plumb]) = both(
            &[
                "--name=j",
                rw,
                "--size=16k",
                "--bs=4k",
                "--time_based",
                "--runtime=1",
            ],
            true,
        ) else {
            return;
        };
        for (who, t) in [("fio", &fio), ("plumb", &plumb)] {
            let drops = time_based_passes(&t["j.0.0"], (0, 16384), 4);
            assert!(drops >= 2, "{who} {rw}: no wrap in {:?}", t["j.0.0"]);
        }
    }
    // Without a random map nothing starts over: one drop, at the open.
    let Some([fio, plumb]) = both(
        &[
            "--name=j",
            "--rw=randread",
            "--norandommap",
            "--size=16k",
            "--bs=4k",
            "--time_based",
            "--runtime=1",
        ],
        true,
    ) else {
        return;
    };
    for (who, t) in [("fio", &fio), ("plumb", &plumb)] {
        assert_eq!(t["j.0.0"].len(), 2, "{who}: {:?}", t["j.0.0"]);
        assert_eq!(t["j.0.0"][0], Ev::Drop(0, 16384), "{who}");
    }
    if !direct_works() {
        return;
    }
    // Direct I/O: a file wrapped in place is not dropped again...
    for rw in ["--rw=read", "--rw=randread"] {
        let Some([fio, plumb]) = both(
            &[
                "--name=j",
                rw,
                "--size=16k",
                "--bs=4k",
                "--direct=1",
                "--time_based",
                "--runtime=1",
            ],
            true,
        ) else {
            return;
        };
        for (who, t) in [("fio", &fio), ("plumb", &plumb)] {
            assert_eq!(t["j.0.0"].len(), 2, "{who} {rw}: {:?}", t["j.0.0"]);
        }
    }
    // ...but files walked in order are opened again once all are done, and dropped then.
    let Some([fio, plumb]) = both(
        &[
            "--name=j",
            "--rw=read",
            "--size=32k",
            "--bs=8k",
            "--nrfiles=2",
            "--direct=1",
            "--time_based",
            "--runtime=1",
        ],
        true,
    ) else {
        return;
    };
    for (who, t) in [("fio", &fio), ("plumb", &plumb)] {
        for f in ["j.0.0", "j.0.1"] {
            let drops = time_based_passes(&t[f], (0, 16384), 2);
            assert!(drops >= 2, "{who} {f}: no new pass in {:?}", t[f]);
        }
    }
}

/// The access advice (`posix_fadvise` other than DONTNEED) `bin` gives the job's files:
/// the distinct advice names, in order of first use.
fn advice(bin: &Path, args: &[String]) -> Vec<String> {
    let work = TempDir::new().unwrap();
    let log = work.path().join("strace.log");
    let mut cmd: Vec<String> = ["-f", "-qq", "-e", "trace=fadvise64", "-o"]
        .map(String::from)
        .to_vec();
    cmd.push(log.display().to_string());
    cmd.push(bin.display().to_string());
    cmd.extend(args.iter().cloned());
    let (code, err) = run_in(Path::new(STRACE), work.path(), &cmd);
    assert_eq!(code, 0, "strace {bin:?} {args:?}: {err}");
    let mut seen: Vec<String> = Vec::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let Some(name) = line
            .split(", ")
            .find_map(|p| p.strip_prefix("POSIX_FADV_"))
            .map(|p| p.trim_end_matches(|c: char| !c.is_ascii_alphabetic()))
        else {
            continue;
        };
        if name != "DONTNEED" && !seen.iter().any(|s| s == name) {
            seen.push(name.to_string());
        }
    }
    seen
}

#[test]
fn fadvise_hint_tells_the_kernel_the_same_pattern_as_fio() {
    let Some(peer) = peer() else { return };
    let links = TempDir::new().unwrap();
    let plumb: PathBuf = links.path().join("fio");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &plumb).unwrap();
    for (extra, want) in [
        (&["--rw=randread"][..], &["RANDOM"][..]),
        (&["--rw=read"][..], &["SEQUENTIAL"][..]),
        (&["--rw=randread", "--fadvise_hint=0"][..], &[][..]),
        (&["--rw=read", "--fadvise_hint=random"][..], &["RANDOM"][..]),
        (
            &["--rw=randwrite", "--fadvise_hint=sequential"][..],
            &["SEQUENTIAL"][..],
        ),
    ] {
        let mut args: Vec<String> = [
            "--name=a",
            "--size=64k",
            "--filename=a.dat",
            "--output=/dev/null",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        let fio = advice(Path::new(peer), &args);
        assert_eq!(fio, want, "fio {extra:?}");
        assert_eq!(advice(&plumb, &args), want, "plumb {extra:?}");
    }
}

/// The calls on file `name` under `dir` of a strace log (`-y`), spelled without their data:
/// `lseek OFF`, `read LEN`, `pread64 LEN OFF`, `drop OFF LEN`.
fn file_calls(trace: &str, dir: &Path, name: &str) -> Vec<String> {
    let tag = format!("<{}/{name}>", dir.canonicalize().unwrap().display());
    trace
        .lines()
        .filter_map(|l| {
            let l = l
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start();
            let (call, rest) = l.split_once('(')?;
            let rest = rest.strip_prefix(|c: char| c.is_ascii_digit() || c == '-')?;
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            let args = rest.strip_prefix(&tag)?;
            let (args, _) = args.rsplit_once(" = ")?;
            let n: Vec<&str> = args
                .trim_end()
                .trim_end_matches(')')
                .rsplit(", ")
                .map(str::trim)
                .collect();
            Some(match call {
                "lseek" => format!("lseek {}", n[1]),
                "read" => format!("read {}", n[0]),
                "pread64" => format!("pread64 {} {}", n[1], n[0]),
                "fadvise64" if n[0] == "POSIX_FADV_DONTNEED" => format!("drop {} {}", n[2], n[1]),
                _ => return None,
            })
        })
        .collect()
}

#[test]
fn pre_read_reads_each_file_once_first_and_keeps_its_pages() {
    let Some(peer) = peer() else { return };
    let drop_in = common::peers::DropIn::named("fio");
    let args = [
        "--name=p",
        "--filename=data",
        "--size=64k",
        "--offset=8k",
        "--bs=16k,4k",
        "--rw=read",
        "--pre_read=1",
        "--output=/dev/null",
    ];
    let mut seen = Vec::new();
    for bin in [PathBuf::from(peer), drop_in.bin()] {
        let work = TempDir::new().unwrap();
        // Laid out by a first run; the traced one finds the file ready.
        let (code, err) = run_in(&bin, work.path(), &args.map(String::from));
        assert_eq!(code, 0, "{err}");
        let trace =
            common::peers::traced_ok(&bin, work.path(), "lseek,read,pread64,fadvise64", &args);
        seen.push(file_calls(&trace, work.path(), "data"));
    }
    // From the region's start, in reads of the largest read size, then the job's own
    // reads, with no drop of the cached pages between (pre_read turns invalidate off).
    let want: Vec<String> = std::iter::once("lseek 8192".to_string())
        .chain((0..4).map(|_| "read 16384".to_string()))
        .chain((0..4).map(|k| format!("pread64 16384 {}", 8192 + k * 16384)))
        .collect();
    assert_eq!(seen[0], want, "fio");
    assert_eq!(seen[1], want, "plumb");
}
