//! plumb-core: everything a benchmark run needs that does not depend on what is measured.
//!
//! - [`stats`]: latency histograms (HDR-style, ns, 3 significant digits) and exact summaries.
//! - [`random`]: per-thread random streams and sysbench's distributions.
//! - [`harness`]: worker threads, start barrier, stop conditions, warm-up, open-loop pacing,
//!   interval snapshots.
//! - [`workload`]: the contract a benchmark implements to run under the harness.
//! - [`result`]: the serde model of a finished run (`plumb.result/1`).
//! - [`redact`]: credentials masked in command lines and messages.
//! - [`size`]: sysbench-style size parsing ("8K", "4G").

pub mod clock;
pub mod harness;
pub mod random;
pub mod redact;
pub mod result;
pub mod size;
pub mod stats;
pub mod workload;

pub use harness::{run, RunConfig, RunOutcome, StopCause, StopFlag};
pub use workload::{KindId, OpKind, Poll, Ticket, Worker, WorkerCtx, Workload, WorkloadError};
