//! fileio's report: sysbench's "File operations" and "Throughput" blocks, its interval
//! line, and plumb's own section (engine actually used, directory, data, end-of-run fsync).

use std::fmt::Write;

use plumb_core::result::{IntervalResult, RunResult};
use plumb_core::size::{format_compact, format_sysbench, MIB};
use plumb_fileio::access::{Access, Mix, Order};
use plumb_fileio::settings::FileioSettings;
use plumb_fileio::spec::Fill;

use crate::sysbench::{col34, interval_percentiles};

fn per_s(n: f64, secs: f64) -> f64 {
    n / secs.max(1e-9)
}

/// Operations of one kind completed in the run.
fn count(r: &RunResult, kind: &str) -> u64 {
    r.operation(kind).map(|o| o.count).unwrap_or(0)
}

pub(crate) fn block(out: &mut String, r: &RunResult) {
    let t = r.total_time_s;
    // sysbench counts the end-of-run fsyncs in fsyncs/s.
    let fsyncs = count(r, "fsync") + r.counter("end_fsyncs");
    // sysbench starts this block with an empty line.
    let _ = writeln!(out);
    let _ = writeln!(out, "File operations:");
    col34(
        out,
        "reads/s:",
        &format!("{:.2}", per_s(count(r, "read") as f64, t)),
    );
    col34(
        out,
        "writes/s:",
        &format!("{:.2}", per_s(count(r, "write") as f64, t)),
    );
    col34(out, "fsyncs/s:", &format!("{:.2}", per_s(fsyncs as f64, t)));
    let _ = writeln!(out);
    let _ = writeln!(out, "Throughput:");
    col34(
        out,
        "read, MiB/s:",
        &format!(
            "{:.2}",
            per_s(r.counter("bytes_read") as f64 / MIB as f64, t)
        ),
    );
    col34(
        out,
        "written, MiB/s:",
        &format!(
            "{:.2}",
            per_s(r.counter("bytes_written") as f64 / MIB as f64, t)
        ),
    );
    let _ = writeln!(out);
}

/// `reads: X MiB/s writes: Y MiB/s fsyncs: Z/s latency (ms,95%): 0.009`
pub(crate) fn interval_body(i: &IntervalResult, drop_in: bool) -> String {
    let len = i.length_s;
    let mut s = format!(
        "reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s",
        per_s(i.counter("bytes_read") as f64 / MIB as f64, len),
        per_s(i.counter("bytes_written") as f64 / MIB as f64, len),
        per_s(i.operation("fsync") as f64, len),
    );
    match interval_percentiles(i, 3) {
        Some((names, vals)) => {
            let _ = write!(s, " latency (ms,{names}): {vals}");
        }
        // --percentile=0: sysbench still prints the field, with its histogram's lowest
        // bound.
        None if drop_in => s.push_str(" latency (ms,0%): 0.001"),
        None => {}
    }
    s
}

pub(crate) fn plumb_block(out: &mut String, r: &RunResult, w: &FileioSettings) {
    let _ = writeln!(out, "File I/O (plumb):");
    {
        let mut e = w.engine.clone();
        match (w.registered_files, w.registered_buffers) {
            (Some(true), Some(true)) => e.push_str(" (registered files and buffers)"),
            (Some(true), _) => e.push_str(" (registered files)"),
            (_, Some(true)) => e.push_str(" (registered buffers)"),
            _ => {}
        }
        if w.engine_caps.queued {
            let _ = write!(e, ", {} in flight per thread", w.queue_depth);
        }
        col34(out, "engine:", &e);
        if let Some(note) = &w.engine_note {
            col34(out, "", note);
        }
    }
    if let Some(dir) = &w.dir {
        col34(
            out,
            "files:",
            &format!(
                "{} ({} × {})",
                dir,
                w.num_files,
                format_compact(w.file_size_bytes)
            ),
        );
    }
    let what = match w.fill {
        Fill::Random => "random, incompressible",
        Fill::Zero => "zeros (compressible: flatters compressing storage)",
        Fill::Validate => "checksummed blocks (--validate)",
        Fill::Compressible { .. } => "random, partly zeroed (compressible)",
        Fill::Repeated { .. } => "the same buffers again and again (deduplicable)",
        Fill::Pattern => "a byte pattern over and over (compressible, deduplicable)",
    };
    col34(out, "data written:", what);
    if let Some(a) = w.direct_alignment_bytes {
        col34(
            out,
            "O_DIRECT alignment:",
            &format!(
                "{a} bytes ({})",
                w.direct_alignment_source.as_deref().unwrap_or("?")
            ),
        );
    }
    let end = r.counter("end_fsyncs");
    if end > 0 {
        col34(
            out,
            "end-of-run fsync:",
            &format!(
                "{end} fsyncs, {:.4}s (slowest thread; inside total time, not events)",
                w.end_fsync_wall_s
            ),
        );
    }
    if let Some(b) = w.seqwr_completed_bytes.filter(|b| *b > 0) {
        col34(
            out,
            "seqwr completion:",
            &format!(
                "wrote the remaining {} after the measurement, so the next run finds full files",
                format_compact(b)
            ),
        );
    }
    let _ = writeln!(out);
}

