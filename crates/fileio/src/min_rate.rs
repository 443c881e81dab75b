//! A minimum rate a job must keep while it runs, per direction, in bytes or requests a
//! second (fio's `rate_min` and `rate_iops_min`, over its `rate_cycle`); a job that falls
//! below fails.
//!
//! The rules are fio 3.33's (backend.c, `__check_min_rate`), checked at each completion:
//!
//! - Only the measured time counts: nothing during the warm-up, and the first 2 s after it
//!   (and after the start of each later round of a job that walks its files more than once)
//!   go unchecked.
//! - Each direction that has completed a request keeps its own window. Its first check
//!   only notes its count and time; each later one, once at least a cycle has passed since
//!   the window began, compares `requests or bytes in the window × 1000 / the window's
//!   whole milliseconds` (integer arithmetic) with the minimum, and starts the next window.
//!   A direction whose count stays 0 is never compared (fio starts its window only once
//!   the count is above 0).
//! - The read-back of a job that verifies what it wrote is neither counted nor checked.
//! - One check looks at every direction in turn (read, write, trim), so a check can find
//!   several directions short at once.

use plumb_core::clock::Stamp;

/// The minimums of a job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MinRate {
    /// Bytes a second per direction (read, write, trim); 0: none. Where it is set it wins
    /// over `iops` for its direction.
    pub bytes: [u64; 3],
    /// Requests a second per direction; 0: none.
    pub iops: [u64; 3],
    /// The shortest window a rate is taken over, in milliseconds.
    pub cycle_ms: u64,
}

impl MinRate {
    /// Whether any direction has a minimum.
    pub fn any(&self) -> bool {
        self.bytes.iter().chain(&self.iops).any(|&m| m > 0)
    }
}

/// A direction that fell below its minimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Miss {
    /// 0 read, 1 write, 2 trim.
    pub dir: usize,
    /// The minimum was in requests a second (else bytes a second).
    pub iops: bool,
    pub min: u64,
    /// What the window achieved, in the same unit.
    pub got: u64,
    /// The window's length.
    pub window_ms: u64,
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = ["read", "write", "trim"][self.dir.min(2)];
        let unit = if self.iops { "requests/s" } else { "B/s" };
        write!(
            f,
            "the {dir} rate fell below its minimum of {} {unit}: {} {unit} over {} ms",
            self.min, self.got, self.window_ms
        )
    }
}

/// How long after the start nothing is checked.
const SETTLE_MS: u64 = 2000;

/// One worker's windows.
#[derive(Clone, Debug)]
pub struct MinRateCheck {
    min: MinRate,
    /// From when the settle period counts (the measured start, or the round's start).
    start: Option<Stamp>,
    bytes: [u64; 3],
    requests: [u64; 3],
    /// Where the current window began: its counts (both 0: not begun) and time.
    last_bytes: [u64; 3],
    last_requests: [u64; 3],
    last_at: [Option<Stamp>; 3],
}

fn ms_between(earlier: Stamp, later: Stamp) -> u64 {
    later.ns_since(earlier) / 1_000_000
}

impl MinRateCheck {
    /// `None` when `min` sets no minimum.
    pub fn new(min: MinRate) -> Option<MinRateCheck> {
        min.any().then_some(MinRateCheck {
            min,
            start: None,
            bytes: [0; 3],
            requests: [0; 3],
            last_bytes: [0; 3],
            last_requests: [0; 3],
            last_at: [None; 3],
        })
    }

    /// Whether the measured time has begun ([`MinRateCheck::restart`]).
    pub fn started(&self) -> bool {
        self.start.is_some()
    }

    /// The measured time (or a new round) begins at `at`: the settle period starts over.
    pub fn restart(&mut self, at: Stamp) {
        self.start = Some(at);
    }

    /// Count a request of `dir` that completed `bytes`, then check every direction at
    /// `now`: the directions found short, if any.
    pub fn completed(&mut self, dir: usize, bytes: u64, now: Stamp) -> Vec<Miss> {
        self.bytes[dir] += bytes;
        self.requests[dir] += 1;
        self.check(now)
    }

