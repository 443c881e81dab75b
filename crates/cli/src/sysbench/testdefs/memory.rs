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

impl TestPlan for MemoryJob {
    // sysbench's memory test runs its own quota of events and ignores --events.
    fn tune(&self, run: &mut RunConfig) {
        run.event_limit = 0;
    }
}