/// What sysbench prints after "Doing" for the mode that has this access.
fn sysbench_words(a: &Access) -> &'static str {
    match (a.order, a.mix) {
        (Order::Sequential, Mix::Write) if a.creates_files => "sequential write (creation)",
        (Order::Sequential, Mix::Write) => "sequential rewrite",
        (Order::Sequential, _) => "sequential read",
        (Order::Random { .. }, Mix::Read) => "random read",
        (Order::Random { .. }, Mix::Write) => "random write",
        (Order::Random { .. }, Mix::Interleaved { .. } | Mix::Share { .. }) => "random r/w",
        // sysbench has no trims; plumb's own words for a record that holds them.
        (Order::Random { .. }, Mix::Trim | Mix::TrimWrite) => a.describe(),
    }
}

/// The open flags as sysbench prints them after "Extra file open flags:".
fn open_flag_words(s: &FileioSettings) -> String {
    let f = s.flags();
    // sysbench appends "sync " and "dsync " with their space, "directio" without.
    let words: String = [
        (f.sync, "sync "),
        (f.dsync, "dsync "),
        (f.direct, "directio"),
    ]
    .into_iter()
    .filter_map(|(on, w)| on.then_some(w))
    .collect();
    if words.is_empty() {
        "(none)".into()
    } else {
        words
    }
}

/// The lines sysbench prints before fileio's workers start. `events` is the run's event
/// limit (sysbench's "Number of IO requests"); `plumb_lines`: with the engine that ran and
/// where the files are.
pub(crate) fn header(
    s: &FileioSettings,
    events: u64,
    plumb_lines: bool,
    given_ratio: Option<f64>,
) -> String {
    // Without an access (prepare's settings), sysbench describes its default mode.
    let access = s.access.unwrap_or(Access::rand_read());
    let mut h = String::new();
    let mut line = |l: String| {
        h.push_str(&l);
        h.push('\n');
    };
    line(format!("Extra file open flags: {}", open_flag_words(s)));
    line(format!(
        "{} files, {} each",
        s.num_files,
        format_sysbench(s.file_size_bytes)
    ));
    line(format!(
        "{} total file size",
        format_sysbench(s.total_size_bytes)
    ));
    line(format!(
        "Block size {}",
        format_sysbench(s.block_size_bytes)
    ));
    if s.merged_requests > 0 {
        line(format!(
            "Merging requests up to {} for sequential IO.",
            format_sysbench(s.block_size_bytes * s.merged_requests)
        ));
    }
    if !access.is_sequential() {
        line(format!("Number of IO requests: {events}"));
        // Only rndrw uses a ratio; sysbench prints its option's value for every random mode.
        let ratio = match access.mix {
            Mix::Interleaved { reads_per_write } => reads_per_write,
            Mix::Read | Mix::Write | Mix::Share { .. } | Mix::Trim | Mix::TrimWrite => {
                given_ratio.unwrap_or(1.5)
            }
        };
        line(format!(
            "Read/Write ratio for combined random IO test: {ratio:.2}"
        ));
    }
    if s.fsync_freq > 0 {
        line(format!(
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            s.fsync_freq
        ));
    }
    if s.fsync_end_requested && !s.fsync_all {
        line("Calling fsync() at the end of test, Enabled.".into());
    }
    if s.fsync_all {
        line("Calling fsync() after each write operation.".into());
    }
    let caps = s.engine_caps;
    line(if !caps.does_io {
        "Using the null engine: no I/O, plumb's own cost only".into()
    } else if caps.maps_files {
        "Using fast mmaped I/O mode".into()
    } else if !caps.queued {
        "Using synchronous I/O mode".into()
    } else if !plumb_lines {
        "Using asynchronous I/O mode".into()
    } else {
        format!(
            "Using asynchronous I/O mode ({}, {} in flight per thread)",
            s.engine, s.queue_depth
        )
    });
    if s.validate {
        line("Using checksums validation.".into());
    }
    line(format!("Doing {} test", sysbench_words(&access)));
    if let Some(dir) = s.dir.as_ref().filter(|_| plumb_lines) {
        line(format!("Files in {dir}"));
    }
    h
}
