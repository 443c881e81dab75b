//! `plumb fio` and the `fio` drop-in name, run as users run them: the seeds' command line and
//! job file, fio's report sections, the JSON document, replay, findings and refusals.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

use common::plumb;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_plumb(dir: &Path, args: &[&str]) -> Output {
    plumb()
        .arg("fio")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("plumb runs")
}

/// A directory holding a symlink named `fio` to the plumb binary.
fn drop_in() -> (TempDir, PathBuf) {
    let d = TempDir::new().unwrap();
    let bin = d.path().join("fio");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("plumb"), &bin).unwrap();
    (d, bin)
}

fn issued(report: &str) -> Vec<[u64; 4]> {
    report
        .lines()
        .filter_map(|l| l.trim().strip_prefix("issued rwts: total="))
        .map(|rest| {
            let totals = rest.split(' ').next().unwrap();
            let v: Vec<u64> = totals.split(',').map(|n| n.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect()
}

/// Seed 000's command line, unchanged: 1 GiB of 4 KiB random reads and writes with libaio at
/// depth 128, O_DIRECT, size-limited (the runtime is only a cap).
#[test]
fn seed_000_command_runs_unchanged() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "-direct=1",
            "-iodepth=128",
            "-rw=randrw",
            "-ioengine=libaio",
            "-bs=4k",
            "-size=1G",
            "-numjobs=1",
            "-runtime=1000",
            "-group_reporting",
            "-filename=iotest",
            "-name=randrw_test",
        ],
    );
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    assert!(report.starts_with(
        "randrw_test: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=128\nfio-3.33\nStarting 1 process\nrandrw_test: Laying out IO file (1 file / 1024MiB)\n"
    ), "{report}");
    assert!(report.contains("\nrandrw_test: (groupid=0, jobs=1): err= 0: pid="));
    assert!(report.contains("\n  read: IOPS="));
    assert!(report.contains("\n  write: IOPS="));
    assert!(report.contains("     latency   : target=0, window=0, percentile=100.00%, depth=128\n"));
    assert!(report.contains("\nRun status group 0 (all jobs):\n   READ: bw="));
    assert!(report.contains("\n  WRITE: bw="));
    // Every 4 KiB block of the 1 GiB file once: reads and writes add up to 262144.
    let t = issued(&report);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0][0] + t[0][1], 262_144, "{report}");
    assert!(t[0][0] > 100_000 && t[0][1] > 100_000);
    assert_eq!(
        std::fs::metadata(d.path().join("iotest")).unwrap().len(),
        1 << 30
    );
    // plumb's sections follow fio's report under the name plumb.
    assert!(report.contains("Observed during the run:"), "{report}");
}

/// Seed 003's job file: [global] with wait_for_previous, group_reporting, ramp_time,
/// time_based, refill_buffers; four jobs, one group each. The seed points it at /dev/sdb with
/// 10 s runs after a 5 s ramp; here at a file, 1 s after 1 s.
#[test]
fn seed_003_job_file_runs_four_groups() {
    let d = TempDir::new().unwrap();
    let disk = d.path().join("disk.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let job = format!(
        "[global]\nfilename={}\ndirect=1\nioengine=libaio\ntime_based\nruntime=1\niodepth=4\nrefill_buffers\ngroup_reporting\nwait_for_previous\nramp_time=1\n[JOB1]\nbs=4k\nrw=read\n[JOB2]\nbs=32k\nrw=read\n[JOB3]\nbs=4k\nrw=write\n[JOB4]\nbs=32k\nrw=write\n",
        disk.display()
    );
    std::fs::write(d.path().join("fio.cfg"), job).unwrap();
    let out = run_plumb(d.path(), &["fio.cfg", "--plumb-findings=off"]);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    let headers: Vec<&str> = report.lines().take(6).collect();
    assert_eq!(
        headers,
        [
            "JOB1: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=4",
            "JOB2: (g=1): rw=read, bs=(R) 32.0KiB-32.0KiB, (W) 32.0KiB-32.0KiB, (T) 32.0KiB-32.0KiB, ioengine=libaio, iodepth=4",
            "JOB3: (g=2): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=4",
            "JOB4: (g=3): rw=write, bs=(R) 32.0KiB-32.0KiB, (W) 32.0KiB-32.0KiB, (T) 32.0KiB-32.0KiB, ioengine=libaio, iodepth=4",
            "fio-3.33",
            "Starting 4 processes",
        ]
    );
    for g in 0..4 {
        assert!(
            report.contains(&format!(
                "JOB{}: (groupid={g}, jobs=1): err= 0: pid=",
                g + 1
            )),
            "{report}"
        );
        assert!(report.contains(&format!("\nRun status group {g} (all jobs):\n")));
    }
    // The runs are time-based: each reports about its 1 s runtime, the ramp excluded.
    for line in report.lines().filter(|l| l.contains(", run=")) {
        let run = line.rsplit("run=").next().unwrap();
        let ms: u64 = run.split('-').next().unwrap().parse().unwrap();
        assert!((950..3000).contains(&ms), "{line}");
    }
    let t = issued(&report);
    assert_eq!(t.len(), 4);
    assert!(
        t[0][0] > 0 && t[0][1] == 0 && t[2][1] > 0 && t[2][0] == 0,
        "{t:?}"
    );
    assert!(
        !report.contains("Observed during the run"),
        "findings were turned off"
    );
}

