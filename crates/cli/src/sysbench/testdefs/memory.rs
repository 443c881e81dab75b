use plumb_core::RunConfig;
use plumb_micro::memory::{Access, MemorySpec, Oper, Scope, MIN_BLOCK};
use plumb_pipeline::jobs::micro::MemoryJob;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

const OPTIONS: &[Opt] = &[
    opt(
        "memory-block-size",
        Kind::PowerOfTwoSize { min: MIN_BLOCK },
        "1K",
        "size of memory block for test",
    ),
    opt(
        "memory-total-size",
        Kind::Size,
        "100G",
        "total size of data to transfer (0: no limit, run for --time)",
    ),
    opt(
        "memory-scope",
        Kind::Choice(&["global", "local"]),
        "global",
        "memory access scope",
    ),
    opt(
        "memory-hugetlb",
        Kind::Bool,
        "off",
        "allocate memory from HugeTLB pool",
    ),
    opt(
        "memory-oper",
        Kind::Choice(&["read", "write", "none"]),
        "write",
        "type of memory operations",
    ),
    opt(
        "memory-access-mode",
        Kind::Choice(&["seq", "rnd"]),
        "seq",
        "memory access mode",
    ),
];

pub static DEF: TestDef = TestDef {
    name: "memory",
    description: "Memory functions speed test",
    rand: RandUse::Seed,
    options: OPTIONS,
    data_set: &[],
    plan,
};

fn plan(v: &Values, c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    // The option table allows only these words.
    let word = |name: &str| v.word(name).to_string();
    let spec = MemorySpec {
        block_size: v.size("memory-block-size"),
        total_size: v.size("memory-total-size"),
        scope: Scope::parse(&word("memory-scope")).unwrap_or(Scope::Global),
        oper: Oper::parse(&word("memory-oper")).unwrap_or(Oper::Write),
        access: Access::parse(&word("memory-access-mode")).unwrap_or(Access::Seq),
        hugetlb: v.flag("memory-hugetlb"),
        threads: c.run.threads,
    };
    if c.dropin && spec.hugetlb {
        sysbench_hugetlb(&spec, &plumb_micro::buffer::MemInfo::read()).map_err(UsageError)?;
    }
    if v.given("events") && c.plumb_notes() {
        eprintln!(
            "WARNING: the memory test does not use --events (as in sysbench 1.0): each thread \
             runs memory-total-size / memory-block-size / threads events"
        );
    }
    if spec.total_size == 0 && c.run.time_limit.is_none() && c.plumb_notes() {
        eprintln!("WARNING: --memory-total-size=0 and --time=0: the test runs until interrupted");
    }
    Ok(Box::new(MemoryJob(spec)))
}

/// sysbench's shared-memory segment for one block: its arithmetic, which rounds to 4 MiB
/// pages with a mask that keeps most bits (1 KiB gives 4 MiB + 1023 bytes).
fn sysbench_segment(block: u64) -> u64 {
    const LARGE_PAGE: u64 = 4 << 20;
    ((block - 1) & !LARGE_PAGE) + LARGE_PAGE
}

/// sysbench allocates its HugeTLB buffers while the test starts, before its header: the
/// global buffer, or one per thread with `--memory-scope=local`. Where the pool cannot give
/// them it stops there, with its two lines; the drop-in stops at the same point with the
/// same lines, and plumb's own name with its own message when it maps the buffers.
fn sysbench_hugetlb(spec: &MemorySpec, info: &plumb_micro::buffer::MemInfo) -> Result<(), String> {
    let page = info.huge_page_bytes.unwrap_or(2 << 20);
    let size = sysbench_segment(spec.block_size);
    let buffers = match spec.scope {
        Scope::Global => 1,
        Scope::Local => spec.threads as u64,
    };
    let mut free = info.huge_free;
    for i in 0..buffers {
        let pages = size.div_ceil(page);
        if pages > free {
            let which = match spec.scope {
                Scope::Global => "buffer!".to_string(),
                Scope::Local => format!("buffer for thread #{i}!"),
            };
            return Err(format!(
                "Failed to allocate {size} bytes from HugeTLB memory. errno = 12 (Cannot allocate memory)\nFATAL: Failed to allocate {which}"
            ));
        }
        free -= pages;
    }
    Ok(())
}

impl TestPlan for MemoryJob {
    // sysbench's memory test runs its own quota of events and ignores --events.
    fn tune(&self, run: &mut RunConfig) {
        run.event_limit = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_micro::buffer::MemInfo;

    fn spec(block: u64, scope: Scope, threads: usize) -> MemorySpec {
        MemorySpec {
            block_size: block,
            total_size: 10 << 20,
            scope,
            oper: Oper::Write,
            access: Access::Seq,
            hugetlb: true,
            threads,
        }
    }

    /// sysbench 1.0.20 on this machine (no pool): 1 KiB and 4 MiB blocks ask for 4 MiB +
    /// 1023 bytes and 8 MiB - 1 bytes; a pool of three 2 MiB pages holds one such segment.
    #[test]
    fn huge_pages_run_out_where_sysbench_s_do() {
        let pool = |free| MemInfo {
            huge_free: free,
            huge_total: free,
            huge_page_bytes: Some(2 << 20),
            ..MemInfo::default()
        };
        assert_eq!(
            sysbench_hugetlb(&spec(1024, Scope::Global, 1), &pool(0)).unwrap_err(),
            "Failed to allocate 4195327 bytes from HugeTLB memory. errno = 12 (Cannot allocate memory)\nFATAL: Failed to allocate buffer!"
        );
        assert!(sysbench_hugetlb(&spec(4 << 20, Scope::Global, 2), &pool(0))
            .unwrap_err()
            .starts_with("Failed to allocate 8388607 bytes"));
        assert!(sysbench_hugetlb(&spec(1024, Scope::Global, 2), &pool(3)).is_ok());
        assert!(sysbench_hugetlb(&spec(1024, Scope::Local, 2), &pool(3))
            .unwrap_err()
            .ends_with("FATAL: Failed to allocate buffer for thread #1!"));
        assert!(sysbench_hugetlb(&spec(1024, Scope::Local, 2), &pool(6)).is_ok());
    }
}
