//! `plumb hdparm -T/-t`: hdparm's timing lines from fio jobs plumb ran, then what each line
//! measures. Jobs are named `T:<device>` (cached reads) and `t:<device>` (buffered disk
//! reads); a device's lines follow its name, as hdparm prints them.

use std::fmt::Write;

use plumb_pipeline::{GroupRecord, JobRecord, Layout, Record};

pub struct Hdparm;

impl Hdparm {
    pub const LAYOUT: Hdparm = Hdparm;
}

/// hdparm's line for a finished job; hdparm's "MB" are MiB.
fn line(job: &JobRecord) -> Option<String> {
    let (kind, _) = job.name.split_once(':')?;
    let mib = job.counter("bytes_read") as f64 / (1u64 << 20) as f64;
    let secs = job.total_time_s.max(1e-9);
    let label = match kind {
        "T" => " Timing cached reads:   ",
        "t" => " Timing buffered disk reads: ",
        _ => return None,
    };
    Some(format!(
        "{label}{} MB in {secs:5.2} seconds = {:6.2} MB/sec",
        mib.round() as u64,
        mib / secs
    ))
}

impl Layout for Hdparm {
    fn report(&self, record: &Record, group: &GroupRecord) -> String {
        let mut out = String::new();
        for j in &group.jobs {
            let device = j.name.split_once(':').map_or("", |(_, d)| d);
            // A device's name comes before its first line (live, the earlier groups are in
            // the record; in a replay, this group is the first one with the device).
            let seen = record
                .groups
                .iter()
                .take_while(|g| !std::ptr::eq(*g, group))
                .flat_map(|g| &g.jobs)
                .any(|o| o.name.split_once(':').map(|(_, d)| d) == Some(device));
            if !seen {
                let _ = write!(out, "\n{device}:\n");
            }
            match (&j.error, line(j)) {
                (Some(e), _) => {
                    let _ = writeln!(out, " {}: failed: {e}", j.name);
                }
                (None, Some(l)) => {
                    let _ = writeln!(out, "{l}");
                }
                _ => {}
            }
        }
        out
    }

    fn finish(&self, record: &Record) -> String {
        let mut out = String::from("\nWhat these lines measure:\n");
        let kinds: Vec<&str> = record
            .jobs()
            .filter_map(|j| j.name.split_once(':').map(|(k, _)| k))
            .collect();
        if kinds.contains(&"T") {
            out.push_str(
                "  cached reads: the same 2 MiB read again and again from the page cache, so memory\n  \
                 and CPU speed, not the disk's.\n",
            );
        }
        if kinds.contains(&"t") {
            out.push_str(
                "  buffered disk reads: one sequential read from the start of the device, 2 MiB at a\n  \
                 time at queue depth 1, after the device's cached pages were dropped: the first few\n  \
                 seconds of the disk only, never random I/O, never writes.\n",
            );
        }
        out.push('\n');
        if let Some((g, o)) = record
            .groups
            .iter()
            .rev()
            .find_map(|g| g.observations.as_ref().map(|o| (g, o)))
        {
            if let Some(j) = g.jobs.first() {
                out.push_str(&crate::observations::section(j, o));
            }
        }
        let findings: Vec<plumb_advise::Finding> = crate::findings::distinct(record.jobs())
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        out.push_str(&crate::findings::section(&findings));
        out
    }
}
