//! sysbench's `--rand-type` distributions over an inclusive integer range [a, b].
//!
//! - uniform: every value equally likely.
//! - gaussian: the mean of `iter` (12) uniform values, as sysbench computes it.
//! - special: sysbench 1.0's default, in its own arithmetic (sb_rand_special): one uniform
//!   draw u decides; below (100 - `res`)% (25%) the value is gaussian, otherwise it is
//!   u scaled over a window of `pct`% (1) of the range centred in the middle. Because the
//!   same u places the value, its lowest quarter never comes up: with 10 000 rows 75% of
//!   draws land on the 77 ids 4975..=5051, not on 100.
//! - pareto: a + n * u^(ln h / ln(1-h)) with h = 0.2, so 80% of draws hit 20% of values.
//! - zipfian: value k (from 0) with probability proportional to 1/(k+1)^theta, theta 0.8 as
//!   in sysbench 1.1 (Gray et al.'s generator, the one YCSB uses).

use thiserror::Error;

use super::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

#[derive(Debug, Error)]
#[error("'{0}' is not a distribution (allowed: uniform, gaussian, special, pareto, zipfian)")]
pub struct RandTypeError(pub String);

impl std::str::FromStr for RandType {
    type Err = RandTypeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return Err(RandTypeError(s.to_string())),
        })
    }
}

impl RandType {
    pub fn name(self) -> &'static str {
        match self {
            RandType::Uniform => "uniform",
            RandType::Gaussian => "gaussian",
            RandType::Special => "special",
            RandType::Pareto => "pareto",
            RandType::Zipfian => "zipfian",
        }
    }
}

/// sysbench's tuning of its distributions: `--rand-spec-iter` (uniform values averaged for
/// a gaussian one), `--rand-spec-pct` (the special window's share of the range),
/// `--rand-spec-res` (the share of special draws that land in it) and `--rand-pareto-h`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    pub iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
}

/// `pareto_h` is never NaN: [`Shape::check`] refuses it before any shape is used.
impl Eq for Shape {}

impl Default for Shape {
    /// sysbench's defaults: 12, 1%, 75%, 0.2.
    fn default() -> Self {
        Shape {
            iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
        }
    }
}

impl Shape {
    /// Whether every parameter is sysbench's default.
    pub fn is_default(&self) -> bool {
        *self == Shape::default()
    }

    /// The parameters that make a distribution: iterations from 1, shares of 0..=100 %,
    /// pareto's h strictly between 0 and 1 (sysbench divides by the first and by ln(1-h)).
    pub fn check(&self) -> Result<(), String> {
        if self.iter == 0 {
            return Err("--rand-spec-iter must be at least 1".into());
        }
        if self.spec_pct > 100 {
            return Err(format!(
                "--rand-spec-pct={}: a percentage, 0 to 100",
                self.spec_pct
            ));
        }
        if self.spec_res > 100 {
            return Err(format!(
                "--rand-spec-res={}: a percentage, 0 to 100",
                self.spec_res
            ));
        }
        if !(self.pareto_h > 0.0 && self.pareto_h < 1.0) {
            return Err(format!(
                "--rand-pareto-h={}: must be between 0 and 1 (exclusive)",
                self.pareto_h
            ));
        }
        Ok(())
    }
}

/// A distribution bound to one range, with its parameters precomputed.
#[derive(Clone, Debug)]
pub struct Distribution {
    kind: RandType,
    a: u64,
    n: u64,
    gauss_iter: u32,
    /// b - a, as sysbench's special distribution scales by it.
    span: f64,
    /// (100 - res)%: the share of special draws that are gaussian.
    special_gauss: f64,
    /// The special window's width less one (`pct`% of the span) and where it starts.
    special_d: f64,
    special_off: f64,
    pareto_power: f64,
    zipf: Option<Zipf>,
}

#[derive(Clone, Debug)]
struct Zipf {
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

pub(super) fn zeta(n: u64, theta: f64) -> f64 {
    // Exact up to a million terms; beyond, the Euler–Maclaurin tail is accurate to ~1e-9.
    const EXACT: u64 = 1_000_000;
    let m = n.min(EXACT);
    let mut s: f64 = (1..=m).map(|i| (i as f64).powf(-theta)).sum();
    if n > m {
        let f = |x: f64| x.powf(1.0 - theta) / (1.0 - theta);
        s += f(n as f64) - f(m as f64) + 0.5 * ((n as f64).powf(-theta) - (m as f64).powf(-theta));
    }
    s
}

impl Distribution {
    /// A distribution over [a, b] (inclusive) in sysbench's default shape. `b >= a`.
    pub fn new(kind: RandType, a: u64, b: u64) -> Self {
        Distribution::shaped(kind, &Shape::default(), a, b)
    }

