//! Skewed choices of one block out of n: zipf, pareto and normal, each with its parameter
//! and an optional center, and fio's zones ([`super::zones`]): the shapes fio's
//! `random_distribution` names.
//!
//! A draw is a *rank*, then a *place*:
//! - zipf θ: rank k (from 0) with probability proportional to 1/(k+1)^θ (Gray et al.'s
//!   generator, as for sysbench's zipfian, with any θ ≠ 1).
//! - pareto h: rank ⌊(n−1)·u^(ln h / ln(1−h))⌋ for a uniform u, so small ranks dominate.
//! - normal σ: the mean of 12 uniform draws over [0, n], rounded up (centred on n/2 with a
//!   spread of about n/12 whatever σ says), moved by a uniform jitter as wide as σ% of n
//!   (halved until the rank stays inside the range).
//!
//! Placing scatters the rank over the range, multiplying it by 0x61C8_8646_80B5_83EB
//! (2^64/φ², the golden-ratio multiplier) and keeping the rest modulo n, then rotates it:
//! by center·n for zipf and pareto, by (center − ½)·n for normal (whose ranks already sit
//! around n/2). Without a center, zipf and pareto rotate by a random amount per file
//! ([`SkewedBlocks::place`]) and normal does not rotate. Scattering keeps the hot set from
//! being one stretch at the start of the region, which readahead and device caches would
//! favour. fio 3.33 scatters the same ranks with the same multiplier, so a job that gives
//! a center finds its hottest blocks where fio puts them; note that the scattering also
//! applies to normal and to a given center, which only fixes where rank 0 (zipf, pareto) or
//! n/2 (normal) lands. Zones are neither scattered nor rotated: each is where it is asked.

use thiserror::Error;

use super::dist::zeta;
use super::zones::{self, ZoneBytes, ZoneShare, ZoneTable};
use super::Rng;

/// How a random block is chosen.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Skew {
    /// Every block equally likely.
    #[default]
    Uniform,
    Zipf {
        theta: f64,
        /// Where rank 0 lands, as a fraction of the range in [0, 1].
        center: Option<f64>,
    },
    Pareto {
        h: f64,
        center: Option<f64>,
    },
    Normal {
        /// Width of the jitter, in percent of the range, in [0, 100).
        spread_pct: f64,
        center: Option<f64>,
    },
    /// Zones one after another from the region's start, each with its share of the draws
    /// and of the region (fio's `zoned`): the shares of the draws add up to 100, the sizes
    /// to at most 100 (what is left at the end is never drawn). No zones: every block
    /// equally likely, but as for every other skew without a random map (fio turns it off
    /// for any distribution but `random`).
    Zoned {
        zones: Vec<ZoneShare>,
    },
    /// The same with the zones' lengths in bytes (fio's `zoned_abs`).
    #[serde(rename = "zoned_abs")]
    ZonedAbs {
        zones: Vec<ZoneBytes>,
    },
}

/// A skew whose parameters cannot work.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum SkewError {
    #[error("zipf theta must not be 1 (got {0})")]
    ZipfThetaOne(f64),
    #[error("pareto h must be inside (0, 1) (got {0})")]
    ParetoOutOfRange(f64),
    #[error("normal spread must be in [0, 100) percent (got {0})")]
    SpreadOutOfRange(f64),
    #[error("the center must be in [0, 1] (got {0})")]
    CenterOutOfRange(f64),
    #[error("parameter {0} is not a finite number")]
    NotFinite(f64),
    #[error("the zones' shares of the draws add up to {0}, not 100")]
    ZoneShares(u32),
    #[error("the zones' sizes add up to {0} percent, more than 100")]
    ZoneSizes(u32),
}

impl Skew {
    pub fn is_uniform(&self) -> bool {
        matches!(self, Skew::Uniform)
    }

    pub fn center(&self) -> Option<f64> {
        match *self {
            Skew::Uniform | Skew::Zoned { .. } | Skew::ZonedAbs { .. } => None,
            Skew::Zipf { center, .. }
            | Skew::Pareto { center, .. }
            | Skew::Normal { center, .. } => center,
        }
    }

