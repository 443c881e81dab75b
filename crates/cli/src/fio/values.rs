//! fio's value grammar (fio 3.33, parse.c): sizes, times, booleans, r,w,t lists, ranges,
//! bssplit, float lists and enum words. Every function here is pure; the option table decides
//! which one an option's text goes through.

use super::arith;

/// Why a value did not parse. The front end turns it into `fio: failed parsing NAME=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("empty value")]
    Empty,
    #[error("not a number: {0}")]
    NotANumber(String),
    #[error(
        "a value with a leading blank loses its unit in fio; write it without the blank: {0:?}"
    )]
    LeadingBlank(String),
    #[error("negative value: {0}")]
    Negative(String),
    #[error("value too large: {0}")]
    TooLarge(String),
    #[error("a percentage is not allowed here: {0}")]
    PercentNotAllowed(String),
    #[error("percentage out of range: {0}")]
    PercentRange(String),
    #[error("not an integer: {0}")]
    NotAnInteger(String),
    #[error("not a range (a-b or a:b): {0}")]
    NotARange(String),
    #[error("bad bssplit entry: {0}")]
    BadSplit(String),
    #[error("bssplit percentages add up to {0} (more than 100)")]
    SplitOver100(u64),
    #[error("bssplit has more than {max} entries")]
    SplitTooLong { max: usize },
    #[error("not a floating point value: {0}")]
    NotAFloat(String),
    #[error("value out of range: {0}")]
    OutOfRange(String),
    #[error("the list exceeding max length {0}")]
    ListTooLong(usize),
    #[error("not one of the valid values: {0}")]
    NotAValidValue(String),
    #[error("bad arithmetic expression: {0}")]
    Expression(String),
    /// An option's own check failed and fio says why before `failed parsing` (this text).
    #[error("{0}")]
    Callback(String),
}

/// A size option's value: bytes, or `N%` of the file or device (size, offset, io_size...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    Percent(u32),
}

/// fio's kb_base: 1024 (default; `KiB`-style suffixes then mean powers of 1000) or 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KbBase {
    #[default]
    K1024,
    K1000,
}

impl KbBase {
    fn unit(self) -> u64 {
        match self {
            KbBase::K1024 => 1024,
            KbBase::K1000 => 1000,
        }
    }
    fn other(self) -> u64 {
        match self {
            KbBase::K1024 => 1000,
            KbBase::K1000 => 1024,
        }
    }
}

/// The start of `s` that strtoll would read: an optional sign, then digits (or hex digits
/// after `0x`). Returns the value and the rest of the string.
fn leading_integer(s: &str) -> Result<(i64, &str), ValueError> {
    // fio switches to base 16 when "0x" appears anywhere in the text.
    let hex = s.contains("0x") || s.contains("0X");
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let body = if hex {
        body.strip_prefix("0x")
            .or_else(|| body.strip_prefix("0X"))
            .unwrap_or(body)
    } else {
        body
    };
    let radix = if hex { 16 } else { 10 };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    if end == 0 {
        return Err(ValueError::NotANumber(s.to_string()));
    }
    let v = i64::from_str_radix(&body[..end], radix)
        .map_err(|_| ValueError::TooLarge(s.to_string()))?;
    Ok((if neg { -v } else { v }, &body[end..]))
}

/// What fio reads as a size suffix: the text after the sign and the decimal digits, if it
/// starts with a letter or `%`. Hex numbers never get one (their `x` is read as an unknown
/// suffix), and `1.5M` has none because `.` stops the scan, so it is 1.
fn size_suffix(s: &str) -> &str {
    let rest = s
        .trim_start_matches(['+', '-'])
        .trim_start_matches(|c: char| c.is_ascii_digit());
    if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '%') {
        rest
    } else {
        ""
    }
}

enum Mult {
    Factor(u64),
    Percent,
}

/// The multiplier of a size suffix. Only the start of the suffix counts (`4kfoo` is 4k), and
/// unknown letters (`b`, `bytes`) multiply by 1.
fn size_mult(suffix: &str, kb: KbBase) -> Mult {
    let s = suffix.to_ascii_lowercase();
    let s = s
        .split([':', '-', ',', '/'])
        .next()
        .unwrap_or_default()
        .to_string();
    let (pow, base) = if let Some(p) = ["kib", "mib", "gib", "tib", "pib"]
        .iter()
        .position(|w| s.starts_with(w))
    {
        (p as u32 + 1, kb.other())
    } else if let Some(p) = ['k', 'm', 'g', 't', 'p']
        .iter()
        .position(|c| s.starts_with(*c))
    {
        (p as u32 + 1, kb.unit())
    } else if s.starts_with('%') {
        return Mult::Percent;
    } else {
        (0, 1)
    };
    Mult::Factor(base.pow(pow))
}

