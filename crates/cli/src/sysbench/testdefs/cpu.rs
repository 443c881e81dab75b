use std::sync::Arc;

use plumb_core::Workload;
use plumb_micro::cpu::{Cpu, CpuSpec};
use plumb_micro::settings::CpuSettings;
use plumb_pipeline::{Job, JobError, Settings};

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

impl TestPlan for Plan {}

impl Job for Plan {
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        Ok(Arc::new(Cpu::new(self.spec.clone())))
    }
    fn settings(&self) -> Settings {
        Settings::Cpu(CpuSettings::from(&self.spec))
    }
}
