//! The settings advice names. A rule says which setting to change ([`Knob`]); the front end
//! the user typed spells it in its own syntax (`--file-extra-flags=direct` for sysbench,
//! `direct=1` for fio) through [`Facts::knob`](crate::Facts::knob). Without a spelling the
//! advice reads in plain words.

/// A setting that advice tells the user to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Knob {
    /// Direct I/O (O_DIRECT): the page cache bypassed.
    Direct,
    /// O_DSYNC writes: each write durable before it returns.
    DataSync,
    /// The periodic fsync's interval.
    FsyncEvery,
    /// No periodic fsync.
    NoPeriodicFsync,
    /// No fsync at the end of the run.
    NoEndFsync,
    /// The number of files.
    FileCount,
    /// A single file (same total size).
    OneFile,
    /// The total size of the files.
    TotalSize,
    /// The number of threads.
    Threads,
    /// A single thread.
    OneThread,
    /// The run's length.
    Time,
    /// A warm-up excluded from the results.
    Warmup,
    /// A memory block of 1 GiB.
    LargeMemoryBlock,
    /// Random (incompressible) data.
    RandomFill,
    /// Requests in flight (an asynchronous engine).
    AsyncIo,
    /// The rows per table of a database test.
    TableSize,
    /// Periodic interval lines (throughput over time).
    ReportInterval,
    /// Request buffers in huge pages (physically contiguous per page).
    HugePageBuffers,
}

/// How a front end writes a [`Knob`].
pub type Spelling = fn(Knob) -> String;

impl Knob {
    /// The setting in plain words.
    pub fn plain(self) -> &'static str {
        match self {
            Knob::Direct => "direct I/O (O_DIRECT)",
            Knob::DataSync => "O_DSYNC writes",
            Knob::FsyncEvery => "the periodic fsync interval",
            Knob::NoPeriodicFsync => "no periodic fsync",
            Knob::NoEndFsync => "no fsync at the end",
            Knob::FileCount => "the number of files",
            Knob::OneFile => "a single file",
            Knob::TotalSize => "the same total size",
            Knob::Threads => "the number of threads",
            Knob::OneThread => "one thread",
            Knob::Time => "a longer run",
            Knob::Warmup => "a warm-up",
            Knob::LargeMemoryBlock => "a 1 GiB block",
            Knob::RandomFill => "random data",
            Knob::AsyncIo => "an asynchronous engine with requests in flight",
            Knob::TableSize => "larger tables",
            Knob::ReportInterval => "interval reports",
            Knob::HugePageBuffers => "I/O buffers in huge pages",
        }
    }
}
