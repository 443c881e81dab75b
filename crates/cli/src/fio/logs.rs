//! fio's log files (write_bw_log, write_iops_log, write_lat_log) from a job's request log:
//! `<prefix>_bw.<n>.log`, `_iops`, `_lat`, `_clat`, `_slat`, one line per request
//! (`time_ms, value, ddir, bs, prio`) or, with log_avg_msec, per window and direction (bs 0).
//! Values as fio writes them: bandwidth in KiB/s (per request: bytes per ms of its
//! latency... fio's own arithmetic, bytes × 10^6 / ns), IOPS, latency in ns.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use plumb_fileio::iolog::LogEntry;

use super::translate::LogFiles;

fn file(prefix: &Path, kind: &str, n: u32) -> PathBuf {
    let mut name = prefix.as_os_str().to_os_string();
    name.push(format!("_{kind}.{n}.log"));
    PathBuf::from(name)
}

fn write_lines(
    path: &Path,
    entries: &[LogEntry],
    value: impl Fn(&LogEntry) -> u64,
    per_request: bool,
) -> io::Result<()> {
    let mut out = io::BufWriter::new(std::fs::File::create(path)?);
    for e in entries {
        let bs = if per_request { e.bytes } else { 0 };
        writeln!(out, "{}, {}, {}, {}, 0", e.t_ms, value(e), e.dir, bs)?;
    }
    out.flush()
}

/// Write the files `files` asks for. `split_latency`: the engine times requests around one
/// call (blocking engines), so fio's clat is the same figure as its lat; queued engines'
/// figure is fio's lat only, and their clat and slat files stay empty.
pub fn write(files: &LogFiles, mut entries: Vec<LogEntry>, split_latency: bool) -> io::Result<()> {
    entries.sort_by_key(|e| (e.t_ms, e.dir));
    let per_request = files.window_ms == 0;
    let w = files.window_ms.max(1);
    let n = files.number;
    if let Some(p) = &files.bw {
        write_lines(
            &file(p, "bw", n),
            &entries,
            |e| {
                if per_request {
                    e.bytes * 1_000_000 / e.lat_ns.max(1)
                } else {
                    e.bytes * 1000 / w / 1024
                }
            },
            per_request,
        )?;
    }
    if let Some(p) = &files.iops {
        write_lines(
            &file(p, "iops", n),
            &entries,
            |e| if per_request { 1 } else { e.count * 1000 / w },
            per_request,
        )?;
    }
    if let Some(p) = &files.lat {
        let mean = |e: &LogEntry| e.lat_ns / e.count.max(1);
        write_lines(&file(p, "lat", n), &entries, mean, per_request)?;
        let clat: &[LogEntry] = if split_latency { &entries } else { &[] };
        write_lines(&file(p, "clat", n), clat, mean, per_request)?;
        write_lines(&file(p, "slat", n), &[], mean, per_request)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_request_and_windowed_lines() {
        let d = tempfile::tempdir().unwrap();
        let e = |t_ms, dir, bytes, lat_ns, count| LogEntry {
            t_ms,
            dir,
            bytes,
            lat_ns,
            count,
        };
        let files = LogFiles {
            bw: Some(d.path().join("j")),
            iops: Some(d.path().join("j")),
            lat: Some(d.path().join("j")),
            number: 2,
            window_ms: 0,
        };
        write(
            &files,
            vec![e(50, 0, 4096, 185778, 1), e(0, 0, 4096, 200_000, 1)],
            true,
        )
        .unwrap();
        let bw = std::fs::read_to_string(d.path().join("j_bw.2.log")).unwrap();
        assert_eq!(bw, "0, 20480, 0, 4096, 0\n50, 22047, 0, 4096, 0\n");
        let iops = std::fs::read_to_string(d.path().join("j_iops.2.log")).unwrap();
        assert_eq!(iops, "0, 1, 0, 4096, 0\n50, 1, 0, 4096, 0\n");
        let clat = std::fs::read_to_string(d.path().join("j_clat.2.log")).unwrap();
        assert_eq!(clat, "0, 200000, 0, 4096, 0\n50, 185778, 0, 4096, 0\n");
        assert_eq!(
            std::fs::read_to_string(d.path().join("j_slat.2.log")).unwrap(),
            ""
        );

        let files = LogFiles {
            window_ms: 200,
            ..files
        };
        write(&files, vec![e(200, 0, 5 * 4096, 5 * 200_000, 5)], false).unwrap();
        let bw = std::fs::read_to_string(d.path().join("j_bw.2.log")).unwrap();
        assert_eq!(bw, "200, 100, 0, 0, 0\n");
        let iops = std::fs::read_to_string(d.path().join("j_iops.2.log")).unwrap();
        assert_eq!(iops, "200, 25, 0, 0, 0\n");
        let lat = std::fs::read_to_string(d.path().join("j_lat.2.log")).unwrap();
        assert_eq!(lat, "200, 200000, 0, 0, 0\n");
        assert_eq!(
            std::fs::read_to_string(d.path().join("j_clat.2.log")).unwrap(),
            ""
        );
    }
}
