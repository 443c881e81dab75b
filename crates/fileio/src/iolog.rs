//! Per-request logs (fio's write_bw_log, write_iops_log, write_lat_log): every completed
//! request of the measured time, or with a window set (fio's log_avg_msec) per-window sums
//! for throughput and running latency means. Each worker thread keeps its own log; nothing
//! is written while the job runs, the front end writes the files afterwards in its own
//! format.
//!
//! A request's latency comes in two halves when the engine queues: submission (from when
//! it is queued to the end of the call that submits it, fio's slat) and completion (from
//! there to its collection, fio's clat). Blocking engines time one call: no submission
//! half, the completion half is the whole.
//!
//! Per-request logs are held in memory (24 bytes a request): a long run at a high rate
//! holds a lot; windowed logs hold one entry per window and direction.

use std::sync::{Arc, Mutex};

use plumb_core::clock::Stamp;

/// What to log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogSpec {
    /// Average over windows of this many ms (0: one entry per request).
    pub window_ms: u64,
    /// Keep each request's offset too (fio's log_offset), beside the request.
    #[serde(default)]
    pub offsets: bool,
    /// Date the lines by this clock (a clock_gettime clock id), in ms: its time at the
    /// start of the measured time plus the time since (fio's log_unix_epoch and
    /// log_alternate_epoch); none: ms since that start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch_clock: Option<i32>,
    /// fio's histogram log: a sample every this many ms (0: none; see
    /// [`crate::hist_log`]), with fio's buckets counted unless `hist_uncounted` (fio's
    /// clat_percentiles off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hist_ms: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hist_uncounted: bool,
    /// Only the histogram log is kept (no bandwidth, IOPS or latency log).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hist_only: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The time of clock `clock` in ms, as fio reads it for its epochs (`None`: no such clock).
pub fn clock_ms(clock: i32) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec out-parameter; an unknown clock id is an error, not UB.
    let r = unsafe { libc::clock_gettime(clock as libc::clockid_t, &mut ts) };
    (r == 0).then(|| ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}

/// One completed request, packed into 24 bytes: a per-request log of a long run is large.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// From when it was queued to its completion (fio's lat), ns.
    pub lat_ns: u64,
    /// Completion time, ms since the measured time began (saturates at 49 days).
    pub t_ms: u32,
    /// Bytes done (saturates at 4 GiB).
    pub bytes: u32,
    /// Submission half (fio's slat), ns, saturating at 4.3 s; 0 without one.
    pub slat_ns: u32,
    /// The submission ended this many ms before `t_ms` (saturates at 65 s).
    pub submitted_ms_before: u16,
    /// 0 read, 1 write, 2 trim (fio's ddir).
    pub dir: u8,
    /// Submitted apart from its completion (queued engines, trims excepted): it has a slat.
    pub queued: bool,
}

impl Request {
    /// The completion half (fio's clat): the whole for a request done inside its call.
    pub fn clat_ns(&self) -> u64 {
        self.lat_ns.saturating_sub(self.slat_ns as u64)
    }

    /// When its submission ended, ms since the measured time began.
    pub fn submitted_ms(&self) -> u64 {
        (self.t_ms as u64).saturating_sub(self.submitted_ms_before as u64)
    }
}

/// One window of one direction, for throughput: the window's requests and bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The window's end, ms since the measured time began.
    pub t_ms: u64,
    /// 0 read, 1 write, 2 trim.
    pub dir: u8,
    pub bytes: u64,
    pub count: u64,
}

/// One line of a windowed latency log: the mean of one direction's samples since its last
/// line, rounded to the nearest ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mean {
    /// When the line was due: the time of the sample that closed the window, or the end of
    /// the job for the last, partial one. ms since the measured time began.
    pub t_ms: u64,
    pub dir: u8,
    pub ns: u64,
}

/// The latency logs, indices into [`Logged::means`].
pub const LAT: usize = 0;
pub const CLAT: usize = 1;
pub const SLAT: usize = 2;

/// What a job's threads logged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Logged {
    /// Per-request logs: every request, in completion order per thread.
    pub requests: Vec<Request>,
    /// Where each of `requests` went in its file, when the spec keeps offsets (else
    /// empty: a request stays 24 bytes).
    pub offsets: Vec<u64>,
    /// Windowed logs: requests and bytes per window and direction.
    pub windows: Vec<Window>,
    /// Windowed logs: lat, clat and slat means ([`LAT`], [`CLAT`], [`SLAT`]), in the order
    /// they were due.
    pub means: [Vec<Mean>; 3],
    /// What [`LogSpec::epoch_clock`] read at the start of the measured time, in ms (the
    /// earliest of the job's threads).
    pub epoch_ms: Option<u64>,
    /// The histogram log's samples, in the order they were taken per thread.
    pub hist: Vec<crate::hist_log::HistSample>,
}

