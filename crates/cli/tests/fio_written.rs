//! What the fio drop-in writes besides its report, against Debian's fio 3.33
//! (/usr/bin/fio) on the same job, each run in its own fresh temp directory: the latency
//! logs of `write_lat_log` (`_lat`, `_clat`, `_slat`) and the data a write job leaves in its
//! file.
//!
//! Latencies are measured, so the logs are compared by shape: line counts, the ddir and bs
//! columns, and the arithmetic fio's lines obey (a queued engine's slat + clat = lat).
//!
//! Without /usr/bin/fio these tests are skipped with a message, except under CI
//! (`CI=true`), where a missing peer is a failure.

mod common;
use common::peers::{installed, run_named, DropIn};

use std::collections::HashSet;
use std::path::Path;

use tempfile::TempDir;

const PEER: &str = "/usr/bin/fio";

fn peer() -> Option<&'static str> {
    installed(&[PEER], "apt-get install fio", "the fio drop-in comparison").then_some(PEER)
}

/// Run `bin` as `fio` in `dir`; it must succeed.
fn run_in(bin: &Path, dir: &Path, args: &[&str]) {
    let out = run_named(bin, dir, args);
    assert!(out.code == 0, "{} {args:?}: {}", bin.display(), out.stderr);
}

/// fio's and plumb's directories after each ran `args` there.
fn run_both(args: &[&str]) -> Option<(TempDir, TempDir)> {
    let peer = peer()?;
    let drop_in = DropIn::named("fio");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    run_in(Path::new(peer), a.path(), args);
    run_in(&drop_in.bin(), b.path(), args);
    Some((a, b))
}

/// One log line: time (ms), value, ddir, bs; the prio column must be 0.
/// Two entries of one request dated alike. fio reads the clock again for each log it
/// writes the request to, so a millisecond can tick between its lat and clat entries on a
/// busy machine; plumb dates both from one reading.
fn same_ms(a: &Line, b: &Line) -> bool {
    a.t.abs_diff(b.t) <= 1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Line {
    t: u64,
    v: u64,
    dir: u8,
    bs: u64,
}

fn read_log(dir: &Path, name: &str) -> Vec<Line> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let f: Vec<u64> = l
                .split(", ")
                .map(|x| x.parse().unwrap_or_else(|_| panic!("{name}: {l}")))
                .collect();
            assert_eq!(f.len(), 5, "{name}: {l}");
            assert_eq!(f[4], 0, "{name}: {l}");
            Line {
                t: f[0],
                v: f[1],
                dir: f[2] as u8,
                bs: f[3],
            }
        })
        .collect()
}

/// A job's latency logs: lat, clat, slat.
type LatLogs = [Vec<Line>; 3];

/// The three latency logs of job `n` under prefix `l`.
fn lat_logs(dir: &Path, n: u32) -> LatLogs {
    ["lat", "clat", "slat"].map(|k| read_log(dir, &format!("l_{k}.{n}.log")))
}

fn shape(lines: &[Line]) -> Vec<(u8, u64)> {
    lines.iter().map(|l| (l.dir, l.bs)).collect()
}

/// Two jobs in one run (a sequential write of 8 KiB, random reads of 4 KiB) on `engine`:
/// job 1's and job 2's logs from fio and from plumb.
fn per_request_job(engine: &[&str]) -> Option<Vec<(LatLogs, LatLogs)>> {
    let mut args = vec![
        "--output=/dev/null",
        "--write_lat_log=l",
        "--size=256k",
        "--name=w",
        "--filename=w.dat",
        "--rw=write",
        "--bs=8k",
    ];
    args.extend_from_slice(engine);
    args.extend_from_slice(&["--name=r", "--filename=r.dat", "--rw=randread", "--bs=4k"]);
    args.extend_from_slice(engine);
    let (fio, plumb) = run_both(&args)?;
    Some(
        [1, 2]
            .map(|n| (lat_logs(fio.path(), n), lat_logs(plumb.path(), n)))
            .into(),
    )
}

