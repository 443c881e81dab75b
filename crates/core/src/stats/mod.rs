//! Statistics: histograms and the summaries computed from them.

pub mod histogram;
pub mod summary;

pub use histogram::{Histogram, LiveHistogram};
pub use summary::{LatencySummary, Percentile};
