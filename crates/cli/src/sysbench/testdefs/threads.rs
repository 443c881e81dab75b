use std::sync::Arc;

use plumb_core::Workload;
use plumb_micro::threads::{Threads, ThreadsSpec};
use serde_json::json;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

const OPTIONS: &[Opt] = &[
    opt(
        "thread-yields",
        Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        "1000",
        "number of yields to do per request",
    ),
    opt(
        "thread-locks",
        Kind::Int {
            min: 1,
            max: 1 << 20,
        },
        "8",
        "number of locks per thread",
    ),
];

pub static DEF: TestDef = TestDef {
    name: "threads",
    description: "Threads subsystem performance test",
    rand: RandUse::None,
    options: OPTIONS,
    has_files: false,
    plan,
};

struct Plan {
    spec: ThreadsSpec,
}

fn plan(v: &Values, _c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    Ok(Box::new(Plan {
        spec: ThreadsSpec {
            yields: v.int("thread-yields"),
            locks: v.int("thread-locks") as u32,
        },
    }))
}

impl TestPlan for Plan {
    fn name(&self) -> &'static str {
        "threads"
    }
    // sysbench prints its threads settings only at --verbosity=4 and above.
    fn header(&self) -> String {
        String::new()
    }
    fn workload(&self) -> anyhow::Result<Arc<dyn Workload>> {
        Ok(Arc::new(Threads::new(self.spec.clone())))
    }
    fn workload_json(&self) -> serde_json::Value {
        json!({ "thread_yields": self.spec.yields, "thread_locks": self.spec.locks })
    }
}
