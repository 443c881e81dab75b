//! Sizes as sysbench writes them: a number with an optional binary suffix (K, M, G, T; b/B
//! and iB accepted), always powers of 1024.

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

/// Render bytes the way sysbench does in headers: the largest exact binary unit.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, m) in UNITS {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{}", bytes / m, name);
        }
    }
    format!("{bytes}B")
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
}
