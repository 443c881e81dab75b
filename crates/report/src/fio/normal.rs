//! fio 3.33's normal text report, from the blank line after the start-up lines to the end:
//! the unit blocks back to back, each group's "Run status group" lines, then "Disk stats".

use std::fmt::Write;

use super::dist::{
    depth_pct, lat_pct, percentile_unit, scale_lat, BATCH_LABELS, DEPTH_LABELS, LAT_LABELS,
};
use super::groups::{bytes_per_s, group_runs, share_of_agg, GroupRun, UNIFIED_BOTH, UNIFIED_MIXED};
use super::header::is_pow2;
use super::model::{Dir, DirStats, DiskUtil, FioDoc, LatStats, Unit};
use super::num::{num2str, N2sUnit};

/// The report fio prints after a run in its normal format.
pub fn normal(doc: &FioDoc) -> String {
    let groups = group_runs(doc);
    let mut out = String::from("\n");
    for unit in &doc.units {
        if let Some(group) = groups.get(unit.groupid as usize) {
            unit_block(&mut out, doc, unit, group);
        }
    }
    for group in &groups {
        group_lines(&mut out, doc, group);
    }
    if !doc.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for disk in &doc.disks {
            disk_line(&mut out, disk);
        }
    }
    out
}

/// Bandwidth's unit: bytes (B/s) or bits (bit/s, unit_base=1).
pub(crate) fn rate_unit(doc: &FioDoc) -> N2sUnit {
    if doc.unit_bits {
        N2sUnit::BitPerSec
    } else {
        N2sUnit::BytePerSec
    }
}

fn unit_block(out: &mut String, doc: &FioDoc, u: &Unit, group: &GroupRun) {
    let bytes: u64 = Dir::ALL.iter().map(|&d| u.dir(d).io_bytes).sum();
    if bytes == 0 && u.rw_ios() == 0 {
        return;
    }
    let err = match (&u.error_text, u.error) {
        (Some(text), e) if e != 0 => format!("{e:2} ({text})"),
        (_, e) => format!("{e:2}"),
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={err}: pid={}: {}",
        u.name, u.groupid, u.members, u.pid, u.time_text
    );
    if let Some(desc) = u.description.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "  Description  : [{desc}]");
    }
    for d in Dir::ALL {
        if u.dir(d).io_bytes != 0 {
            dir_block(out, doc, u, d, group);
        }
    }
    if let Some(mixed) = &u.both {
        mixed_block(out, doc, u, mixed, group);
    }
    lat_lines(out, "nsec", &lat_pct(&u.lat_buckets.ns, u));
    lat_lines(out, "usec", &lat_pct(&u.lat_buckets.us, u));
    lat_lines(out, "msec", &lat_pct(&u.lat_buckets.ms, u));
    if let Some(sync) = u.sync.as_ref().filter(|s| s.lat.n > 0) {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(out, "sync", &sync.lat);
        percentile_table(out, "sync", &sync.lat, u.percentiles.precision);
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        u.usr_cpu_pct, u.sys_cpu_pct, u.ctx, u.majf, u.minf
    );
    let dp = &u.depths;
    dist_line(
        out,
        "  IO depths    : ",
        &DEPTH_LABELS,
        &depth_pct(&dp.level, u.rw_ios()),
    );
    dist_line(
        out,
        "     submit    : ",
        &BATCH_LABELS,
        &depth_pct(&dp.submit, dp.total_submit),
    );
    dist_line(
        out,
        "     complete  : ",
        &BATCH_LABELS,
        &depth_pct(&dp.complete, dp.total_complete),
    );
    let sync_ios = u.sync.as_ref().map_or(0, |s| s.total_ios);
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        u.read.total_ios,
        u.write.total_ios,
        u.trim.total_ios,
        sync_ios,
        u.read.short_ios,
        u.write.short_ios,
        u.trim.short_ios,
        u.read.drop_ios,
        u.write.drop_ios,
        u.trim.drop_ios
    );
    if let Some(e) = &u.errors {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            e.total, e.first_error, e.first_error_text
        );
    }
    let lt = &u.latency_target;
    if lt.depth != 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            lt.target_ns, lt.window_us, lt.percentile, lt.depth
        );
    }
    if let Some(ss) = &u.steady {
        out.push_str(&super::steady::normal_line(
            ss,
            doc.kb_base,
            doc.sig_figs,
            rate_unit(doc),
        ));
    }
}

