//! fio's pacing options into plumb's job model: `thinktime` (with `thinktime_spin`,
//! `thinktime_blocks`, `thinktime_blocks_type`, `thinktime_iotime`) into the job's
//! [`Think`], and `startdelay`
//! (a time, or a range `a-b` drawn per job) into the job's start delay.

use std::time::Duration;

use plumb_core::random::Rng;
use plumb_fileio::think::{Think, ThinkCount};

use super::translate::{JobOptions, TranslateError};
use super::values::{parse_bool, parse_int, parse_signed_time_ns, parse_u32_time_ns, TimeUnit};

/// The random stream a start delay range is drawn from, apart from the workers' streams
/// (which are numbered from 0).
const DELAY_STREAM: u64 = u64::MAX;

fn parse_err(name: &str, value: &str) -> TranslateError {
    TranslateError::Parse {
        name: name.into(),
        value: value.into(),
    }
}

/// A think time option's nanoseconds (0 when unset); bare numbers are in `unit`. fio keeps
/// these in an unsigned int of microseconds, so a negative one wraps (`thinktime=-1` is a
/// stall of 2^32 - 1 µs).
fn time_ns(
    j: &(impl JobOptions + ?Sized),
    name: &str,
    unit: TimeUnit,
) -> Result<u64, TranslateError> {
    match j.get(name) {
        None => Ok(0),
        Some(v) => parse_u32_time_ns(v, unit).map_err(|_| parse_err(name, v)),
    }
}

/// The job's think time, `None` when `thinktime` is 0 or unset (then the other four have
/// no effect, as in fio).
pub fn think(j: &(impl JobOptions + ?Sized)) -> Result<Option<Think>, TranslateError> {
    let stall_ns = time_ns(j, "thinktime", TimeUnit::Micros)?;
    let spin_ns = time_ns(j, "thinktime_spin", TimeUnit::Micros)?;
    // Seconds when bare, unlike the other think times (fio's is_seconds).
    let io_time_ns = time_ns(j, "thinktime_iotime", TimeUnit::Seconds)?;
    let every = match j.get("thinktime_blocks") {
        None => 1,
        Some(v) => parse_int(v).map_err(|_| parse_err("thinktime_blocks", v))?,
    };
    let count = match j.get("thinktime_blocks_type") {
        None | Some("complete") => ThinkCount::Completed,
        Some("issue") => ThinkCount::Issued,
        Some(v) => return Err(parse_err("thinktime_blocks_type", v)),
    };
    Ok((stall_ns > 0).then_some(Think {
        stall_ns,
        // fio cuts a spin longer than the whole think time down to it.
        spin_ns: spin_ns.min(stall_ns),
        every,
        count,
        io_time_ns,
        // fio counts requests beside the clock only when the job gave a count itself: its
        // default of 1 would stall after every request.
        every_with_time: j.get("thinktime_blocks").is_some(),
        rate_ignores: match j.get("rate_ignore_thinktime") {
            None => false,
            Some(v) => parse_bool(v).map_err(|_| parse_err("rate_ignore_thinktime", v))?,
        },
    }))
}

