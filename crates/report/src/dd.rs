//! dd's layout: GNU dd 9.1's last lines (`N+M records in`, `N+M records out`, the bytes
//! copied, the time and the rate), preceded by dd's error line when the copy failed, then,
//! under the name `plumb`, plumb's observations and findings. All of it goes to stderr
//! (dd's stdout may carry the data), so the front end hands the pipeline stderr as its
//! report stream.

use std::fmt::Write as _;

use plumb_advise::{Knob, Spelling};
use plumb_pipeline::record::{GroupRecord, JobRecord, Record};
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

/// gnulib's human_readable with dd's options (autoscale, round to nearest, a space before
/// the unit, a B suffix), for a whole number of bytes: `197 kB`, `1.0 KiB`, `512 B`.
pub fn human_bytes(n: u64, si: bool) -> String {
    let base: u64 = if si { 1000 } else { 1024 };
    let (mut amount, mut tenths, mut rounding) = (n, 0u64, 0u64);
    let mut exponent = 0usize;
    let mut decimal = None;
    if base <= amount {
        loop {
            let r10 = (amount % base) * 10 + tenths;
            let r2 = (r10 % base) * 2 + (rounding >> 1);
            amount /= base;
            tenths = r10 / base;
            rounding = if r2 < base {
                u64::from(r2 + rounding != 0)
            } else {
                2 + u64::from(base < r2 + rounding)
            };
            exponent += 1;
            if base > amount || exponent >= 10 {
                break;
            }
        }
        if amount < 10 {
            if 2 < rounding + (tenths & 1) {
                tenths += 1;
                rounding = 0;
                if tenths == 10 {
                    amount += 1;
                    tenths = 0;
                }
            }
            if amount < 10 {
                decimal = Some(tenths);
                tenths = 0;
                rounding = 0;
            }
        }
    }
    if 5 < tenths + u64::from(0 < rounding + (amount & 1)) {
        amount += 1;
        if amount == base && exponent < 10 {
            exponent += 1;
            amount = 1;
            decimal = Some(0);
        }
    }
    let mut s = amount.to_string();
    if let Some(t) = decimal {
        let _ = write!(s, ".{t}");
    }
    s.push(' ');
    s.push_str(&prefix(exponent, si));
    s.push('B');
    s
}

fn prefix(exponent: usize, si: bool) -> String {
    const LETTERS: &[u8] = b" KMGTPEZYRQ";
    if exponent == 0 {
        return String::new();
    }
    let letter = if si && exponent == 1 {
        'k'
    } else {
        LETTERS[exponent.min(10)] as char
    };
    if si {
        letter.to_string()
    } else {
        format!("{letter}i")
    }
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
    let mut out = String::new();
    if status == StatusLevel::None {
        return out;
    }
    let c = |k: &str| job.counter(k);
    let _ = writeln!(
        out,
        "{}+{} records in\n{}+{} records out",
        c("records_in_full"),
        c("records_in_partial"),
        c("records_out_full"),
        c("records_out_partial")
    );
    if status == StatusLevel::Noxfer {
        return out;
    }
    let w = c("bytes_written");
    let secs = job.total_time_s;
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
            if let Some(e) = &j.error {
                let _ = writeln!(out, "dd: {e}");
            }
            out.push_str(&stats(j, o.status));
            if o.plumb_sections {
                let mut s = String::new();
                if let Some(obs) = &group.observations {
                    s.push_str(&crate::observations::section(j, obs));
                }
                s.push_str(&crate::findings::section(&j.findings));
                if !s.trim().is_empty() {
                    let _ = write!(out, "\nplumb:\n{s}");
                }
            }
        }
        out
    }
    fn spelling(&self) -> Option<Spelling> {
        Some(spell)
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
