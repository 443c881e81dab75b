//! fio 3.33's JSON and json+ documents, written the way fio's own writer does: two spaces a
//! level, `"key" : value`, floats as C `%f`, only `"` and `\` escaped in strings, and
//! string members with an empty value left out (fio's writer drops them).

use super::dist::{depth_pct, lat_pct, BATCH_LABELS, DEPTH_LABELS, LAT_LABELS};
use super::groups::{bytes_per_s, group_runs, share_of_agg, GroupRun};
use super::model::{Dir, DirStats, DiskUtil, FioDoc, LatStats, Unit};
use super::num::f6;
use super::steady;

/// A value of fio's JSON tree.
enum Val {
    Int(i128),
    Float(f64),
    Str(String),
    Obj(Vec<(String, Val)>),
    Arr(Vec<Val>),
    /// Already-serialized JSON, re-indented to its place.
    Raw(String),
}

/// Members in order; `str` drops empty strings as fio does.
#[derive(Default)]
struct Obj(Vec<(String, Val)>);

impl Obj {
    fn int(&mut self, k: &str, v: impl Into<i128>) {
        self.0.push((k.into(), Val::Int(v.into())));
    }
    fn float(&mut self, k: &str, v: f64) {
        self.0.push((k.into(), Val::Float(v)));
    }
    fn str(&mut self, k: &str, v: &str) {
        if !v.is_empty() {
            self.0.push((k.into(), Val::Str(v.into())));
        }
    }
    fn obj(&mut self, k: &str, o: Obj) {
        self.0.push((k.into(), Val::Obj(o.0)));
    }
}

/// The `--output-format=json` document (`plus`: json+, with histogram bins), followed by a
/// newline. `plumb`: JSON text placed last under a top-level `"plumb"` key.
pub fn json(doc: &FioDoc, plus: bool, plumb: Option<&str>) -> String {
    let groups = group_runs(doc);
    let mut root = Obj::default();
    root.str("fio version", &doc.version);
    root.int("timestamp", doc.timestamp_ms / 1000);
    root.int("timestamp_ms", doc.timestamp_ms);
    root.str("time", &doc.time_text);
    if !doc.global_options.is_empty() {
        root.obj("global options", options(&doc.global_options));
    }
    let jobs = doc
        .units
        .iter()
        .map(|u| {
            let group = groups.get(u.groupid as usize).copied().unwrap_or_default();
            Val::Obj(unit(u, &group, plus).0)
        })
        .collect();
    root.0.push(("jobs".into(), Val::Arr(jobs)));
    if !doc.disks.is_empty() {
        let disks = doc.disks.iter().map(|d| Val::Obj(disk(d).0)).collect();
        root.0.push(("disk_util".into(), Val::Arr(disks)));
    }
    if let Some(raw) = plumb {
        root.0.push(("plumb".into(), Val::Raw(raw.into())));
    }
    let mut out = String::new();
    write_obj(&mut out, &root.0, 0);
    out.push('\n');
    out
}

fn options(opts: &[(String, String)]) -> Obj {
    let mut o = Obj::default();
    for (k, v) in opts {
        o.str(k, v);
    }
    o
}

fn unit(u: &Unit, group: &GroupRun, plus: bool) -> Obj {
    let mut o = Obj::default();
    o.str("jobname", &u.name);
    o.int("groupid", u.groupid);
    o.int("error", u.error);
    o.int("eta", u.eta_s);
    o.int("elapsed", u.elapsed_s);
    if !u.job_options.is_empty() {
        o.obj("job options", options(&u.job_options));
    }
    // A mixed unit has its sum as `mixed` and no per-direction objects.
    for d in Dir::ALL.into_iter().filter(|&d| !u.mixed || d == Dir::Read) {
        o.obj(
            u.dir_name(d),
            direction(u, u.dir(d), group.dir(d).agg_bw, plus),
        );
    }
    // fio leaves the sync object out of a mixed report too.
    if !u.mixed {
        let mut sync = Obj::default();
        let sync_stats = u.sync.clone().unwrap_or_default();
        sync.int("total_ios", sync_stats.total_ios);
        let p = &u.percentiles;
        sync.obj("lat_ns", lat(&sync_stats.lat, p.clat || p.lat, plus));
        o.obj("sync", sync);
    }
    // unified_rw_reporting=both: the sum after the directions, its share of the read
    // aggregate (fio keeps the sum in the read slot).
    if let Some(mixed) = &u.both {
        o.obj(
            "mixed",
            direction(u, mixed, group.dir(Dir::Read).agg_bw, plus),
        );
    }
    o.int("job_runtime", u.job_runtime_ms);
    o.float("usr_cpu", u.usr_cpu_pct);
    o.float("sys_cpu", u.sys_cpu_pct);
    o.int("ctx", u.ctx);
    o.int("majf", u.majf);
    o.int("minf", u.minf);
    let dp = &u.depths;
    o.obj(
        "iodepth_level",
        labelled(&DEPTH_LABELS, &depth_pct(&dp.level, u.rw_ios())),
    );
    o.obj(
        "iodepth_submit",
        labelled(&BATCH_LABELS, &depth_pct(&dp.submit, dp.total_submit)),
    );
    o.obj(
        "iodepth_complete",
        labelled(&BATCH_LABELS, &depth_pct(&dp.complete, dp.total_complete)),
    );
    o.obj(
        "latency_ns",
        labelled(&LAT_LABELS, &lat_pct(&u.lat_buckets.ns, u)),
    );
    o.obj(
        "latency_us",
        labelled(&LAT_LABELS, &lat_pct(&u.lat_buckets.us, u)),
    );
    o.obj(
        "latency_ms",
        labelled(&LAT_LABELS, &lat_pct(&u.lat_buckets.ms, u)),
    );
    if let Some(e) = &u.errors {
        o.int("total_err", e.total);
        o.int("first_error", e.first_error);
    }
    let lt = &u.latency_target;
    if lt.depth != 0 {
        o.int("latency_depth", lt.depth);
        o.int("latency_target", lt.target_ns);
        o.float("latency_percentile", lt.percentile);
        o.int("latency_window", lt.window_us);
    }
    if let Some(desc) = &u.description {
        o.str("desc", desc);
    }
    if let Some(ss) = &u.steady {
        o.obj("steadystate", steadystate(ss));
    }
    o
}

