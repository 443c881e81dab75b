//! fio's `opendir` (the regular files below a directory are the job's files) and existing
//! files of different sizes given without `size=` (each is worked on whole), against
//! Debian's fio 3.33: the same reads of the same files at the same offsets (under strace),
//! the same lines, no byte of the user's files changed. Without fio or strace the
//! comparisons are skipped with a message, except under CI.

mod common;
use common::peers::{fio_and_strace, run_named, traced_ok, DropIn, FIO as PEER};

use std::collections::BTreeMap;
use std::path::Path;

use tempfile::TempDir;

fn peer() -> bool {
    fio_and_strace("the fio opendir comparison")
}

/// A tree of files of different sizes, a subdirectory, a symbolic link and a FIFO (which
/// fio leaves out), in `d/od`.
fn tree() -> TempDir {
    let d = TempDir::new().unwrap();
    let od = d.path().join("od");
    std::fs::create_dir_all(od.join("sub")).unwrap();
    for (name, kib) in [("f1", 64), ("f2", 16), ("sub/g1", 32)] {
        let data: Vec<u8> = (0..kib * 1024).map(|i| (i * 7 + kib) as u8).collect();
        std::fs::write(od.join(name), data).unwrap();
    }
    std::os::unix::fs::symlink("f1", od.join("link")).unwrap();
    let fifo = std::ffi::CString::new(od.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid path for mkfifo.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    d
}

/// Every file's bytes, by relative name.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walk(dir) {
        let rel = e.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        out.insert(rel, std::fs::read(&e).unwrap());
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let t = std::fs::symlink_metadata(&p).unwrap().file_type();
        if t.is_dir() {
            v.extend(walk(&p));
        } else if t.is_file() {
            v.push(p);
        }
    }
    v
}

