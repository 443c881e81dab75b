//! dd's layout: GNU dd 9.1's last lines (`N+M records in`, `N+M records out`, the bytes
//! copied, the time and the rate), preceded by dd's error line when the copy failed, then,
//! under the name `plumb`, plumb's observations and findings. All of it goes to stderr
//! (dd's stdout may carry the data), so the front end hands the pipeline stderr as its
//! report stream.

use std::fmt::Write as _;

use plumb_advise::{Knob, Spelling};
pub use plumb_fileio::dd::human_bytes;
use plumb_fileio::dd::unit_prefix as prefix;
use plumb_fileio::dd::{DdNote, Printed};
use plumb_pipeline::record::{GroupRecord, JobRecord, Record, Settings};
use plumb_pipeline::Layout;
use serde::{Deserialize, Serialize};

/// dd's `status=` level, and whether plumb's sections follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdLayoutOptions {
    pub status: StatusLevel,
    pub plumb_sections: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusLevel {
    #[default]
    Default,
    Noxfer,
    None,
}

pub struct Dd;

impl Dd {
    pub const LAYOUT: Dd = Dd;
}

fn options(record: &Record) -> DdLayoutOptions {
    record
        .layout
        .as_ref()
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or(DdLayoutOptions {
            status: StatusLevel::Default,
            plumb_sections: true,
        })
}

/// dd's rate: gnulib's floating path (one decimal, or none when that makes it wider than
/// four characters), SI units.
pub fn human_rate(bytes: u64, seconds: f64) -> String {
    if seconds <= 0.0 {
        return "Infinity B/s".to_string();
    }
    let damt = bytes as f64 / seconds;
    let mut e = 1.0f64;
    let mut exponent = 0;
    loop {
        e *= 1000.0;
        exponent += 1;
        if !(e * 1000.0 <= damt && exponent < 10) {
            break;
        }
    }
    let v = damt / e;
    let mut s = format!("{v:.1}");
    if s.len() > 4 {
        s = format!("{:.0}", v);
    }
    format!("{s} {}B/s", prefix(exponent, true))
}

/// C's `%g` (six significant digits, trailing zeros dropped), as dd prints seconds.
pub fn g(x: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: buf is large enough for any %g of a double and snprintf never writes past
    // its length.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%g".as_ptr(), x) };
    String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned()
}

/// dd's lines for one copy, as `status=` wants them.
pub fn stats(job: &JobRecord, status: StatusLevel) -> String {
    let c = |k: &str| job.counter(k);
    lines(
        [
            c("records_in_full"),
            c("records_in_partial"),
            c("records_out_full"),
            c("records_out_partial"),
        ],
        c("bytes_written"),
        job.total_time_s,
        status,
    )
}

/// dd's print_stats: the records in and out (full, partial), then the bytes written in
/// `secs`, as `status=` wants them. Also what dd prints on SIGUSR1 while it copies.
pub fn lines(records: [u64; 4], w: u64, secs: f64, status: StatusLevel) -> String {
    let mut out = String::new();
    if status == StatusLevel::None {
        return out;
    }
    let _ = writeln!(
        out,
        "{}+{} records in\n{}+{} records out",
        records[0], records[1], records[2], records[3]
    );
    if status == StatusLevel::Noxfer {
        return out;
    }
    let si = human_bytes(w, true);
    let iec = human_bytes(w, false);
    let time = format!("{} s", g(secs));
    let rate = human_rate(w, secs);
    let lacks_prefix = |s: &str| {
        !s.trim_end_matches('B')
            .ends_with(|c: char| c.is_alphabetic())
    };
    if lacks_prefix(&si) {
        let unit = if w == 1 { "byte" } else { "bytes" };
        let _ = writeln!(out, "{w} {unit} copied, {time}, {rate}");
    } else if lacks_prefix(&iec) {
        let _ = writeln!(out, "{w} bytes ({si}) copied, {time}, {rate}");
    } else {
        let _ = writeln!(out, "{w} bytes ({si}, {iec}) copied, {time}, {rate}");
    }
    out
}