/// fio's `steadystate` object (stat.c show_thread_status_json).
fn steadystate(ss: &plumb_core::steady::SteadyReport) -> Obj {
    let mut o = Obj::default();
    o.str("ss", &steady::ss_text(ss));
    o.int("duration", ss.window_s);
    o.int("attained", u8::from(ss.attained));
    o.str("criterion", &steady::criterion_text(ss));
    o.float("max_deviation", ss.window.deviation);
    o.float("slope", ss.window.slope);
    let (bw, iops) = steady::ordered(ss);
    let (bw_mean, iops_mean) = steady::means(ss);
    let ints = |v: Vec<u64>| Val::Arr(v.into_iter().map(|x| Val::Int(x.into())).collect());
    let mut data = Obj::default();
    data.int("bw_mean", bw_mean);
    data.int("iops_mean", iops_mean);
    data.0.push(("iops".into(), ints(iops)));
    data.0.push(("bw".into(), ints(bw)));
    o.obj("data", data);
    o
}

fn labelled(labels: &[&str], values: &[f64]) -> Obj {
    let mut o = Obj::default();
    for (l, v) in labels.iter().zip(values) {
        o.float(l, *v);
    }
    o
}

/// One direction's object; `agg_bw` is its group's aggregate, B/s.
fn direction(u: &Unit, s: &DirStats, agg_bw: u64, plus: bool) -> Obj {
    let mut o = Obj::default();
    let bw_bytes = bytes_per_s(s.io_bytes, s.runtime_ms);
    let iops = if s.runtime_ms == 0 {
        0.0
    } else {
        1000.0 * s.total_ios as f64 / s.runtime_ms as f64
    };
    o.int("io_bytes", s.io_bytes);
    o.int("io_kbytes", s.io_bytes >> 10);
    o.int("bw_bytes", bw_bytes);
    o.int("bw", bw_bytes / 1024);
    o.float("iops", iops);
    o.int("runtime", s.runtime_ms);
    o.int("total_ios", s.total_ios);
    o.int("short_ios", s.short_ios);
    o.int("drop_ios", s.drop_ios);
    let p = &u.percentiles;
    let none = LatStats::default();
    o.obj(
        "slat_ns",
        lat(s.slat.as_ref().unwrap_or(&none), p.slat, plus),
    );
    o.obj(
        "clat_ns",
        lat(s.clat.as_ref().unwrap_or(&none), p.clat, plus),
    );
    o.obj("lat_ns", lat(s.lat.as_ref().unwrap_or(&none), p.lat, plus));
    let bw = &s.bw;
    if bw.samples > 0 {
        o.int("bw_min", bw.min);
        o.int("bw_max", bw.max);
        o.float("bw_agg", share_of_agg(bw.mean, agg_bw));
        o.float("bw_mean", bw.mean);
        o.float("bw_dev", bw.stddev);
    } else {
        o.int("bw_min", 0);
        o.int("bw_max", 0);
        o.float("bw_agg", 0.0);
        o.float("bw_mean", 0.0);
        o.float("bw_dev", 0.0);
    }
    o.int("bw_samples", bw.samples);
    let io = &s.iops;
    let sampled = io.samples > 0;
    o.int("iops_min", if sampled { io.min } else { 0 });
    o.int("iops_max", if sampled { io.max } else { 0 });
    o.float("iops_mean", if sampled { io.mean } else { 0.0 });
    o.float("iops_stddev", if sampled { io.stddev } else { 0.0 });
    o.int("iops_samples", io.samples);
    o
}

