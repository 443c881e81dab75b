//! What a file-I/O job ran with, in the job model's terms, and what it found out while
//! running (the engine's registrations, the O_DIRECT alignment, the end-of-run fsync's wall
//! time), as results keep it: typed, so a saved result is read back by field. A layout says
//! it in its front end's words (sysbench's layout turns `access` back into "rndrw").

use std::sync::atomic::Ordering::Relaxed;

use serde::{Deserialize, Serialize};

use crate::access::Access;
use crate::engine::Caps;
use crate::spec::{FileioSpec, Fill, FsyncMode, OpenFlags};
use crate::workload::FileioWorkload;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileioSettings {
    /// What is read and written, in which order; none for prepare-only jobs.
    pub access: Option<Access>,
    /// The engine from the registry, and what it can do.
    pub engine: String,
    pub engine_caps: Caps,
    /// Why the engine differs from the one asked for.
    pub engine_note: Option<String>,
    /// Whether the engine registered its files and buffers with the kernel (engines that
    /// can; none before the run).
    pub registered_files: Option<bool>,
    pub registered_buffers: Option<bool>,
    /// Requests in flight per thread (1 for engines that do not queue).
    pub queue_depth: u32,
    /// The directory holding the files, absolute when it resolves; none for an engine that
    /// opens no files.
    pub dir: Option<String>,
    pub num_files: u32,
    pub file_size_bytes: u64,
    pub total_size_bytes: u64,
    pub block_size_bytes: u64,
    /// The size of one request: a block, or merged blocks in sequential orders.
    pub request_size_bytes: Option<u64>,
    pub merged_requests: u64,
    /// open(2) flags: sync, dsync, direct.
    pub extra_flags: Vec<String>,
    pub direct_alignment_bytes: Option<u32>,
    pub direct_alignment_source: Option<String>,
    /// A sync round every N requests (0: none).
    pub fsync_freq: u64,
    /// A sync after each write.
    pub fsync_all: bool,
    /// Whether each thread synced its files at the end (orders that write only).
    pub fsync_end: bool,
    /// Whether the end-of-run sync was asked for, whatever the access.
    pub fsync_end_requested: bool,
    pub fsync_mode: FsyncMode,
    pub validate: bool,
    pub fill: Fill,
    pub end_fsync_wall_s: f64,
    /// Threads in one file's write path at once (0 for accesses that do not write).
    pub writers_per_file: f64,
    /// Sequential writes into new files only: bytes written after the measured time to
    /// complete the files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seqwr_completed_bytes: Option<u64>,
    /// A job that names its own files (fio): its files, regions, sizes and passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Box<crate::spec::JobIo>>,
    /// CPUs, nice value and I/O priority of the threads, when set.
    #[serde(
        default,
        skip_serializing_if = "crate::placement::Placement::is_default"
    )]
    pub placement: crate::placement::Placement,
    /// Where the request buffers lived, when not on the heap.
    #[serde(default, skip_serializing_if = "is_heap")]
    pub buffer_memory: crate::buf::BufferMemory,
    /// For buffers asked to be in huge pages, once they were made: all the threads'
    /// buffer bytes, and how many of them the kernel backed with huge pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_page_bytes: Option<u64>,
}

fn is_heap(m: &crate::buf::BufferMemory) -> bool {
    *m == crate::buf::BufferMemory::Heap
}

impl FileioSettings {
    /// The settings of `spec`, with what `workload` learnt when it opened and ran (none
    /// before it opened).
    pub fn new(
        spec: &FileioSpec,
        dir: Option<String>,
        engine_note: Option<String>,
        w: Option<&FileioWorkload>,
    ) -> Self {
        let figures = w.map(|w| &w.figures);
        let registers = spec.engine.caps.registers;
        let registered = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed) == 1;
        let align = w.and_then(|w| w.direct_align());
        // (buffer bytes, of them in huge pages), once huge-page buffers were made.
        let huge_pages = figures
            .filter(|_| spec.buffers.huge())
            .map(|f| {
                (
                    f.buffer_bytes.load(Relaxed),
                    f.huge_page_bytes.load(Relaxed),
                )
            })
            .filter(|h| h.0 > 0);
        FileioSettings {
            access: spec.access,
            engine: spec.engine.name.to_string(),
            engine_caps: spec.engine.caps,
            engine_note,
            registered_files: figures
                .filter(|_| registers)
                .map(|f| registered(&f.registered_files)),
            registered_buffers: figures
                .filter(|_| registers)
                .map(|f| registered(&f.registered_bufs)),
            queue_depth: spec.depth() as u32,
            dir: spec.engine.caps.needs_files.then_some(dir).flatten(),
            num_files: spec.num_files,
            file_size_bytes: spec.file_size(),
            total_size_bytes: spec.file_size() * spec.num_files as u64,
            block_size_bytes: spec.block_size,
            request_size_bytes: spec.access.map(|a| {
                if a.is_sequential() {
                    spec.request_size()
                } else {
                    spec.block_size
                }
            }),
            merged_requests: spec.merged_requests,
            extra_flags: spec.flags.names().iter().map(|n| n.to_string()).collect(),
            direct_alignment_bytes: align.map(|a| a.0),
            direct_alignment_source: align.map(|a| a.1.name().to_string()),
            fsync_freq: spec.sync.every_requests,
            fsync_all: spec.sync.each_write,
            fsync_end: spec.end_fsync(),
            fsync_end_requested: spec.sync.at_end,
            fsync_mode: spec.sync.call,
            validate: spec.validate,
            fill: spec.effective_fill(),
            end_fsync_wall_s: figures
                .map(|f| f.end_fsync_wall_ns.load(Relaxed) as f64 / 1e9)
                .unwrap_or(0.0),
            writers_per_file: crate::sharing::writers_per_file(spec, spec.threads),
            seqwr_completed_bytes: None,
            job: spec.job.clone().map(Box::new),
            placement: spec.placement.clone(),
            buffer_memory: spec.buffers,
            buffer_bytes: huge_pages.map(|h| h.0),
            huge_page_bytes: huge_pages.map(|h| h.1),
        }
    }

    /// The open(2) flags the files were opened with.
    pub fn flags(&self) -> OpenFlags {
        let has = |n: &str| self.extra_flags.iter().any(|f| f == n);
        OpenFlags {
            sync: has("sync"),
            dsync: has("dsync"),
            direct: has("direct"),
        }
    }

    /// Whether the access writes.
    pub fn writes(&self) -> bool {
        self.access.is_some_and(|a| a.writes())
    }
}
