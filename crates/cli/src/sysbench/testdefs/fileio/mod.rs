//! `plumb fileio`: sysbench's fileio options and commands, on plumb-fileio.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use plumb_advise::{Facts, IoFacts};
use plumb_core::random::RandType;
use plumb_core::result::RunResult;
use plumb_core::Workload;
use plumb_fileio::engine::uring;
use plumb_fileio::fileset::cleanup::cleanup;
use plumb_fileio::fileset::open::complete_seqwr;
use plumb_fileio::fileset::prepare::prepare;
use plumb_fileio::spec::{FileioSpec, Fill, FsyncMode, SyncPolicy};
use plumb_fileio::FileioWorkload;
use serde_json::json;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::progress::Bar;
use crate::signals;
use crate::sysbench::common::{Common, Format};
use crate::sysbench::options::{opt, Kind, Opt, Values};

mod modes;
mod words;

use modes::{choose_async, engine_for, AsyncEngine, IoMode, TestMode, TEST_MODES};
use words::{cli_error, extra_flags_words, notes, parse_extra_flags, sb_size, usage};

const OPTIONS: &[Opt] = &[
    opt(
        "file-num",
        Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        "128",
        "number of files to create",
    ),
    opt(
        "file-block-size",
        Kind::Size,
        "16384",
        "block size to use in all IO operations",
    ),
    opt(
        "file-total-size",
        Kind::Size,
        "2G",
        "total size of files to create",
    ),
    opt(
        "file-test-mode",
        Kind::Text,
        "",
        "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}",
    ),
    opt(
        "file-io-mode",
        Kind::Choice(&["sync", "async", "mmap", "null"]),
        "sync",
        "file operations mode (null: no I/O at all, measures plumb's own cost)",
    ),
    opt(
        "file-async-backlog",
        Kind::Int { min: 1, max: 32768 },
        "128",
        "number of asynchronous operations to keep in flight per thread",
    ),
    opt(
        "file-async-engine",
        Kind::Choice(&["auto", "io_uring", "libaio"]),
        "auto",
        "kernel interface for --file-io-mode=async (auto: io_uring, else libaio)",
    ),
    opt(
        "file-extra-flags",
        Kind::List(&["sync", "dsync", "direct"]),
        "",
        "list of additional flags to use to open files",
    ),
    opt(
        "file-fsync-freq",
        Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        "100",
        "do fsync() after this number of requests (0 - don't use fsync())",
    ),
    opt(
        "file-fsync-all",
        Kind::Bool,
        "off",
        "do fsync() after each write operation",
    ),
    opt(
        "file-fsync-end",
        Kind::Bool,
        "on",
        "do fsync() at the end of test",
    ),
    opt(
        "file-fsync-mode",
        Kind::Choice(&["fsync", "fdatasync"]),
        "fsync",
        "which method to use for synchronization",
    ),
    opt(
        "file-merged-requests",
        Kind::Int {
            min: 0,
            max: 1 << 20,
        },
        "0",
        "merge at most this number of IO requests if possible (0 - don't merge)",
    ),
    opt(
        "file-rw-ratio",
        Kind::Float { min: 0.0, max: 1e9 },
        "1.5",
        "reads/writes ratio for combined test",
    ),
    opt(
        "file-fill",
        Kind::Choice(&["random", "zero"]),
        "random",
        "data written: random (incompressible) or zero (sysbench's)",
    ),
    opt(
        "file-dir",
        Kind::Text,
        ".",
        "directory holding the test files",
    ),
    opt(
        "validate",
        Kind::Bool,
        "off",
        "write checksummed blocks and check every block read",
    ),
];

pub static DEF: TestDef = TestDef {
    name: "fileio",
    description: "File I/O test",
    rand: RandUse::SeedAndType,
    options: OPTIONS,
    plan,
};

struct Plan {
    spec: FileioSpec,
    mode: Option<TestMode>,
    rw_ratio: f64,
    io_mode: IoMode,
    async_engine: AsyncEngine,
    /// Options given that have no effect in this combination (said out loud at run).
    notes: Vec<String>,
    /// Why the engine differs from the one asked for (io_uring unavailable).
    fallback: RefCell<Option<String>>,
    events: u64,
    text: bool,
    workload: RefCell<Option<Arc<FileioWorkload>>>,
    seqwr_completed: Cell<Option<u64>>,
}

