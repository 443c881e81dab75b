//! Where throughput stops growing: for one swept variable, along each line of points that
//! agree on every other variable, the first value whose next step adds 10% or less.

/// The growth per step below which a step counts as flat: 10%.
pub const FLAT: f64 = 1.10;

/// `values` in the plan's order with their throughput; the knee is the first value whose
/// next value's throughput is at most 10% higher; None: it grows more at every step.
pub fn knee<'a>(line: &[(&'a str, f64)]) -> Option<&'a str> {
    line.windows(2)
        .find(|w| w[1].1 <= w[0].1 * FLAT)
        .map(|w| w[0].0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_flat_step() {
        assert_eq!(
            knee(&[("1", 100.0), ("2", 190.0), ("4", 200.0), ("8", 400.0)]),
            Some("2")
        );
        assert_eq!(knee(&[("1", 100.0), ("2", 111.0), ("4", 200.0)]), None);
        assert_eq!(knee(&[("1", 100.0), ("2", 110.0)]), Some("1"));
        assert_eq!(knee(&[("1", 100.0), ("2", 50.0)]), Some("1"));
        assert_eq!(knee(&[("1", 100.0)]), None);
    }
}