/// The reads a run made, by file (relative to `dir`): (length, offset), sorted.
fn reads(bin: &Path, dir: &Path, args: &[&str]) -> BTreeMap<String, Vec<(u64, u64)>> {
    let text = traced_ok(bin, dir, "pread64", args);
    let prefix = format!("{}/", dir.canonicalize().unwrap().display());
    let mut out: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for line in text.lines() {
        // `123 pread64(5</tmp/x/od/f1>, "..."..., 4096, 8192) = 4096`
        let Some(at) = line.find("pread64(") else {
            continue;
        };
        let call = &line[at..];
        let Some(path) = call
            .find('<')
            .and_then(|a| call.find('>').map(|b| &call[a + 1..b]))
        else {
            continue;
        };
        let Some(rel) = path.strip_prefix(&prefix) else {
            continue;
        };
        let args: Vec<&str> = call.split(", ").collect();
        let n = args.len();
        let len: u64 = args[n - 2].parse().unwrap();
        let off: u64 = args[n - 1].split(')').next().unwrap().parse().unwrap();
        out.entry(rel.to_string()).or_default().push((len, off));
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

#[test]
fn opendir_reads_every_regular_file_below_whole_and_changes_none() {
    let fio = DropIn::named("fio");
    let args = ["--name=x", "--opendir=od", "--rw=read", "--bs=4k"];
    let d = tree();
    let before = contents(d.path());
    let mine = reads(&fio.bin(), d.path(), &args);
    assert_eq!(contents(d.path()), before, "a reading job wrote");
    let blocks = |kib: u64| (0..kib / 4).map(|i| (4096, i * 4096)).collect::<Vec<_>>();
    let want: BTreeMap<String, Vec<(u64, u64)>> = [
        ("od/f1".to_string(), blocks(64)),
        ("od/f2".to_string(), blocks(16)),
        ("od/sub/g1".to_string(), blocks(32)),
    ]
    .into_iter()
    .collect();
    assert_eq!(mine, want);
    if peer() {
        let d = tree();
        assert_eq!(reads(Path::new(PEER), d.path(), &args), want, "fio");
    }
    // The count comes first on stdout, in the normal format and in JSON.
    for format in ["normal", "json", "terse"] {
        let d = tree();
        let mut a = args.to_vec();
        let f = format!("--output-format={format}");
        a.push(&f);
        let out = run_named(&fio.bin(), d.path(), &a);
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(
            out.stdout.lines().next(),
            Some("fio: opendir added 3 files"),
            "{format}"
        );
        if format == "json" {
            let doc = common::parse_json(out.stdout.split_once('\n').unwrap().1.as_bytes());
            assert_eq!(doc["jobs"][0]["read"]["io_bytes"], 112 * 1024);
        }
    }
}

#[test]
fn named_files_of_different_sizes_without_a_size_are_read_whole() {
    let fio = DropIn::named("fio");
    let make = || {
        let d = TempDir::new().unwrap();
        std::fs::write(d.path().join("a"), vec![1u8; 8192]).unwrap();
        std::fs::write(d.path().join("b"), vec![2u8; 24576]).unwrap();
        d
    };
    let args = ["--name=x", "--filename=a:b", "--rw=randread", "--bs=4k"];
    let d = make();
    let mine = reads(&fio.bin(), d.path(), &args);
    assert_eq!(std::fs::metadata(d.path().join("a")).unwrap().len(), 8192);
    assert_eq!(mine["a"].len(), 2, "{mine:?}");
    assert_eq!(mine["b"].len(), 6, "{mine:?}");
    if peer() {
        let d = make();
        assert_eq!(reads(Path::new(PEER), d.path(), &args), mine, "fio");
    }
}

#[test]
fn opendir_refusals_and_messages_are_fios() {
    let fio = DropIn::named("fio");
    let d = tree();
    let job = d.path().join("missing.fio");
    std::fs::write(&job, "[j]\nrw=read\nopendir=nonexist\n").unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--name=x", "--opendir=nonexist", "--rw=read"],
        vec!["missing.fio"],
    ];
    for args in &cases {
        let mine = run_named(&fio.bin(), d.path(), args);
        assert_eq!(mine.code, 1, "{mine:?}");
        assert_eq!(
            mine.stdout,
            "fio: file:filesetup.c:1977, func=opendir(nonexist), error=No such file or directory\n"
        );
        assert!(
            mine.stderr
                .starts_with("fio: failed parsing opendir=nonexist"),
            "{mine:?}"
        );
        if peer() {
            let theirs = run_named(Path::new(PEER), d.path(), args);
            assert_eq!(mine, theirs, "{args:?}");
        }
    }
    // --parse-only looks at no directory, as fio's.
    let mine = run_named(
        &fio.bin(),
        d.path(),
        &["--parse-only", "--name=x", "--opendir=nonexist"],
    );
    assert_eq!((mine.code, mine.stdout.as_str()), (0, ""), "{mine:?}");
    // Both opendir and filename: one line, nothing runs.
    let out = common::plumb()
        .args([
            "fio",
            "--name=x",
            "--opendir=od",
            "--filename=od/f1",
            "--rw=read",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "plumb: fio option 'opendir' (value 'od') is not supported yet: together with filename ('od/f1')"
    );
}

#[test]
fn a_global_opendir_is_counted_once_and_replays() {
    let fio = DropIn::named("fio");
    let d = tree();
    std::fs::write(
        d.path().join("two.fio"),
        "[global]\nopendir=od\nrw=read\nbs=4k\n[a]\n[b]\nopendir=od/sub\n",
    )
    .unwrap();
    let mine = run_named(&fio.bin(), d.path(), &["two.fio", "--output-format=json"]);
    assert_eq!(mine.code, 0, "{mine:?}");
    let said: Vec<&str> = mine
        .stdout
        .lines()
        .take_while(|l| l.starts_with("fio: "))
        .collect();
    // b's own directory adds to the files the [global] one added, as fio's callbacks do.
    assert_eq!(
        said,
        ["fio: opendir added 3 files", "fio: opendir added 4 files"]
    );
    let json = &mine.stdout[mine.stdout.find('{').unwrap()..];
    let doc = common::parse_json(json.as_bytes());
    let bytes: Vec<u64> = (0..2)
        .map(|i| doc["jobs"][i]["read"]["io_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bytes, [112 * 1024, 144 * 1024]);
    if peer() {
        let theirs = run_named(
            Path::new(PEER),
            d.path(),
            &["two.fio", "--output-format=json"],
        );
        let their_said: Vec<&str> = theirs
            .stdout
            .lines()
            .take_while(|l| l.starts_with("fio: "))
            .collect();
        assert_eq!(said, their_said);
    }
    // plumb's record replays the lines as the run printed them.
    let out = common::plumb()
        .args(["fio", "two.fio", "--plumb-json=r.json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let live = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        live.starts_with("fio: opendir added 3 files\na: (g=0)"),
        "{live}"
    );
    let replay = common::plumb()
        .args(["report", "r.json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&replay.stdout), live);
}
