//! Think time in the worker loop, with the recording engine under the real harness: where the
//! stalls fall in the request stream, how long the run takes, and that no request's latency
//! holds a stall.

use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

use common::recording::{self, Rec};
use plumb_core::{run, RunConfig, RunOutcome, StopFlag};
use plumb_fileio::access::Access;
use plumb_fileio::spec::{BlockSizes, FileioSpec, JobIo, NamedFile};
use plumb_fileio::think::{Think, ThinkCount};
use plumb_fileio::workload::READ;

const STALL: Duration = Duration::from_millis(3);

/// `requests` random reads of 4 KiB over one named file, with `think`.
fn spec(requests: u64, think: Option<Think>, queued: bool) -> FileioSpec {
    FileioSpec {
        access: Some(Access::rand_read()),
        num_files: 1,
        total_size: 1 << 20,
        block_size: 4096,
        queue_depth: 4,
        engine: if queued {
            &recording::QUEUED
        } else {
            &recording::BLOCKING
        },
        job: Some(JobIo {
            files: vec![NamedFile {
                path: "f".into(),
                offset: 0,
                length: 1 << 20,
            }],
            sizes: BlockSizes::fixed(4096),
            align: 4096,
            random_map: true,
            lfsr: false,
            skew: Default::default(),
            think,
            pass_bytes: requests * 4096,
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
        ..Default::default()
    }
}

fn think(every: u64, count: ThinkCount) -> Think {
    Think {
        stall_ns: STALL.as_nanos() as u64,
        spin_ns: 1_000_000,
        every,
        count,
        io_time_ns: 0,
        every_with_time: false,
        rate_ignores: false,
    }
}

fn go(s: FileioSpec) -> (RunOutcome, Vec<Rec>, Duration) {
    let (w, log) = recording::workload(s, None);
    let cfg = RunConfig {
        time_limit: None,
        ..Default::default()
    };
    let t0 = Instant::now();
    let out = run(Arc::new(w), &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    let took = t0.elapsed();
    let ops = log.lock().unwrap().clone();
    (out, ops, took)
}

fn max_read_ns(out: &RunOutcome) -> u64 {
    out.threads
        .iter()
        .filter_map(|t| t.kinds[READ].max())
        .max()
        .unwrap_or(0)
}

fn reads(out: &RunOutcome) -> u64 {
    out.threads.iter().map(|t| t.kinds[READ].count()).sum()
}

#[test]
fn a_stall_follows_every_request_and_stays_out_of_its_latency() {
    let (out, _, took) = go(spec(10, Some(think(1, ThinkCount::Completed)), false));
    assert_eq!(reads(&out), 10);
    assert!(took >= STALL * 10, "{took:?}");
    assert!(
        max_read_ns(&out) < STALL.as_nanos() as u64,
        "{}",
        max_read_ns(&out)
    );
}

#[test]
fn without_think_time_the_same_job_does_not_wait() {
    let (out, _, took) = go(spec(10, None, false));
    assert_eq!(reads(&out), 10);
    assert!(took < STALL * 10, "{took:?}");
}

#[test]
fn queued_requests_complete_before_the_stall() {
    // Depth 4, a stall after every 2 completions: the queue fills (4 reads), the collection
    // brings 4 completions, the stall is due, then the next 4 go out.
    let (out, ops, took) = go(spec(12, Some(think(2, ThinkCount::Completed)), true));
    assert_eq!(reads(&out), 12);
    let letters: String = ops
        .iter()
        .map(|o| match o {
            Rec::Read(_) => 'R',
            Rec::Done(_) => 'D',
            _ => '?',
        })
        .collect();
    assert_eq!(letters, "RRRRDDDD".repeat(3));
    assert!(took >= STALL * 3, "{took:?}");
    assert!(max_read_ns(&out) < STALL.as_nanos() as u64);
}

#[test]
fn counting_issues_stalls_with_requests_in_flight_collected_first() {
    // A stall after every issue: each read is collected before the stall, so depth 4 acts
    // as depth 1.
    let (_, ops, took) = go(spec(6, Some(think(1, ThinkCount::Issued)), true));
    let letters: String = ops
        .iter()
        .map(|o| match o {
            Rec::Read(_) => 'R',
            Rec::Done(_) => 'D',
            _ => '?',
        })
        .collect();
    assert_eq!(letters, "RD".repeat(6));
    assert!(took >= STALL * 6, "{took:?}");
}

#[test]
fn a_low_water_mark_lets_the_queue_drain_before_it_is_refilled() {
    let letters = |low: Option<u32>| {
        let mut s = spec(12, None, true);
        s.engine = &recording::QUEUED_SLOW;
        s.job.as_mut().unwrap().queue_low = low;
        let (_, ops, _) = go(s);
        ops.iter()
            .map(|o| match o {
                Rec::Read(_) => 'R',
                Rec::Done(_) => 'D',
                _ => '?',
            })
            .collect::<String>()
    };
    // Kept full: one completion, one new request.
    assert_eq!(letters(None), format!("RRRR{}DDDD", "DR".repeat(8)));
    // iodepth_low=1: full at 4, drained to 1, refilled to 4.
    assert_eq!(
        letters(Some(1)),
        format!("RRRR{}DDDRRDDD", "DDDRRR".repeat(2))
    );
}
