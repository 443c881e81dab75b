//! /proc/stat: CPU time split, context switches, interrupts, runnable and blocked tasks —
//! what vmstat and iostat's avg-cpu show.

use serde::{Deserialize, Serialize};

/// Cumulative CPU time of all CPUs together, in clock ticks (USER_HZ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTicks {
    /// Guest time is already inside user time, so it is not added again (as sysstat does).
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// One reading of /proc/stat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatReading {
    pub cpu: CpuTicks,
    pub cpus: u32,
    pub context_switches: u64,
    pub interrupts: u64,
    pub forks: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
}

pub fn parse(text: &str) -> Option<StatReading> {
    let mut r = StatReading::default();
    let mut seen_cpu = false;
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        let first = || {
            line.split_ascii_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
        };
        match key {
            "cpu" => {
                let v: Vec<u64> = it.map(|x| x.parse().unwrap_or(0)).collect();
                let g = |i: usize| v.get(i).copied().unwrap_or(0);
                r.cpu = CpuTicks {
                    user: g(0),
                    nice: g(1),
                    system: g(2),
                    idle: g(3),
                    iowait: g(4),
                    irq: g(5),
                    softirq: g(6),
                    steal: g(7),
                };
                seen_cpu = true;
            }
            k if k.starts_with("cpu") => r.cpus += 1,
            "ctxt" => r.context_switches = first()?,
            "intr" => r.interrupts = first()?,
            "processes" => r.forks = first()?,
            "procs_running" => r.procs_running = first()?,
            "procs_blocked" => r.procs_blocked = first()?,
            _ => {}
        }
    }
    seen_cpu.then_some(r)
}

/// CPU use of the whole machine over an interval, as iostat's avg-cpu shows it (system
/// includes hard and soft interrupt time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuPct {
    pub user_pct: f64,
    pub nice_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    pub idle_pct: f64,
}

impl CpuPct {
    pub fn between(a: &CpuTicks, b: &CpuTicks) -> CpuPct {
        let tot = b.total().saturating_sub(a.total());
        let p = |x: u64, y: u64| {
            if tot == 0 {
                0.0
            } else {
                y.saturating_sub(x) as f64 / tot as f64 * 100.0
            }
        };
        CpuPct {
            user_pct: p(a.user, b.user),
            nice_pct: p(a.nice, b.nice),
            system_pct: p(a.system + a.irq + a.softirq, b.system + b.irq + b.softirq),
            iowait_pct: p(a.iowait, b.iowait),
            steal_pct: p(a.steal, b.steal),
            idle_pct: p(a.idle, b.idle),
        }
    }

    /// Everything but idle and iowait.
    pub fn busy_pct(&self) -> f64 {
        self.user_pct + self.nice_pct + self.system_pct + self.steal_pct
    }
}

/// The system over one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemFigures {
    #[serde(flatten)]
    pub cpu: CpuPct,
    pub context_switches_per_s: f64,
    pub interrupts_per_s: f64,
    pub forks_per_s: f64,
    /// Tasks runnable at the end of the interval (vmstat's r).
    pub procs_running: u64,
    /// Tasks in uninterruptible sleep, mostly waiting for I/O (vmstat's b).
    pub procs_blocked: u64,
}

impl SystemFigures {
    pub fn between(a: &StatReading, b: &StatReading, secs: f64) -> SystemFigures {
        let s = secs.max(1e-9);
        SystemFigures {
            cpu: CpuPct::between(&a.cpu, &b.cpu),
            context_switches_per_s: b.context_switches.saturating_sub(a.context_switches) as f64
                / s,
            interrupts_per_s: b.interrupts.saturating_sub(a.interrupts) as f64 / s,
            forks_per_s: b.forks.saturating_sub(a.forks) as f64 / s,
            procs_running: b.procs_running,
            procs_blocked: b.procs_blocked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "cpu  17788 0 8018 126191 875 0 114 76 0 0
cpu0 7959 0 3481 64882 82 0 15 34 0 0
cpu1 9829 0 4536 61309 793 0 98 42 0 0
intr 626581 0 0 0 17 0 154 8
ctxt 7048274
btime 1700000000
processes 12000
procs_running 3
procs_blocked 0
softirq 1 2 3
";
    const B: &str = "cpu  17888 10 8068 126231 915 5 119 76 0 0
cpu0 7959 0 3481 64882 82 0 15 34 0 0
cpu1 9829 0 4536 61309 793 0 98 42 0 0
intr 628581 0 0 0 17 0 154 8
ctxt 7058274
processes 12010
procs_running 5
procs_blocked 2
";

    #[test]
    fn parses_and_computes_vmstat_figures() {
        let a = parse(A).unwrap();
        let b = parse(B).unwrap();
        assert_eq!(a.cpus, 2);
        assert_eq!(a.cpu.steal, 76);
        assert_eq!(a.context_switches, 7048274);
        assert_eq!(a.interrupts, 626581);
        // Deltas: user 100, nice 10, system 50, idle 40, iowait 40, irq 5, softirq 5 = 250.
        let f = SystemFigures::between(&a, &b, 2.0);
        let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(close(f.cpu.user_pct, 40.0));
        assert!(close(f.cpu.nice_pct, 4.0));
        assert!(close(f.cpu.system_pct, 24.0));
        assert!(close(f.cpu.iowait_pct, 16.0));
        assert!(close(f.cpu.idle_pct, 16.0));
        assert!(close(f.cpu.steal_pct, 0.0));
        assert!(close(f.cpu.busy_pct(), 68.0));
        assert!(close(f.context_switches_per_s, 5000.0));
        assert!(close(f.interrupts_per_s, 1000.0));
        assert!(close(f.forks_per_s, 5.0));
        assert_eq!((f.procs_running, f.procs_blocked), (5, 2));
    }

    #[test]
    fn not_proc_stat() {
        assert!(parse("hello\n").is_none());
    }
}
