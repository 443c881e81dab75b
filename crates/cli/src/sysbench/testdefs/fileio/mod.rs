//! `plumb fileio`: sysbench's fileio options and commands, on plumb-fileio.

use std::path::PathBuf;
use std::sync::Arc;

use plumb_core::random::RandType;
use plumb_core::Workload;
use plumb_fileio::engine::uring;
use plumb_fileio::spec::{FileioSpec, Fill, FsyncMode, SyncPolicy};
use plumb_pipeline::jobs::fileio::FileioJob;
use plumb_pipeline::{Job, JobError, JobRecord, Settings, StepContext, Targets};

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::signals;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

mod modes;
mod words;

pub(crate) use modes::TEST_MODES;
use modes::{choose_async, engine_for, AsyncEngine, IoMode, TestMode};
use words::{job_error, notes, parse_extra_flags, usage};

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
    // What prepare lays out: how many files, how big, where, and with what in them.
    data_set: &["file-num", "file-total-size", "file-dir", "file-fill"],
    plan,
};

/// The fileio job, with what sysbench's front end adds around it: the checks and notes of
/// `run` (said only when a run starts, as sysbench does), and errors in sysbench's terms.
struct SysbenchFileio {
    job: FileioJob,
    /// Run under the name `sysbench` at this verbosity: a missing file is worded as
    /// sysbench words it.
    dropin: Option<u64>,
    /// `run` only: a combination sysbench's options cannot mean.
    run_refusal: Option<String>,
    /// `run` only: options given that have no effect in this combination.
    notes: Vec<String>,
    /// --file-rw-ratio: sysbench prints it in the header of every random mode, though only
    /// rndrw uses it.
    rw_ratio: f64,
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
        rand_shape: c.run.rand_shape,
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
        pattern: None,
        fill: if v.word("file-fill") == "zero" {
            Fill::Zero
        } else {
            Fill::Random
        },
        // sysbench allocates its buffers from the heap.
        buffers: Default::default(),
        threads: c.run.threads,
        // The shared sysbench file set in dir.
        job: None,
        placement: Default::default(),
    };
    spec.check_files().map_err(|e| usage(&e))?;
    // --file-async-engine means something with --file-io-mode=async only; said at `run`,
    // so prepare and cleanup of the same command line go ahead.
    let run_refusal = (io_mode != IoMode::Async && async_engine != AsyncEngine::Auto).then(|| {
        format!(
            "--file-async-engine only applies to --file-io-mode=async (got --file-io-mode={})",
            io_mode.name()
        )
    });
    let mut spec = spec;
    let mut fallback = None;
    if io_mode == IoMode::Async {
        let (engine, note) = choose_async(async_engine, uring::DEF.available)
            .map_err(|e| UsageError(e.to_string()))?;
        spec.engine = engine;
        fallback = note;
    }
    Ok(Box::new(SysbenchFileio {
        job: FileioJob::new(spec, fallback, signals::install()),
        dropin: c.dropin.then_some(c.verbosity),
        run_refusal,
        notes: mode
            .map(|m| notes(v, m, io_mode, fsync_mode))
            .unwrap_or_default(),
        rw_ratio,
    }))
}

impl TestPlan for SysbenchFileio {
    fn layout(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "file_rw_ratio": self.rw_ratio }))
    }
}

impl Job for SysbenchFileio {
    fn kind(&self) -> &'static str {
        self.job.kind()
    }
    fn prepare(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        self.job
            .prepare(ctx)
            .map_err(|e| job_error(self.job.spec(), self.dropin, e))
    }
    fn cleanup(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        self.job
            .cleanup(ctx)
            .map_err(|e| job_error(self.job.spec(), self.dropin, e))
    }
    fn data_set(&self) -> Option<String> {
        self.job.data_set()
    }
    fn workload(&self, notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        self.job
            .spec()
            .check_run()
            .map_err(|e| JobError::Usage(usage(&e).0))?;
        if let Some(r) = &self.run_refusal {
            return Err(JobError::Usage(r.clone()));
        }
        notes.extend(self.notes.iter().cloned());
        self.job
            .workload(notes)
            .map_err(|e| job_error(self.job.spec(), self.dropin, e))
    }
    fn settings(&self) -> Settings {
        self.job.settings()
    }
    fn targets(&self) -> Targets {
        self.job.targets()
    }
    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        self.job
            .after_run(job)
            .map_err(|e| job_error(self.job.spec(), self.dropin, e))
    }
}