/// What the copy printed besides its last lines (nothing, for a record from before that
/// was kept).
fn printed(job: &JobRecord) -> Printed {
    match &job.workload {
        Settings::Dd(s) => s.spec.printed.get(),
        _ => Printed::default(),
    }
}

/// What the copy printed while it ran, as it printed it: its warnings and the statistics
/// SIGUSR1 asked for, none under status=none.
pub fn notes(job: &JobRecord, status: StatusLevel) -> String {
    printed(job).notes.iter().map(|n| note(n, status)).collect()
}

/// One thing the copy printed while it ran, as dd prints it (nothing under status=none).
pub fn note(n: &DdNote, status: StatusLevel) -> String {
    match n {
        DdNote::Stats(t) => lines(
            [
                t.records_in_full,
                t.records_in_partial,
                t.records_out_full,
                t.records_out_partial,
            ],
            t.bytes_written,
            t.elapsed_s,
            status,
        ),
        DdNote::Warning(w) if status != StatusLevel::None => format!("dd: {w}\n"),
        DdNote::Warning(_) => String::new(),
    }
}

/// How findings' advice is written in dd's operands.
fn spell(k: Knob) -> String {
    match k {
        Knob::Direct => "iflag=direct / oflag=direct",
        Knob::DataSync => "conv=fdatasync",
        Knob::FsyncEvery => "oflag=dsync",
        Knob::TotalSize => "count=",
        Knob::NoEndFsync => "no conv=fdatasync/fsync",
        other => return other.plain().to_string(),
    }
    .to_string()
}

impl Layout for Dd {
    fn report(&self, record: &Record, group: &GroupRecord) -> String {
        let o = options(record);
        let mut out = String::new();
        for j in &group.jobs {
            // dd's error lines, one each (a failed write, then the flush after it).
            for e in j.error.iter().flat_map(|e| e.lines()) {
                let _ = writeln!(out, "dd: {e}");
            }
            if printed(j).final_stats {
                out.push_str(&stats(j, o.status));
            }
            if o.plumb_sections {
                let mut s = String::new();
                if let Some(obs) = &group.observations {
                    s.push_str(&crate::observations::section(j, obs));
                }
                s.push_str(&crate::findings::section(&j.findings));
                if !s.trim().is_empty() {
                    // The blank line parts plumb's section from dd's lines, when there are
                    // any (status=none has none).
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    let _ = write!(out, "plumb:\n{s}");
                }
            }
        }
        out
    }
    fn spelling(&self) -> Option<Spelling> {
        Some(spell)
    }
    /// What the run printed: before each copy's last lines, what it printed while it ran
    /// (the live run printed those the moment they happened, not in its report).
    fn replay(&self, record: &Record) -> String {
        let o = options(record);
        let mut out = String::new();
        for g in &record.groups {
            for j in &g.jobs {
                out.push_str(&notes(j, o.status));
            }
            out.push_str(&self.report(record, g));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_gnu_dd_prints_them() {
        let cases = [
            (0, "0 B", "0 B"),
            (1, "1 B", "1 B"),
            (1000, "1.0 kB", "1000 B"),
            (1024, "1.0 kB", "1.0 KiB"),
            (196_608, "197 kB", "192 KiB"),
            (1_048_576, "1.0 MB", "1.0 MiB"),
            (104_857_600, "105 MB", "100 MiB"),
            (1_073_741_824, "1.1 GB", "1.0 GiB"),
            (999_999, "1.0 MB", "977 KiB"),
        ];
        for (n, si, iec) in cases {
            assert_eq!(human_bytes(n, true), si, "{n}");
            assert_eq!(human_bytes(n, false), iec, "{n}");
        }
    }

    #[test]
    fn rates_and_times_as_gnu_dd_prints_them() {
        assert_eq!(human_rate(196_608, 0.00127115), "155 MB/s");
        assert_eq!(human_rate(512, 2.3438e-05), "21.8 MB/s");
        assert_eq!(human_rate(1, 1.6146e-05), "61.9 kB/s");
        assert_eq!(human_rate(0, 1.4622e-05), "0.0 kB/s");
        assert_eq!(g(2.3438e-05), "2.3438e-05");
        assert_eq!(g(0.00127115), "0.00127115");
    }
}
