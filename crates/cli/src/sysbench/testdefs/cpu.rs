use plumb_micro::cpu::CpuSpec;
use plumb_pipeline::jobs::micro::CpuJob;

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
    data_set: &[],
    plan,
};

fn plan(v: &Values, _c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    Ok(Box::new(CpuJob(CpuSpec {
        max_prime: v.int("cpu-max-prime"),
    })))
}

impl TestPlan for CpuJob {}
