//! preadv/pwritev, blocking: fio's `pvsync`, one buffer per call (the psync engine with
//! vectored calls).

use plumb_core::{Worker, WorkloadError};

use super::psync::Positional;
use super::{always, nothing_shared, Caps, EngineDef};
use crate::worker::Setup;

pub static DEF: EngineDef = EngineDef {
    name: "pvsync",
    caps: Caps::FILE_CALLS,
    options: &[],
    available: always,
    share: nothing_shared,
    worker,
};

pub type PvsyncEngine = Positional<true>;

fn worker(s: Setup) -> Result<Box<dyn Worker>, WorkloadError> {
    let files = s.files()?;
    Ok(s.driver.drive(PvsyncEngine::new(files, s.bufs, s.fsync)))
}
