//! plumb-fileio: file I/O jobs (sysbench's fileio, fio's file jobs), measured exactly.
//!
//! - [`access`]: what a job reads and writes, in which order.
//! - [`spec`]: every setting, checked ([`spec::FileioSpec`]).
//! - [`setting`]: the settings errors name, spelled by each front end.
//! - [`fileset`]: the test files, their manifest, prepare, cleanup, opening for a run.
//! - [`pattern`]: which request comes next (sysbench's exact stream, lock-free).
//! - [`sharing`]: how many threads write one file at once (for the advisor).
//! - [`engine`]: the engine registry: sync, io_uring, libaio, mmap and null, one file each.
//! - [`worker`]: the one worker loop that drives every engine.
//! - [`fill`]: the data written (random by default, zeros, or checksummed for --validate).
//! - [`workload`]: the [`plumb_core::Workload`] that runs it all.

pub mod access;
pub mod buf;
pub mod direct;
pub mod engine;
pub mod error;
pub mod fileset;
pub mod fill;
pub mod pattern;
pub mod setting;
pub mod settings;
pub mod sharing;
pub mod spec;
pub mod worker;
pub mod workload;

pub use error::FileioError;
pub use spec::FileioSpec;
pub use workload::FileioWorkload;
