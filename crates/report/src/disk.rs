//! `plumb disk`: CrystalDiskMark's presets as one table, each line of it a fio job run by
//! plumb, with what was observed underneath and the findings. Jobs are named
//! `<preset>-<read|write>` (`SEQ1M-Q8T1-read`); a job named `precondition` fills the file
//! first and is not a row of the table.

use std::fmt::Write;

use plumb_core::stats::Histogram;
use plumb_pipeline::{GroupRecord, JobRecord, Layout, Record};

/// Where the tests' request buffers were: plumb disk asks for huge pages so a 1 MiB request
/// is one physically contiguous buffer; say whether the kernel granted them (none for a
/// record made before it asked).
fn buffers_line(record: &Record) -> Option<String> {
    let (mut bytes, mut huge) = (0u64, 0u64);
    for j in record.groups.iter().flat_map(|g| &g.jobs) {
        if let plumb_pipeline::record::Settings::Fileio(s) = &j.workload {
            if let (Some(b), Some(h)) = (s.buffer_bytes, s.huge_page_bytes) {
                bytes += b;
                huge += h;
            }
        }
    }
    if bytes == 0 {
        return None;
    }
    Some(if huge >= bytes {
        "I/O buffers: in huge pages for every test (each 1 MiB request one contiguous buffer)"
            .to_string()
    } else {
        format!(
            "I/O buffers: the kernel gave huge pages for {} of {} (transparent huge pages off, or no free 2 MiB blocks): the rest may reach the disk cut (requests-split)",
            plumb_core::size::format_compact(huge),
            plumb_core::size::format_compact(bytes)
        )
    })
}

/// Whether the test file was on a filesystem that lives in the page cache, where O_DIRECT
/// has nothing to bypass.
fn in_memory(measured: &[&GroupRecord]) -> bool {
    measured
        .iter()
        .filter_map(|g| g.observations.as_ref()?.target.as_ref())
        .any(|t| matches!(t.fs_type.as_str(), "tmpfs" | "ramfs"))
}

