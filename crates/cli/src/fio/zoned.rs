//! fio's zoned distributions: `random_distribution=zoned:A/S:A/S:...` (A% of the draws on
//! the next S% of the region) and `zoned_abs:A/SIZE:...` (on the next SIZE bytes), read as
//! fio 3.33 reads them (options.c: parse_zoned_distribution, split_parse_ddir,
//! zone_split_ddir), refusals in its words.
//!
//! fio's own arithmetic, kept because it decides which jobs run and how:
//! - The text is cut at a `;` or `#` and trailing blanks go; it must then start with
//!   `zoned:` (`zoned_abs:`), else `mismatch in zoned input <...>`.
//! - Entries are `:`-separated; an empty one ends the list (`60/10::40/90` is one zone).
//! - A share of the draws is a number with size units, kept modulo 256 (fio stores it in a
//!   byte: `356` is 100, `1k` is 0). A zone's size in percent is C's atoi, above 100 (or
//!   negative) 100; 0 or none marks it missing. A `zoned_abs` size is a number with units
//!   (none: 0 bytes).
//! - The shares of the draws must add up to exactly 100, the sizes to at most 100
//!   (`zone_split percentages add to more than 100%` first, then `access percentage don't
//!   add up to 100 ... (got=N)`). Missing sizes share what is left equally, rounded down;
//!   a lone zone with no size gets 0, as in fio.
//! - One list serves every direction: fio would read `,`-separated lists per direction, but
//!   its option parser refuses any comma in this option's value first.
//!
//! Refused here although fio runs them: a zone drawn some of the time that lies past the
//! region's end (fio ends the file at the first request drawn there), and lists of 256
//! zones or more (fio keeps the first 256 and says so).

use plumb_core::random::{Skew, ZoneBytes, ZoneShare};

use super::distribution::{parse_failed, refused};
use super::translate::TranslateError;
use super::values::{atoi, fio_decimal, KbBase};

const NAME: &str = "random_distribution";

/// fio's ZONESPLIT_MAX.
const MAX_ZONES: usize = 256;

/// fio's marker of a size left out (`(uint8_t) -1U`).
const MISSING: u8 = u8::MAX;

