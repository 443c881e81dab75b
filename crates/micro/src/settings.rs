//! What each micro test ran with, as results keep it: typed, so a saved result is read back
//! by field, not by key name. The JSON keys are the ones `plumb.result` documents.

use serde::{Deserialize, Serialize};

use crate::cpu::CpuSpec;
use crate::memory::{Access, MemorySpec, Oper, Scope};
use crate::mutex::MutexSpec;
use crate::threads::ThreadsSpec;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuSettings {
    pub cpu_max_prime: u64,
}

impl From<&CpuSpec> for CpuSettings {
    fn from(s: &CpuSpec) -> Self {
        CpuSettings {
            cpu_max_prime: s.max_prime,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemorySettings {
    pub block_size_bytes: u64,
    pub total_size_bytes: u64,
    pub scope: Scope,
    pub oper: Oper,
    pub access_mode: Access,
    pub hugetlb: bool,
    /// Each thread's quota of blocks; none when the run is bounded by time only.
    pub events_per_thread: Option<u64>,
    /// Filled once the run is over.
    pub ops_per_s: Option<f64>,
    /// Filled once the run is over; none for `--memory-oper=none`.
    pub mib_per_s: Option<f64>,
}

impl From<&MemorySpec> for MemorySettings {
    fn from(s: &MemorySpec) -> Self {
        MemorySettings {
            block_size_bytes: s.block_size,
            total_size_bytes: s.total_size,
            scope: s.scope,
            oper: s.oper,
            access_mode: s.access,
            hugetlb: s.hugetlb,
            events_per_thread: s.events_per_thread(),
            ops_per_s: None,
            mib_per_s: None,
        }
    }
}

impl MemorySettings {
    /// Add the run's throughput figures.
    pub fn complete(&mut self, events: u64, bytes: u64, secs: f64) {
        let secs = secs.max(1e-9);
        self.ops_per_s = Some(events as f64 / secs);
        self.mib_per_s =
            (self.oper != Oper::None).then(|| bytes as f64 / (1u64 << 20) as f64 / secs);
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadsSettings {
    pub thread_yields: u64,
    pub thread_locks: u32,
}

impl From<&ThreadsSpec> for ThreadsSettings {
    fn from(s: &ThreadsSpec) -> Self {
        ThreadsSettings {
            thread_yields: s.yields,
            thread_locks: s.locks,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutexSettings {
    pub mutex_num: u32,
    pub mutex_locks: u64,
    pub mutex_loops: u64,
}

impl From<&MutexSpec> for MutexSettings {
    fn from(s: &MutexSpec) -> Self {
        MutexSettings {
            mutex_num: s.num,
            mutex_locks: s.locks,
            mutex_loops: s.loops,
        }
    }
}

impl MemorySettings {
    /// Whether every thread works on one shared buffer.
    pub fn global(&self) -> bool {
        self.scope == Scope::Global
    }
}
