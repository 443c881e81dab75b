//! plumb-report: the layouts that turn a [`plumb_pipeline::Record`] into what the user reads.
//!
//! - [`sysbench`]: the sysbench 1.0 text layout, then plumb's own sections.
//! - [`fio`]: fio 3.33's normal, JSON/json+ and terse layouts, from a plain model.
//! - [`mysqlslap`]: mysqlslap's Benchmark blocks and CSV lines, then plumb's own sections.
//! - [`dd`]: GNU dd 9.1's last lines, then plumb's own sections.
//! - [`findings`]: the validity findings section.
//! - [`observations`]: the "Observed during the run" section.
//! - [`html`]: the self-contained HTML report with charts (`plumb html`), for a run, several
//!   runs on the same axes, or a sweep.
//!
//! Every layout renders from the record alone, so a saved JSON result can be re-rendered.
//! A new layout is one module plus one line in [`LAYOUTS`].

pub mod dd;
pub mod disk;
pub mod findings;
pub mod fio;
pub mod hdparm;
pub mod html;
pub mod mysqlslap;
pub mod observations;
pub mod sysbench;

use plumb_pipeline::Layout;

/// Each front end's layout, by the name the record keeps in `front_end`.
pub static LAYOUTS: &[(&str, &dyn Layout)] = &[
    ("sysbench", &sysbench::Sysbench::PLUMB),
    ("fio", &fio::Fio::LAYOUT),
    ("mysqlslap", &mysqlslap::Mysqlslap::LAYOUT),
    ("dd", &dd::Dd::LAYOUT),
    ("disk", &disk::Disk::LAYOUT),
    ("hdparm", &hdparm::Hdparm::LAYOUT),
];

/// The layout a record made by `front_end` is rendered with.
pub fn layout(front_end: &str) -> Option<&'static dyn Layout> {
    LAYOUTS
        .iter()
        .find(|(name, _)| *name == front_end)
        .map(|(_, l)| *l)
}