fn dir_block(out: &mut String, doc: &FioDoc, u: &Unit, d: Dir, group: &GroupRun) {
    let post = if d == Dir::Write {
        format!("; {} zone resets", u.zone_resets)
    } else {
        String::new()
    };
    let title = DirTitle {
        name: u.dir_name(d),
        post: &post,
        sig_figs: doc.sig_figs,
        rate: rate_unit(doc),
    };
    stats_block(out, doc, u, u.dir(d), &title, group.dir(d).agg_bw);
}

/// unified_rw_reporting=both's `mixed` block. fio prints it from a sum it makes without
/// copying the job's significant_figures and unit_base, so its IOPS, bandwidth and size
/// come out as num2str's zero-digit "0" with no rate unit (fixed after 3.33, fio #1844);
/// its bandwidth share is of the group's read aggregate, as the sum sits in the read slot.
fn mixed_block(out: &mut String, doc: &FioDoc, u: &Unit, s: &DirStats, group: &GroupRun) {
    let title = DirTitle {
        name: "mixed",
        post: "",
        sig_figs: 0,
        rate: N2sUnit::None,
    };
    stats_block(out, doc, u, s, &title, group.dir(Dir::Read).agg_bw);
}

/// How a direction's first line is titled and its figures written.
struct DirTitle<'a> {
    name: &'a str,
    /// Text after the size and run time (`; 0 zone resets` for writes).
    post: &'a str,
    sig_figs: u32,
    rate: N2sUnit,
}

fn stats_block(
    out: &mut String,
    doc: &FioDoc,
    u: &Unit,
    s: &DirStats,
    title: &DirTitle,
    agg_bw: u64,
) {
    if s.runtime_ms == 0 {
        return;
    }
    let iec = is_pow2(doc.kb_base);
    let sig = title.sig_figs;
    let bw = bytes_per_s(s.io_bytes, s.runtime_ms);
    let iops = bytes_per_s(s.total_ios, s.runtime_ms);
    let rate = title.rate;
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        title.name,
        num2str(iops, sig, false, N2sUnit::None),
        num2str(bw, sig, iec, rate),
        num2str(bw, sig, !iec, rate),
        num2str(s.io_bytes, sig, iec, N2sUnit::Byte),
        s.runtime_ms,
        title.post
    );
    let series = [("slat", &s.slat), ("clat", &s.clat), (" lat", &s.lat)];
    for (name, stats) in series {
        if let Some(l) = LatStats::sampled(stats) {
            lat_line(out, name, l);
        }
    }
    let p = &u.percentiles;
    let tables = [
        ("slat", p.slat, &s.slat),
        ("clat", p.clat, &s.clat),
        ("lat", p.lat, &s.lat),
    ];
    for (name, on, stats) in tables {
        if let Some(l) = LatStats::sampled(stats).filter(|_| on) {
            percentile_table(out, name, l, p.precision);
        }
    }
    if s.bw.samples > 0 {
        let kb = f64::from(doc.kb_base);
        let per = share_of_agg(s.bw.mean, agg_bw);
        let (mut min, mut max, mut mean, mut dev) = (s.bw.min, s.bw.max, s.bw.mean, s.bw.stddev);
        // 3.33 means to say Kibit/kbit with unit_base=1 but compares against the wrong
        // constant, so this line stays in bytes whatever the unit.
        let mut label = if iec { "KiB" } else { "kB" };
        if mean > kb * kb {
            // fio divides its integer min/max by a double and stores them back: truncation.
            min = (min as f64 / kb) as u64;
            max = (max as f64 / kb) as u64;
            mean /= kb;
            dev /= kb;
            label = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({label:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            s.bw.samples
        );
    }
    if s.iops.samples > 0 {
        let i = &s.iops;
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            i.min, i.max, i.mean, i.stddev, i.samples
        );
    }
}

/// `    clat (usec): min=2, max=12195, avg=343.66, stdev=673.00`.
fn lat_line(out: &mut String, name: &str, l: &LatStats) {
    let s = scale_lat(l.min_ns, l.max_ns, l.mean_ns, l.stddev_ns);
    let _ = writeln!(
        out,
        "    {name} ({}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        s.unit,
        num2str(s.min, 6, false, N2sUnit::None),
        num2str(s.max, 6, false, N2sUnit::None),
        s.mean,
        s.dev
    );
}

