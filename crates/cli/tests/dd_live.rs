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
        // dd leaves SIGUSR1 alone then, and still warns.
        "POSIXLY_CORRECT=1 DD if=in10k of=OUT bs=1k skip=100",
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
        // The flush still follows the failed write (and succeeds): the same lines.
        format!("{limit} DD if=/dev/zero of=OUT bs=1500 count=2 conv=fsync"),
        format!("{limit} DD if=/dev/zero of=OUT ibs=1500 obs=1500 count=2 conv=fdatasync"),
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

/// One dd, started on its own with `input` (a shell command) piped in and `ops` (OUT its
/// output file), SIGINT at its default action or `ignored` on entry, as a shell would
/// leave it for a command in the foreground or in the background.
fn spawn_direct(
    s: &Setup,
    r: Runner,
    input: &str,
    ops: &[&str],
    case: usize,
    ignored: bool,
) -> (Child, Child) {
    use std::os::unix::process::CommandExt;
    let mut writer = Command::new("sh")
        .args(["-c", input])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut cmd = match r {
        Runner::Gnu => Command::new("dd"),
        Runner::Plumb => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_plumb"));
            c.args(["dd", "--no-history"]);
            c
        }
        Runner::DropIn => Command::new(&s.drop_in),
    };
    let out = format!("out-{case}-{r:?}");
    cmd.args(ops.iter().map(|o| o.replace("OUT", &out)))
        .current_dir(s.dir.path())
        .env("PLUMB_HOME", s.dir.path())
        .env("LC_ALL", "C")
        .env_remove("POSIXLY_CORRECT")
        .stdin(writer.stdout.take().unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let disposition = if ignored {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: only signal(), async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGINT, disposition);
            Ok(())
        });
    }
    (cmd.spawn().unwrap(), writer)
}

/// Whether `pid` has a handler for `sig` (the runner is past its start-up).
fn catches(pid: u32, sig: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|m| m & (1 << (sig - 1)) != 0)
}

