//! fio 3.33's report layouts, byte for byte: the normal text ([`normal`]), JSON and json+
//! ([`json()`]), terse v2–v5 ([`terse()`]), and the lines fio prints before a run
//! ([`job_header_line`], [`starting_line`], [`layout_line`]).
//!
//! [`Fio`] is the pipeline's layout: [`adapt`] turns the run's record into a [`FioDoc`];
//! [`job`] holds what the fio front end keeps about each job for it.
//!
//! All of them render a [`FioDoc`], plain data filled from plumb's run record:
//! no I/O, no clock, no process lookups here. Figures fio derives at print time (bandwidth,
//! IOPS, shares of a group, percentages of a distribution, the "Run status group" lines)
//! are derived here from the model's counts, with fio's integer arithmetic and rounding.
//!
//! Not rendered (3.33 features the model does not carry): unified_rw_reporting's `mixed`,
//! per-priority latency, cache hits, trim block histograms, client/server.

mod adapt;
mod buffers;
mod dist;
mod groups;
mod header;
pub mod job;
mod json;
mod layout;
pub mod live;
mod mixed;
mod model;
mod normal;
mod num;
mod steady;
mod terse;

#[cfg(test)]
mod fixtures;

pub use groups::{group_runs, GroupDir, GroupRun};
pub use header::{job_header_line, layout_line, starting_line, JobHeader};
pub use json::json;
pub use layout::{ctime, depth_note_applies, parse_lines, prologue, Fio, DEPTH_NOTE};
pub use model::{
    Dir, DirStats, DiskAggr, DiskUtil, ErrorSummary, FioDoc, IoDepths, LatBuckets, LatStats,
    LatencyTarget, PercentileOptions, SampleStats, SyncStats, Unit,
};
pub use normal::normal;
pub use num::{num2str, percentile_precision, N2sUnit};
pub use terse::{terse, TerseVersion};
