//! fio's minimum rates: `rate_min` (`ratemin`, bytes a second) and `rate_iops_min`
//! (requests a second), one value per direction, taken over `rate_cycle` (`ratecycle`,
//! milliseconds, 1000 by default) into the job's [`MinRate`]; fio's checks of the rate
//! options as it adds a job; and fio's words for a job that missed its minimum.
//!
//! fio 3.33, as it adds a job (init.c, fixup_options): `fio: rate and rate_iops are mutually
//! exclusive` when both rate and rate_iops, or both rate_min and rate_iops_min, are above 0
//! over the three directions, then `fio: minimum rate exceeds rate, ddir N` for each
//! direction N whose rate (rate_iops) is set and below its rate_min (rate_iops_min). Either
//! refuses the job (status 1) after the header lines of the jobs added before it.
//!
//! While it runs (backend.c, check_min_rate; the rules are in [`plumb_fileio::min_rate`]),
//! a job below its minimum prints `JOB: rate_min=NB/s not met, got MB/s` (or `JOB:
//! rate_iops_min=N not met, got M IOPS`) on stderr for each direction short, stops, and
//! fails with `err=5` (`file:backend.c:1131, func=check_min_rate, error=Input/output
//! error`); the other jobs go on, and fio's exit status counts the failed jobs.

use plumb_fileio::min_rate::{MinRate, Miss};
use plumb_report::fio::job::FioFailure;

use super::translate::{JobOptions, TranslateError};
use super::values::parse_int;

/// fio's default rate_cycle, in milliseconds.
const CYCLE_MS: u64 = 1000;

/// The values of an option per direction (read, write, trim), 0 where unset.
fn per_dir<J: JobOptions + ?Sized>(j: &J, name: &str) -> Result<[u64; 3], TranslateError> {
    // Field by field as fio applies an r,w,t list (a field that fails keeps its direction).
    Ok(super::translate::rwt_option(j, name).map(|x| x.unwrap_or(0)))
}

fn sum(v: [u64; 3]) -> u64 {
    v.iter().fold(0u64, |a, b| a.saturating_add(*b))
}

