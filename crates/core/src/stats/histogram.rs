//! Log-linear latency histogram in nanoseconds.
//!
//! Values below 2048 ns are counted exactly; above, each power of two is split into 1024
//! buckets, so a bucket is at most 1/1024 (0.1%) of its value wide: three significant digits,
//! like HdrHistogram. Values past 2^41 ns (about 36 minutes) share the last bucket; the exact
//! maximum is kept beside the buckets, so nothing reported ever exceeds it.
//!
//! Two forms share the bucket layout:
//! - [`LiveHistogram`] is written by exactly one thread and read by others while it runs. Each
//!   counter is an atomic updated with a plain load and store (no locked instruction), which is
//!   as cheap as a non-atomic write on x86 and lets a reporter read consistent, monotonic
//!   counts without stopping the writer.
//! - [`Histogram`] is an owned snapshot: mergeable bucket by bucket, and the place where
//!   percentiles and summaries are computed. It holds only the span of buckets between its
//!   lowest and highest non-empty one: a thread's latencies span a few thousand of the
//!   32768 buckets, and a run of a hundred threads snapshots several histograms each.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const SUB_BITS: u32 = 11;
const SUB: u64 = 1 << SUB_BITS;
const HALF: u64 = SUB / 2;
const MAX_EXP: u32 = 41;
/// Number of buckets in every histogram.
pub const BUCKETS: usize = (SUB + (MAX_EXP - SUB_BITS) as u64 * HALF) as usize;

/// Bucket index of a value in nanoseconds.
#[inline(always)]
pub fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - (SUB_BITS - 1);
    let top = v >> shift;
    let idx = SUB + (shift as u64 - 1) * HALF + (top - HALF);
    if idx as usize >= BUCKETS {
        BUCKETS - 1
    } else {
        idx as usize
    }
}

/// Smallest and largest value that land in bucket `idx`.
pub fn bucket_range(idx: usize) -> (u64, u64) {
    let idx = idx as u64;
    if idx < SUB {
        return (idx, idx);
    }
    let shift = (idx - SUB) / HALF + 1;
    let top = (idx - SUB) % HALF + HALF;
    let low = top << shift;
    let high = ((top + 1) << shift) - 1;
    if idx as usize == BUCKETS - 1 {
        (low, u64::MAX)
    } else {
        (low, high)
    }
}

/// Exact moments kept beside the buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moments {
    pub count: u64,
    pub sum: u64,
    pub sum_sq: u128,
    pub min: u64,
    pub max: u64,
}

