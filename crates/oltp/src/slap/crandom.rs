//! The C library's `random()` as glibc implements it (the additive feedback generator of
//! degree 31, `TYPE_3`), never seeded: mysqlslap builds its statements before it seeds the
//! generator from the clock, so the values in its generated SQL are this generator's first
//! outputs on every run (1804289383, 846930886, ...). plumb's statements must carry the same
//! values, so they come from the same sequence.

/// The generator's state: the last 34 words of the sequence `r[i] = r[i-31] + r[i-3]`.
pub struct CRandom {
    r: [u32; 34],
    /// Index of the oldest word in the ring.
    at: usize,
}

impl CRandom {
    /// The generator as an unseeded program finds it (seed 1).
    pub fn new() -> Self {
        Self::seeded(1)
    }

    pub fn seeded(seed: u32) -> Self {
        let mut init = [0i64; 34];
        init[0] = i64::from(if seed == 0 { 1 } else { seed });
        for i in 1..31 {
            // 16807 * r mod (2^31 - 1), kept positive as glibc's Schrage step does.
            let v = (16807 * init[i - 1]) % 2_147_483_647;
            init[i] = if v < 0 { v + 2_147_483_647 } else { v };
        }
        for i in 31..34 {
            init[i] = init[i - 31];
        }
        let mut g = CRandom {
            r: init.map(|v| v as u32),
            at: 0,
        };
        // glibc discards the first 310 outputs after seeding.
        for _ in 0..310 {
            g.step();
        }
        g
    }

    fn step(&mut self) -> u32 {
        let n = self.r.len();
        let v = self.r[(self.at + n - 31) % n].wrapping_add(self.r[(self.at + n - 3) % n]);
        self.r[self.at] = v;
        self.at = (self.at + 1) % n;
        v
    }

    /// The next value of `random()`: 0 ..= 2^31 - 1.
    pub fn random(&mut self) -> u32 {
        self.step() >> 1
    }
}

impl Default for CRandom {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unseeded_sequence_is_glibc_s() {
        let mut g = CRandom::new();
        let first: Vec<u32> = (0..5).map(|_| g.random()).collect();
        assert_eq!(
            first,
            [1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
    }
}
