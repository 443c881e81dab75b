//! fio's `log_unix_epoch`, `log_alternate_epoch` and `log_alternate_epoch_clock_id`: a
//! job's log lines dated by a clock's time in ms (CLOCK_REALTIME unless the clock id says
//! another), its time at the job's start plus the time since, per request and per window.
//! Checked in plumb named `fio` and, where installed, in Debian's fio 3.33 alike: every
//! line's time lies between the clock read before the run and after it, in order.
//!
//! Without /usr/bin/fio fio's side is skipped with a message, except under CI.

mod common;
use common::peers::{installed, run_named, DropIn, FIO};

use std::path::Path;

use tempfile::TempDir;

fn clock_ms(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec out-parameter.
    assert_eq!(unsafe { libc::clock_gettime(clock, &mut ts) }, 0);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// The times of `bin`'s iops log for `extra`, and the clock's reading before and after.
fn dated(bin: &Path, clock: libc::clockid_t, extra: &[&str]) -> (Vec<u64>, u64, u64) {
    let d = TempDir::new().unwrap();
    let args = [
        &[
            "--name=e",
            "--size=256k",
            "--bs=4k",
            "--rw=read",
            "--write_iops_log=e",
            "--output-format=terse",
        ][..],
        extra,
    ]
    .concat();
    let before = clock_ms(clock);
    let out = run_named(bin, d.path(), &args);
    let after = clock_ms(clock);
    assert_eq!(out.code, 0, "{} {extra:?}: {}", bin.display(), out.stderr);
    let log = std::fs::read_to_string(d.path().join("e_iops.1.log")).unwrap();
    let times = log
        .lines()
        .map(|l| l.split(',').next().unwrap().trim().parse().unwrap())
        .collect();
    (times, before, after)
}

fn check(bin: &Path, clock: libc::clockid_t, extra: &[&str]) {
    let (times, before, after) = dated(bin, clock, extra);
    assert!(!times.is_empty(), "{} {extra:?}", bin.display());
    assert!(
        times.iter().all(|t| (before..=after).contains(t)),
        "{} {extra:?}: {times:?} outside {before}..={after}",
        bin.display()
    );
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

#[test]
fn log_lines_are_dated_by_the_clock_asked_for() {
    let drop_in = DropIn::named("fio");
    let fio = installed(&[FIO], "apt-get install fio", "the log epoch comparison");
    let cases: [(libc::clockid_t, &[&str]); 4] = [
        (libc::CLOCK_REALTIME, &["--log_unix_epoch=1"]),
        (
            libc::CLOCK_MONOTONIC,
            &["--log_unix_epoch=1", "--log_alternate_epoch_clock_id=1"],
        ),
        (
            libc::CLOCK_MONOTONIC,
            &[
                "--log_alternate_epoch=1",
                "--log_alternate_epoch_clock_id=1",
            ],
        ),
        // Windows of 100 ms over a rated second.
        (
            libc::CLOCK_REALTIME,
            &[
                "--log_unix_epoch=1",
                "--log_avg_msec=100",
                "--time_based",
                "--runtime=1",
                "--rate_iops=2000",
            ],
        ),
    ];
    for (clock, extra) in cases {
        check(&drop_in.bin(), clock, extra);
        if fio {
            check(Path::new(FIO), clock, extra);
        }
    }
    // Without the options the times are ms since the job's start.
    let (times, ..) = dated(&drop_in.bin(), libc::CLOCK_REALTIME, &[]);
    assert!(times.iter().all(|&t| t < 60_000), "{times:?}");
}

#[test]
fn a_clock_id_with_no_clock_is_refused() {
    let d = TempDir::new().unwrap();
    let out = run_named(
        &DropIn::named("fio").bin(),
        d.path(),
        &[
            "--name=e",
            "--size=64k",
            "--write_iops_log=e",
            "--log_unix_epoch=1",
            "--log_alternate_epoch_clock_id=99",
        ],
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "plumb: fio option 'log_alternate_epoch_clock_id' (value '99') is not supported yet: clock_gettime knows no such clock here\n"
    );
}
