//! Threads and files getting in each other's way, and plumb getting in the way.

use crate::Knob;
use crate::{Facts, Finding, Severity};

fn ctx_per_op(f: &Facts) -> Option<f64> {
    let p = f.process.as_ref()?;
    (f.events > 0)
        .then(|| (p.voluntary_ctx_switches + p.involuntary_ctx_switches) as f64 / f.events as f64)
}

/// Many files for few threads (seed 000: 128 files on 2 cores lost a third of the throughput
/// to fsync storms and context switches compared with one file).
pub fn many_files(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    let threads = f.threads.max(1) as u64;
    if io.file_num < 16 || io.file_num < 4 * threads {
        return None;
    }
    let cs = ctx_per_op(f);
    let per_file_fsyncs = io.fsyncs > 0 && !io.fsync_all;
    if !per_file_fsyncs && cs.is_none_or(|c| c < 1.0) {
        return None;
    }
    let mut x = Finding::new(
        "many-files",
        Severity::Caution,
        format!(
            "{} files for {} thread(s): switching between files multiplies fsyncs and context switches, which lowers throughput compared with one file of the same total size.",
            io.file_num, threads
        ),
    )
    .evidence("files", io.file_num)
    .evidence("threads", threads);
    if let Some(c) = cs {
        x = x.evidence("context switches per operation", format!("{c:.2}"));
    }
    if per_file_fsyncs {
        x = x.evidence("fsyncs", io.fsyncs);
    }
    Some(x.advice(format!(
        "Compare with {} ({}): if it is much faster, the file count, not the disk, limited this result.",
        f.knob(Knob::OneFile),
        f.knob(Knob::TotalSize)
    )))
}

/// Several threads writing one file through the page cache serialise on the file's inode
/// lock (seed 002). Decided from how many threads the request stream puts in one file's write
/// path at once, not from files against threads: in sequential modes every thread follows one
/// cursor, so all of them write the same file whatever `--file-num` is.
pub fn shared_file_writers(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    let writers = io.writers_per_file?;
    // mmap writes are memory stores (no write call, no inode lock); null does no I/O.
    if writers < 2.0 || io.direct || !io.writes_data() || io.engine_maps_files || !io.engine_does_io
    {
        return None;
    }
    let sequential = io.sequential;
    let (what, advice) = if sequential {
        (
            "In sequential modes every thread takes the next request of one shared cursor, so the threads wrote the same file at the same time",
            format!(
                "Measure sequential writes with {} (more threads only queue on the cursor's file), or use {}, which does not hold the lock for the whole write.",
                f.knob(Knob::OneThread),
                f.knob(Knob::Direct)
            ),
        )
    } else {
        (
            "Random writes of several threads landed in the same file at the same time",
            format!(
                "Use more files than threads ({} at least {}) or {}, which does not hold the lock for the whole write.",
                f.knob(Knob::FileCount),
                f.knob(Knob::Threads),
                f.knob(Knob::Direct)
            ),
        )
    };
    Some(
        Finding::new(
            "shared-file-writers",
            Severity::Caution,
            format!("{what}: buffered writes to one file take its inode lock, so the threads queued behind each other instead of writing in parallel."),
        )
        .evidence("threads writing one file at once", format!("{writers:.1}"))
        .evidence("threads", f.threads)
        .evidence("files", io.file_num)
        .evidence("mode", &io.mode)
        .advice(advice),
    )
}

/// A worker thread was busy nearly all the time in an I/O test: plumb (system calls, copies)
/// was the limit, not the device.
pub fn plumb_bottleneck(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    let cpu = f.process.as_ref()?.worker_max_cpu_pct?;
    if cpu < 90.0 || !io.engine_does_io {
        return None;
    }
    Some(
        Finding::new(
            "plumb-cpu-bound",
            Severity::Caution,
            "A worker thread was busy on the CPU nearly all the time: the run was limited by the CPU work of issuing I/O (or copying cached data), not by the device.",
        )
        .evidence("busiest worker CPU", format!("{cpu:.0}% of one CPU"))
        .evidence("engine", &io.engine)
        .advice(format!(
            "Add threads or in-flight I/Os ({}), or use {} so the device, not memory copies, is measured.",
            f.knob(Knob::AsyncIo),
            f.knob(Knob::Direct)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scenario::fileio;

    #[test]
    fn sysbench_default_file_count_with_fsyncs_triggers() {
        let mut f = fileio("rndrw");
        let io = f.io.as_mut().unwrap();
        io.file_num = 128;
        io.fsync_freq = 100;
        io.fsyncs = 100_000;
        let x = many_files(&f).unwrap();
        assert!(x.advice.contains("a single file"));
    }

    #[test]
    fn one_file_is_clean() {
        assert!(many_files(&fileio("rndrw")).is_none());
        let mut f = fileio("rndrd");
        f.io.as_mut().unwrap().file_num = 128;
        f.process.as_mut().unwrap().voluntary_ctx_switches = 1000;
        assert!(
            many_files(&f).is_none(),
            "no fsyncs and few context switches"
        );
    }

    fn writers(mode: &str, threads: usize, files: u64, writers: f64) -> Facts {
        let mut f = fileio(mode);
        f.threads = threads;
        let io = f.io.as_mut().unwrap();
        io.direct = false;
        io.file_num = files;
        io.writers_per_file = Some(writers);
        f
    }

    #[test]
    fn sequential_threads_on_one_cursor_trigger_whatever_the_file_count() {
        // Seed 002: 16 threads, 16 files, seqrewr, buffered: all 16 in one file at once.
        let f = writers("seqrewr", 16, 16, 16.0);
        let x = shared_file_writers(&f).unwrap();
        assert!(x.message.contains("shared cursor"), "{}", x.message);
        assert!(x.advice.contains("one thread"));
        let mut d = f.clone();
        d.io.as_mut().unwrap().direct = true;
        assert!(shared_file_writers(&d).is_none(), "direct I/O");
        let mut m = f.clone();
        m.io.as_mut().unwrap().engine_maps_files = true;
        assert!(
            shared_file_writers(&m).is_none(),
            "mmap stores take no lock"
        );
    }

    #[test]
    fn random_writers_crowding_a_file_trigger() {
        let x = shared_file_writers(&writers("rndwr", 8, 1, 8.0)).unwrap();
        assert!(x
            .advice
            .contains("the number of files at least the number of threads"));
    }

    #[test]
    fn writers_spread_over_files_are_clean() {
        // 16 threads, 16 files, random: a write meets 1.9 writers in its file on average.
        assert!(shared_file_writers(&writers("rndwr", 16, 16, 1.94)).is_none());
        // Fewer files than threads is not enough on its own: rndrw writes 2 requests in 5.
        assert!(shared_file_writers(&writers("rndrw", 2, 1, 1.4)).is_none());
        assert!(shared_file_writers(&writers("seqrd", 16, 1, 0.0)).is_none());
        let mut unknown = writers("seqrewr", 16, 1, 16.0);
        unknown.io.as_mut().unwrap().writers_per_file = None;
        assert!(
            shared_file_writers(&unknown).is_none(),
            "no stream facts: silent"
        );
    }

    #[test]
    fn busy_worker_triggers_and_idle_is_clean() {
        let mut f = fileio("rndrd");
        assert!(plumb_bottleneck(&f).is_none());
        f.process.as_mut().unwrap().worker_max_cpu_pct = Some(99.0);
        assert!(plumb_bottleneck(&f).is_some());
        f.io.as_mut().unwrap().engine_does_io = false;
        assert!(plumb_bottleneck(&f).is_none());
    }
}
