//! plumb-history: every run plumb makes, kept in one SQLite file, and the comparison of two
//! runs with their noise.
//!
//! - [`Store`]: the database (`$PLUMB_HOME/history.db`, else
//!   `$XDG_DATA_HOME/plumb/history.db`, else `~/.local/share/plumb/history.db`; see
//!   [`location`]). A run is kept as its key figures (the listing reads only those) and its
//!   whole `plumb.result/2` record, zstd-compressed, so `plumb show` renders it again as the
//!   run printed it. Tags label runs, baselines name one run each.
//! - [`RunRef`]: how the commands name a run (an id, a tag, `baseline:NAME`, a result file).
//! - [`compare()`]: two records side by side: their differences, seed 002's comparability
//!   checks, every figure with the ratio B/A and whether it lies beyond the noise of the
//!   runs' interval samples ([`noise`]). [`compare_sweeps`]: two sweeps ([`SweepSide`]),
//!   point by point, judged the same way.

pub mod compare;
pub mod location;
mod merged;
mod names;
pub mod noise;
mod schema;
mod store;
mod summary;
mod sweep;

pub use compare::{compare, compare_sweeps, Comparison, Side, SweepComparison};
pub use merged::Merged;
pub use names::{check_name, RunRef};
pub use store::{Baseline, Filter, Store, Sweep, SweepPoint};
pub use summary::{FindingCounts, RunSummary};
pub use sweep::{unit_of, PointRuns, SweepRun, SweepSide};

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("no directory for the history: set PLUMB_HOME (or XDG_DATA_HOME, or HOME)")]
    NoHome,
    #[error("cannot create {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "{path} holds history schema version {found}; this plumb reads versions up to {known}"
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("no run {0} in the history (plumb history lists them)")]
    NoRun(i64),
    #[error("no run tagged '{0}' in the history (plumb history lists them)")]
    NoTag(String),
    #[error("no sweep {0} in the history (plumb history lists runs with their sweep)")]
    NoSweep(i64),
    #[error("no baseline named '{0}' (plumb baseline list shows them)")]
    NoBaseline(String),
    #[error("run {id}: its stored record cannot be read: {why}")]
    Corrupt { id: i64, why: String },
    #[error("{0}")]
    Name(String),
    #[error("cannot encode the record: {0}")]
    Encode(String),
}

pub type Result<T> = std::result::Result<T, HistoryError>;
