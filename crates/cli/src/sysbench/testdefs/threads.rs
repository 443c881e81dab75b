use plumb_micro::threads::ThreadsSpec;
use plumb_pipeline::jobs::micro::ThreadsJob;

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
    data_set: &[],
    plan,
};

fn plan(v: &Values, _c: &Common) -> Result<Box<dyn TestPlan>, UsageError> {
    Ok(Box::new(ThreadsJob(ThreadsSpec {
        yields: v.int("thread-yields"),
        locks: v.int("thread-locks") as u32,
    })))
}

impl TestPlan for ThreadsJob {}
