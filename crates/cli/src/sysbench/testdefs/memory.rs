use std::sync::Arc;

use plumb_core::{RunConfig, Workload};
use plumb_micro::memory::{Access, Memory, MemorySpec, Oper, Scope, MIN_BLOCK};
use plumb_micro::settings::MemorySettings;
use plumb_pipeline::{Job, JobError, JobRecord, Settings};

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
    plan,
};

struct Plan {
    spec: MemorySpec,
}

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
    if v.given("events") {
        eprintln!(
            "WARNING: the memory test does not use --events (as in sysbench 1.0): each thread \
             runs memory-total-size / memory-block-size / threads events"
        );
    }
    if spec.total_size == 0 && c.run.time_limit.is_none() {
        eprintln!("WARNING: --memory-total-size=0 and --time=0: the test runs until interrupted");
    }
    Ok(Box::new(Plan { spec }))
}

impl TestPlan for Plan {
    // sysbench's memory test runs its own quota of events and ignores --events.
    fn tune(&self, run: &mut RunConfig) {
        run.event_limit = 0;
    }
}

impl Job for Plan {
    fn kind(&self) -> &'static str {
        "memory"
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        Ok(Arc::new(
            Memory::new(self.spec.clone()).map_err(JobError::failed)?,
        ))
    }
    fn settings(&self) -> Settings {
        Settings::Memory(MemorySettings::from(&self.spec))
    }
    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        let (events, bytes, secs) = (job.events, job.counter("bytes"), job.total_time_s);
        if let Settings::Memory(m) = &mut job.workload {
            m.complete(events, bytes, secs);
        }
        Ok(())
    }
}
