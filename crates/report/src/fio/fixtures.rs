//! Tests against fio 3.33's own output (tests/fixtures/fio, see its README for the commands).
//!
//! Each scenario's [`FioDoc`] is built from the numbers of fio's JSON for that run; what the
//! JSON lacks comes from elsewhere: pid and block time from the normal text's block
//! headers, the options from the command line (kb_base, unit_base, percentile_list), and
//! the distribution counts back from fio's percentages (fio prints 6 decimals, enough to
//! recover every count but those fio floored up to 0.01, see [`fit_ns_total`]). The layouts are then compared with fio's text, byte for byte.

use serde_json::Value;

use super::dist::{BATCH_LABELS, DEPTH_LABELS, LAT_LABELS};
use super::*;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fio/");

/// fio's default percentile_list.
const DEFAULT_LIST: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// What the command line said that the JSON does not show.
struct Scenario {
    name: &'static str,
    kb_base: u32,
    unit_bits: bool,
    list: &'static [f64],
    precision: u32,
    lat_percentiles: bool,
}

impl Scenario {
    fn plain(name: &'static str) -> Self {
        Scenario {
            name,
            kb_base: 1024,
            unit_bits: false,
            list: &DEFAULT_LIST,
            precision: 2,
            lat_percentiles: false,
        }
    }

