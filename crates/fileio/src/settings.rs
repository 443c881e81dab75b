//! What a file-I/O run ran with and what it found out while running (the engine it ended up
//! with, the O_DIRECT alignment, the end-of-run fsync's wall time), as results keep it:
//! typed, so a saved result is read back by field. The JSON keys are the ones
//! `plumb.result` documents.

use std::sync::atomic::Ordering::Relaxed;

use serde::{Deserialize, Serialize};

use crate::spec::{ExtraFlags, FileioSpec, Fill, FsyncMode, IoMode, TestMode};
use crate::workload::FileioWorkload;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileioSettings {
    pub test_mode: Option<TestMode>,
    pub io_mode: IoMode,
    /// The engine that ran (after any fallback); none when the run never opened one.
    pub engine: Option<String>,
    /// Why the engine differs from the one asked for.
    pub engine_note: Option<String>,
    pub io_uring_registered_files: Option<bool>,
    pub io_uring_registered_buffers: Option<bool>,
    pub async_backlog: Option<u32>,
    /// The directory holding the files, absolute when it resolves; none for the null engine.
    pub dir: Option<String>,
    pub num_files: u32,
    pub file_size_bytes: u64,
    pub total_size_bytes: u64,
    pub block_size_bytes: u64,
    pub request_size_bytes: Option<u64>,
    pub extra_flags: Vec<String>,
    pub direct_alignment_bytes: Option<u32>,
    pub direct_alignment_source: Option<String>,
    /// Requests between periodic fsyncs (0: none).
    pub fsync_freq: u64,
    pub fsync_all: bool,
    /// Whether each thread fsynced its files at the end (write modes only).
    pub fsync_end: bool,
    /// Whether the end-of-run fsync was asked for, whatever the mode.
    pub fsync_end_requested: bool,
    pub fsync_mode: FsyncMode,
    pub merged_requests: u64,
    pub rw_ratio: f64,
    pub validate: bool,
    pub fill: Fill,
    pub end_fsync_wall_s: f64,
    /// Threads in one file's write path at once (0 for modes that do not write).
    pub writers_per_file: f64,
    /// seqwr only: bytes written after the measured time to complete the files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seqwr_completed_bytes: Option<u64>,
}

impl FileioSettings {
    /// The settings of `spec`, with what `workload` learnt when it opened (none before).
    pub fn new(spec: &FileioSpec, dir: Option<String>, w: Option<&FileioWorkload>) -> Self {
        let figures = w.map(|w| &w.figures);
        let uring = figures.filter(|_| w.is_some_and(|w| w.engine_name() == "io_uring"));
        let align = w.and_then(|w| w.direct_align());
        FileioSettings {
            test_mode: spec.mode,
            io_mode: spec.io_mode,
            engine: w.map(|w| w.engine_name().to_string()),
            engine_note: w.and_then(|w| w.fallback.clone()),
            io_uring_registered_files: uring.map(|f| f.uring_fixed_files.load(Relaxed) == 1),
            io_uring_registered_buffers: uring.map(|f| f.uring_fixed_bufs.load(Relaxed) == 1),
            async_backlog: (spec.io_mode == IoMode::Async).then_some(spec.async_backlog),
            dir: (spec.io_mode != IoMode::Null).then_some(dir).flatten(),
            num_files: spec.num_files,
            file_size_bytes: spec.file_size(),
            total_size_bytes: spec.file_size() * spec.num_files as u64,
            block_size_bytes: spec.block_size,
            request_size_bytes: spec.mode.map(|m| {
                if m.is_sequential() {
                    spec.request_size()
                } else {
                    spec.block_size
                }
            }),
            extra_flags: spec.flags.names().iter().map(|n| n.to_string()).collect(),
            direct_alignment_bytes: align.map(|a| a.0),
            direct_alignment_source: align.map(|a| a.1.name().to_string()),
            fsync_freq: if spec.fsync_all { 0 } else { spec.fsync_freq },
            fsync_all: spec.fsync_all,
            fsync_end: spec.end_fsync(),
            fsync_end_requested: spec.fsync_end,
            fsync_mode: spec.fsync_mode,
            merged_requests: spec.merged_requests,
            rw_ratio: spec.rw_ratio,
            validate: spec.validate,
            fill: spec.effective_fill(),
            end_fsync_wall_s: figures
                .map(|f| f.end_fsync_wall_ns.load(Relaxed) as f64 / 1e9)
                .unwrap_or(0.0),
            writers_per_file: crate::sharing::writers_per_file(spec, spec.threads),
            seqwr_completed_bytes: None,
        }
    }

    /// The open(2) flags the files were opened with.
    pub fn flags(&self) -> ExtraFlags {
        ExtraFlags::parse_list(&self.extra_flags).unwrap_or_default()
    }

    /// Whether the mode issues writes.
    pub fn writes(&self) -> bool {
        self.test_mode.is_some_and(TestMode::writes)
    }
}
