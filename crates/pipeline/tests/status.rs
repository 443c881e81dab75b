//! Status reports while a plan runs (`PlanOptions::status_interval`): every period the
//! layout renders a record of everything measured so far, cumulative, the groups to come
//! with no figures; the final report comes after the last of them.

use std::time::Duration;

use plumb_core::{progress::Quiet, RunConfig, StopFlag};
use plumb_micro::cpu::CpuSpec;
use plumb_pipeline::jobs::micro::CpuJob;
use plumb_pipeline::{execute, Group, JobSpec, Layout, Output, Plan, PlanOptions, Record, Step};

/// Each status report is one line: per group, its jobs' events and whether it has
/// observations; the final report says `final` and the same.
struct Counts;

fn line(record: &Record) -> String {
    let groups: Vec<String> = record
        .groups
        .iter()
        .map(|g| {
            let events: u64 = g.jobs.iter().map(|j| j.events).sum();
            format!("{events}/{}", g.observations.is_some())
        })
        .collect();
    groups.join(" ")
}

impl Layout for Counts {
    fn report(&self, _record: &Record, _group: &plumb_pipeline::GroupRecord) -> String {
        String::new()
    }
    fn finish(&self, record: &Record) -> String {
        format!("final {}\n", line(record))
    }
    fn status(&self, record: &Record, unix_ms: u64) -> String {
        assert!(unix_ms > 0);
        format!("status {}\n", line(record))
    }
}

fn cpu(name: &str) -> JobSpec {
    JobSpec {
        name: name.into(),
        config: RunConfig {
            time_limit: Some(Duration::from_millis(500)),
            seed: 7,
            ..Default::default()
        },
        seed_given: true,
        layout: None,
        start_delay: Duration::ZERO,
        after: Vec::new(),
        checkpoints: Vec::new(),
        job: Box::new(CpuJob(CpuSpec { max_prime: 500 })),
    }
}

fn run(status_interval: Option<Duration>) -> (Record, String) {
    let plan = Plan {
        front_end: "test",
        layout: None,
        command_line: vec!["plumb".into()],
        groups: vec![
            Group {
                steps: vec![Step::Run],
                jobs: vec![cpu("a")],
            },
            Group {
                steps: vec![Step::Run],
                jobs: vec![cpu("b")],
            },
        ],
        options: PlanOptions {
            percentiles: vec![50.0],
            text: true,
            status_interval,
            ..Default::default()
        },
    };
    let (mut report, mut diagnostics) = (Vec::new(), Vec::new());
    let mut progress = Quiet;
    let f = execute(
        &plan,
        &Counts,
        &StopFlag::default(),
        &mut Output {
            report: &mut report,
            diagnostics: &mut diagnostics,
            progress: &mut progress,
            live: None,
        },
    )
    .expect("the plan runs");
    (f.record, String::from_utf8(report).unwrap())
}

/// Per status line, per group: (events, observed).
fn parse(line: &str) -> Vec<(u64, bool)> {
    line.split_whitespace()
        .skip(1)
        .map(|g| {
            let (e, o) = g.split_once('/').unwrap();
            (e.parse().unwrap(), o == "true")
        })
        .collect()
}

#[test]
fn reports_come_every_period_cumulative_and_before_the_final_one() {
    let (record, text) = run(Some(Duration::from_millis(100)));
    let lines: Vec<&str> = text.lines().collect();
    let (last, statuses) = lines.split_last().unwrap();
    assert!(last.starts_with("final "), "{text}");
    assert!(statuses.iter().all(|l| l.starts_with("status ")), "{text}");
    // About ten periods in a second of running; a loaded machine may print fewer.
    assert!(statuses.len() >= 2, "{text}");
    let seen: Vec<Vec<(u64, bool)>> = statuses.iter().map(|l| parse(l)).collect();
    for s in &seen {
        // Every group is in every report; one not started has no figures.
        assert_eq!(s.len(), 2, "{text}");
        if !s[1].1 {
            assert_eq!(s[1].0, 0, "{text}");
        }
    }
    for pair in seen.windows(2) {
        for (before, after) in pair[0].iter().zip(&pair[1]) {
            assert!(after.0 >= before.0, "not cumulative: {text}");
        }
    }
    // Once the first group is done, its reports hold its final figures.
    let a = record.groups[0].jobs[0].events;
    assert!(a > 0);
    for s in seen.iter().filter(|s| s[1].1) {
        assert_eq!(s[0].0, a, "{text}");
    }
    assert_eq!(*last, format!("final {}", line(&record)));
}

#[test]
fn no_interval_no_reports() {
    let (_, text) = run(None);
    assert_eq!(text.lines().count(), 1, "{text}");
}