#[test]
fn psync_lat_logs_have_fio_s_lines_and_no_slat() {
    let Some(jobs) = per_request_job(&["--ioengine=psync"]) else {
        return;
    };
    for (n, (fio, plumb)) in jobs.iter().enumerate() {
        let want = if n == 0 { (1, 8192) } else { (0, 4096) };
        let count = if n == 0 { 32 } else { 64 };
        for k in 0..2 {
            assert_eq!(shape(&fio[k]), vec![want; count], "fio, job {n} log {k}");
            assert_eq!(shape(&plumb[k]), shape(&fio[k]), "job {n} log {k}");
        }
        // A blocking engine: no slat line; clat runs from the call, lat from when the
        // request was made (fio's few ns more, plumb's the same figure).
        assert!(fio[2].is_empty() && plumb[2].is_empty(), "job {n}");
        for (lat, clat) in fio[0].iter().zip(&fio[1]) {
            assert!(
                clat.v <= lat.v && same_ms(lat, clat),
                "fio: {lat:?} {clat:?}"
            );
        }
        assert_eq!(plumb[0], plumb[1], "job {n}: plumb's clat is its lat");
        assert!(plumb[0].iter().all(|l| l.v > 0), "job {n}");
    }
}

#[test]
fn libaio_lat_logs_split_each_request_as_fio_does() {
    let Some(jobs) = per_request_job(&["--ioengine=libaio", "--iodepth=1", "--direct=1"]) else {
        return;
    };
    for (n, (fio, plumb)) in jobs.iter().enumerate() {
        let want = if n == 0 { (1, 8192) } else { (0, 4096) };
        let count = if n == 0 { 32 } else { 64 };
        for k in 0..3 {
            assert_eq!(shape(&fio[k]), vec![want; count], "fio, job {n} log {k}");
            assert_eq!(shape(&plumb[k]), shape(&fio[k]), "job {n} log {k}");
        }
        // One request at a time: line i of each log is request i, and its submission and
        // completion halves add up to its latency; the slat line is dated when its
        // submission ended, no later than its completion.
        for (who, logs) in [("fio", fio), ("plumb", plumb)] {
            for ((lat, clat), slat) in logs[0].iter().zip(&logs[1]).zip(&logs[2]) {
                assert_eq!(
                    slat.v + clat.v,
                    lat.v,
                    "{who}, job {n}: {slat:?} {clat:?} {lat:?}"
                );
                assert!(same_ms(clat, lat), "{who}, job {n}: {clat:?} {lat:?}");
                assert!(slat.t <= clat.t, "{who}, job {n}: {slat:?} {clat:?}");
                assert!(
                    slat.v > 0 && clat.v > 0,
                    "{who}, job {n}: {slat:?} {clat:?}"
                );
            }
        }
    }
}

/// A queued engine at depth 4: as many lines as fio in each log, and each request's halves
/// add up (as a sum over the log: a slat line is written in submission order, the others in
/// completion order).
#[test]
fn libaio_at_depth_logs_every_request_three_times() {
    let Some((fio, plumb)) = run_both(&[
        "--output=/dev/null",
        "--write_lat_log=l",
        "--name=q",
        "--filename=q.dat",
        "--size=512k",
        "--rw=randwrite",
        "--ioengine=libaio",
        "--iodepth=4",
        "--direct=1",
    ]) else {
        return;
    };
    for (who, d) in [("fio", &fio), ("plumb", &plumb)] {
        let [lat, clat, slat] = lat_logs(d.path(), 1);
        for log in [&lat, &clat, &slat] {
            assert_eq!(shape(log), vec![(1, 4096); 128], "{who}");
        }
        let sum = |l: &[Line]| l.iter().map(|l| l.v).sum::<u64>();
        assert_eq!(sum(&slat) + sum(&clat), sum(&lat), "{who}");
    }
}