/// `{min, max, mean, stddev, N}` plus the percentiles (and json+ bins) when asked for and
/// there are samples.
fn lat(l: &LatStats, percentiles: bool, plus: bool) -> Obj {
    let mut o = Obj::default();
    let some = l.n > 0;
    o.int("min", if some { l.min_ns } else { 0 });
    o.int("max", if some { l.max_ns } else { 0 });
    o.float("mean", if some { l.mean_ns } else { 0.0 });
    o.float("stddev", if some { l.stddev_ns } else { 0.0 });
    o.int("N", l.n);
    if percentiles && some {
        let mut p = Obj::default();
        for &(pct, v) in &l.percentiles {
            p.int(&f6(pct), v);
        }
        o.obj("percentile", p);
        if plus {
            let mut b = Obj::default();
            for &(v, count) in &l.bins {
                b.int(&v.to_string(), count);
            }
            o.obj("bins", b);
        }
    }
    o
}

fn disk(d: &DiskUtil) -> Obj {
    let mut o = Obj::default();
    o.str("name", &d.name);
    o.int("read_ios", d.read_ios);
    o.int("write_ios", d.write_ios);
    o.int("read_merges", d.read_merges);
    o.int("write_merges", d.write_merges);
    o.int("read_ticks", d.read_ticks);
    o.int("write_ticks", d.write_ticks);
    o.int("in_queue", d.in_queue);
    o.float("util", d.util_pct);
    if let Some(a) = &d.slaves {
        o.int("aggr_read_ios", a.read_ios);
        o.int("aggr_write_ios", a.write_ios);
        o.int("aggr_read_merges", a.read_merges);
        // fio's spelling.
        o.int("aggr_write_merge", a.write_merges);
        o.int("aggr_read_ticks", a.read_ticks);
        o.int("aggr_write_ticks", a.write_ticks);
        o.int("aggr_in_queue", a.in_queue);
        o.float("aggr_util", a.util_pct);
    }
    o
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// An object whose opening brace is already placed; `level` is the indentation of its
/// closing brace.
fn write_obj(out: &mut String, members: &[(String, Val)], level: usize) {
    out.push_str("{\n");
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        out.push('"');
        out.push_str(k);
        out.push_str("\" : ");
        write_val(out, v, level + 1);
    }
    out.push('\n');
    indent(out, level);
    out.push('}');
}

fn write_val(out: &mut String, v: &Val, level: usize) {
    match v {
        Val::Int(i) => out.push_str(&i.to_string()),
        Val::Float(f) => out.push_str(&f6(*f)),
        Val::Str(s) => {
            out.push('"');
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        }
        Val::Obj(m) => write_obj(out, m, level),
        Val::Arr(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                write_val(out, item, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
        Val::Raw(text) => reindent(out, text, level),
    }
}

/// Lays out JSON text in fio's style, its closing bracket at `level`. It works on the
/// characters alone (strings copied verbatim), so it never fails: text that is not JSON
/// comes out as rearranged text, not as a panic.
fn reindent(out: &mut String, text: &str, level: usize) {
    let mut depth = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                let mut escaped = false;
                for s in chars.by_ref() {
                    out.push(s);
                    if escaped {
                        escaped = false;
                    } else if s == '\\' {
                        escaped = true;
                    } else if s == '"' {
                        break;
                    }
                }
            }
            '{' | '[' => {
                out.push(c);
                out.push('\n');
                depth += 1;
                while chars.peek().is_some_and(|n| n.is_ascii_whitespace()) {
                    chars.next();
                }
                if !matches!(chars.peek(), Some('}' | ']')) {
                    indent(out, level + depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                out.push('\n');
                indent(out, level + depth);
                out.push(c);
            }
            ',' => {
                out.push_str(",\n");
                indent(out, level + depth);
            }
            ':' => out.push_str(" : "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::model::{DiskAggr, ErrorSummary};

    #[test]
    fn empty_strings_dropped_quotes_escaped_optional_members() {
        let doc = FioDoc {
            version: "fio-3.33".into(),
            global_options: vec![("filename".into(), String::new())],
            units: vec![Unit {
                name: "j".into(),
                description: Some(r#"say "hi" \ bye"#.into()),
                job_options: vec![("rw".into(), "read".into()), ("x".into(), String::new())],
                errors: Some(ErrorSummary {
                    total: 2,
                    first_error: 5,
                    first_error_text: "Input/output error".into(),
                }),
                ..Unit::default()
            }],
            disks: vec![DiskUtil {
                name: "md0".into(),
                slaves: Some(DiskAggr::default()),
                ..DiskUtil::default()
            }],
            ..FioDoc::default()
        };
        let text = json(&doc, false, None);
        // fio's writer drops a string member whose value is empty, even if that leaves an
        // empty object.
        assert!(text.contains("  \"global options\" : {\n\n  },\n"));
        assert!(text.contains("      \"job options\" : {\n        \"rw\" : \"read\"\n      },\n"));
        assert!(text.contains("      \"desc\" : \"say \\\"hi\\\" \\\\ bye\"\n"));
        assert!(text.contains("      \"total_err\" : 2,\n      \"first_error\" : 5,\n"));
        assert!(text.contains("      \"aggr_write_merge\" : 0,\n"));
        assert!(text.contains("      \"aggr_util\" : 0.000000\n"));
        // No latency target depth: none of the four latency_* members.
        assert!(!text.contains("latency_depth"));
        assert!(text.ends_with("]\n}\n"));
    }
}
