//! cpu, memory, threads and mutex: nothing to prepare, settings straight from the spec.

use std::sync::Arc;

use plumb_core::Workload;
use plumb_micro::cpu::{Cpu, CpuSpec};
use plumb_micro::memory::{Memory, MemorySpec};
use plumb_micro::mutex::{MutexSpec, MutexTest};
use plumb_micro::settings::{CpuSettings, MemorySettings, MutexSettings, ThreadsSettings};
use plumb_micro::threads::{Threads, ThreadsSpec};

use crate::plan::{Job, JobError};
use crate::record::{JobRecord, Settings};

pub struct CpuJob(pub CpuSpec);

impl Job for CpuJob {
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        Ok(Arc::new(Cpu::new(self.0.clone())))
    }
    fn settings(&self) -> Settings {
        Settings::Cpu(CpuSettings::from(&self.0))
    }
}

pub struct MemoryJob(pub MemorySpec);

impl Job for MemoryJob {
    fn kind(&self) -> &'static str {
        "memory"
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        Ok(Arc::new(
            Memory::new(self.0.clone()).map_err(JobError::failed)?,
        ))
    }
    fn settings(&self) -> Settings {
        Settings::Memory(MemorySettings::from(&self.0))
    }
    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        let (events, bytes, secs) = (job.events, job.counter("bytes"), job.total_time_s);
        if let Settings::Memory(m) = &mut job.workload {
            m.complete(events, bytes, secs);
        }
        Ok(())
    }
}

pub struct ThreadsJob(pub ThreadsSpec);

impl Job for ThreadsJob {
    fn kind(&self) -> &'static str {
        "threads"
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        Ok(Arc::new(Threads::new(self.0.clone())))
    }
    fn settings(&self) -> Settings {
        Settings::Threads(ThreadsSettings::from(&self.0))
    }
}

pub struct MutexJob(pub MutexSpec);

impl Job for MutexJob {
    fn kind(&self) -> &'static str {
        "mutex"
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        Ok(Arc::new(MutexTest::new(self.0.clone())))
    }
    fn settings(&self) -> Settings {
        Settings::Mutex(MutexSettings::from(&self.0))
    }
}
