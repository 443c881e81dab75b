//! Counts turned into the percentages fio prints, with its floors for rare non-zero buckets,
//! and the latency-unit choices of the normal layout.

use super::model::Unit;

/// Labels of the ns and µs latency buckets (each an exclusive upper bound).
pub(crate) const LAT_LABELS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];
/// Labels of the depth-at-submission buckets.
pub(crate) const DEPTH_LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Labels of the I/Os-per-call buckets (submit, complete).
pub(crate) const BATCH_LABELS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// Depth distribution, %: a non-zero share under 0.1 shows as 0.1.
pub(crate) fn depth_pct(counts: &[u64; 7], total: u64) -> [f64; 7] {
    counts.map(|c| floored_pct(c, total, 0.1))
}

/// Latency distribution, % of the read+write+trim I/Os: a non-zero share under 0.01
/// shows as 0.01.
pub(crate) fn lat_pct<const N: usize>(counts: &[u64; N], unit: &Unit) -> [f64; N] {
    let total = unit.rw_ios();
    counts.map(|c| floored_pct(c, total, 0.01))
}

fn floored_pct(count: u64, total: u64, floor: f64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let p = count as f64 / total as f64 * 100.0;
    if p < floor && count > 0 {
        floor
    } else {
        p
    }
}

/// The terse µs buckets: the ns buckets are added (unfloored) to the first one, so the
/// terse layout keeps its field count.
pub(crate) fn terse_us_pct(unit: &Unit) -> [f64; 10] {
    let mut us = lat_pct(&unit.lat_buckets.us, unit);
    let total = unit.rw_ios();
    let ns: u64 = unit.lat_buckets.ns.iter().sum();
    if total > 0 {
        us[0] += 100.0 * ns as f64 / total as f64;
    } else {
        // fio divides 0 by 0 here, unguarded: x86 gives the negative NaN, printed `-nan`.
        us[0] = -f64::NAN;
    }
    us
}

/// The unit of one `clat (usec): min=...` line and the values scaled to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ScaledLat {
    pub unit: &'static str,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
}

/// msec only when min, max and stdev are all large; else usec on the same test one step
/// down; else nsec. min and max are divided as integers.
pub(crate) fn scale_lat(min: u64, max: u64, mean: f64, dev: f64) -> ScaledLat {
    let (unit, div) = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1_000_000)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    ScaledLat {
        unit,
        min: min / div,
        max: max / div,
        mean: mean / div as f64,
        dev: dev / div as f64,
    }
}

/// A percentile table's unit (from its smallest and largest value, ns) and divisor.
pub(crate) fn percentile_unit(vmin: u64, vmax: u64) -> (&'static str, u64) {
    if vmin > 2_000_000 && vmax > 99_999_999 {
        ("msec", 1_000_000)
    } else if vmin > 2000 && vmax > 99_999 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::model::DirStats;

    #[test]
    fn floors_for_rare_buckets() {
        assert_eq!(depth_pct(&[1, 0, 999_999, 0, 0, 0, 0], 1_000_000)[0], 0.1);
        assert_eq!(depth_pct(&[0; 7], 0), [0.0; 7]);
        // Syncs are counted over the r/w/t total: 319 of 256 → 124.6%.
        assert_eq!(
            format!("{:.1}", depth_pct(&[319, 0, 0, 0, 0, 0, 0], 256)[0]),
            "124.6"
        );
        let unit = Unit {
            read: DirStats {
                total_ios: 1_000_000,
                ..DirStats::default()
            },
            ..Unit::default()
        };
        let p = lat_pct(&[1, 0, 10_000], &unit);
        assert_eq!(p, [0.01, 0.0, 1.0]);
    }

    #[test]
    fn latency_line_units() {
        // §4.4: clat min=1566 stays nsec although max is 17.5 ms.
        assert_eq!(
            scale_lat(1566, 17_529_000, 540_966.86, 1_230_464.07).unit,
            "nsec"
        );
        let s = scale_lat(2001, 12_195_000, 343_660.0, 673_000.0);
        assert_eq!((s.unit, s.min, s.max), ("usec", 2, 12195));
        assert_eq!(
            scale_lat(2_000_001, 100_000_000, 5e7, 1_000_001.0).unit,
            "msec"
        );
        // All three must pass: a small stdev keeps nsec.
        assert_eq!(scale_lat(3000, 200_000, 5000.0, 999.0).unit, "nsec");
    }

    #[test]
    fn percentile_table_units() {
        assert_eq!(percentile_unit(3728, 127_488), ("usec", 1000));
        assert_eq!(percentile_unit(1800, 17_000_000), ("nsec", 1));
        assert_eq!(percentile_unit(2_000_001, 100_000_000), ("msec", 1_000_000));
    }
}