/// The `clat percentiles (usec):` table: the unit fits the smallest and largest value,
/// values are rounded up to it, and as many entries share a row as fit in 73 columns.
fn percentile_table(out: &mut String, name: &str, l: &LatStats, precision: u32) {
    let Some(vmin) = l.percentiles.iter().map(|p| p.1).min() else {
        return;
    };
    let vmax = l.percentiles.iter().map(|p| p.1).max().unwrap_or(vmin);
    let (unit, div) = percentile_unit(vmin, vmax);
    let width = digits(vmax / div).max(5);
    let prec = precision as usize;
    let per_line = (73 / (prec + 10 + width)).max(1);
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    let last = l.percentiles.len() - 1;
    for (j, &(pct, value)) in l.percentiles.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = value;
        let mut d = div;
        while d > 1 {
            v = v.div_ceil(1000);
            d /= 1000;
        }
        let end = if j == last { '\n' } else { ',' };
        let _ = write!(out, " {pct:>pw$.prec$}th=[{v:>width$}]{end}", pw = prec + 3);
        if j != last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// fio's `log10(v) + 1` digits, where 0 gives no width of its own.
fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(0, |d| d as usize + 1)
}

/// `  lat (usec)   : 2=0.01%, 10=0.06%, …`: non-zero buckets only, five to a line.
fn lat_lines(out: &mut String, unit: &str, pct: &[f64]) {
    let shown: Vec<String> = pct
        .iter()
        .zip(LAT_LABELS)
        .filter(|(p, _)| **p > 0.0)
        .map(|(p, label)| format!("{label}={p:3.2}%"))
        .collect();
    for row in shown.chunks(5) {
        let _ = writeln!(out, "  lat ({unit})   : {}", row.join(", "));
    }
}

fn dist_line(out: &mut String, title: &str, labels: &[&str; 7], pct: &[f64; 7]) {
    let parts: Vec<String> = labels
        .iter()
        .zip(pct)
        .map(|(l, p)| format!("{l}={p:3.1}%"))
        .collect();
    let _ = writeln!(out, "{title}{}", parts.join(", "));
}

fn group_lines(out: &mut String, doc: &FioDoc, g: &GroupRun) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", g.groupid);
    let iec = is_pow2(doc.kb_base);
    let sig = doc.sig_figs;
    let rate = |n: u64, iec: bool| num2str(n, sig, iec, rate_unit(doc));
    let read = if g.unified == UNIFIED_MIXED {
        "  MIXED"
    } else {
        "   READ"
    };
    let labels = [read, "  WRITE", "   TRIM"];
    let dirs = Dir::ALL
        .into_iter()
        .zip(labels)
        .map(|(d, label)| (label, *g.dir(d)))
        .filter(|(_, s)| s.max_run_ms != 0);
    // unified_rw_reporting=both: the directions' sum after them, whether any ran or not.
    let both = (g.unified == UNIFIED_BOTH).then(|| ("  MIXED", g.mixed_line()));
    for (label, s) in dirs.chain(both) {
        let _ = writeln!(
            out,
            "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            rate(s.agg_bw, iec),
            rate(s.agg_bw, !iec),
            rate(s.min_bw, iec),
            rate(s.max_bw, iec),
            rate(s.min_bw, !iec),
            rate(s.max_bw, !iec),
            num2str(s.io_bytes, sig, iec, N2sUnit::Byte),
            num2str(s.io_bytes, sig, !iec, N2sUnit::Byte),
            s.min_run_ms,
            s.max_run_ms
        );
    }
}

