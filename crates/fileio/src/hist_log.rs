//! fio's completion-latency histogram log (`write_hist_log`, `log_hist_msec`): per
//! direction, fio's latency buckets counted as requests complete, and each time a
//! completion comes `log_hist_msec` or more after the last sample, a sample of what the
//! buckets gained since the one before, dated then, with that request's size.
//!
//! The buckets are fio's (`FIO_IO_U_PLAT_BITS` 6: 64 exact values, then 29 groups of 64
//! buckets, each group twice as wide), counted in ns.

/// fio's bucket count.
pub const PLAT_NR: usize = 1856;
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;

/// fio's bucket of a latency of `ns` (its plat_val_to_idx).
pub fn plat_idx(ns: u64) -> usize {
    let msb = 63u32.saturating_sub(ns.leading_zeros());
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) << PLAT_BITS) as usize;
    let offset = ((PLAT_VAL - 1) & (ns >> error_bits)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// One sample: when (ms since the start of the measured time), its direction (fio's ddir),
/// the size of the request that was due it, and the buckets' gains since the direction's
/// last sample (bucket, count), nonzero only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistSample {
    pub t_ms: u64,
    pub dir: u8,
    pub bs: u64,
    pub gained: Vec<(u16, u64)>,
}

/// One direction's buckets now and at its last sample, and fio's `hist_last` (0: not set,
/// as fio takes it).
struct Direction {
    now: Box<[u64; PLAT_NR]>,
    then: Box<[u64; PLAT_NR]>,
    last_ms: u64,
}

/// A thread's histogram log.
pub struct HistLog {
    every_ms: u64,
    /// fio counts its buckets only with completion-latency percentiles on (else its samples
    /// are all zeros).
    counts: bool,
    dirs: [Option<Direction>; 3],
    pub samples: Vec<HistSample>,
}

impl HistLog {
    pub fn new(every_ms: u64, counts: bool) -> HistLog {
        HistLog {
            every_ms,
            counts,
            dirs: [None, None, None],
            samples: Vec::new(),
        }
    }

    /// A request of `bs` bytes completed at `t_ms` in direction `dir` after `clat_ns`.
    pub fn add(&mut self, dir: u8, bs: u64, t_ms: u64, clat_ns: u64) {
        if self.every_ms == 0 {
            return;
        }
        let d = self.dirs[(dir as usize).min(2)].get_or_insert_with(|| Direction {
            now: Box::new([0; PLAT_NR]),
            then: Box::new([0; PLAT_NR]),
            last_ms: 0,
        });
        if self.counts {
            d.now[plat_idx(clat_ns)] += 1;
        }
        if d.last_ms == 0 {
            d.last_ms = t_ms;
        }
        let window = t_ms - d.last_ms.min(t_ms);
        if window < self.every_ms {
            return;
        }
        let gained = d
            .now
            .iter()
            .zip(d.then.iter())
            .enumerate()
            .filter(|(_, (n, t))| n > t)
            .map(|(i, (n, t))| (i as u16, n - t))
            .collect();
        d.then.copy_from_slice(&d.now[..]);
        self.samples.push(HistSample {
            t_ms,
            dir,
            bs,
            gained,
        });
        // fio takes out the drift: the next window is due from where this one was.
        d.last_ms = t_ms - (window - self.every_ms);
    }
}

/// A sample's line of fio's log after its `t, ddir, bs, `: the gains summed over groups of
/// 2^coarseness buckets.
pub fn line_counts(gained: &[(u16, u64)], coarseness: u32) -> Vec<u64> {
    let stride = 1usize << coarseness.min(10);
    let mut out = vec![0u64; PLAT_NR.div_ceil(stride)];
    for &(i, n) in gained {
        out[i as usize / stride] += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_fios() {
        // Exact up to 127 ns (msb <= 6), then 64 buckets per doubling.
        assert_eq!(plat_idx(0), 0);
        assert_eq!(plat_idx(64), 64);
        assert_eq!(plat_idx(127), 127);
        assert_eq!(plat_idx(128), 128);
        assert_eq!(plat_idx(129), 128);
        assert_eq!(plat_idx(130), 129);
        assert_eq!(plat_idx(255), 191);
        assert_eq!(plat_idx(256), 192);
        assert_eq!(
            plat_idx(1_000_000),
            14 * 64 + ((1_000_000u64 >> 13) & 63) as usize
        );
        assert_eq!(plat_idx(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn a_sample_holds_what_the_buckets_gained_since_the_last() {
        let mut h = HistLog::new(10, true);
        // The first completion sets the start; fio keeps 0 as "not set".
        h.add(0, 4096, 1, 100);
        h.add(0, 4096, 5, 100);
        h.add(1, 8192, 6, 300);
        assert!(h.samples.is_empty());
        h.add(0, 4096, 13, 1000);
        assert_eq!(
            h.samples,
            [HistSample {
                t_ms: 13,
                dir: 0,
                bs: 4096,
                gained: vec![(100, 2), (plat_idx(1000) as u16, 1)],
            }]
        );
        // Due from 11 (13 less its 2 ms of drift): 21 is the next.
        h.add(0, 4096, 20, 100);
        h.add(0, 4096, 21, 100);
        assert_eq!(h.samples.len(), 2);
        assert_eq!(h.samples[1].gained, [(100, 2)]);
        assert_eq!(line_counts(&h.samples[1].gained, 4)[100 / 16], 2);
        assert_eq!(line_counts(&[], 4).len(), 116);
    }

    #[test]
    fn no_period_no_samples() {
        let mut h = HistLog::new(0, true);
        h.add(0, 4096, 100, 100);
        assert!(h.samples.is_empty());
    }
}
