//! fio's log files (write_bw_log, write_iops_log, write_lat_log, write_hist_log) from a
//! job's request log:
//! `<prefix>_bw.<n>.log`, `_iops`, `_lat`, `_clat`, `_slat`, one line per request
//! (`time_ms, value, ddir, bs, prio`; `time_ms, value, ddir, bs, offset, prio` under
//! log_offset) or, with log_avg_msec, per window and direction (bs and offset 0). Under
//! per_job_logs=0 the name has no job number and each job appends to it, as fio does.
//! Values as fio writes them: bandwidth in KiB/s (per request: fio's own arithmetic,
//! bytes × 10^6 / clat in ns), IOPS, latency in ns.
//!
//! As in fio 3.33: `lat` runs from when a request is queued to its completion, `clat` from
//! the end of its submission, `slat` is the submission (queued engines only: a request a
//! blocking engine or a trim does inside one call has no slat line, and its clat is its
//! lat). A request's slat line is dated when its submission ended, in submission order
//! (requests submitted within one millisecond keep their completion order).

use std::io::{self, Write};
use std::path::Path;

use plumb_fileio::iolog::{Logged, Mean, Request, CLAT, LAT, SLAT};

use super::translate::LogFiles;

/// A log line: time in ms, value, ddir, bs, offset.
type Line = (u64, u64, u8, u64, u64);

impl LogFiles {
    /// Write the log of `kind` (bw, iops, lat, clat, slat) of `prefix`, its times moved by
    /// `epoch_ms` (fio's log_unix_epoch).
    fn write(
        &self,
        prefix: &Path,
        kind: &str,
        epoch_ms: u64,
        lines: impl Iterator<Item = Line>,
    ) -> io::Result<()> {
        let mut name = prefix.as_os_str().to_os_string();
        if self.per_job {
            name.push(format!("_{kind}.{}.log", self.number));
        } else {
            name.push(format!("_{kind}.log"));
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .append(!self.per_job)
            .truncate(self.per_job)
            .open(name)?;
        let mut out = io::BufWriter::new(file);
        for (t, v, dir, bs, offset) in lines {
            let t = t + epoch_ms;
            if self.offsets {
                writeln!(out, "{t}, {v}, {dir}, {bs}, {offset}, 0")?;
            } else {
                writeln!(out, "{t}, {v}, {dir}, {bs}, 0")?;
            }
        }
        out.flush()
    }
}

/// fio's histogram log, `<prefix>_clat_hist.<n>.log`: `t, ddir, bs, ` then the buckets'
/// gains summed per 2^coarseness, in time order (created empty with no sample, as in fio).
fn write_hist(
    files: &LogFiles,
    prefix: &Path,
    epoch: u64,
    samples: &mut [plumb_fileio::hist_log::HistSample],
) -> io::Result<()> {
    samples.sort_by_key(|s| s.t_ms);
    let mut name = prefix.as_os_str().to_os_string();
    if files.per_job {
        name.push(format!("_clat_hist.{}.log", files.number));
    } else {
        name.push("_clat_hist.log");
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .append(!files.per_job)
        .truncate(files.per_job)
        .open(name)?;
    let mut out = io::BufWriter::new(file);
    for s in samples.iter() {
        write!(out, "{}, {}, {}", s.t_ms + epoch, s.dir, s.bs)?;
        for n in plumb_fileio::hist_log::line_counts(&s.gained, files.hist_coarseness) {
            write!(out, ", {n}")?;
        }
        writeln!(out)?;
    }
    out.flush()
}

fn per_request<'a>(
    requests: &'a [(Request, u64)],
    value: impl Fn(&Request) -> u64 + 'a,
) -> impl Iterator<Item = Line> + 'a {
    requests
        .iter()
        .map(move |(r, at)| (r.t_ms as u64, value(r), r.dir, r.bytes as u64, *at))
}

fn means(m: &[Mean]) -> impl Iterator<Item = Line> + '_ {
    m.iter().map(|m| (m.t_ms, m.ns, m.dir, 0, 0))
}

