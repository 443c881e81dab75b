//! `plumb fileio`: sysbench's fileio options and commands, on plumb-fileio.

use std::path::PathBuf;

use plumb_fileio::spec::{
    AsyncEngine, ExtraFlags, FileioSpec, Fill, FsyncMode, IoMode, TestMode, TEST_MODES,
};
use plumb_pipeline::jobs::fileio::FileioJob;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::signals;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

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
    has_files: true,
    plan,
};

const FILEIO_OPTION_NAMES: &[&str] = &[
    "file-num",
    "file-block-size",
    "file-total-size",
    "file-test-mode",
    "file-io-mode",
    "file-async-backlog",
    "file-async-engine",
    "file-extra-flags",
    "file-fsync-freq",
    "file-fsync-all",
    "file-fsync-end",
    "file-fsync-mode",
    "file-merged-requests",
    "file-rw-ratio",
    "file-fill",
    "file-dir",
    "validate",
];

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
    let flags = ExtraFlags::parse_list(v.list("file-extra-flags")).map_err(|b| {
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
    let spec = FileioSpec {
        dir: PathBuf::from(dir),
        num_files: v.int("file-num") as u32,
        block_size: v.size("file-block-size"),
        total_size: v.size("file-total-size"),
        mode,
        io_mode: IoMode::parse(v.word("file-io-mode")).expect("checked choice"),
        async_engine: AsyncEngine::parse(v.word("file-async-engine")).expect("checked choice"),
        async_backlog: v.int("file-async-backlog") as u32,
        flags,
        fsync_freq: v.int("file-fsync-freq"),
        fsync_all: v.flag("file-fsync-all"),
        fsync_end: v.flag("file-fsync-end"),
        fsync_mode: if v.word("file-fsync-mode") == "fdatasync" {
            FsyncMode::Fdatasync
        } else {
            FsyncMode::Fsync
        },
        merged_requests: v.int("file-merged-requests"),
        rw_ratio: v.float("file-rw-ratio"),
        validate: v.flag("validate"),
        fill: if v.word("file-fill") == "zero" {
            Fill::Zero
        } else {
            Fill::Random
        },
        threads: c.run.threads,
        given: FILEIO_OPTION_NAMES
            .iter()
            .filter(|n| v.given(n))
            .map(|n| n.to_string())
            .collect(),
    };
    spec.check_files().map_err(|e| UsageError(e.0))?;
    Ok(Box::new(FileioJob::new(
        spec,
        c.run.rand_type,
        signals::install(),
    )))
}

impl TestPlan for FileioJob {}