/// Every worker's log, gathered when each finishes.
#[derive(Default)]
pub struct Logs {
    pub taken: Mutex<Logged>,
}

/// A running mean of one latency log, one per direction, as fio keeps it for its latency
/// logs: a sample a window or more past the start of the open window's first period closes
/// it (itself included) and the next window starts at the period that sample falls in.
#[derive(Clone, Copy, Default)]
struct Running {
    period_start: u64,
    sum: u64,
    count: u64,
}

impl Running {
    fn mean(&self) -> u64 {
        (self.sum + self.count / 2) / self.count.max(1)
    }
}

struct MeanLog {
    window_ms: u64,
    dirs: [Running; 3],
    out: Vec<Mean>,
}

impl MeanLog {
    fn new(window_ms: u64) -> MeanLog {
        MeanLog {
            window_ms,
            dirs: [Running::default(); 3],
            out: Vec::new(),
        }
    }

    fn add(&mut self, t_ms: u64, dir: u8, ns: u64) {
        let r = &mut self.dirs[(dir as usize).min(2)];
        r.sum += ns;
        r.count += 1;
        // A sample earlier than the open window (a submission seen only at its completion)
        // joins it.
        if t_ms < r.period_start + self.window_ms {
            return;
        }
        self.out.push(Mean {
            t_ms,
            dir,
            ns: r.mean(),
        });
        *r = Running {
            period_start: t_ms - t_ms % self.window_ms,
            ..Running::default()
        };
    }

    /// The open windows, at the end of the job.
    fn close(&mut self, t_ms: u64) {
        for (d, r) in self.dirs.iter_mut().enumerate() {
            if r.count > 0 {
                self.out.push(Mean {
                    t_ms,
                    dir: d as u8,
                    ns: r.mean(),
                });
                *r = Running::default();
            }
        }
    }
}

/// One worker thread's log.
pub struct IoLog {
    spec: LogSpec,
    /// The engine submits requests apart from their completion: each has a slat.
    queued: bool,
    from: Option<Stamp>,
    logged: Logged,
    /// The open throughput window's index and its sums per direction (read, write, trim).
    window: u64,
    open: [Window; 3],
    /// lat, clat, slat.
    means: [MeanLog; 3],
    hist: Option<crate::hist_log::HistLog>,
    sink: Arc<Logs>,
}

impl IoLog {
    /// `queued`: the engine stamps when each request's submission ended (queued engines
    /// with submission timed apart).
    pub fn new(spec: LogSpec, queued: bool, sink: Arc<Logs>) -> IoLog {
        let w = spec.window_ms.max(1);
        IoLog {
            spec,
            queued,
            from: None,
            logged: Logged::default(),
            window: 0,
            open: [Window {
                t_ms: 0,
                dir: 0,
                bytes: 0,
                count: 0,
            }; 3],
            means: [MeanLog::new(w), MeanLog::new(w), MeanLog::new(w)],
            hist: (spec.hist_ms > 0)
                .then(|| crate::hist_log::HistLog::new(spec.hist_ms, !spec.hist_uncounted)),
            sink,
        }
    }

    /// Start of the measured time (requests completing before it are not logged).
    pub fn start(&mut self, measured_from: Stamp) {
        self.from = Some(measured_from);
        if let Some(clock) = self.spec.epoch_clock {
            let since = Stamp::now().ns_since(measured_from) / 1_000_000;
            self.logged.epoch_ms = clock_ms(clock).map(|now| now.saturating_sub(since));
        }
    }

    fn close_window(&mut self) {
        let end = (self.window + 1) * self.spec.window_ms;
        for (d, e) in self.open.iter_mut().enumerate() {
            if e.count > 0 {
                self.logged.windows.push(Window {
                    t_ms: end,
                    dir: d as u8,
                    ..*e
                });
            }
            *e = Window {
                t_ms: 0,
                dir: d as u8,
                bytes: 0,
                count: 0,
            };
        }
    }

