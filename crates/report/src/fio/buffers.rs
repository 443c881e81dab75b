//! Where a job's request buffers lived, when the job asked for more than the heap (fio's
//! `mem=mmap`/`mmaphuge`, plumb's `--plumb-buffers=thp`): fio never says whether the kernel
//! gave the huge pages, and a 1 MiB direct request in small pages may reach the disk cut in
//! two (`requests-split`), so plumb says.

use std::fmt::Write as _;

use plumb_core::size::format_compact;
use plumb_fileio::buf::BufferMemory;
use plumb_pipeline::record::JobRecord;
use plumb_pipeline::Settings;

/// The job's "I/O buffers:" block, or nothing for heap buffers.
pub fn section(j: &JobRecord) -> String {
    let Settings::Fileio(f) = &j.workload else {
        return String::new();
    };
    let kind = match f.buffer_memory {
        BufferMemory::Heap => return String::new(),
        BufferMemory::Mapped => "one anonymous mapping (mem=mmap)".to_string(),
        BufferMemory::HugeTlb { page } => format!(
            "one mapping in reserved {} huge pages (mem=mmaphuge)",
            format_compact(page)
        ),
        BufferMemory::Transparent => {
            "one mapping with transparent huge pages asked for (--plumb-buffers=thp)".to_string()
        }
    };
    let mut s = String::from("I/O buffers:\n");
    let _ = writeln!(s, "    memory:                       {kind}");
    if let (Some(bytes), Some(huge)) = (f.buffer_bytes, f.huge_page_bytes) {
        let granted = if huge >= bytes {
            "all of it in huge pages".to_string()
        } else {
            format!(
                "{} of it in huge pages: the rest may reach the disk cut (requests-split)",
                format_compact(huge)
            )
        };
        let _ = writeln!(
            s,
            "    size:                         {}, {granted}",
            format_compact(bytes)
        );
    }
    s.push('\n');
    s
}
