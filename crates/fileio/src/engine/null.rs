//! The null engine: every request completes at once without touching a file, so a run
//! measures plumb's own cost per operation (pattern, timing, recording).

use super::{Buffers, Engine, Errno, QueueEngine, Request};

pub struct NullEngine {
    bufs: Buffers,
    /// Queued slots and their lengths, completed at the next reap.
    queued: Vec<(usize, u32)>,
}

impl NullEngine {
    pub fn new(bufs: Buffers) -> NullEngine {
        let n = bufs.len();
        NullEngine {
            bufs,
            queued: Vec::with_capacity(n),
        }
    }
}

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline(always)]
    fn execute(&mut self, _slot: usize, req: Request) -> Result<usize, Errno> {
        Ok(req.io.len as usize)
    }
    fn sync(&mut self, _file: u32) -> Result<(), Errno> {
        Ok(())
    }
}

impl QueueEngine for NullEngine {
    fn queue(&mut self, slot: usize, req: Request) -> Result<(), Errno> {
        self.queued.push((slot, req.io.len));
        Ok(())
    }
    fn reap<F: FnMut(usize, i64)>(&mut self, _min: usize, mut done: F) -> Result<usize, Errno> {
        let n = self.queued.len();
        for (slot, len) in self.queued.drain(..) {
            done(slot, len as i64);
        }
        Ok(n)
    }
}
