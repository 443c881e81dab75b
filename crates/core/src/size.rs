//! Sizes as sysbench writes them: a number with an optional binary suffix (K, M, G, T; b/B
//! and iB accepted), always powers of 1024; and every layout plumb prints a byte count in,
//! one named function each, so a report's wording never depends on which crate formats it.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("'{0}' is not a size (use a number with an optional K, M, G or T suffix, e.g. 16K or 4G)")]
pub struct SizeError(pub String);

pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let err = || SizeError(s.to_string());
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(err());
    }
    let n: u64 = t[..digits_end].parse().map_err(|_| err())?;
    let suffix = t[digits_end..].to_ascii_lowercase();
    let mult: u64 = match suffix.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(err()),
    };
    n.checked_mul(mult).ok_or_else(err)
}

pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
pub const TIB: u64 = 1 << 40;

/// Binary units, each 1024 times the one before.
const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `bytes` in the largest unit (from `UNITS[lowest]` to `UNITS[highest]`) it reaches one of,
/// and that unit's index.
fn scale(bytes: f64, lowest: usize, highest: usize) -> (f64, usize) {
    let mut v = bytes / 1024f64.powi(lowest as i32);
    let mut i = lowest;
    while v >= 1024.0 && i < highest {
        v /= 1024.0;
        i += 1;
    }
    (v, i)
}

/// The largest binary unit that divides `bytes` exactly, as sysbench's headers print sizes:
/// "16MiB", "100GiB", "1536B".
pub fn format_size(bytes: u64) -> String {
    for i in (1..=4).rev() {
        let m = 1u64 << (10 * i);
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{}", bytes / m, UNITS[i]);
        }
    }
    format!("{bytes}B")
}

/// `bytes` in `unit` (a power of 1024 from KIB to TIB) when `unit` divides it, as sysbench
/// memory's header prints sizes ("102400MiB" where format_size says "100GiB"); otherwise the
/// exact size as [`format_size`] gives it, rather than rounded down (a 512-byte block is not
/// "0KiB").
pub fn format_size_in(bytes: u64, unit: u64) -> String {
    let i = (unit.trailing_zeros() / 10) as usize;
    if unit.is_power_of_two() && (1..=4).contains(&i) && bytes.is_multiple_of(unit) {
        format!("{}{}", bytes / unit, UNITS[i])
    } else {
        format_size(bytes)
    }
}

/// Compact, for plumb's own messages: no space, whole numbers without decimals, the rest
/// with two: "512B", "16MiB", "1.50GiB".
pub fn format_compact(bytes: u64) -> String {
    let (v, i) = scale(bytes as f64, 0, 4);
    if i == 0 {
        format!("{bytes}B")
    } else if v.fract() == 0.0 {
        format!("{v:.0}{}", UNITS[i])
    } else {
        format!("{v:.2}{}", UNITS[i])
    }
}

/// As sysbench's fileio header prints sizes it computed: five significant digits at most,
/// trailing zeros dropped, no space: "16KiB", "976.56KiB", "1.5GiB".
pub fn format_sysbench(bytes: u64) -> String {
    let (v, i) = scale(bytes as f64, 0, 6);
    let int_digits = if v >= 1.0 {
        (v.log10().floor() as i32 + 1).max(1)
    } else {
        1
    };
    let decimals = (5 - int_digits).max(0) as usize;
    let mut s = format!("{v:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{s}{}", UNITS[i])
}

/// Spaced with two decimals, for the observation section: "512 B", "931.51 GiB".
pub fn format_spaced(bytes: u64) -> String {
    let (v, i) = scale(bytes as f64, 0, 5);
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// Coarse, for findings' evidence: KiB to GiB, one decimal below GiB and two from it:
/// "0.5 KiB", "1.5 MiB", "1.50 GiB".
pub fn format_coarse(bytes: u64) -> String {
    let (v, i) = scale(bytes as f64, 1, 3);
    let decimals = if i == 3 { 2 } else { 1 };
    format!("{v:.decimals$} {}", UNITS[i])
}

/// Always in MiB (a byte count or a rate in bytes per second), with `decimals` decimals and
/// `sep` before the unit: `format_mib(b, 2, " ")` gives "1.50 MiB", `format_mib(b, 0, "")`
/// gives "16MiB".
pub fn format_mib(bytes: f64, decimals: usize, sep: &str) -> String {
    format!("{:.decimals$}{sep}MiB", bytes / MIB as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysbench_sizes() {
        assert_eq!(parse_size("16384"), Ok(16384));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("4Q").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("-1K").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn formats_exact_units() {
        assert_eq!(format_size(1024), "1KiB");
        assert_eq!(format_size(100 << 30), "100GiB");
        assert_eq!(format_size(1536), "1536B");
        assert_eq!(format_size(16 << 20), "16MiB");
    }

    #[test]
    fn formats_in_a_chosen_unit_when_exact() {
        assert_eq!(format_size_in(1024, KIB), "1KiB");
        assert_eq!(format_size_in(8 << 10, KIB), "8KiB");
        assert_eq!(format_size_in(512, KIB), "512B");
        assert_eq!(format_size_in(100 << 30, MIB), "102400MiB");
        assert_eq!(format_size_in(1536 << 10, MIB), "1536KiB");
    }

    #[test]
    fn formats_compact() {
        assert_eq!(format_compact(512), "512B");
        assert_eq!(format_compact(16 << 20), "16MiB");
        assert_eq!(format_compact(3 << 29), "1.50GiB");
    }

    #[test]
    fn formats_like_sysbench() {
        assert_eq!(format_sysbench(16 << 20), "16MiB");
        assert_eq!(format_sysbench(64 << 20), "64MiB");
        assert_eq!(format_sysbench(16384), "16KiB");
        assert_eq!(format_sysbench(3 << 29), "1.5GiB");
        assert_eq!(format_sysbench(1000000), "976.56KiB");
        assert_eq!(format_sysbench(512), "512B");
    }

    #[test]
    fn formats_spaced_coarse_and_in_mib() {
        assert_eq!(format_spaced(512), "512 B");
        assert_eq!(format_spaced(1_000_204_886_016), "931.51 GiB");
        assert_eq!(format_coarse(512), "0.5 KiB");
        assert_eq!(format_coarse(3 << 19), "1.5 MiB");
        assert_eq!(format_coarse(3 << 29), "1.50 GiB");
        assert_eq!(format_mib(3.0 * (1 << 19) as f64, 2, " "), "1.50 MiB");
        assert_eq!(format_mib((16 << 20) as f64, 0, ""), "16MiB");
    }
}