    fn file(&self, file: &str) -> String {
        let path = format!("{DIR}{}/{file}", self.name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn doc(&self) -> FioDoc {
        let text = self.file("out.json");
        let json: Value = serde_json::from_str(&text).expect("fixture JSON");
        let mut job_options = option_blocks(&text, "job options").into_iter();
        let normal = std::fs::read_to_string(format!("{DIR}{}/normal.txt", self.name));
        let mut blocks = block_headers(normal.as_deref().unwrap_or(""));
        let units = json["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|j| {
                let mut u = self.unit(j);
                u.job_options = job_options.next().unwrap_or_default();
                let printed = Dir::ALL.iter().any(|&d| u.dir(d).io_bytes > 0) || u.rw_ios() > 0;
                if printed && !blocks.is_empty() {
                    let (members, pid, time) = blocks.remove(0);
                    (u.members, u.pid, u.time_text) = (members, pid, time);
                }
                u
            })
            .collect();
        FioDoc {
            version: s(&json["fio version"]),
            timestamp_ms: json["timestamp_ms"].as_u64().expect("timestamp_ms"),
            time_text: s(&json["time"]),
            kb_base: self.kb_base,
            unit_bits: self.unit_bits,
            sig_figs: 4,
            global_options: option_blocks(&text, "global options")
                .pop()
                .unwrap_or_default(),
            units,
            disks: json["disk_util"]
                .as_array()
                .map(|a| a.iter().map(disk).collect())
                .unwrap_or_default(),
        }
    }

    fn unit(&self, j: &Value) -> Unit {
        let read = dir(&j["read"]);
        let write = dir(&j["write"]);
        let trim = dir(&j["trim"]);
        let rw_ios = read.total_ios + write.total_ios + trim.total_ios;
        let sync_lat = lat(&j["sync"]["lat_ns"]).unwrap_or_default();
        let sync_ios = u(&j["sync"]["total_ios"]);
        // Calls are not in the JSON; any total that reproduces fio's six decimals will do.
        let calls = 100_000_000;
        Unit {
            name: s(&j["jobname"]),
            groupid: u(&j["groupid"]) as u32,
            members: 1,
            error: j["error"].as_i64().expect("error") as i32,
            error_text: None,
            pid: 0,
            time_text: String::new(),
            description: j.get("desc").map(s),
            job_options: Vec::new(),
            eta_s: u(&j["eta"]),
            elapsed_s: u(&j["elapsed"]),
            job_runtime_ms: u(&j["job_runtime"]),
            read,
            write,
            trim,
            sync: (sync_ios > 0 || sync_lat.n > 0).then_some(SyncStats {
                total_ios: sync_ios,
                lat: sync_lat,
            }),
            usr_cpu_pct: f(&j["usr_cpu"]),
            sys_cpu_pct: f(&j["sys_cpu"]),
            ctx: u(&j["ctx"]),
            majf: u(&j["majf"]),
            minf: u(&j["minf"]),
            depths: IoDepths {
                level: counts(&j["iodepth_level"], &DEPTH_LABELS, rw_ios),
                submit: counts(&j["iodepth_submit"], &BATCH_LABELS, calls),
                total_submit: calls,
                complete: counts(&j["iodepth_complete"], &BATCH_LABELS, calls),
                total_complete: calls,
            },
            lat_buckets: LatBuckets {
                ns: {
                    let mut ns = counts(&j["latency_ns"], &LAT_LABELS, rw_ios);
                    fit_ns_total(&mut ns, &j["latency_ns"], rw_ios, j);
                    ns
                },
                us: counts(&j["latency_us"], &LAT_LABELS, rw_ios),
                ms: counts(&j["latency_ms"], &LAT_LABELS, rw_ios),
            },
            zone_resets: 0,
            errors: None,
            latency_target: LatencyTarget {
                depth: u(&j["latency_depth"]) as u32,
                target_ns: u(&j["latency_target"]),
                window_us: u(&j["latency_window"]),
                percentile: f(&j["latency_percentile"]),
            },
            percentiles: PercentileOptions {
                list: self.list.to_vec(),
                precision: self.precision,
                clat: true,
                lat: self.lat_percentiles,
                slat: false,
            },
            // unified_rw_reporting: `mixed` alone (mixed), or besides the directions (both).
            mixed: j.get("mixed").is_some() && j.get("read").is_none(),
            both: j.get("mixed").filter(|_| j.get("read").is_some()).map(dir),
            steady: j.get("steadystate").map(steady),
        }
    }
}

/// The window behind fio's `steadystate` object. The samples are in fio's printed order;
/// `head` is set so the ring is read from its first slot again (a full ring that was not
/// met has fio's head one past its oldest sample).
fn steady(v: &Value) -> plumb_core::steady::SteadyReport {
    use plumb_core::steady::{Criterion, Metric, SteadyReport, WindowState};
    let ss = s(&v["ss"]);
    let (word, limit) = ss.split_once(':').expect("criterion:limit");
    let percent = limit.ends_with('%');
    let (metric, slope) = match word {
        "iops" => (Metric::Iops, false),
        "iops_slope" => (Metric::Iops, true),
        "bw" => (Metric::Bw, false),
        "bw_slope" => (Metric::Bw, true),
        other => panic!("criterion {other}"),
    };
    let ints = |k: &str| -> Vec<u64> {
        v["data"][k]
            .as_array()
            .expect("samples")
            .iter()
            .map(u)
            .collect()
    };
    let (iops, bw) = (ints("iops"), ints("bw"));
    let attained = u(&v["attained"]) == 1;
    let (slope_v, deviation) = (f(&v["slope"]), f(&v["max_deviation"]));
    // The JSON's criterion went through a C float; without a percentage it is the slope
    // or the deviation itself, which the normal line prints in full.
    let criterion = match (slope, percent) {
        (true, false) => slope_v,
        (false, false) => deviation,
        _ => s(&v["criterion"])
            .trim_end_matches('%')
            .parse()
            .expect("criterion"),
    };
    SteadyReport {
        criterion: Criterion {
            metric,
            slope,
            percent,
            limit: limit.trim_end_matches('%').parse().expect("limit"),
        },
        window_s: u(&v["duration"]) as u32,
        attained,
        window: WindowState {
            head: if attained { 0 } else { 1 % iops.len() as u32 },
            full: true,
            slope: slope_v,
            deviation,
            criterion,
            iops,
            bw,
        },
    }
}

/// (jobs, pid, time) of each `name: (groupid=0, jobs=1): err= 0: pid=1: <time>` line.
fn block_headers(normal: &str) -> Vec<(u32, u32, String)> {
    normal
        .lines()
        .filter(|l| l.contains(": (groupid="))
        .map(|l| {
            let jobs = between(l, "jobs=", ")").parse().expect("jobs");
            let rest = &l[l.find(": pid=").expect("pid") + 6..];
            let (pid, time) = rest.split_once(": ").expect("time");
            (jobs, pid.parse().expect("pid"), time.to_string())
        })
        .collect()
}

fn between<'a>(l: &'a str, a: &str, b: &str) -> &'a str {
    let from = l.find(a).expect("start") + a.len();
    let len = l[from..].find(b).expect("end");
    &l[from..from + len]
}

fn s(v: &Value) -> String {
    v.as_str().expect("string").to_string()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("float")
}

/// Each `"<title>" : {` block's members in the order fio wrote them (serde_json's map
/// sorts its keys).
fn option_blocks(text: &str, title: &str) -> Vec<Vec<(String, String)>> {
    let opening = format!("\"{title}\" : {{");
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != opening {
            continue;
        }
        let block = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with('}'))
            .map(|l| {
                let pair: Value = serde_json::from_str(&format!("{{{}}}", l.trim_end_matches(',')))
                    .expect("option line");
                let (k, v) = pair
                    .as_object()
                    .and_then(|o| o.iter().next())
                    .expect("pair");
                (k.clone(), s(v))
            })
            .collect();
        blocks.push(block);
    }
    blocks
}

