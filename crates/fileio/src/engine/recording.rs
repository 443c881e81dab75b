//! A test engine that does no I/O and records every operation it is given, in order, so
//! tests can check the exact request stream (kinds, files, offsets, lengths, fsyncs).
//! Completions of queued requests come back in reverse order, to exercise workers that must
//! not assume in-order completion.
//!
//! A read fills its buffer with [`FILE_BYTE`], as file data would; a write whose buffer still
//! holds those bytes fails (EINVAL): a write must carry the fill's bytes, never what a read
//! left in a shared buffer.

use std::sync::{Arc, Mutex};

use super::{Buffers, Dir, Engine, Errno, QueueEngine, Request};
use crate::pattern::Io;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rec {
    Read(Io),
    Write(Io),
    Sync(u32),
    /// A queued request completed (queueing engines only).
    Done(Io),
}

pub type Log = Arc<Mutex<Vec<Rec>>>;

/// What a read leaves in its buffer.
pub const FILE_BYTE: u8 = 0xa5;

pub struct RecordingEngine {
    bufs: Buffers,
    log: Log,
    queued: Vec<(usize, Io)>,
    /// Fail the completion with this number (1-based) with EIO, to test error paths.
    fail_at: Option<u64>,
    completed: u64,
}

impl RecordingEngine {
    pub fn new(bufs: Buffers, log: Log) -> RecordingEngine {
        RecordingEngine {
            bufs,
            log,
            queued: Vec::new(),
            fail_at: None,
            completed: 0,
        }
    }
    /// The same engine, failing its `n`th completion with EIO.
    pub fn failing_at(mut self, n: Option<u64>) -> RecordingEngine {
        self.fail_at = n;
        self
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
            Dir::Write => {}
        }
        Ok(())
    }

    fn note(&self, req: Request) {
        let r = match req.dir {
            Dir::Read => Rec::Read(req.io),
            Dir::Write => Rec::Write(req.io),
        };
        self.log.lock().unwrap_or_else(|p| p.into_inner()).push(r);
    }
}

impl Engine for RecordingEngine {
    fn name(&self) -> &'static str {
        "recording"
    }
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    fn execute(&mut self, slot: usize, req: Request) -> Result<usize, Errno> {
        self.note(req);
        self.transfer(slot, req)?;
        Ok(req.io.len as usize)
    }
    fn sync(&mut self, file: u32) -> Result<(), Errno> {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Rec::Sync(file));
        Ok(())
    }
}

impl QueueEngine for RecordingEngine {
    fn queue(&mut self, slot: usize, req: Request) -> Result<(), Errno> {
        self.note(req);
        self.transfer(slot, req)?;
        self.queued.push((slot, req.io));
        Ok(())
    }
    fn reap<F: FnMut(usize, i64)>(&mut self, _min: usize, mut done: F) -> Result<usize, Errno> {
        let n = self.queued.len();
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        while let Some((slot, io)) = self.queued.pop() {
            log.push(Rec::Done(io));
            self.completed += 1;
            let res = if self.fail_at == Some(self.completed) {
                -(libc::EIO as i64)
            } else {
                io.len as i64
            };
            done(slot, res);
        }
        Ok(n)
    }
}
