use std::sync::atomic::AtomicU64;

use super::*;

const TALLY: Tally = Tally {
    ios: &["read"],
    bytes: &["bytes_read"],
};

fn spec(slope: bool, limit: f64, window_s: u32, ramp_s: u64) -> SteadySpec {
    SteadySpec {
        criterion: Criterion {
            metric: Metric::Iops,
            slope,
            percent: false,
            limit,
        },
        window_s,
        ramp: Duration::from_secs(ramp_s),
    }
}

/// A job's counts, set by the test: (I/Os, bytes) with 4 KiB per I/O.
#[derive(Clone, Default)]
struct Counts(Arc<AtomicU64>);

impl Counts {
    fn set(&self, ios: u64) {
        self.0.store(ios, Relaxed);
    }
    fn probe(&self) -> Probe {
        let c = self.0.clone();
        Box::new(move || {
            let n = c.load(Relaxed);
            (n, n * 4096)
        })
    }
}

fn secs(t0: Instant, s: f64) -> Instant {
    t0 + Duration::from_secs_f64(s)
}

#[test]
fn one_job_is_sampled_once_a_second_per_second_of_its_run() {
    let g = SteadyGroup::new(spec(false, 1.0, 2, 0), TALLY, 1);
    let m = g.member(0);
    let t0 = Instant::now();
    let c = Counts::default();
    m.start(t0, c.probe());
    assert_eq!(m.next_tick(), Some(secs(t0, 1.0)));
    c.set(100);
    // Not due yet: nothing sampled.
    assert!(!m.poll(secs(t0, 0.9)));
    assert_eq!(g.report().window.iops, vec![0, 0]);
    assert!(!m.poll(secs(t0, 1.0)));
    assert_eq!(g.report().window.iops, vec![100, 0]);
    assert_eq!(g.report().window.bw, vec![409_600, 0]);
    // The second sample comes late (1.5 s after the first): fio's rate over integer ms.
    c.set(250);
    assert!(m.poll(secs(t0, 2.5)));
    let r = g.report();
    assert!(r.attained);
    assert_eq!(r.window.iops, vec![100, 100]);
    assert_eq!(r.window_s, 2);
    // Attained: every later poll says so, and nothing more is sampled.
    c.set(10_000);
    assert!(m.poll(secs(t0, 3.5)));
    assert_eq!(g.report().window.iops, vec![100, 100]);
}

#[test]
fn samples_count_from_one_second_after_the_ramp() {
    let g = SteadyGroup::new(spec(false, 0.0, 1, 1), TALLY, 1);
    let m = g.member(0);
    let t0 = Instant::now();
    let c = Counts::default();
    m.start(t0, c.probe());
    c.set(1000);
    m.poll(secs(t0, 1.0));
    // Within ss_ramp + 1 s: not kept, but the counts move on.
    assert_eq!(g.report().window.iops, vec![0]);
    assert!(!g.report().window.full);
    c.set(1300);
    m.poll(secs(t0, 2.0));
    assert_eq!(g.report().window.iops, vec![300]);
    assert!(g.report().window.full);
}

#[test]
fn a_group_sums_its_running_jobs_and_tests_while_the_last_one_runs() {
    let g = SteadyGroup::new(spec(false, 1.0, 1, 0), TALLY, 2);
    let (a, b) = (g.member(0), g.member(1));
    let t0 = Instant::now();
    let (ca, cb) = (Counts::default(), Counts::default());
    a.start(t0, ca.probe());
    ca.set(10);
    // The window's holder (the last job) has not started: no sample is kept.
    assert!(!a.poll(secs(t0, 1.0)));
    assert!(!g.report().window.full);
    b.start(secs(t0, 1.0), cb.probe());
    ca.set(30);
    cb.set(5);
    // Either job's harness takes the tick; the sample is the sum.
    assert!(b.poll(secs(t0, 2.0)));
    assert!(a.poll(secs(t0, 2.0)));
    assert_eq!(g.report().window.iops, vec![25]);
}

#[test]
fn a_stopped_job_leaves_the_sums() {
    let g = SteadyGroup::new(spec(false, -1.0, 2, 0), TALLY, 2);
    let (a, b) = (g.member(0), g.member(1));
    let t0 = Instant::now();
    let (ca, cb) = (Counts::default(), Counts::default());
    a.start(t0, ca.probe());
    b.start(t0, cb.probe());
    ca.set(7);
    cb.set(3);
    a.poll(secs(t0, 1.0));
    a.stop();
    ca.set(1000);
    cb.set(4);
    b.poll(secs(t0, 2.0));
    assert_eq!(g.report().window.iops, vec![10, 1]);
    // With the holder stopped too, nothing is sampled any more.
    b.stop();
    b.poll(secs(t0, 3.0));
    assert_eq!(g.report().window.iops, vec![10, 1]);
}

#[test]
fn after_a_stall_the_schedule_starts_over() {
    let g = SteadyGroup::new(spec(true, -1.0, 3, 0), TALLY, 1);
    let m = g.member(0);
    let t0 = Instant::now();
    m.start(t0, Counts::default().probe());
    m.poll(secs(t0, 5.2));
    assert_eq!(m.next_tick(), Some(secs(t0, 6.2)));
    m.poll(secs(t0, 6.3));
    assert_eq!(m.next_tick(), Some(secs(t0, 7.2)));
}

#[test]
fn a_job_that_starts_after_the_group_attained_stops_at_once() {
    let g = SteadyGroup::new(spec(false, 1.0, 1, 0), TALLY, 2);
    let (a, b) = (g.member(0), g.member(1));
    let t0 = Instant::now();
    b.start(t0, Counts::default().probe());
    assert!(b.poll(secs(t0, 1.0)));
    a.start(secs(t0, 1.5), Counts::default().probe());
    assert!(a.poll(secs(t0, 1.5)));
}