/// A size: `4k`, `1MiB`, `0x1000`, `(2*1M+512k)`, or `N%` when `percent` is allowed.
pub fn parse_size(s: &str, kb: KbBase, percent: bool) -> Result<Size, ValueError> {
    if s.is_empty() {
        return Err(ValueError::Empty);
    }
    if s.starts_with(char::is_whitespace) {
        // fio 3.33 reads ` 64k` as 64 bytes (the blank hides the suffix); refuse instead.
        return Err(ValueError::LeadingBlank(s.to_string()));
    }
    if s.starts_with('(') {
        let v = arith::evaluate(s, arith::Units::Size)?;
        return u64::try_from(v)
            .map(Size::Bytes)
            .map_err(|_| ValueError::Negative(s.to_string()));
    }
    let (v, _) = leading_integer(s)?;
    match size_mult(size_suffix(s), kb) {
        Mult::Percent => {
            if percent {
                u32::try_from(v)
                    .map(Size::Percent)
                    .map_err(|_| ValueError::PercentRange(s.to_string()))
            } else {
                Err(ValueError::PercentNotAllowed(s.to_string()))
            }
        }
        Mult::Factor(m) => {
            let v = u64::try_from(v).map_err(|_| ValueError::Negative(s.to_string()))?;
            v.checked_mul(m)
                .map(Size::Bytes)
                .ok_or_else(|| ValueError::TooLarge(s.to_string()))
        }
    }
}

/// What fio's str_to_decimal (with size units) stores for `s`, exactly, including what
/// plumb's own options refuse: a leading blank hides the unit (` 1k` is 1), a number may be
/// negative, `N%` is -1 − N, and overflow wraps. `None` where fio fails (in a split list it
/// says `split conversion failed`).
pub fn fio_decimal(s: &str, kb: KbBase) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    if s.starts_with('(') {
        return arith::evaluate(s, arith::Units::Size).ok();
    }
    let (v, _) = leading_integer(s.trim_start()).ok()?;
    Some(match size_mult(size_suffix(s), kb) {
        Mult::Percent => -1 - v,
        Mult::Factor(m) => v.wrapping_mul(m as i64),
    })
}

/// C's atoi: blanks, a sign and decimal digits, 0 when there are none.
pub fn atoi(s: &str) -> i32 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        // glibc's strtol saturates; atoi then keeps the low 32 bits.
        v = v.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    (if neg { v.saturating_neg() } else { v }) as i32
}

/// A size that may not be a percentage, in bytes.
pub fn parse_bytes(s: &str, kb: KbBase) -> Result<u64, ValueError> {
    match parse_size(s, kb, false)? {
        Size::Bytes(b) => Ok(b),
        Size::Percent(_) => Err(ValueError::PercentNotAllowed(s.to_string())),
    }
}

/// The default unit of a time option: seconds (runtime, ramp_time, startdelay, ss_dur) or
/// microseconds (thinktime, latency_target, max_latency...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Micros,
}

/// A time value in nanoseconds: `10`, `10s`, `500ms`, `2m` (minutes), `1h`, `1d`, `20us`,
/// or an expression `(1m+30s)` whose bare numbers are microseconds.
pub fn parse_time_ns(s: &str, unit: TimeUnit) -> Result<u64, ValueError> {
    if s.is_empty() {
        return Err(ValueError::Empty);
    }
    if s.starts_with(char::is_whitespace) {
        return Err(ValueError::LeadingBlank(s.to_string()));
    }
    let us = if s.starts_with('(') {
        let implied = match unit {
            TimeUnit::Seconds => 1_000_000,
            TimeUnit::Micros => 1,
        };
        let v = arith::evaluate_time(s, implied)?;
        let v = u64::try_from(v).map_err(|_| ValueError::Negative(s.to_string()))?;
        match unit {
            // fio keeps whole seconds of an expression for second-based options.
            TimeUnit::Seconds => v / 1_000_000 * 1_000_000,
            TimeUnit::Micros => v,
        }
    } else {
        let (v, _) = leading_integer(s)?;
        let v = u64::try_from(v).map_err(|_| ValueError::Negative(s.to_string()))?;
        v.checked_mul(time_mult(s, unit))
            .ok_or_else(|| ValueError::TooLarge(s.to_string()))?
    };
    us.checked_mul(1000)
        .ok_or_else(|| ValueError::TooLarge(s.to_string()))
}

