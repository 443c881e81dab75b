use plumb_micro::mutex::MutexSpec;
use plumb_pipeline::jobs::micro::MutexJob;

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
    data_set: &[],
    plan,
};

fn plan(v: &Values, _c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    Ok(Box::new(MutexJob(MutexSpec {
        num: v.int("mutex-num") as u32,
        locks: v.int("mutex-locks"),
        loops: v.int("mutex-loops"),
    })))
}

impl TestPlan for MutexJob {}
