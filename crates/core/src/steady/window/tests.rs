use super::*;

fn iops(slope: bool, percent: bool, limit: f64) -> Criterion {
    Criterion {
        metric: Metric::Iops,
        slope,
        percent,
        limit,
    }
}

/// Pushes IOPS samples (bandwidth 4 KiB each); the results of every push.
fn feed(w: &mut Window, c: &Criterion, ys: &[u64]) -> Vec<bool> {
    ys.iter().map(|&y| w.push(c, y, y * 4096)).collect()
}

/// The least-squares slope of `ys` over x = 0, 1, 2, ..., from its definition.
fn least_squares(ys: &[u64]) -> f64 {
    let n = ys.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<u64>() as f64 / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (x, &y) in ys.iter().enumerate() {
        num += (x as f64 - mx) * (y as f64 - my);
        den += (x as f64 - mx) * (x as f64 - mx);
    }
    num / den
}

#[test]
fn deviation_is_the_largest_distance_from_the_mean_once_the_window_is_full() {
    let mut w = Window::new(3);
    // Mean 100, samples 10 away at most: a limit of 10 is not met (strictly below).
    assert_eq!(
        feed(&mut w, &iops(false, false, 10.0), &[100, 110, 90]),
        [false, false, false]
    );
    let s = w.state();
    assert_eq!(s.deviation, 10.0);
    assert_eq!(s.criterion, 10.0);
    assert_eq!(s.slope, 0.0);
    assert!(s.full);
    let mut w = Window::new(3);
    assert_eq!(
        feed(&mut w, &iops(false, false, 10.5), &[100, 110, 90]),
        [false, false, true]
    );
}

#[test]
fn deviation_as_a_percentage_of_the_mean() {
    let c = Criterion {
        metric: Metric::Bw,
        slope: false,
        percent: true,
        limit: 1.0,
    };
    let mut w = Window::new(3);
    // Bandwidth 1000, 1100, 900: 100 from a mean of 1000 is 10%.
    assert!(!w.push(&c, 1, 1000));
    assert!(!w.push(&c, 1, 1100));
    assert!(!w.push(&c, 1, 900));
    assert_eq!(w.state().criterion, 10.0);
    let c = Criterion { limit: 10.01, ..c };
    let mut w = Window::new(3);
    w.push(&c, 1, 1000);
    w.push(&c, 1, 1100);
    assert!(w.push(&c, 1, 900));
}

#[test]
fn the_window_slides_and_keeps_its_place_once_met() {
    let c = iops(false, false, 1.0);
    let mut w = Window::new(2);
    assert_eq!(feed(&mut w, &c, &[10, 20]), [false, false]);
    // Full and not met: the next sample replaces the oldest.
    let s = w.state();
    assert_eq!((s.head, s.iops.clone()), (1, vec![10, 20]));
    assert!(w.push(&c, 20, 20 * 4096));
    let s = w.state();
    // Met: fio leaves head where it was, so the report reads the ring from there.
    assert_eq!((s.head, s.iops.clone()), (1, vec![20, 20]));
    assert_eq!(s.bw, vec![20 * 4096, 20 * 4096]);
    assert_eq!(s.criterion, 0.0);
}

#[test]
fn slope_is_fio_s_least_squares_fit() {
    // y = 10, 20, 30, 40: slope 10; sum_x 6, sum_x_sq 14, sum_xy 200, sum_y 100.
    let mut w = Window::new(4);
    assert_eq!(
        feed(&mut w, &iops(true, false, 10.0), &[10, 20, 30, 40]),
        [false; 4]
    );
    assert_eq!(w.state().slope, 10.0);
    assert_eq!(w.state().criterion, 10.0);
    assert_eq!(w.state().deviation, 0.0);
    // As a percentage of the (integer) mean 25: 40%.
    let mut w = Window::new(4);
    let c = iops(true, true, 40.0);
    assert_eq!(feed(&mut w, &c, &[10, 20, 30, 40]), [false; 4]);
    assert_eq!(w.state().criterion, 40.0);
    let mut w = Window::new(4);
    let c = iops(true, true, 40.5);
    assert_eq!(
        feed(&mut w, &c, &[10, 20, 30, 40]),
        [false, false, false, true]
    );
    // A falling series is judged by its size: -10 is within 10.5.
    let mut w = Window::new(4);
    let c = iops(true, false, 10.5);
    assert_eq!(
        feed(&mut w, &c, &[40, 30, 20, 10]),
        [false, false, false, true]
    );
    assert_eq!(w.state().slope, -10.0);
}

