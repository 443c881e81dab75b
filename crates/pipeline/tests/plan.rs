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
    execute, Group, Job, JobRecord, JobSpec, Layout, Output, PipelineError, Plan, PlanOptions,
    Record, Settings, Step,
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
        queue_limit: None,
        forced_shutdown: None,
        seed: 7,
        rand_type: None,
        rand_shape: Default::default(),
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
        after: Vec::new(),
        checkpoints: Vec::new(),
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
                        after: Vec::new(),
                        checkpoints: Vec::new(),
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

/// A cpu job whose worker notes when it starts and ends its run in a shared log.
struct Noted {
    name: &'static str,
    log: std::sync::Arc<Mutex<Vec<String>>>,
}

struct NotedWorkload {
    inner: std::sync::Arc<dyn plumb_core::Workload>,
    name: &'static str,
    log: std::sync::Arc<Mutex<Vec<String>>>,
}

struct NotedWorker {
    inner: Box<dyn plumb_core::Worker>,
    name: &'static str,
    log: std::sync::Arc<Mutex<Vec<String>>>,
}

impl plumb_core::Worker for NotedWorker {
    fn run(
        &mut self,
        ctx: &mut plumb_core::WorkerCtx<'_>,
    ) -> Result<(), plumb_core::WorkloadError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", self.name));
        let r = self.inner.run(ctx);
        self.log.lock().unwrap().push(format!("end {}", self.name));
        r
    }
}

impl plumb_core::Workload for NotedWorkload {
    fn kinds(&self) -> &[plumb_core::OpKind] {
        self.inner.kinds()
    }
    fn worker(
        &self,
        thread: usize,
    ) -> Result<Box<dyn plumb_core::Worker>, plumb_core::WorkloadError> {
        Ok(Box::new(NotedWorker {
            inner: self.inner.worker(thread)?,
            name: self.name,
            log: self.log.clone(),
        }))
    }
}

impl Job for Noted {
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn workload(
        &self,
        notes: &mut Vec<String>,
    ) -> Result<std::sync::Arc<dyn plumb_core::Workload>, plumb_pipeline::JobError> {
        Ok(std::sync::Arc::new(NotedWorkload {
            inner: CpuJob(CpuSpec { max_prime: 500 }).workload(notes)?,
            name: self.name,
            log: self.log.clone(),
        }))
    }
    fn settings(&self) -> Settings {
        CpuJob(CpuSpec { max_prime: 500 }).settings()
    }
}

#[test]
fn a_job_that_waits_for_others_starts_when_they_have_ended_in_its_own_group() {
    let log = std::sync::Arc::new(Mutex::new(Vec::new()));
    let noted = |name: &'static str, events: u64, after: Vec<usize>| JobSpec {
        after,
        checkpoints: Vec::new(),
        job: Box::new(Noted {
            name,
            log: log.clone(),
        }),
        ..cpu(name, events)
    };
    // c waits for a and b; b for a; d for nobody.
    let plan = Plan {
        front_end: "test",
        layout: None,
        command_line: vec!["plumb".into()],
        groups: vec![Group {
            steps: vec![Step::Run],
            jobs: vec![
                noted("a", 2000, vec![]),
                noted("b", 100, vec![0]),
                noted("c", 100, vec![0, 1]),
                noted("d", 100, vec![]),
            ],
        }],
        options: options(),
    };
    let layout = Names {
        seen: Mutex::new(Vec::new()),
    };
    let (finished, text) = run(&plan, &layout);
    let record = finished.expect("the plan runs").record;
    // One group, one report, every job with all its events.
    assert_eq!(
        text,
        "preamble a\npreamble b\npreamble c\npreamble d\nreport a,b,c,d\n"
    );
    assert_eq!(record.groups.len(), 1);
    for j in record.jobs() {
        assert!(j.events > 0, "{}", j.name);
    }
    let log = log.lock().unwrap().clone();
    let at = |what: &str| log.iter().position(|l| l == what).expect(what);
    assert!(at("end a") < at("start b"), "{log:?}");
    assert!(at("end b") < at("start c"), "{log:?}");
    assert_eq!(log.len(), 8, "{log:?}");

    // Jobs that wait for each other are refused before anything runs.
    let cycle = Plan {
        front_end: "test",
        layout: None,
        command_line: vec![],
        groups: vec![Group {
            steps: vec![Step::Run],
            jobs: vec![noted("a", 10, vec![1]), noted("b", 10, vec![0])],
        }],
        options: options(),
    };
    let (r, text) = run(&cycle, &layout);
    assert_eq!(
        r.expect_err("a cycle").to_string(),
        "job 'a' waits, through the jobs it waits for, for itself"
    );
    assert_eq!(text, "");
}

