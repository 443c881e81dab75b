//! fio's layout on the run pipeline: fio prints every job's report once all groups are
//! done, in the formats asked for (terse, then JSON, then normal, as fio orders them),
//! then, under the name `plumb`, plumb's observations and findings. With
//! `--status-interval` the same report, fio's part only, of the figures so far comes every
//! period before that.

use std::fmt::Write as _;

use plumb_advise::{Knob, Spelling};
use plumb_pipeline::record::{GroupRecord, JobRecord, Record};
use plumb_pipeline::Layout;

use super::adapt::{doc, info};
use super::header::{job_header_line, starting_line};
use super::job::{FioJobInfo, OutputOptions};

pub struct Fio;

impl Fio {
    pub const LAYOUT: Fio = Fio;
}

/// What fio prints before the run (normal output only): one header line per job definition
/// (a clone adds none of its own), the version line and the process count.
pub fn prologue(jobs: &[FioJobInfo]) -> String {
    let mut out = String::new();
    for j in jobs.iter().filter(|j| j.subjob == 0) {
        push_lines(&mut out, &j.parse_lines);
        out.push_str(&job_header_line(&j.header));
    }
    out.push_str("fio-3.33\n");
    let threads = jobs.iter().filter(|j| j.thread).count() as u32;
    out.push_str(&starting_line(jobs.len() as u32 - threads, threads));
    out
}

/// What fio printed as it parsed the jobs, for the formats that have no header lines (JSON,
/// terse): it comes first on the report's stream all the same.
pub fn parse_lines(jobs: &[FioJobInfo]) -> String {
    let mut out = String::new();
    for j in jobs.iter().filter(|j| j.subjob == 0) {
        push_lines(&mut out, &j.parse_lines);
    }
    out
}

fn push_lines(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
}

/// ctime's text for a Unix time, in local time: `Sun Nov 22 13:07:47 2026`.
pub fn ctime(unix_s: u64) -> String {
    let t = unix_s as libc::time_t;
    // SAFETY: tm is written by localtime_r before it is read; buf is large enough for
    // ctime's 26 bytes and strftime never writes past its length.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return String::new();
        }
        let mut buf = [0u8; 64];
        let n = libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%a %b %e %H:%M:%S %Y".as_ptr(),
            &tm,
        );
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

fn infos(record: &Record) -> Vec<FioJobInfo> {
    record
        .groups
        .iter()
        .flat_map(|g| g.jobs.iter())
        .filter_map(info)
        .collect()
}