#[test]
fn sliding_slope_sums_match_a_fresh_fit_at_every_step() {
    let ys = [5u64, 10, 15, 15, 7, 30, 2, 2, 2, 9, 1000, 3];
    let c = iops(true, false, -1.0);
    let mut w = Window::new(3);
    for (k, &y) in ys.iter().enumerate() {
        assert!(!w.push(&c, y, 0));
        if k >= 2 {
            let want = least_squares(&ys[k - 2..=k]);
            let got = w.state().slope;
            assert!((got - want).abs() < 1e-9, "step {k}: {got} vs {want}");
        }
    }
}

#[test]
fn a_slope_reaching_a_flat_window_is_met() {
    let c = iops(true, false, 1.0);
    let mut w = Window::new(3);
    assert_eq!(
        feed(&mut w, &c, &[5, 10, 15, 15, 15]),
        [false, false, false, false, true]
    );
    assert_eq!(w.state().slope, 0.0);
    // Met at the fifth sample: every slot of the ring now holds 15.
    assert_eq!(w.state().iops, vec![15, 15, 15]);
}

#[test]
fn an_absolute_limit_of_zero_is_never_met() {
    let mut w = Window::new(2);
    assert_eq!(
        feed(&mut w, &iops(false, false, 0.0), &[7, 7, 7, 7]),
        [false; 4]
    );
    assert_eq!(w.state().criterion, 0.0);
}

#[test]
fn not_a_number_counts_as_met_as_in_fio_s_fast_math_build() {
    // A one-second window has no slope (0/0).
    let mut w = Window::new(1);
    assert!(w.push(&iops(true, true, 0.01), 500, 0));
    assert!(w.state().slope.is_nan());
    assert!(w.state().criterion.is_nan());
    // A zero mean makes a percentage NaN.
    let mut w = Window::new(2);
    assert_eq!(
        feed(&mut w, &iops(false, true, 5.0), &[0, 0]),
        [false, true]
    );
    assert!(w.state().criterion.is_nan());
}

#[test]
fn a_percentage_slope_over_a_mean_that_rounds_to_zero_is_infinite() {
    // y = 0, 1: slope 1, integer mean 1/2 = 0: fio's 100 * 1 / 0.
    let mut w = Window::new(2);
    assert_eq!(
        feed(&mut w, &iops(true, true, 1e300), &[0, 1]),
        [false, false]
    );
    assert_eq!(w.state().criterion, f64::INFINITY);
}

#[test]
fn a_window_not_yet_full_is_not_tested() {
    let mut w = Window::new(3);
    // Any limit would be met by two equal samples, but the window needs three.
    assert_eq!(
        feed(&mut w, &iops(false, false, 1e9), &[1, 1]),
        [false, false]
    );
    let s = w.state();
    assert!(!s.full);
    assert_eq!((s.head, s.iops.clone()), (0, vec![1, 1, 0]));
}

#[test]
fn odd_floats_survive_the_record() {
    let s = WindowState {
        head: 0,
        full: true,
        slope: -f64::NAN,
        deviation: f64::INFINITY,
        criterion: 1.5,
        iops: vec![1],
        bw: vec![2],
    };
    let text = serde_json::to_string(&s).unwrap();
    assert!(text.contains("\"slope\":\"-NaN\""), "{text}");
    assert!(text.contains("\"deviation\":\"inf\""), "{text}");
    let back: WindowState = serde_json::from_str(&text).unwrap();
    assert!(back.slope.is_nan() && back.slope.is_sign_negative());
    assert_eq!(back.deviation, f64::INFINITY);
    assert_eq!(back.criterion, 1.5);
}
