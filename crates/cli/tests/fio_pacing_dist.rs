//! `plumb fio` with a skewed random_distribution, thinktime and startdelay, run end to end.
//! The skew is checked on the offsets the real binary reads (strace), against fio's own
//! offsets for the same job when fio is here.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{peer, scenario, tmp};
use serde_json::Value;

/// 4 MiB of 4 KiB blocks, read 10 times over.
const JOB: &[&str] = &[
    "--name=z",
    "--filename=f",
    "--size=4m",
    "--io_size=40m",
    "--bs=4k",
    "--rw=randread",
    "--ioengine=psync",
];

/// Reads per block of `cmd` (run in `dir` under strace), by block number.
fn reads_per_block(dir: &Path, cmd: Command) -> HashMap<u64, u64> {
    let trace = dir.join("strace.out");
    let out = Command::new("strace")
        .args(["-f", "-e", "trace=pread64", "-o"])
        .arg(&trace)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .current_dir(dir)
        .output()
        .expect("strace runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = common::strace::whole_calls(&std::fs::read_to_string(&trace).unwrap());
    let mut per = HashMap::new();
    // `pid pread64(fd, "..."..., 4096, OFFSET) = 4096`
    for call in text.lines().filter_map(|l| l.split_once("pread64(")) {
        let Some((args, _)) = call.1.split_once(") = 4096") else {
            continue;
        };
        let offset: u64 = args.rsplit(", ").next().unwrap().trim().parse().unwrap();
        *per.entry(offset / 4096).or_insert(0) += 1;
    }
    per
}

fn hottest(per: &HashMap<u64, u64>, n: usize) -> Vec<u64> {
    let mut v: Vec<(u64, u64)> = per.iter().map(|(b, c)| (*b, *c)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter().take(n).map(|e| e.0).collect()
}

/// Share of the reads that hit the hottest tenth of the 1024 blocks.
fn hottest_tenth_share(per: &HashMap<u64, u64>) -> f64 {
    let mut v: Vec<u64> = per.values().copied().collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v.iter().take(102).sum::<u64>() as f64 / v.iter().sum::<u64>() as f64
}

/// `plumb fio` without the history, whose database reads would join the traced ones.
fn plumb_fio(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plumb"));
    c.arg("fio").arg("--no-history").args(args);
    c
}

#[test]
fn zipf_reads_concentrate_where_fio_puts_them() {
    if !peer("strace") {
        return;
    }
    let d = tmp();
    let uniform = reads_per_block(d.path(), plumb_fio(JOB));
    let skewed_args: Vec<&str> = JOB
        .iter()
        .copied()
        .chain(["--random_distribution=zipf:1.2:0.25"])
        .collect();
    let zipf = reads_per_block(d.path(), plumb_fio(&skewed_args));
    assert_eq!(uniform.values().sum::<u64>(), 10240);
    assert_eq!(zipf.values().sum::<u64>(), 10240);
    // The random map: every block read exactly 10 times without a skew.
    assert!(uniform.len() == 1024 && uniform.values().all(|&c| c == 10));
    let share = hottest_tenth_share(&zipf);
    assert!(
        share > 0.7,
        "zipf 1.2: {share} of reads on the hottest tenth"
    );
    // The center puts the hottest block at a quarter of the file, the next ones as fio does.
    assert_eq!(hottest(&zipf, 1), [256]);
    if peer("fio") {
        let mut fio = Command::new("fio");
        fio.args(&skewed_args);
        let theirs = reads_per_block(d.path(), fio);
        assert_eq!(hottest(&zipf, 3), hottest(&theirs, 3));
    }
}

fn json(args: &[&str]) -> (Value, Duration) {
    let d = tmp();
    let t0 = Instant::now();
    let out = scenario(args)
        .args(&["--output-format=json"])
        .in_dir(d.path())
        .ok();
    let took = t0.elapsed();
    (serde_json::from_slice(&out.stdout).expect("fio JSON"), took)
}

#[test]
fn thinktime_stalls_between_reads_outside_their_latency() {
    let (doc, _) = json(&[
        "fio",
        "--name=t",
        "--ioengine=null",
        "--size=200k",
        "--rw=randread",
        "--thinktime=2ms",
        "--thinktime_spin=500us",
    ]);
    let job = &doc["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 50);
    let runtime_ms = job["read"]["runtime"].as_u64().unwrap();
    assert!(runtime_ms >= 100, "50 stalls of 2 ms: {runtime_ms} ms");
    let clat_max = job["read"]["clat_ns"]["max"].as_u64().unwrap();
    assert!(
        clat_max < 2_000_000,
        "a stall counted in a read: {clat_max} ns"
    );
}

#[test]
fn startdelay_holds_the_job_back_outside_its_runtime() {
    let (doc, took) = json(&[
        "fio",
        "--name=s",
        "--ioengine=null",
        "--size=64k",
        "--rw=read",
        "--startdelay=1",
    ]);
    assert!(took >= Duration::from_secs(1), "{took:?}");
    let job = &doc["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 16);
    let runtime_ms = job["job_runtime"].as_u64().unwrap();
    assert!(
        runtime_ms < 500,
        "the delay counted in the runtime: {runtime_ms} ms"
    );
}

#[test]
fn bad_distributions_are_refused_in_fio_s_words() {
    let (code, _, err) = scenario(&[
        "fio",
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--rw=randread",
        "--random_distribution=zipf:1",
    ])
    .run();
    assert_eq!(code, 1);
    assert!(
        err.contains("fio: zipf theta must different than 1.0")
            && err.contains("fio: failed parsing random_distribution=zipf:1"),
        "{err}"
    );
}
