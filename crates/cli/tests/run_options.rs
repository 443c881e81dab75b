//! Common run options through the real binary: limits, percentiles, histogram, intervals,
//! warm-up, rate, output formats, signals.

mod common;
use common::*;

use std::io::Read;
use std::time::{Duration, Instant};

const FAST: &str = "--cpu-max-prime=300";

#[test]
fn events_limit_gives_exactly_that_many_events() {
    let v = json_run(&[
        "cpu",
        FAST,
        "--threads=2",
        "--events=500",
        "--time=0",
        "run",
    ]);
    assert_eq!(v["events"], 500);
    assert_eq!(v["stop_reason"], "events");
    let per_thread = sum_of(&v["threads"], "events");
    assert_eq!(per_thread, 500);
    assert_eq!(v["threads"].as_array().unwrap().len(), 2);
}

#[test]
fn time_limit_stops_the_run() {
    let v = json_run(&["cpu", FAST, "--time=0.4", "run"]);
    assert_eq!(v["stop_reason"], "time");
    assert_eq!(v["status"], "completed");
    let t = v["total_time_s"].as_f64().unwrap();
    assert!((0.4..1.5).contains(&t), "{t}");
}

#[test]
fn any_number_of_fractional_percentiles_within_min_max() {
    let v = json_run(&[
        "cpu",
        FAST,
        "--events=2000",
        "--time=0",
        "--percentile=50,95,99.9",
        "run",
    ]);
    let l = &v["latency"];
    let (min, max) = (l["min_ns"].as_u64().unwrap(), l["max_ns"].as_u64().unwrap());
    let ps: Vec<(f64, u64)> = l["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["percentile"].as_f64().unwrap(),
                p["value_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ps.iter().map(|p| p.0).collect::<Vec<_>>(),
        [50.0, 95.0, 99.9]
    );
    for w in ps.windows(2) {
        assert!(w[0].1 <= w[1].1);
    }
    for (_, v) in &ps {
        assert!(*v >= min && *v <= max);
    }
    let (_, out, _) = run(&[
        "cpu",
        FAST,
        "--events=200",
        "--time=0",
        "--percentile=50,99.9",
        "run",
    ]);
    assert!(out.contains("         50th percentile:"));
    assert!(out.contains("         99.9th percentile:"));
    assert!(!out.contains("95th percentile"));
}

#[test]
fn percentile_zero_turns_percentiles_off() {
    let (code, out, _) = run(&[
        "cpu",
        FAST,
        "--events=100",
        "--time=0",
        "--percentile=0",
        "run",
    ]);
    assert_eq!(code, 0);
    assert!(!out.contains("percentile"));
}

#[test]
fn histogram_prints_sysbench_layout_and_counts_every_event() {
    let (code, out, _) = run(&[
        "cpu",
        FAST,
        "--events=300",
        "--time=0",
        "--histogram",
        "run",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("Latency histogram (values are in milliseconds)"));
    assert!(out.contains("       value  ------------- distribution ------------- count"));
    let total: u64 = out
        .lines()
        .skip_while(|l| !l.starts_with("Latency histogram"))
        .skip(2)
        .take_while(|l| l.contains('|'))
        .map(|l| l.split_whitespace().last().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 300);
    let v = json_run(&[
        "cpu",
        FAST,
        "--events=300",
        "--time=0",
        "--histogram=on",
        "run",
    ]);
    let buckets = v["latency"]["histogram"].as_array().unwrap();
    assert_eq!(
        buckets.iter().map(|b| b[2].as_u64().unwrap()).sum::<u64>(),
        300
    );
}

#[test]
fn report_interval_prints_sysbench_interval_lines() {
    let (code, out, _) = run(&["cpu", FAST, "--time=1", "--report-interval=0.25", "run"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(lines.len() >= 3, "{out}");
    for l in &lines {
        // [ 0.25s ] thds: 1 eps: 1234.00 lat (ms,95%): 0.01
        let rest = l.split_once(" ] ").unwrap().1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        assert_eq!(&f[..2], ["thds:", "1"], "{l}");
        assert_eq!(f[2], "eps:");
        assert!(f[3].parse::<f64>().is_ok());
        assert_eq!(&f[4..6], ["lat", "(ms,95%):"]);
        assert!(f[6].parse::<f64>().is_ok());
    }
    let v = json_run(&["cpu", FAST, "--time=1", "--report-interval=0.25", "run"]);
    assert!(v["intervals"].as_array().unwrap().len() >= 3);
}

#[test]
fn without_report_interval_the_record_still_samples_each_second_and_prints_none() {
    let args = ["cpu", FAST, "--time=2.5", "run"];
    let (code, out, _) = run(&args);
    assert_eq!(code, 0);
    assert!(!out.lines().any(|l| l.starts_with("[ ")), "{out}");
    assert!(!out.contains("Report intermediate results"), "{out}");
    let v = json_run(&args);
    assert!(v["settings"].is_object() && v["settings"]["report_interval_s"].is_null());
    let iv = v["intervals"].as_array().unwrap();
    // One sample at 1 s and one at 2 s; the last half second is in the totals only.
    let at: Vec<f64> = iv.iter().map(|i| i["at_s"].as_f64().unwrap()).collect();
    assert_eq!(at, [1.0, 2.0], "{iv:?}");
    assert!(iv.iter().all(|i| i["length_s"] == 1.0));
}

#[test]
fn warmup_is_excluded_from_results_and_marked_in_intervals() {
    let v = json_run(&[
        "cpu",
        FAST,
        "--time=0.5",
        "--warmup-time=0.5",
        "--report-interval=0.25",
        "run",
    ]);
    assert_eq!(v["warmup_time_s"], 0.5);
    let t = v["total_time_s"].as_f64().unwrap();
    assert!((0.45..1.4).contains(&t), "{t}");
    let iv = v["intervals"].as_array().unwrap();
    assert!(iv.iter().any(|i| i["warmup"] == true));
    assert!(iv.iter().any(|i| i["warmup"] == false));
    let all: u64 = iv.iter().map(|i| i["events"].as_u64().unwrap()).sum();
    assert!(v["events"].as_u64().unwrap() < all);
}

#[test]
fn open_loop_rate_reports_offered_and_achieved() {
    let v = json_run(&["cpu", FAST, "--time=1", "--rate=300", "run"]);
    let ol = &v["open_loop"];
    assert_eq!(ol["offered_per_s"], 300.0);
    let achieved = ol["achieved_per_s"].as_f64().unwrap();
    // Arrivals are Poisson: 300 expected in 1 s with a standard deviation of about 17, so a
    // correct schedule stays below 300 + 6 sd. Whether a loaded machine kept up is speed and
    // not checked here, hence the low floor.
    assert!((30.0..405.0).contains(&achieved), "{achieved}");
    assert!(ol["saturated"].is_boolean());
    assert_eq!(ol["service"]["count"], v["events"]);
    let (_, out, _) = run(&["cpu", FAST, "--time=0.5", "--rate=300", "run"]);
    assert!(out.contains("Target transaction rate: 300/sec"));
    assert!(out.contains("Open-loop rate:"));
    assert!(out.contains("Lag, intended to actual start (ms):"));
}

#[test]
fn open_loop_flags_saturation() {
    // 100 000 events a second for half a second: far more than the workers do, and fewer
    // than the 131 072 waiting events that would fail the run.
    let v = json_run(&[
        "cpu",
        "--cpu-max-prime=20000",
        "--time=0.5",
        "--rate=100000",
        "run",
    ]);
    assert_eq!(v["open_loop"]["saturated"], true);
    let (_, out, _) = run(&[
        "cpu",
        "--cpu-max-prime=20000",
        "--time=0.5",
        "--rate=100000",
        "run",
    ]);
    assert!(out.contains("saturated:                    yes"));
}

#[test]
fn random_options_a_test_cannot_honour_are_refused() {
    assert_usage_error(
        &["cpu", "--rand-seed=42", "run"],
        &["--rand-seed", "cpu", "no random choices"],
    );
    assert_usage_error(
        &["cpu", "--rand-type=pareto", "run"],
        &["--rand-type", "cpu"],
    );
}

#[test]
fn json_file_is_written_beside_the_text_report() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.json");
    let (code, out, _) = run(&[
        "cpu",
        FAST,
        "--events=50",
        "--time=0",
        &format!("--json={}", f.display()),
        "run",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("General statistics:"));
    let v: serde_json::Value = job_json(std::fs::read(&f).unwrap());
    assert_eq!(v["events"], 50);
}

#[test]
fn unwritable_json_file_fails_before_the_run() {
    let (code, out, err) = run(&[
        "cpu",
        FAST,
        "--time=5",
        "--json=/nonexistent/dir/r.json",
        "run",
    ]);
    assert_eq!(code, 1);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/dir/r.json"));
    assert!(!out.contains("General statistics"));
}

#[test]
fn json_format_keeps_stdout_pure_and_intervals_on_stderr() {
    let out = scenario(&[
        "cpu",
        FAST,
        "--time=0.6",
        "--report-interval=0.2",
        "--format=json",
        "run",
    ])
    .ok();
    let v = job_json(&out.stdout);
    assert_eq!(v["schema"], "plumb.result/2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("thds: 1 eps:"));
}

fn interrupt(sig: i32, code: i32, label: &str) {
    let mut child = scenario(&["cpu", "--cpu-max-prime=100000", "--time=60", "run"]).spawn();
    std::thread::sleep(Duration::from_millis(800));
    let sent = Instant::now();
    signal(&child, sig);
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(code));
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(out.contains("General statistics:"), "{out}");
    assert!(out.contains(&format!("Run interrupted ({label})")), "{out}");
}

#[test]
fn sigint_prints_the_partial_report_and_exits_130() {
    interrupt(libc::SIGINT, 130, "SIGINT");
}

#[test]
fn sigterm_prints_the_partial_report_and_exits_143() {
    interrupt(libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn interrupted_json_is_marked() {
    let child = scenario(&["cpu", FAST, "--time=60", "--format=json", "run"]).spawn();
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v = job_json(&out.stdout);
    assert_eq!(v["status"], "interrupted");
    assert_eq!(v["stop_reason"], "signal SIGINT");
}

/// sysbench's --verbosity under plumb's own name: below 3 nothing is printed on success, the
/// JSON result and its events are still there.
#[test]
fn low_verbosity_prints_nothing_but_keeps_the_result() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("r.json");
    let json = format!("--json={}", file.display());
    let (code, out, err) = run(&[
        "cpu",
        FAST,
        "--verbosity=1",
        "--events=50",
        "--time=0",
        &json,
        "run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["groups"][0]["jobs"][0]["events"], 50, "{v}");
    // --format=json is the result asked for, not a log line: it still goes to stdout.
    let (code, out, _) = run(&[
        "cpu",
        FAST,
        "--verbosity=0",
        "--events=5",
        "--time=0",
        "--format=json",
        "run",
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with('{'), "{out}");
}

/// sysbench's info and debug levels under plumb's name: its extra lines in plumb's report
/// (what the test does, each worker thread, how the workers ended), --debug's figures for
/// each thread, kept in the JSON result too; the OLTP scripts' run at the debug level is
/// refused (usage, exit 2), as are fileio's runs under --debug.
#[test]
fn info_and_debug_levels_under_plumb_s_name() {
    let (code, out, err) = run(&[
        "cpu",
        FAST,
        "--verbosity=4",
        "--events=20",
        "--time=0",
        "run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\nDoing CPU performance benchmark\n\nPrime numbers limit"),
        "{out}"
    );
    assert!(
        out.contains("Threads started!\n\nEvent limit exceeded, exiting...\nDone.\n\nCPU speed:"),
        "{out}"
    );
    assert!(!out.contains("DEBUG"), "{out}");
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("r.json");
    let json = format!("--json={}", file.display());
    let (code, out, err) = run(&[
        "cpu",
        FAST,
        "--debug",
        "--threads=2",
        "--events=30",
        "--time=0",
        &json,
        "run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Debug mode enabled.\n\n"), "{out}");
    assert!(
        out.contains("DEBUG: Worker thread (#1) initialized\nThreads started!"),
        "{out}"
    );
    assert!(
        out.contains("(last message repeated 1 times)\nDone."),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let threads = v["groups"][0]["jobs"][0]["threads"]
        .as_array()
        .unwrap()
        .clone();
    let mut events = 0;
    for (i, t) in threads.iter().enumerate() {
        let (n, min, max) = (
            t["events"].as_u64().unwrap(),
            t["min_ns"].as_u64().unwrap(),
            t["max_ns"].as_u64().unwrap(),
        );
        events += n;
        assert!(
            n == 0 && min == 0 && max == 0 || 0 < min && min <= max,
            "{t}"
        );
        assert!(
            out.contains(&format!(
                "DEBUG:     thread #{i:3}: min: {:.4}s",
                min as f64 / 1e9
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!("max: {:.4}s  events: {n}\n", max as f64 / 1e9)),
            "{out}"
        );
    }
    assert_eq!(events, 30);
    for (args, words) in [
        (
            &["oltp_point_select", "--verbosity=5", "run"][..],
            "--verbosity=5 is not supported yet for the OLTP scripts' run",
        ),
        (
            &["fileio", "--debug", "--file-test-mode=rndrd", "run"],
            "--debug is not supported yet for fileio's run",
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert!(err.starts_with(&format!("plumb: {words}")), "{err}");
    }
}

/// Under plumb's name too: a sysbench option plumb lacks is unsupported (exit 2), an unknown
/// name is unknown.
#[test]
fn sysbench_options_plumb_lacks_are_named_unsupported() {
    let (code, out, err) = run(&["threads", "--thread-stack-size=64K", "run"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "plumb: --thread-stack-size is a sysbench option plumb does not support yet\n"
    );
    // --report-checkpoints is taken; a list it cannot read is named.
    let (code, out, err) = run(&["cpu", "--report-checkpoints=1,soon", "run"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "plumb: invalid value for --report-checkpoints: 'soon' (allowed: whole seconds from 0 to 2147483647, comma-separated, at most 256)\n"
    );
    // sysbench's general --validate: the drop-in prints its header line for any test, but
    // under plumb's name a test with nothing to validate does not take it.
    let (code, _, err) = run(&["cpu", "--validate", "run"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "plumb: --validate is a sysbench option plumb does not support yet\n"
    );
    let (code, _, err) = run(&["cpu", "--no-such-option=1", "run"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown option --no-such-option for the 'cpu' test"),
        "{err}"
    );
}

/// --config-file under plumb's name: options from the file, a later typed option wins, a
/// misspelt name in the file is refused like a typed one.
#[test]
fn config_file_options_count_as_typed() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("sb.conf");
    std::fs::write(&f, "threads=2\nevents=30\ntime=0\n").unwrap();
    let opt = format!("--config-file={}", f.display());
    let v = json_run(&["cpu", FAST, &opt, "--events=40", "run"]);
    assert_eq!(v["events"], 40);
    assert_eq!(v["threads"].as_array().unwrap().len(), 2);
    let v = json_run(&["cpu", FAST, "--events=40", &opt, "run"]);
    assert_eq!(v["events"], 30);
    std::fs::write(&f, "thredas=2\n").unwrap();
    let (code, _, err) = run(&["cpu", &opt, "run"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown option --thredas"), "{err}");
}