fn disk_line(out: &mut String, d: &DiskUtil) {
    if d.slaves.is_some() {
        out.push_str("  ");
    }
    let _ = write!(
        out,
        "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks,
        d.write_ticks,
        d.in_queue,
        d.util_pct
    );
    if let Some(a) = &d.slaves {
        let _ = write!(
            out,
            ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:3.2}%",
            a.read_ios,
            a.write_ios,
            a.read_merges,
            a.write_merges,
            a.read_ticks,
            a.write_ticks,
            a.in_queue,
            a.util_pct
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::model::{DiskAggr, ErrorSummary, LatBuckets, SampleStats};

    fn lat(percentiles: &[(f64, u64)]) -> LatStats {
        LatStats {
            min_ns: 1500,
            max_ns: 17_600_000,
            mean_ns: 500_000.0,
            stddev_ns: 1_000_000.0,
            n: 4000,
            percentiles: percentiles.to_vec(),
            bins: Vec::new(),
        }
    }

    fn table(l: &LatStats, precision: u32) -> String {
        let mut out = String::new();
        percentile_table(&mut out, "clat", l, precision);
        out
    }

    #[test]
    fn wide_values_put_three_entries_on_a_row() {
        // §4.4: the write table of the libaio example, an 8-digit width.
        let l = lat(&[
            (1.0, 1800),
            (5.0, 2288),
            (10.0, 2512),
            (20.0, 3792),
            (30.0, 10176),
            (40.0, 17_432_576),
        ]);
        assert_eq!(
            table(&l, 2),
            "    clat percentiles (nsec):\n     |  1.00th=[    1800],  5.00th=[    2288], 10.00th=[    2512],\n     | 20.00th=[    3792], 30.00th=[   10176], 40.00th=[17432576]\n"
        );
    }

    #[test]
    fn msec_tables_round_up() {
        let l = lat(&[
            (50.0, 2_000_001),
            (99.0, 250_000_000),
            (99.99, 17_112_760_320),
        ]);
        assert_eq!(
            table(&l, 2),
            "    clat percentiles (msec):\n     | 50.00th=[    3], 99.00th=[  250], 99.99th=[17113]\n"
        );
        // No decimals with a list of whole numbers; the label keeps its 3 columns (3.33:
        // `--percentile_list=50:90` prints `|  50th=[   10],  90th=[   10]`).
        let l = lat(&[(50.0, 3000), (90.0, 150_000)]);
        assert_eq!(
            table(&l, 0),
            "    clat percentiles (usec):\n     |  50th=[    3],  90th=[  150]\n"
        );
    }

    fn doc_with(unit: Unit) -> FioDoc {
        FioDoc {
            version: "fio-3.33".into(),
            kb_base: 1024,
            sig_figs: 4,
            units: vec![unit],
            ..FioDoc::default()
        }
    }

    fn busy_unit() -> Unit {
        let mut ms = [0; 12];
        ms[10] = 1;
        ms[11] = 3;
        Unit {
            name: "slow".into(),
            members: 1,
            error: 5,
            error_text: Some("file:io_u.c:1889, func=io_u error, error=Input/output error".into()),
            pid: 42,
            time_text: "Sun Nov 22 13:07:47 2026".into(),
            read: DirStats {
                io_bytes: 4 << 30,
                runtime_ms: 2000,
                total_ios: 4,
                bw: SampleStats {
                    min: 2_000_000,
                    max: 2_200_000,
                    mean: 2_097_152.5,
                    stddev: 1024.0,
                    samples: 4,
                },
                ..DirStats::default()
            },
            lat_buckets: LatBuckets {
                ms,
                ..LatBuckets::default()
            },
            errors: Some(ErrorSummary {
                total: 3,
                first_error: 5,
                first_error_text: "Input/output error".into(),
            }),
            ..Unit::default()
        }
    }

    #[test]
    fn error_header_mib_bandwidth_msec_buckets_and_errors_line() {
        let text = normal(&doc_with(busy_unit()));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "slow: (groupid=0, jobs=1): err= 5 (file:io_u.c:1889, func=io_u error, error=Input/output error): pid=42: Sun Nov 22 13:07:47 2026"
        );
        assert_eq!(
            lines[2],
            "  read: IOPS=2, BW=2048MiB/s (2147MB/s)(4096MiB/2000msec)"
        );
        assert_eq!(
            lines[3],
            "   bw (  MiB/s): min= 1953, max= 2148, per=100.00%, avg=2048.00, stdev= 1.00, samples=4"
        );
        assert_eq!(lines[4], "  lat (msec)   : 2000=25.00%, >=2000=75.00%");
        assert!(text.contains("\n     errors    : total=3, first_error=5/<Input/output error>\n"));
        // No latency target depth: no `latency :` line.
        assert!(!text.contains("latency   :"));
    }

    #[test]
    fn no_io_no_block_but_the_group_title() {
        let doc = doc_with(Unit {
            name: "idle".into(),
            ..Unit::default()
        });
        assert_eq!(normal(&doc), "\n\nRun status group 0 (all jobs):\n");
    }

    #[test]
    fn dm_devices_indent_and_show_their_slaves() {
        let mut doc = doc_with(Unit::default());
        doc.disks = vec![DiskUtil {
            name: "dm-0".into(),
            read_ios: 10,
            write_ios: 20,
            util_pct: 50.0,
            slaves: Some(DiskAggr {
                read_ios: 5,
                write_ios: 10,
                util_pct: 100.0,
                ..DiskAggr::default()
            }),
            ..DiskUtil::default()
        }];
        assert!(normal(&doc).ends_with(
            "\nDisk stats (read/write):\n    dm-0: ios=10/20, merge=0/0, ticks=0/0, in_queue=0, util=50.00%, aggrios=5/10, aggrmerge=0/0, aggrticks=0/0, aggrin_queue=0, aggrutil=100.00%\n"
        ));
    }
}
