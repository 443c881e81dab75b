//! fio's `continue_on_error` and `ignore_error`, against Debian's fio 3.33 on the same
//! command lines: plumb named `fio` and fio each in a fresh directory, on devices that fail
//! every request the same way in both: /dev/full (every write ENOSPC) and /dev/net/tun
//! (every read EBADFD, 77, on a descriptor no interface is attached to; root only).
//!
//! fio 3.33, measured: a job goes on after an error of a kind continue_on_error names (read,
//! write, io, verify, all) when the errno is one of EIO and EILSEQ, or one ignore_error lists
//! for that kind (`READ,WRITE,VERIFY` lists, `:` between values); a failed request counts as
//! issued with no bytes; the block gets `errors    : total=N, first_error=E/<text>` and
//! `err=E (...)` with the synchronous engines' words for the first error (nothing between
//! the parentheses from the others); nothing is printed per error (error_dump=0) and the
//! exit status is 0. An error the job does not go on after stops it as without the options,
//! counted once when its kind goes on after others (not at all otherwise). Lists fio cannot
//! read fail with its two lines.
//!
//! Without fio the comparisons are skipped with a message, except under CI.

mod common;
use common::fio_text::mask_pid;
use common::peers::{installed, run_named, DropIn, Printed, FIO};

use std::path::Path;

use serde_json::Value;
use tempfile::TempDir;

/// What both must print alike: the exit status, stderr (pids masked), and on stdout the
/// `fio:` lines, each job's first line up to its pid, its issued counts and its errors line.
#[derive(Debug, PartialEq)]
struct Said {
    code: i32,
    stderr: Vec<String>,
    stdout: Vec<String>,
}

fn said(r: &Printed) -> Said {
    let stdout = r
        .stdout
        .lines()
        .filter_map(|l| {
            let t = l.trim();
            if l.starts_with("fio: ") {
                Some(mask_pid(l))
            } else if l.contains(": (groupid=") {
                l.split(": pid=").next().map(str::to_string)
            } else if let Some(t) = t.strip_prefix("issued rwts: total=") {
                Some(t.split(' ').next().unwrap_or("").to_string())
            } else if t.starts_with("errors    :") {
                Some(t.to_string())
            } else {
                None
            }
        })
        .collect();
    Said {
        code: r.code,
        stderr: r.stderr.lines().map(mask_pid).collect(),
        stdout,
    }
}

/// plumb as `fio`, and fio when installed, on `args` each in a fresh directory: plumb's
/// output, and fio's when it ran.
fn both(args: &[&str]) -> (Printed, Option<Printed>) {
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let ours = run_named(&DropIn::named("fio").bin(), a.path(), args);
    let theirs = installed(
        &[FIO],
        "apt-get install fio",
        "the continue_on_error comparison",
    )
    .then(|| run_named(Path::new(FIO), b.path(), args));
    (ours, theirs)
}

fn compare(args: &[&str]) -> Said {
    let (ours, theirs) = both(args);
    let s = said(&ours);
    if let Some(t) = theirs {
        assert_eq!(s, said(&t), "{args:?}\nplumb: {ours:?}\nfio: {t:?}");
    }
    s
}

