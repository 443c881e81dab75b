//! plumb-observe: the evidence behind a benchmark's numbers.
//!
//! - [`target`]: path → mount → filesystem → block device → whole disks; tmpfs, ramdisks,
//!   overlay and network filesystems recognised; system disk vs other disks.
//! - [`host`]: CPU, memory, NUMA, governor, kernel, virtualisation, load when a run starts.
//! - [`diskstats`], [`procstat`], [`meminfo`], [`process`]: readers of the kernel's counters
//!   and the figures iostat -x and vmstat derive from them.
//! - [`device_write`]: whether a block device may be written (not mounted, not swap, no
//!   filesystem, volume or partition-table signature).
//! - [`residency`]: page-cache residency of files (cachestat or mincore).
//! - [`baseline`]: the load before a run, also taken on a thread while the plan's setup runs.
//! - [`session`]: [`Observer`] brackets a run, [`Observations`] is what it records.
//!
//! /proc and /sys are read directly (no external tools), from roots that tests replace.

pub mod baseline;
pub mod blockdev;
pub mod device_write;
pub mod diskstats;
pub mod error;
pub mod host;
pub mod meminfo;
pub mod mountinfo;
pub mod observations;
pub mod process;
pub mod procstat;
pub mod residency;
pub mod roots;
pub mod sampler;
pub mod session;
pub mod target;
pub mod virt;

pub use baseline::{Baseline, Ready, SetupOverlap};
pub use error::ObserveError;
pub use observations::Observations;
pub use roots::Roots;
pub use session::{ObserveSpec, Observer};
pub use target::{Target, TargetKind};
