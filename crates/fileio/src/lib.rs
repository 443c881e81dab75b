//! plumb-fileio: file I/O jobs (sysbench's fileio, fio's file jobs), measured exactly.
//!
//! - [`access`]: what a job reads and writes, in which order.
//! - [`spec`]: every setting, checked ([`spec::FileioSpec`]).
//! - [`setting`]: the settings errors name, spelled by each front end.
//! - [`fileset`]: the test files, their manifest, prepare, cleanup, opening for a run.
//! - [`pattern`]: which request comes next (sysbench's exact stream, lock-free).
//! - [`placement`]: the CPUs, nice value and I/O priority of a job's threads.
//! - [`walk`]: a job's own walk over its named files (fio's model).
//! - [`cache_drop`]: dropping the cached pages of a job's files (fio's `invalidate`).
//! - [`sharing`]: how many threads write one file at once (for the advisor).
//! - [`engine`]: the engine registry, one file per engine, named as fio names them (psync,
//!   sync, vsync, pvsync, pvsync2, posixaio, libaio, io_uring, mmap, null).
//! - [`worker`]: the one worker loop that drives every engine.
//! - [`think`]: think time, a stall between requests (fio's `thinktime`).
//! - [`fill`]: the data written (random by default, zeros, or checksummed for --validate).
//! - [`iolog`]: per-request or per-window logs of a job's requests (fio's logs), and
//!   [`hist_log`] fio's completion-latency histogram log.
//! - [`verify`]: sealed writes and checked reads (fio's verify=crc32c|md5).
//! - [`tolerate`]: the I/O errors a job counts and goes on after (fio's continue_on_error).
//! - [`workload`]: the [`plumb_core::Workload`] that runs it all.

pub mod access;
mod block_map;
pub mod buf;
pub mod cache_drop;
pub mod dd;
pub mod direct;
pub mod engine;
pub mod error;
pub mod fileset;
pub mod fill;
pub mod flow;
pub mod hist_log;
pub mod io_trace;
pub mod iolog;
pub mod max_latency;
pub mod min_rate;
pub mod pattern;
pub mod placement;
pub mod pre_read;
pub mod setting;
pub mod settings;
pub mod sharing;
pub mod spec;
pub mod think;
pub mod tolerate;
pub mod verify;
pub mod walk;
pub mod worker;
pub mod workload;

pub use error::FileioError;
pub use spec::FileioSpec;
pub use workload::FileioWorkload;