/// The zoned skew `v` asks for (`absolute`: `zoned_abs`).
pub fn skew(v: &str, absolute: bool, kb: KbBase) -> Result<Skew, TranslateError> {
    let pre = if absolute { "zoned_abs:" } else { "zoned:" };
    let text = strip_blank_end(v.trim_start());
    let Some(list) = text.strip_prefix(pre) else {
        return Err(refused(v, &format!("mismatch in zoned input <{text}>")));
    };
    if list.contains(',') {
        // Unreachable through the option check, which refuses the comma as fio does.
        return Err(parse_failed(v));
    }
    // (share of the draws, size: percent or bytes)
    let mut zones: Vec<(u8, u64)> = Vec::new();
    for entry in list.split(':').take_while(|e| !e.is_empty()) {
        if zones.len() == MAX_ZONES {
            break;
        }
        let (access, size) = match entry.split_once('/') {
            Some((a, s)) => (a, Some(s)),
            None => (entry, None),
        };
        let size = if absolute {
            match size {
                Some(s) => decimal(v, s, kb)? as u64,
                None => 0,
            }
        } else {
            match size.map(atoi) {
                // Negative ints become huge unsigned ones in fio, so 100 too.
                Some(p) if !(0..=100).contains(&p) => 100,
                Some(p) if p > 0 => p as u64,
                _ => u64::from(MISSING),
            }
        };
        // The share lives in a byte.
        zones.push((decimal(v, access, kb)? as u8, size));
    }
    if zones.len() >= MAX_ZONES {
        return Err(TranslateError::Unsupported {
            name: NAME.into(),
            value: v.into(),
            why: format!(": {MAX_ZONES} zones or more (fio keeps the first {MAX_ZONES})"),
        });
    }
    if zones.is_empty() {
        return Ok(if absolute {
            Skew::ZonedAbs { zones: Vec::new() }
        } else {
            Skew::Zoned { zones: Vec::new() }
        });
    }
    let given = |it: &mut dyn Iterator<Item = u8>| -> (u32, u32) {
        it.fold((0, 0), |(sum, missing), p| {
            if p == MISSING {
                (sum, missing + 1)
            } else {
                (sum + u32::from(p), missing)
            }
        })
    };
    let (access, access_missing) = given(&mut zones.iter().map(|z| z.0));
    let (sizes, sizes_missing) = if absolute {
        (0, 0)
    } else {
        given(&mut zones.iter().map(|z| z.1 as u8))
    };
    if access > 100 || sizes > 100 {
        return Err(refused(v, "zone_split percentages add to more than 100%"));
    }
    if access < 100 {
        return Err(refused(
            v,
            &format!(
                "access percentage don't add up to 100 for zoned random distribution (got={access})"
            ),
        ));
    }
    let share_out = |sum: u32, missing: u32| {
        let sum = if missing == 1 && zones.len() == 1 {
            100
        } else {
            sum
        };
        (100 - sum) / missing.max(1)
    };
    let access_fill = share_out(access, access_missing) as u8;
    let size_fill = share_out(sizes, sizes_missing) as u64;
    let access_of = |a: u8| if a == MISSING { access_fill } else { a };
    let skew = if absolute {
        Skew::ZonedAbs {
            zones: zones
                .iter()
                .map(|&(a, bytes)| ZoneBytes {
                    access_pct: access_of(a),
                    bytes,
                })
                .collect(),
        }
    } else {
        let zones: Vec<ZoneShare> = zones
            .iter()
            .map(|&(a, s)| ZoneShare {
                access_pct: access_of(a),
                size_pct: if s == u64::from(MISSING) {
                    size_fill
                } else {
                    s
                } as u8,
            })
            .collect();
        let mut before = 0u32;
        for (i, z) in zones.iter().enumerate() {
            if before >= 100 && z.access_pct > 0 {
                return Err(past_the_end(v, i, z.access_pct, "the region"));
            }
            before += u32::from(z.size_pct);
        }
        Skew::Zoned { zones }
    };
    Ok(skew)
}

/// Refuses a `zoned_abs` zone drawn some of the time that does not lie inside a region of
/// `length` bytes walked in blocks of `block` (fio ends the file at the first request drawn
/// there, saying `zoned_abs sizes exceed file size` when the zone reaches past the end).
pub fn check_fit(skew: &Skew, value: &str, length: u64, block: u64) -> Result<(), TranslateError> {
    let Skew::ZonedAbs { zones } = skew else {
        return Ok(());
    };
    let block = block.max(1);
    let last = (length / block).max(1);
    let mut before = 0u128;
    for (i, z) in zones.iter().enumerate() {
        let start = before / block as u128;
        before += u128::from(z.bytes);
        let end = before / block as u128;
        if z.access_pct > 0 && (end > last as u128 || start >= last as u128) {
            return Err(past_the_end(
                value,
                i,
                z.access_pct,
                &format!("the {length}-byte region"),
            ));
        }
    }
    Ok(())
}

fn past_the_end(v: &str, i: usize, pct: u8, region: &str) -> TranslateError {
    TranslateError::Unsupported {
        name: NAME.into(),
        value: v.into(),
        why: format!(
            ": zone {} ({pct}% of the draws) is not inside {region}; fio ends the file at the first request drawn there",
            i + 1
        ),
    }
}

/// fio's strip_blank_end: the text before a `;` or `#`, without trailing blanks.
fn strip_blank_end(s: &str) -> &str {
    let s = s.split(';').next().unwrap_or(s);
    let s = s.split('#').next().unwrap_or(s);
    s.trim_end_matches(|c: char| c.is_whitespace() || c.is_control())
}

fn decimal(v: &str, s: &str, kb: KbBase) -> Result<i64, TranslateError> {
    fio_decimal(s, kb).ok_or_else(|| refused(v, "split conversion failed"))
}

#[cfg(test)]
mod tests;
