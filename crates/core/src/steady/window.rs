//! fio 3.33's steady-state arithmetic (steadystate.c), sample for sample: a ring of the last
//! `dur` per-second IOPS and bandwidth figures, and the test of one criterion over it. The
//! integer sums, their wrapping updates, the integer mean in a percentage slope and the
//! order of the ring are fio's, so the figures a report prints are the ones fio would.

use serde::{Deserialize, Serialize};

/// What a criterion watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Iops,
    /// Bytes per second.
    Bw,
}

/// fio's `steadystate=` criterion: `iops`, `iops_slope`, `bw` or `bw_slope`, with a limit that
/// is absolute or a percentage of the window's mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub metric: Metric,
    /// The least-squares slope of the window is judged; otherwise the largest deviation of
    /// a sample from the window's mean.
    pub slope: bool,
    /// `limit` is a percentage of the window's mean.
    pub percent: bool,
    pub limit: f64,
}

/// The last `dur` samples and the figures of the latest test.
#[derive(Clone, Debug)]
pub struct Window {
    iops: Vec<u64>,
    bw: Vec<u64>,
    head: usize,
    tail: usize,
    full: bool,
    sum_y: u64,
    sum_xy: u64,
    oldest_y: u64,
    sum_x: u64,
    sum_x_sq: u64,
    slope: f64,
    deviation: f64,
    criterion: f64,
}

impl Window {
    /// A window of `dur` samples (at least one).
    pub fn new(dur: usize) -> Window {
        let dur = dur.max(1);
        let n = dur as u64;
        Window {
            iops: vec![0; dur],
            bw: vec![0; dur],
            head: 0,
            tail: 0,
            full: false,
            sum_y: 0,
            sum_xy: 0,
            oldest_y: 0,
            sum_x: n * (n - 1) / 2,
            sum_x_sq: (n - 1) * n * (2 * n - 1) / 6,
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
        }
    }

    pub fn len(&self) -> usize {
        self.iops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.iops.is_empty()
    }

    /// Adds one second's figures and tests `c` once the window is full; true when it
    /// holds (the window then keeps its place, as fio leaves it for the report).
    pub fn push(&mut self, c: &Criterion, iops: u64, bw: u64) -> bool {
        self.bw[self.tail] = bw;
        self.iops[self.tail] = iops;
        let filled = self.tail.wrapping_sub(self.head) == self.len() - 1;
        if (self.full || filled) && self.test(c) {
            return true;
        }
        self.tail = (self.tail + 1) % self.len();
        if self.tail <= self.head {
            self.head = (self.head + 1) % self.len();
        }
        false
    }

    fn ys(&self, c: &Criterion) -> &[u64] {
        match c.metric {
            Metric::Iops => &self.iops,
            Metric::Bw => &self.bw,
        }
    }

    fn test(&mut self, c: &Criterion) -> bool {
        if c.slope {
            self.test_slope(c)
        } else {
            self.test_deviation(c)
        }
    }

    /// fio's steadystate_slope: the sums are kept up to date rather than recomputed, in
    /// fio's wrapping unsigned arithmetic.
    fn test_slope(&mut self, c: &Criterion) -> bool {
        let dur = self.len() as u64;
        let new = self.ys(c)[self.tail];
        if !self.full {
            let (mut sum_y, mut sum_xy) = (0u64, self.sum_xy);
            let ys = self.ys(c);
            for i in 0..ys.len() {
                sum_y = sum_y.wrapping_add(ys[i]);
                let j = (self.head + i) % ys.len();
                sum_xy = sum_xy.wrapping_add((i as u64).wrapping_mul(ys[j]));
            }
            (self.sum_y, self.sum_xy) = (sum_y, sum_xy);
            self.full = true;
        } else {
            self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new);
            self.sum_xy = self
                .sum_xy
                .wrapping_sub(self.sum_y)
                .wrapping_add(dur.wrapping_mul(new));
        }
        self.oldest_y = self.ys(c)[self.head];
        let (sx, n) = (self.sum_x as f64, dur as f64);
        self.slope = (self.sum_xy as f64 - sx * self.sum_y as f64 / n)
            / (self.sum_x_sq as f64 - sx * sx / n);
        self.criterion = if c.percent {
            // fio divides by the mean in integers here.
            100.0 * self.slope / (self.sum_y / dur) as f64
        } else {
            self.slope
        };
        let result = self.criterion.abs();
        // fio 3.33 is built with -ffast-math: a criterion that is not a number (a one-second
        // window has no slope; a zero mean) counts as met there.
        result < c.limit || result.is_nan()
    }

    /// fio's steadystate_deviation: the largest distance of a sample from the mean.
    fn test_deviation(&mut self, c: &Criterion) -> bool {
        let dur = self.len() as u64;
        if !self.full {
            self.sum_y = self.ys(c).iter().fold(0u64, |s, &y| s.wrapping_add(y));
            self.full = true;
        } else {
            let new = self.ys(c)[self.tail];
            self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new);
        }
        self.oldest_y = self.ys(c)[self.head];
        let mean = self.sum_y as f64 / dur as f64;
        self.deviation = self
            .ys(c)
            .iter()
            .map(|&y| (y as f64 - mean).abs())
            .fold(0.0, f64::max);
        self.criterion = if c.percent {
            100.0 * self.deviation / mean
        } else {
            self.deviation
        };
        // As above: fio's -ffast-math build takes a NaN (a zero mean) as met.
        self.criterion < c.limit || self.criterion.is_nan()
    }

    /// Where the window stands, for the report.
    pub fn state(&self) -> WindowState {
        WindowState {
            head: self.head as u32,
            full: self.full,
            slope: self.slope,
            deviation: self.deviation,
            criterion: self.criterion,
            iops: self.iops.clone(),
            bw: self.bw.clone(),
        }
    }
}

/// A window's samples as fio keeps them (a ring: `head` is where fio's report starts
/// reading) and the latest test's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowState {
    pub head: u32,
    /// Every slot has been written at least once.
    pub full: bool,
    #[serde(with = "float_text")]
    pub slope: f64,
    #[serde(with = "float_text")]
    pub deviation: f64,
    /// The latest slope or deviation as the limit is compared with it (a percentage of the
    /// mean with a `%` limit).
    #[serde(with = "float_text")]
    pub criterion: f64,
    pub iops: Vec<u64>,
    /// Bytes per second.
    pub bw: Vec<u64>,
}

/// A float that may be NaN or infinite (a criterion over a zero mean): JSON numbers
/// cannot hold those, so they are kept as text (`"NaN"`, `"inf"`, `"-inf"`), with the sign
/// of a NaN, which fio prints.
mod float_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Num(f64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            return Repr::Num(*v).serialize(s);
        }
        let text = match (v.is_nan(), v.is_sign_negative()) {
            (true, true) => "-NaN",
            (true, false) => "NaN",
            (false, true) => "-inf",
            (false, false) => "inf",
        };
        Repr::Text(text.into()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(match Repr::deserialize(d)? {
            Repr::Num(v) => v,
            Repr::Text(t) => match t.as_str() {
                "-NaN" => -f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                _ => f64::NAN,
            },
        })
    }
}

#[cfg(test)]
mod tests;
