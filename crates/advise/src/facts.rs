//! What the rules look at. Every part is optional: a run fills what it has, and a rule whose
//! facts are missing says nothing.

use serde::{Deserialize, Serialize};

/// Everything known about one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Facts {
    /// cpu, memory, threads, mutex, fileio, ...
    pub test: String,
    pub threads: usize,
    /// Measured time (warm-up excluded), seconds.
    pub duration_s: f64,
    pub events: u64,
    /// Events per second of each report interval, in order (warm-up intervals excluded).
    pub interval_rates: Vec<f64>,
    /// Non-empty latency buckets of all events: [low_ns, high_ns, count].
    pub latency_buckets: Vec<[u64; 3]>,
    pub io: Option<IoFacts>,
    pub device: Option<DeviceFacts>,
    pub cache: Option<CacheFacts>,
    pub target: Option<TargetFacts>,
    pub host: Option<HostFacts>,
    pub process: Option<ProcessFacts>,
    pub memory_test: Option<MemoryTestFacts>,
    pub database: Option<DbFacts>,
    /// How the user's front end writes the settings advice names (plain words if none).
    #[serde(skip)]
    pub spelling: Option<crate::Spelling>,
}

impl Facts {
    /// `k` as the user's front end writes it.
    pub fn knob(&self, k: crate::Knob) -> String {
        match self.spelling {
            Some(spell) => spell(k),
            None => k.plain().to_string(),
        }
    }
}

/// What a file I/O test asked for and did (from its settings and counters).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IoFacts {
    /// The access in words ("random read/write"), for evidence.
    pub mode: String,
    /// Requests follow one another through the files (not random offsets).
    pub sequential: bool,
    /// O_DIRECT: the page cache is bypassed.
    pub direct: bool,
    /// Only the reads bypass the page cache (dd's iflag=direct).
    #[serde(default)]
    pub direct_reads: bool,
    /// Only the writes bypass the page cache (dd's oflag=direct).
    #[serde(default)]
    pub direct_writes: bool,
    /// O_SYNC or O_DSYNC: every write reaches stable storage before it returns.
    pub sync_writes: bool,
    /// fsync every N requests (0: never).
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub file_num: u64,
    pub total_size_bytes: u64,
    pub block_size_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time spent in fsync events (sum of their latencies), ns.
    pub fsync_time_ns: u64,
    /// Time spent in the end-of-run fsync, ns.
    pub final_fsync_ns: u64,
    /// Buffers were zero-filled (compressible, dedupable).
    pub zero_fill: bool,
    /// The engine that ran (sync, io_uring, libaio, mmap, null), for evidence.
    pub engine: String,
    /// The engine moves data (the null engine does not).
    pub engine_does_io: bool,
    /// The engine maps the files into memory: writes are stores, with no write call.
    pub engine_maps_files: bool,
    /// Threads in one file's write path at once, the writer included (from the request
    /// stream: exact for sequential modes' shared cursor, the mean a write meets for random
    /// modes; 0 without writes). None when the front end cannot tell.
    pub writers_per_file: Option<f64>,
    /// Requests whose call failed (fio counts them as issued, with no data): the ones a
    /// job went on after (continue_on_error) and the one that stopped it.
    #[serde(default)]
    pub failed_requests: u64,
}

/// Device-level I/O during the run (from the block device's counters).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceFacts {
    pub name: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
}

/// Page-cache residency of the data set and dirty memory.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CacheFacts {
    /// Share of the data set resident in the page cache at the start, 0..=1.
    pub resident_start: Option<f64>,
    pub resident_end: Option<f64>,
    pub dirty_start_bytes: Option<u64>,
    pub dirty_max_bytes: Option<u64>,
}

/// Where the files lived.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetFacts {
    pub path: String,
    /// disk, tmpfs, ramdisk, overlay, network, other.
    pub kind: String,
    pub fs_type: String,
    pub device: Option<String>,
    /// The filesystem compresses or deduplicates (btrfs compress=, zfs, vdo).
    pub compressing: bool,
    /// The device also holds the root filesystem.
    pub system_disk: bool,
    /// Other disks on the machine (names).
    pub other_disks: Vec<String>,
    pub rotational: Option<bool>,
    /// The disk's largest request, bytes (queue/max_sectors_kb).
    #[serde(default)]
    pub max_request_bytes: Option<u64>,
    /// The disk's most memory segments per request (queue/max_segments).
    #[serde(default)]
    pub max_segments: Option<u64>,
}

/// The machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostFacts {
    pub cpus: usize,
    pub mem_total_bytes: u64,
    /// cpufreq governor (powersave, performance, ...), when exposed.
    pub governor: Option<String>,
    /// Reported with a finding, never judged: it still carries the last minute's work.
    pub load_avg_1m_at_start: Option<f64>,
    /// CPU busy with other programs' work just before the start (plumb's own time left
    /// out), percent of all CPUs.
    pub busy_pct_at_start: Option<f64>,
    /// Other programs' runnable tasks just before the start (mean over the window).
    pub runnable_others_at_start: Option<f64>,
    /// The kernel's own threads runnable just before the start (mean over the window):
    /// writeback and I/O completion still at work. None where they could not be told apart
    /// (then they are among the others).
    pub runnable_kernel_at_start: Option<f64>,
    pub l1d_bytes: Option<u64>,
    pub l2_bytes: Option<u64>,
    pub l3_bytes: Option<u64>,
}

/// A database test: the database's settings and what it did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DbFacts {
    /// sqlite, mysql, pgsql.
    pub driver: String,
    /// The server runs on this host (always, for SQLite).
    pub local: bool,
    pub buffer_pool_bytes: Option<u64>,
    pub data_set_bytes: Option<u64>,
    /// Page requests the buffer pool served from memory during the run, 0..=1, with the
    /// number of requests.
    pub hit_ratio: Option<(f64, u64)>,
    /// Settings that let a commit return before it is durable, as `name=value`.
    pub relaxed_durability: Vec<String>,
    pub transactions: u64,
    pub write_queries: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
}

/// plumb's own process during the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProcessFacts {
    pub voluntary_ctx_switches: u64,
    pub involuntary_ctx_switches: u64,
    /// The busiest worker thread's CPU use, percent of one CPU.
    pub worker_max_cpu_pct: Option<f64>,
    /// The whole process's CPU use, percent of one CPU.
    #[serde(default)]
    pub cpu_pct: Option<f64>,
    pub tracer_attached: bool,
    pub tracer: Option<String>,
}

/// The memory test's parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MemoryTestFacts {
    pub block_size_bytes: u64,
    pub scope_global: bool,
}

impl IoFacts {
    pub fn reads_data(&self) -> bool {
        self.reads > 0
    }
    pub fn writes_data(&self) -> bool {
        self.writes > 0
    }
    /// Any mechanism that forces written data to stable storage during the run.
    pub fn syncs_during_run(&self) -> bool {
        self.sync_writes || self.fsync_all || (self.fsync_freq > 0 && self.fsyncs > 0)
    }
}
