//! Harness semantics with small workloads whose behaviour is known exactly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plumb_core::result::{BuildInput, RunResult, Status};
use plumb_core::{
    harness::HarnessError, run, OpKind, RunConfig, StopCause, StopFlag, Worker, WorkerCtx,
    Workload, WorkloadError,
};

/// Each event sleeps `sleep`; `stubborn` workers ignore the stop flag for `stubborn_for`.
struct Sleeper {
    sleep: Duration,
    stubborn_for: Option<Duration>,
    fail_after: Option<u64>,
}

const KINDS: &[OpKind] = &[OpKind::event("event"), OpKind::part("inner")];

impl Workload for Sleeper {
    fn kinds(&self) -> &[OpKind] {
        KINDS
    }
    fn counters(&self) -> &[&'static str] {
        &["units"]
    }
    fn worker(&self, _t: usize) -> Result<Box<dyn Worker>, WorkloadError> {
        Ok(Box::new(SleeperWorker {
            sleep: self.sleep,
            stubborn_for: self.stubborn_for,
            fail_after: self.fail_after,
            done: 0,
        }))
    }
}

struct SleeperWorker {
    sleep: Duration,
    stubborn_for: Option<Duration>,
    fail_after: Option<u64>,
    done: u64,
}

impl Worker for SleeperWorker {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), WorkloadError> {
        while let Some(t) = ctx.next_event() {
            let start = plumb_core::clock::Stamp::now();
            if let Some(s) = self.stubborn_for {
                std::thread::sleep(s);
            }
            if !self.sleep.is_zero() {
                std::thread::sleep(self.sleep);
            }
            let end = plumb_core::clock::Stamp::now();
            ctx.record(0, t, start, end);
            ctx.record(1, plumb_core::Ticket::inner(), start, end);
            ctx.add(0, 3);
            self.done += 1;
            if self.fail_after == Some(self.done) {
                return Err(WorkloadError::new("disk on fire"));
            }
        }
        Ok(())
    }
}

fn sleeper(sleep_us: u64) -> Arc<dyn Workload> {
    Arc::new(Sleeper {
        sleep: Duration::from_micros(sleep_us),
        stubborn_for: None,
        fail_after: None,
    })
}

fn no_signal() -> StopFlag {
    Arc::new(AtomicUsize::new(0))
}

fn build(w: &Arc<dyn Workload>, cfg: &RunConfig, o: &plumb_core::RunOutcome) -> RunResult {
    RunResult::build(
        BuildInput {
            kinds: w.kinds(),
            counters: w.counters(),
            config: cfg,
            percentiles: &[50.0, 99.0],
            with_histogram: true,
        },
        o,
    )
}

#[test]
fn event_limit_is_exact_across_threads() {
    let w = sleeper(0);
    let cfg = RunConfig {
        threads: 3,
        time_limit: None,
        event_limit: 1000,
        ..Default::default()
    };
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    let r = build(&w, &cfg, &o);
    assert_eq!(r.events, 1000);
    assert_eq!(r.stop_reason, "events");
    assert_eq!(r.threads.iter().map(|t| t.events).sum::<u64>(), 1000);
    // "inner" operations are recorded but are not events.
    assert_eq!(r.operation("inner").unwrap().count, 1000);
    assert!(!r.operation("inner").unwrap().is_event);
    assert_eq!(r.counter("units"), 3000);
    let hist_total: u64 = r
        .latency
        .histogram
        .as_ref()
        .unwrap()
        .iter()
        .map(|b| b[2])
        .sum();
    assert_eq!(hist_total, 1000);
}

