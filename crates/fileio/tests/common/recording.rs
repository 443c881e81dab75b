//! A test engine that does no I/O and records every operation it is given, in order, so
//! tests can check the exact request stream (kinds, files, offsets, lengths, fsyncs).
//! Completions of queued requests come back in reverse order, to exercise workers that must
//! not assume in-order completion.
//!
//! A read fills its buffer with [`FILE_BYTE`], as file data would; a write whose buffer still
//! holds those bytes fails (EINVAL): a write must carry the fill's bytes, never what a read
//! left in a shared buffer.

use std::sync::{Arc, Mutex};

use plumb_core::{Worker, WorkloadError};
use plumb_fileio::engine::{
    always, nothing_shared, Buffers, Caps, Dir, Engine, EngineDef, Errno, Request, Submitted,
};
use plumb_fileio::pattern::Io;
use plumb_fileio::spec::FileioSpec;
use plumb_fileio::worker::Setup;
use plumb_fileio::FileioWorkload;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rec {
    Read(Io),
    Write(Io),
    /// Done inside its submission, as every engine trims.
    Trim(Io),
    Sync(u32),
    /// A queued request completed (queueing engine only).
    Done(Io),
}

pub type Log = Arc<Mutex<Vec<Rec>>>;

/// What a read leaves in its buffer.
pub const FILE_BYTE: u8 = 0xa5;

/// What the engine's threads share: the log, which completion (1-based) fails with EIO,
/// and from which completion on every one finds the disk full (ENOSPC).
struct State {
    log: Log,
    fail_at: Option<u64>,
    full_from: Option<u64>,
}

const CAPS: Caps = Caps::NONE;

/// Every request completes inside its submission.
pub static BLOCKING: EngineDef = EngineDef {
    name: "recording",
    caps: CAPS,
    options: &[],
    available: always,
    share: nothing_shared,
    worker: worker::<false>,
};

/// Requests stay in flight until reaped, like io_uring and libaio.
pub static QUEUED: EngineDef = EngineDef {
    name: "recording",
    caps: Caps {
        queued: true,
        ..CAPS
    },
    options: &[],
    available: always,
    share: nothing_shared,
    worker: worker::<true>,
};

/// Queued, and each reap completes only as many requests as it must (the oldest first), as
/// a slow device would: the worker's refill policy shows in the request stream.
pub static QUEUED_SLOW: EngineDef = EngineDef {
    name: "recording",
    caps: Caps {
        queued: true,
        ..CAPS
    },
    options: &[],
    available: always,
    share: nothing_shared,
    worker: worker_slow,
};

/// A workload on the recording engine (queued or blocking per `spec.engine`), its log, and
/// the completion to fail with EIO, if any.
pub fn workload(spec: FileioSpec, fail_at: Option<u64>) -> (FileioWorkload, Log) {
    with_state(spec, fail_at, None)
}

/// A workload whose completions from the `n`th (1-based) on fail with ENOSPC, and its log.
pub fn full_from(spec: FileioSpec, n: u64) -> (FileioWorkload, Log) {
    with_state(spec, None, Some(n))
}

fn with_state(
    spec: FileioSpec,
    fail_at: Option<u64>,
    full_from: Option<u64>,
) -> (FileioWorkload, Log) {
    let log: Log = Arc::default();
    let state = Arc::new(State {
        log: log.clone(),
        fail_at,
        full_from,
    });
    (FileioWorkload::with_engine(spec, Some(state)), log)
}

fn worker<const QUEUED: bool>(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    build::<QUEUED>(s, false)
}

fn worker_slow(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    build::<true>(s, true)
}

fn build<const QUEUED: bool>(s: Setup, slow: bool) -> Result<Box<dyn Worker>, WorkloadError> {
    let state = s
        .shared
        .and_then(|a| a.downcast::<State>().ok())
        .ok_or_else(|| WorkloadError::new("the recording engine needs its log"))?;
    Ok(s.driver.drive(RecordingEngine::<QUEUED> {
        bufs: s.bufs,
        log: state.log.clone(),
        fail_at: state.fail_at,
        full_from: state.full_from,
        queued: Vec::new(),
        completed: 0,
        slow,
    }))
}

struct RecordingEngine<const QUEUED: bool> {
    bufs: Buffers,
    log: Log,
    queued: Vec<(usize, Io)>,
    fail_at: Option<u64>,
    full_from: Option<u64>,
    completed: u64,
    /// Reap only what must be reaped, oldest first.
    slow: bool,
}

impl<const QUEUED: bool> RecordingEngine<QUEUED> {
    fn note(&self, r: Rec) {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).push(r);
    }
    /// Move the data: reads bring in [`FILE_BYTE`]s; writes must not send them back (past
    /// the first 8 bytes, where a random fill stamps each write).
    fn transfer(&mut self, slot: usize, req: Request) -> Result<(), Errno> {
        let buf = &mut self.bufs.get(slot)[..req.io.len as usize];
        match req.dir {
            Dir::Read => buf.fill(FILE_BYTE),
            Dir::Write if buf.len() > 8 && buf[8..].iter().all(|&b| b == FILE_BYTE) => {
                return Err(Errno {
                    call: "pwrite of a read's bytes",
                    errno: libc::EINVAL,
                });
            }
            Dir::Write | Dir::Trim => {}
        }
        Ok(())
    }
}

impl<const QUEUED: bool> Engine for RecordingEngine<QUEUED> {
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    fn submit(&mut self, slot: usize, req: Request) -> Result<Submitted, Errno> {
        self.note(match req.dir {
            Dir::Read => Rec::Read(req.io),
            Dir::Write => Rec::Write(req.io),
            Dir::Trim => Rec::Trim(req.io),
        });
        self.transfer(slot, req)?;
        if !QUEUED || req.dir == Dir::Trim {
            return Ok(Submitted::Done(Ok(req.io.len as usize)));
        }
        self.queued.push((slot, req.io));
        Ok(Submitted::Queued)
    }
    fn reap<F: FnMut(usize, i64)>(
        &mut self,
        min: usize,
        max: usize,
        _deadline: Option<std::time::Instant>,
        mut done: F,
    ) -> Result<usize, Errno> {
        if self.slow {
            let n = min.max(1).min(self.queued.len());
            for (slot, io) in self.queued.drain(..n).collect::<Vec<_>>() {
                self.note(Rec::Done(io));
                self.completed += 1;
                done(slot, io.len as i64);
            }
            return Ok(n);
        }
        let n = self.queued.len().min(max.max(1));
        for _ in 0..n {
            let Some((slot, io)) = self.queued.pop() else {
                break;
            };
            self.note(Rec::Done(io));
            self.completed += 1;
            let res = if self.fail_at == Some(self.completed) {
                -(libc::EIO as i64)
            } else if self.full_from.is_some_and(|n| self.completed >= n) {
                -(libc::ENOSPC as i64)
            } else {
                io.len as i64
            };
            done(slot, res);
        }
        Ok(n)
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        self.note(Rec::Sync(file));
        Ok(())
    }
}