/// With log_avg_msec: one line per direction and window; a job shorter than its window
/// gets one line per direction, written at its end, with the mean of its requests.
#[test]
fn windowed_lat_logs_write_the_last_window_as_fio_does() {
    for engine in [
        &["--ioengine=psync"][..],
        &["--ioengine=libaio", "--iodepth=4", "--direct=1"][..],
    ] {
        let mut args = vec![
            "--output=/dev/null",
            "--write_lat_log=l",
            "--log_avg_msec=60000",
            "--name=m",
            "--filename=m.dat",
            "--size=512k",
            "--rw=randrw",
        ];
        args.extend_from_slice(engine);
        let Some((fio, plumb)) = run_both(&args) else {
            return;
        };
        let queued = engine.len() > 1;
        let (f, p) = (lat_logs(fio.path(), 1), lat_logs(plumb.path(), 1));
        for k in 0..3 {
            let want = if k == 2 && !queued {
                vec![]
            } else {
                // 128 requests, half of each direction on average: both directions there.
                vec![(0, 0), (1, 0)]
            };
            assert_eq!(shape(&f[k]), want, "fio {engine:?} log {k}");
            assert_eq!(shape(&p[k]), want, "{engine:?} log {k}");
        }
        for (who, logs) in [("fio", &f), ("plumb", &p)] {
            for (i, lat) in logs[0].iter().enumerate() {
                let clat = logs[1][i];
                assert!(lat.t < 60_000 && clat.t == lat.t, "{who}: {lat:?} {clat:?}");
                match logs[2].get(i) {
                    // Three rounded means.
                    Some(slat) => assert!(
                        (slat.v + clat.v).abs_diff(lat.v) <= 2,
                        "{who}: {slat:?} {clat:?} {lat:?}"
                    ),
                    None => assert!(clat.v <= lat.v, "{who}: {clat:?} {lat:?}"),
                }
            }
        }
    }
}