    /// A distribution over [a, b] (inclusive) tuned by `shape` (checked by
    /// [`Shape::check`]). `b >= a`.
    pub fn shaped(kind: RandType, shape: &Shape, a: u64, b: u64) -> Self {
        let n = b - a + 1;
        let (pct, res) = (f64::from(shape.spec_pct), f64::from(shape.spec_res));
        let span = (b - a) as f64;
        let h = shape.pareto_h;
        let zipf = (kind == RandType::Zipfian).then(|| {
            let theta = 0.8;
            let zetan = zeta(n, theta);
            let zeta2 = zeta(2.min(n), theta);
            Zipf {
                theta,
                zetan,
                alpha: 1.0 / (1.0 - theta),
                eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
            }
        });
        Distribution {
            kind,
            a,
            n,
            gauss_iter: shape.iter.max(1),
            span,
            special_gauss: (100.0 - res) / 100.0,
            special_d: span * pct / 100.0,
            special_off: span / 2.0 - span * pct / 200.0,
            pareto_power: h.ln() / (1.0 - h).ln(),
            zipf,
        }
    }

    pub fn kind(&self) -> RandType {
        self.kind
    }

    #[inline]
    fn uniform(&self, rng: &mut Rng) -> u64 {
        self.a + rng.below(self.n)
    }

    /// sysbench's sb_rand_gaussian: the mean of `iter` uniform doubles over the n values.
    #[inline]
    fn gaussian(&self, rng: &mut Rng) -> u64 {
        let n = self.n as f64;
        let mut sum = 0.0;
        for _ in 0..self.gauss_iter {
            sum += rng.next_f64() * n;
        }
        self.a + ((sum * (1.0 / self.gauss_iter as f64)) as u64).min(self.n - 1)
    }

    /// sysbench's sb_rand_special, step for step.
    #[inline]
    fn special(&self, rng: &mut Rng) -> u64 {
        let u = rng.next_f64();
        if u < self.special_gauss {
            // The mean of `iter` uniform doubles over b - a: b itself never comes up here.
            let mut sum = 0.0;
            for _ in 0..self.gauss_iter {
                sum += rng.next_f64();
            }
            return self.a + (sum * self.span * (1.0 / self.gauss_iter as f64)) as u64;
        }
        self.a + ((u * (self.special_d + 1.0) + self.special_off) as u64).min(self.n - 1)
    }