/// `runtime` as fio 3.33 keeps it: a time as [`parse_time_ns`] reads it, except that a
/// negative one is no error. fio stores it unsigned, so `-1` becomes some 2^64 - 10^6
/// microseconds, a limit no job reaches: `Ok(None)`, a runtime that is set (time_based then
/// loops until a signal) but never ends the job.
pub fn parse_runtime_ns(s: &str) -> Result<Option<u64>, ValueError> {
    match parse_time_ns(s, TimeUnit::Seconds) {
        Err(ValueError::Negative(_)) => Ok(None),
        r => r.map(Some),
    }
}

/// A time as fio's check_str_time reads it, sign kept, in nanoseconds: `-5ms` is -5 ms.
/// fio takes a negative time for every time option (none has a minimum) and stores it
/// unsigned; what that means is each option's business.
pub fn parse_signed_time_ns(s: &str, unit: TimeUnit) -> Result<i128, ValueError> {
    match s.strip_prefix('-') {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
            parse_time_ns(rest, unit).map(|ns| -i128::from(ns))
        }
        _ => parse_time_ns(s, unit).map(i128::from),
    }
}

/// A time fio keeps in an unsigned int of microseconds (thinktime and its kin): a negative
/// one wraps, so `-1` is 2^32 - 1 µs (some 71 minutes). In nanoseconds.
pub fn parse_u32_time_ns(s: &str, unit: TimeUnit) -> Result<u64, ValueError> {
    let ns = parse_signed_time_ns(s, unit)?;
    if ns >= 0 {
        return u64::try_from(ns).map_err(|_| ValueError::TooLarge(s.to_string()));
    }
    let us = (ns / 1000) as i64 as u32;
    Ok(u64::from(us) * 1000)
}

/// Microseconds per unit of a time suffix. As in fio, `us`/`ms` match by prefix but `s`, `m`,
/// `h`, `d` must be the whole suffix, and any other word multiplies by 1 (so `10sec` is 10 µs).
fn time_mult(s: &str, unit: TimeUnit) -> u64 {
    let rest = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
    if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return match unit {
            TimeUnit::Seconds => 1_000_000,
            TimeUnit::Micros => 1,
        };
    }
    let c = rest.to_ascii_lowercase();
    if c.starts_with("us") {
        1
    } else if c.starts_with("ms") {
        1000
    } else {
        match c.as_str() {
            "s" => 1_000_000,
            "m" => 60_000_000,
            "h" => 3_600_000_000,
            "d" => 86_400_000_000,
            _ => 1,
        }
    }
}

/// A boolean option: an integer only (0 false, anything else true, but fio's range is 0..1);
/// `true`, `yes` and a bare name are errors.
pub fn parse_bool(s: &str) -> Result<bool, ValueError> {
    match parse_int(s)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(ValueError::OutOfRange(s.to_string())),
    }
}

/// A "set" option (time_based, group_reporting...): bare means 1, otherwise an integer.
pub fn parse_set(s: Option<&str>) -> Result<bool, ValueError> {
    match s {
        None => Ok(true),
        Some(v) => Ok(parse_int(v)? != 0),
    }
}

/// A plain integer as fio's check_int reads it (sscanf `%u`, or `%x` when `0x` appears):
/// trailing text is ignored.
pub fn parse_int(s: &str) -> Result<u64, ValueError> {
    if s.is_empty() {
        return Err(ValueError::Empty);
    }
    let t = s.trim_start();
    let (v, _) = leading_integer(t).map_err(|_| ValueError::NotAnInteger(s.to_string()))?;
    u64::try_from(v).map_err(|_| ValueError::Negative(s.to_string()))
}

/// The text before the first `,` of a single-valued option (fio drops the rest).
pub fn first_field(s: &str) -> &str {
    s.split(',').next().unwrap_or(s)
}