    fn check(&mut self, now: Stamp) -> Vec<Miss> {
        let mut misses = Vec::new();
        let Some(start) = self.start else {
            return misses;
        };
        if ms_between(start, now) < SETTLE_MS {
            return misses;
        }
        for d in 0..3 {
            if self.bytes[d] == 0 || (self.min.bytes[d] == 0 && self.min.iops[d] == 0) {
                continue;
            }
            if self.last_bytes[d] != 0 || self.last_requests[d] != 0 {
                let spent = self.last_at[d].map_or(0, |t| ms_between(t, now));
                if spent == 0 || spent < self.min.cycle_ms {
                    continue;
                }
                let (iops, min, done) = if self.min.bytes[d] > 0 {
                    (false, self.min.bytes[d], self.bytes[d] - self.last_bytes[d])
                } else {
                    (
                        true,
                        self.min.iops[d],
                        self.requests[d] - self.last_requests[d],
                    )
                };
                let got = done.saturating_mul(1000) / spent;
                if got < min {
                    misses.push(Miss {
                        dir: d,
                        iops,
                        min,
                        got,
                        window_ms: spent,
                    });
                    continue;
                }
            }
            self.last_bytes[d] = self.bytes[d];
            self.last_requests[d] = self.requests[d];
            self.last_at[d] = Some(now);
        }
        misses
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Stamp, ms: u64) -> Stamp {
        t0.add_ns(ms * 1_000_000)
    }

    fn check(min: MinRate) -> (MinRateCheck, Stamp) {
        let t0 = Stamp::now();
        let mut c = MinRateCheck::new(min).unwrap();
        c.restart(t0);
        (c, t0)
    }

    #[test]
    fn nothing_is_checked_before_two_seconds_nor_before_a_whole_cycle() {
        let min = MinRate {
            bytes: [1 << 20; 3],
            iops: [0; 3],
            cycle_ms: 1000,
        };
        assert!(MinRateCheck::new(MinRate::default()).is_none());
        let (mut c, t0) = check(min);
        // 4 KiB a second, far below 1 MiB/s.
        for ms in (0..2000).step_by(1000) {
            assert!(c.completed(0, 4096, at(t0, ms)).is_empty(), "{ms}");
        }
        // The first check after the settle period begins the window.
        assert!(c.completed(0, 4096, at(t0, 2000)).is_empty());
        assert!(c.completed(0, 4096, at(t0, 2999)).is_empty());
        let m = c.completed(0, 4096, at(t0, 3000));
        assert_eq!(
            m,
            vec![Miss {
                dir: 0,
                iops: false,
                min: 1 << 20,
                got: 8192,
                window_ms: 1000
            }]
        );
        assert_eq!(
            m[0].to_string(),
            "the read rate fell below its minimum of 1048576 B/s: 8192 B/s over 1000 ms"
        );
    }

    #[test]
    fn a_window_that_keeps_the_rate_starts_the_next_and_directions_are_apart() {
        let min = MinRate {
            bytes: [0; 3],
            iops: [10, 10, 0],
            cycle_ms: 500,
        };
        let (mut c, t0) = check(min);
        // Reads at 100 a second throughout; the first write at 3 s begins its own window,
        // and three writes in the next 500 ms are 4 a second once a read checks them.
        for ms in (0..3500).step_by(10) {
            assert!(c.completed(0, 512, at(t0, ms)).is_empty(), "{ms}");
            if [3000, 3100, 3200].contains(&ms) {
                assert!(c.completed(1, 512, at(t0, ms)).is_empty(), "{ms}");
            }
        }
        let m = c.completed(0, 512, at(t0, 3500));
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!((m[0].dir, m[0].iops, m[0].got), (1, true, 4));
        assert_eq!(
            m[0].to_string(),
            "the write rate fell below its minimum of 10 requests/s: 4 requests/s over 500 ms"
        );
    }

    #[test]
    fn a_restart_settles_again_and_keeps_the_windows() {
        let min = MinRate {
            bytes: [1000, 0, 0],
            iops: [0; 3],
            cycle_ms: 1000,
        };
        let (mut c, t0) = check(min);
        assert!(c.completed(0, 4096, at(t0, 2000)).is_empty());
        c.restart(at(t0, 2500));
        // Settling again until 4.5 s; then the window that began at 2 s is 2.5 s long.
        assert!(c.completed(0, 100, at(t0, 4000)).is_empty());
        let m = c.completed(0, 100, at(t0, 4500));
        assert_eq!((m[0].got, m[0].window_ms), (80, 2500));
    }
}
