//! The `run` command shared by every test: header, harness, interval lines, result, report.

use std::fs::File;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use plumb_core::result::{BuildInput, IntervalResult, RunResult};
use plumb_core::{harness, StopCause};
use plumb_observe::{ObserveSpec, Observer};
use plumb_report::{json, sysbench as layout};

use super::common::{Common, Format};
use super::testdefs::{TestDef, TestPlan};
use crate::{exit, facts, signals};

/// Run the test; returns the exit code.
pub fn run(
    test: &TestDef,
    plan: &dyn TestPlan,
    common: &Common,
    argv: &[String],
) -> anyhow::Result<i32> {
    // Open the JSON file first: a path that cannot be written fails before the run, not after.
    let mut json_file = match &common.json_file {
        Some(p) => Some(
            File::create(p)
                .with_context(|| format!("cannot write the JSON result to {}", p.display()))?,
        ),
        None => None,
    };
    let workload = plan.workload()?;
    let text = common.format == Format::Text;
    let cfg = &common.run;
    if text {
        let seed_line = if common.seed_given {
            format!(
                "Initializing random number generator from seed ({}).\n",
                cfg.seed
            )
        } else {
            "Initializing random number generator from current time\n".to_string()
        };
        let mut out = std::io::stdout().lock();
        let _ = write!(
            out,
            "{}",
            layout::header(
                cfg.threads,
                cfg.rate,
                cfg.report_interval.map(|d| d.as_secs_f64()),
                &seed_line
            )
        );
        if let Some(g) = cfg.forced_shutdown {
            let _ = writeln!(
                out,
                "Forcing shutdown in {} seconds\n",
                (cfg.time_limit.unwrap_or_default() + g).as_secs_f64()
            );
        }
        if !cfg.warmup.is_zero() {
            let _ = writeln!(
                out,
                "Warming up for {} seconds (excluded from the results)\n",
                cfg.warmup.as_secs_f64()
            );
        }
        let _ = write!(out, "{}", plan.header());
        let _ = write!(
            out,
            "Initializing worker threads...\n\nThreads started!\n\n"
        );
        let _ = out.flush();
    }

    let kinds = workload.kinds().to_vec();
    let counters = workload.counters().to_vec();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Observe from just before the workers start to just after they end.
    let (dir, files) = plan.observe_targets();
    let observer = Observer::start(ObserveSpec::new(dir, files, common.observe_interval));
    let stop = signals::install();
    let mut on_interval = |s: &harness::IntervalSample| {
        let i = IntervalResult::from_sample(s, &kinds, &counters, &cfg.interval_percentiles);
        let line = layout::interval_line(test.name, &i);
        if text {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        } else {
            eprintln!("{line}");
        }
    };
    let outcome = harness::run(workload.clone(), cfg, &stop, &mut on_interval);
    let operations: u64 = outcome
        .as_ref()
        .map(|o| {
            o.threads
                .iter()
                .flat_map(|t| t.kinds.iter())
                .map(|h| h.count())
                .sum()
        })
        .unwrap_or(0);
    let observations = observer.finish(operations);
    let outcome = outcome?;
    let mut result = RunResult::build(
        BuildInput {
            test: test.name,
            command_line: std::iter::once("plumb".to_string())
                .chain(argv.iter().cloned())
                .collect(),
            started_at_unix_s: started,
            kinds: &kinds,
            counters: &counters,
            config: cfg,
            percentiles: &common.percentiles,
            // Always built: the advisor reads the distribution; dropped below unless asked for.
            with_histogram: true,
            workload: plan.workload_json(),
        },
        &outcome,
    );
    plan.complete(&mut result);
    plan.after_run(&mut result)?;
    let buckets = if common.histogram {
        result.latency.histogram.clone()
    } else {
        result.latency.histogram.take()
    };
    let mut facts = facts::from_result(&result, buckets.unwrap_or_default());
    facts::add_observations(&mut facts, &observations);
    plan.facts(&mut facts, &result);
    let findings = plumb_advise::evaluate(&facts);

    let doc = json::render(&json::Document {
        result: &result,
        observations: Some(&observations),
        findings: &findings,
    });
    if let Some(f) = json_file.as_mut() {
        f.write_all(doc.as_bytes())
            .and_then(|_| f.flush())
            .with_context(|| "cannot write the JSON result file".to_string())?;
    }
    let mut out = std::io::stdout().lock();
    if text && !common.plumb_sections {
        let _ = write!(out, "{}", layout::sysbench_report(&result));
    } else if text {
        let _ = write!(out, "{}", layout::final_report(&result));
        let _ = write!(
            out,
            "{}",
            plumb_report::observations::section(&result, &observations)
        );
        let _ = write!(out, "{}", plumb_report::findings::section(&findings));
    } else {
        let _ = write!(out, "{doc}");
    }
    let _ = out.flush();
    Ok(match outcome.cause {
        StopCause::Signal(s) => exit::for_signal(s),
        StopCause::Forced => exit::RUNTIME,
        _ if common.strict && plumb_advise::any_invalid(&findings) => {
            eprintln!("plumb: --strict: the result has findings marked invalid");
            exit::STRICT
        }
        _ => 0,
    })
}
