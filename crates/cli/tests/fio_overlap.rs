//! fio's `serialize_overlap` against Debian's fio 3.33: a request that overlaps one in
//! flight waits for completions before it is submitted (backend.c io_u_submit returns
//! FIO_Q_BUSY while in_flight_overlap holds). On a file of one block every request
//! overlaps every other, so with the option nothing may be in flight when a request is
//! submitted; without it the queue fills.
//!
//! What is in flight is counted from strace: each io_submit adds what it returns, each
//! io_getevents takes away what it returns (plumb's own reaping from the ring in user space
//! is turned off, `userspace_reap=0`, fio's default, so every completion shows).

mod common;
use common::peers::{fio_and_strace, traced_ok, DropIn, FIO};

use std::path::Path;
use tempfile::TempDir;

/// The most requests in flight when one was submitted, and how many submissions.
fn in_flight_at_submit(bin: &Path, serialize: &str) -> (u64, u64) {
    let work = TempDir::new().unwrap();
    let so = format!("--serialize_overlap={serialize}");
    let args = [
        "--name=s",
        "--ioengine=libaio",
        "--userspace_reap=0",
        "--iodepth=8",
        "--direct=1",
        "--rw=randwrite",
        "--norandommap",
        "--size=4k",
        "--bs=4k",
        "--io_size=64k",
        &so,
    ];
    let text = traced_ok(bin, work.path(), "io_submit,io_getevents", &args);
    let (mut n, mut worst, mut submits) = (0i64, 0i64, 0);
    for line in text.lines() {
        let Some(r) = line
            .rsplit_once(") = ")
            .and_then(|(_, r)| r.trim().parse::<i64>().ok())
        else {
            continue;
        };
        if line.contains("io_submit(") {
            worst = worst.max(n);
            n += r;
            submits += 1;
        } else if line.contains("io_getevents(") {
            n -= r;
        }
    }
    (worst as u64, submits)
}

#[test]
fn serialize_overlap_submits_nothing_over_a_request_in_flight() {
    if !fio_and_strace("the serialize_overlap comparison") {
        return;
    }
    let drop_in = DropIn::named("fio");
    for (who, bin) in [("fio", Path::new(FIO)), ("plumb", &drop_in.bin())] {
        let (worst, submits) = in_flight_at_submit(bin, "1");
        assert_eq!((worst, submits), (0, 16), "{who} with serialize_overlap");
        let (worst, submits) = in_flight_at_submit(bin, "0");
        assert!(worst > 0 && submits > 0, "{who} without: {worst} {submits}");
    }
}
