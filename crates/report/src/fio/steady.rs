//! fio 3.33's steady-state report (stat.c): the normal format's `steadystate  :` line
//! (show_ss_normal) and the figures of the JSON `steadystate` object, from the window a
//! job's group ended with. The terse formats have nothing for it.

use plumb_core::steady::{Metric, SteadyReport};

use super::num::{c_fixed, num2str, num2str_kilo, N2sUnit};

/// The window's samples in fio's order, oldest first: (bandwidth in bytes/s, IOPS). fio's
/// ring starts at `head` when the criterion held or the ring never filled, else one slot
/// before it (a full ring that moved on has `head` on its second sample).
pub(crate) fn ordered(ss: &SteadyReport) -> (Vec<u64>, Vec<u64>) {
    let w = &ss.window;
    let n = w.bw.len().min(w.iops.len());
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let head = w.head as usize % n;
    let start = if ss.attained || !w.full {
        head
    } else {
        (head + n - 1) % n
    };
    (0..n)
        .map(|l| (start + l) % n)
        .map(|k| (w.bw[k], w.iops[k]))
        .unzip()
}

/// fio's means of the window (steadystate_bw_mean, _iops_mean): integer sums over every
/// slot, divided by the window's length.
pub(crate) fn means(ss: &SteadyReport) -> (u64, u64) {
    let w = &ss.window;
    let mean = |v: &[u64]| {
        if v.is_empty() {
            0
        } else {
            v.iter().fold(0u64, |s, &x| s.wrapping_add(x)) / v.len() as u64
        }
    };
    (mean(&w.bw), mean(&w.iops))
}

fn pct(ss: &SteadyReport) -> &'static str {
    if ss.criterion.percent {
        "%"
    } else {
        ""
    }
}

fn metric(ss: &SteadyReport) -> &'static str {
    match ss.criterion.metric {
        Metric::Iops => "iops",
        Metric::Bw => "bw",
    }
}

/// JSON `ss`: the criterion as fio prints it back, its limit through a C float
/// (`iops:50.000000%`, `bw_slope:0.100000%`).
pub(crate) fn ss_text(ss: &SteadyReport) -> String {
    format!(
        "{}{}:{}{}",
        metric(ss),
        if ss.criterion.slope { "_slope" } else { "" },
        c_fixed(f64::from(ss.criterion.limit as f32), 6),
        pct(ss)
    )
}

/// JSON `criterion`: the last value compared with the limit, through a C float.
pub(crate) fn criterion_text(ss: &SteadyReport) -> String {
    format!(
        "{}{}",
        c_fixed(f64::from(ss.window.criterion as f32), 6),
        pct(ss)
    )
}

/// `  steadystate  : attained=yes, bw=313MiB/s (321MB/s), iops=80.2k, iops mean dev=8.031%`
/// and its newline. fio formats the bandwidth mean from whole kilobytes (kb_base) and
/// gives the second figure the other prefixes without converting it, as it does.
pub(crate) fn normal_line(ss: &SteadyReport, kb_base: u32, sig_figs: u32, unit: N2sUnit) -> String {
    let (bw, iops) = means(ss);
    let kb = u64::from(kb_base.max(1));
    let iec = kb_base.is_power_of_two();
    format!(
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={}{}\n",
        if ss.attained { "yes" } else { "no" },
        num2str_kilo(bw / kb, sig_figs, iec, unit),
        num2str_kilo(bw / kb, sig_figs, !iec, unit),
        num2str(iops, sig_figs, false, N2sUnit::None),
        metric(ss),
        if ss.criterion.slope {
            " slope"
        } else {
            " mean dev"
        },
        c_fixed(ss.window.criterion, 3),
        pct(ss)
    )
}

#[cfg(test)]
mod tests {
    use plumb_core::steady::{Criterion, WindowState};

    use super::*;