    /// A request of `bytes` at `offset` in its file, in direction `dir` (0 read, 1 write,
    /// 2 trim: fio's ddir), queued at `start`, submitted by `submitted` (`start` for one done
    /// inside its call) and collected at `end`.
    #[inline]
    pub fn add(
        &mut self,
        dir: u8,
        (offset, bytes): (u64, u64),
        start: Stamp,
        submitted: Stamp,
        end: Stamp,
    ) {
        let Some(from) = self.from else { return };
        if from.ns_since(end) > 0 {
            // Completed during the warm-up: fio keeps no log of its ramp either.
            return;
        }
        let end_ns = end.ns_since(from);
        let lat_ns = end.ns_since(start);
        // A trim is done inside its call on every engine: no submission half.
        let slat_ns = if self.queued && dir != 2 {
            submitted.ns_since(start).min(lat_ns)
        } else {
            0
        };
        let t_ms = end_ns / 1_000_000;
        // fio times a submission only once its ramp is over.
        let submitted_ns = end_ns.checked_sub(lat_ns - slat_ns);
        let queued = self.queued && dir != 2 && submitted_ns.is_some();
        let submitted_ms = submitted_ns.unwrap_or(0) / 1_000_000;
        if let Some(h) = &mut self.hist {
            h.add(dir, bytes, t_ms, lat_ns - slat_ns);
            if self.spec.hist_only {
                return;
            }
        }
        if self.spec.window_ms == 0 {
            if self.spec.offsets {
                self.logged.offsets.push(offset);
            }
            self.logged.requests.push(Request {
                lat_ns,
                t_ms: t_ms.min(u32::MAX as u64) as u32,
                bytes: bytes.min(u32::MAX as u64) as u32,
                slat_ns: slat_ns.min(u32::MAX as u64) as u32,
                submitted_ms_before: (t_ms - submitted_ms).min(u16::MAX as u64) as u16,
                dir,
                queued,
            });
            return;
        }
        let w = t_ms / self.spec.window_ms;
        while w > self.window {
            self.close_window();
            self.window += 1;
        }
        let e = &mut self.open[(dir as usize).min(2)];
        e.bytes += bytes;
        e.count += 1;
        self.means[LAT].add(t_ms, dir, lat_ns);
        self.means[CLAT].add(t_ms, dir, lat_ns - slat_ns);
        if queued {
            self.means[SLAT].add(submitted_ms, dir, slat_ns);
        }
    }

