//! The protocol's length-encoded integers and strings, read in place from a packet: rows
//! are walked without building values.

/// The first byte of a NULL column in a text row.
const NULL: u8 = 0xFB;

/// Append `n` as a length-encoded integer.
pub fn put_int(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=250 => out.push(n as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// A length-encoded integer at the start of `buf`, and the rest; none when `buf` is too
/// short or starts with a byte that begins no integer.
pub fn int(buf: &[u8]) -> Option<(u64, &[u8])> {
    let (&first, rest) = buf.split_first()?;
    let width = match first {
        0..=250 => return Some((u64::from(first), rest)),
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        _ => return None,
    };
    let bytes = rest.get(..width)?;
    let mut le = [0u8; 8];
    le[..width].copy_from_slice(bytes);
    Some((u64::from_le_bytes(le), &rest[width..]))
}

/// One column of a text row: its bytes (none for NULL), and the rest of the row.
pub fn text_column(buf: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    if buf.first() == Some(&NULL) {
        return Some((None, &buf[1..]));
    }
    let (len, rest) = int(buf)?;
    let len = usize::try_from(len).ok()?;
    let value = rest.get(..len)?;
    Some((Some(value), &rest[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_at_each_width() {
        for n in [
            0,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_int(&mut b, n);
            b.push(7);
            assert_eq!(int(&b), Some((n, &[7u8][..])), "{n}");
        }
        assert_eq!(int(&[0xFC, 1]), None);
        assert_eq!(int(&[0xFF]), None);
        assert_eq!(int(&[]), None);
    }

    #[test]
    fn text_columns_read_values_and_nulls() {
        let row = [3, b'a', b'b', b'c', NULL, 0];
        let (a, rest) = text_column(&row).unwrap();
        assert_eq!(a, Some(&b"abc"[..]));
        let (b, rest) = text_column(rest).unwrap();
        assert_eq!(b, None);
        let (c, rest) = text_column(rest).unwrap();
        assert_eq!(c, Some(&b""[..]));
        assert!(rest.is_empty());
        assert_eq!(text_column(&[5, b'x']), None);
    }
}