impl Default for Moments {
    fn default() -> Self {
        Moments {
            count: 0,
            sum: 0,
            sum_sq: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Moments {
    pub fn merge(&mut self, o: &Moments) {
        self.count += o.count;
        self.sum = self.sum.saturating_add(o.sum);
        self.sum_sq = self.sum_sq.saturating_add(o.sum_sq);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

/// Zeroed buckets in an anonymous mapping of their own: pages that are never written cost no
/// memory. (A zeroed heap allocation does not promise that: once glibc's mmap threshold has
/// grown past this size, calloc clears a block of its heap, touching every page.)
struct ZeroedBuckets {
    ptr: std::ptr::NonNull<AtomicU64>,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone and holds atomics, which any thread may
// share.
unsafe impl Send for ZeroedBuckets {}
// SAFETY: as above; shared access goes through `&[AtomicU64]`.
unsafe impl Sync for ZeroedBuckets {}

impl ZeroedBuckets {
    fn new(len: usize) -> Self {
        let bytes = len * std::mem::size_of::<AtomicU64>();
        // SAFETY: a new private anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        let layout = std::alloc::Layout::array::<AtomicU64>(len).expect("bucket array");
        if p == libc::MAP_FAILED {
            std::alloc::handle_alloc_error(layout);
        }
        ZeroedBuckets {
            // SAFETY: mmap succeeded, so p is non-null and page-aligned.
            ptr: unsafe { std::ptr::NonNull::new_unchecked(p.cast()) },
            len,
        }
    }
}

impl std::ops::Deref for ZeroedBuckets {
    type Target = [AtomicU64];
    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: the mapping holds `len` zero-initialised (valid) AtomicU64s for as long as
        // self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ZeroedBuckets {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(
                self.ptr.as_ptr().cast(),
                self.len * std::mem::size_of::<AtomicU64>(),
            );
        }
    }
}

/// A histogram written by one thread, readable by others at any time.
pub struct LiveHistogram {
    buckets: ZeroedBuckets,
    count: AtomicU64,
    sum: AtomicU64,
    sum_sq_lo: AtomicU64,
    sum_sq_hi: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
}

impl Default for LiveHistogram {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn bump(a: &AtomicU64, by: u64) {
    // Single writer: a relaxed load and store is enough and avoids a locked add.
    a.store(a.load(Relaxed).wrapping_add(by), Relaxed);
}

impl LiveHistogram {
    pub fn new() -> Self {
        LiveHistogram {
            buckets: ZeroedBuckets::new(BUCKETS),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            sum_sq_lo: AtomicU64::new(0),
            sum_sq_hi: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
        }
    }

    /// Record one value. Must only be called from the owning thread.
    #[inline(always)]
    pub fn record(&self, v: u64) {
        bump(&self.buckets[bucket_of(v)], 1);
        bump(&self.count, 1);
        bump(&self.sum, v);
        let sq = (v as u128) * (v as u128);
        let lo = self.sum_sq_lo.load(Relaxed);
        let (nlo, carry) = lo.overflowing_add(sq as u64);
        self.sum_sq_lo.store(nlo, Relaxed);
        let hi_add = ((sq >> 64) as u64).wrapping_add(carry as u64);
        if hi_add != 0 {
            bump(&self.sum_sq_hi, hi_add);
        }
        if v < self.min.load(Relaxed) {
            self.min.store(v, Relaxed);
        }
        if v > self.max.load(Relaxed) {
            self.max.store(v, Relaxed);
        }
    }

    /// Number of values recorded so far.
    #[inline]
    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// Sum of values recorded so far.
    #[inline]
    pub fn sum(&self) -> u64 {
        self.sum.load(Relaxed)
    }

    /// Add the current counts into `into` (used to merge many writers in one pass).
    pub fn add_into(&self, into: &mut Histogram) {
        // Only the buckets between the extremes can hold counts, so only their pages are
        // read. A value's bucket is written before its extremes: one recorded while this
        // reads may be missed, as one recorded just after would be.
        let (min, max) = (self.min.load(Relaxed), self.max.load(Relaxed));
        if min <= max {
            let (lo, hi) = (bucket_of(min), bucket_of(max));
            into.add_span(lo, self.buckets[lo..=hi].iter().map(|b| b.load(Relaxed)));
        }
        let m = Moments {
            count: self.count.load(Relaxed),
            sum: self.sum.load(Relaxed),
            sum_sq: ((self.sum_sq_hi.load(Relaxed) as u128) << 64)
                | self.sum_sq_lo.load(Relaxed) as u128,
            min,
            max,
        };
        into.moments.merge(&m);
    }

    /// An owned copy of the current state.
    pub fn snapshot(&self) -> Histogram {
        let mut h = Histogram::new();
        self.add_into(&mut h);
        h
    }
}

/// An owned histogram: merge, subtract, percentiles.
#[derive(Clone)]
pub struct Histogram {
    /// The bucket index of `buckets[0]`: they cover `lo .. lo + buckets.len()`, and every
    /// bucket outside is empty.
    lo: usize,
    buckets: Vec<u64>,
    moments: Moments,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("moments", &self.moments)
            .finish()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            lo: 0,
            buckets: Vec::new(),
            moments: Moments::default(),
        }
    }

    /// Widen the span to cover buckets `lo..=hi`.
    fn cover(&mut self, lo: usize, hi: usize) {
        if self.buckets.is_empty() {
            self.lo = lo;
            self.buckets = vec![0; hi - lo + 1];
            return;
        }
        if lo < self.lo {
            let mut b = vec![0; self.lo - lo + self.buckets.len()];
            b[self.lo - lo..].copy_from_slice(&self.buckets);
            self.buckets = b;
            self.lo = lo;
        }
        if hi >= self.lo + self.buckets.len() {
            self.buckets.resize(hi - self.lo + 1, 0);
        }
    }

    /// Add `counts`, the buckets from index `lo` on, in order.
    fn add_span(&mut self, lo: usize, counts: impl ExactSizeIterator<Item = u64>) {
        let n = counts.len();
        if n == 0 {
            return;
        }
        self.cover(lo, lo + n - 1);
        let at = lo - self.lo;
        for (d, c) in self.buckets[at..at + n].iter_mut().zip(counts) {
            *d += c;
        }
    }

    /// The count of bucket `i`.
    fn at(&self, i: usize) -> u64 {
        i.checked_sub(self.lo)
            .and_then(|k| self.buckets.get(k))
            .copied()
            .unwrap_or(0)
    }

    pub fn record(&mut self, v: u64) {
        let i = bucket_of(v);
        self.cover(i, i);
        self.buckets[i - self.lo] += 1;
        let m = &mut self.moments;
        m.count += 1;
        m.sum = m.sum.saturating_add(v);
        m.sum_sq = m.sum_sq.saturating_add((v as u128) * (v as u128));
        m.min = m.min.min(v);
        m.max = m.max.max(v);
    }

    pub fn moments(&self) -> &Moments {
        &self.moments
    }

    pub fn count(&self) -> u64 {
        self.moments.count
    }

    /// A copy read while values were still being recorded ([`LiveHistogram::snapshot`] of a
    /// running thread) may hold a value in its moments whose bucket it read before it was
    /// written, or the other way round: this makes its count the buckets' total, which a
    /// lossless copy ([`super::SparseHistogram`]) checks. The mean and spread stay the
    /// moments', off by the few values in flight.
    pub fn settle(&mut self) {
        let n: u64 = self.buckets.iter().sum();
        if n == 0 {
            self.moments = Moments::default();
        } else {
            self.moments.count = n;
        }
    }

    /// Exact merge: add counts bucket by bucket.
    pub fn merge(&mut self, o: &Histogram) {
        self.add_span(o.lo, o.buckets.iter().copied());
        self.moments.merge(&o.moments);
    }

    /// Counts recorded since `earlier` (a previous snapshot of the same writers). The exact
    /// min and max of that window are not known; they are bounded by the window's buckets.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let diff: Vec<u64> = self
            .buckets
            .iter()
            .enumerate()
            .map(|(k, a)| a.saturating_sub(earlier.at(self.lo + k)))
            .collect();
        let first = diff.iter().position(|&d| d > 0);
        let last = diff.iter().rposition(|&d| d > 0);
        let count = self.moments.count.saturating_sub(earlier.moments.count);
        let (lo, buckets, min, max) = match (first, last) {
            (Some(f), Some(l)) => (
                self.lo + f,
                diff[f..=l].to_vec(),
                bucket_range(self.lo + f).0.max(self.moments.min),
                bucket_range(self.lo + l).1.min(self.moments.max),
            ),
            _ => (0, Vec::new(), u64::MAX, 0),
        };
        Histogram {
            lo,
            buckets,
            moments: Moments {
                count,
                sum: self.moments.sum.saturating_sub(earlier.moments.sum),
                sum_sq: self.moments.sum_sq.saturating_sub(earlier.moments.sum_sq),
                min,
                max,
            },
        }
    }

    pub fn min(&self) -> Option<u64> {
        (self.moments.count > 0).then_some(self.moments.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.moments.count > 0).then_some(self.moments.max)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.moments.count > 0).then(|| self.moments.sum as f64 / self.moments.count as f64)
    }

