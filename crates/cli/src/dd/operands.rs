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

// gnulib's strtol_error bits.
const OVERFLOW: u8 = 1;
const BAD_SUFFIX: u8 = 2;
const INVALID: u8 = 4;

/// The suffixes dd 9.1 hands xstrtoumax ('0': an optional `B` or `iB` after a letter).
const SUFFIXES: &[u8] = b"bcEGkKMPTwYZ0";

/// Multiply, saturating as gnulib's bkm_scale does.
fn scale(n: &mut u64, by: u64) -> u8 {
    match n.checked_mul(by) {
        Some(v) => {
            *n = v;
            0
        }
        None => {
            *n = u64::MAX;
            OVERFLOW
        }
    }
}

/// gnulib's xstrtoumax in base 10 with dd's suffixes: the error bits, the value, and where
/// the parse stopped.
fn xstrtoumax(s: &[u8]) -> (u8, u64, usize) {
    let space = |c: &u8| b" \t\n\x0b\x0c\r".contains(c);
    let lead = s.iter().take_while(|c| space(c)).count();
    if s.get(lead) == Some(&b'-') {
        return (INVALID, 0, 0);
    }
    let sign = usize::from(s.get(lead) == Some(&b'+'));
    let from = lead + sign;
    let digits = s[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut err = 0;
    let (mut n, mut p) = if digits == 0 {
        // No number but a suffix: the number is 1 (`bs=k` is 1024).
        match s.first() {
            Some(c) if SUFFIXES.contains(c) => (1, 0),
            _ => return (INVALID, 0, 0),
        }
    } else {
        let mut n = 0u64;
        for d in &s[from..from + digits] {
            match n
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(v) => n = v,
                None => {
                    n = u64::MAX;
                    err = OVERFLOW;
                }
            }
        }
        (n, from + digits)
    };
    let Some(&c) = s.get(p) else {
        return (err, n, p);
    };
    if !SUFFIXES.contains(&c) || c == b'0' {
        return (err | BAD_SUFFIX, n, p);
    }
    let (mut base, mut len) = (1024u64, 1);
    if b"EGkKMPTYZ".contains(&c) {
        match s.get(p + 1) {
            Some(b'i') if s.get(p + 2) == Some(&b'B') => len += 2,
            Some(b'B' | b'D') => {
                base = 1000;
                len += 1;
            }
            _ => {}
        }
    }
    let power = match c {
        b'b' => return finish(err | scale(&mut n, 512), n, s, p + len),
        b'c' => 0,
        b'w' => return finish(err | scale(&mut n, 2), n, s, p + len),
        b'k' | b'K' => 1,
        b'M' => 2,
        b'G' => 3,
        b'T' => 4,
        b'P' => 5,
        b'E' => 6,
        b'Z' => 7,
        _ => 8, // Y
    };
    for _ in 0..power {
        err |= scale(&mut n, base);
    }
    p += len;
    finish(err, n, s, p)
}

fn finish(err: u8, n: u64, s: &[u8], p: usize) -> (u8, u64, usize) {
    (err | if p < s.len() { BAD_SUFFIX } else { 0 }, n, p)
}

/// Why a number is refused: dd adds the EOVERFLOW text for a value too large.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumberError {
    Invalid,
    Overflow,
}

/// A number as dd 9.1's parse_integer reads it.
#[derive(Debug, PartialEq)]
pub struct Number {
    /// Also when refused: dd compares it with the operand's bounds all the same.
    pub value: u64,
    pub error: Option<NumberError>,
    /// A leading `0x` made it zero: dd warns.
    pub zero_multiplier: bool,
}

/// dd 9.1's parse_integer: one factor, or two joined by `x` (`2x3k`; not three), a `B`
/// after a number without a letter (`512B` is 512), at most i64::MAX.
pub fn number(value: &str) -> Number {
    let s = value.as_bytes();
    let (mut e, n, mut p) = xstrtoumax(s);
    if e & !OVERFLOW == BAD_SUFFIX && p > 0 && s[p - 1] != b'B' && s.get(p) == Some(&b'B') {
        p += 1;
        if p == s.len() {
            e &= !BAD_SUFFIX;
        }
    }
    let mut warn = false;
    let result;
    if e & !OVERFLOW == BAD_SUFFIX
        && s.get(p) == Some(&b'x')
        && !(p > 0 && s[p - 1] == b'B' && s[p + 1..].contains(&b'B'))
    {
        let (f, o, _) = xstrtoumax(&s[p + 1..]);
        if f & !OVERFLOW != 0 {
            e = f;
            result = 0;
        } else {
            match n.checked_mul(o).filter(|r| *r <= i64::MAX as u64) {
                Some(r) if r == 0 || (e | f) & OVERFLOW == 0 => {
                    warn = r == 0 && value.starts_with("0x");
                    e = 0;
                    result = r;
                }
                _ => {
                    e = OVERFLOW;
                    result = i64::MAX as u64;
                }
            }
        }
    } else if n <= i64::MAX as u64 {
        result = n;
    } else {
        e = OVERFLOW;
        result = i64::MAX as u64;
    }
    Number {
        value: result,
        error: match e {
            0 => None,
            OVERFLOW => Some(NumberError::Overflow),
            _ => Some(NumberError::Invalid),
        },
        zero_multiplier: warn,
    }
}

