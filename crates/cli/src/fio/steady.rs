//! fio 3.33's steady-state options into plumb's [`SteadySpec`]: `steadystate` (`ss`), a
//! criterion and its limit (`iops:2%`, `bw_slope:0.1%`, `iops:5000`, `bw:10M`; default
//! `iops_slope:0.01%`), `steadystate_duration` (`ss_dur`, seconds; detection is off
//! without it, as it is below one second, which fio's whole seconds make 0) and
//! `steadystate_ramp_time` (`ss_ramp`). The grammar and the refusals are fio's, in its
//! words; the groups of jobs judged together are fio's too (a reporting group under
//! group_reporting, otherwise each job alone).

use std::collections::HashMap;
use std::time::Duration;

use plumb_core::steady::{Criterion, Metric, SteadyGroup, SteadyReport, SteadySpec};
use plumb_pipeline::JobRecord;

use super::translate::{JobClone, JobOptions, TranslateError};
use super::values::{
    parse_signed_time_ns, parse_size, parse_time_ns, KbBase, Size, TimeUnit, ValueError,
};

/// fio's default criterion.
const DEFAULT: &str = "iops_slope:0.01%";

/// The largest window plumb keeps, in samples (fio allocates whatever it is told).
const MAX_WINDOW_S: u64 = 10_000_000;

/// fio's words when the jobs of a reporting group disagree (its `td_verror` text, cut
/// to its buffer's length as fio cuts it).
pub const INCONSISTENT: &str = "fio: file:steadystate.c:338, func=job rejected: steadystate options must be consistent within reporting groups, error=Invalid argume";

/// The criterion in `v`, read as fio's option parser and `str_steadystate_cb` read it.
/// `ValueError::Callback` carries the line fio prints before `failed parsing`.
pub fn criterion(v: &str, kb: KbBase) -> Result<Criterion, ValueError> {
    // fio matches the word against the text before the first `,`, else before the first
    // `:`, exactly: `iops:5,bw` names no word at all.
    let cut = v.find(',').or_else(|| v.find(':')).unwrap_or(v.len());
    let (metric, slope) = match &v[..cut] {
        "iops" => (Metric::Iops, false),
        "iops_slope" => (Metric::Iops, true),
        "bw" => (Metric::Bw, false),
        "bw_slope" => (Metric::Bw, true),
        _ => return Err(ValueError::NotAValidValue(v.to_string())),
    };
    let said = |why: &str| ValueError::Callback(format!("fio: {why}"));
    // The callback reads the whole text after the first `:`, blanks trimmed.
    let Some((_, post)) = v.split_once(':') else {
        return Err(said(
            "steadystate threshold must be specified in addition to criterion",
        ));
    };
    let post = post.trim_matches([' ', '\t']);
    let (percent, limit) = if let Some((number, _)) = post.split_once('%') {
        let limit = leading_float(number.trim_end())
            .ok_or_else(|| said("could not parse steadystate threshold percentage"))?;
        (true, limit)
    } else if metric == Metric::Iops {
        let limit = leading_float(post)
            .ok_or_else(|| said("steadystate IOPS threshold postfix parsing failed"))?;
        (false, limit)
    } else {
        let limit = bytes(post, kb)
            .ok_or_else(|| said("steadystate BW threshold postfix parsing failed"))?;
        (false, limit)
    };
    Ok(Criterion {
        metric,
        slope,
        percent,
        limit,
    })
}

/// A number as sscanf's `%lf` reads one: blanks skipped, the longest numeric start (`5x`
/// is 5). fio 3.33 as Debian builds it has no arithmetic, so `(1+2)` is no number.
fn leading_float(s: &str) -> Option<f64> {
    let s = s.trim_start();
    let (sign, body) = match s.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, s.strip_prefix('+').unwrap_or(s)),
    };
    // A hexadecimal start, which %lf reads too (its fraction, rarer still, is not read).
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        if end > 0 {
            return u64::from_str_radix(&hex[..end], 16)
                .ok()
                .map(|v| sign * v as f64);
        }
    }
    (1..=s.len())
        .rev()
        .filter(|&i| s.is_char_boundary(i))
        .find_map(|i| s[..i].parse::<f64>().ok())
}

/// A bandwidth as fio's str_to_decimal reads it: a size with fio's suffixes, a sign
/// allowed (a negative limit is never met, as in fio).
fn bytes(s: &str, kb: KbBase) -> Option<f64> {
    if s.starts_with('(') {
        return None;
    }
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    match parse_size(body, kb, false) {
        Ok(Size::Bytes(b)) if negative => Some(-(b as f64)),
        Ok(Size::Bytes(b)) => Some(b as f64),
        _ => None,
    }
}