    /// Population standard deviation, from exact integer sums.
    pub fn stddev(&self) -> Option<f64> {
        let m = &self.moments;
        if m.count == 0 {
            return None;
        }
        let n = m.count as u128;
        let s = m.sum as u128;
        // n*sum_sq - sum^2 is exact in integers; divide once at the end.
        let num = (n * m.sum_sq).saturating_sub(s * s);
        Some(((num as f64) / (n as f64 * n as f64)).sqrt())
    }

    /// The value at or below which `p` percent of the samples fall, never outside [min, max].
    pub fn percentile(&self, p: f64) -> Option<u64> {
        let n = self.moments.count;
        if n == 0 {
            return None;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        let rank = rank.min(n);
        let mut seen = 0u64;
        for (k, c) in self.buckets.iter().enumerate() {
            seen += *c;
            if seen >= rank {
                let (_, high) = bucket_range(self.lo + k);
                return Some(high.clamp(self.moments.min, self.moments.max));
            }
        }
        Some(self.moments.max)
    }

    /// Non-empty buckets as (index, count).
    pub fn indexed(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let lo = self.lo;
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(move |(k, c)| (lo + k, *c))
    }

    /// A histogram from its non-empty buckets as (index, count), in index order, each index
    /// below `BUCKETS`, and its moments.
    pub(crate) fn from_indexed(buckets: &[(usize, u64)], moments: Moments) -> Self {
        let mut h = Histogram::new();
        if let (Some(&(lo, _)), Some(&(hi, _))) = (buckets.first(), buckets.last()) {
            h.cover(lo, hi);
            for &(i, c) in buckets {
                h.buckets[i - lo] += c;
            }
        }
        h.moments = moments;
        h
    }

    /// Non-empty buckets as (low, high, count).
    pub fn nonzero(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.indexed().map(|(i, c)| {
            let (l, h) = bucket_range(i);
            (l, h, c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_narrow() {
        let mut prev_high = None;
        for i in 0..BUCKETS - 1 {
            let (l, h) = bucket_range(i);
            if let Some(p) = prev_high {
                assert_eq!(l, p + 1, "bucket {i}");
            }
            assert!(h >= l);
            assert!(
                (h - l) as f64 <= l as f64 / 1024.0 + 1.0,
                "bucket {i} too wide"
            );
            assert_eq!(bucket_of(l), i);
            assert_eq!(bucket_of(h), i);
            prev_high = Some(h);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn exact_moments_and_percentiles_within_min_max() {
        let mut h = Histogram::new();
        for v in [1000u64, 2000, 3000, 4000, 1_000_000_007] {
            h.record(v);
        }
        assert_eq!(h.min(), Some(1000));
        assert_eq!(h.max(), Some(1_000_000_007));
        assert_eq!(
            h.mean(),
            Some((1000 + 2000 + 3000 + 4000 + 1_000_000_007) as f64 / 5.0)
        );
        assert_eq!(h.percentile(100.0), Some(1_000_000_007));
        assert_eq!(h.percentile(0.0), Some(1000));
        assert_eq!(h.percentile(40.0), Some(2000));
        let p = h.percentile(80.0).unwrap();
        assert!((4000..=4002).contains(&p), "{p}");
    }

    #[test]
    fn single_value_percentile_equals_it() {
        let mut h = Histogram::new();
        h.record(132_350_123);
        for p in [1.0, 50.0, 95.0, 99.9, 100.0] {
            assert_eq!(h.percentile(p), Some(132_350_123));
        }
    }

    #[test]
    fn relative_error_is_three_digits() {
        let mut x = 1u64;
        while x < 1 << 40 {
            let mut h = Histogram::new();
            h.record(x);
            h.record(x * 3 + 7);
            h.record(x * 9 + 1);
            let p = h.percentile(50.0).unwrap();
            let want = x * 3 + 7;
            assert!(
                p >= want && (p - want) as f64 <= want as f64 / 1000.0,
                "{p} vs {want}"
            );
            x = x * 5 + 3;
        }
    }

    #[test]
    fn stddev_is_exact() {
        let mut h = Histogram::new();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            h.record(v);
        }
        assert_eq!(h.stddev(), Some(2.0));
    }

    #[test]
    fn merge_equals_recording_everything_once() {
        let live_a = LiveHistogram::new();
        let live_b = LiveHistogram::new();
        let mut all = Histogram::new();
        for i in 0..10_000u64 {
            let v = (i * 7919) % 5_000_000;
            if i % 3 == 0 {
                live_a.record(v)
            } else {
                live_b.record(v)
            }
            all.record(v);
        }
        let mut m = live_a.snapshot();
        m.merge(&live_b.snapshot());
        assert_eq!(m.moments(), all.moments());
        for p in [1.0, 50.0, 99.0, 99.99] {
            assert_eq!(m.percentile(p), all.percentile(p));
        }
    }

    #[test]
    fn since_gives_window_counts() {
        let live = LiveHistogram::new();
        live.record(100);
        let first = live.snapshot();
        live.record(5000);
        live.record(6000);
        let w = live.snapshot().since(&first);
        assert_eq!(w.count(), 2);
        assert!(w.min().unwrap() >= 5000 - 5);
        assert_eq!(w.max(), Some(6000));
    }

    /// Pages of a live histogram's buckets that are resident.
    fn resident_pages(live: &LiveHistogram) -> usize {
        let page = 4096;
        let bytes = BUCKETS * 8;
        let mut vec = vec![0u8; bytes.div_ceil(page)];
        // SAFETY: the buckets' own mapping, page-aligned, `bytes` long; vec has one byte per
        // page.
        let r = unsafe {
            libc::mincore(
                live.buckets.ptr.as_ptr().cast(),
                bytes,
                vec.as_mut_ptr().cast(),
            )
        };
        assert_eq!(r, 0, "mincore");
        vec.iter().filter(|b| **b & 1 == 1).count()
    }

    #[test]
    fn a_live_histogram_costs_the_pages_it_writes_and_a_snapshot_reads_no_more() {
        // Many large allocations first, so a heap allocation would now come from glibc's
        // heap (its mmap threshold grows when such blocks are freed).
        for _ in 0..4 {
            drop(vec![1u8; BUCKETS * 8]);
        }
        let live = LiveHistogram::new();
        assert_eq!(resident_pages(&live), 0);
        live.record(1_000_000);
        live.record(1_000_500);
        assert_eq!(resident_pages(&live), 1);
        let h = live.snapshot();
        assert_eq!(resident_pages(&live), 1, "the snapshot reads the span only");
        assert_eq!(
            h.buckets.len(),
            bucket_of(1_000_500) - bucket_of(1_000_000) + 1
        );
        assert_eq!(h.count(), 2);
    }

    #[test]
    fn spans_widen_both_ways_and_differences_keep_only_theirs() {
        let mut a = Histogram::new();
        a.record(5_000);
        let mut b = Histogram::new();
        b.record(10);
        b.record(90_000_000);
        let mut all = Histogram::new();
        for v in [5_000, 10, 90_000_000] {
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.moments(), all.moments());
        assert_eq!(
            a.indexed().collect::<Vec<_>>(),
            all.indexed().collect::<Vec<_>>()
        );
        assert_eq!(a.lo, bucket_of(10));
        assert_eq!(a.buckets.len(), bucket_of(90_000_000) - bucket_of(10) + 1);
        for p in [1.0, 34.0, 50.0, 67.0, 100.0] {
            assert_eq!(a.percentile(p), all.percentile(p));
        }
        // The difference from an earlier state whose span is narrower than, or outside, the
        // later one's.
        let mut later = a.clone();
        later.record(7_000);
        let w = later.since(&a);
        assert_eq!(w.count(), 1);
        assert_eq!(w.indexed().collect::<Vec<_>>(), vec![(bucket_of(7_000), 1)]);
        assert_eq!(w.buckets.len(), 1);
        let empty = a.since(&a);
        assert_eq!(empty.count(), 0);
        assert!(empty.buckets.is_empty() && empty.percentile(50.0).is_none());
        let from_nothing = a.since(&Histogram::new());
        assert_eq!(
            from_nothing.indexed().collect::<Vec<_>>(),
            a.indexed().collect::<Vec<_>>()
        );
    }

    #[test]
    fn large_sum_of_squares_is_kept() {
        let live = LiveHistogram::new();
        for _ in 0..1000 {
            live.record(10_000_000_000); // 10 s: squares overflow u64
        }
        let h = live.snapshot();
        assert_eq!(h.stddev(), Some(0.0));
        assert_eq!(h.mean(), Some(1e10));
    }

    #[test]
    fn settle_makes_the_count_the_buckets_total() {
        let mut h = Histogram::new();
        for v in [10, 20, 30] {
            h.record(v);
        }
        // As a copy read mid-record sees it: one value in the moments, not yet in a bucket.
        h.moments.count += 1;
        assert!(Histogram::try_from(&crate::stats::SparseHistogram::from(&h)).is_err());
        h.settle();
        assert_eq!(h.count(), 3);
        assert!(Histogram::try_from(&crate::stats::SparseHistogram::from(&h)).is_ok());
        let mut empty = Histogram::new();
        empty.moments.count = 2;
        empty.moments.sum = 7;
        empty.settle();
        assert_eq!(empty.count(), 0);
        assert_eq!(empty.moments().sum, 0);
    }
}
