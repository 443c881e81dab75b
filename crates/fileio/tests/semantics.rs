//! Exact request streams, checked with the recording engine under the real harness.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::recording::{self, Rec};
use plumb_core::{run, RunConfig, RunOutcome, StopCause, StopFlag};
use plumb_fileio::access::Access;
use plumb_fileio::engine::null;
use plumb_fileio::spec::{FileioSpec, Fill, SyncPolicy};
use plumb_fileio::workload::{FileioWorkload, FSYNC, READ, WRITE};

fn spec(access: Access, files: u32, total: u64, block: u64) -> FileioSpec {
    FileioSpec {
        access: Some(access),
        num_files: files,
        total_size: total,
        block_size: block,
        ..Default::default()
    }
}

fn events(n: u64, threads: usize) -> RunConfig {
    RunConfig {
        threads,
        time_limit: None,
        event_limit: n,
        ..Default::default()
    }
}

/// Run with the recording engine; returns the outcome and the operations seen.
fn record(s: FileioSpec, queued: bool, cfg: &RunConfig) -> (RunOutcome, Vec<Rec>) {
    let s = FileioSpec {
        threads: cfg.threads,
        engine: if queued {
            &recording::QUEUED
        } else {
            &recording::BLOCKING
        },
        ..s
    };
    let (w, log) = recording::workload(s, None);
    let out = run(Arc::new(w), cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    let ops = log.lock().unwrap().clone();
    (out, ops)
}

fn count(out: &RunOutcome, kind: usize) -> u64 {
    out.threads.iter().map(|t| t.kinds[kind].count()).sum()
}

fn counter(out: &RunOutcome, i: usize) -> u64 {
    out.threads.iter().map(|t| t.counters[i]).sum()
}

fn letters(ops: &[Rec]) -> String {
    ops.iter()
        .filter(|o| !matches!(o, Rec::Done(_)))
        .map(|o| match o {
            Rec::Read(_) => 'R',
            Rec::Write(_) => 'W',
            Rec::Sync(f) => char::from(b'a' + *f as u8),
            Rec::Trim(_) => 'T',
            Rec::Done(_) => unreachable!(),
        })
        .collect()
}

#[test]
fn periodic_fsync_is_one_event_per_file_and_end_fsync_follows() {
    let s = FileioSpec {
        sync: SyncPolicy {
            every_requests: 10,
            ..Default::default()
        },
        ..spec(Access::rand_write(), 4, 4 << 20, 4096)
    };
    let (out, ops) = record(s, false, &events(100, 1));
    // Periods of 10 writes + 4 fsyncs: 7 periods (98 slots) + 2 writes; then the end fsync.
    let period = format!("{}abcd", "W".repeat(10));
    assert_eq!(letters(&ops), format!("{}WWabcd", period.repeat(7)));
    assert_eq!(count(&out, WRITE), 72);
    assert_eq!(count(&out, FSYNC), 28);
    assert_eq!(counter(&out, 1), 72 * 4096);
    assert_eq!(counter(&out, 2), 4, "end fsyncs are counted apart");
    assert_eq!(out.cause, StopCause::Completed);
}

#[test]
fn fsync_all_syncs_each_write_inside_its_event() {
    let s = FileioSpec {
        sync: SyncPolicy::EACH_WRITE,
        ..spec(Access::rand_write(), 2, 2 << 20, 4096)
    };
    let (out, ops) = record(s, false, &events(50, 1));
    assert_eq!(ops.len(), 100);
    for pair in ops.chunks(2) {
        match pair {
            [Rec::Write(io), Rec::Sync(f)] => assert_eq!(io.file, *f),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(count(&out, WRITE), 50);
    assert_eq!(count(&out, FSYNC), 50, "fsyncs recorded on their own");
    assert_eq!(counter(&out, 2), 0, "no end fsync in this policy");
}

#[test]
fn read_modes_never_fsync() {
    let (out, ops) = record(
        spec(Access::rand_read(), 3, 3 << 20, 16384),
        false,
        &events(500, 1),
    );
    assert!(ops
        .iter()
        .all(|o| matches!(o, Rec::Read(io) if io.len == 16384)));
    assert_eq!(count(&out, READ), 500);
    assert_eq!(counter(&out, 0), 500 * 16384);
    assert_eq!(counter(&out, 2), 0);
}

#[test]
fn rndrw_interleave_and_fsync_counts() {
    let s = FileioSpec {
        sync: SyncPolicy {
            every_requests: 100,
            ..Default::default()
        },
        ..spec(Access::rand_mix(1.5), 8, 8 << 20, 4096)
    };
    let (out, ops) = record(s, false, &events(10_800, 1));
    // 10800 slots in periods of 108: 100 periods, 10000 requests, 800 fsyncs.
    assert_eq!(count(&out, READ) + count(&out, WRITE), 10_000);
    assert_eq!(count(&out, FSYNC), 800);
    assert_eq!(count(&out, READ), 6000);
    assert_eq!(count(&out, WRITE), 4000);
    assert_eq!(&letters(&ops)[..12], "RWRWRRWRWRRW");
}

#[test]
fn rndrw_writes_carry_the_fill_not_what_reads_brought_in() {
    // The recording engine fills read buffers with file bytes and refuses a write that sends
    // them back: each write must hold the fill (zeros, or fresh random data), blocking and
    // queued loops alike.
    for fill in [Fill::Zero, Fill::Random] {
        for queued in [false, true] {
            let s = FileioSpec {
                fill,
                queue_depth: 4,
                ..spec(Access::rand_mix(1.5), 4, 4 << 20, 4096)
            };
            let (out, _) = record(s, queued, &events(500, 2));
            assert!(count(&out, WRITE) > 100, "{fill:?} queued={queued}");
        }
    }
}

#[test]
fn threads_share_the_sequential_cursor() {
    let s = FileioSpec {
        sync: SyncPolicy::NONE,
        ..spec(Access::seq_read(), 2, 2 * 64 * 4096, 4096)
    };
    // 128 blocks per pass, 3 threads, 1280 events: every block read exactly 10 times.
    let (_, ops) = record(s, false, &events(1280, 3));
    let mut seen: HashMap<(u32, u64), u32> = HashMap::new();
    for o in &ops {
        let Rec::Read(io) = o else { panic!("{o:?}") };
        *seen.entry((io.file, io.offset)).or_default() += 1;
    }
    assert_eq!(seen.len(), 128);
    assert!(seen.values().all(|&n| n == 10), "{seen:?}");
}

#[test]
fn merged_requests_join_sequential_blocks() {
    let s = FileioSpec {
        merged_requests: 8,
        sync: SyncPolicy {
            every_requests: 0,
            ..Default::default()
        },
        ..spec(Access::seq_write(), 1, 100 * 4096, 4096)
    };
    let (_, ops) = record(s, false, &events(4, 1));
    let got: Vec<(u64, u32)> = ops
        .iter()
        .filter_map(|o| match o {
            Rec::Write(io) => Some((io.offset, io.len)),
            _ => None,
        })
        .collect();
    assert_eq!(
        got,
        [(0, 32768), (32768, 32768), (65536, 32768), (98304, 32768)]
    );
}

#[test]
fn queued_engine_keeps_every_request_and_fsync() {
    let s = FileioSpec {
        sync: SyncPolicy {
            every_requests: 10,
            ..Default::default()
        },
        queue_depth: 8,
        ..spec(Access::rand_write(), 4, 4 << 20, 4096)
    };
    let (out, ops) = record(s, true, &events(100, 1));
    assert_eq!(count(&out, WRITE), 72);
    assert_eq!(count(&out, FSYNC), 28);
    assert_eq!(counter(&out, 1), 72 * 4096);
    assert_eq!(counter(&out, 2), 4);
    assert_eq!(
        ops.iter().filter(|o| matches!(o, Rec::Write(_))).count(),
        72
    );
    // The same stream as the blocking engine: fsync rounds after every 10 writes.
    assert!(letters(&ops).starts_with("WWWWWWWWWWabcd"));
}

#[test]
fn queued_reads_complete_out_of_order_without_loss() {
    let s = FileioSpec {
        queue_depth: 16,
        ..spec(Access::rand_read(), 2, 2 << 20, 4096)
    };
    let (out, ops) = record(s, true, &events(1000, 2));
    let queued = ops.iter().filter(|o| matches!(o, Rec::Read(_))).count();
    let done = ops.iter().filter(|o| matches!(o, Rec::Done(_))).count();
    assert_eq!((queued, done), (1000, 1000));
    assert_eq!(count(&out, READ), 1000);
    assert_eq!(counter(&out, 0), 1000 * 4096);
}

#[test]
fn time_limit_stops_the_null_engine() {
    let s = FileioSpec {
        engine: &null::DEF,
        ..spec(Access::rand_mix(1.5), 4, 4 << 20, 4096)
    };
    let w = FileioWorkload::with_engine(s, None);
    let cfg = RunConfig {
        time_limit: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let out = run(Arc::new(w), &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    assert_eq!(out.cause, StopCause::Time);
    assert!(count(&out, READ) > 1000);
    assert!(out.elapsed >= Duration::from_millis(200));
}

#[test]
fn queued_fsync_waits_for_writes_to_its_file() {
    let s = FileioSpec {
        sync: SyncPolicy {
            every_requests: 7,
            ..Default::default()
        },
        queue_depth: 16,
        ..spec(Access::rand_write(), 3, 3 << 20, 4096)
    };
    let (_, ops) = record(s, true, &events(500, 1));
    // Every write queued before a fsync of its file has completed when the fsync starts.
    let mut pending: HashMap<(u32, u64), u32> = HashMap::new();
    let mut syncs = 0;
    for o in &ops {
        match o {
            Rec::Write(io) => *pending.entry((io.file, io.offset)).or_default() += 1,
            Rec::Done(io) => *pending.get_mut(&(io.file, io.offset)).unwrap() -= 1,
            Rec::Sync(f) => {
                syncs += 1;
                assert!(
                    pending.iter().all(|(k, n)| k.0 != *f || *n == 0),
                    "fsync of file {f} with writes to it in flight"
                );
            }
            Rec::Read(_) | Rec::Trim(_) => panic!(),
        }
    }
    assert!(syncs > 100);
}

#[test]
fn a_failed_async_request_ends_the_run_with_its_error_not_a_hang() {
    let s = FileioSpec {
        threads: 1,
        engine: &recording::QUEUED,
        queue_depth: 16,
        ..spec(Access::rand_read(), 2, 2 << 20, 4096)
    };
    let (w, _) = recording::workload(s, Some(40));
    let e = run(
        Arc::new(w),
        &events(1000, 1),
        &StopFlag::default(),
        &mut |_| {},
    )
    .expect_err("the failed request ends the run");
    let msg = e.to_string();
    assert!(
        msg.contains("read from test_file.") && msg.contains("Input/output error"),
        "{msg}"
    );
}

/// Writes that find the disk full fail the run with the first one's error; each is counted
/// as issued but not timed (fio's count), and kept for the front end, the ones in flight
/// behind the first included.
#[test]
fn writes_that_find_the_disk_full_are_counted_and_kept() {
    use plumb_fileio::workload::{COUNTERS_QUEUED, WRITES_FULL};
    let s = FileioSpec {
        threads: 1,
        engine: &recording::QUEUED,
        queue_depth: 4,
        ..spec(Access::rand_write(), 1, 1 << 20, 4096)
    };
    let (w, log) = recording::full_from(s, 11);
    let w = Arc::new(w);
    let e = run(
        w.clone(),
        &events(200, 1),
        &StopFlag::default(),
        &mut |_| {},
    )
    .expect_err("a full disk fails the run");
    let plumb_core::harness::HarnessError::Failed { error, partial } = e else {
        panic!("not a failure of the run: {e}");
    };
    assert!(
        error
            .to_string()
            .ends_with("failed: No space left on device"),
        "{error}"
    );
    let issued = log
        .lock()
        .unwrap()
        .iter()
        .filter(|r| matches!(r, Rec::Write(_)))
        .count() as u64;
    let full = w.figures.failed_requests.lock().unwrap().clone();
    assert_eq!(count(&partial, WRITE), 10, "the writes that were done");
    let at = COUNTERS_QUEUED
        .iter()
        .position(|c| *c == WRITES_FULL)
        .unwrap();
    assert_eq!(
        counter(&partial, at),
        issued - 10,
        "every other write found it full"
    );
    assert_eq!(full.len() as u64, issued - 10);
    assert!(full
        .iter()
        .all(|f| f.errno == libc::ENOSPC && f.len == 4096));
    assert!(
        issued > 11,
        "writes were in flight behind the first that failed: {issued}"
    );
}

#[test]
fn open_loop_rate_paces_a_queueing_engine() {
    let s = FileioSpec {
        threads: 1,
        engine: &recording::QUEUED,
        queue_depth: 8,
        ..spec(Access::rand_read(), 2, 2 << 20, 4096)
    };
    let (w, _) = recording::workload(s, None);
    let cfg = RunConfig {
        time_limit: Some(Duration::from_millis(500)),
        rate: Some(2000.0),
        ..Default::default()
    };
    let out = run(Arc::new(w), &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    let reads = count(&out, READ);
    // Poisson arrivals at 2000/s for 0.5 s: 1000 expected (sd ~32), never more; fewer only
    // when a loaded machine fell behind (the backlog then says how far, which is speed and
    // not checked here).
    assert!((500..=1150).contains(&reads), "{reads}");
    assert!(
        out.backlog.is_some(),
        "an open-loop run reports its backlog"
    );
    let lag: u64 = out.threads.iter().map(|t| t.lag.count()).sum();
    assert_eq!(lag, reads, "every request timed from its intended start");
}

/// One named region of `len` bytes walked by the job itself (fio's model).
fn job_spec(access: Access, len: u64, block: u64) -> FileioSpec {
    use plumb_fileio::spec::{BlockSizes, JobIo, NamedFile};
    FileioSpec {
        job: Some(JobIo {
            files: vec![NamedFile {
                path: "f".into(),
                offset: 0,
                length: len,
            }],
            sizes: BlockSizes::fixed(block),
            align: block,
            random_map: true,
            lfsr: false,
            skew: Default::default(),
            think: None,
            pass_bytes: len,
            passes: Some(1),
            round_bytes: None,
            repeat_each_round: false,
            sync_every_writes: 0,
            lay_out_data: false,
            allocate: plumb_fileio::spec::Allocation::None,
            layout_unsynced: false,
            no_create: false,
            tolerate: None,
            unlink: false,
            invalidate: false,
            invalidate_on_wrap: false,
            advice: None,
            create_at_open: false,
            fill_device: false,
            queue_low: None,
            batch: None,
            stride: None,
            log: None,
            trace: None,
            zones: None,
            replay: None,
            pre_read: false,
            serialize_overlap: false,
            number_ios: None,
            service: Default::default(),
            min_rate: None,
            max_latency: None,
            flow: None,
            verify: None,
        }),
        sync: SyncPolicy::NONE,
        ..spec(access, 1, len, block)
    }
}

#[test]
fn trimwrite_on_a_queueing_engine_trims_at_once_and_counts_each_direction() {
    use plumb_fileio::access::{Mix, Order};
    let s = FileioSpec {
        queue_depth: 8,
        ..job_spec(
            Access::new(Mix::TrimWrite, Order::Sequential),
            64 << 10,
            4096,
        )
    };
    let (out, ops) = record(s, true, &RunConfig::default());
    // Trims complete inside their submission: never reaped as queued requests.
    let issued: Vec<Rec> = ops
        .iter()
        .filter(|o| !matches!(o, Rec::Done(_)))
        .copied()
        .collect();
    assert_eq!(issued.len(), 32);
    for (k, pair) in issued.chunks(2).enumerate() {
        let off = k as u64 * 4096;
        assert!(
            matches!(pair[0], Rec::Trim(io) if io.offset == off),
            "{pair:?}"
        );
        assert!(
            matches!(pair[1], Rec::Write(io) if io.offset == off),
            "{pair:?}"
        );
    }
    let done = ops.iter().filter(|o| matches!(o, Rec::Done(_))).count();
    assert_eq!(done, 16, "only the writes were queued");
    // Kinds of a job on a queueing engine: read, write, fsync, the four submit/complete
    // halves, trim; counters: the queued list, then bytes_trimmed.
    assert_eq!((count(&out, WRITE), count(&out, 7)), (16, 16));
    assert_eq!(counter(&out, 1), 64 << 10);
    assert_eq!(counter(&out, 24), 64 << 10);
}

#[test]
fn trims_alone_never_sync_at_the_end() {
    use plumb_fileio::access::{Mix, Order};
    let s = FileioSpec {
        sync: SyncPolicy {
            at_end: true,
            ..SyncPolicy::NONE
        },
        ..job_spec(Access::new(Mix::Trim, Order::Sequential), 32 << 10, 4096)
    };
    let (out, ops) = record(s, false, &RunConfig::default());
    assert_eq!(letters(&ops), "TTTTTTTT");
    assert_eq!(count(&out, 3), 8);
    assert_eq!(counter(&out, 3), 32 << 10);
}
