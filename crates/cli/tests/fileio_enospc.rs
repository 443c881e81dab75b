//! sysbench fileio on a full disk (a 4 MiB tmpfs mounted for the test: root only, skipped
//! elsewhere, a failure under CI), against sysbench 1.0.20 where sysbench is sane.
//!
//! sysbench 1.0.20, measured: `prepare` stops at the write that fails with
//! `FATAL: Failed to write file! errno = 28 (No space left on device)`, and a run with
//! `FATAL: Failed to write file! file: 3 pos: 671744 errno = 28 (No space left on device)`,
//! on stdout, exit 1. Its `file:` is a descriptor, not a file (and in async mode it says
//! `errno = 0 (Success)`); through mmap it dies of SIGBUS (exit 135). plumb, under either
//! name, says it in one line that names the file or the directory, and exits 1: under the
//! name `sysbench` a `FATAL:` line on stdout, as sysbench, under its own a line on stderr.

mod common;
use common::peers::{installed, DropIn};
use common::small_fs::SmallFs;
use common::{fileio, one_error_line};

use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;

const PEER: &str = "/usr/bin/sysbench";
const FULL: &str = "No space left on device";

/// (exit status, stdout, stderr) of `bin args` run in `dir`.
fn run(bin: &Path, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The one `FATAL:` line of a sysbench-style run that failed: stdout must hold exactly one,
/// stderr nothing.
fn fatal(who: &str, (code, stdout, stderr): &(i32, String, String)) -> String {
    assert_eq!(*code, 1, "{who}: {stdout}{stderr}");
    assert_eq!(stderr, "", "{who}");
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FATAL:")).collect();
    assert_eq!(lines.len(), 1, "{who}: {stdout}");
    lines[0].to_string()
}

/// Prepare two files of 1 MiB with plumb, punch their first half out, and take all the
/// space left: a random write then needs space the disk no longer has.
fn holes_on_a_full_disk(fs: &SmallFs) {
    let (code, _, err) = fileio(
        fs.path(),
        &["--file-num=2", "--file-total-size=2M", "prepare"],
    );
    assert_eq!(code, 0, "{err}");
    for i in 0..2 {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(fs.path().join(format!("test_file.{i}")))
            .unwrap();
        // SAFETY: punching a hole in a file open for writing.
        let r = unsafe {
            libc::fallocate(
                f.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                0,
                1 << 20,
            )
        };
        assert_eq!(r, 0, "punch a hole");
    }
    fs.fill_up("filler");
}

#[test]
fn prepare_on_a_full_disk_says_so_in_one_line() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let dir = fs.path();
    let peer = installed(
        &[PEER],
        "apt-get install sysbench",
        "the full-disk comparison",
    );
    let drop_in = DropIn::named("sysbench");
    let args = ["fileio", "--file-num=2", "--file-total-size=8M", "prepare"];
    if peer {
        let theirs = fatal("sysbench", &run(Path::new(PEER), dir, &args));
        assert!(theirs.contains(&format!("errno = 28 ({FULL})")), "{theirs}");
        fs.clear();
    }
    // plumb sees that the set cannot fit before it writes anything.
    let ours = fatal("plumb as sysbench", &run(&drop_in.bin(), dir, &args));
    assert_eq!(
        ours,
        "FATAL: no space left on device: needed 8MiB, available 4MiB in ."
    );
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "nothing written"
    );
    let (code, _, err) = fileio(dir, &args[1..]);
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(err.starts_with("plumb: no space left on device: needed 8MiB, available 4MiB in "));
    // A set that passes the check but not the disk (plumb's manifest takes a page): the
    // write that fails is named, the partial file goes, the whole file before it stays.
    let (code, _, err) = fileio(dir, &["--file-num=2", "--file-total-size=4M", "prepare"]);
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(
        err.contains("no space left on device while writing")
            && err.contains("test_file.1")
            && err.trim_end().ends_with("removed the partial file"),
        "{err}"
    );
    assert!(!dir.join("test_file.1").exists());
    assert_eq!(
        std::fs::metadata(dir.join("test_file.0")).unwrap().len(),
        2 << 20
    );
}

