//! GNU dd 9.1's operand grammar: `key=value` words, sizes with dd's suffixes and `x`
//! products, comma lists of flags and conversions. Errors are dd's lines.

use std::path::PathBuf;

use plumb_fileio::dd::{DdConv, DdFlags, DdSpec};
use plumb_report::dd::StatusLevel;

/// A parsed command line.
#[derive(Debug)]
pub struct Operands {
    pub spec: DdSpec,
    pub status: StatusLevel,
}

/// What went wrong, as dd prints it (the lines after `dd: `), and whether dd adds its
/// "Try 'dd --help'" line.
#[derive(Debug, PartialEq)]
pub struct OperandError {
    pub message: String,
    pub try_help: bool,
}

fn err(message: String, try_help: bool) -> OperandError {
    OperandError { message, try_help }
}

/// dd's quote(): typographic quotes in a UTF-8 locale, apostrophes otherwise.
pub fn quote(s: &str) -> String {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    if locale.contains("utf-8") || locale.contains("utf8") {
        format!("\u{2018}{s}\u{2019}")
    } else {
        format!("'{s}'")
    }
}

/// dd's input flags that plumb does not carry out (refused with plumb's line).
const OTHER_FLAGS: &[&str] = &[
    "append",
    "binary",
    "cio",
    "directory",
    "noatime",
    "nocache",
    "noctty",
    "nofollow",
    "nolinks",
    "nonblock",
    "text",
];
const OTHER_CONV: &[&str] = &[
    "ascii", "ebcdic", "ibm", "block", "unblock", "lcase", "ucase", "sparse", "swab", "noerror",
];

/// One factor of a size: digits and a dd suffix.
fn factor(s: &str) -> Option<u64> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = s[..digits].parse().ok()?;
    let suffix = &s[digits..];
    let mult: u64 = match suffix {
        "" | "c" => 1,
        "w" => 2,
        "b" => 512,
        _ => {
            let mut chars = suffix.chars();
            let letter = chars.next()?;
            let power = match letter {
                'k' | 'K' => 1,
                'M' => 2,
                'G' => 3,
                'T' => 4,
                'P' => 5,
                'E' => 6,
                'Z' => 7,
                'Y' => 8,
                'R' => 9,
                'Q' => 10,
                _ => return None,
            };
            let base: u64 = match chars.as_str() {
                "" | "iB" => 1024,
                "B" => 1000,
                _ => return None,
            };
            base.checked_pow(power)?
        }
    };
    n.checked_mul(mult)
}

/// A dd number: factors joined by `x`.
pub fn number(s: &str) -> Option<u64> {
    s.split('x')
        .try_fold(1u64, |acc, f| acc.checked_mul(factor(f)?))
}

fn flags(list: &str, input: bool) -> Result<DdFlags, OperandError> {
    let mut f = DdFlags::default();
    for word in list.split(',') {
        match word {
            "direct" => f.direct = true,
            "dsync" => f.dsync = true,
            "sync" => f.sync = true,
            "fullblock" if input => f.fullblock = true,
            "count_bytes" if input => f.count_bytes = true,
            "skip_bytes" if input => f.skip_bytes = true,
            "seek_bytes" if !input => f.seek_bytes = true,
            w if OTHER_FLAGS.contains(&w) => {
                return Err(err(
                    format!(
                        "plumb: dd {} flag '{w}' is not supported",
                        if input { "input" } else { "output" }
                    ),
                    false,
                ))
            }
            w => {
                let side = if input { "input" } else { "output" };
                return Err(err(format!("dd: invalid {side} flag: {}", quote(w)), true));
            }
        }
    }
    Ok(f)
}

fn conversions(list: &str) -> Result<DdConv, OperandError> {
    let mut c = DdConv::default();
    for word in list.split(',') {
        match word {
            "fdatasync" => c.fdatasync = true,
            "fsync" => c.fsync = true,
            "notrunc" => c.notrunc = true,
            "sync" => c.sync = true,
            "excl" => c.excl = true,
            "nocreat" => c.nocreat = true,
            w if OTHER_CONV.contains(&w) => {
                return Err(err(
                    format!("plumb: dd conversion '{w}' is not supported"),
                    false,
                ))
            }
            w => return Err(err(format!("dd: invalid conversion: {}", quote(w)), true)),
        }
    }
    if c.excl && c.nocreat {
        return Err(err("dd: cannot combine excl and nocreat".to_string(), true));
    }
    Ok(c)
}

