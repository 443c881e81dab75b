//! fio's `ioscheduler`, against Debian's fio 3.33, on a loop device made for each test (so
//! no disk of the machine is touched): the job's `exec_prerun` reads the device's
//! `queue/scheduler` while the job holds it.
//!
//! fio 3.33, measured: the scheduler is switched before the prerun and left so after the
//! run; a name the kernel does not take fails the job (`fio: unable to set io scheduler to
//! NAME` on stderr, `fio: pid=N, err=22/file:backend.c:1450, func=iosched_switch, ...` on
//! stdout, no I/O, exit 1); under `disk_util=0` nothing is switched. plumb does the same
//! and puts the scheduler back as the run ends.
//!
//! Needs root and losetup: skipped with a message elsewhere, a failure under CI.

mod common;
use common::fio_text::mask_pid;
use common::loop_dev::LoopDev;
use common::peers::{installed, run_named, DropIn, Printed, FIO};

use std::path::Path;

use tempfile::TempDir;

/// The device's scheduler list, and a scheduler it offers other than its active one.
fn schedulers(lp: &LoopDev) -> (String, Option<String>) {
    let list = std::fs::read_to_string(lp.scheduler_file())
        .unwrap()
        .trim()
        .to_string();
    let other = list
        .split_whitespace()
        .find(|w| !w.starts_with('['))
        .map(str::to_string);
    (list, other)
}

/// `bin` on a read of the loop device with `extra`, in a fresh directory: what it printed,
/// and what its prerun read of the device's scheduler file.
fn run(bin: &Path, lp: &LoopDev, extra: &[&str]) -> (Printed, String) {
    let d = TempDir::new().unwrap();
    let prerun = format!("--exec_prerun=cat {}", lp.scheduler_file().display());
    let file = format!("--filename={}", lp.dev.display());
    let args = [
        &["--name=s", &*file, "--rw=read", "--size=1m", &*prerun][..],
        extra,
    ]
    .concat();
    let out = run_named(bin, d.path(), &args);
    let seen = std::fs::read_to_string(d.path().join("s.prerun.txt"))
        .unwrap_or_default()
        .trim()
        .to_string();
    (out, seen)
}

fn fio() -> bool {
    installed(&[FIO], "apt-get install fio", "the ioscheduler comparison")
}

#[test]
fn the_scheduler_is_switched_for_the_job_and_put_back_after() {
    let Some(lp) = LoopDev::new(8) else { return };
    let (before, other) = schedulers(&lp);
    let name = other.expect("a loop device offers several");
    let arg = format!("--ioscheduler={name}");
    let (out, seen) = run(
        &DropIn::named("fio").bin(),
        &lp,
        &[&arg, "--output-format=terse"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(seen.contains(&format!("[{name}]")), "{seen}");
    assert_eq!(schedulers(&lp).0, before, "plumb puts it back");
    if fio() {
        let (out, theirs) = run(Path::new(FIO), &lp, &[&arg, "--output-format=terse"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(theirs, seen);
        // fio leaves it switched.
        assert!(schedulers(&lp).0.contains(&format!("[{name}]")));
        std::fs::write(lp.scheduler_file(), active_of(&before)).unwrap();
    }
}

fn active_of(list: &str) -> String {
    list.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or("none")
        .to_string()
}

#[test]
fn a_scheduler_the_kernel_does_not_take_fails_the_job_as_in_fio() {
    let Some(lp) = LoopDev::new(8) else { return };
    let (before, _) = schedulers(&lp);
    let said = |p: &Printed| {
        (
            p.code,
            p.stderr.clone(),
            p.stdout
                .lines()
                .filter(|l| l.starts_with("fio: ") || l.contains("(groupid="))
                .map(mask_pid)
                .collect::<Vec<_>>(),
        )
    };
    let (out, seen) = run(&DropIn::named("fio").bin(), &lp, &["--ioscheduler=nosuch"]);
    let ours = said(&out);
    assert_eq!(
        ours,
        (
            1,
            "fio: unable to set io scheduler to nosuch\n".to_string(),
            vec!["fio: pid=P, err=22/file:backend.c:1450, func=iosched_switch, error=Invalid argument".to_string()]
        )
    );
    assert_eq!(seen, "", "the job stopped before its prerun");
    assert_eq!(schedulers(&lp).0, before);
    if fio() {
        let (out, _) = run(Path::new(FIO), &lp, &["--ioscheduler=nosuch"]);
        assert_eq!(said(&out), ours);
    }
}

#[test]
fn nothing_is_switched_without_disk_statistics() {
    let Some(lp) = LoopDev::new(8) else { return };
    let (before, other) = schedulers(&lp);
    let name = other.expect("a loop device offers several");
    let arg = format!("--ioscheduler={name}");
    let extra = [&*arg, "--disk_util=0", "--output-format=terse"];
    let (out, seen) = run(&DropIn::named("fio").bin(), &lp, &extra);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(seen, before);
    if fio() {
        let (_, theirs) = run(Path::new(FIO), &lp, &extra);
        assert_eq!(theirs, before);
    }
}
