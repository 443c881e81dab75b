//! The pipeline on plans no single sysbench command line makes: several jobs run together
//! in one group, groups one after another, and a record that renders the same after a round
//! trip through JSON.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use plumb_core::result::IntervalResult;
use plumb_core::{progress::Quiet, RunConfig, StopFlag};
use plumb_micro::cpu::CpuSpec;
use plumb_micro::threads::ThreadsSpec;
use plumb_pipeline::jobs::micro::{CpuJob, ThreadsJob};
use plumb_pipeline::{
    execute, Group, JobRecord, JobSpec, Layout, Output, PipelineError, Plan, PlanOptions, Record,
    Settings, Step,
};

/// A layout that names what it is given, so the order of calls shows in the output.
struct Names {
    seen: Mutex<Vec<String>>,
}

impl Layout for Names {
    fn banner(&self) -> String {
        "banner\n".into()
    }
    fn preamble(&self, job: &JobRecord) -> String {
        self.seen
            .lock()
            .unwrap()
            .push(format!("preamble {}", job.name));
        format!("preamble {}\n", job.name)
    }
    fn interval(&self, job: &JobRecord, _i: &IntervalResult) -> String {
        format!("interval {}", job.name)
    }
    fn report(&self, _record: &Record, group: &plumb_pipeline::GroupRecord) -> String {
        let names: Vec<&str> = group.jobs.iter().map(|j| j.name.as_str()).collect();
        format!("report {}\n", names.join(","))
    }
}

fn config(events: u64, threads: usize) -> RunConfig {
    RunConfig {
        threads,
        time_limit: None,
        event_limit: events,
        warmup: Default::default(),
        report_interval: None,
        sample_interval: None,
        rate: None,
        arrivals: Default::default(),
        forced_shutdown: None,
        seed: 7,
        rand_type: None,
        interval_percentiles: vec![95.0],
        together: None,
        steady: None,
    }
}

fn cpu(name: &str, events: u64) -> JobSpec {
    JobSpec {
        name: name.into(),
        config: config(events, 1),
        seed_given: true,
        layout: None,
        start_delay: Duration::ZERO,
        job: Box::new(CpuJob(CpuSpec { max_prime: 500 })),
    }
}

fn options() -> PlanOptions {
    PlanOptions {
        percentiles: vec![50.0, 99.0],
        text: true,
        ..Default::default()
    }
}

fn run(plan: &Plan, layout: &Names) -> (Result<plumb_pipeline::Finished, PipelineError>, String) {
    let (mut report, mut diagnostics) = (Vec::new(), Vec::new());
    let mut progress = Quiet;
    let r = execute(
        plan,
        layout,
        &StopFlag::default(),
        &mut Output {
            report: &mut report,
            diagnostics: &mut diagnostics,
            progress: &mut progress,
            live: None,
        },
    );
    (r, String::from_utf8(report).unwrap())
}

#[test]
fn jobs_of_a_group_run_together_and_groups_one_after_another() {
    let plan = Plan {
        front_end: "test",
        layout: None,
        command_line: vec!["plumb".into()],
        groups: vec![
            Group {
                steps: vec![Step::Run],
                jobs: vec![
                    cpu("a", 300),
                    JobSpec {
                        name: "b".into(),
                        config: config(40, 2),
                        seed_given: false,
                        layout: None,
                        start_delay: Duration::ZERO,
                        job: Box::new(ThreadsJob(ThreadsSpec {
                            yields: 10,
                            locks: 2,
                        })),
                    },
                ],
            },
            Group {
                steps: vec![Step::Run],
                jobs: vec![cpu("c", 100)],
            },
        ],
        options: options(),
    };
    let layout = Names {
        seen: Mutex::new(Vec::new()),
    };
    let (finished, text) = run(&plan, &layout);
    let record = finished.expect("the plan runs").record;
    assert_eq!(
        text,
        "preamble a\npreamble b\nreport a,b\npreamble c\nreport c\n"
    );
    assert_eq!(record.groups.len(), 2);
    let g = &record.groups[0];
    assert_eq!(g.jobs.len(), 2);
    assert!(g.observations.is_some());
    assert_eq!(g.jobs[0].events, 300);
    assert_eq!(g.jobs[0].settings.threads, 1);
    assert_eq!(g.jobs[1].events, 40);
    assert_eq!(g.jobs[1].threads.len(), 2);
    assert!(matches!(g.jobs[1].workload, Settings::Threads(_)));
    assert_eq!(record.groups[1].jobs[0].events, 100);
    // Every operation kind carries its lossless histogram, whose count is the kind's count.
    for j in record.jobs() {
        for o in &j.operations {
            assert_eq!(
                j.histograms[&o.name].count, o.count,
                "{} {}",
                j.name, o.name
            );
        }
    }
    // A layout without a spelling gets advice in plain words (the machine is rarely quiet
    // enough for no finding at all; any finding's advice names no option).
    for f in record.jobs().flat_map(|j| j.findings.iter()) {
        assert!(!f.advice.contains("--"), "{}", f.advice);
    }
    // The record survives JSON exactly, and renders the same from it.
    let back = Record::from_json(&record.to_json()).unwrap();
    assert_eq!(back, record);
    assert_eq!(layout.replay(&back), format!("banner\n{text}"));
}

#[test]
fn start_delays_hold_jobs_back_and_stay_out_of_their_runtime() {
    let delayed = |name: &str, ms: u64| JobSpec {
        start_delay: Duration::from_millis(ms),
        ..cpu(name, 100)
    };
    let plan = Plan {
        front_end: "test",
        layout: None,
        command_line: vec!["plumb".into()],
        groups: vec![
            Group {
                steps: vec![Step::Run],
                jobs: vec![cpu("a", 100), delayed("b", 400)],
            },
            Group {
                steps: vec![Step::Run],
                jobs: vec![delayed("c", 250)],
            },
        ],
        options: options(),
    };
    let layout = Names {
        seen: Mutex::new(Vec::new()),
    };
    let t0 = Instant::now();
    let (finished, _) = run(&plan, &layout);
    let took = t0.elapsed();
    let record = finished.expect("the plan runs").record;
    // Counted from the first run step: c's delay has passed when its group starts (that
    // it then starts at once is held by execute's own test).
    assert!(took >= Duration::from_millis(400), "{took:?}");
    let b = &record.groups[0].jobs[1];
    assert_eq!(b.events, 100);
    assert!(b.total_time_s < 0.3, "{}", b.total_time_s);
}

#[test]
fn a_step_a_job_lacks_is_refused_before_its_group_runs() {
    let plan = Plan {
        front_end: "test",
        layout: None,
        command_line: vec![],
        groups: vec![Group {
            steps: vec![Step::Prepare, Step::Run],
            jobs: vec![cpu("a", 10)],
        }],
        options: options(),
    };
    let layout = Names {
        seen: Mutex::new(Vec::new()),
    };
    let (r, text) = run(&plan, &layout);
    let e = r.expect_err("cpu has nothing to prepare");
    assert_eq!(
        e.to_string(),
        "the 'cpu' test does not implement the 'prepare' command"
    );
    assert_eq!(text, "");
    assert!(layout.seen.lock().unwrap().is_empty());
}
