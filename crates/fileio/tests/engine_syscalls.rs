//! The system calls each file-call engine makes, seen with strace: this test binary runs
//! itself under `strace -ff` with one engine (the ignored `child` test does the run), and the
//! calls on the test files' descriptors must be the ones the engine claims, and no others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use plumb_core::{run, RunConfig, StopFlag};
use plumb_fileio::access::Access;
use plumb_fileio::engine::{find, EngineOptions};
use plumb_fileio::fileset::prepare::{prepare, Quiet};
use plumb_fileio::spec::{FileioSpec, SyncPolicy};
use plumb_fileio::FileioWorkload;

/// The child's instructions: engine, directory, access ("rw" or "seqrd"), and the engine
/// options set to true (comma-separated).
const CHILD: &str = "PLUMB_ENGINE_SYSCALLS_CHILD";

const CALLS: &str = "lseek,read,write,readv,writev,pread64,pwrite64,preadv,pwritev,\
preadv2,pwritev2,fsync,fdatasync,io_submit,io_uring_enter";

fn spec(dir: &Path) -> FileioSpec {
    FileioSpec {
        dir: dir.to_path_buf(),
        num_files: 4,
        total_size: 1 << 20,
        block_size: 4096,
        sync: SyncPolicy {
            every_requests: 50,
            ..Default::default()
        },
        queue_depth: 4,
        ..Default::default()
    }
}

#[test]
#[ignore = "run by the tests below, under strace"]
fn child() {
    let Ok(what) = std::env::var(CHILD) else {
        return;
    };
    let mut it = what.split('|');
    let (engine, dir, access, opts) = (
        it.next().unwrap(),
        it.next().unwrap(),
        it.next().unwrap(),
        it.next().unwrap_or(""),
    );
    let def = find(engine).unwrap();
    let mut options = EngineOptions::default();
    for o in opts.split(',').filter(|o| !o.is_empty()) {
        let name = def.options.iter().find(|d| d.name == o).unwrap().name;
        options.set(name, true);
    }
    let s = FileioSpec {
        engine: def,
        engine_options: options,
        access: Some(match access {
            "seqrd" => Access::seq_read(),
            _ => Access::rand_mix(1.5),
        }),
        ..spec(Path::new(dir))
    };
    let w = Arc::new(FileioWorkload::open(s).unwrap());
    let cfg = RunConfig {
        time_limit: None,
        event_limit: 200,
        ..Default::default()
    };
    run(w, &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
}

/// One thread's calls on test-file descriptors: call name → the lines.
type Calls = BTreeMap<String, Vec<String>>;

/// Run the child for `engine` under strace; every thread's calls on the test files. The
/// run must succeed.
fn traced(engine: &str, access: &str, opts: &str) -> Option<Vec<Calls>> {
    let (ok, threads) = traced_run(engine, access, opts)?;
    assert!(ok.is_ok(), "{engine}: {}", ok.unwrap_err());
    Some(threads)
}

/// Run the child for `engine` under strace: whether the run succeeded (else its output),
/// and every thread's calls on the test files.
fn traced_run(engine: &str, access: &str, opts: &str) -> Option<(Result<(), String>, Vec<Calls>)> {
    let ok = Command::new("strace").arg("-V").output();
    if !ok.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "strace is required under CI"
        );
        return None;
    }
    let d = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    prepare(
        &spec(d.path()),
        &StopFlag::default(),
        &mut Vec::new(),
        &mut Quiet,
    )
    .unwrap();
    let trace = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let out = Command::new("strace")
        .args(["-ff", "-y", "-e", CALLS, "-o"])
        .arg(trace.path().join("t"))
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--ignored", "--test-threads=1"])
        .env(
            CHILD,
            format!("{engine}|{}|{access}|{opts}", d.path().display()),
        )
        .output()
        .unwrap();
    let ok = if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    };
    let threads = std::fs::read_dir(trace.path())
        .unwrap()
        .map(|e| {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            let mut calls = Calls::new();
            // With -y strace writes each descriptor with its path: `pread64(5</d/test_file.1>, …`.
            for line in text.lines() {
                let Some((call, rest)) = line.split_once('(') else {
                    continue;
                };
                let first = rest.split(['>']).next().unwrap_or("");
                if call != "openat" && first.contains("</") && first.contains("/test_file.") {
                    calls
                        .entry(call.to_string())
                        .or_default()
                        .push(line.to_string());
                }
            }
            calls
        })
        .filter(|c: &Calls| !c.is_empty())
        .collect();
    Some((ok, threads))
}