fn plan(v: &Values, c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    let mode_word = v.word("file-test-mode");
    let mode = if mode_word.is_empty() {
        None
    } else {
        Some(TestMode::parse(mode_word).ok_or_else(|| {
            UsageError(format!(
                "invalid value for --file-test-mode: '{mode_word}' (allowed: {})",
                TEST_MODES.join(", ")
            ))
        })?)
    };
    let flags = parse_extra_flags(v.list("file-extra-flags")).map_err(|b| {
        UsageError(format!(
            "invalid value for --file-extra-flags: '{b}' (allowed: sync, dsync, direct)"
        ))
    })?;
    let dir = v.word("file-dir");
    if dir.is_empty() {
        return Err(UsageError(
            "--file-dir needs a directory name (default: the current directory)".into(),
        ));
    }
    let io_mode = IoMode::parse(v.word("file-io-mode")).expect("checked choice");
    let async_engine = AsyncEngine::parse(v.word("file-async-engine")).expect("checked choice");
    let fsync_all = v.flag("file-fsync-all");
    let fsync_mode = if v.word("file-fsync-mode") == "fdatasync" {
        FsyncMode::Fdatasync
    } else {
        FsyncMode::Fsync
    };
    let rw_ratio = v.float("file-rw-ratio");
    let spec = FileioSpec {
        dir: PathBuf::from(dir),
        num_files: v.int("file-num") as u32,
        block_size: v.size("file-block-size"),
        total_size: v.size("file-total-size"),
        // Random offsets are uniform unless --rand-type is given (sysbench ignores it).
        access: mode.map(|m| {
            m.access(rw_ratio)
                .with_dist(c.run.rand_type.unwrap_or(RandType::Uniform))
        }),
        engine: engine_for(io_mode, async_engine),
        // sysbench has no engine options: each engine keeps its defaults.
        engine_options: Default::default(),
        queue_depth: v.int("file-async-backlog") as u32,
        flags,
        // --file-fsync-all replaces the periodic and the final fsync, as in sysbench.
        sync: SyncPolicy {
            every_requests: if fsync_all {
                0
            } else {
                v.int("file-fsync-freq")
            },
            each_write: fsync_all,
            at_end: v.flag("file-fsync-end") && !fsync_all,
            call: fsync_mode,
        },
        merged_requests: v.int("file-merged-requests"),
        validate: v.flag("validate"),
        fill: if v.word("file-fill") == "zero" {
            Fill::Zero
        } else {
            Fill::Random
        },
        threads: c.run.threads,
    };
    spec.check_files().map_err(|e| usage(&e))?;
    Ok(Box::new(Plan {
        spec,
        mode,
        rw_ratio,
        io_mode,
        async_engine,
        notes: mode
            .map(|m| notes(v, m, io_mode, fsync_mode))
            .unwrap_or_default(),
        fallback: RefCell::new(None),
        events: c.run.event_limit,
        text: c.format == Format::Text,
        workload: RefCell::new(None),
        seqwr_completed: Cell::new(None),
    }))
}

