//! fio's `max_latency` (microseconds by default, one value per direction as `bs` takes
//! them) into the job's [`MaxLatency`], and fio's words for a job that exceeded it.
//!
//! fio 3.33 (io_u.c, `lat_fatal`): the first read or write over its maximum prints `fio:
//! latency of N nsec exceeds specified max (M nsec): FILE DIR OFFSET LENGTH` on stderr, and
//! the job stops with `err=110` (`file:io_u.c:1432, func=max latency exceeded,
//! error=Connection timed out`); the request is counted, the other jobs go on, and fio's
//! exit status counts the failed jobs.

use plumb_fileio::max_latency::{Exceeded, MaxLatency};
use plumb_report::fio::job::FioFailure;

use super::translate::{JobOptions, TranslateError};

/// The job's maximum latencies, `None` when it sets none.
pub fn spec<J: JobOptions + ?Sized>(j: &J) -> Result<Option<MaxLatency>, TranslateError> {
    let Some(v) = j.get("max_latency") else {
        return Ok(None);
    };
    // As fio reads an r,w,t list: a field that fails leaves its direction without a maximum.
    let per_dir = super::options::find("max_latency")
        .map(|o| o.rwt_values(v, j.kb_of("max_latency")))
        .unwrap_or_default();
    if per_dir.iter().all(Option::is_none) {
        return Err(TranslateError::Parse {
            name: "max_latency".into(),
            value: v.into(),
        });
    }
    let mut m = MaxLatency::default();
    for (slot, us) in m.ns.iter_mut().zip(per_dir) {
        if let Some(us) = us {
            *slot = us.saturating_mul(1000);
        }
    }
    Ok(m.any().then_some(m))
}

/// fio's failure of a job that exceeded its maximum latency.
pub fn failure() -> FioFailure {
    FioFailure {
        errno: libc::ETIMEDOUT,
        verror: "file:io_u.c:1432, func=max latency exceeded, error=Connection timed out".into(),
        in_layout: false,
    }
}

/// fio's stderr line for the request over its maximum; `names` are the job's files as fio
/// spells them.
pub fn line(e: &Exceeded, names: &[String]) -> String {
    format!(
        "fio: latency of {} nsec exceeds specified max ({} nsec): {} {} {} {}",
        e.latency_ns,
        e.max_ns,
        names.get(e.file as usize).unwrap_or(&e.path),
        ["read", "write", "trim"][e.dir.min(2)],
        e.offset,
        e.len
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fio::translate::TestOpts as Opts;

    fn of(v: &'static str) -> Result<Option<[u64; 3]>, String> {
        spec(&Opts(vec![("max_latency", v)]))
            .map(|m| m.map(|m| m.ns))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn values_per_direction_in_microseconds() {
        assert_eq!(of("1"), Ok(Some([1000; 3])));
        assert_eq!(of(",1"), Ok(Some([0, 1000, 1000])));
        assert_eq!(of("1,"), Ok(Some([1000, 0, 0])));
        assert_eq!(of("2ms,1"), Ok(Some([2_000_000, 1000, 1000])));
        // fio splits numbers at '-' too: "-1" is a write maximum of 1 µs.
        assert_eq!(of("-1"), Ok(Some([0, 1000, 1000])));
        assert_eq!(of("0"), Ok(None));
        assert!(of("abc").is_err());
        // One good field is enough, as in fio.
        assert_eq!(of("abc,1"), Ok(Some([0, 1000, 1000])));
    }

    #[test]
    fn fio_s_words() {
        let e = Exceeded {
            latency_ns: 297173,
            max_ns: 1000,
            file: 0,
            path: "/abs/f1".into(),
            dir: 0,
            offset: 503808,
            len: 4096,
        };
        assert_eq!(
            line(&e, &["f1".into()]),
            "fio: latency of 297173 nsec exceeds specified max (1000 nsec): f1 read 503808 4096"
        );
        assert_eq!(
            failure().pid_line(9),
            "fio: pid=9, err=110/file:io_u.c:1432, func=max latency exceeded, error=Connection timed out"
        );
    }
}