/// The logs hold what the report measures: the mean of the clat and slat lines is the
/// report's mean, and a libaio read of a real file takes time in both halves.
#[test]
fn lat_log_means_are_the_report_s_means() {
    let d = TempDir::new().unwrap();
    let out = common::plumb()
        .args([
            "fio",
            "--output-format=json",
            "--write_lat_log=l",
            "--name=p",
            "--filename=p.dat",
            "--size=1m",
            "--rw=randread",
            "--ioengine=libaio",
            "--iodepth=4",
            "--direct=1",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = &doc["jobs"][0]["read"];
    let [lat, clat, slat] = lat_logs(d.path(), 1);
    for (name, log) in [("lat_ns", &lat), ("clat_ns", &clat), ("slat_ns", &slat)] {
        assert_eq!(log.len(), 256, "{name}");
        assert!(log.iter().all(|l| l.v > 0 && l.dir == 0), "{name}: {log:?}");
        let mean = log.iter().map(|l| l.v).sum::<u64>() as f64 / log.len() as f64;
        let want = read[name]["mean"].as_f64().unwrap();
        assert!(
            (mean - want).abs() <= 1.0,
            "{name}: log {mean}, report {want}"
        );
        // The report times each half from its own two stamps, the log's clat is lat less
        // slat: converted from clock ticks apart, they may differ by a nanosecond.
        let max = log.iter().map(|l| l.v).max().unwrap();
        let want = read[name]["max"].as_u64().unwrap();
        assert!(max.abs_diff(want) <= 1, "{name}: log {max}, report {want}");
    }
}

/// Distinct 4 KiB blocks of a file, and the file's length in blocks.
fn distinct_blocks(path: &Path) -> (usize, usize) {
    let data = std::fs::read(path).unwrap();
    assert!(
        data.iter().any(|&b| b != 0),
        "{}: all zeros",
        path.display()
    );
    let set: HashSet<&[u8]> = data.chunks(4096).collect();
    (set.len(), data.len() / 4096)
}

/// scramble_buffers=0: each request buffer is written unchanged again and again, by fio and
/// by plumb: one distinct block for a blocking engine, one per buffer at depth 4, and with
/// the default every block differs.
#[test]
fn scramble_buffers_0_writes_the_same_buffers_as_fio() {
    for (opts, want) in [
        (&["--scramble_buffers=0"][..], 1),
        (
            &["--scramble_buffers=0", "--ioengine=libaio", "--iodepth=4"][..],
            4,
        ),
        (&["--buffer_compress_percentage=0"][..], 1),
        (&["--scramble_buffers=0", "--refill_buffers=1"][..], 64),
        (&[][..], 64),
    ] {
        let mut args = vec![
            "--output=/dev/null",
            "--name=s",
            "--filename=s.dat",
            "--size=256k",
            "--rw=write",
        ];
        args.extend_from_slice(opts);
        let Some((fio, plumb)) = run_both(&args) else {
            return;
        };
        assert_eq!(
            distinct_blocks(&fio.path().join("s.dat")),
            (want, 64),
            "fio {opts:?}"
        );
        assert_eq!(
            distinct_blocks(&plumb.path().join("s.dat")),
            (want, 64),
            "{opts:?}"
        );
    }
}

/// buffer_pattern: every write carries the pattern from its buffer's start, over and over,
/// whatever zero_buffers or refill_buffers say; a reader's laid-out file too. The files
/// fio and plumb leave are the same bytes.
#[test]
fn buffer_pattern_writes_the_same_bytes_as_fio() {
    let drop_in = DropIn::named("fio");
    let cases: [(&[&str], &[u8]); 5] = [
        (
            &["--rw=write", "--buffer_pattern=0xdeadbeef"],
            b"\xde\xad\xbe\xef",
        ),
        // Three bytes do not divide a block: each block starts the pattern over.
        (&["--rw=randwrite", "--buffer_pattern=\"abc\""], b"abc"),
        (
            &["--rw=write", "--buffer_pattern=0x55", "--zero_buffers=1"],
            b"\x55",
        ),
        (
            &[
                "--rw=write",
                "--buffer_pattern=7\"x\"",
                "--refill_buffers=1",
            ],
            b"\x07x",
        ),
        // A reader's file is laid out with the pattern.
        (&["--rw=read", "--buffer_pattern=0x0102"], b"\x01\x02"),
    ];
    for (extra, pattern) in cases {
        let mut args = vec!["--name=p", "--filename=data", "--size=64k", "--bs=4k"];
        args.extend(extra);
        let d = TempDir::new().unwrap();
        run_in(&drop_in.bin(), d.path(), &args);
        let mine = std::fs::read(d.path().join("data")).unwrap();
        assert_eq!(mine.len(), 65536, "{args:?}");
        for (i, block) in mine.chunks(4096).enumerate() {
            let want: Vec<u8> = pattern.iter().copied().cycle().take(4096).collect();
            assert_eq!(block, &want[..], "{args:?}: block {i}");
        }
        if let Some((theirs, _keep)) = run_both(&args) {
            let fio = std::fs::read(theirs.path().join("data")).unwrap();
            assert!(fio == mine, "{args:?}: fio's file differs");
        }
    }
}

/// A pattern fio cannot parse fails as in fio; one plumb cannot carry yet is refused by
/// name.
#[test]
fn buffer_pattern_refusals() {
    let drop_in = DropIn::named("fio");
    let d = TempDir::new().unwrap();
    let base = ["--name=p", "--filename=data", "--size=64k", "--rw=write"];
    let run = |extra: &str| {
        let mut a = base.to_vec();
        a.push(extra);
        run_named(&drop_in.bin(), d.path(), &a)
    };
    let bad = run("--buffer_pattern=%o");
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("failed parsing buffer_pattern=%o"),
        "{}",
        bad.stderr
    );
    let file = run("--buffer_pattern='f'");
    assert_eq!(file.code, 1);
    assert!(
        file.stderr.contains("'buffer_pattern'") && file.stderr.contains("not supported"),
        "{}",
        file.stderr
    );
    let mut a = base.to_vec();
    a.extend(["--buffer_pattern=0x11", "--buffer_compress_percentage=50"]);
    let mixed = run_named(&drop_in.bin(), d.path(), &a);
    assert_eq!(mixed.code, 1, "{}", mixed.stderr);
    assert!(
        mixed.stderr.contains("buffer_compress_percentage"),
        "{}",
        mixed.stderr
    );
    assert!(!d.path().join("data").exists());
}