/// The start delay of the job whose random seed is `seed`: `t` or a value drawn from
/// `a-b` (also `a:b`, `a,b`; seconds unless a unit says otherwise), in whole microseconds.
/// None: the job never starts (it waits for a signal). fio keeps the delay unsigned, so a
/// negative one is a wait no run outlives; and as the sign is also its range separator,
/// `-1` is the range from -1 s to 1 s: a draw below 0 never starts, as in fio.
pub fn start_delay(value: Option<&str>, seed: u64) -> Result<Option<Duration>, TranslateError> {
    const NAME: &str = "startdelay";
    let Some(v) = value else {
        return Ok(Some(Duration::ZERO));
    };
    // fio splits a value into its low and high ends at the first separator it finds (a
    // leading sign included), and reads the low end from the start of the whole value.
    let cut = v.find(',').or_else(|| v.find(':')).or_else(|| v.find('-'));
    let (lo, hi) = match cut {
        Some(0) => (v, &v[1..]),
        Some(i) => (&v[..i], &v[i + 1..]),
        None => (v, v),
    };
    let us = |s: &str| {
        parse_signed_time_ns(s, TimeUnit::Seconds)
            .map(|ns| ns / 1000)
            .map_err(|_| parse_err(NAME, v))
    };
    let (lo, hi) = (us(lo)?, us(hi)?);
    if lo > hi {
        return Err(TranslateError::Job(format!(
            "plumb: {NAME}={v}: the range's low end is above its high end"
        )));
    }
    let drawn = if lo == hi {
        lo
    } else {
        let span = u64::try_from(hi - lo + 1).unwrap_or(u64::MAX);
        lo + i128::from(Rng::new(seed, DELAY_STREAM).below(span))
    };
    Ok(u64::try_from(drawn).ok().map(Duration::from_micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fio::translate::TestOpts as Opts;

    #[test]
    fn think_time_is_in_microseconds_unless_a_unit_says_otherwise() {
        assert_eq!(think(&Opts(vec![])).unwrap(), None);
        assert_eq!(
            think(&Opts(vec![("thinktime", "0"), ("thinktime_blocks", "4")])).unwrap(),
            None
        );
        assert_eq!(
            think(&Opts(vec![("thinktime", "250")])).unwrap(),
            Some(Think {
                stall_ns: 250_000,
                spin_ns: 0,
                every: 1,
                count: ThinkCount::Completed,
                io_time_ns: 0,
                every_with_time: false,
                rate_ignores: false,
            })
        );
        assert_eq!(
            think(&Opts(vec![
                ("thinktime", "2ms"),
                ("thinktime_spin", "5ms"),
                ("thinktime_blocks", "8"),
                ("thinktime_blocks_type", "issue"),
            ]))
            .unwrap(),
            Some(Think {
                stall_ns: 2_000_000,
                spin_ns: 2_000_000,
                every: 8,
                count: ThinkCount::Issued,
                io_time_ns: 0,
                every_with_time: true,
                rate_ignores: false,
            })
        );
        // thinktime_iotime is in seconds when bare; a count given with it counts too.
        let timed = |extra: Vec<(&'static str, &'static str)>| {
            let mut o = vec![("thinktime", "100")];
            o.extend(extra);
            think(&Opts(o)).unwrap().unwrap()
        };
        let t = timed(vec![("thinktime_iotime", "2")]);
        assert_eq!((t.io_time_ns, t.every_with_time), (2_000_000_000, false));
        let t = timed(vec![
            ("thinktime_iotime", "250ms"),
            ("thinktime_blocks", "1"),
        ]);
        assert_eq!((t.io_time_ns, t.every_with_time), (250_000_000, true));
        // Negative ones wrap in fio's unsigned int of microseconds.
        let t = timed(vec![("thinktime_iotime", "-1")]);
        assert_eq!(t.io_time_ns, 4_293_967_296_000);
        let t = think(&Opts(vec![("thinktime", "-1"), ("thinktime_spin", "-5")]))
            .unwrap()
            .unwrap();
        assert_eq!(
            (t.stall_ns, t.spin_ns),
            (4_294_967_295_000, 4_294_967_291_000)
        );
        let t = timed(vec![("thinktime_spin", "-1")]);
        assert_eq!(t.spin_ns, 100_000, "cut down to the think time");
        assert_eq!(
            think(&Opts(vec![("thinktime", "x")]))
                .unwrap_err()
                .to_string(),
            "fio: failed parsing thinktime=x"
        );
    }

    #[test]
    fn start_delay_is_in_seconds_and_a_range_is_drawn_per_seed() {
        let delay = |v, seed| start_delay(v, seed).unwrap().unwrap();
        assert_eq!(delay(None, 1), Duration::ZERO);
        assert_eq!(delay(Some("2"), 1), Duration::from_secs(2));
        assert_eq!(delay(Some("500ms"), 1), Duration::from_millis(500));
        assert_eq!(delay(Some("-0"), 1), Duration::ZERO);
        let drawn: Vec<Duration> = (0..50).map(|seed| delay(Some("1s-3s"), seed)).collect();
        assert!(drawn
            .iter()
            .all(|d| (Duration::from_secs(1)..=Duration::from_secs(3)).contains(d)));
        assert!(drawn.iter().any(|d| *d != drawn[0]), "drawn per seed");
        assert_eq!(
            start_delay(Some("1:3"), 7).unwrap(),
            start_delay(Some("1-3"), 7).unwrap(),
            "the same seed, the same delay"
        );
        // -1 is the range -1 s..1 s: a draw below 0 never starts.
        let drawn: Vec<Option<Duration>> = (0..50)
            .map(|seed| start_delay(Some("-1"), seed).unwrap())
            .collect();
        assert!(drawn.contains(&None));
        assert!(drawn.iter().flatten().all(|d| *d <= Duration::from_secs(1)));
        assert!(drawn.iter().any(Option::is_some));
        assert!(start_delay(Some("3-1"), 1)
            .unwrap_err()
            .to_string()
            .contains("low end is above its high end"));
        assert_eq!(
            start_delay(Some("x"), 1).unwrap_err().to_string(),
            "fio: failed parsing startdelay=x"
        );
    }
}
