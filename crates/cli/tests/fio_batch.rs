//! fio's queue batching (`iodepth_batch_submit`, `iodepth_batch_complete_min`,
//! `iodepth_batch_complete_max`) against Debian's fio 3.33.
//!
//! Both programs run the same size-limited job on a buffered file that is already laid out
//! and cached, under `strace`: libaio's io_submit then reads inside the call, so every
//! io_getevents finds what it asks for at once and the calls do not depend on timing. For
//! libaio the calls themselves must be the same (how many requests each io_submit carries,
//! the min and max of each io_getevents); for both engines, the report's IO depths,
//! submit and complete lines must be equal. plumb's own call pattern is checked without the
//! peer as well. Without fio or strace the comparisons are skipped with a message, except
//! under CI.

mod common;
use common::peers::{fio_and_strace, DropIn, FIO as PEER};

use std::collections::BTreeMap;
use std::path::Path;

use tempfile::TempDir;

fn tools() -> bool {
    fio_and_strace("the fio batching comparison")
}

/// A job over a 256 KiB file of 4 KiB random reads (64 requests), with `extra` options.
fn job(engine: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=b",
        "--filename=data",
        "--size=256k",
        "--rw=randread",
        "--randrepeat=1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("--ioengine={engine}"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// The queueing calls a run made, as (call, first count, second count) with how often each
/// came: io_submit's request count; io_getevents' min and max; io_uring_enter's to_submit
/// and min_complete.
type Calls = BTreeMap<(String, u64, u64), usize>;

struct Traced {
    calls: Calls,
    /// The report's `IO depths`, `submit` and `complete` lines.
    depths: Vec<String>,
    code: i32,
}

fn traced(bin: &Path, dir: &Path, args: &[String]) -> Traced {
    let (out, text) = common::peers::traced(
        bin,
        dir,
        &dir.join("trace"),
        "io_submit,io_getevents,io_uring_enter",
        false,
        args,
    );
    let mut calls = Calls::new();
    for line in text.lines() {
        // `1234  io_getevents(0x7f.., 1, 1, [{...}], NULL) = 1`
        let Some(at) = ["io_submit(", "io_getevents(", "io_uring_enter("]
            .iter()
            .find_map(|c| line.find(c))
        else {
            continue;
        };
        let call = &line[at..];
        let Some(open) = call.find('(') else { continue };
        let name = &call[..open];
        let args: Vec<&str> = call[open + 1..].split(", ").collect();
        let num = |i: usize| args.get(i).and_then(|a| a.parse::<u64>().ok()).unwrap_or(0);
        calls
            .entry((name.to_string(), num(1), num(2)))
            .and_modify(|n| *n += 1)
            .or_insert(1);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let depths = stdout
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("IO depths") || t.starts_with("submit") || t.starts_with("complete")
        })
        .map(str::to_string)
        .collect();
    Traced {
        calls,
        depths,
        code: out.status.code().unwrap_or(-1),
    }
}

/// A directory with the job's file laid out by plumb (and so in the page cache).
fn laid_out() -> TempDir {
    let dir = TempDir::new().unwrap();
    let out = common::plumb()
        .arg("fio")
        .args(job("psync", &["--rw=write"]))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    dir
}

fn plumb_traced(dir: &Path, args: &[String]) -> Traced {
    let fio = DropIn::named("fio");
    let t = traced(&fio.bin(), dir, args);
    assert_eq!(t.code, 0, "plumb failed on {args:?}");
    t
}

fn calls(list: &[(&str, u64, u64, usize)]) -> Calls {
    list.iter()
        .map(|&(c, a, b, n)| ((c.to_string(), a, b), n))
        .collect()
}