/// One line per test: the device's figures (iostat -x's) and the test file's page-cache
/// residency at its end, from each test's own observations; empty when none were made.
fn each_test(measured: &[&GroupRecord]) -> String {
    let mut out = String::new();
    let mut lines = Vec::new();
    for g in measured {
        let (Some(o), Some(j)) = (&g.observations, g.jobs.first()) else {
            continue;
        };
        let mut cells = Vec::new();
        if let Some(d) = o.filesystem_device().or_else(|| o.devices.first()) {
            let f = &d.totals.figures;
            cells.push(format!(
                "{}: read {:.2} MiB/s, written {:.2} MiB/s, r_await {:.2} ms, w_await {:.2} ms, aqu-sz {:.2}, %util {:.2}",
                d.name,
                f.read_bytes_per_s / (1u64 << 20) as f64,
                f.write_bytes_per_s / (1u64 << 20) as f64,
                f.read_await_ms,
                f.write_await_ms,
                f.queue_size,
                f.util_pct
            ));
        }
        if let Some(r) = &o.residency {
            cells.push(format!("page cache {:.1}%", r.end.resident_pct));
        }
        if !cells.is_empty() {
            lines.push(format!("    {:<18} {}", j.name, cells.join("; ")));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "Observed during each test:");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
    out
}

/// The name of the job that fills the test file before the measured ones.
pub const PRECONDITION: &str = "precondition";

pub struct Disk;

impl Disk {
    pub const LAYOUT: Disk = Disk;

    /// The line under the banner: the test file, its size, the time per test (from the
    /// rendering choices the record keeps).
    pub fn target_line(choices: Option<&serde_json::Value>) -> String {
        let Some(c) = choices else {
            return String::new();
        };
        format!(
            "target: {}, {}{}, {} s per test, {}\n\n",
            c["file"].as_str().unwrap_or("?"),
            c["size"].as_str().unwrap_or("?"),
            if c["made"].as_bool() == Some(true) {
                " (made by plumb)"
            } else {
                ""
            },
            c["seconds"].as_u64().unwrap_or(0),
            if c["read_only"].as_bool() == Some(true) {
                "read tests only, on the data there"
            } else {
                "filled with incompressible data first"
            }
        )
    }
}

/// One measured job's figures.
struct Row {
    preset: String,
    write: bool,
    mb_per_s: f64,
    iops: f64,
    mean_us: f64,
    p99_us: f64,
}

fn row(job: &JobRecord) -> Option<Row> {
    let (preset, dir) = job.name.rsplit_once('-')?;
    let write = dir == "write";
    let kind = if write { "write" } else { "read" };
    let bytes = job.counter(if write { "bytes_written" } else { "bytes_read" });
    let secs = job.total_time_s.max(1e-9);
    let h = job
        .histograms
        .get(kind)
        .and_then(|h| Histogram::try_from(h).ok())
        .filter(|h| h.count() > 0)?;
    Some(Row {
        preset: preset.replace('-', " "),
        write,
        mb_per_s: bytes as f64 / secs / 1e6,
        iops: h.count() as f64 / secs,
        mean_us: h.mean().unwrap_or(0.0) / 1e3,
        p99_us: h.percentile(99.0).unwrap_or(0) as f64 / 1e3,
    })
}

fn rows(record: &Record) -> Vec<Row> {
    record
        .jobs()
        .filter(|j| j.name != PRECONDITION && j.error.is_none())
        .filter_map(row)
        .collect()
}

impl Layout for Disk {
    fn replay(&self, record: &Record) -> String {
        let banner = self.banner();
        let body = plumb_pipeline::replay_with(self, record);
        let head = format!("{banner}{}", Disk::target_line(record.layout.as_ref()));
        body.replacen(&banner, &head, 1)
    }

    fn banner(&self) -> String {
        format!(
            "plumb {} disk: CrystalDiskMark's presets with O_DIRECT\n\n",
            env!("CARGO_PKG_VERSION")
        )
    }

    /// One line per job as it finishes (the table comes at the end).
    fn report(&self, _record: &Record, group: &GroupRecord) -> String {
        let mut out = String::new();
        for j in &group.jobs {
            if let Some(e) = &j.error {
                let _ = writeln!(out, "{}: failed: {e}", j.name);
                continue;
            }
            if j.name == PRECONDITION {
                let bytes = j.counter("bytes_written");
                let _ = writeln!(
                    out,
                    "precondition: wrote {} in {:.1} s",
                    plumb_core::size::format_compact(bytes),
                    j.total_time_s
                );
                continue;
            }
            if let Some(r) = row(j) {
                let _ = writeln!(
                    out,
                    "{:<12} {:<5} {:>10.2} MB/s {:>10.1} IOPS   latency avg {:>9.1} us, p99 {:>9.1} us",
                    r.preset,
                    if r.write { "write" } else { "read" },
                    r.mb_per_s,
                    r.iops,
                    r.mean_us,
                    r.p99_us
                );
            }
        }
        out
    }

    fn finish(&self, record: &Record) -> String {
        let mut out = String::from("\n");
        let rows = rows(record);
        let _ = writeln!(
            out,
            "{:<12} {:>12} {:>12} {:>12} {:>12}",
            "", "Read MB/s", "Write MB/s", "Read IOPS", "Write IOPS"
        );
        let mut presets: Vec<&str> = Vec::new();
        for r in &rows {
            if !presets.contains(&r.preset.as_str()) {
                presets.push(&r.preset);
            }
        }
        for p in presets {
            let get = |write: bool| rows.iter().find(|r| r.preset == p && r.write == write);
            let cell = |r: Option<&Row>, f: fn(&Row) -> f64, decimals: usize| {
                r.map_or("-".to_string(), |r| format!("{:.*}", decimals, f(r)))
            };
            let _ = writeln!(
                out,
                "{p:<12} {:>12} {:>12} {:>12} {:>12}",
                cell(get(false), |r| r.mb_per_s, 2),
                cell(get(true), |r| r.mb_per_s, 2),
                cell(get(false), |r| r.iops, 1),
                cell(get(true), |r| r.iops, 1),
            );
        }
        let _ = writeln!(out);
        if let Some(line) = buffers_line(record) {
            let _ = writeln!(out, "{line}\n");
        }
        // Every measured group has its own observations: the first test's in full (what
        // the disk sat on, and how it behaved then), then each test's device and cache
        // figures, so a write test is not read off a read test's block. Then every finding
        // once, with the tests that raised it.
        let measured: Vec<&GroupRecord> = record
            .groups
            .iter()
            .filter(|g| g.jobs.iter().any(|j| j.name != PRECONDITION))
            .collect();
        if let Some((g, o)) = measured
            .first()
            .and_then(|g| g.observations.as_ref().map(|o| (g, o)))
        {
            let j = &g.jobs[0];
            out.push_str(&crate::observations::section(j, o).replacen(
                "Observed during the run:",
                &format!("Observed during the first test ({}):", j.name),
                1,
            ));
        }
        out.push_str(&each_test(&measured));
        let findings: Vec<plumb_advise::Finding> =
            crate::findings::distinct(measured.iter().flat_map(|g| &g.jobs))
                .into_iter()
                .map(|(mut f, by)| {
                    f.evidence.push(("raised by".into(), by.join(", ")));
                    f
                })
                .collect();
        out.push_str(&crate::findings::section(&findings));
        out.push_str(if in_memory(&measured) {
            "What this measures: the file is on a filesystem in memory (tmpfs), where O_DIRECT\n\
             does not bypass the page cache: the figures are memory's speed, not a disk's.\n"
        } else {
            "What this measures: O_DIRECT requests, so the page cache plays no part; caches below\n\
             it (the drive's, a virtual machine host's) still can, for a file they can hold.\n"
        });
        out
    }
}