/// dd ORs every iflag=/oflag= operand into one set.
fn flags(f: &mut DdFlags, list: &str, input: bool) -> Result<(), OperandError> {
    for word in list.split(',') {
        match word {
            "direct" => f.direct = true,
            "dsync" => f.dsync = true,
            "sync" => f.sync = true,
            "fullblock" if input => f.fullblock = true,
            "count_bytes" if input => f.count_bytes = true,
            "skip_bytes" if input => f.skip_bytes = true,
            "seek_bytes" if !input => f.seek_bytes = true,
            // dd takes them on the other side too, where they do nothing.
            "seek_bytes" | "count_bytes" | "skip_bytes" => {}
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
    Ok(())
}

/// Every conv= operand adds to the set, as dd's.
fn conversions(c: &mut DdConv, list: &str) -> Result<(), OperandError> {
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
    Ok(())
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
        printed: Default::default(),
    };
    let mut status = StatusLevel::Default;
    let mut bs = None;
    let (mut count_b, mut skip_b, mut seek_b) = (false, false, false);
    for a in args {
        let Some((key, value)) = a.split_once('=') else {
            return Err(err(format!("dd: unrecognized operand {}", quote(a)), true));
        };
        // dd's bounds: block sizes from 1 to one short of i64::MAX (a buffer, a read's
        // size and an offset must all hold them), counts and offsets from 0.
        let size = |block: bool| -> Result<u64, OperandError> {
            let n = number(value);
            if n.zero_multiplier {
                eprintln!(
                    "dd: warning: {} is a zero multiplier; use {} if that is intended",
                    quote("0x"),
                    quote("00x")
                );
            }
            let error = if block && n.value < 1 {
                Some(NumberError::Invalid)
            } else if block && n.value > i64::MAX as u64 - 1 {
                Some(NumberError::Overflow)
            } else {
                n.error
            };
            match error {
                None => Ok(n.value),
                Some(NumberError::Invalid) => {
                    Err(err(format!("dd: invalid number: {}", quote(value)), false))
                }
                Some(NumberError::Overflow) => Err(err(
                    format!(
                        "dd: invalid number: {}: Value too large for defined data type",
                        quote(value)
                    ),
                    false,
                )),
            }
        };
        // A B in skip=, seek= or count= makes it bytes (`skip=1KiB`), as iflag/oflag's
        // skip_bytes, seek_bytes, count_bytes.
        let in_bytes = value.contains('B');
        match key {
            "if" => spec.input = Some(PathBuf::from(value)),
            "of" => spec.output = Some(PathBuf::from(value)),
            "bs" => bs = Some(size(true)?),
            "ibs" => spec.ibs = size(true)?,
            "obs" => spec.obs = size(true)?,
            "count" => {
                spec.count = Some(size(false)?);
                count_b = in_bytes;
            }
            "skip" | "iseek" => {
                spec.skip = size(false)?;
                skip_b = in_bytes;
            }
            "seek" | "oseek" => {
                spec.seek = size(false)?;
                seek_b = in_bytes;
            }
            "iflag" => flags(&mut spec.iflag, value, true)?,
            "oflag" => flags(&mut spec.oflag, value, false)?,
            "conv" => conversions(&mut spec.conv, value)?,
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
    spec.iflag.count_bytes |= count_b;
    spec.iflag.skip_bytes |= skip_b;
    spec.oflag.seek_bytes |= seek_b;
    if spec.conv.excl && spec.conv.nocreat {
        return Err(err(
            "dd: cannot combine excl and nocreat".to_string(),
            false,
        ));
    }
    Ok(Operands { spec, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values GNU dd 9.1 was seen to take or refuse (`dd bs=VALUE count=0`).
    #[test]
    fn sizes_read_as_dd_9_1_reads_them() {
        for (s, n) in [
            ("512", 512),
            ("1c", 1),
            ("2w", 4),
            ("2b", 1024),
            ("1bB", 512),
            ("1k", 1024),
            ("1K", 1024),
            ("k", 1024),
            ("kB", 1000),
            ("1KB", 1000),
            ("1KD", 1000),
            ("1KiB", 1024),
            ("1M", 1 << 20),
            ("1MB", 1_000_000),
            ("1G", 1 << 30),
            ("1E", 1 << 60),
            ("2x3k", 6144),
            ("1B", 1),
            ("512B", 512),
            (" 5", 5),
            ("+5", 5),
            ("0x5", 0),
        ] {
            let got = number(s);
            assert_eq!((got.value, got.error), (n, None), "{s}");
        }
        assert!(number("0x5").zero_multiplier);
        for s in [
            "", "1m", "1Q", "1R", "1Q2", "-1", "x1", "1x2x3", "5 ", "1BB", "1xB", "2x1B", "1Ki",
        ] {
            assert_eq!(number(s).error, Some(NumberError::Invalid), "{s}");
        }
        for s in [
            "8E",
            "16E",
            "1Y",
            "1Z",
            "9223372036854775808",
            "99999999999999999999",
        ] {
            assert_eq!(number(s).error, Some(NumberError::Overflow), "{s}");
        }
        assert_eq!(number("9223372036854775807").error, None);
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

    #[test]
    fn flags_add_up_and_a_b_means_bytes() {
        let args: Vec<String> = [
            "iflag=direct",
            "iflag=fullblock",
            "conv=fsync",
            "conv=notrunc",
        ]
        .map(String::from)
        .to_vec();
        let o = parse(&args).unwrap();
        assert!(o.spec.iflag.direct && o.spec.iflag.fullblock);
        assert!(o.spec.conv.fsync && o.spec.conv.notrunc);
        let args: Vec<String> = ["skip=1KiB", "seek=2B", "count=10B"]
            .map(String::from)
            .to_vec();
        let o = parse(&args).unwrap();
        assert!(o.spec.iflag.skip_bytes && o.spec.oflag.seek_bytes && o.spec.iflag.count_bytes);
        assert_eq!(
            (o.spec.skip, o.spec.seek, o.spec.count),
            (1024, 2, Some(10))
        );
    }
}