    fn report(attained: bool, full: bool, head: u32, iops: &[u64], bw: &[u64]) -> SteadyReport {
        SteadyReport {
            criterion: Criterion {
                metric: Metric::Iops,
                slope: false,
                percent: true,
                limit: 50.0,
            },
            window_s: iops.len() as u32,
            attained,
            window: WindowState {
                head,
                full,
                slope: 0.0,
                deviation: 6440.0,
                criterion: 8.030626,
                iops: iops.to_vec(),
                bw: bw.to_vec(),
            },
        }
    }

    #[test]
    fn fio_s_line_from_a_run_it_printed() {
        // fio 3.33: `iops mean dev=8.031%` over samples 86633 and 73753.
        let ss = report(true, true, 0, &[86633, 73753], &[354851667, 302095375]);
        assert_eq!(means(&ss), (328473521, 80193));
        assert_eq!(
            normal_line(&ss, 1024, 4, N2sUnit::BytePerSec),
            "  steadystate  : attained=yes, bw=313MiB/s (321MB/s), iops=80.2k, iops mean dev=8.031%\n"
        );
        assert_eq!(ss_text(&ss), "iops:50.000000%");
        assert_eq!(criterion_text(&ss), "8.030626%");
    }

    #[test]
    fn an_empty_window_bits_and_si_first() {
        let mut ss = report(false, false, 0, &[0, 0], &[0, 0]);
        ss.criterion = Criterion {
            metric: Metric::Bw,
            slope: true,
            percent: false,
            limit: 5.0,
        };
        ss.window.criterion = 0.0;
        assert_eq!(
            normal_line(&ss, 1024, 4, N2sUnit::BitPerSec),
            "  steadystate  : attained=no, bw=0Kibit/s (0kbit/s), iops=0, bw slope=0.000\n"
        );
        assert_eq!(ss_text(&ss), "bw_slope:5.000000");
        // kb_base=1000: fio 3.33 printed `bw=22.3GB/s (21.3GiB/s)` for this mean.
        let mut ss = report(true, true, 0, &[5448000], &[22_315_000_000]);
        ss.criterion.metric = Metric::Bw;
        ss.criterion.slope = true;
        ss.criterion.percent = false;
        ss.window.criterion = -f64::NAN;
        assert_eq!(
            normal_line(&ss, 1000, 4, N2sUnit::BytePerSec),
            "  steadystate  : attained=yes, bw=22.3GB/s (21.3GiB/s), iops=5448k, bw slope=-nan\n"
        );
    }

    #[test]
    fn the_ring_is_read_from_where_fio_reads_it() {
        // Full and moved on: head is on the second oldest sample.
        let ss = report(false, true, 2, &[40, 20, 30], &[4, 2, 3]);
        assert_eq!(ordered(&ss), (vec![2, 3, 4], vec![20, 30, 40]));
        // Met (or never full): head is on the oldest.
        let ss = report(true, true, 1, &[40, 20, 30], &[4, 2, 3]);
        assert_eq!(ordered(&ss), (vec![2, 3, 4], vec![20, 30, 40]));
        let ss = report(false, false, 0, &[7, 0, 0], &[1, 0, 0]);
        assert_eq!(ordered(&ss), (vec![1, 0, 0], vec![7, 0, 0]));
        let ss = report(false, true, 0, &[1, 2, 3], &[1, 2, 3]);
        assert_eq!(ordered(&ss).1, vec![3, 1, 2]);
    }

    #[test]
    fn limits_print_through_a_c_float() {
        let mut ss = report(false, true, 0, &[1], &[1]);
        ss.criterion.limit = 0.01;
        assert_eq!(ss_text(&ss), "iops:0.010000%");
        ss.criterion.limit = 5000.1;
        ss.criterion.percent = false;
        assert_eq!(ss_text(&ss), "iops:5000.100098");
        ss.window.criterion = f64::INFINITY;
        assert_eq!(criterion_text(&ss), "inf");
    }
}