/// Splits an r,w,t option into up to three fields, applying fio's carry-forward rules: a field
/// given last (no trailing separator) also fills the later directions; after a trailing comma
/// the later ones keep their default (`bs=8k,` sets only reads); an empty field keeps that
/// direction's default. `numeric`
/// options also split at `:` and `-` (so `bs=4k-64k` is R 4k, W/T 64k, not a range).
pub fn split_rwt(s: &str, numeric: bool) -> [Option<&str>; 3] {
    let mut out = [None, None, None];
    let mut rest = s;
    let mut idx = 0;
    loop {
        let sep = if numeric {
            rest.find([',', ':', '-'])
        } else {
            rest.find(',')
        };
        let field = match sep {
            Some(p) => &rest[..p],
            None => rest,
        };
        if idx < 3 && !field.is_empty() {
            out[idx] = Some(field);
            if sep.is_none() {
                for slot in out.iter_mut().skip(idx + 1) {
                    *slot = Some(field);
                }
            }
        }
        match sep {
            Some(p) => {
                rest = &rest[p + 1..];
                idx += 1;
            }
            None => break,
        }
    }
    out
}

/// The fields of an r,w,t value one by one, as fio's handle_option hands them to the parser:
/// (direction, text, whether it is the last). Empty fields are kept (fio fails them, which
/// leaves their direction as it was); a trailing separator leaves an empty last field, so
/// the field before it is not carried forward.
pub fn rwt_fields(s: &str, numeric: bool) -> Vec<(usize, &str, bool)> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let sep = if numeric {
            rest.find([',', ':', '-'])
        } else {
            rest.find(',')
        };
        match sep {
            Some(p) => {
                out.push((out.len(), &rest[..p], false));
                rest = &rest[p + 1..];
            }
            None => {
                out.push((out.len(), rest, true));
                return out;
            }
        }
    }
}

/// A range list (bsrange): `4k-64k` or `4k:64k` per direction, `,` between directions,
/// reversed bounds swapped, a last range carried forward.
pub fn parse_rwt_ranges(s: &str, kb: KbBase) -> Result<[Option<(u64, u64)>; 3], ValueError> {
    let mut out = [None; 3];
    for (slot, field) in out.iter_mut().zip(split_rwt(s, false)) {
        if let Some(f) = field {
            let (a, b) = f
                .split_once('-')
                .or_else(|| f.split_once(':'))
                .ok_or_else(|| ValueError::NotARange(f.to_string()))?;
            let (a, b) = (parse_bytes(a, kb)?, parse_bytes(b, kb)?);
            *slot = Some((a.min(b), a.max(b)));
        }
    }
    Ok(out)
}

/// One bssplit entry: a block size and its share in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitEntry {
    pub bs: u64,
    pub percent: u32,
}

/// fio's limit on bssplit entries per direction (BSSPLIT_MAX).
pub const BSSPLIT_MAX: usize = 64;

/// bssplit: `4k/10:64k/50:32k/` per direction (`,` between directions, carried forward like
/// bs). Entries with no percentage share what is left of 100 equally; the total may not exceed
/// 100. Each direction comes back sorted by block size, as fio sorts it.
pub fn parse_bssplit(s: &str, kb: KbBase) -> Result<[Option<Vec<SplitEntry>>; 3], ValueError> {
    let mut out: [Option<Vec<SplitEntry>>; 3] = [None, None, None];
    for (slot, field) in out.iter_mut().zip(split_rwt(s, false)) {
        if let Some(f) = field {
            *slot = Some(parse_split_list(f, kb)?);
        }
    }
    Ok(out)
}

fn parse_split_list(s: &str, kb: KbBase) -> Result<Vec<SplitEntry>, ValueError> {
    let mut entries = Vec::new();
    let mut unset = 0u32;
    let mut total = 0u64;
    for part in s.split(':').filter(|p| !p.is_empty()) {
        if entries.len() == BSSPLIT_MAX {
            return Err(ValueError::SplitTooLong { max: BSSPLIT_MAX });
        }
        let (size, pct) = match part.split_once('/') {
            Some((b, p)) => (b, p),
            None => (part, ""),
        };
        let bs = parse_bytes(size, kb).map_err(|_| ValueError::BadSplit(part.to_string()))?;
        let percent = if pct.is_empty() {
            unset += 1;
            None
        } else {
            let p = parse_int(pct).map_err(|_| ValueError::BadSplit(part.to_string()))?;
            total += p;
            Some(u32::try_from(p).map_err(|_| ValueError::BadSplit(part.to_string()))?)
        };
        entries.push((bs, percent));
    }
    if entries.is_empty() {
        return Err(ValueError::BadSplit(s.to_string()));
    }
    if total > 100 {
        return Err(ValueError::SplitOver100(total));
    }
    let left = (100 - total) as u32;
    let share = left.checked_div(unset).unwrap_or(0);
    let mut list: Vec<SplitEntry> = entries
        .into_iter()
        .map(|(bs, p)| SplitEntry {
            bs,
            percent: p.unwrap_or(share),
        })
        .collect();
    list.sort_by_key(|e| e.bs);
    Ok(list)
}

