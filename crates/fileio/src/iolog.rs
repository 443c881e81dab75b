//! Per-request logs (fio's write_bw_log, write_iops_log, write_lat_log): every completed
//! request of the measured time, or per-window averages when a window is set (fio's
//! log_avg_msec). Each worker thread keeps its own log; nothing is written while the job
//! runs, the front end writes the files afterwards in its own format.
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
}

/// One completed request (per-request logs), or one window of one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// Completion time (per request) or the window's end, ms since the measured time began.
    pub t_ms: u64,
    /// 0 read, 1 write.
    pub dir: u8,
    /// Request bytes (per request), or bytes in the window.
    pub bytes: u64,
    /// Latency (per request), or the latencies' sum in the window, ns.
    pub lat_ns: u64,
    /// 1 (per request), or requests in the window.
    pub count: u64,
}

/// Every worker's entries, gathered when each finishes.
#[derive(Default)]
pub struct Logs {
    pub entries: Mutex<Vec<LogEntry>>,
}

/// One worker thread's log.
pub struct IoLog {
    spec: LogSpec,
    from: Option<Stamp>,
    entries: Vec<LogEntry>,
    /// The open window's index and its sums per direction (read, write, trim).
    window: u64,
    open: [LogEntry; 3],
    sink: Arc<Logs>,
}

impl IoLog {
    pub fn new(spec: LogSpec, sink: Arc<Logs>) -> IoLog {
        IoLog {
            spec,
            from: None,
            entries: Vec::new(),
            window: 0,
            open: [LogEntry {
                t_ms: 0,
                dir: 0,
                bytes: 0,
                lat_ns: 0,
                count: 0,
            }; 3],
            sink,
        }
    }

    /// Start of the measured time (requests completing before it are not logged).
    pub fn start(&mut self, measured_from: Stamp) {
        self.from = Some(measured_from);
    }

    fn close_window(&mut self) {
        let end = (self.window + 1) * self.spec.window_ms;
        for (d, e) in self.open.iter_mut().enumerate() {
            if e.count > 0 {
                self.entries.push(LogEntry {
                    t_ms: end,
                    dir: d as u8,
                    ..*e
                });
            }
            *e = LogEntry {
                t_ms: 0,
                dir: d as u8,
                bytes: 0,
                lat_ns: 0,
                count: 0,
            };
        }
    }

    /// A request of `bytes` in direction `dir` (0 read, 1 write, 2 trim: fio's ddir) from
    /// `start` to `end`.
    #[inline]
    pub fn add(&mut self, dir: u8, bytes: u64, start: Stamp, end: Stamp) {
        let Some(from) = self.from else { return };
        if from.ns_since(end) > 0 {
            // Completed during the warm-up: fio keeps no log of its ramp either.
            return;
        }
        let t_ms = end.ns_since(from) / 1_000_000;
        let lat_ns = end.ns_since(start);
        if self.spec.window_ms == 0 {
            self.entries.push(LogEntry {
                t_ms,
                dir,
                bytes,
                lat_ns,
                count: 1,
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
        e.lat_ns += lat_ns;
        e.count += 1;
    }

    /// Hand the entries over (the last window only if it is complete, as fio drops a partial
    /// one).
    pub fn finish(&mut self) {
        let mut sink = self.sink.entries.lock().unwrap_or_else(|p| p.into_inner());
        sink.append(&mut self.entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_sum_each_direction() {
        let sink = Arc::new(Logs::default());
        let mut log = IoLog::new(LogSpec { window_ms: 100 }, sink.clone());
        let t0 = Stamp::now();
        log.start(t0);
        let at = |ms: u64| t0.add_ns(ms * 1_000_000);
        log.add(0, 4096, at(10), at(20));
        log.add(1, 8192, at(30), at(50));
        log.add(0, 4096, at(60), at(90));
        log.add(0, 4096, at(150), at(250));
        log.finish();
        let e = sink.entries.lock().unwrap().clone();
        // The window still open at the end (200-300 ms) is incomplete: left out.
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(
            (e[0].t_ms, e[0].dir, e[0].count, e[0].bytes),
            (100, 0, 2, 8192)
        );
        assert_eq!(e[0].lat_ns, 40_000_000);
        assert_eq!((e[1].t_ms, e[1].dir, e[1].count), (100, 1, 1));
    }

    #[test]
    fn per_request_entries() {
        let sink = Arc::new(Logs::default());
        let mut log = IoLog::new(LogSpec { window_ms: 0 }, sink.clone());
        let t0 = Stamp::now();
        log.start(t0);
        log.add(1, 4096, t0.add_ns(1_000_000), t0.add_ns(3_500_000));
        log.finish();
        let e = sink.entries.lock().unwrap().clone();
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].t_ms, e[0].dir, e[0].lat_ns), (3, 1, 2_500_000));
    }
}
