//! The null engine: every request completes at once without touching a file, so a run
//! measures plumb's own cost per operation (pattern, timing, recording).

use plumb_core::{Worker, WorkloadError};

use super::{always, nothing_shared, Buffers, Caps, Engine, EngineDef, Errno, Request, Submitted};
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "null",
    caps: Caps::NONE,
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    Ok(s.driver.drive(NullEngine { bufs: s.bufs }))
}

pub struct NullEngine {
    bufs: Buffers,
}

impl Engine for NullEngine {
    const COMPLETES_INLINE: bool = true;
    fn slots(&self) -> usize {
        self.bufs.len()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.bufs.get(slot)
    }
    #[inline(always)]
    fn submit(&mut self, _slot: usize, req: Request) -> Result<Submitted, Errno> {
        Ok(Submitted::Done(Ok(req.io.len as usize)))
    }
    fn sync(&mut self, _file: u32) -> Result<(), Errno> {
        Ok(())
    }
}
