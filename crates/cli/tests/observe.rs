//! Observation through the binary: `plumb inspect`, `plumb iostat`, and the observations
//! every run carries.

mod common;
use common::*;

use serde_json::Value;

fn inspect_json(path: &str) -> Value {
    scenario(&["inspect", path, "--format=json"]).ok_json()
}

/// The block device behind /tmp on this machine, as inspect resolves it.
fn tmp_device() -> String {
    let v = inspect_json("/tmp");
    v["target"]["disks"][0]["name"]
        .as_str()
        .expect("/tmp is on a disk")
        .to_string()
}

#[test]
fn inspect_dev_shm_says_tmpfs() {
    let v = inspect_json("/dev/shm");
    assert_eq!(v["schema"], "plumb.inspect/1");
    assert_eq!(v["target"]["kind"], "tmpfs");
    assert_eq!(v["target"]["fs_type"], "tmpfs");
    assert!(v["target"]["device"].is_null());
    let (code, out, _) = run(&["inspect", "/dev/shm"]);
    assert_eq!(code, 0);
    assert!(out.contains("kind:                         tmpfs"), "{out}");
    assert!(out.contains("files live in memory"), "{out}");
}

#[test]
fn inspect_tmp_names_its_block_device() {
    let v = inspect_json("/tmp");
    let t = &v["target"];
    assert_eq!(t["kind"], "disk");
    let dev = t["device"]["name"].as_str().expect("a device");
    assert!(
        std::path::Path::new(&format!("/sys/class/block/{dev}")).exists(),
        "{dev} is a block device"
    );
    // The filesystem type is the one mountinfo gives for the mount point found.
    let fs = t["fs_type"].as_str().unwrap();
    let mp = t["mount_point"].as_str().unwrap();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        mountinfo
            .lines()
            .any(|l| l.split(' ').nth(4) == Some(mp) && l.contains(&format!(" - {fs} "))),
        "{mp} {fs}"
    );
    assert!(t["fs_available_bytes"].as_u64().is_some());
    assert!(v["host"]["memory_total_bytes"].as_u64().unwrap() > 0);
    assert!(v["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    let (code, out, _) = run(&["inspect", "/tmp"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("device:                       /dev/{dev}")),
        "{out}"
    );
    assert!(out.contains("system disk:"), "{out}");
    assert!(out.contains("Before running:"), "{out}");
}

