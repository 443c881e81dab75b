//! Summaries of a histogram as they appear in results.

use serde::{Deserialize, Serialize};

use super::Histogram;

/// One requested percentile and its value.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Percentile {
    pub percentile: f64,
    pub value_ns: u64,
}

/// Latency figures of one operation kind (or of all events), in nanoseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub max_ns: u64,
    pub stddev_ns: f64,
    pub sum_ns: u64,
    pub percentiles: Vec<Percentile>,
    /// Non-empty buckets as [low_ns, high_ns, count], present when a histogram was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Vec<[u64; 3]>>,
}

impl LatencySummary {
    pub fn from_histogram(h: &Histogram, percentiles: &[f64], with_buckets: bool) -> Self {
        if h.count() == 0 {
            return LatencySummary {
                histogram: with_buckets.then(Vec::new),
                ..Default::default()
            };
        }
        LatencySummary {
            count: h.count(),
            min_ns: h.min().unwrap_or(0),
            mean_ns: h.mean().unwrap_or(0.0),
            max_ns: h.max().unwrap_or(0),
            stddev_ns: h.stddev().unwrap_or(0.0),
            sum_ns: h.moments().sum,
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    percentile: p,
                    value_ns: h.percentile(p).unwrap_or(0),
                })
                .collect(),
            histogram: with_buckets.then(|| h.nonzero().map(|(l, hi, c)| [l, hi, c]).collect()),
        }
    }
}
