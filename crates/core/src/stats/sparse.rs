//! The lossless form of a [`Histogram`] in results: its non-empty buckets by index plus the
//! exact moments, so histograms from threads, jobs, runs or hosts merge exactly, bucket by
//! bucket, after a round trip through JSON.

use serde::{Deserialize, Serialize};

#[cfg(test)]
use super::histogram::bucket_of;
use super::histogram::{Histogram, Moments, BUCKETS};

/// The bucket layout a [`SparseHistogram`] indexes into; a reader that meets another
/// layout must not merge it.
pub const LAYOUT: &str = "log-linear/11";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SparseHistogram {
    pub layout: String,
    pub count: u64,
    pub sum_ns: u64,
    /// Sum of squares in ns², exact (it overflows 64 bits after a few seconds of samples),
    /// written as a decimal string: JSON readers that use doubles would round it.
    #[serde(with = "decimal_string")]
    pub sum_sq_ns2: u128,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Non-empty buckets as [bucket index, count], in index order.
    pub buckets: Vec<[u64; 2]>,
}

/// A stored histogram that cannot be turned back into a [`Histogram`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SparseError {
    #[error("histogram layout '{0}' is not plumb's ({LAYOUT})")]
    Layout(String),
    #[error("histogram bucket index {0} is out of range")]
    Index(u64),
    #[error("histogram bucket counts add up to {buckets}, but its count says {count}")]
    Count { buckets: u64, count: u64 },
}

impl From<&Histogram> for SparseHistogram {
    fn from(h: &Histogram) -> Self {
        let m = h.moments();
        let empty = m.count == 0;
        SparseHistogram {
            layout: LAYOUT.to_string(),
            count: m.count,
            sum_ns: m.sum,
            sum_sq_ns2: m.sum_sq,
            min_ns: if empty { 0 } else { m.min },
            max_ns: m.max,
            buckets: h.indexed().map(|(i, c)| [i as u64, c]).collect(),
        }
    }
}

impl TryFrom<&SparseHistogram> for Histogram {
    type Error = SparseError;
    fn try_from(s: &SparseHistogram) -> Result<Histogram, SparseError> {
        if s.layout != LAYOUT {
            return Err(SparseError::Layout(s.layout.clone()));
        }
        let mut counts: Vec<(usize, u64)> = Vec::with_capacity(s.buckets.len());
        let mut total = 0u64;
        for &[i, c] in &s.buckets {
            if i >= BUCKETS as u64 {
                return Err(SparseError::Index(i));
            }
            counts.push((i as usize, c));
            total += c;
        }
        // Written in index order; a hand-made file may not be.
        counts.sort_unstable_by_key(|&(i, _)| i);
        if total != s.count {
            return Err(SparseError::Count {
                buckets: total,
                count: s.count,
            });
        }
        let moments = if s.count == 0 {
            Moments::default()
        } else {
            Moments {
                count: s.count,
                sum: s.sum_ns,
                sum_sq: s.sum_sq_ns2,
                min: s.min_ns,
                max: s.max_ns,
            }
        };
        Ok(Histogram::from_indexed(&counts, moments))
    }
}

mod decimal_string {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|_| D::Error::custom(format!("'{text}' is not a whole number")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_json_is_exact_and_merges_bucket_by_bucket() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        for v in [1u64, 900, 15_000, 15_001, 7_000_000_000] {
            a.record(v);
        }
        for v in [2u64, 15_002, 123_456_789] {
            b.record(v);
        }
        let json_a = serde_json::to_string(&SparseHistogram::from(&a)).unwrap();
        let json_b = serde_json::to_string(&SparseHistogram::from(&b)).unwrap();
        let back_a: SparseHistogram = serde_json::from_str(&json_a).unwrap();
        let back_b: SparseHistogram = serde_json::from_str(&json_b).unwrap();
        let mut merged = Histogram::try_from(&back_a).unwrap();
        merged.merge(&Histogram::try_from(&back_b).unwrap());
        let mut direct = a.clone();
        direct.merge(&b);
        assert_eq!(merged.moments(), direct.moments());
        for p in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(merged.percentile(p), direct.percentile(p), "p{p}");
        }
        assert_eq!(
            SparseHistogram::from(&merged),
            SparseHistogram::from(&direct)
        );
    }

    #[test]
    fn buckets_out_of_order_or_repeated_read_back_as_their_sum() {
        let mut h = Histogram::new();
        for v in [3u64, 3, 5_000, 9] {
            h.record(v);
        }
        let mut s = SparseHistogram::from(&h);
        s.buckets = vec![[bucket_of(5_000) as u64, 1], [9, 1], [3, 1], [3, 1]];
        let back = Histogram::try_from(&s).unwrap();
        assert_eq!(SparseHistogram::from(&back), SparseHistogram::from(&h));
    }

    #[test]
    fn empty_and_damaged_histograms() {
        let empty = SparseHistogram::from(&Histogram::new());
        assert_eq!(empty.count, 0);
        assert!(empty.buckets.is_empty());
        assert_eq!(Histogram::try_from(&empty).unwrap().count(), 0);
        let mut bad = empty.clone();
        bad.buckets.push([BUCKETS as u64, 1]);
        assert_eq!(
            Histogram::try_from(&bad).unwrap_err(),
            SparseError::Index(BUCKETS as u64)
        );
        let mut bad = empty.clone();
        bad.buckets.push([3, 2]);
        assert!(matches!(
            Histogram::try_from(&bad),
            Err(SparseError::Count { .. })
        ));
        let mut bad = empty;
        bad.layout = "hdr".into();
        assert!(matches!(
            Histogram::try_from(&bad),
            Err(SparseError::Layout(_))
        ));
    }
}