/// Write the files `files` asks for.
pub fn write(files: &LogFiles, mut log: Logged) -> io::Result<()> {
    // Each request with its offset (0 where none was kept), sorted stably: one thread's
    // requests stay in the order they completed.
    let mut offsets = std::mem::take(&mut log.offsets).into_iter();
    let mut req: Vec<(Request, u64)> = std::mem::take(&mut log.requests)
        .into_iter()
        .map(|r| (r, offsets.next().unwrap_or(0)))
        .collect();
    req.sort_by_key(|(r, _)| r.t_ms);
    log.windows.sort_by_key(|w| (w.t_ms, w.dir));
    for m in &mut log.means {
        m.sort_by_key(|m| m.t_ms);
    }
    let epoch = log.epoch_ms.unwrap_or(0);
    if let Some(p) = &files.hist {
        write_hist(files, p, epoch, &mut log.hist)?;
    }
    let w = files.window_ms.max(1);
    if files.window_ms == 0 {
        let req = &req;
        if let Some(p) = &files.bw {
            let bw = |r: &Request| match r.clat_ns() {
                0 => 0,
                clat => r.bytes as u64 * 1_000_000 / clat,
            };
            files.write(p, "bw", epoch, per_request(req, bw))?;
        }
        if let Some(p) = &files.iops {
            files.write(p, "iops", epoch, per_request(req, |_| 1))?;
        }
        if let Some(p) = &files.lat {
            files.write(p, "lat", epoch, per_request(req, |r| r.lat_ns))?;
            files.write(p, "clat", epoch, per_request(req, Request::clat_ns))?;
            let mut queued: Vec<&(Request, u64)> = req.iter().filter(|(r, _)| r.queued).collect();
            queued.sort_by_key(|(r, _)| r.submitted_ms());
            files.write(
                p,
                "slat",
                epoch,
                queued.iter().map(|(r, at)| {
                    let slat = r.slat_ns as u64;
                    (r.submitted_ms(), slat, r.dir, r.bytes as u64, *at)
                }),
            )?;
        }
        return Ok(());
    }
    if let Some(p) = &files.bw {
        let lines = log
            .windows
            .iter()
            .map(|e| (e.t_ms, e.bytes * 1000 / w / 1024, e.dir, 0, 0));
        files.write(p, "bw", epoch, lines)?;
    }
    if let Some(p) = &files.iops {
        let lines = log
            .windows
            .iter()
            .map(|e| (e.t_ms, e.count * 1000 / w, e.dir, 0, 0));
        files.write(p, "iops", epoch, lines)?;
    }
    if let Some(p) = &files.lat {
        files.write(p, "lat", epoch, means(&log.means[LAT]))?;
        files.write(p, "clat", epoch, means(&log.means[CLAT]))?;
        files.write(p, "slat", epoch, means(&log.means[SLAT]))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_fileio::iolog::Window;

    fn read(d: &Path, name: &str) -> String {
        std::fs::read_to_string(d.join(name)).unwrap()
    }

    fn req(t_ms: u32, dir: u8, lat_ns: u64, slat_ns: u32, before: u16) -> Request {
        Request {
            lat_ns,
            t_ms,
            bytes: 4096,
            slat_ns,
            submitted_ms_before: before,
            dir,
            queued: slat_ns > 0,
        }
    }

    #[test]
    fn per_request_lines() {
        let d = tempfile::tempdir().unwrap();
        let files = LogFiles {
            bw: Some(d.path().join("j")),
            iops: Some(d.path().join("j")),
            lat: Some(d.path().join("j")),
            hist: None,
            hist_coarseness: 0,
            number: 2,
            window_ms: 0,
            offsets: false,
            per_job: true,
        };
        // A blocking engine: clat is lat, no slat.
        let log = Logged {
            requests: vec![req(50, 0, 185_778, 0, 0), req(0, 0, 200_000, 0, 0)],
            ..Logged::default()
        };
        write(&files, log).unwrap();
        assert_eq!(
            read(d.path(), "j_bw.2.log"),
            "0, 20480, 0, 4096, 0\n50, 22047, 0, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "j_iops.2.log"),
            "0, 1, 0, 4096, 0\n50, 1, 0, 4096, 0\n"
        );
        let clat = "0, 200000, 0, 4096, 0\n50, 185778, 0, 4096, 0\n";
        assert_eq!(read(d.path(), "j_clat.2.log"), clat);
        assert_eq!(read(d.path(), "j_lat.2.log"), clat);
        assert_eq!(read(d.path(), "j_slat.2.log"), "");

        // Queued: the halves apart, bandwidth over clat, slat lines by submission time.
        let log = Logged {
            requests: vec![
                req(7, 1, 300_000, 100_000, 0),
                req(9, 0, 4_000_000, 1_000_000, 3),
            ],
            ..Logged::default()
        };
        write(&files, log).unwrap();
        assert_eq!(
            read(d.path(), "j_lat.2.log"),
            "7, 300000, 1, 4096, 0\n9, 4000000, 0, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "j_clat.2.log"),
            "7, 200000, 1, 4096, 0\n9, 3000000, 0, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "j_slat.2.log"),
            "6, 1000000, 0, 4096, 0\n7, 100000, 1, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "j_bw.2.log"),
            "7, 20480, 1, 4096, 0\n9, 1365, 0, 4096, 0\n"
        );
    }

    #[test]
    fn windowed_lines() {
        let d = tempfile::tempdir().unwrap();
        let files = LogFiles {
            bw: Some(d.path().join("j")),
            iops: Some(d.path().join("j")),
            lat: Some(d.path().join("j")),
            hist: None,
            hist_coarseness: 0,
            number: 2,
            window_ms: 200,
            offsets: false,
            per_job: true,
        };
        let mean = |t_ms, dir, ns| Mean { t_ms, dir, ns };
        let log = Logged {
            windows: vec![Window {
                t_ms: 200,
                dir: 0,
                bytes: 5 * 4096,
                count: 5,
            }],
            means: [
                vec![mean(230, 1, 300), mean(201, 0, 200_000)],
                vec![mean(201, 0, 150_000)],
                vec![],
            ],
            ..Logged::default()
        };
        write(&files, log).unwrap();
        assert_eq!(read(d.path(), "j_bw.2.log"), "200, 100, 0, 0, 0\n");
        assert_eq!(read(d.path(), "j_iops.2.log"), "200, 25, 0, 0, 0\n");
        assert_eq!(
            read(d.path(), "j_lat.2.log"),
            "201, 200000, 0, 0, 0\n230, 300, 1, 0, 0\n"
        );
        assert_eq!(read(d.path(), "j_clat.2.log"), "201, 150000, 0, 0, 0\n");
        assert_eq!(read(d.path(), "j_slat.2.log"), "");
    }
}
