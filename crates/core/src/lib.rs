//! plumb-core: everything a benchmark run needs that does not depend on what is measured.
//!
//! - [`stats`]: latency histograms (HDR-style, ns, 3 significant digits) and exact summaries.
//! - [`random`]: per-thread random streams and sysbench's distributions.
//! - [`harness`]: worker threads, start barrier, stop conditions, warm-up, open-loop pacing,
//!   interval snapshots.
//! - [`steady`]: steady-state detection (fio's steadystate): a criterion over a window of
//!   per-second samples that stops a group of runs once it holds.
//! - [`workload`]: the contract a benchmark implements to run under the harness.
//! - [`result`]: the serde model of one job's measured result (carried by `plumb.result/2`).
//! - [`redact`]: credentials masked in command lines and messages.
//! - [`progress`]: where long steps report how far they got.
//! - [`size`]: sysbench-style size parsing ("8K", "4G").

pub mod clock;
pub mod harness;
pub mod progress;
pub mod random;
pub mod rawsys;
pub mod redact;
pub mod result;
pub mod rseq;
pub mod size;
pub mod stats;
pub mod steady;
pub mod workload;

pub use harness::{run, Arrivals, RunConfig, RunOutcome, StopCause, StopFlag, Together};
pub use workload::{KindId, OpKind, Poll, Ticket, Worker, WorkerCtx, Workload, WorkloadError};
