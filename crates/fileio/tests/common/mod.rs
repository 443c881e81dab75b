//! Test engines, registered with the workload through its engine-injection API (they are not
//! in the production engine table).

pub mod recording;
