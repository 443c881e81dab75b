//! How the run was made: long enough, on a quiet machine, with one steady behaviour.

use super::pct;
use crate::Knob;
use crate::{Facts, Finding, Severity};

/// Throughput still moving across the run's intervals, or SSD writes without preconditioning.
pub fn too_short(f: &Facts) -> Option<Finding> {
    let r: &[f64] = &f.interval_rates;
    if r.len() >= 6 {
        let third = r.len() / 3;
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let (first, last) = (mean(&r[..third]), mean(&r[r.len() - third..]));
        let base = first.max(last);
        if base > 0.0 && (first - last).abs() / base > 0.15 {
            return Some(
                Finding::new(
                    "not-steady",
                    Severity::Caution,
                    "Throughput was still changing when the run ended: the average depends on how long the test ran.",
                )
                .evidence("events/s, first third of the run", format!("{first:.1}"))
                .evidence("events/s, last third of the run", format!("{last:.1}"))
                .evidence("change", pct((last - first) / first.max(1e-9)))
                .advice(format!(
                    "Run longer ({}), use {}, and report the steady part.",
                    f.knob(Knob::Time),
                    f.knob(Knob::Warmup)
                )),
            );
        }
        return None;
    }
    let io = f.io.as_ref()?;
    let ssd = f.target.as_ref().and_then(|t| t.rotational) == Some(false);
    if io.writes_data() && ssd && f.duration_s < 300.0 {
        return Some(
            Finding::new(
                "not-steady",
                Severity::Info,
                "Short write test on an SSD: without preconditioning, an SSD's write speed drops once its spare blocks are used up.",
            )
            .evidence("measured time", format!("{:.0} s", f.duration_s))
            .advice("Precondition (write the device's capacity twice sequentially) and run until throughput is flat (--report-interval shows it)."),
        );
    }
    None
}

/// Other work running when the run started, or a CPU governor that lowers the clock.
///
/// Judged by what runs just before the start (CPU busy with other programs, their runnable
/// tasks), never by the load average: its 1-minute figure still carries the previous run of
/// a back-to-back series for a minute after it ended.
pub fn noisy_machine(f: &Facts) -> Option<Finding> {
    let h = f.host.as_ref()?;
    let busy = h.busy_pct_at_start.filter(|b| *b > 10.0);
    let runnable = h.runnable_others_at_start.filter(|r| *r >= 1.0);
    let kernel = h.runnable_kernel_at_start.filter(|r| *r >= 1.0);
    let powersave = h.governor.as_deref().filter(|g| *g == "powersave");
    if busy.is_none() && runnable.is_none() && kernel.is_none() && powersave.is_none() {
        return None;
    }
    let mut x = Finding::new(
        "noisy-machine",
        Severity::Caution,
        "The machine was not quiet: other work running at the start or CPU frequency scaling can change the figures from run to run.",
    );
    if let Some(b) = busy {
        x = x.evidence("CPU busy with other work at start", format!("{b:.0}%"));
    }
    if let Some(r) = runnable {
        x = x.evidence(
            "other programs' runnable tasks at start",
            format!("{r:.1} on {} CPUs", h.cpus),
        );
    }
    if let Some(k) = kernel {
        x = x.evidence(
            "kernel threads runnable at start (writeback, I/O completion)",
            format!("{k:.1} on {} CPUs", h.cpus),
        );
    }
    if let Some(g) = powersave {
        x = x.evidence("frequency governor", g);
    }
    let working = busy.is_some() || runnable.is_some() || kernel.is_some();
    if let (Some(l), true) = (h.load_avg_1m_at_start, working) {
        x = x.evidence("load average (1 min) at start", format!("{l:.2}"));
    }
    let advice = if kernel.is_some() && runnable.is_none() {
        "Let the kernel finish what earlier work left (run sync and wait until Dirty in /proc/meminfo is near 0), set the governor to performance, and repeat the run to see the spread."
    } else {
        "Stop other work, set the governor to performance, and repeat the run to see the spread."
    };
    Some(x.advice(advice))
}

