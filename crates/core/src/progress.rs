//! Where long work (laying out files, loading tables) reports how far it got: a terminal
//! bar in the binary, nothing in tests and pipes.

pub trait Progress {
    fn start(&mut self, _total_bytes: u64) {}
    fn advance(&mut self, _bytes: u64) {}
    fn finish(&mut self) {}
}

/// No progress display.
pub struct Quiet;
impl Progress for Quiet {}