/// The counts behind fio's percentages of `total` (values in the JSON's key order).
fn counts<const N: usize>(pct: &Value, labels: &[&str], total: u64) -> [u64; N] {
    assert_eq!(pct.as_object().expect("distribution").len(), N);
    let mut out = [0; N];
    for (slot, label) in out.iter_mut().zip(labels) {
        let p = f(&pct[*label]);
        let c = (p * total as f64 / 100.0).round() as u64;
        // A share fio floored up to 0.01 (or 0.1) came from fewer I/Os than rounding
        // gives: one, until [`fit_ns_total`] knows better.
        *slot = if p > 0.0 && !shows(c, total, p) { 1 } else { c };
    }
    out
}

fn shows(count: u64, total: u64, pct: f64) -> bool {
    format!("{:.6}", count as f64 / total as f64 * 100.0) == format!("{pct:.6}")
}

/// The terse layout adds the ns buckets up unfloored, so their sum must be right, not only
/// their shares: json+ gives it (completion latencies under 1000 ns; the histogram's bucket
/// edges fall on 1000). The I/Os are spread over the floored buckets, each kept below the floor.
fn fit_ns_total(ns: &mut [u64; 10], pct: &Value, total: u64, unit_json: &Value) {
    let bins_under_1000: u64 = ["read", "write", "trim"]
        .iter()
        .filter_map(|d| unit_json[*d]["clat_ns"]["bins"].as_object())
        .flat_map(|o| o.iter())
        .filter(|(k, _)| k.parse::<u64>().is_ok_and(|v| v < 1000))
        .map(|(_, c)| u(c))
        .sum();
    let sum: u64 = ns.iter().sum();
    if bins_under_1000 <= sum {
        return;
    }
    let mut deficit = bins_under_1000 - sum;
    let most = (0.01 * total as f64 / 100.0).ceil() as u64 - 1;
    for (slot, label) in ns.iter_mut().zip(LAT_LABELS) {
        let p = f(&pct[label]);
        if p == 0.01 && *slot < most {
            let add = deficit.min(most.saturating_sub(*slot));
            *slot += add;
            deficit -= add;
        }
    }
}

fn lat(v: &Value) -> Option<LatStats> {
    let n = u(&v["N"]);
    (n > 0).then(|| LatStats {
        min_ns: u(&v["min"]),
        max_ns: u(&v["max"]),
        mean_ns: f(&v["mean"]),
        stddev_ns: f(&v["stddev"]),
        n,
        percentiles: v["percentile"]
            .as_object()
            .map(|o| {
                let mut p: Vec<(f64, u64)> = o
                    .iter()
                    .map(|(k, v)| (k.parse().expect("percentile"), u(v)))
                    .collect();
                p.sort_by(|a, b| a.0.total_cmp(&b.0));
                p
            })
            .unwrap_or_default(),
        bins: v["bins"]
            .as_object()
            .map(|o| {
                let mut b: Vec<(u64, u64)> = o
                    .iter()
                    .map(|(k, v)| (k.parse().expect("bin"), u(v)))
                    .collect();
                b.sort();
                b
            })
            .unwrap_or_default(),
    })
}

fn dir(v: &Value) -> DirStats {
    DirStats {
        io_bytes: u(&v["io_bytes"]),
        runtime_ms: u(&v["runtime"]),
        total_ios: u(&v["total_ios"]),
        short_ios: u(&v["short_ios"]),
        drop_ios: u(&v["drop_ios"]),
        slat: lat(&v["slat_ns"]),
        clat: lat(&v["clat_ns"]),
        lat: lat(&v["lat_ns"]),
        bw: SampleStats {
            min: u(&v["bw_min"]),
            max: u(&v["bw_max"]),
            mean: f(&v["bw_mean"]),
            stddev: f(&v["bw_dev"]),
            samples: u(&v["bw_samples"]),
        },
        iops: SampleStats {
            min: u(&v["iops_min"]),
            max: u(&v["iops_max"]),
            mean: f(&v["iops_mean"]),
            stddev: f(&v["iops_stddev"]),
            samples: u(&v["iops_samples"]),
        },
    }
}