/// Two separate peaks in the latency distribution: two populations of events (seed 002's
/// second peak was context switches and lock waits).
pub fn bimodal_latency(f: &Facts) -> Option<Finding> {
    const PER_OCTAVE: f64 = 4.0;
    let total: u64 = f.latency_buckets.iter().map(|b| b[2]).sum();
    if total < 100 {
        return None;
    }
    let mut bins: Vec<u64> = Vec::new();
    for &[low, high, count] in &f.latency_buckets {
        let mid = ((low as f64 + high.min(low.saturating_mul(2).max(1)) as f64) / 2.0).max(1.0);
        let i = (mid.log2() * PER_OCTAVE) as usize;
        if bins.len() <= i {
            bins.resize(i + 1, 0);
        }
        bins[i] += count;
    }
    // Local maxima holding at least 5% of all samples.
    let peaks: Vec<usize> = (0..bins.len())
        .filter(|&i| {
            let left = if i > 0 { bins[i - 1] } else { 0 };
            let right = bins.get(i + 1).copied().unwrap_or(0);
            bins[i] >= left && bins[i] > right && bins[i] * 20 >= total
        })
        .collect();
    for (a_idx, &a) in peaks.iter().enumerate() {
        for &b in &peaks[a_idx + 1..] {
            // At least two octaves apart, with a valley below a quarter of the smaller peak.
            if (b - a) as f64 >= 2.0 * PER_OCTAVE {
                let valley = bins[a..=b].iter().min().copied().unwrap_or(0);
                let smaller = bins[a].min(bins[b]);
                if valley * 4 < smaller {
                    let at = |i: usize| 2f64.powf((i as f64 + 0.5) / PER_OCTAVE) / 1e6;
                    let share = |i: usize| {
                        let lo = i.saturating_sub(2);
                        let hi = (i + 2).min(bins.len() - 1);
                        bins[lo..=hi].iter().sum::<u64>() as f64 / total as f64
                    };
                    let mut x = Finding::new(
                        "bimodal-latency",
                        Severity::Info,
                        "Latency has two separate peaks: two kinds of events behaved differently (cache hits and misses, or waits for locks and the CPU).",
                    )
                    .evidence("first peak", format!("{:.3} ms ({} of events)", at(a), pct(share(a))))
                    .evidence("second peak", format!("{:.3} ms ({} of events)", at(b), pct(share(b))));
                    if let (Some(p), true) = (&f.process, f.events > 0) {
                        let cs = (p.voluntary_ctx_switches + p.involuntary_ctx_switches) as f64
                            / f.events as f64;
                        x = x.evidence("context switches per event", format!("{cs:.2}"));
                    }
                    return Some(x.advice("Look at per-operation latency (reads, writes, fsyncs separately) and the observations: the slow peak usually matches fsyncs, device reads or context switches."));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scenario::fileio;
    use crate::HostFacts;

    #[test]
    fn rising_throughput_triggers() {
        let mut f = fileio("rndrd");
        f.interval_rates = vec![100.0, 120.0, 150.0, 200.0, 260.0, 300.0];
        assert_eq!(too_short(&f).unwrap().severity, Severity::Caution);
    }

    #[test]
    fn flat_throughput_is_clean() {
        let mut f = fileio("rndrd");
        f.interval_rates = vec![100.0, 102.0, 99.0, 101.0, 100.0, 98.0];
        assert!(too_short(&f).is_none());
    }

    #[test]
    fn short_ssd_write_without_intervals_is_noted() {
        let mut f = fileio("rndwr");
        f.duration_s = 30.0;
        assert_eq!(too_short(&f).unwrap().severity, Severity::Info);
        f.duration_s = 600.0;
        assert!(too_short(&f).is_none());
    }

    fn host(load: f64, busy: f64, runnable: f64, governor: &str) -> Option<HostFacts> {
        Some(HostFacts {
            cpus: 2,
            governor: Some(governor.into()),
            load_avg_1m_at_start: Some(load),
            busy_pct_at_start: Some(busy),
            runnable_others_at_start: Some(runnable),
            ..Default::default()
        })
    }

    #[test]
    fn other_work_running_at_start_triggers() {
        let mut f = fileio("rndrd");
        f.host = host(3.0, 60.0, 0.0, "performance");
        let x = noisy_machine(&f).unwrap();
        assert_eq!(x.evidence[0].0, "CPU busy with other work at start");
        // The load average comes along as context.
        assert!(x.evidence.iter().any(|e| e.0.starts_with("load average")));
        f.host = host(0.1, 2.0, 2.5, "performance");
        let x = noisy_machine(&f).unwrap();
        assert_eq!(x.evidence[0].0, "other programs' runnable tasks at start");
        // The kernel's threads are named as such, not as other programs.
        f.host = host(0.1, 2.0, 0.0, "performance");
        f.host.as_mut().unwrap().runnable_kernel_at_start = Some(1.5);
        let x = noisy_machine(&f).unwrap();
        assert_eq!(
            x.evidence[0],
            (
                "kernel threads runnable at start (writeback, I/O completion)".into(),
                "1.5 on 2 CPUs".into()
            )
        );
        assert!(!x.evidence.iter().any(|e| e.0.starts_with("other programs")));
        assert!(x.advice.contains("sync"), "{x:?}");
        f.host = host(0.1, 2.0, 0.0, "powersave");
        let x = noisy_machine(&f).unwrap();
        assert_eq!(
            x.evidence,
            [("frequency governor".into(), "powersave".into())]
        );
    }

    #[test]
    fn quiet_machine_is_clean() {
        let mut f = fileio("rndrd");
        assert!(noisy_machine(&f).is_none());
        f.host = host(0.0, 9.0, 0.9, "performance");
        assert!(noisy_machine(&f).is_none());
        f.host.as_mut().unwrap().runnable_kernel_at_start = Some(0.9);
        assert!(noisy_machine(&f).is_none());
    }

    #[test]
    fn high_load_average_but_idle_now_is_clean() {
        // Right after a previous run: the 1-minute load still holds it, nothing runs now.
        let mut f = fileio("rndrd");
        f.host = host(1.9, 0.5, 0.0, "schedutil");
        assert!(noisy_machine(&f).is_none());
    }

    fn buckets(peaks: &[(u64, u64)]) -> Vec<[u64; 3]> {
        peaks.iter().map(|&(v, c)| [v, v, c]).collect()
    }

    #[test]
    fn two_peaks_trigger() {
        let mut f = fileio("rndrw");
        f.latency_buckets = buckets(&[
            (10_000, 500),
            (11_000, 400),
            (12_000, 100),
            (900_000, 200),
            (1_000_000, 300),
        ]);
        assert!(bimodal_latency(&f).is_some());
    }

    #[test]
    fn one_peak_is_clean() {
        let mut f = fileio("rndrw");
        f.latency_buckets = buckets(&[
            (10_000, 500),
            (11_000, 400),
            (13_000, 300),
            (16_000, 100),
            (20_000, 5),
        ]);
        assert!(bimodal_latency(&f).is_none());
    }
}