/// A job's steady-state detection; `None` when it is off (no `ss_dur`, or under a second).
pub fn spec<J: JobOptions + ?Sized>(j: &J) -> Result<Option<SteadySpec>, TranslateError> {
    let bad = |n: &str, v: &str| TranslateError::Parse {
        name: n.into(),
        value: v.into(),
    };
    let time = |n: &str| -> Result<Option<Duration>, TranslateError> {
        j.get(n)
            .map(|v| {
                parse_time_ns(v, TimeUnit::Seconds)
                    .map(Duration::from_nanos)
                    .map_err(|_| bad(n, v))
            })
            .transpose()
    };
    // fio keeps these unsigned: a negative ramp never ends and a negative window is never
    // filled, so the job runs as with detection off (fio 3.33's JSON output then crashes
    // on the window, a bug not imitated).
    let negative = |n: &str| -> Result<bool, TranslateError> {
        j.get(n).map_or(Ok(false), |v| {
            parse_signed_time_ns(v, TimeUnit::Seconds)
                .map(|ns| ns < 0)
                .map_err(|_| bad(n, v))
        })
    };
    if negative("steadystate_duration")? || negative("steadystate_ramp_time")? {
        return Ok(None);
    }
    // fio keeps whole seconds of ss_dur, and 0 turns detection off.
    let window_s = time("steadystate_duration")?.map_or(0, |d| d.as_secs());
    if window_s == 0 {
        return Ok(None);
    }
    if window_s > MAX_WINDOW_S {
        return Err(TranslateError::Unsupported {
            name: "steadystate_duration".into(),
            value: j.get("steadystate_duration").unwrap_or_default().into(),
            why: format!(": plumb keeps a window of at most {MAX_WINDOW_S} seconds"),
        });
    }
    let text = j.get("steadystate").unwrap_or(DEFAULT);
    let criterion =
        criterion(text, j.kb_of("steadystate")).map_err(|_| bad("steadystate", text))?;
    if !criterion.limit.is_finite() {
        return Err(TranslateError::Unsupported {
            name: "steadystate".into(),
            value: text.into(),
            why: ": a limit that is not a finite number".into(),
        });
    }
    Ok(Some(SteadySpec {
        criterion,
        window_s: window_s as u32,
        ramp: time("steadystate_ramp_time")?.unwrap_or_default(),
    }))
}

/// fio's check as each job is added (td_steadystate_init): every job of a reporting group
/// has the same steady-state settings, detection off included. `Err` holds the index of
/// the first job (in `clones`' order) that disagrees with the ones before it.
pub fn check_groups<'a>(clones: impl Iterator<Item = &'a JobClone>) -> Result<(), usize> {
    let mut first: HashMap<u32, &Option<SteadySpec>> = HashMap::new();
    for (k, c) in clones.enumerate() {
        let seen = *first.entry(c.info.header.groupid).or_insert(&c.steady);
        if seen != &c.steady {
            return Err(k);
        }
    }
    Ok(())
}

