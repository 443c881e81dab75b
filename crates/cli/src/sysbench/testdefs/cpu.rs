use std::sync::Arc;

use plumb_core::Workload;
use plumb_micro::cpu::{Cpu, CpuSpec};
use serde_json::json;

use super::{RandUse, TestDef, TestPlan};
use crate::exit::UsageError;
use crate::sysbench::common::Common;
use crate::sysbench::options::{opt, Kind, Opt, Values};

const OPTIONS: &[Opt] = &[opt(
    "cpu-max-prime",
    Kind::Int {
        min: 3,
        max: u32::MAX as u64,
    },
    "10000",
    "upper limit for primes generator",
)];

pub static DEF: TestDef = TestDef {
    name: "cpu",
    description: "CPU performance test",
    rand: RandUse::None,
    options: OPTIONS,
    has_files: false,
    plan,
};

struct Plan {
    spec: CpuSpec,
}

fn plan(v: &Values, _c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    Ok(Box::new(Plan {
        spec: CpuSpec {
            max_prime: v.int("cpu-max-prime"),
        },
    }))
}

impl TestPlan for Plan {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn header(&self) -> String {
        format!("Prime numbers limit: {}\n\n", self.spec.max_prime)
    }
    fn workload(&self) -> anyhow::Result<Arc<dyn Workload>> {
        Ok(Arc::new(Cpu::new(self.spec.clone())))
    }
    fn workload_json(&self) -> serde_json::Value {
        json!({ "cpu_max_prime": self.spec.max_prime })
    }
}
