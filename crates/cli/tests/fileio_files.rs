//! `plumb fileio` file safety through the real binary: what prepare and cleanup may touch,
//! full disks, unusable directories, files changed behind plumb's back, interruptions.

mod common;
use common::*;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn prepare_refuses_a_file_it_did_not_create() {
    let d = tmp();
    std::fs::write(d.path().join("test_file.2"), b"left by sysbench").unwrap();
    let (code, _, err) = fileio(
        d.path(),
        &["--file-num=4", "--file-total-size=4M", "prepare"],
    );
    assert_eq!(code, 1, "{err}");
    one_error_line(&err);
    assert!(
        err.contains("test_file.2") && err.contains("plumb did not create it"),
        "{err}"
    );
    assert!(err.contains("sysbench fileio cleanup"), "{err}");
    assert_eq!(names(d.path()), ["test_file.2"]);
    assert_eq!(
        std::fs::read(d.path().join("test_file.2")).unwrap(),
        b"left by sysbench"
    );
    // run refuses it too, instead of writing into it.
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=4",
            "--file-total-size=4M",
            "--file-test-mode=seqwr",
            "run",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("test_file.2"), "{err}");
}

#[test]
fn cleanup_removes_exactly_the_manifest_files() {
    let d = tmp();
    let (code, _, err) = fileio(
        d.path(),
        &["--file-num=3", "--file-total-size=3M", "prepare"],
    );
    assert_eq!(code, 0, "{err}");
    std::fs::write(d.path().join("test_file.7"), b"x").unwrap();
    std::fs::write(d.path().join("notes.txt"), b"y").unwrap();
    // Another --file-num at cleanup still removes the set plumb made, and only it.
    let (code, out, err) = fileio(d.path(), &["--file-num=1", "cleanup"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Removing test files..."));
    assert!(err.contains("test_file.7"), "{err}");
    assert_eq!(names(d.path()), ["notes.txt", "test_file.7"]);
}

#[test]
fn disk_full_during_prepare_removes_the_partial_file() {
    let d = tmp();
    // A 6 MiB file size limit: the second 4 MiB file fails half way (EFBIG, as a full disk).
    let mut cmd = scenario(&["fileio", &dir_arg(d.path())])
        .args(&["--file-num=2", "--file-total-size=16M", "prepare"])
        .command();
    with_rlimit(&mut cmd, libc::RLIMIT_FSIZE, 6 << 20);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    one_error_line(&err);
    assert!(
        err.contains("file too large") && err.contains("test_file.0"),
        "{err}"
    );
    assert!(err.contains("removed the partial file"), "{err}");
    assert!(!d.path().join("test_file.0").exists());
    // The manifest no longer lists it; a later prepare starts clean.
    let (code, _, err) = fileio(
        d.path(),
        &["--file-num=2", "--file-total-size=2M", "prepare"],
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn not_enough_space_is_said_before_writing() {
    let d = tmp();
    let (code, _, err) = fileio(
        d.path(),
        &["--file-num=2", "--file-total-size=900T", "prepare"],
    );
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(
        err.contains("no space left on device: needed 900TiB, available"),
        "{err}"
    );
    assert!(names(d.path()).is_empty());
}

#[test]
fn unusable_directories_are_clear_errors() {
    let d = tmp();
    let missing = d.path().join("nope");
    let (code, _, err) = fileio(
        &missing,
        &["--file-num=1", "--file-total-size=1M", "prepare"],
    );
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(err.contains("does not exist"), "{err}");

    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = scenario(&["fileio", &dir_arg(&ro)])
        .args(&["--file-num=1", "--file-total-size=1M", "prepare"])
        .command();
    // root writes anywhere: drop to nobody so the mode bits apply.
    if unsafe { libc::geteuid() } == 0 {
        unsafe {
            cmd.pre_exec(|| {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    one_error_line(&err);
    assert!(
        err.contains("cannot create files in") && err.contains("Permission denied"),
        "{err}"
    );
}

#[test]
fn a_file_truncated_after_prepare_stops_the_run() {
    let d = tmp();
    let (code, _, _) = fileio(
        d.path(),
        &["--file-num=2", "--file-total-size=2M", "prepare"],
    );
    assert_eq!(code, 0);
    std::fs::OpenOptions::new()
        .write(true)
        .open(d.path().join("test_file.1"))
        .unwrap()
        .set_len(4096)
        .unwrap();
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(
        err.contains("test_file.1") && err.contains("truncated"),
        "{err}"
    );
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrd",
            "--time=0.1",
            "prepare",
            "run",
        ],
    );
    assert_eq!(code, 0, "prepare repairs the set: {err}");
}

#[test]
fn run_without_prepare_says_what_to_do() {
    let d = tmp();
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(
        err.contains("no prepared file set") && err.contains("prepare"),
        "{err}"
    );
}

#[test]
fn too_many_files_for_the_descriptor_limit() {
    let d = tmp();
    let (code, _, err) = fileio(
        d.path(),
        &["--file-num=300", "--file-total-size=1200K", "prepare"],
    );
    assert_eq!(code, 0, "{err}");
    let mut cmd = scenario(&["fileio", &dir_arg(d.path())])
        .args(&[
            "--file-num=300",
            "--file-total-size=1200K",
            "--file-test-mode=rndrd",
            "--time=0.1",
            "run",
        ])
        .command();
    with_rlimit(&mut cmd, libc::RLIMIT_NOFILE, 128);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    one_error_line(&err);
    assert!(
        err.contains("too many open files") && err.contains("ulimit -n"),
        "{err}"
    );
}

#[test]
fn direct_io_on_tmpfs_works_or_is_refused_clearly() {
    let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
        return;
    };
    let (code, _, err) = fileio(
        d.path(),
        &["--file-num=2", "--file-total-size=2M", "prepare"],
    );
    assert_eq!(code, 0, "{err}");
    let probe = d.path().join("probe");
    let supported = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    let _ = std::fs::remove_file(&probe);
    use std::os::unix::fs::OpenOptionsExt;
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrd",
            "--file-extra-flags=direct",
            "--events=50",
            "--time=0",
            "run",
        ],
    );
    if supported {
        assert_eq!(code, 0, "{err}");
    } else {
        assert_eq!(code, 1);
        one_error_line(&err);
        assert!(err.contains("refuses O_DIRECT"), "{err}");
    }
}

/// Start `plumb fileio --file-dir=D args...` with stdout piped; the child and a line reader.
fn spawn(d: &Path, args: &[&str]) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let mut child = scenario(&["fileio", &dir_arg(d)]).args(args).spawn();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

#[test]
fn interrupted_prepare_is_finished_by_the_next_prepare() {
    let d = tmp();
    let (mut child, mut out) = spawn(
        d.path(),
        &["--file-num=8", "--file-total-size=512M", "prepare"],
    );
    let mut line = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 || line.starts_with("Creating file test_file.1") {
            break;
        }
    }
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    if status.code() == Some(0) {
        // Finished before the signal landed: nothing to check on this machine.
        return;
    }
    assert_eq!(status.code(), Some(130));
    assert!(d.path().join("plumb-fileio.manifest").exists());
    let (code, out, err) = fileio(
        d.path(),
        &["--file-num=8", "--file-total-size=512M", "prepare"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Reusing existing file test_file.0"), "{out}");
    for i in 0..8 {
        let len = std::fs::metadata(d.path().join(format!("test_file.{i}")))
            .unwrap()
            .len();
        assert_eq!(len, 64 << 20);
    }
    let (code, _, _) = fileio(d.path(), &["cleanup"]);
    assert_eq!(code, 0);
    assert!(names(d.path()).is_empty());
}

#[test]
fn interrupted_run_reports_and_leaves_files_usable() {
    let d = tmp();
    let (code, _, _) = fileio(
        d.path(),
        &["--file-num=2", "--file-total-size=2M", "prepare"],
    );
    assert_eq!(code, 0);
    let (mut child, mut out) = spawn(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrw",
            "--time=20",
            "run",
        ],
    );
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 || line.starts_with("Threads started!") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, libc::SIGINT);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        rest.contains("File operations:") && rest.contains("Run interrupted"),
        "{rest}"
    );
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrd",
            "--time=0.1",
            "run",
            "cleanup",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(names(d.path()).is_empty());
}

#[test]
fn buffers_larger_than_memory_are_refused_before_any_file_is_touched() {
    let d = tmp();
    let (code, _, err) = fileio(
        d.path(),
        &[
            "--file-num=1",
            "--file-total-size=1T",
            "--file-block-size=1G",
            "--file-io-mode=async",
            "--file-async-backlog=1024",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(code, 1);
    one_error_line(&err);
    assert!(err.contains("request buffers would take 1TiB"), "{err}");
    assert!(names(d.path()).is_empty());
}
