//! fio's terse (`--minimal`) layout: one `;`-separated line per report unit, latencies in µs.

use std::fmt::Write;

use super::dist::{depth_pct, lat_pct, terse_us_pct};
use super::groups::{bytes_per_s, group_runs, GroupRun};
use super::model::{Dir, DirStats, DiskUtil, FioDoc, LatStats, Unit};
use super::num::f6;

/// fio keeps 20 percentile fields whatever the list's length.
const PERCENTILE_FIELDS: usize = 20;

/// The terse layout's versions (`--terse-version`; fio rejects others when parsing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TerseVersion {
    /// No version string; trim fields; a description goes on a line of its own.
    V2,
    /// fio's default.
    V3,
    /// v3 plus the trim fields.
    V4,
    /// v4 plus bandwidth samples and IOPS statistics per direction.
    V5,
}

impl TerseVersion {
    /// The version `--terse-version=N` names, if fio knows it.
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            2 => Some(Self::V2),
            3 => Some(Self::V3),
            4 => Some(Self::V4),
            5 => Some(Self::V5),
            _ => None,
        }
    }

    fn number(self) -> u32 {
        match self {
            Self::V2 => 2,
            Self::V3 => 3,
            Self::V4 => 4,
            Self::V5 => 5,
        }
    }
}

/// One line per unit (fio prints a line even for a unit that did no I/O).
pub fn terse(doc: &FioDoc, version: TerseVersion) -> String {
    let groups = group_runs(doc);
    let mut out = String::new();
    for u in &doc.units {
        let group = groups.get(u.groupid as usize).copied().unwrap_or_default();
        unit_line(&mut out, doc, u, &group, version);
    }
    out
}

fn unit_line(out: &mut String, doc: &FioDoc, u: &Unit, g: &GroupRun, v: TerseVersion) {
    if v == TerseVersion::V2 {
        let _ = write!(out, "2;{};{};{}", u.name, u.groupid, u.error);
    } else {
        let _ = write!(
            out,
            "{};{};{};{};{}",
            v.number(),
            doc.version,
            u.name,
            u.groupid,
            u.error
        );
    }
    dir_fields(out, u, &u.read, g.dir(Dir::Read).agg_bw, v);
    // A mixed unit's sum is its read slot; fio prints no write or trim fields for it.
    if !u.mixed {
        dir_fields(out, u, &u.write, g.dir(Dir::Write).agg_bw, v);
        if v != TerseVersion::V3 {
            dir_fields(out, u, &u.trim, g.dir(Dir::Trim).agg_bw, v);
        }
    }
    // unified_rw_reporting=both: the sum's fields after the directions', measured
    // against the read aggregate (fio keeps the sum in the read slot).
    if let Some(mixed) = &u.both {
        dir_fields(out, u, mixed, g.dir(Dir::Read).agg_bw, v);
    }
    let _ = write!(
        out,
        ";{}%;{}%;{};{};{}",
        cf(u.usr_cpu_pct),
        cf(u.sys_cpu_pct),
        u.ctx,
        u.majf,
        u.minf
    );
    for p in depth_pct(&u.depths.level, u.rw_ios()) {
        let _ = write!(out, ";{p:3.1}%");
    }
    for p in terse_us_pct(u) {
        let _ = write!(out, ";{}%", c2(p));
    }
    for p in lat_pct(&u.lat_buckets.ms, u) {
        let _ = write!(out, ";{p:3.2}%");
    }
    if v != TerseVersion::V2 {
        for d in &doc.disks {
            disk_fields(out, d);
        }
    }
    if let Some(e) = &u.errors {
        let _ = write!(out, ";{};{}", e.total, e.first_error);
    }
    if let Some(desc) = u.description.as_deref().filter(|d| !d.is_empty()) {
        if v == TerseVersion::V2 {
            out.push('\n');
        }
        let _ = write!(out, ";{desc}");
    }
    out.push('\n');
}