/// plumb's evidence for the JSON document's `plumb` key: each group's observations and
/// each job's findings.
fn evidence(record: &Record) -> String {
    let groups: Vec<serde_json::Value> = record
        .groups
        .iter()
        .map(|g| {
            serde_json::json!({
                "observations": g.observations,
                "jobs": g.jobs.iter().map(|j| serde_json::json!({
                    "name": j.name,
                    "findings": j.findings,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string(&serde_json::json!({
        "schema": plumb_pipeline::record::SCHEMA,
        "plumb_version": env!("CARGO_PKG_VERSION"),
        "groups": groups,
    }))
    .unwrap_or_default()
}

impl Layout for Fio {
    fn report(&self, _record: &Record, _group: &GroupRecord) -> String {
        String::new()
    }

    fn spelling(&self) -> Option<Spelling> {
        Some(spell)
    }

    fn finish(&self, record: &Record) -> String {
        let jobs = infos(record);
        let Some(first) = jobs.first() else {
            return String::new();
        };
        let ran_ms = record
            .groups
            .iter()
            .flat_map(|g| g.observations.as_ref())
            .map(|o| o.duration_s)
            .sum::<f64>()
            * 1000.0;
        // When the report was made, as fio stamps it: the end of the run, to the
        // millisecond where the record has its start to the millisecond.
        let end_ms = match record.started_at_unix_ms {
            Some(ms) => ms + ran_ms.round() as u64,
            None => (record.started_at_unix_s + (ran_ms / 1000.0).round() as u64) * 1000,
        };
        let d = doc(record, &ctime(end_ms / 1000), end_ms);
        let mut out = String::new();
        let f = first.output.formats;
        if f.normal {
            // What a job that failed while running says as it exits, before every report
            // (fio prints it whatever the format; plumb keeps JSON and terse documents clean).
            for fi in &jobs {
                if let Some(fail) = fi.failure.as_ref().filter(|x| !x.in_layout) {
                    out.push_str(&fail.pid_line(fi.pid));
                    out.push('\n');
                }
            }
        }
        // The JSON document always carries plumb's evidence: fio's readers ignore the key.
        let plumb = (f.json || f.json_plus).then(|| evidence(record));
        out.push_str(&reports(&d, &first.output, plumb.as_deref()));
        if f.normal && first.output.plumb_sections {
            for g in &record.groups {
                for j in &g.jobs {
                    let mut s = open_loop(j);
                    s.push_str(&super::buffers::section(j));
                    if let Some(o) = &g.observations {
                        s.push_str(&crate::observations::section(j, o));
                    }
                    s.push_str(&crate::findings::section(&j.findings));
                    if !s.trim().is_empty() {
                        let _ = write!(out, "\n[{}]\n{s}", j.name);
                    }
                }
            }
        }
        out
    }

    /// fio's `--status-interval` report: what the end prints, fio's part only, of the
    /// figures so far (plumb's evidence and sections belong to the finished run).
    fn status(&self, record: &Record, unix_ms: u64) -> String {
        let Some(first) = infos(record).into_iter().next() else {
            return String::new();
        };
        let d = doc(record, &ctime(unix_ms / 1000), unix_ms);
        reports(&d, &first.output, None)
    }

    fn replay(&self, record: &Record) -> String {
        let jobs = infos(record);
        let mut out = String::new();
        let normal = jobs.first().is_some_and(|j| j.output.formats.normal);
        if normal {
            out.push_str(&prologue(&jobs));
        } else {
            out.push_str(&parse_lines(&jobs));
        }
        for j in record.groups.iter().flat_map(|g| g.jobs.iter()) {
            let Some(fi) = info(j) else { continue };
            if let (true, Some((files, bytes))) = (normal, fi.laid_out) {
                out.push_str(&super::header::layout_line(&fi.header.name, files, bytes));
            }
            if depth_note(j, &fi) {
                out.push_str(DEPTH_NOTE);
                out.push('\n');
            }
            if let Some(n) = fi.failure.as_ref().and_then(|f| f.layout_notice()) {
                if normal {
                    out.push_str(n);
                    out.push('\n');
                }
            }
        }
        out.push_str(&self.finish(record));
        out
    }
}

/// Every report format asked for, in fio's order: terse, JSON, normal.
fn reports(d: &super::FioDoc, o: &OutputOptions, plumb: Option<&str>) -> String {
    let mut out = String::new();
    let f = o.formats;
    if f.terse {
        let v =
            super::TerseVersion::from_number(o.terse_version).unwrap_or(super::TerseVersion::V3);
        out.push_str(&super::terse::terse(d, v));
    }
    if f.json || f.json_plus {
        out.push_str(&super::json::json(d, f.json_plus, plumb));
    }
    if f.normal {
        out.push_str(&super::normal::normal(d));
    }
    out
}

/// fio's note for an iodepth above 1 on an engine that completes requests in their call.
pub const DEPTH_NOTE: &str =
    "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1";

/// Whether fio prints [`DEPTH_NOTE`] for a job at `iodepth` on an engine that can do this:
/// one that makes a blocking call per request on the files (fio's FIO_SYNCIO engines).
pub fn depth_note_applies(iodepth: u32, caps: plumb_fileio::engine::Caps) -> bool {
    iodepth > 1 && !caps.queued && caps.needs_files
}

fn depth_note(j: &JobRecord, fi: &FioJobInfo) -> bool {
    match &j.workload {
        plumb_pipeline::Settings::Fileio(f) => depth_note_applies(fi.header.iodepth, f.engine_caps),
        _ => false,
    }
}

/// What a rate-limited job's schedule did: fio times requests from when they were actually
/// issued, so a job that falls behind hides its queueing (fio issue #635); plumb also times
/// them from when they were due.
fn open_loop(j: &JobRecord) -> String {
    let Some(ol) = &j.open_loop else {
        return String::new();
    };
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let pct = |p: f64| {
        j.latency
            .percentiles
            .iter()
            .find(|x| x.percentile == p)
            .map_or("-".to_string(), |x| ms(x.value_ns))
    };
    let mut s = String::from(
        "Open-loop rate (rate/rate_iops):
",
    );
    let _ = writeln!(
        s,
        "    offered, IOPS:                {:.2}",
        ol.offered_per_s
    );
    let _ = writeln!(
        s,
        "    achieved, IOPS:               {:.2}",
        ol.achieved_per_s
    );
    let _ = writeln!(
        s,
        "    saturated:                    {}",
        if ol.saturated {
            "yes: the rate was not delivered; fio's latency above hides the wait"
        } else {
            "no"
        }
    );
    let _ = writeln!(
        s,
        "    latency from intended start:  avg {} ms, p95 {} ms, p99 {} ms, max {} ms",
        ms(j.latency.mean_ns as u64),
        pct(95.0),
        pct(99.0),
        ms(j.latency.max_ns)
    );
    let _ = writeln!(
        s,
        "    lag, intended to actual start: avg {} ms, max {} ms\n",
        ms(ol.lag.mean_ns as u64),
        ms(ol.lag.max_ns)
    );
    s
}

/// A setting that advice names, as fio's options write it.
fn spell(k: Knob) -> String {
    match k {
        Knob::Direct => "direct=1",
        Knob::DataSync => "sync=dsync",
        Knob::FsyncEvery => "fsync",
        Knob::NoPeriodicFsync => "fsync=0",
        Knob::NoEndFsync => "end_fsync=0",
        Knob::FileCount => "nrfiles",
        Knob::OneFile => "nrfiles=1",
        Knob::TotalSize => "same size",
        Knob::Threads => "numjobs",
        Knob::OneThread => "numjobs=1",
        Knob::Time => "runtime",
        Knob::Warmup => "ramp_time",
        Knob::LargeMemoryBlock => "bs",
        Knob::RandomFill => "refill_buffers=1",
        Knob::AsyncIo => "ioengine=io_uring",
        Knob::TableSize => "a larger size",
        Knob::ReportInterval => "--status-interval",
        Knob::HugePageBuffers => {
            "mem=mmaphuge (huge pages reserved first: sysctl vm.nr_hugepages), or plumb's --plumb-buffers=thp"
        }
    }
    .to_string()
}