#[test]
fn drop_in_json_is_a_pure_document_with_plumb_evidence() {
    let (bin_dir, bin) = drop_in();
    let d = TempDir::new().unwrap();
    let out = Command::new(&bin)
        .args([
            "--name=rr",
            "--rw=randrw",
            "--rwmixread=70",
            "--size=4m",
            "--bs=4k",
            "--output-format=json",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        out.stderr.is_empty(),
        "stderr must stay empty: {}",
        text(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["fio version"], "fio-3.33");
    let job = &doc["jobs"][0];
    assert_eq!(job["jobname"], "rr");
    assert_eq!(job["job options"]["rw"], "randrw");
    assert_eq!(job["job options"]["rwmixread"], "70");
    let (r, w) = (
        job["read"]["total_ios"].as_u64().unwrap(),
        job["write"]["total_ios"].as_u64().unwrap(),
    );
    assert_eq!(r + w, 1024);
    assert_eq!(
        job["read"]["io_bytes"].as_u64().unwrap() + job["write"]["io_bytes"].as_u64().unwrap(),
        4 << 20
    );
    assert!(r > 600 && r < 830, "rwmixread=70 of 1024: {r}");
    assert!(doc["plumb"]["groups"][0]["observations"].is_object());
    // The file is named as fio names it.
    assert!(d.path().join("rr.0.0").exists());
    drop(bin_dir);
}

#[test]
fn group_reporting_merges_clones_into_one_block() {
    let d = TempDir::new().unwrap();
    let args = [
        "--name=g",
        "--rw=write",
        "--size=1m",
        "--numjobs=3",
        "--plumb-findings=off",
    ];
    let out = run_plumb(d.path(), &args);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        report.matches("g: (groupid=0, jobs=1)").count(),
        3,
        "{report}"
    );
    assert!(report.starts_with("g: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1\n...\nfio-3.33\nStarting 3 processes\n"), "{report}");
    let mut files: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["g.0.0", "g.1.0", "g.2.0"]);

    let d = TempDir::new().unwrap();
    let mut merged = args.to_vec();
    merged.push("--group_reporting");
    let out = run_plumb(d.path(), &merged);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        report.matches("g: (groupid=0, jobs=3)").count(),
        1,
        "{report}"
    );
    assert_eq!(issued(&report), vec![[0, 768, 0, 0]]);
}

#[test]
fn fsync_every_n_writes_is_reported_as_fio_does() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=f",
            "--rw=write",
            "--size=256k",
            "--fsync=4",
            "--plumb-findings=off",
        ],
    );
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // 64 writes, a sync after every 4th that another write follows (fio issues none after
    // the last: the differential tests hold plumb to that).
    assert_eq!(issued(&report), vec![[0, 64, 0, 15]]);
    assert!(
        report.contains("  fsync/fdatasync/sync_file_range:\n    sync ("),
        "{report}"
    );
}