#[test]
fn inspect_errors_are_one_line() {
    let (code, out, err) = run(&["inspect", "/nonexistent"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("/nonexistent") && err.contains("No such file"),
        "{err}"
    );
    assert_usage_error(&["inspect"], &["needs a path"]);
    assert_usage_error(&["inspect", "/tmp", "--format=xml"], &["--format", "xml"]);
    assert_usage_error(
        &["inspect", "/tmp", "/var"],
        &["unexpected argument", "'/var'"],
    );
    assert_usage_error(&["inspect", "--bogus", "/tmp"], &["--bogus"]);
}

#[test]
fn inspect_a_file_reports_its_page_cache_residency() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    std::fs::write(&f, vec![5u8; 1 << 20]).unwrap();
    // Read it back so its pages are in the cache.
    assert_eq!(std::fs::read(&f).unwrap().len(), 1 << 20);
    let v = inspect_json(f.to_str().unwrap());
    let r = &v["residency"];
    assert_eq!(r["total_bytes"], 1 << 20);
    assert!(r["resident_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(["cachestat", "mincore"].contains(&r["method"].as_str().unwrap()));
    // A directory has no residency.
    assert!(inspect_json(dir.path().to_str().unwrap())["residency"].is_null());
}

#[test]
fn iostat_prints_count_reports_in_iostat_x_columns() {
    let dev = tmp_device();
    let (code, out, err) = run(&["iostat", &dev, "0.2", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Linux "), "{out}");
    assert_eq!(
        out.matches("avg-cpu:  %user   %nice %system %iowait  %steal   %idle")
            .count(),
        2
    );
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("Device ")).collect();
    assert_eq!(headers.len(), 2);
    for col in [
        "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await", "aqu-sz",
        "rareq-sz", "wareq-sz", "%util",
    ] {
        assert!(
            headers[0].split_whitespace().any(|c| c == col),
            "{col} in {}",
            headers[0]
        );
    }
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(dev.as_str()))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    // A figure wider than its column pushes the row out, as in iostat: compare fields, not width.
    for r in rows {
        assert_eq!(
            r.split_whitespace().count(),
            headers[0].split_whitespace().count()
        );
    }
}

#[test]
fn iostat_brief_the_documented_example() {
    let dev = tmp_device();
    let (code, out, err) = run(&["iostat", &dev, "1", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("\nDevice ").count(), 2);
}

#[test]
fn iostat_without_device_skips_idle_devices_and_partitions() {
    let (code, out, _) = run(&["iostat"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("avg-cpu:").count(), 1);
    for l in out
        .lines()
        .skip_while(|l| !l.starts_with("Device "))
        .skip(1)
    {
        let Some(name) = l.split_whitespace().next() else {
            continue;
        };
        assert!(
            std::path::Path::new(&format!("/sys/block/{name}")).exists(),
            "{name} is a whole device"
        );
        let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
        assert!(
            stat.split_whitespace().any(|f| f != "0"),
            "{name} has had I/O"
        );
    }
}

#[test]
fn iostat_bad_arguments() {
    let (code, _, err) = run(&["iostat", "nosuchdevice0"]);
    assert_eq!(code, 1);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("nosuchdevice0"));
    assert_usage_error(&["iostat", "0"], &["interval"]);
    assert_usage_error(&["iostat", "1", "0"], &["count"]);
    assert_usage_error(&["iostat", "1", "2", "3"], &["unexpected"]);
    assert_usage_error(&["iostat", "-x"], &["-x"]);
}

#[test]
fn a_cpu_run_carries_host_system_and_process_observations() {
    let v = json_run(&[
        "cpu",
        "--cpu-max-prime=2000",
        "--time=1",
        "--observe-interval=0.2",
        "run",
    ]);
    let o = &v["observations"];
    assert!(o.is_object(), "{v}");
    assert_eq!(o["interval_s"], 0.2);
    assert!(o["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert!(o["target"].is_null(), "cpu has no target");
    assert!(o["residency"].is_null());
    let samples = o["system"]["samples"].as_array().unwrap();
    assert!(!samples.is_empty());
    for s in samples {
        let sum: f64 = [
            "user_pct",
            "nice_pct",
            "system_pct",
            "iowait_pct",
            "steal_pct",
            "idle_pct",
        ]
        .iter()
        .map(|k| s[k].as_f64().unwrap())
        .sum();
        assert!(sum == 0.0 || (sum - 100.0).abs() < 1e-6, "{s}");
    }
    assert!(!o["memory"]["samples"].as_array().unwrap().is_empty());
    let p = &o["process"];
    let ops = sum_of(&v["operations"], "count");
    assert_eq!(p["operations"].as_u64().unwrap(), ops);
    assert!(p["per_operation"]["cpu_ns"].as_f64().unwrap() > 0.0);
    assert!(p["threads"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "plumb-worker-0"));
    assert!(o["tracer"]["at_start"].is_null());
    assert!(o["sampler"]["samples"].as_u64().unwrap() >= 1);
}

#[test]
fn observe_interval_zero_keeps_start_and_end_facts_only() {
    let v = json_run(&[
        "cpu",
        "--cpu-max-prime=300",
        "--events=50",
        "--time=0",
        "--observe-interval=0",
        "run",
    ]);
    let o = &v["observations"];
    assert!(o["interval_s"].is_null());
    assert_eq!(o["sampler"]["samples"], 0);
    assert!(o["system"]["samples"].as_array().unwrap().is_empty());
    assert!(o["system"]["totals"].is_object());
    assert!(o["memory"]["start"].is_object() && o["memory"]["end"].is_object());
    assert_eq!(o["process"]["operations"], 50);
    assert_usage_error(
        &["cpu", "--observe-interval=0.001", "run"],
        &["--observe-interval", "0.001"],
    );
    assert_usage_error(
        &["cpu", "--observe-interval=abc", "run"],
        &["--observe-interval"],
    );
}

#[test]
fn text_report_ends_with_the_observed_section() {
    let (code, out, err) = run(&[
        "cpu",
        "--cpu-max-prime=300",
        "--events=100",
        "--time=0",
        "run",
    ]);
    assert_eq!(code, 0, "{err}");
    let fair = out.find("Threads fairness:").expect("sysbench sections");
    let obs = out
        .find("Observed during the run:")
        .expect("observed section");
    assert!(obs > fair);
    let section = &out[obs..];
    for label in [
        "context switches per op:",
        "machine CPU:",
        "plumb CPU:",
        "load at start:",
        "tracer attached:",
    ] {
        assert!(section.contains(label), "{label} in {section}");
    }
    assert!(section.contains("tracer attached:              no"));
}

#[test]
fn help_lists_the_native_commands() {
    let (code, out, _) = run(&["help"]);
    assert_eq!(code, 0);
    assert!(out.contains("plumb inspect PATH"));
    assert!(out.contains("plumb iostat [DEVICE...] [INTERVAL [COUNT]]"));
}

#[test]
fn a_tracer_attached_to_plumb_is_reported() {
    if !peer("strace") {
        return;
    }
    let v = scenario(&[
        "cpu",
        "--cpu-max-prime=300",
        "--events=100",
        "--time=0",
        "--format=json",
        "run",
    ])
    .under(&["strace", "-f", "-e", "trace=none", "-o", "/dev/null"])
    .ok_job();
    let t = &v["observations"]["tracer"];
    assert_eq!(t["at_start"]["name"], "strace", "{t}");
    assert_eq!(t["at_end"]["name"], "strace", "{t}");
}

#[test]
fn back_to_back_runs_judge_the_start_by_what_runs_now() {
    // The first run leaves its mark on the 1-minute load average; the second must be judged
    // by what runs at its start. This machine may itself be busy (CI builds), so the test
    // checks that the finding follows exactly the facts measured at the start.
    let args = ["cpu", "--cpu-max-prime=2000", "--time=1", "run"];
    json_run(&args);
    let v = json_run(&args);
    let l = &v["observations"]["load_at_start"];
    assert_eq!(l["runnable_samples"], 10, "{l}");
    assert!(l["window_s"].as_f64().unwrap() >= 0.25, "{l}");
    let busy = l["busy_other_pct"].as_f64().expect("busy_other_pct");
    let runnable = l["runnable_other_mean"]
        .as_f64()
        .expect("runnable_other_mean");
    assert!(busy <= l["busy_cpu_pct"].as_f64().unwrap() + 1e-9, "{l}");
    let powersave = v["observations"]["host"]["frequency_governors"]
        .as_array()
        .unwrap()
        .first()
        .is_some_and(|g| g == "powersave");
    let noisy = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "noisy-machine");
    // The kernel's threads (writeback of the first run's work) count as work still running,
    // named apart from other programs.
    let kernel = l["runnable_kernel_mean"].as_f64().unwrap_or(0.0);
    assert!(
        l["runnable_kernel_mean"].is_f64()
            || !std::path::Path::new("/proc/2/task/2/children").exists(),
        "{l}"
    );
    let running_now = busy > 10.0 || runnable >= 1.0 || kernel >= 1.0;
    assert_eq!(
        noisy.is_some(),
        running_now || powersave,
        "load at start {l}, finding {noisy:?}"
    );
    if let Some(f) = noisy {
        // Never the load average alone: it is context next to what ran now.
        let names: Vec<&str> = f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[0].as_str().unwrap_or(""))
            .collect();
        assert!(
            names.iter().any(|n| !n.starts_with("load average")),
            "{names:?}"
        );
    }
}
