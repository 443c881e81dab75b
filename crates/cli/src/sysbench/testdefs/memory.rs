use std::sync::Arc;

use plumb_advise::{Facts, MemoryTestFacts};
use plumb_core::result::RunResult;
use plumb_core::{RunConfig, Workload};
use plumb_micro::memory::{Access, Memory, MemorySpec, Oper, Scope, MIN_BLOCK};
use serde_json::json;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

const MIB: f64 = 1048576.0;

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
    has_files: false,
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
    if v.given("events") && c.plumb_notes() {
        eprintln!(
            "WARNING: the memory test does not use --events (as in sysbench 1.0): each thread \
             runs memory-total-size / memory-block-size / threads events"
        );
    }
    if spec.total_size == 0 && c.run.time_limit.is_none() && c.plumb_notes() {
        eprintln!("WARNING: --memory-total-size=0 and --time=0: the test runs until interrupted");
    }
    Ok(Box::new(Plan { spec }))
}

/// sysbench prints sizes in whole KiB and MiB; plumb does too when they are whole, and says
/// the exact size otherwise rather than rounding it down (a 512-byte block is not "0KiB").
fn whole(bytes: u64, unit: u64, name: &str) -> String {
    // unit is a power of two
    if bytes & (unit - 1) == 0 {
        format!("{}{name}", bytes / unit)
    } else {
        plumb_core::size::format_size(bytes)
    }
}

impl TestPlan for Plan {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn header(&self) -> String {
        let s = &self.spec;
        format!(
            "Running memory speed test with the following options:\n  block size: {}\n  total size: {}\n  operation: {}\n  scope: {}\n\n",
            whole(s.block_size, 1024, "KiB"),
            whole(s.total_size, 1 << 20, "MiB"),
            s.oper.name(),
            s.scope.name()
        )
    }
    fn tune(&self, run: &mut RunConfig) {
        run.event_limit = 0;
    }
    fn workload(&self) -> anyhow::Result<Arc<dyn Workload>> {
        Ok(Arc::new(Memory::new(self.spec.clone())?))
    }
    fn workload_json(&self) -> serde_json::Value {
        let s = &self.spec;
        json!({
            "block_size_bytes": s.block_size,
            "total_size_bytes": s.total_size,
            "scope": s.scope.name(),
            "oper": s.oper.name(),
            "access_mode": s.access.name(),
            "hugetlb": s.hugetlb,
            "events_per_thread": s.events_per_thread(),
        })
    }
    fn facts(&self, facts: &mut Facts, _result: &RunResult) {
        facts.memory_test = Some(MemoryTestFacts {
            block_size_bytes: self.spec.block_size,
            scope_global: self.spec.scope == Scope::Global,
        });
    }
    fn complete(&self, r: &mut RunResult) {
        let secs = r.total_time_s.max(1e-9);
        let ops_per_s = r.events as f64 / secs;
        let mib_per_s =
            (self.spec.oper != Oper::None).then(|| r.counter("bytes") as f64 / MIB / secs);
        if let Some(w) = r.workload.as_object_mut() {
            w.insert("ops_per_s".into(), json!(ops_per_s));
            w.insert("mib_per_s".into(), json!(mib_per_s));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes() {
        assert_eq!(whole(1024, 1024, "KiB"), "1KiB");
        assert_eq!(whole(8 << 10, 1024, "KiB"), "8KiB");
        assert_eq!(whole(512, 1024, "KiB"), "512B");
        assert_eq!(whole(100 << 30, 1 << 20, "MiB"), "102400MiB");
        assert_eq!(whole(1536 << 10, 1 << 20, "MiB"), "1536KiB");
    }
}