/// A float list (percentile_list): `:`-separated, at most `max_len` values in [min, max].
/// Also returns the precision fio prints them with (the most decimals in any value).
pub fn parse_float_list(
    s: &str,
    max_len: usize,
    min: f64,
    max: f64,
) -> Result<(Vec<f64>, usize), ValueError> {
    let mut values = Vec::new();
    let mut precision = 0;
    for part in s.split(':') {
        if values.len() == max_len {
            return Err(ValueError::ListTooLong(max_len));
        }
        let v = parse_float(part)?;
        if v > max || v < min {
            return Err(ValueError::OutOfRange(part.to_string()));
        }
        if let Some((_, frac)) = part.split_once('.') {
            precision = precision.max(frac.chars().take_while(char::is_ascii_digit).count());
        }
        values.push(v);
    }
    Ok((values, precision))
}

/// A float as sscanf `%lf` reads it (the longest numeric start), or an expression.
fn parse_float(s: &str) -> Result<f64, ValueError> {
    if s.starts_with('(') {
        return arith::evaluate_float(s);
    }
    let t = s.trim_start();
    let mut end = 0;
    for i in (1..=t.len()).rev() {
        if t.is_char_boundary(i) && t[..i].parse::<f64>().is_ok() {
            end = i;
            break;
        }
    }
    if end == 0 {
        return Err(ValueError::NotAFloat(s.to_string()));
    }
    t[..end]
        .parse()
        .map_err(|_| ValueError::NotAFloat(s.to_string()))
}

/// An enum word with its suffix: `randread:8` is ("randread", Some("8")); fio compares the
/// text before the first `,`, or without one before the first `:`, exactly (case-sensitive)
/// with the valid words (parse.c's opt_len), so `zipf:1.2,pareto` names no word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumValue<'a> {
    pub word: &'a str,
    pub suffix: Option<&'a str>,
}

