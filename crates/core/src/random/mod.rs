//! Random streams: one xoroshiro128+ generator per worker thread (sysbench uses the same
//! family), seeded from `--rand-seed` and the thread number so runs repeat exactly, and the
//! distributions sysbench offers through `--rand-type`.

mod dist;
mod xoroshiro;

pub use dist::{Distribution, RandType, RandTypeError};
pub use xoroshiro::Rng;