    /// Hand the log over: of the throughput windows only the complete ones, of the latency
    /// means the open ones too, dated now (fio writes those at the end of the job).
    pub fn finish(&mut self) {
        if self.spec.window_ms > 0 {
            if let Some(from) = self.from {
                let now = Stamp::now().ns_since(from) / 1_000_000;
                for m in &mut self.means {
                    m.close(now);
                }
            }
        }
        let mut sink = self.sink.taken.lock().unwrap_or_else(|p| p.into_inner());
        sink.requests.append(&mut self.logged.requests);
        sink.offsets.append(&mut self.logged.offsets);
        sink.windows.append(&mut self.logged.windows);
        if let Some(h) = &mut self.hist {
            sink.hist.append(&mut h.samples);
        }
        sink.epoch_ms = match (sink.epoch_ms, self.logged.epoch_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for (to, m) in sink.means.iter_mut().zip(&mut self.means) {
            to.append(&mut m.out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Request>(), 24);
    }

    #[test]
    fn windows_sum_each_direction() {
        let sink = Arc::new(Logs::default());
        let mut log = IoLog::new(
            LogSpec {
                window_ms: 100,
                offsets: false,
                epoch_clock: None,
                hist_ms: 0,
                hist_uncounted: false,
                hist_only: false,
            },
            false,
            sink.clone(),
        );
        let t0 = Stamp::now();
        log.start(t0);
        let at = |ms: u64| t0.add_ns(ms * 1_000_000);
        log.add(0, (0, 4096), at(10), at(10), at(20));
        log.add(1, (0, 8192), at(30), at(30), at(50));
        log.add(0, (0, 4096), at(60), at(60), at(90));
        log.add(0, (0, 4096), at(150), at(150), at(250));
        log.finish();
        let l = sink.taken.lock().unwrap().clone();
        // The window still open at the end (200-300 ms) is incomplete: left out.
        let e = &l.windows;
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(
            (e[0].t_ms, e[0].dir, e[0].count, e[0].bytes),
            (100, 0, 2, 8192)
        );
        assert_eq!((e[1].t_ms, e[1].dir, e[1].count), (100, 1, 1));
        assert!(l.requests.is_empty());
    }

    /// fio's inline averaging: a window closes at the first sample a window or more past
    /// the period it started in, that sample included, dated when it came; the rest at the
    /// end.
    #[test]
    fn latency_means_close_on_the_sample_past_the_window() {
        let sink = Arc::new(Logs::default());
        let mut log = IoLog::new(
            LogSpec {
                window_ms: 100,
                offsets: false,
                epoch_clock: None,
                hist_ms: 0,
                hist_uncounted: false,
                hist_only: false,
            },
            true,
            sink.clone(),
        );
        let t0 = Stamp::now();
        log.start(t0);
        let at = |us: u64| t0.add_ns(us * 1000);
        // Reads: queued at q, submitted 1 ms later, done at e (µs).
        for (q, e) in [(0, 40_000), (50_000, 99_000), (100_000, 130_000)] {
            log.add(0, (0, 4096), at(q), at(q + 1000), at(e));
        }
        // A write done at 250 ms: past its window (0-100) at once.
        log.add(1, (0, 4096), at(245_000), at(245_500), at(250_000));
        log.finish();
        let l = sink.taken.lock().unwrap().clone();
        let lat: Vec<(u64, u8, u64)> = l.means[LAT].iter().map(|m| (m.t_ms, m.dir, m.ns)).collect();
        // Reads: 40, 49, 30 ms; the third (at 130 ms) closes the window with all three.
        assert_eq!(lat[0], (130, 0, 39_666_667));
        assert_eq!(lat[1], (250, 1, 5_000_000));
        assert_eq!(lat.len(), 2, "{lat:?}");
        let clat: Vec<u64> = l.means[CLAT].iter().map(|m| m.ns).collect();
        assert_eq!(clat, [38_666_667, 4_500_000]);
        // slat by submission time: reads submitted at 1, 51 and 101 ms, closing at 101.
        let slat: Vec<(u64, u8, u64)> = l.means[SLAT]
            .iter()
            .map(|m| (m.t_ms, m.dir, m.ns))
            .collect();
        assert_eq!(slat, [(101, 0, 1_000_000), (245, 1, 500_000)]);
    }

    #[test]
    fn latency_means_left_open_are_written_at_the_end() {
        let sink = Arc::new(Logs::default());
        let mut log = IoLog::new(
            LogSpec {
                window_ms: 60_000,
                offsets: false,
                epoch_clock: None,
                hist_ms: 0,
                hist_uncounted: false,
                hist_only: false,
            },
            false,
            sink.clone(),
        );
        let t0 = Stamp::now();
        log.start(t0);
        log.add(1, (0, 4096), t0, t0, t0.add_ns(3_000));
        log.add(0, (0, 4096), t0, t0, t0.add_ns(2_000));
        log.add(1, (0, 4096), t0, t0, t0.add_ns(4_000));
        log.finish();
        let l = sink.taken.lock().unwrap().clone();
        let lat: Vec<(u8, u64)> = l.means[LAT].iter().map(|m| (m.dir, m.ns)).collect();
        // Direction order, as fio flushes them.
        assert_eq!(lat, [(0, 2_000), (1, 3_500)]);
        assert_eq!(l.means[CLAT], l.means[LAT]);
        assert!(l.means[SLAT].is_empty(), "a blocking engine has no slat");
        assert!(l.windows.is_empty());
    }

    #[test]
    fn per_request_entries_keep_both_halves() {
        let sink = Arc::new(Logs::default());
        let mut log = IoLog::new(
            LogSpec {
                window_ms: 0,
                offsets: false,
                epoch_clock: None,
                hist_ms: 0,
                hist_uncounted: false,
                hist_only: false,
            },
            true,
            sink.clone(),
        );
        let t0 = Stamp::now();
        log.start(t0);
        let at = |us: u64| t0.add_ns(us * 1000);
        log.add(1, (0, 4096), at(1_000), at(2_200), at(3_500));
        log.add(2, (0, 8192), at(4_000), at(4_000), at(5_000));
        log.finish();
        let l = sink.taken.lock().unwrap().clone();
        let e = &l.requests;
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].t_ms, e[0].dir, e[0].lat_ns), (3, 1, 2_500_000));
        assert_eq!((e[0].slat_ns, e[0].clat_ns()), (1_200_000, 1_300_000));
        assert_eq!((e[0].queued, e[0].submitted_ms()), (true, 2));
        // A trim is done inside its call: no slat.
        assert_eq!(
            (e[1].queued, e[1].clat_ns(), e[1].bytes),
            (false, 1_000_000, 8192)
        );
        assert!(l.means.iter().all(Vec::is_empty));
        assert!(l.offsets.is_empty(), "offsets only when asked for");
    }

    #[test]
    fn offsets_are_kept_beside_their_requests_when_asked_for() {
        let sink = Arc::new(Logs::default());
        let spec = LogSpec {
            window_ms: 0,
            offsets: true,
            epoch_clock: None,
            hist_ms: 0,
            hist_uncounted: false,
            hist_only: false,
        };
        let mut log = IoLog::new(spec, false, sink.clone());
        let t0 = Stamp::now();
        log.start(t0);
        let at = |us: u64| t0.add_ns(us * 1000);
        log.add(1, (8192, 4096), at(1_000), at(1_000), at(2_000));
        log.add(1, (0, 4096), at(2_000), at(2_000), at(3_000));
        log.finish();
        let l = sink.taken.lock().unwrap().clone();
        assert_eq!(l.requests.len(), 2);
        assert_eq!(l.offsets, [8192, 0]);
    }
}