/// A directory as the report names it: absolute when it can be resolved.
fn display(dir: &std::path::Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

impl Plan {
    /// The directory holding the files (none for the null engine, which opens none).
    fn target_dir(&self) -> Option<PathBuf> {
        self.spec
            .engine
            .caps
            .needs_files
            .then(|| self.spec.dir.clone())
    }

    fn log(&self) -> Box<dyn Write> {
        // With --format=json, stdout carries the JSON document only.
        if self.text {
            Box::new(std::io::stdout())
        } else {
            Box::new(std::io::stderr())
        }
    }

    fn dir_display(&self) -> String {
        display(&self.spec.dir)
    }
}

impl TestPlan for Plan {
    fn name(&self) -> &'static str {
        "fileio"
    }

    fn header(&self) -> String {
        let s = &self.spec;
        let mode = self.mode.unwrap_or(TestMode::RndRd);
        let mut h = String::new();
        let mut line = |l: String| {
            h.push_str(&l);
            h.push('\n');
        };
        if s.validate {
            line("Validation checks: on.\n".into());
        }
        line(format!(
            "Extra file open flags: {}",
            extra_flags_words(s.flags)
        ));
        line(format!(
            "{} files, {} each",
            s.num_files,
            sb_size(s.file_size())
        ));
        line(format!(
            "{} total file size",
            sb_size(s.file_size() * s.num_files as u64)
        ));
        line(format!("Block size {}", sb_size(s.block_size)));
        if s.merged_requests > 0 {
            line(format!(
                "Merging requests up to {} for sequential IO.",
                sb_size(s.request_size())
            ));
        }
        if !mode.is_sequential() {
            line(format!("Number of IO requests: {}", self.events));
            line(format!(
                "Read/Write ratio for combined random IO test: {:.2}",
                self.rw_ratio
            ));
        }
        let freq = s.sync.every_requests;
        if freq > 0 {
            line(format!(
                "Periodic FSYNC enabled, calling fsync() each {freq} requests."
            ));
        }
        if s.sync.at_end {
            line("Calling fsync() at the end of test, Enabled.".into());
        }
        if s.sync.each_write {
            line("Calling fsync() after each write operation.".into());
        }
        let engine = self
            .workload
            .borrow()
            .as_ref()
            .map(|w| w.engine_name())
            .unwrap_or("sync");
        line(match self.io_mode {
            IoMode::Sync => "Using synchronous I/O mode".into(),
            IoMode::Async => format!(
                "Using asynchronous I/O mode ({engine}, {} in flight per thread)",
                s.queue_depth
            ),
            IoMode::Mmap => "Using fast mmaped I/O mode".into(),
            IoMode::Null => "Using the null engine: no I/O, plumb's own cost only".into(),
        });
        if s.validate {
            line("Using checksums validation.".into());
        }
        line(format!("Doing {} test", mode.description()));
        if let Some(dir) = self.target_dir() {
            line(format!("Files in {}", display(&dir)));
        }
        h
    }

    fn workload(&self) -> anyhow::Result<Arc<dyn Workload>> {
        // From here on a Ctrl-C must end in a report, not kill the process mid-setup.
        signals::install();
        self.spec.check_run().map_err(|e| usage(&e))?;
        if self.io_mode != IoMode::Async && self.async_engine != AsyncEngine::Auto {
            return Err(UsageError(format!(
                "--file-async-engine only applies to --file-io-mode=async (got --file-io-mode={})",
                self.io_mode.name()
            ))
            .into());
        }
        for n in &self.notes {
            eprintln!("plumb: note: {n}");
        }
        let mut spec = self.spec.clone();
        if self.io_mode == IoMode::Async {
            let (engine, fallback) = choose_async(self.async_engine, uring::DEF.available)?;
            spec.engine = engine;
            *self.fallback.borrow_mut() = fallback;
        }
        let w = Arc::new(FileioWorkload::open(spec).map_err(|e| cli_error(&self.spec, e))?);
        if let Some(f) = self.fallback.borrow().as_ref() {
            eprintln!("plumb: note: {f}");
        }
        *self.workload.borrow_mut() = Some(w.clone());
        Ok(w)
    }

    fn workload_json(&self) -> serde_json::Value {
        let s = &self.spec;
        let w = self.workload.borrow();
        let w = w.as_ref();
        let figures = w.map(|w| w.figures.clone());
        let end_wall = figures
            .as_ref()
            .map(|f| {
                f.end_fsync_wall_ns
                    .load(std::sync::atomic::Ordering::Relaxed)
            })
            .unwrap_or(0);
        let registers = figures
            .as_ref()
            .filter(|_| w.is_some_and(|w| w.engine().caps.registers));
        json!({
            "test_mode": self.mode.map(TestMode::name),
            "io_mode": self.io_mode.name(),
            "engine": w.map(|w| w.engine_name()),
            "engine_note": w.and_then(|_| self.fallback.borrow().clone()),
            "io_uring_registered_files": registers.map(|f| f.registered_files.load(std::sync::atomic::Ordering::Relaxed) == 1),
            "io_uring_registered_buffers": registers.map(|f| f.registered_bufs.load(std::sync::atomic::Ordering::Relaxed) == 1),
            "async_backlog": (self.io_mode == IoMode::Async).then_some(s.queue_depth),
            "dir": self.target_dir().map(|_| self.dir_display()),
            "num_files": s.num_files,
            "file_size_bytes": s.file_size(),
            "total_size_bytes": s.file_size() * s.num_files as u64,
            "block_size_bytes": s.block_size,
            "request_size_bytes": self.mode.map(|m| if m.is_sequential() { s.request_size() } else { s.block_size }),
            "extra_flags": s.flags.names(),
            "direct_alignment_bytes": w.and_then(|w| w.direct_align()).map(|a| a.0),
            "direct_alignment_source": w.and_then(|w| w.direct_align()).map(|a| a.1.name()),
            "fsync_freq": s.sync.every_requests,
            "fsync_all": s.sync.each_write,
            "fsync_end": s.end_fsync(),
            "fsync_mode": s.sync.call.name(),
            "merged_requests": s.merged_requests,
            "rw_ratio": self.rw_ratio,
            "validate": s.validate,
            "fill": s.effective_fill().name(),
            "end_fsync_wall_s": end_wall as f64 / 1e9,
        })
    }

    fn after_run(&self, result: &mut RunResult) -> anyhow::Result<()> {
        let Some(w) = self.workload.borrow().clone() else {
            return Ok(());
        };
        if self.mode != Some(TestMode::SeqWr) || !w.engine().caps.needs_files {
            return Ok(());
        }
        if result.status != plumb_core::result::Status::Completed {
            // Interrupted: leave the files as they are; the manifest says how far they go.
            return Ok(());
        }
        let stop = signals::install();
        let bytes = complete_seqwr(&self.spec, w.requests_issued(), &stop)
            .map_err(|e| cli_error(&self.spec, e))?;
        self.seqwr_completed.set(Some(bytes));
        if let Some(obj) = result.workload.as_object_mut() {
            obj.insert("seqwr_completed_bytes".into(), json!(bytes));
        }
        Ok(())
    }

    fn facts(&self, facts: &mut Facts, r: &RunResult) {
        let s = &self.spec;
        let op = |k: &str| r.operation(k).map(|o| o.count).unwrap_or(0);
        let w = self.workload.borrow();
        facts.io = Some(IoFacts {
            mode: self.mode.map(TestMode::name).unwrap_or_default().into(),
            direct: s.flags.direct,
            sync_writes: s.flags.sync || s.flags.dsync,
            fsync_freq: s.sync.every_requests,
            fsync_all: s.sync.each_write,
            fsync_end: s.end_fsync(),
            file_num: s.num_files as u64,
            total_size_bytes: s.file_size() * s.num_files as u64,
            block_size_bytes: s.block_size,
            reads: op("read"),
            writes: op("write"),
            fsyncs: op("fsync") + r.counter("end_fsyncs"),
            bytes_read: r.counter("bytes_read"),
            bytes_written: r.counter("bytes_written"),
            fsync_time_ns: r.operation("fsync").map(|o| o.latency.sum_ns).unwrap_or(0),
            final_fsync_ns: w
                .as_ref()
                .map(|w| {
                    w.figures
                        .end_fsync_wall_ns
                        .load(std::sync::atomic::Ordering::Relaxed)
                })
                .unwrap_or(0),
            zero_fill: s.effective_fill() == Fill::Zero,
            engine: w.as_ref().map(|w| w.engine_name()).unwrap_or("").into(),
        });
    }

    fn observe_targets(&self) -> (Option<PathBuf>, Vec<PathBuf>) {
        match self.target_dir() {
            Some(dir) => {
                let files = (0..self.spec.num_files)
                    .map(|i| dir.join(plumb_fileio::fileset::file_name(i)))
                    .collect();
                (Some(dir), files)
            }
            None => (None, Vec::new()),
        }
    }

    fn prepare(&self, _common: &Common) -> anyhow::Result<()> {
        let stop = signals::install();
        let mut log = self.log();
        let mut bar = Bar::new("Writing test files");
        prepare(&self.spec, &stop, &mut log, &mut bar).map_err(|e| cli_error(&self.spec, e))?;
        let _ = log.flush();
        Ok(())
    }

    fn cleanup(&self, _common: &Common) -> anyhow::Result<()> {
        let stop = signals::install();
        let mut log = self.log();
        cleanup(&self.spec, &stop, &mut log, &mut std::io::stderr())
            .map_err(|e| cli_error(&self.spec, e))?;
        let _ = log.flush();
        Ok(())
    }
}
