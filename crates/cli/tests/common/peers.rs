//! The peers the differential tests compare plumb with (fio, sysbench, strace): installed,
//! or the test is skipped with a line, except under CI (`CI=true`), where a missing peer is a
//! failure; and plumb under a peer's name, as its drop-in.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether every one of `tools` is installed; a missing one fails the test under CI (which
/// runs `purpose`) and skips it elsewhere, saying how to install it.
pub fn installed(tools: &[&str], install: &str, purpose: &str) -> bool {
    for tool in tools {
        if !Path::new(tool).exists() {
            assert!(
                !under_ci(),
                "{tool} is missing: CI runs {purpose} ({install})"
            );
            eprintln!("skipped: {tool} is not installed ({install})");
            return false;
        }
    }
    true
}

/// A directory holding a symlink to the plumb binary under a peer's name.
pub struct DropIn {
    dir: TempDir,
    name: &'static str,
}

impl DropIn {
    pub fn named(name: &'static str) -> DropIn {
        let dir = TempDir::new().unwrap();
        let plumb = assert_cmd::cargo::cargo_bin("plumb");
        std::os::unix::fs::symlink(plumb, dir.path().join(name)).unwrap();
        DropIn { dir, name }
    }

    pub fn bin(&self) -> PathBuf {
        self.dir.path().join(self.name)
    }
}

pub const FIO: &str = "/usr/bin/fio";
pub const STRACE: &str = "/usr/bin/strace";

/// fio and strace, for a comparison under strace (see [`installed`]).
pub fn fio_and_strace(purpose: &str) -> bool {
    installed(&[FIO, STRACE], "apt-get install fio strace", purpose)
}

/// strace alone, which plumb's own expectations under strace need.
pub fn strace(purpose: &str) -> bool {
    installed(&[STRACE], "apt-get install strace", purpose)
}

/// fio's and plumb's (as `fio`) requests for the same `args`, each run in a fresh directory
/// under strace tracing `calls` ([`super::strace::requests`]); `None` without fio or
/// strace (see [`installed`]).
pub fn requests_of_both(
    purpose: &str,
    calls: &str,
    args: &[&str],
) -> Option<[Vec<Vec<super::strace::Req>>; 2]> {
    if !fio_and_strace(purpose) {
        return None;
    }
    let drop_in = DropIn::named("fio");
    Some([Path::new(FIO).to_path_buf(), drop_in.bin()].map(|bin| {
        let work = TempDir::new().unwrap();
        let trace = traced_ok(&bin, work.path(), calls, args);
        super::strace::requests(&trace, work.path())
    }))
}

/// The first `n` lines of the one thread's `write_iolog` of `bin args`, run in a fresh
/// directory, stamps taken off.
pub fn logged(bin: &Path, args: &[&str], n: usize) -> Vec<String> {
    let work = TempDir::new().unwrap();
    let mut a = args.to_vec();
    a.push("--write_iolog=log");
    let out = run_named(bin, work.path(), &a);
    assert_eq!(out.code, 0, "{bin:?} {a:?}: {}", out.stderr);
    let log = std::fs::read_to_string(work.path().join("log")).unwrap();
    log.lines()
        .skip(1)
        .take(n)
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

/// [`traced`] with paths shown, for a run that must succeed: its strace log.
pub fn traced_ok(bin: &Path, dir: &Path, calls: &str, args: &[&str]) -> String {
    // Beside `dir`, not in it (the run's files are compared), and named after it: tests
    // running side by side once shared one `../trace`, and one strace truncated another's.
    let name = dir
        .file_name()
        .map_or("run".into(), |n| n.to_string_lossy());
    let log = dir.with_file_name(format!("{name}.strace"));
    let (out, text) = traced(bin, dir, &log, calls, true, args);
    let _ = std::fs::remove_file(&log);
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Run `bin args` in `dir` under `strace -f -qq -e trace=CALLS` (with `-y`, descriptors
/// shown with their paths, when `paths`), the trace written to `log`: the run's output and
/// the trace's text, each call on one line ([`super::strace::whole_calls`]).
pub fn traced<S: AsRef<std::ffi::OsStr>>(
    bin: &Path,
    dir: &Path,
    log: &Path,
    calls: &str,
    paths: bool,
    args: &[S],
) -> (std::process::Output, String) {
    let mut cmd = std::process::Command::new(STRACE);
    cmd.args(["-f", "-qq"]);
    if paths {
        cmd.arg("-y");
    }
    let out = cmd
        .args(["-e", &format!("trace={calls}"), "-o"])
        .arg(log)
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    (out, super::strace::whole_calls(&text))
}

/// What one command printed.
#[derive(Debug, PartialEq)]
pub struct Printed {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `bin args` in `dir` with no input. A binary named `fio` gets `fio` as argv[0], as a
/// shell finding it on PATH gives it: fio names itself in its messages by argv[0] as typed.
pub fn run_named<S: AsRef<std::ffi::OsStr>>(bin: &Path, dir: &Path, args: &[S]) -> Printed {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(bin);
    if bin.ends_with("fio") {
        cmd.arg0("fio");
    }
    let out = cmd
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    Printed {
        // A death by a signal as a shell reports it: 128 + the signal.
        code: out
            .status
            .code()
            .or_else(|| out.status.signal().map(|s| 128 + s))
            .unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// fio, then plumb named `fio`, on `args`, each in a fresh directory holding `files` (name,
/// text). The caller has checked that fio is installed.
pub fn fio_and_drop_in(files: &[(&str, &str)], args: &[&str]) -> (Printed, Printed) {
    let drop_in = DropIn::named("fio");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    for d in [&a, &b] {
        for (name, text) in files {
            std::fs::write(d.path().join(name), text).unwrap();
        }
    }
    let theirs = run_named(Path::new(FIO), a.path(), args);
    let ours = run_named(&drop_in.bin(), b.path(), args);
    (theirs, ours)
}