/// fio's checks of the rate options as it adds the job: its lines, as a refusal.
pub fn fixup<J: JobOptions + ?Sized>(j: &J) -> Result<(), TranslateError> {
    let [rate, iops, rate_min, iops_min] =
        ["rate", "rate_iops", "rate_min", "rate_iops_min"].map(|n| per_dir(j, n));
    let (rate, iops, rate_min, iops_min) = (rate?, iops?, rate_min?, iops_min?);
    let mut lines = Vec::new();
    if (sum(rate) > 0 && sum(iops) > 0) || (sum(rate_min) > 0 && sum(iops_min) > 0) {
        lines.push("fio: rate and rate_iops are mutually exclusive".to_string());
    }
    for d in 0..3 {
        if (rate[d] > 0 && rate[d] < rate_min[d]) || (iops[d] > 0 && iops[d] < iops_min[d]) {
            lines.push(format!("fio: minimum rate exceeds rate, ddir {d}"));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(TranslateError::Fixup(lines.join("\n")))
    }
}

/// Which of rate and rate_iops limits the job: the one above 0 (after [`fixup`], at most
/// one is), `None` when neither.
pub fn limit<J: JobOptions + ?Sized>(j: &J) -> Result<Option<&'static str>, TranslateError> {
    for name in ["rate", "rate_iops"] {
        if sum(per_dir(j, name)?) > 0 {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// The job's minimum rates, `None` when it has none.
pub fn spec<J: JobOptions + ?Sized>(j: &J) -> Result<Option<MinRate>, TranslateError> {
    let cycle_ms = match j.get("rate_cycle") {
        None => CYCLE_MS,
        Some(v) => parse_int(v).map_err(|_| TranslateError::Parse {
            name: "rate_cycle".into(),
            value: v.into(),
        })?,
    };
    let min = MinRate {
        bytes: per_dir(j, "rate_min")?,
        iops: per_dir(j, "rate_iops_min")?,
        cycle_ms,
    };
    Ok(min.any().then_some(min))
}

/// fio's failure of a job that missed its minimum.
pub fn failure() -> FioFailure {
    FioFailure {
        errno: libc::EIO,
        verror: "file:backend.c:1131, func=check_min_rate, error=Input/output error".into(),
        in_layout: false,
    }
}

/// fio's stderr line for each direction of job `name` found short.
pub fn lines(name: &str, misses: &[Miss]) -> Vec<String> {
    misses
        .iter()
        .map(|m| {
            if m.iops {
                format!(
                    "{name}: rate_iops_min={} not met, got {} IOPS",
                    m.min as u32, m.got
                )
            } else {
                format!("{name}: rate_min={}B/s not met, got {}B/s", m.min, m.got)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fio::translate::TestOpts as Opts;

    fn fixup_of(opts: &[(&'static str, &'static str)]) -> Result<(), String> {
        fixup(&Opts(opts.to_vec())).map_err(|e| e.to_string())
    }

    #[test]
    fn fio_s_checks_as_it_adds_a_job() {
        assert_eq!(fixup_of(&[("rate", "1m"), ("rate_min", "512k")]), Ok(()));
        // One value carries forward to every direction.
        assert_eq!(
            fixup_of(&[("rate", "1m"), ("rate_min", "2m")]),
            Err("fio: minimum rate exceeds rate, ddir 0\nfio: minimum rate exceeds rate, ddir 1\nfio: minimum rate exceeds rate, ddir 2".into())
        );
        // A direction without a rate has no maximum to exceed.
        assert_eq!(
            fixup_of(&[("rate", "1m,"), ("rate_min", "2m,2m,")]),
            Err("fio: minimum rate exceeds rate, ddir 0".into())
        );
        assert_eq!(
            fixup_of(&[("rate_iops", "10,20"), ("rate_iops_min", "5,30")]),
            Err(
                "fio: minimum rate exceeds rate, ddir 1\nfio: minimum rate exceeds rate, ddir 2"
                    .into()
            )
        );
        assert_eq!(
            fixup_of(&[("rate", "1m,1m"), ("rate_min", "2m,2m,1"), ("rate_iops", "1")]),
            Err("fio: rate and rate_iops are mutually exclusive\nfio: minimum rate exceeds rate, ddir 0\nfio: minimum rate exceeds rate, ddir 1".into())
        );
        assert_eq!(
            fixup_of(&[("rate_min", "1k"), ("rate_iops_min", "1")]),
            Err("fio: rate and rate_iops are mutually exclusive".into())
        );
        // Values of 0 set nothing.
        assert_eq!(fixup_of(&[("rate", "0"), ("rate_iops", "5")]), Ok(()));
        assert_eq!(
            limit(&Opts(vec![("rate", "0"), ("rate_iops", "5")])),
            Ok(Some("rate_iops"))
        );
        assert_eq!(limit(&Opts(vec![("rate", "0")])), Ok(None));
    }

    #[test]
    fn minimums_per_direction_and_fio_s_words() {
        let j = Opts(vec![("rate_min", "1m,")]);
        assert_eq!(
            spec(&j).unwrap(),
            Some(MinRate {
                bytes: [1 << 20, 0, 0],
                iops: [0; 3],
                cycle_ms: 1000
            })
        );
        let j = Opts(vec![("rate_iops_min", "10"), ("rate_cycle", "250")]);
        assert_eq!(
            spec(&j).unwrap(),
            Some(MinRate {
                bytes: [0; 3],
                iops: [10; 3],
                cycle_ms: 250
            })
        );
        assert_eq!(spec(&Opts(vec![("rate_cycle", "5")])).unwrap(), None);
        assert_eq!(spec(&Opts(vec![("rate_min", "0")])).unwrap(), None);
        let miss = |iops, min, got| Miss {
            dir: 0,
            iops,
            min,
            got,
            window_ms: 1000,
        };
        assert_eq!(
            lines("slow", &[miss(false, 1 << 20, 40715), miss(true, 1000, 7)]),
            [
                "slow: rate_min=1048576B/s not met, got 40715B/s",
                "slow: rate_iops_min=1000 not met, got 7 IOPS"
            ]
        );
        assert_eq!(
            failure().pid_line(7),
            "fio: pid=7, err=5/file:backend.c:1131, func=check_min_rate, error=Input/output error"
        );
    }
}
