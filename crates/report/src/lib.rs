//! plumb-report: turns a [`plumb_core::result::RunResult`] into what the user reads.
//!
//! - [`sysbench`]: the sysbench 1.0 text layout, then plumb's own sections.
//! - [`json`]: the `plumb.result/1` document.
//! - [`findings`]: the validity findings section.
//! - [`observations`]: the "Observed during the run" section.
//!
//! Every layout renders from the result alone, so a saved JSON result can be re-rendered.

pub mod findings;
pub mod json;
pub mod observations;
pub mod sysbench;
