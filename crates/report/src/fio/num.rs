//! fio's number formatting (its `num2str`): a quantity cut to a number of digits, with a
//! decimal (k, M, G…) or binary (Ki, Mi, Gi…) prefix and a unit.

/// What a number counts; bits multiply it by 8 before it is scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum N2sUnit {
    /// A plain count (IOPS, latency values).
    None,
    Byte,
    BytePerSec,
    BitPerSec,
}

impl N2sUnit {
    fn suffix(self) -> &'static str {
        match self {
            N2sUnit::None => "",
            N2sUnit::Byte => "B",
            N2sUnit::BytePerSec => "B/s",
            N2sUnit::BitPerSec => "bit/s",
        }
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// `num` in at most `maxlen` digits (the point counts as one): divided by 1000 (or 1024
/// with `pow2`) until it fits, then as many decimals as still fit, taken from the last
/// division's remainder alone, as fio does (so `16.0MiB`, `1000MiB/s`, `2048k`).
pub fn num2str(num: u64, maxlen: u32, pow2: bool, unit: N2sUnit) -> String {
    num2str_from(num, 0, maxlen, pow2, unit)
}

/// [`num2str`] of a number already counted in thousands (fio's `base` argument of 1000 or
/// 1024): its prefix starts at `k`/`Ki` whichever base it was divided by, as fio's does
/// (so KiB printed with SI prefixes read as kB).
pub(crate) fn num2str_kilo(num: u64, maxlen: u32, pow2: bool, unit: N2sUnit) -> String {
    num2str_from(num, 1, maxlen, pow2, unit)
}

fn num2str_from(num: u64, first_prefix: usize, maxlen: u32, pow2: bool, unit: N2sUnit) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };
    let mut num = match unit {
        N2sUnit::BitPerSec => num.wrapping_mul(8),
        _ => num,
    };
    let maxlen = maxlen as usize;
    let mut post = first_prefix;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    // fio falls back to no prefix when even exa does not fit.
    if post >= prefixes.len() {
        post = 0;
    }
    let plain = |n: u64, post: usize| format!("{n}{}{}", prefixes[post], unit.suffix());
    let Some(modulo) = modulo else {
        return plain(num, post);
    };
    let room = maxlen as i64 - digits(num) as i64;
    if room <= 1 {
        return plain(num + u64::from(carry), post);
    }
    let decimals = (room - 1) as usize;
    let frac = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    // The remainder rounded up to a whole unit ("1.00"): fio adds it to the integer part.
    if frac.starts_with('1') {
        num += 1;
    }
    format!(
        "{num}.{}{}{}",
        frac.get(2..).unwrap_or(""),
        prefixes[post],
        unit.suffix()
    )
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The decimals fio gives percentile labels: the most digits after a point in any entry
/// of the percentile_list text (`99.5:99.999` → 3; `50:90` → 0).
pub fn percentile_precision(list_text: &str) -> u32 {
    list_text
        .split(':')
        .filter_map(|entry| entry.split_once('.'))
        .map(|(_, frac)| frac.chars().take_while(char::is_ascii_digit).count() as u32)
        .max()
        .unwrap_or(0)
}

/// C's `%f`: six decimals.
pub(crate) fn f6(x: f64) -> String {
    c_fixed(x, 6)
}

/// C's `%.Nf`, with glibc's words for what is not a number (`-nan` keeps the sign bit,
/// which the x86 NaN of a 0/0 has).
pub(crate) fn c_fixed(x: f64, decimals: usize) -> String {
    match (x.is_nan(), x.is_infinite(), x.is_sign_negative()) {
        (true, _, true) => "-nan".into(),
        (true, _, false) => "nan".into(),
        (_, true, true) => "-inf".into(),
        (_, true, false) => "inf".into(),
        _ => format!("{x:.decimals$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_of_the_reference() {
        // §4.2: IOPS (SI, no unit).
        assert_eq!(num2str(2_048_000, 4, false, N2sUnit::None), "2048k");
        assert_eq!(num2str(65_000, 4, false, N2sUnit::None), "65.0k");
        assert_eq!(num2str(1998, 4, false, N2sUnit::None), "1998");
        assert_eq!(num2str(599, 4, false, N2sUnit::None), "599");
        // Bandwidth, IEC first with SI in parentheses.
        assert_eq!(
            num2str(8_186_000, 4, true, N2sUnit::BytePerSec),
            "7994KiB/s"
        );
        assert_eq!(
            num2str(8_186_000, 4, false, N2sUnit::BytePerSec),
            "8186kB/s"
        );
        assert_eq!(
            num2str(13_250_000, 4, true, N2sUnit::BytePerSec),
            "12.6MiB/s"
        );
        assert_eq!(
            num2str(13_250_000, 4, false, N2sUnit::BytePerSec),
            "13.2MB/s"
        );
        // io sizes.
        assert_eq!(num2str(16 << 20, 4, true, N2sUnit::Byte), "16.0MiB");
        assert_eq!(num2str(4096 << 10, 4, true, N2sUnit::Byte), "4096KiB");
        assert_eq!(num2str(804 << 10, 4, true, N2sUnit::Byte), "804KiB");
        // Header block sizes.
        assert_eq!(num2str(8192, 4, true, N2sUnit::Byte), "8192B");
        assert_eq!(num2str(16384, 4, true, N2sUnit::Byte), "16.0KiB");
        assert_eq!(num2str(1 << 20, 4, true, N2sUnit::Byte), "1024KiB");
    }

    #[test]
    fn rounding_and_carry() {
        // Three digits left: rounded by the remainder, no decimals (1048575 B → 1024KiB).
        assert_eq!(num2str(1_048_575, 4, true, N2sUnit::Byte), "1024KiB");
        assert_eq!(
            num2str(1_048_576_000, 4, true, N2sUnit::BytePerSec),
            "1000MiB/s"
        );
        // No room for decimals: the remainder carries (2999.999k → 3000k).
        assert_eq!(
            num2str(2_999_999, 4, false, N2sUnit::BytePerSec),
            "3000kB/s"
        );
        // The decimals come from the last remainder alone, and a "1.0" carries into the
        // integer: 19.9996 MB/s → 20.0.
        assert_eq!(
            num2str(19_999_600, 4, false, N2sUnit::BytePerSec),
            "20.0MB/s"
        );
        assert_eq!(
            num2str(12_345_678, 4, false, N2sUnit::BytePerSec),
            "12.3MB/s"
        );
        // Six digits for latency extremes: 17529 µs as "17529k" ns.
        assert_eq!(num2str(17_529_123, 6, false, N2sUnit::None), "17529k");
        assert_eq!(num2str(136_416, 6, false, N2sUnit::None), "136416");
    }

    #[test]
    fn bits_multiply_by_eight() {
        assert_eq!(
            num2str(268_435_456_000, 4, true, N2sUnit::BitPerSec),
            "2000Gibit/s"
        );
        assert_eq!(
            num2str(268_435_456_000, 4, false, N2sUnit::BitPerSec),
            "2147Gbit/s"
        );
    }

    #[test]
    fn huge_and_zero() {
        assert_eq!(num2str(0, 4, true, N2sUnit::Byte), "0B");
        assert_eq!(num2str(u64::MAX, 4, true, N2sUnit::Byte), "16.0EiB");
    }

    #[test]
    fn precision_of_percentile_lists() {
        assert_eq!(percentile_precision("50:99.5:99.999"), 3);
        assert_eq!(percentile_precision("1:5:99.95"), 2);
        assert_eq!(percentile_precision("50:90"), 0);
        assert_eq!(percentile_precision("99.50"), 2);
    }
}
