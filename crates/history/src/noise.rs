//! Whether a difference between two runs is beyond their noise.
//!
//! The method: each run's samples (its report intervals, or the observers' samples) are
//! resampled with a circular moving-block bootstrap (blocks of ⌈n^(1/3)⌉ consecutive
//! samples, so a slow drift inside a run widens the interval as it should, which resampling
//! single samples would hide), [`RESAMPLES`] times with the fixed seed [`SEED`] (the same
//! inputs always give the same answer). Each resample gives a statistic per run, the ratio of
//! sums Σvalue / Σweight (events over seconds, so a short last interval weighs less), and the
//! ratio B/A of the two. The 2.5th and 97.5th percentiles of those ratios are the 95%
//! interval: a difference is within noise when the interval contains 1.
//!
//! What this cannot see: a cause outside both runs that moved every sample of one run (a
//! busier machine, a different data placement). Repeat runs to see that kind of noise.

use plumb_core::random::Rng;
use serde::Serialize;

/// Resamples per comparison.
pub const RESAMPLES: usize = 2000;
/// The bootstrap's seed ("plumb" in ASCII).
pub const SEED: u64 = 0x70_6c_75_6d_62;
/// Samples each run needs before its noise is judged.
pub const MIN_SAMPLES: usize = 5;

/// One sample: its value summed over its span and the span's weight (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub weight: f64,
}

/// The 95% interval of the ratio B/A.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains_one(&self) -> bool {
        self.low <= 1.0 && 1.0 <= self.high
    }
}

/// Why no interval could be given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoInterval {
    /// Fewer than [`MIN_SAMPLES`] samples in run A or B (the counts).
    TooFewSamples { a: usize, b: usize },
    /// Run A's statistic is zero: no ratio.
    ZeroBase,
}

/// The 95% interval of Σb.value/Σb.weight over Σa.value/Σa.weight.
pub fn ratio_interval(a: &[Sample], b: &[Sample]) -> Result<Interval, NoInterval> {
    if a.len() < MIN_SAMPLES || b.len() < MIN_SAMPLES {
        return Err(NoInterval::TooFewSamples {
            a: a.len(),
            b: b.len(),
        });
    }
    if statistic(a.iter()) == 0.0 {
        return Err(NoInterval::ZeroBase);
    }
    let mut rng = Rng::new(SEED, 0);
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let sa = resample(a, &mut rng);
        let sb = resample(b, &mut rng);
        if sa > 0.0 && sa.is_finite() && sb.is_finite() {
            ratios.push(sb / sa);
        }
    }
    if ratios.is_empty() {
        return Err(NoInterval::ZeroBase);
    }
    ratios.sort_by(f64::total_cmp);
    Ok(Interval {
        low: quantile(&ratios, 0.025),
        high: quantile(&ratios, 0.975),
    })
}

fn statistic<'a>(s: impl Iterator<Item = &'a Sample>) -> f64 {
    let (v, w) = s.fold((0.0, 0.0), |(v, w), x| (v + x.value, w + x.weight));
    if w > 0.0 {
        v / w
    } else {
        0.0
    }
}

/// Block length for `n` samples: ⌈n^(1/3)⌉.
fn block_len(n: usize) -> usize {
    let mut l = (n as f64).cbrt().ceil() as usize;
    // cbrt of a perfect cube may land a hair above the integer.
    if l > 1 && (l - 1).pow(3) >= n {
        l -= 1;
    }
    l.max(1)
}

/// One circular moving-block resample of `s` (as many samples as `s` has), reduced to its
/// statistic.
fn resample(s: &[Sample], rng: &mut Rng) -> f64 {
    let n = s.len();
    let l = block_len(n);
    let (mut v, mut w) = (0.0, 0.0);
    let mut taken = 0;
    while taken < n {
        let start = rng.below(n as u64) as usize;
        for k in 0..l.min(n - taken) {
            let x = &s[(start + k) % n];
            v += x.value;
            w += x.weight;
        }
        taken += l;
    }
    if w > 0.0 {
        v / w
    } else {
        0.0
    }
}

/// The `q` quantile of sorted `v` (linear between neighbours).
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    match v.get(i + 1) {
        Some(next) => v[i] + (next - v[i]) * frac,
        None => v[i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Vec<Sample> {
        values
            .iter()
            .map(|&v| Sample {
                value: v,
                weight: 1.0,
            })
            .collect()
    }

    #[test]
    fn block_lengths() {
        assert_eq!(block_len(1), 1);
        assert_eq!(block_len(8), 2);
        assert_eq!(block_len(9), 3);
        assert_eq!(block_len(27), 3);
        assert_eq!(block_len(600), 9);
    }

    #[test]
    fn the_same_series_is_within_noise_and_repeatable() {
        let a = series(&[100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0, 102.0]);
        let i = ratio_interval(&a, &a).unwrap();
        assert!(i.contains_one(), "{i:?}");
        assert!(i.low > 0.95 && i.high < 1.05, "{i:?}");
        assert_eq!(ratio_interval(&a, &a).unwrap(), i, "fixed seed");
    }

    #[test]
    fn a_clear_shift_is_beyond_noise() {
        let a = series(&[100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0, 102.0]);
        let b: Vec<Sample> = a
            .iter()
            .map(|s| Sample {
                value: s.value * 0.8,
                weight: 1.0,
            })
            .collect();
        let i = ratio_interval(&a, &b).unwrap();
        assert!(!i.contains_one(), "{i:?}");
        assert!(i.low > 0.75 && i.high < 0.85, "{i:?}");
    }

    #[test]
    fn a_small_shift_inside_wide_noise_is_within_noise() {
        let a = series(&[50.0, 150.0, 80.0, 120.0, 60.0, 140.0, 90.0, 110.0]);
        let b = series(&[55.0, 160.0, 85.0, 125.0, 62.0, 150.0, 95.0, 118.0]);
        assert!(ratio_interval(&a, &b).unwrap().contains_one());
    }

    #[test]
    fn weights_count_a_short_interval_less() {
        // Σv/Σw: 10 events in 0.1 s weigh as a tenth of a full interval.
        let s = [
            Sample {
                value: 100.0,
                weight: 1.0,
            },
            Sample {
                value: 10.0,
                weight: 0.1,
            },
        ];
        assert!((statistic(s.iter()) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn too_few_samples_or_a_zero_base_give_no_interval() {
        let a = series(&[1.0, 2.0, 3.0]);
        let b = series(&[1.0; 6]);
        assert_eq!(
            ratio_interval(&a, &b),
            Err(NoInterval::TooFewSamples { a: 3, b: 6 })
        );
        assert_eq!(
            ratio_interval(&series(&[0.0; 6]), &b),
            Err(NoInterval::ZeroBase)
        );
    }
}
