//! `plumb disk`: CrystalDiskMark's presets as fio jobs with O_DIRECT on a preconditioned
//! file, one table, the observations and findings; the record replays identically.

mod common;

use common::plumb;
use serde_json::Value;
use tempfile::TempDir;

/// The tests in CrystalDiskMark's order, as plumb disk names them.
const TESTS: [&str; 8] = [
    "SEQ1M-Q8T1-read",
    "SEQ1M-Q1T1-read",
    "RND4K-Q32T1-read",
    "RND4K-Q1T1-read",
    "SEQ1M-Q8T1-write",
    "SEQ1M-Q1T1-write",
    "RND4K-Q32T1-write",
    "RND4K-Q1T1-write",
];
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_presets_run_on_a_preconditioned_file_with_o_direct() {
    let d = TempDir::new().unwrap();
    let json = d.path().join("disk.json");
    let o = plumb()
        .args([
            "disk",
            d.path().to_str().unwrap(),
            "--quick",
            "--size=8M",
            "--time=1",
        ])
        .arg(format!("--json={}", json.display()))
        .arg("--no-history")
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        out.contains("(made by plumb), 1 s per test, filled with incompressible data first"),
        "{out}"
    );
    assert!(out.contains("precondition: wrote 8MiB in "), "{out}");
    let header = out
        .lines()
        .find(|l| l.contains("Read MB/s"))
        .expect("the table");
    for col in ["Read MB/s", "Write MB/s", "Read IOPS", "Write IOPS"] {
        assert!(header.contains(col), "{header}");
    }
    for preset in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        let row = out
            .lines()
            .rev()
            .find(|l| l.starts_with(preset))
            .unwrap_or_else(|| panic!("{preset}: {out}"));
        // Four figures, none missing.
        assert_eq!(row.split_whitespace().count(), 6, "{row}");
        assert!(!row.contains(" - "), "{row}");
    }
    // The first test's observations in full, labelled as its own, then every test's.
    assert!(
        out.contains("Observed during the first test (SEQ1M-Q8T1-read):"),
        "{out}"
    );
    assert!(!out.contains("Observed during the run:"), "{out}");
    let each: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "Observed during each test:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(each, TESTS, "{out}");
    // The file plumb made is gone.
    assert!(!d.path().join("plumb-disk.dat").exists());
    // The record: the precondition, then eight stonewalled jobs with their direction, block
    // size and queue depth, all O_DIRECT.
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["front_end"], "disk");
    let jobs: Vec<&Value> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["jobs"].as_array().unwrap())
        .collect();
    let names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "precondition");
    assert_eq!(names[1..], TESTS);
    for j in &jobs {
        let header = &j["layout"]["header"];
        assert_eq!(header["ioengine"], "libaio", "{j}");
        let name = j["name"].as_str().unwrap();
        let depth: u64 = match name {
            "precondition" | "SEQ1M-Q8T1-read" | "SEQ1M-Q8T1-write" => 8,
            n if n.contains("Q32") => 32,
            _ => 1,
        };
        assert_eq!(header["iodepth"], depth, "{name}");
        // Huge-page buffers: a 1 MiB request is not cut by where its pages happen to lie.
        assert_eq!(j["workload"]["buffer_memory"], "transparent", "{name}");
        assert!(
            j["layout"]["global_options"]
                .to_string()
                .contains("\"direct\",\"1\""),
            "{j}"
        );
    }
    // The saved record prints the same report.
    let r = plumb()
        .args(["report", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(text(&r.stdout), out);

    // What the kernel granted of the huge pages asked for, as the record says it.
    let (bytes, huge) = jobs.iter().fold((0, 0), |(b, h), j| {
        let w = &j["workload"];
        (
            b + w["buffer_bytes"].as_u64().unwrap(),
            h + w["huge_page_bytes"].as_u64().unwrap(),
        )
    });
    assert!(huge <= bytes && bytes > 0, "{huge} of {bytes}");
    let whole = "I/O buffers: in huge pages for every test";
    assert_eq!(out.contains(whole), huge == bytes, "{out}");
    // A record where the kernel gave fewer says so, and points at the finding.
    let mut less = doc.clone();
    for g in less["groups"].as_array_mut().unwrap() {
        for j in g["jobs"].as_array_mut().unwrap() {
            j["workload"]["huge_page_bytes"] = 0.into();
        }
    }
    let partial = d.path().join("partial.json");
    std::fs::write(&partial, serde_json::to_vec(&less).unwrap()).unwrap();
    let r = plumb()
        .args(["report", partial.to_str().unwrap()])
        .output()
        .unwrap();
    let replay = text(&r.stdout);
    assert!(
        replay.contains("I/O buffers: the kernel gave huge pages for 0B of ")
            && replay.contains("(requests-split)"),
        "{replay}"
    );
}

#[test]
fn read_only_reads_the_data_there_and_bad_targets_get_one_line() {
    let d = TempDir::new().unwrap();
    let f = d.path().join("data.bin");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let o = plumb()
        .args([
            "disk",
            f.to_str().unwrap(),
            "--read-only",
            "--size=4M",
            "--time=1",
            "--no-history",
        ])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!out.contains("precondition:"), "{out}");
    assert!(out.contains("read tests only, on the data there"), "{out}");
    // No write test ran: no per-test write line, and the table's write columns are empty.
    assert!(
        !out.lines()
            .any(|l| (l.starts_with("SEQ") || l.starts_with("RND")) && l.contains(" write ")),
        "{out}"
    );
    let row = out
        .lines()
        .rev()
        .find(|l| l.starts_with("RND4K Q1T1"))
        .unwrap();
    assert_eq!(
        row.split_whitespace().filter(|c| *c == "-").count(),
        2,
        "{row}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 4 << 20], "read-only");
    let o = plumb()
        .args(["disk", "/nonexistent/place", "--quick", "--no-history"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(err.starts_with("plumb: /nonexistent/place: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `plumb disk ARGS --no-history`: (exit code, stdout, stderr).
fn disk(args: &[&str]) -> (Option<i32>, String, String) {
    let o = plumb()
        .arg("disk")
        .args(args)
        .arg("--no-history")
        .output()
        .unwrap();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn read_only_never_writes_and_refuses_what_is_not_there() {
    let d = TempDir::new().unwrap();
    let small = d.path().join("small");
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 256) as u8).collect();
    std::fs::write(&small, &data).unwrap();
    let name = small.to_str().unwrap();
    // Less data than --size: refused, and the data stays.
    let (code, out, err) = disk(&[name, "--quick", "--size", "64M", "--read-only"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err,
        format!("plumb: {name}: holds 9.77KiB, less than --size 64M (--read-only reads only the data there: give a smaller --size, or none to read it all)\n")
    );
    // Less than one 1 MiB request, with no --size: refused too.
    let (code, _, err) = disk(&[name, "--quick", "--read-only"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("too little to read in 1 MiB requests"),
        "{err}"
    );
    assert_eq!(std::fs::read(&small).unwrap(), data, "read-only");

    // Without --size, all the data there is read (here less than the default size).
    let f = d.path().join("data.bin");
    let data: Vec<u8> = (0..(3u32 << 20) + 5).map(|i| (i % 253) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let (code, out, err) = disk(&[f.to_str().unwrap(), "--read-only", "--time=1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(", 3MiB, 1 s per test, read tests only, on the data there"),
        "{out}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), data, "read-only");

    // A directory without plumb's file: nothing to read, and nothing made.
    let empty = TempDir::new().unwrap();
    let dir = empty.path().to_str().unwrap();
    let (code, out, err) = disk(&[dir, "--read-only", "--quick"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err,
        format!("plumb: no data to read at {dir}: run plumb disk {dir} --keep-file first, or give a file or device\n")
    );
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
}

#[test]
fn read_only_in_a_directory_reads_the_file_a_run_kept_there() {
    let d = TempDir::new().unwrap();
    let f = d.path().join("plumb-disk.dat");
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 241) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let dir = d.path().to_str().unwrap();
    let args = [
        "disk",
        dir,
        "--read-only",
        "--size=2M",
        "--time=1",
        "--no-history",
    ];
    let traced = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    let (out, trace) = if traced {
        let log = d.path().join("trace");
        let o = std::process::Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-y",
                "-e",
                "trace=%file,fallocate,ftruncate",
                "-o",
            ])
            .arg(&log)
            .arg(assert_cmd::cargo::cargo_bin("plumb"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        let log = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(d.path().join("trace")).unwrap();
        (text(&o.stdout), log)
    } else {
        assert!(std::env::var("CI").is_err(), "strace is not installed");
        let o = plumb().args(args).output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        (text(&o.stdout), String::new())
    };
    let want = format!(
        "target: {}, 2M, 1 s per test, read tests only, on the data there",
        f.display()
    );
    assert!(out.contains(&want), "{out}");
    assert!(!out.contains("(made by plumb)"), "{out}");
    // Kept, unchanged, and never opened to write, created, truncated or removed.
    assert_eq!(std::fs::read(&f).unwrap(), data);
    for l in trace.lines().filter(|l| l.contains("plumb-disk.dat")) {
        for bad in [
            "O_WRONLY",
            "O_RDWR",
            "O_CREAT",
            "O_TRUNC",
            "unlink",
            "ftruncate",
            "fallocate",
        ] {
            assert!(!l.contains(bad), "{l}");
        }
    }
}

#[test]
fn bad_values_get_one_line_in_disk_s_own_terms() {
    let d = TempDir::new().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, want) in [
        (
            &["--size", "1k"][..],
            "plumb: invalid value for --size: '1k' (at least 1M: the tests make 1 MiB requests)\n",
        ),
        (
            &["--size", "lots"][..],
            "plumb: invalid value for --size: 'lots' (a size such as 512M or 2G)\n",
        ),
        (
            &["--time", "-1"][..],
            "plumb: invalid value for --time: '-1' (a whole number of seconds, at least 1)\n",
        ),
        (
            &["--time=0"][..],
            "plumb: invalid value for --time: '0' (a whole number of seconds, at least 1)\n",
        ),
    ] {
        let mut all = vec![dir, "--quick"];
        all.extend_from_slice(args);
        let (code, out, err) = disk(&all);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err, want, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    // Nothing was made for a run that never started.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // A character device is no place for a test file.
    let (code, _, err) = disk(&["/dev/null", "--quick"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err,
        "plumb: /dev/null: not a directory, a file or a block device\n"
    );
}

#[test]
fn a_closed_stdout_stops_the_run_and_removes_the_file() {
    use std::io::{BufRead, BufReader};
    let d = TempDir::new().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args(["disk", d.path().to_str().unwrap(), "--size=8M", "--time=1"])
        .arg("--no-history")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read up to the first test's line (the file is made by then), then go away, as
    // `| head` does.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for l in lines.by_ref() {
        if l.unwrap().starts_with("SEQ1M Q8T1") {
            break;
        }
    }
    drop(lines);
    let o = child.wait_with_output().unwrap();
    // As a shell reports a run ended by SIGPIPE, with nothing said about it.
    assert_eq!(o.status.code(), Some(128 + 13), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("panicked"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

/// `plumb disk | head -3`: the reader goes before any test has printed its line; the run
/// notices within about a second (not at the next line, a whole test later), stops, removes
/// its test file and ends as a shell reports SIGPIPE.
#[test]
fn a_reader_gone_before_any_line_stops_the_run_within_a_second_or_so() {
    use std::io::{BufRead, BufReader};
    use std::time::{Duration, Instant};
    let d = TempDir::new().unwrap();
    // 5 s per test (1 s of warm-up): the next line would come that long after.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args(["disk", d.path().to_str().unwrap(), "--size=8M", "--time=4"])
        .arg("--no-history")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        lines.next().expect("a line").unwrap();
    }
    drop(lines);
    let closed = Instant::now();
    let mut waited = None;
    while closed.elapsed() < Duration::from_secs(20) {
        if let Some(s) = child.try_wait().unwrap() {
            waited = Some((s, closed.elapsed()));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let Some((status, took)) = waited else {
        let _ = child.kill();
        panic!("plumb disk still ran 20 s after its reader went");
    };
    let err = text(&child.wait_with_output().unwrap().stderr);
    assert_eq!(status.code(), Some(128 + 13), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A poll a second, then the stop of the test under way and the file's removal.
    assert!(took < Duration::from_secs(3), "ended {took:?} after: {err}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn on_tmpfs_the_closing_line_says_the_page_cache_is_what_was_timed() {
    let shm = std::path::Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.contains(" tmpfs "));
    if !on_tmpfs {
        return;
    }
    let d = tempfile::TempDir::new_in(shm).unwrap();
    let (code, out, err) = disk(&[d.path().to_str().unwrap(), "--size=2M", "--time=1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("the page cache plays no part"), "{out}");
    assert!(
        out.contains("(tmpfs), where O_DIRECT\ndoes not bypass the page cache"),
        "{out}"
    );
}

/// plumb writes only files it made: a file it did not make (given, or a plumb-disk.dat
/// someone else left in the directory) is refused for the write tests and left as it was; a
/// file a run kept with --keep-file is marked as plumb's, and a later run may write it.
#[test]
fn the_write_tests_write_only_a_file_plumb_made() {
    let d = TempDir::new().unwrap();
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    let mine = d.path().join("mine.dat");
    std::fs::write(&mine, &data).unwrap();
    let (code, out, err) = disk(&[mine.to_str().unwrap(), "--size=2M", "--time=1"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(
        err,
        format!("plumb: {}: plumb did not make this file, and the write tests would overwrite it: read it with --read-only, or give a directory (plumb makes its own test file there)\n", mine.display())
    );
    assert_eq!(std::fs::read(&mine).unwrap(), data);

    let other = TempDir::new().unwrap();
    let left = other.path().join("plumb-disk.dat");
    std::fs::write(&left, &data).unwrap();
    let (code, _, err) = disk(&[other.path().to_str().unwrap(), "--size=2M", "--time=1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "plumb: {}: plumb did not make this file",
            left.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&left).unwrap(), data);

    // A run that keeps its file marks it; the next run gets past the check (and here stops
    // at its --size, checked after it).
    let kept = TempDir::new().unwrap();
    let dir = kept.path().to_str().unwrap();
    let (code, _, err) = disk(&[dir, "--size=2M", "--time=1", "--keep-file"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(kept.path().join("plumb-disk.dat").exists());
    let (code, _, err) = disk(&[dir, "--size=1k"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err,
        "plumb: invalid value for --size: '1k' (at least 1M: the tests make 1 MiB requests)\n"
    );
}