fn full(extra: &[&'static str]) -> Vec<&'static str> {
    [
        &[
            "--name=j",
            "--filename=/dev/full",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
        ][..],
        extra,
    ]
    .concat()
}

#[test]
fn writes_go_on_after_the_errors_ignore_error_lists() {
    for engine in ["psync", "sync", "pvsync2", "vsync", "io_uring"] {
        let s = compare(&full(&[
            &*format!("--ioengine={engine}").leak(),
            "--ignore_error=,ENOSPC",
        ]));
        assert_eq!(s.code, 0, "{engine}: {s:?}");
        assert!(s.stderr.is_empty(), "{engine}: {s:?}");
        let words = match engine {
            "vsync" => "file:engines/sync.c:364, func=xfer vsync, error=No space left on device",
            "io_uring" => "",
            _ => "file:engines/sync.c:126, func=xfer, error=No space left on device",
        };
        assert_eq!(
            s.stdout,
            [
                format!("j: (groupid=0, jobs=1): err=28 ({words})"),
                "0,16,0,0".into(),
                "errors    : total=16, first_error=28/<No space left on device>".into(),
            ],
            "{engine}"
        );
    }
}

#[test]
fn continue_on_error_alone_keeps_stopping_at_errors_other_than_eio_and_eilseq() {
    for coe in ["write", "io", "all", "1"] {
        let s = compare(&full(&[&*format!("--continue_on_error={coe}").leak()]));
        assert_eq!(s.code, 1, "{coe}");
        assert_eq!(
            s.stderr,
            ["fio: io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096"]
        );
        assert_eq!(
            s.stdout,
            [
                "fio: pid=P, err=28/file:io_u.c:1876, func=io_u error, error=No space left on device",
                "j: (groupid=0, jobs=1): err=28 (file:io_u.c:1876, func=io_u error, error=No space left on device)",
                "0,1,0,0",
                // The error that stopped the job is counted.
                "errors    : total=1, first_error=28/<No space left on device>",
            ],
            "{coe}"
        );
    }
    // Without the options: the same, and no errors line.
    let s = compare(&full(&[]));
    assert_eq!(s.code, 1);
    assert_eq!(s.stdout.len(), 3, "{s:?}");
}

#[test]
fn the_json_document_counts_the_errors_and_reports_the_first() {
    let (ours, theirs) = both(&full(&["--ignore_error=,28", "--output-format=json"]));
    let pick = |p: &Printed| {
        let doc: Value = serde_json::from_str(&p.stdout).unwrap();
        let j = &doc["jobs"][0];
        (
            p.code,
            j["error"].clone(),
            j["total_err"].clone(),
            j["first_error"].clone(),
            j["write"]["total_ios"].clone(),
            j["write"]["io_bytes"].clone(),
        )
    };
    let o = pick(&ours);
    assert_eq!(o, (0, 28.into(), 16.into(), 28.into(), 16.into(), 0.into()));
    if let Some(t) = theirs {
        assert_eq!(o, pick(&t));
    }
    // Without the options the two fields are absent.
    let (ours, _) = both(&full(&["--output-format=json"]));
    let doc: Value = serde_json::from_str(&ours.stdout).unwrap();
    assert!(doc["jobs"][0].get("total_err").is_none(), "{doc}");
}

/// /dev/net/tun opened by a process that attaches no interface: every read fails with
/// EBADFD (77). None when this user cannot open it.
fn tun() -> bool {
    let ok = std::fs::File::open("/dev/net/tun").is_ok();
    if !ok {
        assert!(
            !common::peers::under_ci(),
            "CI must be able to open /dev/net/tun"
        );
        eprintln!("skipping: /dev/net/tun cannot be opened here (needs root)");
    }
    ok
}

#[test]
fn reads_go_on_after_the_errors_listed_and_stop_at_the_others() {
    if !tun() {
        return;
    }
    let tun = |extra: &'static str| {
        compare(&[
            "--name=j",
            "--filename=/dev/net/tun",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            extra,
        ])
    };
    let s = tun("--ignore_error=77");
    assert_eq!(s.code, 0, "{s:?}");
    assert_eq!(
        s.stdout,
        [
            "j: (groupid=0, jobs=1): err=77 (file:engines/sync.c:126, func=xfer, error=File descriptor in bad state)",
            "16,0,0,0",
            "errors    : total=16, first_error=77/<File descriptor in bad state>",
        ]
    );
    // EBADFD is not among the errors continue_on_error goes on after by itself.
    let s = tun("--continue_on_error=read");
    assert_eq!(s.code, 1, "{s:?}");
    assert_eq!(
        s.stderr,
        ["fio: io_u error on file /dev/net/tun: File descriptor in bad state: read offset=0, buflen=4096"]
    );
    assert_eq!(
        s.stdout[3],
        "errors    : total=1, first_error=77/<File descriptor in bad state>"
    );
    // A write list leaves reads to stop, and fio counts no error of a kind it leaves off
    // (the errors line is there, the write kind being on).
    let s = tun("--ignore_error=,77");
    assert_eq!(s.code, 1, "{s:?}");
    assert_eq!(s.stdout[3], "errors    : total=0, first_error=0/<Success>");
}

#[test]
fn lists_fio_cannot_read_fail_as_in_fio() {
    for (list, first) in [
        ("EFOO", "Unknown error EFOO, please use number value"),
        ("xyz", "Unknown error xyz, please use number value"),
        (",,,EIO", "Illegal error type"),
    ] {
        let (ours, theirs) = both(&full(&[&*format!("--ignore_error={list}").leak()]));
        assert_eq!(ours.code, 1, "{list}: {ours:?}");
        assert_eq!(
            ours.stderr,
            format!("{first}\nfio: failed parsing ignore_error={list}\n"),
            "{list}"
        );
        if let Some(t) = theirs {
            assert_eq!((ours.code, &ours.stderr), (t.code, &t.stderr), "{list}");
        }
    }
}

#[test]
fn verify_failures_are_counted_and_the_job_goes_on_under_continue_on_error_verify() {
    // A file fio never wrote: every block fails its check.
    let d = TempDir::new().unwrap();
    let path = d.path().join("noise");
    let noise: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, noise).unwrap();
    let file = format!("--filename={}", path.display());
    let args = [
        "--name=v",
        &*file,
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--verify=md5",
        "--continue_on_error=verify",
    ];
    let (ours, theirs) = both(&args);
    let s = said(&ours);
    assert_eq!(s.code, 0, "{ours:?}");
    assert_eq!(
        s.stdout,
        [
            "v: (groupid=0, jobs=1): err=84 ()",
            "16,0,0,0",
            "errors    : total=16, first_error=84/<Invalid or incomplete multibyte or wide character>",
        ]
    );
    // fio also prints each bad block on stderr, in its own verify header's words; plumb's
    // checked blocks carry plumb's header, so only stdout is compared.
    if let Some(t) = theirs {
        let f = said(&t);
        assert_eq!((s.code, &s.stdout), (f.code, &f.stdout));
    }
}

/// plumb's own report says the figures hold failed requests.
#[test]
fn plumb_finds_the_failed_requests() {
    let d = TempDir::new().unwrap();
    let out = common::plumb()
        .arg("fio")
        .args(full(&["--ignore_error=,ENOSPC"]))
        .current_dir(d.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let finding = text
        .split("\n    [")
        .find(|f| f.contains("(io-errors)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(finding.contains("failed requests: 16"), "{finding}");
    // Without errors, no such finding.
    let out = common::plumb()
        .args([
            "fio",
            "--name=z",
            "--filename=/dev/zero",
            "--rw=read",
            "--size=64k",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("(io-errors)"));
}
