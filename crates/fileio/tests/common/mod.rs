//! Test engines, registered with the workload through its engine-injection API (they are not
//! in the production engine table).

// Each test crate uses its own part of it.
#[allow(dead_code)]
pub mod recording;
