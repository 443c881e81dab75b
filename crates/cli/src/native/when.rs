//! Times as the history commands show and take them: local time, `YYYY-MM-DD HH:MM:SS`.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `unix` in local time.
pub fn format(unix: u64) -> String {
    let t = unix as libc::time_t;
    // SAFETY: tm is plain data; localtime_r writes it and keeps no pointer.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return format!("@{unix}");
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// Which end of a range a time bounds: a date alone means its start for `--since` and its
/// end (the next midnight) for `--until`, so `--since=D --until=D` is that day.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum End {
    Since,
    Until,
}

/// A time the user typed: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS]` (or with `T`), local time;
/// or an age: `N` followed by `s`, `m`, `h`, `d` or `w` (that long before `now`).
pub fn parse(s: &str, end: End, now: u64) -> Result<u64, String> {
    let bad = || {
        format!(
            "'{s}' is not a time (allowed: YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]', or an age such as 30m, 12h, 7d, 2w)"
        )
    };
    let t = s.trim();
    if let Some(unit) = t.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let n: u64 = t[..t.len() - 1].parse().map_err(|_| bad())?;
        let secs = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return Err(bad()),
        };
        return Ok(now.saturating_sub(n.saturating_mul(secs)));
    }
    let (date, time) = match t.split_once([' ', 'T']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let num = |p: Option<&str>, lo: i32, hi: i32| -> Result<i32, String> {
        p.and_then(|p| p.parse::<i32>().ok())
            .filter(|v| (lo..=hi).contains(v))
            .ok_or_else(bad)
    };
    let mut d = date.split('-');
    let (year, month, day) = (
        num(d.next(), 1970, 9999)?,
        num(d.next(), 1, 12)?,
        num(d.next(), 1, 31)?,
    );
    if d.next().is_some() {
        return Err(bad());
    }
    let (mut hour, mut min, mut sec) = (0, 0, 0);
    if let Some(tm) = time {
        let mut p = tm.split(':');
        hour = num(p.next(), 0, 23)?;
        min = num(p.next(), 0, 59)?;
        sec = match p.next() {
            Some(x) => num(Some(x), 0, 60)?,
            None => 0,
        };
        if p.next().is_some() {
            return Err(bad());
        }
    }
    let next_day = time.is_none() && end == End::Until;
    // SAFETY: tm is plain data; mktime reads and normalises it (day 32 rolls over).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day + i32::from(next_day);
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    // SAFETY: a valid tm pointer.
    let t = unsafe { libc::mktime(&mut tm) };
    if t < 0 {
        return Err(bad());
    }
    Ok(t as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_count_back_from_now() {
        assert_eq!(parse("30m", End::Since, 10_000), Ok(10_000 - 1800));
        assert_eq!(parse("2d", End::Since, 1_000_000), Ok(1_000_000 - 172_800));
        assert_eq!(parse("1w", End::Since, 10), Ok(0));
        assert!(parse("5y", End::Since, 10).is_err());
        assert!(parse("xd", End::Since, 10).is_err());
    }

    #[test]
    fn dates_are_local_and_a_day_ends_at_the_next_midnight() {
        let since = parse("2024-03-05", End::Since, 0).unwrap();
        let until = parse("2024-03-05", End::Until, 0).unwrap();
        assert!(until - since >= 23 * 3600 && until - since <= 25 * 3600);
        assert_eq!(format(since), "2024-03-05 00:00:00");
        let t = parse("2024-03-05 13:07", End::Until, 0).unwrap();
        assert_eq!(format(t), "2024-03-05 13:07:00");
        assert_eq!(parse("2024-03-05T13:07:09", End::Since, 0).unwrap(), t + 9);
        for bad in ["2024-13-01", "2024-03", "yesterday", "2024-03-05 25:00", ""] {
            assert!(parse(bad, End::Since, 0).is_err(), "{bad}");
        }
    }
}