    /// Check the parameters (a skew that passes never makes [`SkewedBlocks`] leave its range
    /// or fail).
    pub fn check(&self) -> Result<(), SkewError> {
        let (p, center) = match self {
            Skew::Uniform => return Ok(()),
            Skew::Zoned { zones } => {
                let sizes: u32 = zones.iter().map(|z| u32::from(z.size_pct)).sum();
                if sizes > 100 {
                    return Err(SkewError::ZoneSizes(sizes));
                }
                return zone_shares(zones.iter().map(|z| z.access_pct));
            }
            Skew::ZonedAbs { zones } => return zone_shares(zones.iter().map(|z| z.access_pct)),
            Skew::Zipf { theta, center } => (*theta, *center),
            Skew::Pareto { h, center } => (*h, *center),
            Skew::Normal { spread_pct, center } => (*spread_pct, *center),
        };
        for v in std::iter::once(p).chain(center) {
            if !v.is_finite() {
                return Err(SkewError::NotFinite(v));
            }
        }
        match *self {
            Skew::Zipf { theta, .. } if theta == 1.0 => return Err(SkewError::ZipfThetaOne(theta)),
            Skew::Pareto { h, .. } if h <= 0.0 || h >= 1.0 => {
                return Err(SkewError::ParetoOutOfRange(h))
            }
            Skew::Normal { spread_pct, .. } if !(0.0..100.0).contains(&spread_pct) => {
                return Err(SkewError::SpreadOutOfRange(spread_pct))
            }
            _ => {}
        }
        match center {
            Some(c) if !(0.0..=1.0).contains(&c) => Err(SkewError::CenterOutOfRange(c)),
            _ => Ok(()),
        }
    }
}

/// Zones share out every draw, or there are none.
fn zone_shares(shares: impl Iterator<Item = u8>) -> Result<(), SkewError> {
    let mut any = false;
    let sum: u32 = shares.inspect(|_| any = true).map(u32::from).sum();
    if any && sum != 100 {
        return Err(SkewError::ZoneShares(sum));
    }
    Ok(())
}

const SCATTER: u64 = 0x61C8_8646_80B5_83EB;
const NORMAL_DRAWS: u64 = 12;

