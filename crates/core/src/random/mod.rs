//! Random streams: one xoroshiro128+ generator per worker thread (sysbench uses the same
//! family), seeded from `--rand-seed` and the thread number so runs repeat exactly, the
//! distributions sysbench offers through `--rand-type`, and the skewed block choices with
//! their own parameters that fio's `random_distribution` names (`skew`).

mod dist;
mod skew;
mod xoroshiro;
mod zones;

pub use dist::{Distribution, RandType, RandTypeError, Shape};
pub use skew::{Skew, SkewError, SkewedBlocks};
pub use xoroshiro::Rng;
pub use zones::{ZoneBlocks, ZoneBytes, ZoneShare};