/// Puts every job that detects steady state in its group: under group_reporting the jobs
/// of its reporting group, in creation order (the last one holds the window, as in fio),
/// otherwise a group of its own.
pub fn join_groups<'a>(clones: impl Iterator<Item = &'a mut JobClone>) {
    let mut shared: Vec<(u32, Vec<&'a mut JobClone>)> = Vec::new();
    for c in clones {
        let Some(spec) = c.steady.clone() else {
            continue;
        };
        if !c.info.group_reporting {
            let g = SteadyGroup::new(spec, plumb_fileio::workload::PROGRESS, 1);
            c.config.steady = Some(g.member(0));
            continue;
        }
        let gid = c.info.header.groupid;
        match shared.iter_mut().find(|(id, _)| *id == gid) {
            Some((_, members)) => members.push(c),
            None => shared.push((gid, vec![c])),
        }
    }
    for (_, members) in shared {
        let Some(spec) = members.first().and_then(|c| c.steady.clone()) else {
            continue;
        };
        let g = SteadyGroup::new(spec, plumb_fileio::workload::PROGRESS, members.len());
        for (i, c) in members.into_iter().enumerate() {
            c.config.steady = Some(g.member(i));
        }
    }
}

/// Keeps how detection ended in the job's fio facts, where the report (and a replay of the
/// record) finds it.
pub fn record(job: &mut JobRecord, report: &SteadyReport) {
    let Some(serde_json::Value::Object(m)) = &mut job.layout else {
        return;
    };
    if let Ok(v) = serde_json::to_value(report) {
        m.insert("steady".into(), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: KbBase = KbBase::K1024;

    fn ok(v: &str) -> Criterion {
        criterion(v, K).unwrap()
    }

    fn said(v: &str) -> String {
        match criterion(v, K) {
            Err(ValueError::Callback(m)) => m,
            other => panic!("{v}: {other:?}"),
        }
    }

    fn c(metric: Metric, slope: bool, percent: bool, limit: f64) -> Criterion {
        Criterion {
            metric,
            slope,
            percent,
            limit,
        }
    }

    #[test]
    fn criteria_and_limits_as_fio_reads_them() {
        assert_eq!(ok("iops:50%"), c(Metric::Iops, false, true, 50.0));
        assert_eq!(ok("iops_slope:0.01%"), c(Metric::Iops, true, true, 0.01));
        assert_eq!(ok("bw_slope:2%"), c(Metric::Bw, true, true, 2.0));
        assert_eq!(ok("iops:5000"), c(Metric::Iops, false, false, 5000.0));
        assert_eq!(ok("iops: 7 "), c(Metric::Iops, false, false, 7.0));
        assert_eq!(ok("iops_slope:5x"), c(Metric::Iops, true, false, 5.0));
        assert_eq!(ok("iops:5%x"), c(Metric::Iops, false, true, 5.0));
        assert_eq!(ok("iops:1e3"), c(Metric::Iops, false, false, 1000.0));
        assert_eq!(ok("iops:.5"), c(Metric::Iops, false, false, 0.5));
        assert_eq!(ok("iops:-5"), c(Metric::Iops, false, false, -5.0));
        assert_eq!(ok("iops:0x10"), c(Metric::Iops, false, false, 16.0));
        // Bandwidth: fio's sizes (kb_base 1024: `kib` is 1000, `1.5k` is 1).
        assert_eq!(ok("bw:10M"), c(Metric::Bw, false, false, 10485760.0));
        assert_eq!(ok("bw: 10M"), c(Metric::Bw, false, false, 10485760.0));
        assert_eq!(ok("bw:5kib"), c(Metric::Bw, false, false, 5000.0));
        assert_eq!(ok("bw:1.5k"), c(Metric::Bw, false, false, 1.0));
        assert_eq!(ok("bw:5 k"), c(Metric::Bw, false, false, 5.0));
        assert_eq!(ok("bw:0x10"), c(Metric::Bw, false, false, 16.0));
        assert_eq!(ok("bw:-5"), c(Metric::Bw, false, false, -5.0));
        assert_eq!(criterion("bw:1k", KbBase::K1000).unwrap().limit, 1000.0);
        // The word ends at a comma: the callback still reads after the first colon.
        assert_eq!(ok("iops,5:3"), c(Metric::Iops, false, false, 3.0));
    }

    use crate::fio::translate::TestOpts as Opts;

    fn spec_of(opts: &[(&'static str, &'static str)]) -> Option<SteadySpec> {
        spec(&Opts(opts.to_vec())).unwrap()
    }

    #[test]
    fn detection_needs_a_whole_second_of_window() {
        assert_eq!(spec_of(&[("steadystate", "iops:5")]), None);
        assert_eq!(spec_of(&[("steadystate_duration", "0")]), None);
        assert_eq!(spec_of(&[("steadystate_duration", "500ms")]), None);
        // fio's default criterion, whole seconds, the ramp in fio's time units.
        let s = spec_of(&[
            ("steadystate_duration", "1500ms"),
            ("steadystate_ramp_time", "2"),
        ])
        .unwrap();
        assert_eq!(s.criterion, c(Metric::Iops, true, true, 0.01));
        assert_eq!(s.window_s, 1);
        assert_eq!(s.ramp, Duration::from_secs(2));
        let s = spec_of(&[
            ("steadystate", "bw:1m"),
            ("steadystate_duration", "1m"),
            ("steadystate_ramp_time", "500ms"),
        ])
        .unwrap();
        assert_eq!(s.criterion, c(Metric::Bw, false, false, 1048576.0));
        assert_eq!(s.window_s, 60);
        assert_eq!(s.ramp, Duration::from_millis(500));
    }

    #[test]
    fn limits_plumb_cannot_keep_are_refused_in_one_line() {
        let e = spec(&Opts(vec![
            ("steadystate", "iops:nan"),
            ("steadystate_duration", "2"),
        ]))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "plumb: fio option 'steadystate' (value 'iops:nan') is not supported yet: a limit that is not a finite number"
        );
        let e = spec(&Opts(vec![("steadystate_duration", "200d")])).unwrap_err();
        assert!(e.to_string().contains("at most 10000000 seconds"), "{e}");
    }

    #[test]
    fn refusals_in_fio_s_words() {
        let must = "fio: steadystate threshold must be specified in addition to criterion";
        assert_eq!(said("iops"), must);
        assert_eq!(said("iops,5"), must);
        assert_eq!(
            said("iops:abc%"),
            "fio: could not parse steadystate threshold percentage"
        );
        assert_eq!(
            said("bw:%"),
            "fio: could not parse steadystate threshold percentage"
        );
        assert_eq!(
            said("iops:abc"),
            "fio: steadystate IOPS threshold postfix parsing failed"
        );
        assert_eq!(
            said("iops:"),
            "fio: steadystate IOPS threshold postfix parsing failed"
        );
        assert_eq!(
            said("iops:(1+2)"),
            "fio: steadystate IOPS threshold postfix parsing failed"
        );
        assert_eq!(
            said("bw:abc"),
            "fio: steadystate BW threshold postfix parsing failed"
        );
        assert_eq!(
            said("bw:"),
            "fio: steadystate BW threshold postfix parsing failed"
        );
        assert_eq!(
            said("bw:(1+2)"),
            "fio: steadystate BW threshold postfix parsing failed"
        );
        // No word: fio lists the valid ones instead.
        for v in [
            "foo:5",
            "iops:5,bw",
            "bw:,5",
            "iops:5,",
            "IOPS:5",
            "iops_slopes:1",
        ] {
            assert!(
                matches!(criterion(v, K), Err(ValueError::NotAValidValue(_))),
                "{v}"
            );
        }
    }
}