pub fn parse(args: &[String]) -> Result<Operands, OperandError> {
    let mut spec = DdSpec {
        input: None,
        output: None,
        ibs: 512,
        obs: 512,
        one_buffer: false,
        count: None,
        skip: 0,
        seek: 0,
        iflag: DdFlags::default(),
        oflag: DdFlags::default(),
        conv: DdConv::default(),
    };
    let mut status = StatusLevel::Default;
    let mut bs = None;
    for a in args {
        let Some((key, value)) = a.split_once('=') else {
            return Err(err(format!("dd: unrecognized operand {}", quote(a)), true));
        };
        let size = |positive: bool| -> Result<u64, OperandError> {
            match number(value) {
                Some(n) if n > 0 || !positive => Ok(n),
                _ => Err(err(format!("dd: invalid number: {}", quote(value)), false)),
            }
        };
        match key {
            "if" => spec.input = Some(PathBuf::from(value)),
            "of" => spec.output = Some(PathBuf::from(value)),
            "bs" => bs = Some(size(true)?),
            "ibs" => spec.ibs = size(true)?,
            "obs" => spec.obs = size(true)?,
            "count" => spec.count = Some(size(false)?),
            "skip" | "iseek" => spec.skip = size(false)?,
            "seek" | "oseek" => spec.seek = size(false)?,
            "iflag" => spec.iflag = flags(value, true)?,
            "oflag" => spec.oflag = flags(value, false)?,
            "conv" => spec.conv = conversions(value)?,
            "status" => {
                status = match value {
                    "none" => StatusLevel::None,
                    "noxfer" => StatusLevel::Noxfer,
                    "progress" => {
                        return Err(err(
                            "plumb: dd status=progress is not supported (plumb prints no live progress line)".to_string(),
                            false,
                        ))
                    }
                    v => {
                        return Err(err(
                            format!("dd: invalid status level: {}", quote(v)),
                            true,
                        ))
                    }
                }
            }
            "cbs" => {
                return Err(err(
                    "plumb: dd operand 'cbs' is not supported (no block conversions)".to_string(),
                    false,
                ))
            }
            _ => return Err(err(format!("dd: unrecognized operand {}", quote(a)), true)),
        }
    }
    if let Some(bs) = bs {
        spec.ibs = bs;
        spec.obs = bs;
        spec.one_buffer = true;
    }
    if spec.ibs > isize::MAX as u64 / 2 || spec.obs > isize::MAX as u64 / 2 {
        return Err(err("dd: memory exhausted".to_string(), false));
    }
    Ok(Operands { spec, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_dd_suffixes_and_products() {
        for (s, n) in [
            ("512", 512),
            ("1c", 1),
            ("2w", 4),
            ("2b", 1024),
            ("1k", 1024),
            ("1K", 1024),
            ("1KB", 1000),
            ("1KiB", 1024),
            ("1M", 1 << 20),
            ("1MB", 1_000_000),
            ("1G", 1 << 30),
            ("2x3k", 6144),
            ("1x2x3", 6),
        ] {
            assert_eq!(number(s), Some(n), "{s}");
        }
        for s in ["", "k", "1m", "1Q2", "-1", "1B", "x1"] {
            assert_eq!(number(s), None, "{s}");
        }
    }

    #[test]
    fn bs_sets_both_sizes_and_one_buffer() {
        let o = parse(&["bs=4k".into(), "count=2".into()]).unwrap();
        assert_eq!(
            (o.spec.ibs, o.spec.obs, o.spec.one_buffer),
            (4096, 4096, true)
        );
        let o = parse(&["ibs=1k".into(), "obs=4k".into()]).unwrap();
        assert!(!o.spec.one_buffer);
    }
}
