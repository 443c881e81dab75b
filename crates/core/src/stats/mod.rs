//! Statistics: histograms and the summaries computed from them.

pub mod histogram;
pub mod sparse;
pub mod summary;

pub use histogram::{Histogram, LiveHistogram};
pub use sparse::SparseHistogram;
pub use summary::{LatencySummary, Percentile};
