//! Think time: a stall between requests that stands for the work an application does with
//! the data (fio's `thinktime`).
//!
//! After every N requests (completed, or issued), the worker first waits for everything it
//! has in flight, then stalls: it spins for the busy part, then sleeps the rest. The stall
//! is between requests, so no request's latency includes it. Only reads and writes count;
//! syncs neither count nor trigger a stall. The next N run from the count at which the
//! stall was found due, as in fio: requests that complete while the worker waits for its
//! queue before a stall count towards the next one, so with a queue the first stall comes
//! after more requests than the later ones.
//!
//! With an I/O time (fio's `thinktime_iotime`) the stall is due by the clock instead: once
//! the I/O time and the stall's own length have passed since the last stall was found due
//! (or since the first request, for the first), so after each stall the job does I/O for
//! the I/O time, and before the first for both together, as fio 3.33 counts it. A count of
//! requests given as well stalls too, whichever comes first; without one only the clock
//! does (fio's default count of 1 would stall after every request).
//!
//! A worker without think time carries no [`Thinker`], and pays one untaken branch per
//! request for the possibility.

use std::time::{Duration, Instant};

/// Which requests count towards the next stall.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkCount {
    /// Requests completed (so with requests in flight the stall waits for completions).
    #[default]
    Completed,
    /// Requests issued.
    Issued,
}

/// A stall of `stall_ns` after every `every` requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Think {
    /// The whole stall.
    pub stall_ns: u64,
    /// The part spent spinning on the CPU (at most `stall_ns`); the rest is slept.
    pub spin_ns: u64,
    /// Requests between stalls (0 behaves as 1 counted at issue: a stall after every
    /// request, before it completes).
    pub every: u64,
    pub count: ThinkCount,
    /// I/O time between stalls (0: none, the count alone decides).
    #[serde(default)]
    pub io_time_ns: u64,
    /// With an I/O time: whether `every` counts as well (the user gave a count).
    #[serde(default)]
    pub every_with_time: bool,
    /// Under a rate: the schedule does not make up for the stall (fio's
    /// rate_ignore_thinktime), see [`Thinker::skipped`].
    #[serde(default)]
    pub rate_ignores: bool,
}

/// Longest single sleep: a stop (time limit, signal) is seen within this.
const SLICE: Duration = Duration::from_millis(50);
/// How much a sleep overshoots (the kernel's default timer slack is 50 µs).
const SLACK: Duration = Duration::from_micros(60);

/// One worker's think-time state.
#[derive(Clone, Debug)]
pub struct Thinker {
    think: Think,
    issued: u64,
    /// The count at the last stall.
    last: u64,
    /// With an I/O time: when the last stall was found due (the first request's check
    /// starts the clock).
    last_time: Option<Instant>,
}

impl Thinker {
    /// `None` when `think` never stalls.
    pub fn new(think: Think) -> Option<Thinker> {
        (think.stall_ns > 0).then_some(Thinker {
            think,
            issued: 0,
            last: 0,
            last_time: None,
        })
    }

    /// Count `n` more requests issued.
    #[inline]
    pub fn issued(&mut self, n: u64) {
        self.issued += n;
    }

    /// Whether a stall is due, with `in_flight` requests not yet completed; when it is, the
    /// count now is where the next N start from.
    #[inline]
    pub fn due(&mut self, in_flight: u64) -> bool {
        let t = self.think;
        let mut due = false;
        let mut clock = None;
        if t.io_time_ns > 0 {
            let now = Instant::now();
            let since = *self.last_time.get_or_insert(now);
            due = now.duration_since(since) >= Duration::from_nanos(t.io_time_ns + t.stall_ns);
            clock = Some(now);
            if !due && !t.every_with_time {
                return false;
            }
        }
        let count = self.count(in_flight);
        due |= count >= self.last + t.every;
        if due {
            self.last = count;
            if clock.is_some() {
                self.last_time = clock;
            }
        }
        due
    }

    fn count(&self, in_flight: u64) -> u64 {
        match self.think.count {
            ThinkCount::Completed => self.issued.saturating_sub(in_flight),
            ThinkCount::Issued => self.issued,
        }
    }

    /// How far a rate's schedule moves back after a stall of `stalled_ns` when the rate
    /// ignores think time, given the schedule's spacing (`even`, mean gap): fio 3.33 counts
    /// the requests the stall would have held as done, less one request when the stall is
    /// at least one gap long so that one goes out at once (even spacing); for exponential
    /// gaps it moves the last start by the whole stall. 0 when the rate makes up for stalls.
    pub fn skipped(&self, stalled_ns: u64, even: bool, gap_ns: u64) -> u64 {
        if !self.think.rate_ignores || stalled_ns == 0 {
            0
        } else if even && gap_ns <= stalled_ns {
            stalled_ns - gap_ns
        } else {
            stalled_ns
        }
    }

    /// Stall now (the caller has found it [`Thinker::due`] and waited for its requests in
    /// flight); returns early once `stopping` says so. Returns how long it stalled, ns.
    pub fn stall(&self, stopping: impl Fn() -> bool) -> u64 {
        let t = self.think;
        let spin = Duration::from_nanos(t.spin_ns.min(t.stall_ns));
        let start = Instant::now();
        let took = || start.elapsed().as_nanos() as u64;
        let end = start + Duration::from_nanos(t.stall_ns);
        let spin_end = start + spin;
        while Instant::now() < spin_end {
            if stopping() {
                return took();
            }
            std::hint::spin_loop();
        }
        sleep_until(end, stopping);
        took()
    }
}

