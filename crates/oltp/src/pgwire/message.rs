//! Decoding the backend message bodies plumb looks into, in place.

use super::error::{DbError, Error};

/// The type bytes of the backend messages the client tells apart.
pub mod tag {
    pub const AUTHENTICATION: u8 = b'R';
    pub const COMMAND_COMPLETE: u8 = b'C';
    pub const COPY_IN_RESPONSE: u8 = b'G';
    pub const DATA_ROW: u8 = b'D';
    pub const ERROR_RESPONSE: u8 = b'E';
    pub const PARAMETER_DESCRIPTION: u8 = b't';
    pub const READY_FOR_QUERY: u8 = b'Z';
    pub const ROW_DESCRIPTION: u8 = b'T';
}

/// An ErrorResponse's fields: S (localised severity), V (severity in English, from 9.6),
/// C (SQLSTATE), M (message), P (where in the statement); the others are not reported.
pub fn db_error(body: &[u8]) -> DbError {
    let mut severity = None;
    let mut english = None;
    let mut code = None;
    let mut message = None;
    let mut position = None;
    let mut rest = body;
    while let Some((&field, tail)) = rest.split_first() {
        if field == 0 {
            break;
        }
        let (value, tail) = cstr(tail);
        match field {
            b'S' => severity = Some(value),
            b'V' => english = Some(value),
            b'C' => code = Some(value),
            b'M' => message = Some(value),
            b'P' => position = std::str::from_utf8(value).ok().and_then(|p| p.parse().ok()),
            _ => {}
        }
        rest = tail;
    }
    let text = |v: Option<&[u8]>| String::from_utf8_lossy(v.unwrap_or_default()).into_owned();
    DbError {
        severity: text(severity.or(english)),
        code: text(code),
        message: text(message),
        position,
    }
}

/// The string up to the next NUL (or the end), and what follows the NUL.
fn cstr(b: &[u8]) -> (&[u8], &[u8]) {
    match b.iter().position(|&c| c == 0) {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &[]),
    }
}

/// The rows a CommandComplete's tag reports ("INSERT 0 1", "UPDATE 3", "SELECT 10"): its last
/// word when that is a number, else 0 ("BEGIN", "CREATE TABLE").
pub fn rows_affected(tag: &[u8]) -> u64 {
    let (tag, _) = cstr(tag);
    let last = tag.rsplit(|&c| c == b' ').next().unwrap_or_default();
    if last.is_empty() || !last.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    last.iter()
        .try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(0)
}

/// A DataRow whose layout [`Row::new`] checked.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a>(&'a [u8]);

impl<'a> Row<'a> {
    /// The row, when its column lengths fit its body.
    pub fn new(body: &'a [u8]) -> Result<Row<'a>, Error> {
        let row = Row(body);
        let count = row.count().ok_or(Error::Protocol("short DataRow"))?;
        let mut at = 2;
        for _ in 0..count {
            at = row.after(at).ok_or(Error::Protocol("short DataRow"))?;
        }
        Ok(row)
    }

    fn count(&self) -> Option<usize> {
        Some(i16::from_be_bytes(take::<2>(self.0)?).max(0) as usize)
    }

    /// Where the column whose length is at `at` ends.
    fn after(&self, at: usize) -> Option<usize> {
        let len = i32::from_be_bytes(take::<4>(self.0.get(at..)?)?);
        let end = at + 4 + len.max(0) as usize;
        (end <= self.0.len()).then_some(end)
    }

    /// Column `i` (from 0): None for NULL or a column the row does not have.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.count()? {
            return None;
        }
        let mut at = 2;
        for _ in 0..i {
            at = self.after(at)?;
        }
        let len = i32::from_be_bytes(take::<4>(&self.0[at..])?);
        let len = usize::try_from(len).ok()?;
        self.0.get(at + 4..at + 4 + len)
    }
}

/// A ParameterDescription's type OIDs.
pub fn parameter_types(body: &[u8]) -> Result<Vec<u32>, Error> {
    const SHORT: Error = Error::Protocol("short ParameterDescription");
    let count = u16::from_be_bytes(take::<2>(body).ok_or(SHORT)?) as usize;
    let oids = body.get(2..2 + 4 * count).ok_or(SHORT)?;
    Ok(oids
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The first `N` bytes of `b`, when it has them.
pub fn take<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.get(..N)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_response_gives_severity_code_and_message() {
        let body = b"SERROR\0VERROR\0C40P01\0Mdeadlock detected\0Ddetail\0Fdeadlock.c\0\0";
        let e = db_error(body);
        assert_eq!(e.to_string(), "ERROR: deadlock detected (SQLSTATE 40P01)");
        assert!(!e.ends_session());
        // A localised server: S is what libpq (and plumb) show.
        let e = db_error(b"SFATAL\0C57P01\0Mterminating connection\0\0");
        assert_eq!((e.severity.as_str(), e.code.as_str()), ("FATAL", "57P01"));
        assert!(e.ends_session());
        // Cut short: what is there is kept.
        let e = db_error(b"SERROR\0C2350");
        assert_eq!((e.code.as_str(), e.message.as_str()), ("2350", ""));
        assert_eq!(e.position, None);
        let e = db_error(b"SERROR\0C42P01\0Mrelation \"t\" does not exist\0P15\0\0");
        assert_eq!(e.position, Some(15));
    }

    #[test]
    fn command_tags_give_the_rows_they_affected() {
        assert_eq!(rows_affected(b"INSERT 0 1\0"), 1);
        assert_eq!(rows_affected(b"UPDATE 12\0"), 12);
        assert_eq!(rows_affected(b"DELETE 0\0"), 0);
        assert_eq!(rows_affected(b"BEGIN\0"), 0);
        assert_eq!(rows_affected(b"CREATE TABLE\0"), 0);
        assert_eq!(rows_affected(b"\0"), 0);
        assert_eq!(rows_affected(b"SELECT 99999999999999999999999\0"), 0);
    }

    #[test]
    fn a_data_row_gives_its_columns() {
        let r = Row::new(b"\0\x03\0\0\0\x03abc\xff\xff\xff\xff\0\0\0\x01x").unwrap();
        assert_eq!(r.get(0), Some(&b"abc"[..]));
        assert_eq!(r.get(1), None);
        assert_eq!(r.get(2), Some(&b"x"[..]));
        assert_eq!(r.get(3), None);
        assert_eq!(Row::new(b"\0\0").unwrap().get(0), None);
        assert!(Row::new(b"\0\x01\0\0\0\x09ab").is_err());
        assert!(Row::new(b"\0\x02\0\0\0\x01a").is_err());
    }

    #[test]
    fn a_parameter_description_gives_its_types() {
        assert_eq!(
            parameter_types(b"\0\x02\0\0\0\x17\0\0\0\x19").unwrap(),
            vec![23, 25]
        );
        assert!(parameter_types(b"\0\x02\0\0\0\x17").is_err());
    }
}
