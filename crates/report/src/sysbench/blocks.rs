//! Each test's own parts of the report, chosen by its typed settings.

use super::{cpu, fileio, memory, oltp};

use plumb_core::result::IntervalResult;
use plumb_pipeline::{JobRecord, Settings};

/// The test's lines after the common header ("Prime numbers limit: 10000"); `plumb_lines`:
/// with plumb's additions (where the files are, which engine).
pub(crate) fn header(job: &JobRecord, plumb_lines: bool) -> String {
    match &job.workload {
        Settings::Cpu(s) => cpu::header(s),
        Settings::Memory(s) => memory::header(s),
        Settings::Fileio(s) => fileio::header(
            s,
            job.settings.event_limit,
            plumb_lines,
            job.layout
                .as_ref()
                .and_then(|l| l["file_rw_ratio"].as_f64()),
        ),
        Settings::Threads(_)
        | Settings::Mutex(_)
        | Settings::Oltp(_)
        | Settings::Slap(_)
        | Settings::Dd(_) => String::new(),
    }
}

/// The block printed before "General statistics" ("CPU speed:", "File operations:", ...),
/// ending with the blank line sysbench prints before "General statistics".
pub(crate) fn test_block(out: &mut String, job: &JobRecord) {
    match &job.workload {
        Settings::Cpu(_) => cpu::block(out, job),
        Settings::Fileio(_) => fileio::block(out, job),
        Settings::Memory(s) => memory::block(out, job, s),
        Settings::Oltp(_) => oltp::block(out, job),
        // No block of their own: only sysbench's blank line before "General statistics".
        Settings::Threads(_) | Settings::Mutex(_) | Settings::Slap(_) | Settings::Dd(_) => {
            out.push('\n')
        }
    }
}

/// A test's own plumb section, printed after the common plumb sections.
pub(crate) fn plumb_block(out: &mut String, job: &JobRecord) {
    match &job.workload {
        Settings::Fileio(s) => fileio::plumb_block(out, job, s),
        Settings::Oltp(s) => oltp::plumb_block(out, s),
        _ => {}
    }
}

/// A test's own interval line (everything after "[ Ns ] ", latency included), when it
/// differs from the common one.
pub(crate) fn interval_body(job: &JobRecord, i: &IntervalResult, drop_in: bool) -> Option<String> {
    match &job.workload {
        Settings::Fileio(_) => Some(fileio::interval_body(i, drop_in)),
        // sysbench's memory interval line is throughput only.
        Settings::Memory(_) => Some(memory::interval(i)),
        Settings::Oltp(_) => Some(oltp::interval_body(i)),
        _ => None,
    }
}
