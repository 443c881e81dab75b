//! fio's `continue_on_error` and `ignore_error`: the I/O errors a job counts and goes on
//! after.
//!
//! fio sorts an error into one of three kinds, an EILSEQ being verify's whatever the
//! direction, another error of a read the read kind's, and any other (writes, trims,
//! syncs) the write kind's; a kind that goes on lists the errno values it tolerates
//! (continue_on_error's default list is EIO and EILSEQ; ignore_error gives its own). A
//! tolerated request counts as issued, with neither bytes nor a time, as fio counts it.
//! Every error of a kind that goes on is counted, the one that stops the job too (fio's
//! `update_error_count` on both paths), with the first one's errno for fio's `errors`
//! line.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicI32, AtomicU64};

use serde::{Deserialize, Serialize};

use crate::engine::Dir;

/// The errno values each kind goes on after (empty: the kind stops at its first error).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tolerate {
    pub read: Vec<i32>,
    pub write: Vec<i32>,
    pub verify: Vec<i32>,
}

impl Tolerate {
    /// The list of the kind an error `errno` of a request in direction `dir` falls in.
    fn kind(&self, dir: Dir, errno: i32) -> &[i32] {
        if errno == libc::EILSEQ {
            &self.verify
        } else if dir == Dir::Read {
            &self.read
        } else {
            &self.write
        }
    }

    /// Whether an error `errno` of a request in direction `dir` lets the job go on.
    pub fn allows(&self, dir: Dir, errno: i32) -> bool {
        self.kind(dir, errno).contains(&errno)
    }

    /// Whether such an error is counted: its kind goes on after some errors (fio counts
    /// no error of a kind continue_on_error leaves off, not even the one that stops the
    /// job).
    pub fn counts(&self, dir: Dir, errno: i32) -> bool {
        !self.kind(dir, errno).is_empty()
    }
}

/// A job's errors across its threads: how many, and the first one's errno (0: none).
#[derive(Debug, Default)]
pub struct ErrorCount {
    pub total: AtomicU64,
    pub first: AtomicI32,
}

impl ErrorCount {
    pub fn add(&self, errno: i32) {
        self.total.fetch_add(1, Relaxed);
        let _ = self.first.compare_exchange(0, errno, Relaxed, Relaxed);
    }

    /// (total, first errno).
    pub fn get(&self) -> (u64, i32) {
        (self.total.load(Relaxed), self.first.load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_goes_to_its_kind_and_eilseq_to_verify_whatever_the_direction() {
        let t = Tolerate {
            read: vec![libc::EIO],
            write: vec![libc::ENOSPC],
            verify: vec![],
        };
        assert!(t.allows(Dir::Read, libc::EIO));
        assert!(!t.allows(Dir::Write, libc::EIO));
        assert!(t.allows(Dir::Write, libc::ENOSPC));
        assert!(t.allows(Dir::Trim, libc::ENOSPC));
        assert!(!t.allows(Dir::Read, libc::ENOSPC));
        assert!(!t.allows(Dir::Read, libc::EILSEQ));
        assert!(t.counts(Dir::Read, libc::EBADF));
        assert!(!t.counts(Dir::Read, libc::EILSEQ));
        let v = Tolerate {
            verify: vec![libc::EILSEQ],
            ..Tolerate::default()
        };
        assert!(v.allows(Dir::Write, libc::EILSEQ));
    }

    #[test]
    fn the_first_error_stays_first() {
        let c = ErrorCount::default();
        assert_eq!(c.get(), (0, 0));
        c.add(libc::ENOSPC);
        c.add(libc::EIO);
        assert_eq!(c.get(), (2, libc::ENOSPC));
    }
}