/// Wait up to `limit` for `ok`, polling.
fn wait_for(limit: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < limit {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

struct Ended {
    signal: Option<i32>,
    code: Option<i32>,
    lines: String,
    output: Vec<u8>,
    /// From the signal to the end.
    took: Duration,
}

/// Send `sig` (`times` times, back to back) once `ready` says so, then wait (5 s at most)
/// for the runner to end.
fn interrupt(
    s: &Setup,
    (mut child, mut writer): (Child, Child),
    case: usize,
    r: Runner,
    ready: &dyn Fn(u32, &Path) -> bool,
    (sig, times): (i32, usize),
) -> Ended {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id();
    let out = s.out(case, r);
    assert!(
        wait_for(Duration::from_secs(10), || ready(pid, &out)),
        "{r:?} never got ready"
    );
    let sent = std::time::Instant::now();
    for _ in 0..times {
        // SAFETY: kill on a child of ours that has not been waited for.
        unsafe { libc::kill(pid as i32, sig) };
    }
    let ended = wait_for(Duration::from_secs(5), || {
        child.try_wait().unwrap().is_some()
    });
    let took = sent.elapsed();
    if !ended {
        let _ = child.kill();
    }
    let _ = writer.kill();
    let _ = writer.wait();
    let o = child.wait_with_output().unwrap();
    assert!(ended, "{r:?} still ran 5 s after signal {sig}");
    Ended {
        signal: o.status.signal(),
        code: o.status.code(),
        lines: common::dd_stats_masked(&String::from_utf8_lossy(&o.stderr)),
        output: std::fs::read(out).unwrap_or_default(),
        took,
    }
}

/// SIGINT while the copy waits on a pipe: dd's statistics at once (what it has read and
/// written, none of a block it was still gathering), and it dies of the signal; what it
/// wrote stays. plumb, under both names, the same (before: nothing until data came).
#[test]
fn sigint_prints_the_statistics_at_once_and_dies_of_it() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    let wrote = |n: u64| {
        move |pid: u32, out: &Path| {
            catches(pid, libc::SIGINT) && std::fs::metadata(out).is_ok_and(|m| m.len() == n)
        }
    };
    // A copy gathering into obs: nothing to see but the handler, then time to read.
    let settled = |pid: u32, _: &Path| {
        catches(pid, libc::SIGINT) && {
            std::thread::sleep(Duration::from_millis(1500));
            true
        }
    };
    type Ready = Box<dyn Fn(u32, &Path) -> bool>;
    let cases: Vec<(&str, &[&str], Ready)> = vec![
        (
            "printf abc; exec sleep 30",
            &["of=OUT", "bs=1k"],
            Box::new(wrote(3)),
        ),
        (
            "printf abc; exec sleep 30",
            &["of=OUT", "bs=1k", "status=noxfer"],
            Box::new(wrote(3)),
        ),
        (
            "printf abc; exec sleep 30",
            &["of=OUT", "bs=1k", "status=none"],
            Box::new(wrote(3)),
        ),
        ("exec sleep 30", &["of=OUT"], Box::new(wrote(0))),
        (
            "printf abc; exec sleep 30",
            &["of=OUT", "ibs=1", "obs=1k", "conv=fsync"],
            Box::new(settled),
        ),
        // Still opening its input (a FIFO without a writer): the statistics of nothing.
        ("exec sleep 30", &["if=fifo", "of=OUT"], Box::new(settled)),
    ];
    let fifo =
        std::ffi::CString::new(s.dir.path().join("fifo").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    for (case, (input, ops, ready)) in cases.iter().enumerate() {
        let runs: Vec<Ended> = RUNNERS
            .iter()
            .map(|&r| {
                let p = spawn_direct(&s, r, input, ops, case, false);
                interrupt(&s, p, case, r, ready.as_ref(), (libc::SIGINT, 1))
            })
            .collect();
        let gnu = &runs[0];
        assert_eq!(
            gnu.signal,
            Some(libc::SIGINT),
            "GNU dd {ops:?}: {}",
            gnu.lines
        );
        if case == 0 {
            assert_eq!(
                gnu.lines,
                "0+1 records in\n0+1 records out\n3 bytes copied, T s, R"
            );
            assert_eq!(gnu.output, b"abc");
        }
        for (r, e) in RUNNERS.iter().zip(&runs).skip(1) {
            let what = format!("{r:?} {ops:?}");
            assert_eq!(e.signal, gnu.signal, "{what}: dies of SIGINT\n{}", e.lines);
            assert_eq!(e.code, gnu.code, "{what}");
            assert_eq!(e.lines, gnu.lines, "{what}: dd's lines");
            assert_eq!(e.output, gnu.output, "{what}: output bytes");
            // At once: the harness stopped a blocked copy only after a second before.
            assert!(
                e.took < Duration::from_millis(900),
                "{what}: took {:?}",
                e.took
            );
        }
    }
}

/// SIGINT ignored on entry (a shell's background job): dd leaves it ignored and copies on
/// to the end; plumb the same.
#[test]
fn sigint_ignored_on_entry_stays_ignored() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    let ready = |pid: u32, out: &Path| {
        // Past start-up (its SIGUSR1 handler is in), and the first record written.
        catches(pid, libc::SIGUSR1) && std::fs::metadata(out).is_ok_and(|m| m.len() == 3)
    };
    for r in RUNNERS {
        let p = spawn_direct(
            &s,
            r,
            "printf abc; sleep 1; printf de",
            &["of=OUT", "bs=1k"],
            0,
            true,
        );
        let e = interrupt(&s, p, 0, r, &ready, (libc::SIGINT, 1));
        assert_eq!(e.code, Some(0), "{r:?}: {}", e.lines);
        assert_eq!(
            e.lines, "0+2 records in\n0+2 records out\n5 bytes copied, T s, R",
            "{r:?}"
        );
        assert_eq!(e.output, b"abcde", "{r:?}");
    }
}

/// Two SIGINTs at once (`timeout -s INT` signals the process, then its group) are one
/// interrupt: the statistics once, then death by SIGINT.
#[test]
fn two_sigints_at_once_are_one_interrupt() {
    let s = setup();
    let ready = |pid: u32, out: &Path| {
        catches(pid, libc::SIGINT) && std::fs::metadata(out).is_ok_and(|m| m.len() == 3)
    };
    for r in [Runner::Plumb, Runner::DropIn] {
        let p = spawn_direct(
            &s,
            r,
            "printf abc; exec sleep 30",
            &["of=OUT", "bs=1k"],
            0,
            false,
        );
        let e = interrupt(&s, p, 0, r, &ready, (libc::SIGINT, 2));
        assert_eq!(e.signal, Some(libc::SIGINT), "{r:?}: {}", e.lines);
        assert_eq!(
            e.lines, "0+1 records in\n0+1 records out\n3 bytes copied, T s, R",
            "{r:?}"
        );
        assert_eq!(e.output, b"abc", "{r:?}");
    }
}

/// `plumb report` of a saved dd run prints what the run printed, where it printed it: the
/// warnings and the statistics SIGUSR1 asked for before dd's last lines, and no last lines
/// where dd exits without them. A record from before those were kept still reads (its
/// last lines alone).
#[test]
fn a_saved_run_replays_what_dd_printed_while_it_ran() {
    let s = setup();
    std::fs::write(s.dir.path().join("in10k"), vec![5u8; 10_240]).unwrap();
    let scripts = [
        "(printf abc; sleep 1; printf def) | DD of=OUT bs=1M count=2 --json=OUT.json",
        "DD if=in10k of=OUT bs=1k skip=100 --json=OUT.json",
        "DD if=in10k of=OUT bs=1k skip=100 status=none --json=OUT.json",
        "DD if=/dev/zero of=/dev/full count=3 conv=fsync --json=OUT.json",
        "(sleep 2; printf hi) | DD of=OUT --json=OUT.json & echo $! > OUT.pid; wait $!",
    ];
    let children: Vec<Child> = scripts
        .iter()
        .enumerate()
        .map(|(case, script)| s.spawn(script, case, Runner::Plumb))
        .collect();
    let pid = catching_usr1(&s.out(4, Runner::Plumb).with_extension("pid"));
    std::thread::sleep(Duration::from_millis(500));
    assert!(Command::new("kill")
        .args(["-USR1", &pid])
        .status()
        .unwrap()
        .success());
    for (case, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output().unwrap();
        let live = String::from_utf8_lossy(&o.stderr).into_owned();
        let json = s.out(case, Runner::Plumb).with_extension("json");
        let replay = |file: &Path| {
            let r = Command::new(env!("CARGO_BIN_EXE_plumb"))
                .arg("report")
                .arg(file)
                .env("PLUMB_HOME", s.dir.path())
                .env("LC_ALL", "C")
                .output()
                .unwrap();
            assert_eq!(
                r.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&r.stderr)
            );
            String::from_utf8_lossy(&r.stdout).into_owned()
        };
        let what = scripts[case];
        assert_eq!(replay(&json), live, "{what}");
        let first = live.lines().next().unwrap_or("");
        match case {
            0 => assert_eq!(
                first,
                "dd: warning: partial read (3 bytes); suggest iflag=fullblock"
            ),
            1 => assert_eq!(first, "dd: in10k: cannot skip to specified offset"),
            2 => assert!(live.starts_with("plumb:\n"), "{live}"),
            3 => assert!(
                live.starts_with(
                    "dd: writing to '/dev/full': No space left on device\n\
                     dd: fsync failed for '/dev/full': Invalid argument\n\nplumb:\n"
                ),
                "{live}"
            ),
            _ => assert!(
                common::dd_stats_masked(&live).starts_with(
                    "0+0 records in\n0+0 records out\n0 bytes copied, T s, R\n0+1 records in"
                ),
                "{live}"
            ),
        }
        // The same record as an older plumb wrote it: no `printed`.
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let workload = doc["groups"][0]["jobs"][0]["workload"]
            .as_object_mut()
            .expect("the dd settings");
        let printed = workload.remove("printed");
        // Every case printed something besides its last lines, or none (case 3); under
        // status=none the warning is kept though not printed.
        assert!(printed.is_some(), "{what}");
        let old = json.with_extension("old.json");
        std::fs::write(&old, doc.to_string()).unwrap();
        let text = replay(&old);
        if case == 0 || case == 1 {
            // The warning line alone is missing.
            assert_eq!(text, live.split_once('\n').unwrap().1, "{what}");
        }
    }
}

/// SIGTERM: dd does not catch it, and dies of it at once with nothing said; so does plumb
/// as `dd`. `plumb dd` prints dd's lines and its own report first, then dies of it too.
#[test]
fn sigterm_kills_the_drop_in_as_it_kills_dd() {
    if !common::peer("dd") {
        eprintln!("skipped: GNU dd missing");
        return;
    }
    let s = setup();
    let ready = |pid: u32, out: &Path| {
        catches(pid, libc::SIGUSR1) && std::fs::metadata(out).is_ok_and(|m| m.len() == 3)
    };
    for r in RUNNERS {
        let p = spawn_direct(
            &s,
            r,
            "printf abc; exec sleep 30",
            &["of=OUT", "bs=1k"],
            0,
            false,
        );
        let e = interrupt(&s, p, 0, r, &ready, (libc::SIGTERM, 1));
        assert_eq!(e.signal, Some(libc::SIGTERM), "{r:?}: {}", e.lines);
        assert_eq!(e.output, b"abc", "{r:?}");
        let want = match r {
            Runner::Plumb => "0+1 records in\n0+1 records out\n3 bytes copied, T s, R",
            _ => "",
        };
        assert_eq!(e.lines, want, "{r:?}");
    }
}
