use std::sync::Arc;

use plumb_core::Workload;
use plumb_micro::mutex::{MutexSpec, MutexTest};
use serde_json::json;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

const OPTIONS: &[Opt] = &[
    opt(
        "mutex-num",
        Kind::Int {
            min: 1,
            max: 1 << 20,
        },
        "4096",
        "total size of mutex array",
    ),
    opt(
        "mutex-locks",
        Kind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        "50000",
        "number of mutex locks to do per thread",
    ),
    opt(
        "mutex-loops",
        Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        "10000",
        "number of empty loops to do outside mutex lock",
    ),
];

pub static DEF: TestDef = TestDef {
    name: "mutex",
    description: "Mutex performance test",
    rand: RandUse::Seed,
    options: OPTIONS,
    has_files: false,
    plan,
};

struct Plan {
    spec: MutexSpec,
}

fn plan(v: &Values, _c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    Ok(Box::new(Plan {
        spec: MutexSpec {
            num: v.int("mutex-num") as u32,
            locks: v.int("mutex-locks"),
            loops: v.int("mutex-loops"),
        },
    }))
}

impl TestPlan for Plan {
    fn name(&self) -> &'static str {
        "mutex"
    }
    // sysbench prints nothing about the mutex settings at its default verbosity.
    fn header(&self) -> String {
        String::new()
    }
    fn workload(&self) -> anyhow::Result<Arc<dyn Workload>> {
        Ok(Arc::new(MutexTest::new(self.spec.clone())))
    }
    fn workload_json(&self) -> serde_json::Value {
        json!({
            "mutex_num": self.spec.num,
            "mutex_locks": self.spec.locks,
            "mutex_loops": self.spec.loops,
        })
    }
}