/// Matches `s` against the valid words of an enum option.
pub fn parse_enum<'a>(s: &'a str, valid: &[&str]) -> Result<EnumValue<'a>, ValueError> {
    let cut = s.find(',').or_else(|| s.find(':')).unwrap_or(s.len());
    let word = &s[..cut];
    if !valid.contains(&word) {
        return Err(ValueError::NotAValidValue(s.to_string()));
    }
    let suffix = s.get(cut + 1..).filter(|_| s[cut..].starts_with(':'));
    Ok(EnumValue { word, suffix })
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: KbBase = KbBase::K1024;

    fn b(s: &str) -> u64 {
        parse_bytes(s, K).unwrap()
    }

    #[test]
    fn size_suffixes_with_default_kb_base() {
        assert_eq!(b("4k"), 4096);
        assert_eq!(b("4K"), 4096);
        assert_eq!(b("4kb"), 4096);
        assert_eq!(b("4ki"), 4096);
        assert_eq!(b("4KiB"), 4000);
        assert_eq!(b("1m"), 1 << 20);
        assert_eq!(b("1mi"), 1 << 20);
        assert_eq!(b("1MiB"), 1_000_000);
        assert_eq!(b("1g"), 1 << 30);
        assert_eq!(b("2t"), 2 << 40);
        assert_eq!(b("1p"), 1 << 50);
        assert_eq!(b("1GiB"), 1_000_000_000);
        assert_eq!(b("512"), 512);
        assert_eq!(b("512b"), 512);
        assert_eq!(b("512bytes"), 512);
        // Only the start of the suffix is read.
        assert_eq!(b("4kfoo"), 4096);
    }

    #[test]
    fn size_suffixes_with_kb_base_1000() {
        let k = KbBase::K1000;
        assert_eq!(parse_bytes("4k", k).unwrap(), 4000);
        assert_eq!(parse_bytes("4KiB", k).unwrap(), 4096);
        assert_eq!(parse_bytes("1MiB", k).unwrap(), 1 << 20);
        assert_eq!(parse_bytes("1m", k).unwrap(), 1_000_000);
    }

    #[test]
    fn size_hex_fraction_and_errors() {
        assert_eq!(b("0x1000"), 4096);
        assert_eq!(b("0X10"), 16);
        // fio reads a fraction's integer part only.
        assert_eq!(b("1.5M"), 1);
        // No arithmetic without parentheses.
        assert_eq!(b("1M+512k"), 1 << 20);
        assert!(matches!(parse_bytes("", K), Err(ValueError::Empty)));
        assert!(matches!(
            parse_bytes("abc", K),
            Err(ValueError::NotANumber(_))
        ));
        assert!(matches!(
            parse_bytes(" 64k", K),
            Err(ValueError::LeadingBlank(_))
        ));
        assert!(matches!(
            parse_bytes("-4k", K),
            Err(ValueError::Negative(_))
        ));
        assert!(matches!(
            parse_bytes("99999999999p", K),
            Err(ValueError::TooLarge(_))
        ));
    }

    #[test]
    fn size_percent_only_where_allowed() {
        assert_eq!(parse_size("20%", K, true).unwrap(), Size::Percent(20));
        assert_eq!(parse_size("150%", K, true).unwrap(), Size::Percent(150));
        assert!(matches!(
            parse_size("20%", K, false),
            Err(ValueError::PercentNotAllowed(_))
        ));
        assert_eq!(parse_size("4k", K, true).unwrap(), Size::Bytes(4096));
    }

    #[test]
    fn size_expressions() {
        assert_eq!(b("(2*1M+512k)"), 2 * 1048576 + 524288);
        // Inside parentheses kib is 1000 whatever kb_base says.
        assert_eq!(parse_bytes("(1kib)", KbBase::K1000).unwrap(), 1000);
        assert_eq!(parse_bytes("(1k)", KbBase::K1000).unwrap(), 1024);
        assert_eq!(b("(10-2)"), 8);
        assert!(parse_bytes("(1-2)", K).is_err());
    }

    #[test]
    fn times() {
        let s = TimeUnit::Seconds;
        let u = TimeUnit::Micros;
        assert_eq!(parse_time_ns("10", s).unwrap(), 10_000_000_000);
        assert_eq!(parse_time_ns("10s", s).unwrap(), 10_000_000_000);
        assert_eq!(parse_time_ns("500ms", s).unwrap(), 500_000_000);
        assert_eq!(parse_time_ns("500msec", s).unwrap(), 500_000_000);
        assert_eq!(parse_time_ns("2m", s).unwrap(), 120_000_000_000);
        assert_eq!(parse_time_ns("1h", s).unwrap(), 3_600_000_000_000);
        assert_eq!(parse_time_ns("1d", s).unwrap(), 86_400_000_000_000);
        assert_eq!(parse_time_ns("20us", s).unwrap(), 20_000);
        assert_eq!(parse_time_ns("20usec", s).unwrap(), 20_000);
        assert_eq!(parse_time_ns("10S", s).unwrap(), 10_000_000_000);
        assert_eq!(parse_time_ns("100", u).unwrap(), 100_000);
        assert_eq!(parse_time_ns("2ms", u).unwrap(), 2_000_000);
        // fio quirk: an unknown word multiplies by one microsecond.
        assert_eq!(parse_time_ns("10sec", s).unwrap(), 10_000);
        assert!(parse_time_ns("-1", s).is_err());
        assert_eq!(parse_runtime_ns("-1"), Ok(None));
        assert_eq!(parse_runtime_ns("-5ms"), Ok(None));
        assert_eq!(parse_runtime_ns("-0"), Ok(Some(0)));
        assert_eq!(parse_runtime_ns("2"), Ok(Some(2_000_000_000)));
        assert!(parse_runtime_ns("x").is_err());
        assert_eq!(parse_signed_time_ns("-5ms", s), Ok(-5_000_000));
        assert_eq!(parse_signed_time_ns("-1", s), Ok(-1_000_000_000));
        assert_eq!(parse_signed_time_ns("-0", s), Ok(0));
        assert_eq!(parse_signed_time_ns("3", u), Ok(3_000));
        assert!(parse_signed_time_ns("-x", s).is_err());
        assert_eq!(parse_u32_time_ns("-1", u), Ok(4_294_967_295_000));
        // thinktime_iotime: -1 s is 2^32 - 10^6 µs once kept in 32 bits.
        assert_eq!(parse_u32_time_ns("-1", s), Ok(4_293_967_296_000));
        assert_eq!(parse_u32_time_ns("250", u), Ok(250_000));
        assert!(parse_time_ns("", s).is_err());
        assert!(parse_time_ns("x", s).is_err());
    }

    #[test]
    fn time_expressions_use_microseconds() {
        assert_eq!(
            parse_time_ns("(1m+30s)", TimeUnit::Seconds).unwrap(),
            90_000_000_000
        );
        // A bare number inside parentheses is in the option's unit.
        assert_eq!(
            parse_time_ns("(5*2)", TimeUnit::Seconds).unwrap(),
            10_000_000_000
        );
        // Second-based options keep whole seconds.
        assert_eq!(
            parse_time_ns("(1500ms)", TimeUnit::Seconds).unwrap(),
            1_000_000_000
        );
        assert_eq!(
            parse_time_ns("(1500ms)", TimeUnit::Micros).unwrap(),
            1_500_000_000
        );
        assert_eq!(parse_time_ns("(10)", TimeUnit::Micros).unwrap(), 10_000);
    }

    #[test]
    fn bools_and_sets() {
        assert!(parse_bool("1").unwrap());
        assert!(!parse_bool("0").unwrap());
        assert!(parse_bool("true").is_err());
        assert!(parse_bool("yes").is_err());
        assert!(parse_bool("2").is_err());
        assert!(parse_bool("").is_err());
        assert!(parse_set(None).unwrap());
        assert!(!parse_set(Some("0")).unwrap());
        assert!(parse_set(Some("1")).unwrap());
        assert!(parse_set(Some("true")).is_err());
    }

    #[test]
    fn ints() {
        assert_eq!(parse_int("32").unwrap(), 32);
        assert_eq!(parse_int("0x20").unwrap(), 32);
        assert_eq!(parse_int("32k").unwrap(), 32);
        assert!(parse_int("k").is_err());
        assert!(parse_int("-1").is_err());
    }

    #[test]
    fn rwt_carry_forward() {
        assert_eq!(split_rwt("8k", true), [Some("8k"), Some("8k"), Some("8k")]);
        assert_eq!(
            split_rwt("8k,32k", true),
            [Some("8k"), Some("32k"), Some("32k")]
        );
        assert_eq!(split_rwt("8k,32k,", true), [Some("8k"), Some("32k"), None]);
        assert_eq!(split_rwt(",8k", true), [None, Some("8k"), Some("8k")]);
        assert_eq!(
            split_rwt("1k,2k,3k", true),
            [Some("1k"), Some("2k"), Some("3k")]
        );
        assert_eq!(
            split_rwt("8k:16k", true),
            [Some("8k"), Some("16k"), Some("16k")]
        );
        assert_eq!(split_rwt("8k,", true), [Some("8k"), None, None]);
        assert_eq!(
            split_rwt("1k,2k,3k,4k", true),
            [Some("1k"), Some("2k"), Some("3k")]
        );
    }

    #[test]
    fn bs_dash_is_not_a_range() {
        let bs = crate::fio::options::find("bs").unwrap();
        assert_eq!(
            bs.rwt_values("4k-64k", K),
            [Some(4096), Some(65536), Some(65536)]
        );
        assert_eq!(bs.rwt_values(",8k", K), [None, Some(8192), Some(8192)]);
        // A field that fails leaves its direction (and carries nothing).
        assert_eq!(bs.rwt_values("4k,x", K), [Some(4096), None, None]);
        assert_eq!(
            rwt_fields("4k,8k,", true),
            [(0, "4k", false), (1, "8k", false), (2, "", true)]
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(
            parse_rwt_ranges("4k-64k", K).unwrap(),
            [Some((4096, 65536)); 3]
        );
        assert_eq!(
            parse_rwt_ranges("4k:64k", K).unwrap(),
            [Some((4096, 65536)); 3]
        );
        assert_eq!(
            parse_rwt_ranges("64k-4k", K).unwrap(),
            [Some((4096, 65536)); 3]
        );
        assert_eq!(
            parse_rwt_ranges("1k-4k,8k-16k", K).unwrap(),
            [Some((1024, 4096)), Some((8192, 16384)), Some((8192, 16384))]
        );
        assert!(parse_rwt_ranges("4k", K).is_err());
    }

    #[test]
    fn bssplit_rules() {
        let [r, w, t] = parse_bssplit("4k/10:64k/50:32k/", K).unwrap();
        let r = r.unwrap();
        assert_eq!(
            r,
            vec![
                SplitEntry {
                    bs: 4096,
                    percent: 10
                },
                SplitEntry {
                    bs: 32768,
                    percent: 40
                },
                SplitEntry {
                    bs: 65536,
                    percent: 50
                },
            ]
        );
        assert_eq!(w.unwrap(), r);
        assert_eq!(t.unwrap(), r);
        let [r, w, _] = parse_bssplit("4k/50:8k/,64k", K).unwrap();
        assert_eq!(
            r.unwrap()[1],
            SplitEntry {
                bs: 8192,
                percent: 50
            }
        );
        assert_eq!(
            w.unwrap(),
            vec![SplitEntry {
                bs: 65536,
                percent: 100
            }]
        );
        // Two empty shares split the rest equally.
        let [r, _, _] = parse_bssplit("4k/40:8k:16k", K).unwrap();
        let r = r.unwrap();
        assert_eq!((r[1].percent, r[2].percent), (30, 30));
        assert!(matches!(
            parse_bssplit("4k/60:8k/50", K),
            Err(ValueError::SplitOver100(110))
        ));
        let long = vec!["4k/1"; 65].join(":");
        assert!(matches!(
            parse_bssplit(&long, K),
            Err(ValueError::SplitTooLong { .. })
        ));
        assert!(parse_bssplit("x/10", K).is_err());
    }

    #[test]
    fn float_lists() {
        let (v, p) = parse_float_list("99.5:99.9", 20, 0.0, 100.0).unwrap();
        assert_eq!(v, vec![99.5, 99.9]);
        assert_eq!(p, 1);
        let (_, p) = parse_float_list("50:99.999", 20, 0.0, 100.0).unwrap();
        assert_eq!(p, 3);
        assert!(parse_float_list("101", 20, 0.0, 100.0).is_err());
        assert!(parse_float_list("x", 20, 0.0, 100.0).is_err());
        let many = vec!["1"; 21].join(":");
        assert!(matches!(
            parse_float_list(&many, 20, 0.0, 100.0),
            Err(ValueError::ListTooLong(20))
        ));
    }

    #[test]
    fn fio_s_own_reading_of_numbers() {
        assert_eq!(fio_decimal("60", K), Some(60));
        assert_eq!(fio_decimal(" 60", K), Some(60));
        assert_eq!(fio_decimal(" 1k", K), Some(1), "a blank hides the unit");
        assert_eq!(fio_decimal("1k", K), Some(1024));
        assert_eq!(fio_decimal("1e2", K), Some(1));
        assert_eq!(fio_decimal("0x64", K), Some(100));
        assert_eq!(fio_decimal("-5", K), Some(-5));
        assert_eq!(fio_decimal("50%", K), Some(-51));
        assert_eq!(fio_decimal("(50+50)", K), Some(100));
        assert_eq!(fio_decimal("", K), None);
        assert_eq!(fio_decimal("abc", K), None);
        assert_eq!(fio_decimal("(50+50", K), None);
        assert_eq!(atoi("50"), 50);
        assert_eq!(atoi(" -5x"), -5);
        assert_eq!(atoi("50/60"), 50);
        assert_eq!(atoi(""), 0);
        assert_eq!(atoi("x"), 0);
    }

    #[test]
    fn enums() {
        let rw = ["read", "write", "randread", "rw", "readwrite"];
        assert_eq!(
            parse_enum("randread:8", &rw).unwrap(),
            EnumValue {
                word: "randread",
                suffix: Some("8")
            }
        );
        assert_eq!(parse_enum("read", &rw).unwrap().suffix, None);
        assert_eq!(parse_enum("read,x", &rw).unwrap().word, "read");
        assert!(parse_enum("randr", &rw).is_err());
        assert!(parse_enum("RandRead", &rw).is_err());
        assert!(parse_enum("readfoo", &rw).is_err());
        let d = ["random", "zipf", "pareto"];
        assert_eq!(parse_enum("zipf:1.2", &d).unwrap().suffix, Some("1.2"));
        // A comma anywhere ends the word first (fio's opt_len looks for one before `:`).
        assert!(parse_enum("zipf:1.2,pareto:0.3", &d).is_err());
        assert!(parse_enum("randread:8,x", &rw).is_err());
        assert_eq!(
            parse_enum("zipf,x", &d).unwrap(),
            EnumValue {
                word: "zipf",
                suffix: None
            }
        );
    }
}