#[test]
fn a_run_that_fills_the_disk_names_the_file() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let dir = fs.path();
    let peer = installed(
        &[PEER],
        "apt-get install sysbench",
        "the full-disk comparison",
    );
    let drop_in = DropIn::named("sysbench");
    // seqwr creates its files: the disk fills in the first one.
    let seqwr = [
        "fileio",
        "--file-num=2",
        "--file-total-size=8M",
        "--file-test-mode=seqwr",
        "--time=5",
        "run",
    ];
    if peer {
        let theirs = fatal("sysbench", &run(Path::new(PEER), dir, &seqwr));
        assert!(theirs.contains(&format!("errno = 28 ({FULL})")), "{theirs}");
        fs.clear();
    }
    let ours = fatal("plumb as sysbench", &run(&drop_in.bin(), dir, &seqwr));
    assert!(
        ours.starts_with("FATAL: short write to ./test_file.0 at offset ")
            && ours.ends_with(&format!(": {FULL}")),
        "{ours}"
    );
    fs.clear();
    let (code, _, err) = fileio(dir, &seqwr[1..]);
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(err.contains("test_file.0") && err.contains(FULL), "{err}");
    fs.clear();

    // rndwr writes into the holes of a prepared set; sync and async (io_uring or libaio).
    holes_on_a_full_disk(&fs);
    let rndwr = [
        "fileio",
        "--file-num=2",
        "--file-total-size=2M",
        "--file-test-mode=rndwr",
        "--time=5",
        "run",
    ];
    if peer {
        let theirs = fatal("sysbench", &run(Path::new(PEER), dir, &rndwr));
        assert!(theirs.contains(&format!("errno = 28 ({FULL})")), "{theirs}");
    }
    let ours = fatal("plumb as sysbench", &run(&drop_in.bin(), dir, &rndwr));
    assert!(
        ours.starts_with("FATAL: write to ./test_file.")
            && ours.ends_with(&format!("(16384 bytes): pwrite failed: {FULL}")),
        "{ours}"
    );
    for mode in ["sync", "async"] {
        let io_mode = format!("--file-io-mode={mode}");
        let mut a = rndwr[1..].to_vec();
        a.push(&io_mode);
        let (code, _, err) = fileio(dir, &a);
        assert_eq!(code, 1, "{mode}: {err}");
        one_error_line(&err);
        assert!(
            err.starts_with(&format!("plumb: write to {}/test_file.", dir.display()))
                && err.trim_end().ends_with(FULL),
            "{mode}: {err}"
        );
    }
}

/// Through mmap a store into a hole the disk has no room for is SIGBUS (sysbench dies of
/// it): plumb checks the room the mapping needs first and says what is missing.
#[test]
fn mmap_on_a_full_disk_is_one_line_not_a_crash() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let dir = fs.path();
    holes_on_a_full_disk(&fs);
    let (code, _, err) = fileio(
        dir,
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndwr",
            "--file-io-mode=mmap",
            "--time=5",
            "run",
        ],
    );
    assert_eq!(code, 1, "{err}");
    one_error_line(&err);
    assert!(
        err.starts_with("plumb: no space left on device: needed 2MiB, available 0B in "),
        "{err}"
    );
    fs.clear();
    // seqwr through mmap maps new, empty files of the full size.
    let (code, _, err) = fileio(
        dir,
        &[
            "--file-num=2",
            "--file-total-size=8M",
            "--file-test-mode=seqwr",
            "--file-io-mode=mmap",
            "--time=5",
            "run",
        ],
    );
    assert_eq!(code, 1, "{err}");
    one_error_line(&err);
    assert!(
        err.contains("no space left on device: needed 8MiB"),
        "{err}"
    );
}
