//! The longest a request may take (fio's `max_latency`, per direction): the first read or
//! write that takes longer fails its job.
//!
//! fio 3.33 (io_u.c, `account_io_completion`) compares a request's total latency, from
//! when it was prepared to its completion, with the maximum of its direction, for reads
//! and writes only (a trim maximum is taken and never checked), and only for requests it
//! accounts (after the ramp). The request is still counted.

use serde::{Deserialize, Serialize};

/// A job's maximum latencies, in nanoseconds per direction (read, write, trim); 0: none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaxLatency {
    pub ns: [u64; 3],
}

impl MaxLatency {
    /// Whether a read or write maximum is set (the only ones checked).
    pub fn any(&self) -> bool {
        self.ns[0] > 0 || self.ns[1] > 0
    }

    /// The maximum a request of direction `dir` (0 read, 1 write, 2 trim) is held to.
    #[inline]
    pub fn of(&self, dir: usize) -> Option<u64> {
        match self.ns.get(dir) {
            Some(&m) if dir < 2 && m > 0 => Some(m),
            _ => None,
        }
    }
}

/// The request that took too long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    pub latency_ns: u64,
    pub max_ns: u64,
    /// The job's file, by index, and its path.
    pub file: u32,
    pub path: String,
    /// 0 read, 1 write.
    pub dir: usize,
    pub offset: u64,
    pub len: u64,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a {} of {} took {} ns, over the maximum of {} ns",
            ["read", "write", "trim"][self.dir.min(2)],
            self.path,
            self.latency_ns,
            self.max_ns
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_zeros_are_never_checked() {
        let m = MaxLatency {
            ns: [1000, 0, 5000],
        };
        assert!(m.any());
        assert_eq!(m.of(0), Some(1000));
        assert_eq!(m.of(1), None);
        assert_eq!(m.of(2), None);
        assert!(!MaxLatency { ns: [0, 0, 7] }.any());
    }
}