/// With `userspace_reap=0` plumb makes fio's own calls (fio takes completions from the ring
/// only when it polls, so the switch changes nothing else in these jobs).
#[test]
fn libaio_batches_submissions_and_completions_as_fio_does() {
    let dir = laid_out();
    let cases: &[(&[&str], Calls)] = &[
        // fio's defaults: one request per io_submit, one completion per io_getevents, and
        // the whole queue collected at once at the end.
        (
            &["--iodepth=8"],
            calls(&[
                ("io_submit", 1, 0, 64),
                ("io_getevents", 1, 1, 57),
                ("io_getevents", 7, 7, 1),
            ]),
        ),
        // A batch of 0 is the depth; 16 completions per collection.
        (
            &[
                "--iodepth=16",
                "--iodepth_batch=0",
                "--iodepth_batch_complete_min=16",
            ],
            calls(&[("io_submit", 16, 0, 4), ("io_getevents", 16, 16, 4)]),
        ),
        // Completion minimum 0: poll after every request, without waiting.
        (
            &["--iodepth=8", "--iodepth_batch_complete_min=0"],
            calls(&[("io_submit", 1, 0, 64), ("io_getevents", 0, 1, 64)]),
        ),
        // Batches of 4 (the alias iodepth_batch_submit), collections of exactly 4.
        (
            &[
                "--iodepth=8",
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete=4",
                "--iodepth_batch_complete_max=4",
            ],
            calls(&[("io_submit", 4, 0, 16), ("io_getevents", 4, 4, 16)]),
        ),
    ];
    let peer = tools();
    for (extra, want) in cases {
        let mut args = job("libaio", extra);
        args.push("--userspace_reap=0".into());
        let mine = plumb_traced(dir.path(), &args);
        assert_eq!(&mine.calls, want, "plumb's calls for {extra:?}");
        assert_eq!(mine.depths.len(), 3, "{:?}", mine.depths);
        if peer {
            let theirs = traced(Path::new(PEER), dir.path(), &args);
            assert_eq!(theirs.code, 0);
            assert_eq!(mine.calls, theirs.calls, "calls for {extra:?}");
            assert_eq!(mine.depths, theirs.depths, "report lines for {extra:?}");
        }
    }
}

/// By default plumb takes libaio completions from the ring when they are there: on a cached
/// buffered file every request is complete when io_submit returns, so no collection needs
/// io_getevents, yet each takes as many completions as fio's calls do (the report's IO
/// depths lines are fio's own).
#[test]
fn libaio_takes_completions_from_the_ring_without_a_call() {
    let dir = laid_out();
    let cases: &[(&[&str], usize)] = &[
        (&["--iodepth=8"], 64),
        (
            &[
                "--iodepth=16",
                "--iodepth_batch=0",
                "--iodepth_batch_complete_min=16",
            ],
            4,
        ),
        (&["--iodepth=8", "--iodepth_batch_complete_min=0"], 64),
    ];
    let peer = tools();
    for (extra, submits) in cases {
        let args = job("libaio", extra);
        let mine = plumb_traced(dir.path(), &args);
        let count = |call: &str| -> usize {
            mine.calls
                .iter()
                .filter(|((c, _, _), _)| c == call)
                .map(|(_, n)| n)
                .sum()
        };
        assert_eq!(count("io_getevents"), 0, "{extra:?}: {:?}", mine.calls);
        assert_eq!(count("io_submit"), *submits, "{extra:?}: {:?}", mine.calls);
        assert_eq!(mine.depths.len(), 3, "{:?}", mine.depths);
        if peer {
            let theirs = traced(Path::new(PEER), dir.path(), &args);
            assert_eq!(theirs.code, 0);
            assert_eq!(mine.depths, theirs.depths, "report lines for {extra:?}");
        }
    }
    // Refused values are fio's.
    let out = common::plumb()
        .arg("fio")
        .args(job("libaio", &["--userspace_reap=maybe"]))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("userspace_reap"), "{err}");
}