#[derive(Clone, Debug)]
enum Shape {
    Zipf {
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    Pareto {
        power: f64,
    },
    Normal {
        /// Jitter width in blocks (0: none).
        jitter: u64,
    },
    Zoned(ZoneTable),
}

/// A non-uniform skew bound to n blocks, its constants computed once (zipf's ζ(n) takes
/// up to a million terms, so build it before the measured run).
#[derive(Clone, Debug)]
pub struct SkewedBlocks {
    n: u64,
    shape: Shape,
    rotate: u64,
    /// No center given: [`SkewedBlocks::place`] chooses the rotation.
    free: bool,
}

impl SkewedBlocks {
    /// The skew over blocks 0..n (`n` ≥ 1) of `block` bytes (the unit of `zoned_abs`);
    /// `None` for a uniform skew, which needs none of this. The parameters must have passed
    /// [`Skew::check`].
    pub fn new(skew: &Skew, n: u64, block: u64) -> Option<SkewedBlocks> {
        let n = n.max(1);
        let (shape, center) = match *skew {
            Skew::Uniform => return None,
            Skew::Zoned { ref zones } => {
                let blocks = zones::share_blocks(zones, n);
                let shares = zones.iter().map(|z| z.access_pct);
                (
                    Shape::Zoned(ZoneTable::new(&shares.zip(blocks).collect::<Vec<_>>(), n)),
                    None,
                )
            }
            Skew::ZonedAbs { ref zones } => {
                let blocks = zones::byte_blocks(zones, block);
                let shares = zones.iter().map(|z| z.access_pct);
                (
                    Shape::Zoned(ZoneTable::new(&shares.zip(blocks).collect::<Vec<_>>(), n)),
                    None,
                )
            }
            Skew::Zipf { theta, center } => {
                let zetan = zeta(n, theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                (
                    Shape::Zipf {
                        theta,
                        zetan,
                        alpha: 1.0 / (1.0 - theta),
                        eta,
                    },
                    center,
                )
            }
            Skew::Pareto { h, center } => (
                Shape::Pareto {
                    power: h.ln() / (1.0 - h).ln(),
                },
                center,
            ),
            Skew::Normal { spread_pct, center } => {
                let jitter = ((n as f64 * spread_pct) / 100.0).ceil() as u64;
                (
                    Shape::Normal {
                        jitter: jitter.min(n / 2),
                    },
                    center,
                )
            }
        };
        let rotate = match (&shape, center) {
            // Two's complement for a center below ½: a rotation backwards.
            (Shape::Normal { .. }, Some(c)) => ((c - 0.5) * n as f64) as i64 as u64,
            (_, Some(c)) => (c * n as f64) as u64,
            _ => 0,
        };
        let free = center.is_none() && matches!(shape, Shape::Zipf { .. } | Shape::Pareto { .. });
        Some(SkewedBlocks {
            n,
            shape,
            rotate,
            free,
        })
    }

    /// Blocks in the range.
    pub fn blocks(&self) -> u64 {
        self.n
    }

    /// Whether the rotation is still to be chosen with [`SkewedBlocks::place`].
    pub fn needs_place(&self) -> bool {
        self.free
    }

    /// Rotate the hot set by `draw` (any random number) when no center fixes it; otherwise
    /// nothing changes.
    pub fn place(&mut self, draw: u64) {
        if self.free {
            self.rotate = draw;
            self.free = false;
        }
    }

    /// One rank in [0, n), before placing: 0 is the hottest for zipf and pareto, n/2 the
    /// most likely for normal; for zones, the block itself.
    #[inline]
    pub fn rank(&self, rng: &mut Rng) -> u64 {
        let n = self.n;
        let k = match self.shape {
            Shape::Zoned(ref t) => {
                let v = rng.below(100) + 1;
                match t.zone(v) {
                    Some(z) => z.start + rng.below(z.len),
                    None => rng.below(n),
                }
            }
            Shape::Zipf {
                theta,
                zetan,
                alpha,
                eta,
            } => {
                let u = rng.next_f64();
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(theta) {
                    1
                } else {
                    (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                }
            }
            Shape::Pareto { power } => ((n - 1) as f64 * rng.next_f64().powf(power)) as u64,
            Shape::Normal { jitter } => {
                let sum: u64 = (0..NORMAL_DRAWS).map(|_| rng.below(n + 1)).sum();
                let mean = sum.div_ceil(NORMAL_DRAWS).min(n - 1) as i64;
                if jitter == 0 {
                    mean as u64
                } else {
                    let w = jitter as i64;
                    let mut d = (jitter as f64 * rng.next_f64()) as i64 - w / 2;
                    while mean + d < 0 || mean + d >= n as i64 {
                        d /= 2;
                    }
                    (mean + d) as u64
                }
            }
        };
        k.min(n - 1)
    }

    /// Where rank `k` lands: scattered, then rotated (zones stay where they are).
    #[inline]
    pub fn place_rank(&self, k: u64) -> u64 {
        if let Shape::Zoned(_) = self.shape {
            return k;
        }
        k.wrapping_mul(SCATTER).wrapping_add(self.rotate) % self.n
    }

    /// One block in [0, n).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.place_rank(self.rank(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: usize = 200_000;

    fn counts(s: &SkewedBlocks, seed: u64) -> Vec<u64> {
        let mut r = Rng::new(seed, 0);
        let mut c = vec![0u64; s.blocks() as usize];
        for _ in 0..DRAWS {
            c[s.sample(&mut r) as usize] += 1;
        }
        c
    }

    /// Share of all draws that fell on the hottest `pct`% of blocks.
    fn hottest_share(mut c: Vec<u64>, pct: usize) -> f64 {
        c.sort_unstable_by(|a, b| b.cmp(a));
        let top = (c.len() * pct).div_ceil(100);
        c[..top].iter().sum::<u64>() as f64 / c.iter().sum::<u64>() as f64
    }

    fn zipf(theta: f64, center: Option<f64>) -> Skew {
        Skew::Zipf { theta, center }
    }

    #[test]
    fn zipf_puts_most_draws_on_a_tenth_of_the_blocks() {
        let mut s = SkewedBlocks::new(&zipf(1.2, None), 10_000, 1).unwrap();
        s.place(12345);
        let share = hottest_share(counts(&s, 1), 10);
        assert!(share > 0.75, "zipf 1.2: {share}");
        let mut flat = SkewedBlocks::new(&zipf(0.2, None), 10_000, 1).unwrap();
        flat.place(1);
        let flat_share = hottest_share(counts(&flat, 1), 10);
        assert!(flat_share < share && flat_share > 0.1, "{flat_share}");
    }

    #[test]
    fn pareto_fifth_puts_four_fifths_of_draws_on_a_fifth_of_the_ranks() {
        let low_share = |h| {
            let s = SkewedBlocks::new(&Skew::Pareto { h, center: None }, 10_000, 1).unwrap();
            let mut r = Rng::new(2, 0);
            let low = (0..DRAWS).filter(|_| s.rank(&mut r) < 2000).count();
            low as f64 / DRAWS as f64
        };
        let (fifth, half) = (low_share(0.2), low_share(0.5));
        assert!((0.78..0.82).contains(&fifth), "pareto 0.2: {fifth}");
        assert!(
            (0.18..0.22).contains(&half),
            "pareto 0.5 is uniform: {half}"
        );
        let s = SkewedBlocks::new(
            &Skew::Pareto {
                h: 0.2,
                center: None,
            },
            10_000,
            1,
        )
        .unwrap();
        assert!(hottest_share(counts(&s, 2), 20) > 0.78);
    }

    #[test]
    fn hot_blocks_are_scattered_not_at_the_start() {
        let s = SkewedBlocks::new(&zipf(1.2, Some(0.0)), 1000, 1).unwrap();
        let hot: Vec<u64> = (0..10).map(|k| s.place_rank(k)).collect();
        // Ten hottest ranks, ten different blocks, not one stretch of ten.
        let mut sorted = hot.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 10, "{hot:?}");
        assert!(sorted[9] - sorted[0] > 100, "{hot:?}");
    }

    #[test]
    fn a_center_fixes_where_rank_zero_lands() {
        // fio 3.33 (zipf:1.2:0.25 over 1024 blocks) puts its three hottest blocks at 256,
        // 235 and 214.
        let s = SkewedBlocks::new(&zipf(1.2, Some(0.25)), 1024, 1).unwrap();
        assert!(!s.needs_place());
        assert_eq!(
            (0..3).map(|k| s.place_rank(k)).collect::<Vec<_>>(),
            [256, 235, 214]
        );
        let c = counts(&s, 3);
        let top = (0..c.len()).max_by_key(|&i| c[i]).unwrap();
        assert_eq!(top, 256);
    }

    #[test]
    fn without_a_center_the_place_is_drawn() {
        let mut a = SkewedBlocks::new(&zipf(1.2, None), 1024, 1).unwrap();
        assert!(a.needs_place());
        let mut b = a.clone();
        a.place(7);
        b.place(700);
        assert!(!a.needs_place());
        assert_ne!(a.place_rank(0), b.place_rank(0));
        b.place(7);
        assert_ne!(a.place_rank(0), b.place_rank(0), "placed once only");
    }

    #[test]
    fn normal_ranks_concentrate_around_the_center() {
        let n = 10_000u64;
        let s = SkewedBlocks::new(
            &Skew::Normal {
                spread_pct: 5.0,
                center: None,
            },
            n,
            1,
        )
        .unwrap();
        let mut r = Rng::new(4, 0);
        let ranks: Vec<u64> = (0..DRAWS).map(|_| s.rank(&mut r)).collect();
        let mean = ranks.iter().sum::<u64>() as f64 / ranks.len() as f64;
        assert!((mean - n as f64 / 2.0).abs() < 50.0, "{mean}");
        // 12 uniform draws: a spread of about n/12; ±3 of those hold nearly everything.
        let near = ranks.iter().filter(|&&k| k.abs_diff(n / 2) < n / 4).count();
        assert!(near as f64 / ranks.len() as f64 > 0.99, "{near}");
        // Scattered, the same draws still fall on few blocks.
        assert!(hottest_share(counts(&s, 4), 30) > 0.9);
    }

    #[test]
    fn a_normal_center_moves_the_peak() {
        // n a power of two: the scatter maps n/2 to n/2, so the peak lands on center·n.
        let n = 1024;
        let s = SkewedBlocks::new(
            &Skew::Normal {
                spread_pct: 0.0,
                center: Some(0.25),
            },
            n,
            1,
        )
        .unwrap();
        assert_eq!(s.place_rank(n / 2), 256);
        let plain = SkewedBlocks::new(
            &Skew::Normal {
                spread_pct: 0.0,
                center: None,
            },
            n,
            1,
        )
        .unwrap();
        assert_eq!(plain.place_rank(n / 2), 512);
    }

    #[test]
    fn wide_jitter_widens_normal() {
        let spread = |pct| {
            let s = SkewedBlocks::new(
                &Skew::Normal {
                    spread_pct: pct,
                    center: None,
                },
                10_000,
                1,
            )
            .unwrap();
            let mut r = Rng::new(5, 0);
            let v: Vec<f64> = (0..50_000).map(|_| s.rank(&mut r) as f64).collect();
            let m = v.iter().sum::<f64>() / v.len() as f64;
            (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
        };
        let (none, wide) = (spread(0.0), spread(90.0));
        assert!((780.0..880.0).contains(&none), "{none}");
        assert!(wide > 1.5 * none, "{wide} vs {none}");
    }

    #[test]
    fn every_draw_stays_in_range_even_for_tiny_ranges() {
        let skews = [
            zipf(1.2, None),
            zipf(0.5, Some(1.0)),
            zipf(-1.0, None),
            Skew::Pareto {
                h: 0.9,
                center: Some(1.0),
            },
            Skew::Normal {
                spread_pct: 99.0,
                center: Some(0.0),
            },
            zoned(&[(50, 0), (0, 0), (50, 100)]),
            zoned(&[(30, 60), (70, 40)]),
            Skew::ZonedAbs {
                zones: vec![
                    ZoneBytes {
                        access_pct: 50,
                        bytes: 2,
                    },
                    ZoneBytes {
                        access_pct: 50,
                        bytes: 1 << 40,
                    },
                ],
            },
        ];
        for skew in skews {
            skew.check().unwrap();
            for n in [1u64, 2, 3, 1000] {
                let mut s = SkewedBlocks::new(&skew, n, 1).unwrap();
                s.place(u64::MAX);
                let mut r = Rng::new(6, n);
                for _ in 0..2000 {
                    assert!(s.sample(&mut r) < n, "{skew:?} n={n}");
                }
            }
        }
    }

    #[test]
    fn check_refuses_what_cannot_work() {
        assert_eq!(zipf(1.0, None).check(), Err(SkewError::ZipfThetaOne(1.0)));
        assert!(Skew::Pareto {
            h: 1.0,
            center: None
        }
        .check()
        .is_err());
        assert!(Skew::Normal {
            spread_pct: 100.0,
            center: None
        }
        .check()
        .is_err());
        assert_eq!(
            zipf(1.2, Some(1.5)).check(),
            Err(SkewError::CenterOutOfRange(1.5))
        );
        assert!(zipf(f64::NAN, None).check().is_err());
        assert!(Skew::Uniform.check().is_ok());
        assert!(SkewedBlocks::new(&Skew::Uniform, 10, 1).is_none());
    }

    #[test]
    fn the_record_keeps_the_skew() {
        let s = Skew::Pareto {
            h: 0.2,
            center: Some(0.5),
        };
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(j, r#"{"kind":"pareto","h":0.2,"center":0.5}"#);
        assert_eq!(serde_json::from_str::<Skew>(&j).unwrap(), s);
    }

    fn zoned(zones: &[(u8, u8)]) -> Skew {
        Skew::Zoned {
            zones: zones
                .iter()
                .map(|&(access_pct, size_pct)| ZoneShare {
                    access_pct,
                    size_pct,
                })
                .collect(),
        }
    }

    #[test]
    fn zones_get_their_share_of_the_draws_uniformly_inside() {
        // fio's example: 60% of the draws on the first 10%, 30% on the next 20%, 10% on the
        // last 70%.
        let skew = zoned(&[(60, 10), (30, 20), (10, 70)]);
        skew.check().unwrap();
        let s = SkewedBlocks::new(&skew, 1000, 4096).unwrap();
        assert!(!s.needs_place());
        let c = counts(&s, 7);
        let share = |r: std::ops::Range<usize>| c[r].iter().sum::<u64>() as f64 / DRAWS as f64;
        let (a, b, t) = (share(0..100), share(100..300), share(300..1000));
        // 200 000 draws: a standard deviation of about 0.001 per share.
        assert!((a - 0.6).abs() < 0.01, "{a}");
        assert!((b - 0.3).abs() < 0.01, "{b}");
        assert!((t - 0.1).abs() < 0.01, "{t}");
        // Uniform inside a zone: its hundred blocks each near 1/100 of its draws.
        let zone_a: u64 = c[..100].iter().sum();
        assert!(c[..100]
            .iter()
            .all(|&k| (k as f64) > zone_a as f64 / 100.0 * 0.8));
    }

    #[test]
    fn zones_that_leave_the_end_of_the_region_never_draw_there() {
        let s = SkewedBlocks::new(&zoned(&[(50, 10), (50, 20)]), 100, 1).unwrap();
        let c = counts(&s, 8);
        assert_eq!(c[30..].iter().sum::<u64>(), 0);
        assert!(c[..10].iter().sum::<u64>() > 0 && c[10..30].iter().sum::<u64>() > 0);
        // A zone of no length is its first block.
        let s = SkewedBlocks::new(&zoned(&[(100, 0)]), 100, 1).unwrap();
        assert_eq!(counts(&s, 9)[0], DRAWS as u64);
    }

    #[test]
    fn absolute_zones_count_bytes_in_blocks() {
        let skew = Skew::ZonedAbs {
            zones: vec![
                ZoneBytes {
                    access_pct: 80,
                    bytes: 8192,
                },
                ZoneBytes {
                    access_pct: 20,
                    bytes: 32768,
                },
            ],
        };
        skew.check().unwrap();
        let s = SkewedBlocks::new(&skew, 64, 4096).unwrap();
        let c = counts(&s, 10);
        let first = c[..2].iter().sum::<u64>() as f64 / DRAWS as f64;
        assert!((first - 0.8).abs() < 0.01, "{first}");
        assert_eq!(
            c[2..10].iter().sum::<u64>() + c[..2].iter().sum::<u64>(),
            DRAWS as u64
        );
    }

    #[test]
    fn zones_without_any_draw_uniformly() {
        let skew = zoned(&[]);
        skew.check().unwrap();
        assert!(!skew.is_uniform(), "zoned keeps no random map");
        let s = SkewedBlocks::new(&skew, 10, 1).unwrap();
        assert!(counts(&s, 11).iter().all(|&k| k > 0));
    }

    #[test]
    fn zone_shares_must_add_up() {
        assert_eq!(
            zoned(&[(60, 10), (30, 20)]).check(),
            Err(SkewError::ZoneShares(90))
        );
        assert_eq!(
            zoned(&[(60, 90), (40, 20)]).check(),
            Err(SkewError::ZoneSizes(110))
        );
        assert!(Skew::ZonedAbs {
            zones: vec![ZoneBytes {
                access_pct: 99,
                bytes: 1
            }]
        }
        .check()
        .is_err());
    }

    #[test]
    fn the_record_keeps_the_zones() {
        let s = zoned(&[(100, 50)]);
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(
            j,
            r#"{"kind":"zoned","zones":[{"access_pct":100,"size_pct":50}]}"#
        );
        assert_eq!(serde_json::from_str::<Skew>(&j).unwrap(), s);
        let a = Skew::ZonedAbs {
            zones: vec![ZoneBytes {
                access_pct: 100,
                bytes: 4096,
            }],
        };
        let j = serde_json::to_string(&a).unwrap();
        assert!(j.starts_with(r#"{"kind":"zoned_abs""#), "{j}");
    }
}