#[test]
fn time_limit_stops_the_run() {
    let w = sleeper(100);
    let cfg = RunConfig {
        threads: 2,
        time_limit: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    assert_eq!(o.cause, StopCause::Time);
    assert!(o.elapsed >= Duration::from_millis(300));
    let r = build(&w, &cfg, &o);
    assert_eq!(r.status, Status::Completed);
    assert!(r.events > 0);
    for p in &r.latency.percentiles {
        assert!(p.value_ns >= r.latency.min_ns && p.value_ns <= r.latency.max_ns);
    }
}

#[test]
fn warmup_is_excluded_but_kept_in_intervals() {
    let w = sleeper(200);
    let cfg = RunConfig {
        threads: 1,
        time_limit: Some(Duration::from_millis(400)),
        warmup: Duration::from_millis(400),
        report_interval: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    let r = build(&w, &cfg, &o);
    let warm: u64 = r
        .intervals
        .iter()
        .filter(|i| i.warmup)
        .map(|i| i.events)
        .sum();
    let measured: u64 = r
        .intervals
        .iter()
        .filter(|i| !i.warmup)
        .map(|i| i.events)
        .sum();
    assert!(r.intervals.iter().filter(|i| i.warmup).count() >= 3);
    assert!(warm > 0 && measured > 0);
    // The measured figures hold only post-warm-up events: about half of all events.
    let all = warm + measured;
    assert!(r.events < all, "{} vs {all}", r.events);
    assert!((r.total_time_s - 0.4).abs() < 0.2, "{}", r.total_time_s);
    assert!((r.warmup_time_s - 0.4).abs() < 1e-9);
}

#[test]
fn worker_error_stops_the_run_and_is_returned() {
    let w: Arc<dyn Workload> = Arc::new(Sleeper {
        sleep: Duration::from_micros(10),
        stubborn_for: None,
        fail_after: Some(5),
    });
    let cfg = RunConfig {
        threads: 2,
        time_limit: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let t0 = Instant::now();
    let e = run(w, &cfg, &no_signal(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("disk on fire"));
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn signal_stops_the_run_promptly() {
    let w = sleeper(1000);
    let cfg = RunConfig {
        time_limit: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let flag = no_signal();
    let f2 = flag.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        f2.store(libc_sigint(), Ordering::Relaxed);
    });
    let t0 = Instant::now();
    let o = run(w.clone(), &cfg, &flag, &mut |_| {}).unwrap();
    assert_eq!(o.cause, StopCause::Signal(2));
    assert!(t0.elapsed() < Duration::from_secs(2));
    let r = build(&w, &cfg, &o);
    assert_eq!(r.status, Status::Interrupted);
    assert_eq!(r.stop_reason, "signal SIGINT");
    assert!(r.events > 0);
}

fn libc_sigint() -> usize {
    2
}

#[test]
fn stubborn_workers_are_abandoned_after_forced_shutdown_grace() {
    let w: Arc<dyn Workload> = Arc::new(Sleeper {
        sleep: Duration::ZERO,
        stubborn_for: Some(Duration::from_secs(20)),
        fail_after: None,
    });
    let cfg = RunConfig {
        time_limit: Some(Duration::from_millis(200)),
        forced_shutdown: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let t0 = Instant::now();
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    assert_eq!(o.cause, StopCause::Forced);
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(build(&w, &cfg, &o).status, Status::ForcedShutdown);
}

#[test]
fn stubborn_workers_are_abandoned_one_second_after_a_signal() {
    let w: Arc<dyn Workload> = Arc::new(Sleeper {
        sleep: Duration::ZERO,
        stubborn_for: Some(Duration::from_secs(20)),
        fail_after: None,
    });
    let cfg = RunConfig {
        time_limit: None,
        ..Default::default()
    };
    // The signal arrives once the worker is inside its stubborn event (sent before the start,
    // the worker would simply never begin one).
    let flag = no_signal();
    let f2 = flag.clone();
    let t0 = Instant::now();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        f2.store(15, Ordering::Relaxed);
    });
    let o = run(w, &cfg, &flag, &mut |_| {}).unwrap();
    assert_eq!(o.cause, StopCause::Signal(15));
    let took = t0.elapsed();
    // Abandoned after the 1 s grace, not at once and not never (a loaded machine adds delay).
    assert!(
        took >= Duration::from_millis(1100) && took < Duration::from_secs(10),
        "{took:?}"
    );
}

#[test]
fn open_loop_keeps_schedule_and_records_lag() {
    let w = sleeper(0);
    let cfg = RunConfig {
        threads: 2,
        time_limit: Some(Duration::from_millis(500)),
        rate: Some(400.0),
        ..Default::default()
    };
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    let r = build(&w, &cfg, &o);
    let ol = r.open_loop.expect("open-loop figures");
    assert_eq!(ol.offered_per_s, 400.0);
    // Poisson arrivals: 200 expected in 0.5 s; far outside this band means a broken schedule.
    assert!((60..=300).contains(&r.events), "{}", r.events);
    assert_eq!(ol.service.count, r.events);
    assert_eq!(ol.lag.count, r.events);
}

#[test]
fn open_loop_marks_saturation_when_the_rate_cannot_be_met() {
    // Each event takes 2 ms on one thread: at most ~500/s against 5000/s offered.
    let w = sleeper(2000);
    let cfg = RunConfig {
        threads: 1,
        time_limit: Some(Duration::from_millis(400)),
        rate: Some(5000.0),
        ..Default::default()
    };
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    let r = build(&w, &cfg, &o);
    let ol = r.open_loop.unwrap();
    assert!(ol.saturated, "{ol:?}");
    assert!(ol.backlog_events > 100);
    // Latency from the intended start includes the wait: it far exceeds the service time.
    assert!(r.latency.max_ns > 10 * ol.service.max_ns.max(1) / 2);
    assert!(ol.achieved_per_s < ol.offered_per_s / 2.0);
}

#[test]
fn open_loop_fails_once_more_events_wait_than_the_queue_holds() {
    // ~500 events/s done against 5000/s offered: 4500 more wait each second, so a limit of
    // 500 is passed within a fifth of a second, and the 10 s run stops there.
    let w = sleeper(2000);
    let cfg = RunConfig {
        threads: 1,
        time_limit: Some(Duration::from_secs(10)),
        rate: Some(5000.0),
        queue_limit: Some(500),
        ..Default::default()
    };
    let began = Instant::now();
    let e = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap_err();
    assert!(began.elapsed() < Duration::from_secs(5));
    let HarnessError::QueueFull { waiting, limit } = e else {
        panic!("{e}")
    };
    assert_eq!(limit, 500);
    assert!(waiting > 500);
    // The same schedule under a limit it never reaches runs to its end.
    let cfg = RunConfig {
        time_limit: Some(Duration::from_millis(300)),
        queue_limit: Some(100_000),
        ..cfg
    };
    assert!(run(w, &cfg, &no_signal(), &mut |_| {}).is_ok());
}

fn steady_run(
    limit: f64,
    window_s: u32,
    time_limit: Duration,
) -> (RunConfig, plumb_core::RunOutcome) {
    use plumb_core::steady::{Criterion, Metric, SteadyGroup, SteadySpec, Tally};
    let spec = SteadySpec {
        criterion: Criterion {
            metric: Metric::Iops,
            slope: false,
            percent: false,
            limit,
        },
        window_s,
        ramp: Duration::ZERO,
    };
    // Events are the I/Os, `units` the bytes; the `inner` part is no I/O.
    let tally = Tally {
        ios: &["event"],
        bytes: &["units"],
    };
    let g = SteadyGroup::new(spec, tally, 1);
    let cfg = RunConfig {
        threads: 1,
        time_limit: Some(time_limit),
        steady: Some(g.member(0)),
        ..Default::default()
    };
    let w = sleeper(500);
    let o = run(w.clone(), &cfg, &no_signal(), &mut |_| {}).unwrap();
    let r = build(&w, &cfg, &o);
    assert_eq!(r.status, Status::Completed);
    (cfg, o)
}

#[test]
fn a_steady_criterion_that_holds_stops_the_run() {
    // Any spread is within a limit this wide: met as soon as the one-second window is full.
    let (cfg, o) = steady_run(1e12, 1, Duration::from_secs(60));
    assert_eq!(o.cause, StopCause::Steady);
    assert!(o.elapsed < Duration::from_secs(30), "{:?}", o.elapsed);
    let r = cfg.steady.as_ref().unwrap().report();
    assert!(r.attained);
    assert!(r.window.full);
    let (ios, units) = (r.window.iops[0], r.window.bw[0]);
    assert!(ios > 0, "{r:?}");
    // Bytes are the `units` counter (3 an event), per second like the I/Os.
    assert!(units >= 3 * ios && units <= 3 * ios + 3, "{r:?}");
    let w = sleeper(0);
    assert_eq!(build(&w, &cfg, &o).stop_reason, "steady_state");
}

#[test]
fn a_steady_criterion_that_never_holds_leaves_the_time_limit_to_stop_it() {
    // No spread is strictly below zero.
    let (cfg, o) = steady_run(0.0, 1, Duration::from_millis(1500));
    assert_eq!(o.cause, StopCause::Time);
    let r = cfg.steady.as_ref().unwrap().report();
    assert!(!r.attained);
    assert!(r.window.full, "sampled once at 1 s: {r:?}");
    assert_eq!(r.window.criterion, 0.0);
}

#[test]
fn nothing_is_sampled_for_steady_state_during_the_warm_up() {
    use plumb_core::steady::{Criterion, Metric, SteadyGroup, SteadySpec, Tally};
    let spec = SteadySpec {
        criterion: Criterion {
            metric: Metric::Iops,
            slope: false,
            percent: false,
            limit: 1e12,
        },
        window_s: 1,
        ramp: Duration::ZERO,
    };
    let tally = Tally {
        ios: &["event"],
        bytes: &["units"],
    };
    let g = SteadyGroup::new(spec, tally, 1);
    // 3000 events of at least 0.5 ms: more than a second, all of it inside the warm-up.
    let cfg = RunConfig {
        threads: 1,
        time_limit: None,
        event_limit: 3000,
        warmup: Duration::from_secs(600),
        steady: Some(g.member(0)),
        ..Default::default()
    };
    let o = run(sleeper(500), &cfg, &no_signal(), &mut |_| {}).unwrap();
    assert_eq!(o.cause, StopCause::Completed);
    let r = g.report();
    assert!(!r.attained);
    assert!(!r.window.full, "{r:?}");
    assert_eq!(r.window.iops, vec![0]);
}

#[test]
fn a_peek_sees_the_run_grow_and_ends_with_its_figures() {
    let w = sleeper(200);
    let cfg = RunConfig {
        threads: 2,
        time_limit: Some(Duration::from_millis(600)),
        sample_interval: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let peek = plumb_core::harness::Peek::new();
    assert!(peek.outcome().is_none(), "nothing before the workers start");
    let seen = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut seen = Vec::new();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(20) && seen.len() < 4 {
                if let Some(o) = peek.outcome() {
                    let r = build(&w, &cfg, &o);
                    // A look's histograms travel losslessly, as the final ones do.
                    for h in r.histograms.values() {
                        plumb_core::stats::Histogram::try_from(h).expect("a consistent histogram");
                    }
                    seen.push((r.events, r.counter("units"), o.elapsed));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            seen
        });
        let o = plumb_core::harness::run_peeked(
            w.clone(),
            &cfg,
            &no_signal(),
            &mut |_| {},
            Some(&peek),
        )
        .unwrap();
        (watcher.join().unwrap(), o)
    });
    let (seen, o) = seen;
    assert_eq!(seen.len(), 4, "a look after the end still sees the run");
    // Cumulative: nothing a later look sees is smaller than what an earlier one saw.
    for pair in seen.windows(2) {
        assert!(pair[1].0 >= pair[0].0 && pair[1].1 >= pair[0].1, "{seen:?}");
        assert!(pair[1].2 >= pair[0].2, "{seen:?}");
    }
    // After the end, a look gives the run's own figures and time.
    let end = peek.outcome().unwrap();
    let (a, b) = (build(&w, &cfg, &o), build(&w, &cfg, &end));
    assert_eq!(a.events, b.events);
    assert_eq!(a.counters, b.counters);
    assert_eq!(end.elapsed, o.elapsed);
    assert_eq!(end.intervals.len(), o.intervals.len());
}
