//! What dd prints while it copies, against GNU dd 9.1 on the same pipelines: the statistics
//! on SIGUSR1 (and the copy carries on), the partial-read warning, the skip warnings.
//! GNU dd, `plumb dd` and plumb run as `dd` (a symlink) run side by side, so the sleeps in
//! the pipelines are paid once.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
enum Runner {
    Gnu,
    Plumb,
    DropIn,
}

const RUNNERS: [Runner; 3] = [Runner::Gnu, Runner::Plumb, Runner::DropIn];

struct Setup {
    dir: tempfile::TempDir,
    drop_in: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let drop_in = dir.path().join("bin/dd");
    std::fs::create_dir_all(drop_in.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_plumb"), &drop_in).unwrap();
    Setup { dir, drop_in }
}

impl Setup {
    fn dd(&self, r: Runner) -> String {
        match r {
            Runner::Gnu => "dd".to_string(),
            Runner::Plumb => format!("{} dd --no-history", env!("CARGO_BIN_EXE_plumb")),
            Runner::DropIn => self.drop_in.display().to_string(),
        }
    }
    fn out(&self, case: usize, r: Runner) -> PathBuf {
        self.dir.path().join(format!("out-{case}-{r:?}"))
    }
    /// `sh -c` on `script` in the test's directory, with DD the runner's dd and OUT its
    /// own output file.
    fn spawn(&self, script: &str, case: usize, r: Runner) -> Child {
        let script = script
            .replace("DD", &self.dd(r))
            // Relative: the messages that name it read the same for every runner.
            .replace("OUT", &format!("out-{case}-{r:?}"));
        Command::new("sh")
            .args(["-c", &script])
            .current_dir(self.dir.path())
            .env("PLUMB_HOME", self.dir.path())
            .env("LC_ALL", "C")
            .env_remove("POSIXLY_CORRECT")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

struct Seen {
    code: Option<i32>,
    lines: String,
    output: Vec<u8>,
}

fn finish(child: Child, out: &Path) -> Seen {
    let o = child.wait_with_output().unwrap();
    Seen {
        code: o.status.code(),
        // Each runner writes its own file: its name reads OUT in the lines compared.
        lines: common::dd_stats_masked(&String::from_utf8_lossy(&o.stderr))
            .replace(&*out.file_name().unwrap().to_string_lossy(), "OUT"),
        output: std::fs::read(out).unwrap_or_default(),
    }
}

/// Run every script under every runner at once, and compare plumb's runs with GNU's.
fn compare(s: &Setup, scripts: &[&str], during: impl FnOnce()) -> Vec<Seen> {
    let mut children = Vec::new();
    for (case, script) in scripts.iter().enumerate() {
        for r in RUNNERS {
            children.push((case, r, s.spawn(script, case, r)));
        }
    }
    during();
    let mut gnu = Vec::new();
    for (case, r, child) in children {
        let seen = finish(child, &s.out(case, r));
        match r {
            Runner::Gnu => gnu.push(seen),
            _ => {
                let g = &gnu[case];
                let what = format!("{r:?}: {}", scripts[case]);
                assert_eq!(seen.code, g.code, "{what}: exit\n{}", seen.lines);
                assert_eq!(seen.lines, g.lines, "{what}: dd's lines");
                assert_eq!(seen.output, g.output, "{what}: output bytes");
            }
        }
    }
    gnu
}

/// The pid in `pid_file` once that process has a SIGUSR1 handler (before, the signal would
/// kill it); the input's writer sleeps long past this.
fn catching_usr1(pid_file: &Path) -> String {
    for _ in 0..200 {
        let pid = std::fs::read_to_string(pid_file).unwrap_or_default();
        let caught = std::fs::read_to_string(format!("/proc/{}/status", pid.trim()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (10 - 1)) != 0 {
            return pid.trim().to_string();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never caught SIGUSR1", pid_file.display());
}

/// SIGUSR1 while the copy waits on a pipe: dd's three lines as they stand, then the copy
/// goes on and ends as usual (status=noxfer: the records only; status=none: nothing).
#[test]
fn sigusr1_prints_the_statistics_and_the_copy_goes_on() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    // Each run leaves its dd's pid next to its output, for the signal.
    let scripts = [
        "(sleep 3; printf hi) | DD of=OUT & echo $! > OUT.pid; wait $!",
        "(sleep 3; printf hi) | DD of=OUT status=noxfer & echo $! > OUT.pid; wait $!",
        "(sleep 3; printf hi) | DD of=OUT status=none & echo $! > OUT.pid; wait $!",
        "(printf abc; sleep 3; printf de) | DD of=OUT bs=2 & echo $! > OUT.pid; wait $!",
    ];
    let pids: Vec<PathBuf> = (0..scripts.len())
        .flat_map(|case| RUNNERS.map(|r| s.out(case, r).with_extension("pid")))
        .collect();
    let gnu = compare(&s, &scripts, || {
        let running: Vec<String> = pids.iter().map(|p| catching_usr1(p)).collect();
        // Time for every copy to start and take what its input has so far.
        std::thread::sleep(Duration::from_millis(1000));
        for pid in &running {
            let sent = Command::new("kill").args(["-USR1", pid]).status().unwrap();
            assert!(sent.success(), "{pid} is running");
        }
    });
    assert_eq!(gnu[0].code, Some(0));
    assert_eq!(
        gnu[0].lines,
        "0+0 records in\n0+0 records out\n0 bytes copied, T s, R\n\
         0+1 records in\n0+1 records out\n2 bytes copied, T s, R"
    );
    assert_eq!(gnu[0].output, b"hi");
    assert_eq!(gnu[2].lines, "");
}

/// dd's partial-read warning: bs= with count= (or skip=, or direct I/O) and no fullblock,
/// once, when the read after a short one brings data.
#[test]
fn a_partial_read_warns_as_dd_does() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    let scripts = [
        "(printf abc; sleep 1; printf def) | DD of=OUT bs=1M count=2",
        "(printf abc; sleep 1; printf d; sleep 1; printf ef) | DD of=OUT bs=1M count=3",
        "(printf abc; sleep 1; printf def) | DD of=OUT bs=1M count=2 iflag=fullblock",
        "(printf abc; sleep 1; printf def) | DD of=OUT bs=1M",
        "(printf abc; sleep 1; printf def) | DD of=OUT ibs=1M obs=1M count=2",
        "(printf abc; sleep 1; printf def) | DD of=OUT bs=1M count=2 status=none",
        // skip= reads a record per read call: 3 bytes of 4 skipped, then a short record.
        "(printf abc; sleep 1; printf defgh) | DD of=OUT bs=4 skip=1 count=2",
    ];
    let gnu = compare(&s, &scripts, || {});
    assert_eq!(
        gnu[0].lines.lines().next(),
        Some("dd: warning: partial read (3 bytes); suggest iflag=fullblock")
    );
    assert!(!gnu[2].lines.contains("warning"));
}

/// skip= past the end of the input: dd's warning, the copy of nothing, exit 0.
#[test]
fn skipping_past_the_end_warns_as_dd_does() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    std::fs::write(s.dir.path().join("in10k"), vec![5u8; 10_240]).unwrap();
    std::fs::write(s.dir.path().join("in 10k"), vec![5u8; 10_240]).unwrap();
    let scripts = [
        "DD if=in10k of=OUT bs=1k skip=100",
        "DD if='in 10k' of=OUT bs=1k skip=11",
        "DD if=in10k of=OUT bs=1k skip=10",
        "DD if=in10k of=OUT bs=1k skip=10241 iflag=skip_bytes",
        "DD if=in10k of=OUT bs=1k skip=100 status=none",
        "DD of=OUT bs=1k skip=100 < in10k",
        "DD if=in10k of=OUT bs=1k skip=9223372036854775807",
        "cat in10k | DD of=OUT bs=1k skip=100",
        "cat in10k | DD of=OUT bs=1k skip=10",
        "cat in10k | DD of=OUT bs=1k skip=9",
        "cat in10k | DD of=OUT bs=1k skip=9001 iflag=skip_bytes",
    ];
    let gnu = compare(&s, &scripts, || {});
    assert_eq!(
        gnu[0].lines.lines().next(),
        Some("dd: in10k: cannot skip to specified offset")
    );
    assert_eq!(
        gnu[7].lines.lines().next(),
        Some("dd: 'standard input': cannot skip to specified offset")
    );
}

/// A write the file size limit cuts short: dd's line ("writing to" for a whole obs-sized
/// block of two buffers, "error writing" otherwise), the partial record dd counts, exit 1.
#[test]
fn write_errors_read_as_dd_reads_them() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    // dash and bash count ulimit -f in 512- or 1024-byte blocks: at least 1024 bytes, so
    // the first 1500-byte write is cut (or fails) the same way for both dds.
    let limit = "trap '' XFSZ; ulimit -f 2;";
    let scripts = [
        format!("{limit} DD if=/dev/zero of=OUT bs=1500 count=2"),
        format!("{limit} DD if=/dev/zero of=OUT ibs=1500 obs=1500 count=2"),
        format!("{limit} DD if=/dev/zero of=OUT ibs=1000 obs=4000 count=2"),
    ];
    let scripts: Vec<&str> = scripts.iter().map(String::as_str).collect();
    let gnu = compare(&s, &scripts, || {});
    assert_eq!(gnu[0].code, Some(1));
    assert!(
        gnu[0].lines.starts_with("dd: error writing '"),
        "{}",
        gnu[0].lines
    );
    assert!(
        gnu[1].lines.starts_with("dd: writing to '"),
        "{}",
        gnu[1].lines
    );
}

/// status=none: plumb as `dd` prints nothing at all; `plumb dd` prints its own section
/// only, without the blank line that parts it from dd's lines.
#[test]
fn status_none_prints_no_dd_lines() {
    let s = setup();
    std::fs::write(s.dir.path().join("in"), vec![1u8; 4096]).unwrap();
    for r in [Runner::Plumb, Runner::DropIn] {
        let o = s
            .spawn("DD if=in of=OUT bs=1k status=none", 0, r)
            .wait_with_output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{r:?}: {err}");
        match r {
            Runner::DropIn => assert_eq!(err, "", "{r:?}"),
            _ => assert!(
                err.is_empty() || err.starts_with("plumb:\n"),
                "{r:?}: {err}"
            ),
        }
    }
}

/// `dd --version` (any prefix) through the symlink: one line in dd's form, exit 0.
#[test]
fn the_drop_in_answers_version() {
    let s = setup();
    for flag in ["--version", "--vers"] {
        let o = Command::new(&s.drop_in).arg(flag).output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out, format!("dd (plumb) {}\n", env!("CARGO_PKG_VERSION")));
    }
}
