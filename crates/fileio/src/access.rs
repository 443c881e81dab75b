//! What a job reads and writes, and in which order.
//!
//! The orders are exact, whichever front end asked for them:
//! - sequential: files in order, each from its start in requests of block × merged
//!   requests (the last one cut at the end of the file), wrapping after the last file; all
//!   threads of the run share this one cursor, so together they make a single pass.
//! - random: blocks drawn over all files, uniformly or with the distribution given.
//!
//! A job that names its own files ([`crate::spec::JobIo`], fio's model) walks its own
//! regions instead: see [`crate::walk`].
//!
//! An interleaved mix is deterministic: read while (reads + 1) / (writes + 1) is below
//! `reads_per_write`, counted per thread.
//!
//! Trims (discards of a range: fio's `rw=trim` and `trimwrite`) exist only in a job's own
//! walk; sysbench's shared stream has none.

use plumb_core::random::RandType;

/// Reads, writes, both, or trims.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mix {
    Read,
    Write,
    /// Both, interleaved by a fixed rule so that reads per write follows the ratio; periods
    /// without writes get no periodic fsync (nothing is dirty).
    Interleaved {
        reads_per_write: f64,
    },
    /// Both, each request a read with this probability in percent (fio's rwmixread), drawn
    /// per request from the job's random stream.
    Share {
        read_pct: u8,
    },
    /// Trims only (fio's `rw=trim`, `randtrim`).
    Trim,
    /// Each block trimmed, then written (fio's `rw=trimwrite`, `randtrimwrite`); the walk
    /// decides which comes next per file, as fio does ([`crate::walk`]).
    TrimWrite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// One cursor shared by all threads (see the module comment).
    Sequential,
    /// Blocks drawn with this distribution over all blocks of all files.
    Random { dist: RandType },
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Access {
    pub mix: Mix,
    pub order: Order,
    /// The run writes the files from scratch (creating or truncating them) instead of using
    /// a prepared set. Sequential writes only.
    pub creates_files: bool,
    /// A random order's share of requests whose offset is drawn, in percent per direction
    /// (read, write, trim); the others go on from the end of the previous request in their
    /// direction (fio's `percentage_random`). Only a job's own walk ([`crate::walk`]) mixes
    /// them; 100 (every offset drawn) is the only value for sysbench's shared stream.
    #[serde(default = "all_random", skip_serializing_if = "is_all_random")]
    pub random_pct: [u8; 3],
}

const ALL_RANDOM: [u8; 3] = [100; 3];

fn all_random() -> [u8; 3] {
    ALL_RANDOM
}

fn is_all_random(p: &[u8; 3]) -> bool {
    *p == ALL_RANDOM
}

const UNIFORM: Order = Order::Random {
    dist: RandType::Uniform,
};

impl Access {
    pub const fn new(mix: Mix, order: Order) -> Access {
        Access {
            mix,
            order,
            creates_files: false,
            random_pct: ALL_RANDOM,
        }
    }
    /// Sequential writes into files the run creates.
    pub const fn seq_create() -> Access {
        Access {
            creates_files: true,
            ..Access::new(Mix::Write, Order::Sequential)
        }
    }
    pub const fn seq_write() -> Access {
        Access::new(Mix::Write, Order::Sequential)
    }
    pub const fn seq_read() -> Access {
        Access::new(Mix::Read, Order::Sequential)
    }
    /// Uniformly random reads.
    pub const fn rand_read() -> Access {
        Access::new(Mix::Read, UNIFORM)
    }
    pub const fn rand_write() -> Access {
        Access::new(Mix::Write, UNIFORM)
    }
    pub const fn rand_mix(reads_per_write: f64) -> Access {
        Access::new(Mix::Interleaved { reads_per_write }, UNIFORM)
    }
    /// The same, with random offsets drawn from `dist` (sequential orders keep theirs).
    pub const fn with_dist(self, dist: RandType) -> Access {
        match self.order {
            Order::Random { .. } => Access {
                order: Order::Random { dist },
                ..self
            },
            Order::Sequential => self,
        }
    }

    pub fn is_sequential(&self) -> bool {
        self.order == Order::Sequential
    }
    /// Whether some requests of a random order go on from the previous one instead of
    /// drawing their offset (`random_pct` below 100).
    pub fn mixes_in_sequential(&self) -> bool {
        !self.is_sequential() && self.random_pct.iter().any(|&p| p < 100)
    }
    /// Whether it changes the files' data: writes, or trims (which discard it). The files
    /// are then opened for writing, and a device holding data is guarded as for a write.
    pub fn writes(&self) -> bool {
        self.mix != Mix::Read
    }
    /// Whether it issues write requests (a trim-only job changes data without any).
    pub fn issues_writes(&self) -> bool {
        !matches!(self.mix, Mix::Read | Mix::Trim)
    }
    pub fn reads(&self) -> bool {
        !matches!(self.mix, Mix::Write | Mix::Trim | Mix::TrimWrite)
    }
    pub fn trims(&self) -> bool {
        matches!(self.mix, Mix::Trim | Mix::TrimWrite)
    }
    /// The access in words ("random read/write"), for evidence and plain reports.
    pub fn describe(&self) -> &'static str {
        match (self.order, self.mix) {
            (Order::Sequential, Mix::Write) if self.creates_files => {
                "sequential write to new files"
            }
            (Order::Sequential, Mix::Write) => "sequential rewrite",
            (Order::Sequential, Mix::Read) => "sequential read",
            (Order::Sequential, Mix::Interleaved { .. } | Mix::Share { .. }) => {
                "sequential read/write"
            }
            (Order::Random { .. }, Mix::Read) => "random read",
            (Order::Random { .. }, Mix::Write) => "random write",
            (Order::Random { .. }, Mix::Interleaved { .. } | Mix::Share { .. }) => {
                "random read/write"
            }
            (Order::Sequential, Mix::Trim) => "sequential trim",
            (Order::Random { .. }, Mix::Trim) => "random trim",
            (Order::Sequential, Mix::TrimWrite) => "sequential trim then write",
            (Order::Random { .. }, Mix::TrimWrite) => "random trim then write",
        }
    }
    /// The share of requests that are reads, in [0, 1].
    pub fn read_share(&self) -> f64 {
        match self.mix {
            Mix::Read => 1.0,
            Mix::Write | Mix::Trim | Mix::TrimWrite => 0.0,
            Mix::Interleaved { reads_per_write } => reads_per_write / (1.0 + reads_per_write),
            Mix::Share { read_pct } => read_pct as f64 / 100.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_share_follows_the_mix() {
        assert_eq!(Access::seq_read().read_share(), 1.0);
        assert_eq!(Access::rand_write().read_share(), 0.0);
        assert_eq!(Access::rand_mix(1.5).read_share(), 0.6);
        assert!(Access::rand_mix(1.5).reads() && Access::rand_mix(1.5).writes());
        assert!(Access::seq_create().creates_files && Access::seq_create().is_sequential());
    }

    #[test]
    fn trims_change_data_without_reading() {
        let t = Access::new(Mix::Trim, Order::Sequential);
        assert!(t.writes() && t.trims() && !t.reads() && !t.issues_writes());
        let tw = Access::new(Mix::TrimWrite, UNIFORM);
        assert!(tw.writes() && tw.trims() && !tw.reads() && tw.issues_writes());
        assert!(!Access::rand_mix(1.0).trims());
    }
}
