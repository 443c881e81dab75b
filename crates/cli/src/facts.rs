//! Fill the advisor's [`Facts`] from what a run produced. Tests add their own parts (I/O
//! settings, memory block) through `TestPlan::facts`; observations add the rest.

use plumb_advise::Facts;
use plumb_core::result::RunResult;

/// The facts every run has: its shape, its intervals and its latency distribution.
pub fn from_result(r: &RunResult, latency_buckets: Vec<[u64; 3]>) -> Facts {
    Facts {
        test: r.test.clone(),
        threads: r.settings.threads,
        duration_s: r.total_time_s,
        events: r.events,
        interval_rates: r
            .intervals
            .iter()
            .filter(|i| !i.warmup)
            .map(|i| i.events_per_s)
            .collect(),
        latency_buckets,
        ..Default::default()
    }
}