#[test]
fn io_uring_submits_in_batches_and_reports_them_as_fio_does() {
    // io_uring may be disabled here (kernel.io_uring_disabled, seccomp); CI's machine has it.
    if !common::peers::under_ci() && !io_uring_works() {
        eprintln!("skipping: io_uring is not available here");
        return;
    }
    let dir = laid_out();
    let cases: &[&[&str]] = &[
        &["--iodepth=8"],
        &[
            "--iodepth=16",
            "--iodepth_batch=0",
            "--iodepth_batch_complete_min=16",
        ],
        &["--iodepth=8", "--iodepth_batch_complete_min=0"],
    ];
    let peer = tools();
    for extra in cases {
        let args = job("io_uring", extra);
        let mine = plumb_traced(dir.path(), &args);
        // Every io_uring_enter carries at most one batch.
        let batch = if extra.contains(&"--iodepth_batch=0") {
            16
        } else {
            1
        };
        let submitted: usize = mine
            .calls
            .iter()
            .map(|((_, to_submit, _), n)| {
                assert!(*to_submit as usize <= batch, "{:?}", mine.calls);
                *to_submit as usize * n
            })
            .sum();
        assert_eq!(submitted, 64, "{:?}", mine.calls);
        if peer {
            let theirs = traced(Path::new(PEER), dir.path(), &args);
            assert_eq!(theirs.code, 0);
            assert_eq!(mine.depths, theirs.depths, "report lines for {extra:?}");
        }
    }
}

/// plumb registers an io_uring job's file and buffers unless the job says 0 (fio's are off
/// by default): the device sees the same requests, the kernel takes no file reference and
/// pins no page per request.
#[test]
fn io_uring_registers_files_and_buffers_unless_told_not_to() {
    if !common::peers::under_ci() && !io_uring_works() {
        eprintln!("skipping: io_uring is not available here");
        return;
    }
    if !tools() {
        return;
    }
    let dir = laid_out();
    let registered = |extra: &[&str]| -> Vec<&'static str> {
        let fio = DropIn::named("fio");
        let (out, text) = common::peers::traced(
            &fio.bin(),
            dir.path(),
            &dir.path().join("trace-register"),
            "io_uring_register",
            false,
            &job("io_uring", extra),
        );
        assert!(out.status.success(), "{out:?}");
        ["IORING_REGISTER_FILES", "IORING_REGISTER_BUFFERS"]
            .into_iter()
            .filter(|op| text.lines().any(|l| l.contains(op) && l.ends_with("= 0")))
            .collect()
    };
    assert_eq!(
        registered(&[]),
        ["IORING_REGISTER_FILES", "IORING_REGISTER_BUFFERS"]
    );
    assert_eq!(
        registered(&["--registerfiles=0"]),
        ["IORING_REGISTER_BUFFERS"]
    );
    assert_eq!(registered(&["--fixedbufs=0"]), ["IORING_REGISTER_FILES"]);
    assert!(registered(&["--fixedbufs=0", "--registerfiles=0"]).is_empty());
}

fn io_uring_works() -> bool {
    let dir = TempDir::new().unwrap();
    common::plumb()
        .arg("fio")
        .args(job("io_uring", &["--size=4k"]))
        .current_dir(dir.path())
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn batch_options_resolve_as_fio_resolves_them() {
    let dir = laid_out();
    // A submit batch above the depth is the depth; a completion maximum below the minimum
    // is the minimum.
    let args = job(
        "libaio",
        &[
            "--iodepth=4",
            "--iodepth_batch=64",
            "--iodepth_batch_complete_min=2",
            "--iodepth_batch_complete_max=1",
            "--userspace_reap=0",
        ],
    );
    let t = plumb_traced(dir.path(), &args);
    assert_eq!(
        t.calls,
        calls(&[
            ("io_submit", 4, 0, 1),
            ("io_submit", 2, 0, 30),
            ("io_getevents", 2, 2, 32),
        ])
    );
    if tools() {
        let theirs = traced(Path::new(PEER), dir.path(), &args);
        assert_eq!(t.calls, theirs.calls);
        assert_eq!(t.depths, theirs.depths);
    }
    // A value that is no number is refused by name, as fio refuses it.
    let out = common::plumb()
        .arg("fio")
        .args(job("libaio", &["--iodepth_batch=lots"]))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("iodepth_batch"), "{err}");
}
