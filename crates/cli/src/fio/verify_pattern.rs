//! fio's `verify_pattern` value, read as fio 3.33's parse_and_fill_pattern reads it
//! (lib/pattern.c): pieces one after another, each a hex number (`0x` and its digits, in
//! the order written, an odd count starting with a one-digit byte; `0xff0x14` is two), a
//! decimal number (its bytes little-endian, as few as it needs, one zero byte for 0, four
//! for a negative one) or a quoted string (its bytes, no escapes). fio's `%o` (each
//! block's offset pasted in) and `'file'` pieces are refused by name.

/// fio's MAX_PATTERN_SIZE.
const MAX: usize = 512;

/// Why a pattern is not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// fio fails to parse it too.
    Malformed,
    /// fio takes it; plumb does not yet.
    Unsupported(&'static str),
}

/// The pattern's bytes.
pub fn parse(input: &str) -> Result<Vec<u8>, Refused> {
    let mut out = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        rest = match rest.as_bytes()[0] {
            b'"' => {
                let body = &rest[1..];
                let end = body.find('"').ok_or(Refused::Malformed)?;
                if end == 0 {
                    return Err(Refused::Malformed);
                }
                out.extend_from_slice(&body.as_bytes()[..end]);
                &body[end + 1..]
            }
            b'%' => {
                return Err(Refused::Unsupported(
                    "the %o format (each block's offset pasted in)",
                ))
            }
            b'\'' => return Err(Refused::Unsupported("a pattern read from a file")),
            _ => number(rest, &mut out).ok_or(Refused::Malformed)?,
        };
        if out.len() > MAX {
            return Err(Refused::Malformed);
        }
    }
    if out.is_empty() {
        return Err(Refused::Malformed);
    }
    Ok(out)
}

/// One number at the start of `s` appended to `out`; what follows it.
fn number<'a>(s: &'a str, out: &mut Vec<u8>) -> Option<&'a str> {
    let b = s.as_bytes();
    let hex_digits = |from: usize| {
        b[from..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count()
    };
    if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') && hex_digits(2) > 0 {
        let mut n = hex_digits(2);
        // `0xff0x14`: the 0 before the next x starts the next number.
        if b.len() > 2 + n && matches!(b[2 + n], b'x' | b'X') && b[1 + n] == b'0' {
            n -= 1;
        }
        if n == 0 {
            return None;
        }
        let digits = &s[2..2 + n];
        let first = n % 2;
        if first == 1 {
            out.push(u8::from_str_radix(&digits[..1], 16).ok()?);
        }
        for k in (first..n).step_by(2) {
            out.push(u8::from_str_radix(&digits[k..k + 2], 16).ok()?);
        }
        return Some(&s[2 + n..]);
    }
    // Decimal, up to the next hex number if one follows.
    let end = s
        .to_ascii_lowercase()
        .find("0x")
        .filter(|&e| e > 0)
        .unwrap_or(s.len());
    let sign = usize::from(matches!(b[0], b'-' | b'+'));
    let digits = b[sign..end]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let text = &s[..sign + digits];
    let v: i64 = text.parse().ok()?;
    let v = i32::try_from(v).ok()?;
    if v == 0 {
        out.push(0);
    } else {
        let mut u = v as u32;
        while u != 0 {
            out.push(u as u8);
            u >>= 8;
        }
    }
    Some(&s[sign + digits..])
}

#[cfg(test)]
mod tests {
    use super::{parse, Refused};

    #[test]
    fn fio_s_pieces() {
        assert_eq!(parse("0xdeadbeef"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(parse("0xaaa"), Ok(vec![0x0a, 0xaa]));
        assert_eq!(parse("0XFF"), Ok(vec![0xff]));
        assert_eq!(parse("0xff0x14"), Ok(vec![0xff, 0x14]));
        assert_eq!(parse("255"), Ok(vec![0xff]));
        assert_eq!(parse("256"), Ok(vec![0x00, 0x01]));
        assert_eq!(parse("0"), Ok(vec![0]));
        assert_eq!(parse("-12"), Ok(vec![0xf4, 0xff, 0xff, 0xff]));
        assert_eq!(parse("\"abc\""), Ok(b"abc".to_vec()));
        assert_eq!(
            parse("0xff\"ab\"-1"),
            Ok(vec![0xff, b'a', b'b', 0xff, 0xff, 0xff, 0xff])
        );
        assert_eq!(parse("10x12"), Ok(vec![1, 0x12]));
        for bad in ["", "x", "abc", "0x", "\"abc", "\"\"", "3000000000", "12 "] {
            assert_eq!(parse(bad), Err(Refused::Malformed), "{bad:?}");
        }
        assert_eq!(
            parse(&format!("0x{}", "ab".repeat(513))),
            Err(Refused::Malformed)
        );
        assert!(matches!(parse("0xff%o"), Err(Refused::Unsupported(_))));
        assert!(matches!(parse("'file'"), Err(Refused::Unsupported(_))));
    }
}
