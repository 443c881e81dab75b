//! One [`crate::Job`] per workload, shared by every front end: a front end builds the
//! workload's spec from what the user typed and hands it over in one of these.

pub mod dd;
pub mod fileio;
pub mod micro;
pub mod oltp;
pub mod slap;