/// Sleep until `end` or until `stopping()` says so, in slices, the last stretch spun (a
/// sleep overshoots by the timer slack, as fio knows). Think time's stall and a replay's
/// wait ([`crate::walk::replay`]) both end this way.
pub(crate) fn sleep_until(end: Instant, stopping: impl Fn() -> bool) {
    loop {
        let now = Instant::now();
        if now >= end || stopping() {
            return;
        }
        let left = end - now;
        if left > SLACK + SLACK / 3 {
            std::thread::sleep((left - SLACK).min(SLICE));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn think(every: u64, count: ThinkCount) -> Think {
        Think {
            stall_ns: 2_000_000,
            spin_ns: 500_000,
            every,
            count,
            io_time_ns: 0,
            every_with_time: false,
            rate_ignores: false,
        }
    }

    #[test]
    fn zero_think_time_needs_no_thinker() {
        assert!(Thinker::new(Think {
            stall_ns: 0,
            ..think(1, ThinkCount::Completed)
        })
        .is_none());
    }

    #[test]
    fn completed_requests_count_once_they_complete() {
        let mut t = Thinker::new(think(2, ThinkCount::Completed)).unwrap();
        t.issued(2);
        assert!(!t.due(2), "both still in flight");
        assert!(!t.due(1));
        assert!(t.due(0));
        t.stall(|| false);
        t.issued(1);
        assert!(!t.due(0));
        t.issued(1);
        assert!(t.due(0));
    }

    #[test]
    fn completions_collected_before_a_stall_count_towards_the_next() {
        // A queue of 4, collected one at a time: the 4th completion finds 3 in flight.
        let mut t = Thinker::new(think(4, ThinkCount::Completed)).unwrap();
        t.issued(7);
        assert!(t.due(3));
        t.stall(|| false);
        // The 3 collected before the stall count: 4 more issued, 1 collected, is due.
        t.issued(4);
        assert!(!t.due(4));
        assert!(t.due(3));
    }

    #[test]
    fn issued_requests_count_at_once() {
        let mut t = Thinker::new(think(3, ThinkCount::Issued)).unwrap();
        t.issued(2);
        assert!(!t.due(2));
        t.issued(1);
        assert!(t.due(3));
        let mut every = Thinker::new(think(0, ThinkCount::Completed)).unwrap();
        every.issued(1);
        assert!(every.due(1), "every=0 stalls before completions");
    }

    #[test]
    fn io_time_alone_stalls_by_the_clock_not_the_count() {
        let mut t = Thinker::new(Think {
            stall_ns: 2_000_000,
            io_time_ns: 8_000_000,
            ..think(1, ThinkCount::Completed)
        })
        .unwrap();
        let start = Instant::now();
        t.issued(1);
        assert!(!t.due(0), "the first check starts the clock");
        // The first stall comes after the I/O time and the stall's length together.
        let mut n = 1;
        loop {
            t.issued(1);
            n += 1;
            if t.due(0) {
                break;
            }
        }
        assert!(n > 2, "the count of 1 does not stall");
        assert!(start.elapsed() >= Duration::from_millis(10));
        // Found due before the stall: the stall itself counts towards the next period.
        let stalled = Instant::now();
        t.stall(|| false);
        t.issued(1);
        assert!(!t.due(0));
        while !t.due(0) {
            t.issued(1);
        }
        assert!(stalled.elapsed() >= Duration::from_millis(9));
    }

    #[test]
    fn io_time_with_a_count_stalls_at_whichever_comes_first() {
        let mut t = Thinker::new(Think {
            io_time_ns: 60_000_000_000,
            every_with_time: true,
            ..think(3, ThinkCount::Issued)
        })
        .unwrap();
        t.issued(2);
        assert!(!t.due(2));
        t.issued(1);
        assert!(t.due(3), "the count comes first");
        let mut timed = Thinker::new(Think {
            stall_ns: 1_000_000,
            io_time_ns: 1_000_000,
            every_with_time: true,
            ..think(1_000_000, ThinkCount::Issued)
        })
        .unwrap();
        timed.issued(1);
        assert!(!timed.due(1));
        std::thread::sleep(Duration::from_millis(3));
        timed.issued(1);
        assert!(timed.due(1), "the clock comes first");
    }

    #[test]
    fn a_rate_that_ignores_stalls_moves_back_by_all_but_one_gap() {
        let plain = Thinker::new(think(1, ThinkCount::Completed)).unwrap();
        assert_eq!(plain.skipped(100_000_000, true, 1_000_000), 0);
        let t = Thinker::new(Think {
            rate_ignores: true,
            ..think(1, ThinkCount::Completed)
        })
        .unwrap();
        assert_eq!(t.skipped(100_000_000, true, 1_000_000), 99_000_000);
        assert_eq!(t.skipped(500_000, true, 1_000_000), 500_000);
        assert_eq!(t.skipped(100_000_000, false, 1_000_000), 100_000_000);
        assert_eq!(t.skipped(0, true, 1_000_000), 0);
    }

    #[test]
    fn a_stall_lasts_its_time_and_a_stop_cuts_it_short() {
        let t = Thinker::new(think(1, ThinkCount::Completed)).unwrap();
        let s = Instant::now();
        t.stall(|| false);
        let took = s.elapsed();
        assert!(took >= Duration::from_millis(2), "{took:?}");
        assert!(took < Duration::from_millis(200), "{took:?}");
        let long = Thinker::new(Think {
            stall_ns: 10_000_000_000,
            ..think(1, ThinkCount::Completed)
        })
        .unwrap();
        let s = Instant::now();
        long.stall(|| s.elapsed() > Duration::from_millis(5));
        assert!(s.elapsed() < Duration::from_secs(1));
    }
}