    /// One draw in [a, b].
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self.kind {
            RandType::Uniform => self.uniform(rng),
            RandType::Gaussian => self.gaussian(rng),
            RandType::Special => self.special(rng),
            RandType::Pareto => {
                let v = (self.n as f64 * rng.next_f64().powf(self.pareto_power)) as u64;
                self.a + v.min(self.n - 1)
            }
            RandType::Zipfian => {
                let z = self.zipf.as_ref().expect("zipf parameters set for zipfian");
                let u = rng.next_f64();
                let uz = u * z.zetan;
                let k = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(z.theta) {
                    1
                } else {
                    (self.n as f64 * (z.eta * u - z.eta + 1.0).powf(z.alpha)) as u64
                };
                self.a + k.min(self.n - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(kind: RandType, n: u64) -> Vec<u64> {
        let d = Distribution::new(kind, 1, n);
        let mut r = Rng::new(1, 0);
        (0..200_000).map(|_| d.sample(&mut r)).collect()
    }

    #[test]
    fn all_stay_in_range() {
        for k in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
            RandType::Zipfian,
        ] {
            for v in draws(k, 1000) {
                assert!((1..=1000).contains(&v), "{k:?} gave {v}");
            }
        }
    }

    #[test]
    fn special_concentrates_three_quarters_where_sysbench_puts_them() {
        // sysbench over [1, 10000]: span 9999, window u * 100.99 + 4949.505 for u in
        // [0.25, 1): ids 1 + 4974 ..= 1 + 5050.
        let v = draws(RandType::Special, 10_000);
        let share = |r: std::ops::RangeInclusive<u64>| {
            v.iter().filter(|&&x| r.contains(&x)).count() as f64 / v.len() as f64
        };
        let hot = share(4975..=5051);
        assert!((0.745..0.77).contains(&hot), "{hot}");
        // The window's first quarter, and the ids around it, are only gaussian draws.
        assert!(share(4951..=4974) < 0.01, "{}", share(4951..=4974));
        assert!(share(5052..=5075) < 0.01, "{}", share(5052..=5075));
        // Each id of the window equally likely: 0.75 / 76.
        for id in [4976, 5000, 5050] {
            let one = share(id..=id);
            assert!((0.0085..0.0115).contains(&one), "{id}: {one}");
        }
    }

    /// sysbench's --rand-spec-pct=10 --rand-spec-res=50 over [1, 1000]: window u * 100.9 +
    /// 449.55 for u in [0.5, 1), ids 501..=551 for half the draws; --rand-pareto-h=0.1
    /// puts 90% of draws on the first 10%; --rand-spec-iter=1 makes gaussian uniform.
    #[test]
    fn the_shape_moves_the_window_and_the_shares() {
        let shape = Shape {
            spec_pct: 10,
            spec_res: 50,
            ..Shape::default()
        };
        let d = Distribution::shaped(RandType::Special, &shape, 1, 1000);
        let mut r = Rng::new(3, 0);
        let v: Vec<u64> = (0..200_000).map(|_| d.sample(&mut r)).collect();
        let share = |lo: u64, hi: u64| {
            v.iter().filter(|&&x| (lo..=hi).contains(&x)).count() as f64 / v.len() as f64
        };
        // Half the draws, plus the gaussian half's ~12% over the same 51 ids.
        let window = share(501, 551);
        assert!((0.59..0.65).contains(&window), "{window}");
        // The 21 ids before it get only gaussian draws (~5%).
        let before = share(480, 500);
        assert!((0.03..0.07).contains(&before), "{before}");
        let pareto = Shape {
            pareto_h: 0.1,
            ..Shape::default()
        };
        let d = Distribution::shaped(RandType::Pareto, &pareto, 1, 1000);
        let low = (0..100_000).filter(|_| d.sample(&mut r) <= 100).count() as f64 / 1e5;
        assert!((0.88..0.92).contains(&low), "{low}");
        let flat = Shape {
            iter: 1,
            ..Shape::default()
        };
        let d = Distribution::shaped(RandType::Gaussian, &flat, 1, 1000);
        let edge = (0..100_000).filter(|_| d.sample(&mut r) <= 100).count() as f64 / 1e5;
        assert!((0.09..0.11).contains(&edge), "{edge}");
        assert!(Shape::default().check().is_ok());
        for bad in [
            Shape {
                iter: 0,
                ..Shape::default()
            },
            Shape {
                spec_pct: 101,
                ..Shape::default()
            },
            Shape {
                spec_res: 101,
                ..Shape::default()
            },
            Shape {
                pareto_h: 1.0,
                ..Shape::default()
            },
            Shape {
                pareto_h: 0.0,
                ..Shape::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn special_of_a_single_value_is_that_value() {
        let d = Distribution::new(RandType::Special, 7, 7);
        let mut r = Rng::new(1, 0);
        assert!((0..1000).all(|_| d.sample(&mut r) == 7));
    }

    #[test]
    fn pareto_puts_eighty_percent_on_first_fifth() {
        let v = draws(RandType::Pareto, 10_000);
        let low = v.iter().filter(|&&x| x <= 2000).count() as f64 / v.len() as f64;
        assert!((0.77..0.83).contains(&low), "{low}");
    }

    #[test]
    fn zipfian_favours_small_values() {
        let v = draws(RandType::Zipfian, 10_000);
        let ones = v.iter().filter(|&&x| x == 1).count();
        let hundreds = v.iter().filter(|&&x| x == 100).count();
        assert!(ones > 20 * hundreds.max(1), "{ones} vs {hundreds}");
    }

    #[test]
    fn gaussian_is_centred() {
        let v = draws(RandType::Gaussian, 10_000);
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((4900.0..5100.0).contains(&mean), "{mean}");
        let tails = v.iter().filter(|&&x| !(2000..=8000).contains(&x)).count();
        assert!(tails < v.len() / 100);
    }
}