#[test]
fn output_file_and_record_replay() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=s",
            "--rw=read",
            "--size=2m",
            "--iodepth=2",
            "--output=rep.txt",
            "--plumb-json=rec.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "the report went to the file");
    let saved = std::fs::read_to_string(d.path().join("rep.txt")).unwrap();
    assert!(saved.contains("s: (groupid=0, jobs=1)"), "{saved}");
    assert!(saved.contains("s: Laying out IO file (1 file / 2MiB)\nnote: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"), "{saved}");
    let replay = plumb()
        .args(["report", "rec.json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(replay.status.success(), "{}", text(&replay.stderr));
    assert_eq!(text(&replay.stdout), saved);
    let rec: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("rec.json")).unwrap()).unwrap();
    assert_eq!(rec["front_end"], "fio");
    assert_eq!(rec["groups"][0]["jobs"][0]["layout"]["header"]["name"], "s");
}

#[test]
fn buffered_reads_of_a_cached_file_are_flagged() {
    let d = TempDir::new().unwrap();
    let args = ["--name=c", "--rw=randread", "--size=8m", "--invalidate=0"];
    // The first run lays the file out and reads it all (its pages stay cached); the second
    // reads it again.
    assert!(run_plumb(d.path(), &args).status.success());
    let out = run_plumb(d.path(), &args);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(report.contains("(page-cache-reads)"), "{report}");
    assert!(
        report.contains("direct=1"),
        "advice in fio's words: {report}"
    );
}