/// Each thread's calls and how many of each, for messages.
fn summary(threads: &[Calls]) -> Vec<BTreeMap<&str, usize>> {
    threads
        .iter()
        .map(|c| c.iter().map(|(k, v)| (k.as_str(), v.len())).collect())
        .collect()
}

fn names(c: &Calls) -> BTreeSet<&str> {
    c.keys().map(String::as_str).collect()
}

fn set<'a>(v: &[&'a str]) -> BTreeSet<&'a str> {
    v.iter().copied().collect()
}

/// The one thread that did the run's I/O (and its fsyncs), for the blocking engines.
fn only_thread(engine: &str, opts: &str) -> Option<Calls> {
    let threads = traced(engine, "rw", opts)?;
    assert_eq!(threads.len(), 1, "{engine}: {:?}", summary(&threads));
    threads.into_iter().next()
}

#[test]
fn blocking_engines_make_their_own_calls_and_no_others() {
    for (engine, calls) in [
        ("psync", &["pread64", "pwrite64", "fsync"][..]),
        ("sync", &["lseek", "read", "write", "fsync"]),
        ("vsync", &["lseek", "readv", "writev", "fsync"]),
        ("pvsync", &["preadv", "pwritev", "fsync"]),
        ("pvsync2", &["preadv2", "pwritev2", "fsync"]),
    ] {
        let Some(c) = only_thread(engine, "") else {
            return;
        };
        assert_eq!(
            names(&c),
            set(calls),
            "{engine}: {:?}",
            summary(std::slice::from_ref(&c))
        );
    }
}

#[test]
fn pvsync2_passes_its_flags() {
    let Some(c) = only_thread("pvsync2", "hipri") else {
        return;
    };
    let io: Vec<&String> = c["preadv2"].iter().chain(&c["pwritev2"]).collect();
    assert!(io.len() > 100, "{:?}", summary(std::slice::from_ref(&c)));
    for l in io {
        assert!(l.contains("RWF_HIPRI") && !l.contains("RWF_NOWAIT"), "{l}");
    }
    // RWF_NOWAIT: a read the kernel cannot serve without blocking (pages not cached, or
    // under writeback) fails with EAGAIN, which ends the run as any failed read does.
    let Some((ok, threads)) = traced_run("pvsync2", "seqrd", "nowait") else {
        return;
    };
    let reads = &threads[0]["preadv2"];
    for l in reads {
        assert!(
            l.contains(", RWF_NOWAIT) = 4096") || l.contains(", RWF_NOWAIT) = -1 EAGAIN"),
            "{l}"
        );
    }
    match ok {
        Ok(()) => assert_eq!(reads.len(), 200),
        Err(out) => {
            assert!(reads.last().unwrap().contains("EAGAIN"));
            assert!(
                out.contains("preadv2 failed: Resource temporarily unavailable"),
                "{out}"
            );
        }
    }
    let Some(c) = only_thread("pvsync2", "") else {
        return;
    };
    for l in &c["preadv2"] {
        assert!(l.contains(", 0) = "), "{l}");
    }
}

#[test]
fn sync_seeks_once_per_file_when_reading_sequentially() {
    let Some(threads) = traced("sync", "seqrd", "") else {
        return;
    };
    let c = &threads[0];
    // 200 reads of 4 KiB: files of 64 blocks 0, 1 and 2 whole, 8 blocks of file 3.
    assert_eq!(threads.len(), 1);
    assert_eq!(names(c), set(&["lseek", "read"]), "{:?}", summary(&threads));
    assert_eq!(c["read"].len(), 200);
    assert_eq!(c["lseek"].len(), 4, "{:?}", c["lseek"]);
    assert!(c["lseek"].iter().all(|l| l.contains(", 0, SEEK_SET)")));
}

#[test]
fn posixaio_does_its_io_on_the_c_librarys_threads() {
    let Some(threads) = traced("posixaio", "rw", "") else {
        return;
    };
    // The worker thread submits and syncs; glibc's helper threads do pread/pwrite.
    let (worker, helpers): (Vec<&Calls>, Vec<&Calls>) =
        threads.iter().partition(|c| c.contains_key("fsync"));
    assert_eq!(worker.len(), 1, "{:?}", summary(&threads));
    assert_eq!(names(worker[0]), set(&["fsync"]), "{:?}", summary(&threads));
    assert!(!helpers.is_empty());
    let mut io = BTreeSet::new();
    for h in &helpers {
        io.extend(names(h));
    }
    assert_eq!(io, set(&["pread64", "pwrite64"]));
    let n: usize = helpers
        .iter()
        .map(|h| h.values().map(Vec::len).sum::<usize>())
        .sum();
    // 200 events less the fsync rounds (4 files every 50 requests).
    assert!((150..=200).contains(&n), "{n}");
}