fn disk(v: &Value) -> DiskUtil {
    DiskUtil {
        name: s(&v["name"]),
        read_ios: u(&v["read_ios"]),
        write_ios: u(&v["write_ios"]),
        read_merges: u(&v["read_merges"]),
        write_merges: u(&v["write_merges"]),
        read_ticks: u(&v["read_ticks"]),
        write_ticks: u(&v["write_ticks"]),
        in_queue: u(&v["in_queue"]),
        util_pct: f(&v["util"]),
        slaves: None,
    }
}

/// Line-by-line comparison, so a failure names the first differing line.
fn same(what: &str, got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{what}: line {} differs", i + 1);
    }
    assert_eq!(got, want, "{what}: line count or line ends differ");
}

fn check(sc: Scenario, plus: bool, terse_version: Option<TerseVersion>) {
    let doc = sc.doc();
    if std::path::Path::new(&format!("{DIR}{}/normal.txt", sc.name)).exists() {
        same(
            &format!("{} normal", sc.name),
            &normal(&doc),
            &sc.file("normal.txt"),
        );
    }
    same(
        &format!("{} json", sc.name),
        &json(&doc, plus, None),
        &sc.file("out.json"),
    );
    if let Some(v) = terse_version {
        same(
            &format!("{} terse", sc.name),
            &terse(&doc, v),
            &sc.file("terse.txt"),
        );
    }
}

#[test]
fn null_read_short_run_without_samples() {
    check(Scenario::plain("null_read"), true, Some(TerseVersion::V3));
}

#[test]
fn null_randrw_si_units_custom_percentiles_lat_tables_and_terse_v5() {
    let sc = Scenario {
        kb_base: 1000,
        list: &[50.0, 99.5, 99.999],
        precision: 3,
        lat_percentiles: true,
        ..Scenario::plain("null_tb")
    };
    check(sc, true, Some(TerseVersion::V5));
}

#[test]
fn psync_write_with_disk_stats() {
    check(Scenario::plain("psync_write"), true, Some(TerseVersion::V3));
}

#[test]
fn libaio_randrw_with_slat_and_mixed_units() {
    check(
        Scenario::plain("libaio_randrw"),
        true,
        Some(TerseVersion::V3),
    );
}

#[test]
fn unified_both_after_the_directions_merged_by_group_reporting() {
    check(Scenario::plain("null_both"), true, Some(TerseVersion::V3));
}

#[test]
fn numjobs_merged_by_group_reporting() {
    check(Scenario::plain("numjobs_gr"), true, Some(TerseVersion::V3));
}

#[test]
fn numjobs_as_separate_blocks() {
    check(
        Scenario::plain("numjobs_nogr"),
        true,
        Some(TerseVersion::V3),
    );
}

#[test]
fn fsync_block_and_depths_over_100_percent() {
    check(Scenario::plain("fsync4"), true, Some(TerseVersion::V3));
}

#[test]
fn two_groups_global_options_and_plain_json() {
    check(Scenario::plain("groups"), false, Some(TerseVersion::V3));
}

#[test]
fn bandwidth_in_bits() {
    let sc = Scenario {
        unit_bits: true,
        ..Scenario::plain("null_bits")
    };
    check(sc, true, Some(TerseVersion::V3));
}

#[test]
fn terse_v2_with_description_line() {
    check(Scenario::plain("terse_v2"), true, Some(TerseVersion::V2));
}

#[test]
fn trim_only_and_terse_v4() {
    check(Scenario::plain("terse_v4"), true, Some(TerseVersion::V4));
}

#[test]
fn steady_state_attained_by_one_job() {
    check(Scenario::plain("ss_attained"), true, Some(TerseVersion::V3));
}

#[test]
fn steady_state_of_a_group_never_attained() {
    check(Scenario::plain("ss_group"), true, Some(TerseVersion::V3));
}

#[test]
fn plumb_evidence_goes_last_at_its_level() {
    let doc = Scenario::plain("groups").doc();
    let plain = json(&doc, false, None);
    let with = json(
        &doc,
        false,
        Some(r#"{"schema":"plumb.result/2","a":[1,{"b":"x,:{"}],"e":{}}"#),
    );
    let tail = "  \"plumb\" : {\n    \"schema\" : \"plumb.result/2\",\n    \"a\" : [\n      1,\n      {\n        \"b\" : \"x,:{\"\n      }\n    ],\n    \"e\" : {\n\n    }\n  }\n}\n";
    let head = plain.strip_suffix("\n}\n").expect("closing brace");
    assert_eq!(with, format!("{head},\n{tail}"));
    let parsed: Value = serde_json::from_str(&with).expect("still JSON");
    assert_eq!(parsed["plumb"]["a"][1]["b"], "x,:{");
}