#[test]
fn refusals_are_one_line_and_nothing_runs() {
    let d = TempDir::new().unwrap();
    for (args, want) in [
        (
            vec!["--name=x", "--size=1m", "--fill_device=1"],
            "plumb: fio option 'fill_device' (value '1') is not supported yet",
        ),
        (
            vec!["--name=x", "--size=1m", "--ioengine=rbd"],
            "plumb: fio engine 'rbd' is not supported",
        ),
        (vec!["--name=x"], "x: you need to specify size="),
        (
            vec!["--name=x", "--size=1m", "--zero_buffers", "--scramble_buffers=1"],
            "plumb: fio option 'scramble_buffers' (value '1') is not supported yet: with zero_buffers fio stamps every 512 bytes",
        ),
        (
            vec!["--name=x", "--size=1k"],
            "fio: size too small, must not be less than minimum block size: 1024 < 4096",
        ),
    ] {
        let out = run_plumb(d.path(), &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "no file was made"
    );
}

#[test]
fn parse_only_and_readonly() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(d.path(), &["--parse-only", "--name=x", "--size=1m"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let out = run_plumb(
        d.path(),
        &["--readonly", "--name=x", "--size=1m", "--rw=write"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "fio: job <x> has write or trim bit set, but fio is in read-only mode\n"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn unlink_removes_only_the_files_the_job_created() {
    let d = TempDir::new().unwrap();
    std::fs::write(d.path().join("mine"), vec![7u8; 65536]).unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=u",
            "--filename=mine:new",
            "--rw=read",
            "--size=128k",
            "--unlink=1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        d.path().join("mine").exists(),
        "a file plumb did not create stays"
    );
    assert!(!d.path().join("new").exists());
}

#[test]
fn a_rate_runs_open_loop_and_says_what_fio_hides() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=r",
            "--rw=randread",
            "--size=4m",
            "--rate_iops=500",
            "--runtime=1",
            "--time_based",
        ],
    );
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = issued(&report);
    // 500 requests a second for a second, evenly spaced as fio does: never more than the
    // rate allows; fewer only when a loaded machine fell behind, which is speed.
    assert!((100..=520).contains(&t[0][0]), "{t:?}");
    assert!(
        report.contains(
            "Open-loop rate (rate/rate_iops):\n    offered, IOPS:                500.00\n"
        ),
        "{report}"
    );
    assert!(report.contains("    latency from intended start:  avg "));

    let both = run_plumb(
        d.path(),
        &["--name=r", "--size=4m", "--rate=1m", "--rate_iops=5"],
    );
    assert_eq!(both.status.code(), Some(1));
    assert_eq!(
        text(&both.stderr),
        "fio: rate and rate_iops are mutually exclusive\n"
    );
    // On a mixed job each direction gets the rate, whatever rwmixread says (as in fio).
    let mixed = run_plumb(
        d.path(),
        &[
            "--name=r",
            "--rw=randrw",
            "--rwmixread=70",
            "--size=4m",
            "--rate_iops=300",
            "--runtime=1",
            "--time_based",
            "--plumb-findings=off",
        ],
    );
    assert!(mixed.status.success(), "{}", text(&mixed.stderr));
    let t = issued(&text(&mixed.stdout));
    // 600 requests evenly spaced, each one's direction drawn at 50%: about 300 each with a
    // standard deviation of 12, so never above 360; fewer only on a loaded machine.
    assert!(
        (60..=360).contains(&t[0][0]) && (60..=360).contains(&t[0][1]),
        "{t:?}"
    );
    let hipri = run_plumb(
        d.path(),
        &["--name=r", "--size=4m", "--ioengine=libaio", "--hipri=1"],
    );
    assert_eq!(hipri.status.code(), Some(1), "{}", text(&hipri.stderr));
}

#[test]
fn cpus_nice_and_io_priority_reach_the_job() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=p",
            "--size=1m",
            "--cpus_allowed=0",
            "--nice=3",
            "--prioclass=2",
            "--prio=6",
            "--plumb-json=p.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rec: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("p.json")).unwrap()).unwrap();
    let p = &rec["groups"][0]["jobs"][0]["workload"]["placement"];
    assert_eq!(p["cpus"], serde_json::json!([0]));
    assert_eq!(p["nice"], 3);
    assert_eq!(p["io_priority"], serde_json::json!([2, 6]));
    let mask = run_plumb(
        d.path(),
        &[
            "--name=p",
            "--size=1m",
            "--cpumask=1",
            "--plumb-findings=off",
        ],
    );
    assert!(mask.status.success(), "{}", text(&mask.stderr));
    let bad = run_plumb(d.path(), &["--name=p", "--size=1m", "--cpus_allowed=4095"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).starts_with("fio: CPU 4095 too large"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn log_files_as_fio_writes_them() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=l",
            "--rw=read",
            "--size=256k",
            "--write_bw_log=l",
            "--write_iops_log=l",
            "--write_lat_log=l",
            "--plumb-findings=off",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = |n: &str| std::fs::read_to_string(d.path().join(n)).unwrap();
    // One line per request: 64 reads of 4 KiB.
    let iops = read("l_iops.1.log");
    assert_eq!(iops.lines().count(), 64);
    assert!(
        iops.lines().all(|l| l.ends_with(", 1, 0, 4096, 0")),
        "{iops}"
    );
    let lat = read("l_lat.1.log");
    assert_eq!(
        lat,
        read("l_clat.1.log"),
        "a blocking engine's lat is its clat"
    );
    for l in lat.lines() {
        let f: Vec<&str> = l.split(", ").collect();
        assert_eq!(f.len(), 5, "{l}");
        assert!(f[1].parse::<u64>().unwrap() > 0);
    }
    assert_eq!(read("l_slat.1.log"), "");
    assert_eq!(read("l_bw.1.log").lines().count(), 64);
}

#[test]
fn verify_reads_back_what_was_written_and_catches_damage() {
    let d = TempDir::new().unwrap();
    let base = ["--name=v", "--size=256k", "--plumb-findings=off"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |extra: &[&str]| {
        let args = with(extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run_plumb(d.path(), &refs)
    };
    // Write, then read every request back and check it (fio's do_verify=1).
    for sum in ["crc32c", "md5"] {
        let verify = format!("--verify={sum}");
        let out = run(&["--rw=randwrite", &verify]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(issued(&text(&out.stdout)), vec![[64, 64, 0, 0]]);
    }
    // Written and left; one flipped byte is then found by a verifying reader.
    let out = run(&["--rw=write", "--verify=md5", "--do_verify=0"]);
    assert_eq!(issued(&text(&out.stdout)), vec![[0, 64, 0, 0]]);
    let f = d.path().join("v.0.0");
    let mut data = std::fs::read(&f).unwrap();
    data[5 * 4096 + 100] ^= 0xff;
    std::fs::write(&f, &data).unwrap();
    let out = run(&["--rw=read", "--verify=md5"]);
    assert_eq!(out.status.code(), Some(1), "one job failed");
    let report = text(&out.stdout);
    assert!(
        report.contains(
            "v: (groupid=0, jobs=1): err=84 (md5: verify failed at offset 20480, length 4096"
        ),
        "{report}"
    );
    assert_eq!(
        issued(&report),
        vec![[64, 0, 0, 0]],
        "verify_fatal=0 checks everything"
    );
    let out = run(&["--rw=read", "--verify=md5", "--verify_fatal=1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        issued(&text(&out.stdout)),
        vec![[6, 0, 0, 0]],
        "stops at the bad one"
    );
}

#[test]
fn sigint_prints_the_report_so_far_and_exits_as_fio_does() {
    let (_bin_dir, bin) = drop_in();
    let d = TempDir::new().unwrap();
    let child = std::process::Command::new(&bin)
        .args([
            "--name=t",
            "--size=4m",
            "--runtime=30",
            "--time_based",
            "--rw=randread",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill(2) on the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128));
    assert_eq!(text(&out.stderr), "fio: terminating on signal 2\n");
    let report = text(&out.stdout);
    assert!(
        report.contains("t: (groupid=0, jobs=1): err= 0"),
        "{report}"
    );
    assert!(report.contains("Run status group 0 (all jobs):"));
}

#[test]
fn exitall_ends_the_group_when_its_job_finishes() {
    let d = TempDir::new().unwrap();
    let started = std::time::Instant::now();
    let out = run_plumb(
        d.path(),
        &[
            "--name=short",
            "--size=1m",
            "--exitall",
            "--name=long",
            "--size=4m",
            "--rw=randread",
            "--time_based",
            "--runtime=30",
            "--plumb-findings=off",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let t = issued(&text(&out.stdout));
    assert_eq!(t[0], [256, 0, 0, 0]);
    // Whether `long` got to issue anything before `short` ended the group is timing (it lays
    // its file out first); that it ended with it, far before its 30 s, is the behaviour.
    assert!(t.len() <= 2, "{t:?}");
}

/// exitall stops the jobs of the ending job's reporting group (fio's exit_what=group): a
/// job that `new_group` puts in another reporting group runs its time out; with
/// exit_what=stonewall it stops with the rest of the stonewall group. Timed by what the
/// long job did: its runtime in the report.
#[test]
fn exitall_stops_the_reporting_group_or_with_exit_what_stonewall_the_stonewall_group() {
    let d = TempDir::new().unwrap();
    let run = |what: &str| -> u64 {
        let mut args = vec![
            "--output-format=json",
            "--name=short",
            "--ioengine=null",
            "--size=1m",
            "--exitall",
        ];
        if !what.is_empty() {
            args.push(what);
        }
        args.extend([
            "--name=long",
            "--new_group",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=2",
        ]);
        let out = run_plumb(d.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["jobs"][1]["read"]["runtime"].as_u64().unwrap()
    };
    let group = run("");
    assert!(group >= 1900, "the other reporting group ran {group} ms");
    let stonewall = run("--exit_what=stonewall");
    assert!(
        stonewall < 1500,
        "the stonewall group stopped at {stonewall} ms"
    );
}

#[test]
fn buffer_compress_percentage_zeroes_that_share_of_the_data() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=c",
            "--rw=write",
            "--size=256k",
            "--buffer_compress_percentage=25",
            "--plumb-findings=off",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data = std::fs::read(d.path().join("c.0.0")).unwrap();
    assert_eq!(data.len(), 256 << 10);
    let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
    assert!((0.24..0.27).contains(&zeros), "{zeros}");
    // Without it, the data is random throughout.
    let out = run_plumb(
        d.path(),
        &[
            "--name=r",
            "--rw=write",
            "--size=256k",
            "--plumb-findings=off",
        ],
    );
    assert!(out.status.success());
    let data = std::fs::read(d.path().join("r.0.0")).unwrap();
    let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
    assert!(zeros < 0.01, "{zeros}");
}

/// scramble_buffers=0: the one request buffer of a blocking engine is written unchanged
/// at every offset (fio's dedupable data); by default no two blocks are alike.
#[test]
fn scramble_buffers_0_writes_one_block_again_and_again() {
    let d = TempDir::new().unwrap();
    for (name, extra, distinct) in [("s", Some("--scramble_buffers=0"), 1), ("u", None, 64)] {
        let mut args = vec!["--rw=write", "--size=256k", "--plumb-findings=off"];
        let job = format!("--name={name}");
        args.push(&job);
        args.extend(extra);
        let out = run_plumb(d.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let data = std::fs::read(d.path().join(format!("{name}.0.0"))).unwrap();
        assert_eq!(data.len(), 256 << 10);
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), distinct, "{extra:?}");
        let zeros = data.iter().filter(|&&b| b == 0).count();
        assert!(zeros < data.len() / 64, "random data: {zeros} zeros");
    }
}

#[test]
fn create_on_open_makes_the_file_when_the_job_opens_it() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=c",
            "--rw=write",
            "--size=1m",
            "--create_on_open=1",
            "--plumb-findings=off",
        ],
    );
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!report.contains("Laying out"), "{report}");
    assert_eq!(issued(&report), vec![[0, 256, 0, 0]]);
    assert_eq!(
        std::fs::metadata(d.path().join("c.0.0")).unwrap().len(),
        1 << 20
    );
    let out = run_plumb(d.path(), &["--name=r", "--size=1m", "--create_on_open=1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr)
        .starts_with("plumb: fio option 'create_on_open' (value '1') is not supported yet"));
}

#[test]
fn time_based_without_a_runtime_is_said_and_runs_by_size() {
    let d = TempDir::new().unwrap();
    let out = run_plumb(
        d.path(),
        &[
            "--name=x",
            "--size=64k",
            "--time_based",
            "--plumb-findings=off",
        ],
    );
    assert!(out.status.success());
    assert_eq!(
        text(&out.stderr),
        "fio: time_based requires a runtime/timeout setting\n"
    );
    assert_eq!(issued(&text(&out.stdout)), vec![[16, 0, 0, 0]]);
}

/// One status line as fio draws it once it has an estimate:
/// `Jobs: 1 (f=1): [r(1)][60.0%][r=68.6MiB/s][r=17.6k IOPS][eta 00m:02s]`.
fn is_status_with_eta(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("Jobs: 1 (f=1): [r(1)][") else {
        return false;
    };
    let parts: Vec<&str> = rest.trim_end().split("][").collect();
    let [perc, bw, iops, eta] = parts[..] else {
        return false;
    };
    let number = |s: &str| s.parse::<f64>().is_ok();
    perc.strip_suffix('%').is_some_and(number)
        && bw
            .strip_prefix("r=")
            .and_then(|b| b.strip_suffix("B/s"))
            .is_some_and(|b| number(b.trim_end_matches(|c: char| c.is_ascii_alphabetic())))
        && iops
            .strip_prefix("r=")
            .and_then(|i| i.strip_suffix(" IOPS"))
            .is_some_and(|i| number(i.trim_end_matches(|c: char| c.is_ascii_alphabetic())))
        && eta
            .strip_prefix("eta 00m:")
            .and_then(|e| e.strip_suffix("s]"))
            .is_some_and(|s| s.len() == 2 && number(s))
}

#[test]
fn eta_always_draws_fio_s_status_line_over_itself() {
    let d = TempDir::new().unwrap();
    let job = [
        "--name=t",
        "--rw=randread",
        "--size=1m",
        "--runtime=5",
        "--time_based",
        "--plumb-findings=off",
    ];
    let out = run_plumb(d.path(), &[&job[..], &["--eta=always"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // Each redraw ends with a carriage return; no estimate in the first seconds, then one.
    let (before, report) = stdout
        .split_once("\r\nt: (groupid=0, jobs=1)")
        .expect("the report follows the last status line on the next line");
    let status = before.rsplit_once('\n').unwrap().1;
    let draws: Vec<&str> = status.split('\r').collect();
    assert_eq!(draws[0], "Jobs: 1 (f=1)", "{status:?}");
    assert!(
        draws.iter().skip(1).any(|l| is_status_with_eta(l)),
        "{status:?}"
    );
    assert!(report.contains("\n  read: IOPS="));
    // --eta-newline starts a fresh line now and then; --eta-interval sets the pace.
    let out = run_plumb(
        d.path(),
        &[
            &job[..],
            &["--eta=always", "--eta-interval=500ms", "--eta-newline=1"],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines = stdout
        .lines()
        .filter(|l| l.starts_with("Jobs: 1 (f=1)"))
        .count();
    assert!(lines >= 2, "{stdout:?}");
    // Their refusals are fio's, word for word.
    for (flag, err) in [
        (
            "--eta-interval=100ms",
            "fio: eta interval time too short (250msec min)\n",
        ),
        (
            "--eta-interval=abc",
            "fio: failed parsing eta interval abc\n",
        ),
        ("--eta-newline=0", "fio: eta new line time too short\n"),
        ("--eta-newline=abc", "fio: failed parsing eta time abc\n"),
    ] {
        let out = run_plumb(d.path(), &["--name=t", "--size=1m", flag]);
        assert_eq!(out.status.code(), Some(1), "{flag}");
        assert_eq!(text(&out.stderr), err, "{flag}");
        if std::path::Path::new("/usr/bin/fio").exists() {
            let fio = std::process::Command::new("/usr/bin/fio")
                .args(["--name=t", "--size=1m", flag])
                .current_dir(d.path())
                .output()
                .unwrap();
            assert_eq!(text(&fio.stderr), err, "fio {flag}");
        }
    }
    // Not on a pipe unless asked for, never with --eta=never, and never into a JSON report
    // on stdout.
    for extra in [
        &[][..],
        &["--eta=never"][..],
        &["--eta=always", "--output-format=json"][..],
    ] {
        let job = [
            "--name=t",
            "--rw=randread",
            "--size=1m",
            "--runtime=2",
            "--time_based",
        ];
        let out = run_plumb(d.path(), &[&job[..], extra].concat());
        assert!(out.status.success());
        assert!(!text(&out.stdout).contains("Jobs: "), "{extra:?}");
    }
}

#[test]
fn blockalign_other_than_the_block_turns_the_random_map_off_as_in_fio() {
    // fio 3.33 (init.c fixup_options): "Any use of blockalign= turns off randommap", so a
    // random job issues size / bs requests at aligned offsets, some of them again; with the
    // map it would issue each 8 KiB-aligned block once, half as many.
    let d = TempDir::new().unwrap();
    let job = [
        "--name=b",
        "--filename=data",
        "--size=1m",
        "--bs=4k",
        "--rw=randread",
        "--output-format=json",
    ];
    let issued = |extra: &str| {
        let mut args = job.to_vec();
        args.push(extra);
        let out = run_plumb(d.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let read = &doc["jobs"][0]["read"];
        (read["total_ios"].as_u64().unwrap(), text(&out.stderr))
    };
    let (n, err) = issued("--ba=8k");
    assert_eq!(n, 256);
    assert_eq!(
        err.lines().next(),
        Some("fio: Any use of blockalign= turns off randommap"),
        "{err}"
    );
    // The same alignment as the block keeps the map, and says nothing.
    let (n, err) = issued("--ba=4k");
    assert_eq!(n, 256);
    assert!(!err.contains("blockalign"), "{err}");
    // A sequential job keeps its order whatever the alignment.
    let mut seq = job.to_vec();
    seq[4] = "--rw=read";
    seq.push("--ba=8k");
    let out = run_plumb(d.path(), &seq);
    assert!(!text(&out.stderr).contains("blockalign"));
}

/// The JSON report is stamped to the millisecond, as fio stamps it (the end of the run):
/// between the moments the command was started and returned.
#[test]
fn json_timestamp_is_the_run_s_end_to_the_millisecond() {
    use std::time::{SystemTime, UNIX_EPOCH};
    let now_ms = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let d = TempDir::new().unwrap();
    let before = now_ms();
    let out = run_plumb(
        d.path(),
        &[
            "--output-format=json",
            "--name=t",
            "--ioengine=null",
            "--size=64m",
        ],
    );
    let after = now_ms();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ms = doc["timestamp_ms"].as_u64().unwrap();
    assert!(
        (before..=after).contains(&ms),
        "{before} <= {ms} <= {after}"
    );
    assert_eq!(doc["timestamp"].as_u64().unwrap(), ms / 1000);
}