/// A cpu job whose prepare and cleanup name this process as the server they work in, when
/// the pipeline asks for one, and note whether it did.
struct NamesServer {
    asked: std::sync::Arc<Mutex<Vec<String>>>,
}

impl NamesServer {
    fn step(&self, step: &str, ctx: &mut plumb_pipeline::StepContext<'_>) {
        let setup = ctx.setup_server();
        self.asked
            .lock()
            .unwrap()
            .push(format!("{step} {}", setup.is_some()));
        if let Some(s) = setup {
            // From another thread, as a step's worker connections name it.
            std::thread::scope(|t| {
                t.spawn(|| s.found(std::process::id()));
            });
            std::thread::sleep(Duration::from_millis(60));
        }
    }
}

impl Job for NamesServer {
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn prepare(
        &self,
        ctx: &mut plumb_pipeline::StepContext<'_>,
    ) -> Result<(), plumb_pipeline::JobError> {
        self.step("prepare", ctx);
        Ok(())
    }
    fn cleanup(
        &self,
        ctx: &mut plumb_pipeline::StepContext<'_>,
    ) -> Result<(), plumb_pipeline::JobError> {
        self.step("cleanup", ctx);
        Ok(())
    }
    fn workload(
        &self,
        notes: &mut Vec<String>,
    ) -> Result<std::sync::Arc<dyn plumb_core::Workload>, plumb_pipeline::JobError> {
        CpuJob(CpuSpec { max_prime: 500 }).workload(notes)
    }
    fn settings(&self) -> Settings {
        CpuJob(CpuSpec { max_prime: 500 }).settings()
    }
}

/// A plan of one `NamesServer` job through `steps`: which steps were offered a server to
/// name, and the run's load baseline.
fn naming(steps: Vec<Step>) -> (Vec<String>, plumb_observe::host::LoadAtStart) {
    let asked = std::sync::Arc::new(Mutex::new(Vec::new()));
    let plan = Plan {
        front_end: "test",
        layout: None,
        command_line: vec![],
        groups: vec![Group {
            steps,
            jobs: vec![JobSpec {
                job: Box::new(NamesServer {
                    asked: asked.clone(),
                }),
                ..cpu("a", 10)
            }],
        }],
        options: options(),
    };
    let layout = Names {
        seen: Mutex::new(Vec::new()),
    };
    let record = run(&plan, &layout).0.unwrap().record;
    let load = record.groups[0]
        .observations
        .as_ref()
        .unwrap()
        .load_at_start
        .clone();
    let asked = asked.lock().unwrap().clone();
    (asked, load)
}

#[test]
fn a_server_named_in_the_prepare_step_has_the_baseline_watched_during_it() {
    let (asked, load) = naming(vec![Step::Prepare, Step::Run, Step::Cleanup]);
    // Offered before the run only.
    assert_eq!(asked, ["prepare true", "cleanup false"]);
    let during = load.during_setup.expect("watched during the prepare step");
    assert_eq!(during.server_pid, std::process::id());
    assert!(during.setup_s > 0.0, "{during:?}");
}

#[test]
fn a_prepare_step_after_the_run_is_not_offered_the_baseline() {
    let (asked, load) = naming(vec![Step::Run, Step::Prepare]);
    assert_eq!(asked, ["prepare false"]);
    assert_eq!(load.during_setup, None);
}