/// One direction's fields; `agg` is its group's aggregate, B/s.
fn dir_fields(out: &mut String, u: &Unit, s: &DirStats, agg: u64, v: TerseVersion) {
    let bw_kib = bytes_per_s(s.io_bytes, s.runtime_ms) / 1024;
    let iops = bytes_per_s(s.total_ios, s.runtime_ms);
    let _ = write!(
        out,
        ";{};{bw_kib};{iops};{}",
        s.io_bytes >> 10,
        s.runtime_ms
    );
    lat_fields(out, LatStats::sampled(&s.slat));
    lat_fields(out, LatStats::sampled(&s.clat));
    let p = &u.percentiles;
    let source = if p.lat {
        Some(&s.lat)
    } else if p.clat {
        Some(&s.clat)
    } else {
        None
    };
    let list: &[f64] = if source.is_some() { &p.list } else { &[] };
    // Without samples fio's histogram walk gives 0 for every entry of the list.
    let values: Vec<u64> = source
        .and_then(LatStats::sampled)
        .map(|l| l.percentiles.iter().map(|p| p.1).collect())
        .unwrap_or_default();
    for i in 0..PERCENTILE_FIELDS {
        match list.get(i) {
            Some(pct) => {
                let ns = values.get(i).copied().unwrap_or(0);
                let _ = write!(out, ";{}%={}", f6(*pct), ns / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    lat_fields(out, LatStats::sampled(&s.lat));
    let bw = &s.bw;
    if bw.samples > 0 {
        // Unlike the other layouts: whole KiB of the aggregate, no guard for a small one.
        let share = if agg != 0 {
            (bw.mean * 100.0 / (agg / 1024) as f64).min(100.0)
        } else {
            100.0
        };
        let _ = write!(
            out,
            ";{};{};{}%;{};{}",
            bw.min,
            bw.max,
            cf(share),
            cf(bw.mean),
            cf(bw.stddev)
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if v == TerseVersion::V5 {
        let _ = write!(out, ";{}", bw.samples);
        let i = &s.iops;
        if i.samples > 0 {
            let _ = write!(
                out,
                ";{};{};{};{};{}",
                i.min,
                i.max,
                cf(i.mean),
                cf(i.stddev),
                i.samples
            );
        } else {
            out.push_str(";0;0;0.000000;0.000000;0");
        }
    }
}

/// `;min;max;mean;stdev` in µs (min and max truncated), zeros without samples.
fn lat_fields(out: &mut String, l: Option<&LatStats>) {
    match l {
        Some(l) => {
            let _ = write!(
                out,
                ";{};{};{};{}",
                l.min_ns / 1000,
                l.max_ns / 1000,
                f6(l.mean_ns / 1000.0),
                f6(l.stddev_ns / 1000.0)
            );
        }
        None => out.push_str(";0;0;0.000000;0.000000"),
    }
}

fn disk_fields(out: &mut String, d: &DiskUtil) {
    let _ = write!(
        out,
        ";{};{};{};{};{};{};{};{};{:3.2}%",
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
            ";slaves;{};{};{};{};{};{};{};{:3.2}%",
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
}

/// C's `%f`, including glibc's spelling of a NaN (0/0 on x86 is a negative NaN).
fn cf(x: f64) -> String {
    if x.is_nan() {
        nan(x)
    } else {
        f6(x)
    }
}

/// C's `%3.2f`, NaN as glibc writes it.
fn c2(x: f64) -> String {
    if x.is_nan() {
        nan(x)
    } else {
        format!("{x:3.2}")
    }
}

fn nan(x: f64) -> String {
    if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::model::{DiskAggr, ErrorSummary};

    #[test]
    fn unit_without_io_slaves_errors_and_description() {
        let doc = FioDoc {
            version: "fio-3.33".into(),
            kb_base: 1024,
            units: vec![Unit {
                name: "bad".into(),
                error: 2,
                description: Some("d".into()),
                errors: Some(ErrorSummary {
                    total: 1,
                    first_error: 2,
                    first_error_text: "No such file or directory".into(),
                }),
                ..Unit::default()
            }],
            disks: vec![DiskUtil {
                name: "md0".into(),
                util_pct: 12.5,
                slaves: Some(DiskAggr {
                    read_ios: 7,
                    util_pct: 25.0,
                    ..DiskAggr::default()
                }),
                ..DiskUtil::default()
            }],
            ..FioDoc::default()
        };
        let line = terse(&doc, TerseVersion::V3);
        let fields: Vec<&str> = line.trim_end().split(';').collect();
        // 121 fields of a unit, 9 of the device, 9 of its slaves, 2 errors, 1 description.
        assert_eq!(fields.len(), 121 + 9 + 9 + 2 + 1);
        assert_eq!(&fields[..5], ["3", "fio-3.33", "bad", "0", "2"]);
        // fio's 0/0 in the folded µs bucket of a unit without I/O (3.33 prints this too).
        assert_eq!(fields[99], "-nan%");
        assert_eq!(
            fields[121..].join(";"),
            "md0;0;0;0;0;0;0;0;12.50%;slaves;7;0;0;0;0;0;0;25.00%;1;2;d"
        );
        // v2: no version string, trim fields, no disks, the description on its own line.
        let v2 = terse(&doc, TerseVersion::V2);
        assert!(v2.starts_with("2;bad;0;2;"));
        assert!(v2.ends_with(";1;2\n;d\n"));
        assert_eq!(TerseVersion::from_number(6), None);
    }
}
