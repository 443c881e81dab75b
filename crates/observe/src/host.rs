//! Facts about the machine a run happens on, and how busy it was when the run started.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::baseline::SetupOverlap;
use crate::meminfo;
use crate::procstat::{CpuPct, CpuTicks};
use crate::roots::{attr, attr_u64, Roots};
use crate::virt::{self, Virtualization};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub arch: String,
    pub cpu_model: Option<String>,
    /// CPUs online.
    pub logical_cpus: u32,
    /// CPUs this process may run on (affinity mask; a container may have fewer).
    pub usable_cpus: Option<u32>,
    pub physical_cores: Option<u32>,
    pub sockets: Option<u32>,
    pub numa_nodes: u32,
    pub cpu_mhz: Option<f64>,
    /// Frequency governors in use ("performance", "powersave", "schedutil"); empty when the
    /// kernel does not scale frequency (common in VMs).
    pub frequency_governors: Vec<String>,
    pub frequency_driver: Option<String>,
    /// CPU 0's caches (per cache instance: L1d and L2 are usually per core, L3 shared).
    pub l1d_cache_bytes: Option<u64>,
    pub l2_cache_bytes: Option<u64>,
    pub l3_cache_bytes: Option<u64>,
    pub memory_total_bytes: u64,
    pub swap_total_bytes: u64,
    pub virtualization: Virtualization,
}

/// Load present when the run started, before plumb's workers ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadAtStart {
    /// Load averages: reported, not judged. The 1-minute figure still carries whatever ran
    /// in the last minute (the previous run of a back-to-back series among it).
    pub load_avg_1m: f64,
    pub load_avg_5m: f64,
    pub load_avg_15m: f64,
    /// Runnable tasks, from /proc/loadavg (includes the reading thread itself).
    pub runnable_tasks: u64,
    /// Machine CPU use over `window_s` just before the run (all CPUs, 100% = all busy).
    pub cpu: Option<CpuPct>,
    pub busy_cpu_pct: Option<f64>,
    /// `busy_cpu_pct` less plumb's own CPU time over the window: other programs' work.
    pub busy_other_pct: Option<f64>,
    /// Other programs' runnable tasks (/proc/stat procs_running less plumb's threads in
    /// state R, less the kernel's threads below), sampled `runnable_samples` times across
    /// the window: mean, max.
    pub runnable_other_mean: Option<f64>,
    pub runnable_other_max: Option<u64>,
    /// The kernel's own threads in state R over the same samples (kworkers writing back
    /// dirty pages or completing I/O, ksoftirqd): work still going on, but not a program's.
    /// Absent in records made before they were told apart (counted among the others then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable_kernel_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable_kernel_max: Option<u64>,
    pub runnable_samples: u32,
    /// The window as measured.
    pub window_s: f64,
    /// Present when the window overlapped the plan's setup steps (database work on a local
    /// server): the server's CPU time and runnable threads were left out with plumb's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during_setup: Option<SetupOverlap>,
}

fn cpuinfo_field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// The CPU model line: x86's "model name", or what other architectures call it.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Processor", "cpu model", "cpu", "uarch"]
        .iter()
        .find_map(|k| cpuinfo_field(cpuinfo, k))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn uname() -> (Option<String>, Option<String>, Option<String>) {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid out-parameter.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (None, None, None);
    }
    let s = |f: &[libc::c_char]| {
        let b: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Some(String::from_utf8_lossy(&b).into_owned())
    };
    (s(&u.nodename), s(&u.release), s(&u.version))
}

fn usable_cpus() -> Option<u32> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    // SAFETY: set was filled by the kernel.
    (rc == 0).then(|| unsafe { libc::CPU_COUNT(&set) } as u32)
}

/// Cores and sockets from sysfs topology: unique (package, core) pairs.
fn topology(roots: &Roots) -> (Option<u32>, Option<u32>) {
    let Ok(rd) = std::fs::read_dir(roots.sys("devices/system/cpu")) else {
        return (None, None);
    };
    let mut cores = BTreeSet::new();
    let mut sockets = BTreeSet::new();
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if !n
            .strip_prefix("cpu")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
        {
            continue;
        }
        let t = e.path().join("topology");
        let (Some(pkg), Some(core)) = (
            attr_u64(&t.join("physical_package_id")),
            attr_u64(&t.join("core_id")),
        ) else {
            continue;
        };
        sockets.insert(pkg);
        cores.insert((pkg, core));
    }
    if cores.is_empty() {
        (None, None)
    } else {
        (Some(cores.len() as u32), Some(sockets.len() as u32))
    }
}

/// sysfs cache sizes: "48K", "32768K", "1M".
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// (L1 data, L2, L3) sizes of CPU 0's caches.
fn caches(roots: &Roots) -> (Option<u64>, Option<u64>, Option<u64>) {
    let (mut l1d, mut l2, mut l3) = (None, None, None);
    let Ok(rd) = std::fs::read_dir(roots.sys("devices/system/cpu/cpu0/cache")) else {
        return (None, None, None);
    };
    for e in rd.flatten() {
        let d = e.path();
        let (Some(level), Some(kind), Some(size)) = (
            attr_u64(&d.join("level")),
            attr(&d.join("type")),
            attr(&d.join("size")).and_then(|s| parse_cache_size(&s)),
        ) else {
            continue;
        };
        match (level, kind.as_str()) {
            (1, "Data") | (1, "Unified") => l1d = Some(size),
            (2, "Data") | (2, "Unified") => l2 = Some(size),
            (3, "Data") | (3, "Unified") => l3 = Some(size),
            _ => {}
        }
    }
    (l1d, l2, l3)
}

pub fn host_facts(roots: &Roots) -> HostFacts {
    let cpuinfo = std::fs::read_to_string(roots.proc("cpuinfo")).unwrap_or_default();
    let logical = cpuinfo
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
        .count() as u32;
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let (hostname, release, version) = uname();
    let (cores, sockets) = topology(roots);
    let numa = std::fs::read_dir(roots.sys("devices/system/node"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_prefix("node"))
                        .is_some_and(|d| d.parse::<u32>().is_ok())
                })
                .count() as u32
        })
        .unwrap_or(0)
        .max(1);
    let mut governors = BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir(roots.sys("devices/system/cpu")) {
        for e in rd.flatten() {
            if let Some(g) = attr(&e.path().join("cpufreq/scaling_governor")) {
                governors.insert(g);
            }
        }
    }
    let mem = meminfo::read(roots).unwrap_or_default();
    let mem_field = |k: &str| meminfo::field(&mem, k).unwrap_or(0);
    let (l1d, l2, l3) = caches(roots);
    HostFacts {
        hostname,
        kernel_release: release,
        kernel_version: version,
        arch: std::env::consts::ARCH.to_string(),
        cpu_model: cpu_model(&cpuinfo),
        logical_cpus: if online > 0 { online as u32 } else { logical },
        usable_cpus: usable_cpus(),
        physical_cores: cores,
        sockets,
        numa_nodes: numa,
        cpu_mhz: cpuinfo_field(&cpuinfo, "cpu MHz").and_then(|v| v.parse().ok()),
        frequency_governors: governors.into_iter().collect(),
        frequency_driver: attr(&roots.sys("devices/system/cpu/cpu0/cpufreq/scaling_driver")),
        l1d_cache_bytes: l1d,
        l2_cache_bytes: l2,
        l3_cache_bytes: l3,
        memory_total_bytes: mem_field("MemTotal"),
        swap_total_bytes: mem_field("SwapTotal"),
        virtualization: virt::detect(roots, virt::cpuid_hypervisor()),
    }
}

/// (1, 5, 15 minute load, runnable tasks) from /proc/loadavg.
pub fn parse_loadavg(text: &str) -> Option<(f64, f64, f64, u64)> {
    let mut it = text.split_whitespace();
    let a = it.next()?.parse().ok()?;
    let b = it.next()?.parse().ok()?;
    let c = it.next()?.parse().ok()?;
    let run = it.next()?.split_once('/')?.0.parse().ok()?;
    Some((a, b, c, run))
}

/// Other programs' CPU use between two readings, percent of all CPUs: the busy ticks less
/// plumb's own CPU time (`own_cpu_ns`, converted at `ticks_per_s`).
pub fn busy_other_pct(a: &CpuTicks, b: &CpuTicks, own_cpu_ns: u64, ticks_per_s: u64) -> f64 {
    let total = b.total().saturating_sub(a.total());
    if total == 0 {
        return 0.0;
    }
    let idle = |t: &CpuTicks| t.idle + t.iowait;
    let busy = total.saturating_sub(idle(b).saturating_sub(idle(a))) as f64;
    let own = own_cpu_ns as f64 * ticks_per_s as f64 / 1e9;
    ((busy - own).max(0.0) / total as f64 * 100.0).min(100.0)
}

/// Load average now, and what is running over `window` (0: no window, load averages only):
/// machine CPU use, the part of it that is not plumb's, and other programs' runnable tasks.
pub fn load_at_start(roots: &Roots, window: Duration) -> LoadAtStart {
    crate::baseline::over(roots, window)
}

/// The load averages and runnable tasks of /proc/loadavg, no window yet.
pub(crate) fn load_averages(roots: &Roots) -> LoadAtStart {
    let (a, b, c, run) = std::fs::read_to_string(roots.proc("loadavg"))
        .ok()
        .and_then(|t| parse_loadavg(&t))
        .unwrap_or((0.0, 0.0, 0.0, 0));
    LoadAtStart {
        load_avg_1m: a,
        load_avg_5m: b,
        load_avg_15m: c,
        runnable_tasks: run,
        cpu: None,
        busy_cpu_pct: None,
        busy_other_pct: None,
        runnable_other_mean: None,
        runnable_other_max: None,
        runnable_kernel_mean: None,
        runnable_kernel_max: None,
        runnable_samples: 0,
        window_s: 0.0,
        during_setup: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::RUNNABLE_SAMPLES;
    use crate::blockdev::fixture::write;

    #[test]
    fn facts_from_a_fixture_tree() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        write(
            &r.proc("cpuinfo"),
            "processor\t: 0\nmodel name\t: Test CPU @ 3.00GHz\ncpu MHz\t\t: 2999.5\nflags\t: fpu\n\nprocessor\t: 1\nmodel name\t: Test CPU @ 3.00GHz\n",
        );
        write(&r.proc("meminfo"), "MemTotal:  1000 kB\nSwapTotal: 10 kB\n");
        for (cpu, core) in [(0, 0), (1, 0), (2, 1), (3, 1)] {
            write(
                &r.sys(&format!(
                    "devices/system/cpu/cpu{cpu}/topology/physical_package_id"
                )),
                "0\n",
            );
            write(
                &r.sys(&format!("devices/system/cpu/cpu{cpu}/topology/core_id")),
                &format!("{core}\n"),
            );
            write(
                &r.sys(&format!(
                    "devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
                )),
                "powersave\n",
            );
        }
        write(&r.sys("devices/system/node/node0/cpulist"), "0-1\n");
        write(&r.sys("devices/system/node/node1/cpulist"), "2-3\n");
        write(&r.sys("devices/system/node/possible"), "0-1\n");
        for (i, level, kind, size) in [
            (0, 1, "Data", "48K"),
            (1, 1, "Instruction", "32K"),
            (2, 2, "Unified", "1024K"),
            (3, 3, "Unified", "32M"),
        ] {
            let d = format!("devices/system/cpu/cpu0/cache/index{i}");
            write(&r.sys(&format!("{d}/level")), &format!("{level}\n"));
            write(&r.sys(&format!("{d}/type")), &format!("{kind}\n"));
            write(&r.sys(&format!("{d}/size")), &format!("{size}\n"));
        }
        let h = host_facts(&r);
        assert_eq!(h.cpu_model.as_deref(), Some("Test CPU @ 3.00GHz"));
        assert_eq!(h.cpu_mhz, Some(2999.5));
        assert_eq!(h.physical_cores, Some(2));
        assert_eq!(h.sockets, Some(1));
        assert_eq!(h.numa_nodes, 2);
        assert_eq!(h.frequency_governors, vec!["powersave"]);
        assert_eq!(h.memory_total_bytes, 1000 * 1024);
        assert_eq!(h.l1d_cache_bytes, Some(48 * 1024));
        assert_eq!(h.l2_cache_bytes, Some(1 << 20));
        assert_eq!(h.l3_cache_bytes, Some(32 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(h.swap_total_bytes, 10 * 1024);
    }

    #[test]
    fn loadavg_and_cpu_models() {
        assert_eq!(
            parse_loadavg("0.50 1.25 2.00 3/456 7890\n"),
            Some((0.5, 1.25, 2.0, 3))
        );
        assert!(parse_loadavg("x").is_none());
        assert_eq!(
            cpu_model("Processor : ARMv7 rev 4\n").as_deref(),
            Some("ARMv7 rev 4")
        );
    }

    #[test]
    fn this_machine_has_a_cpu_and_memory() {
        let h = host_facts(&Roots::default());
        assert!(h.logical_cpus >= 1);
        assert!(h.memory_total_bytes > 0);
        let l = load_at_start(&Roots::default(), Duration::from_millis(50));
        let c = l.cpu.unwrap();
        let sum = c.user_pct + c.nice_pct + c.system_pct + c.iowait_pct + c.steal_pct + c.idle_pct;
        assert!(sum == 0.0 || (sum - 100.0).abs() < 1e-6, "{sum}");
        assert!(l.busy_other_pct.unwrap() <= l.busy_cpu_pct.unwrap() + 1e-9);
        assert_eq!(l.runnable_samples, RUNNABLE_SAMPLES);
        assert!(l.runnable_other_mean.unwrap() <= l.runnable_other_max.unwrap() as f64);
        assert!(l.window_s >= 0.05, "{}", l.window_s);
    }

    #[test]
    fn other_programs_cpu_leaves_out_plumbs_own() {
        let t = |user, system, idle, iowait| CpuTicks {
            user,
            system,
            idle,
            iowait,
            ..Default::default()
        };
        // 50 ticks over the window (2 CPUs, 0.25 s at 100 Hz): 20 busy, 12 of them plumb's.
        let (a, b) = (t(100, 50, 1000, 10), t(115, 55, 1028, 12));
        assert!((busy_other_pct(&a, &b, 120_000_000, 100) - 16.0).abs() < 1e-9);
        assert!((busy_other_pct(&a, &b, 0, 100) - 40.0).abs() < 1e-9);
        // plumb's own time never makes it negative, and an empty window is idle.
        assert_eq!(busy_other_pct(&a, &b, 10_000_000_000, 100), 0.0);
        assert_eq!(busy_other_pct(&a, &a, 0, 100), 0.0);
    }

    #[test]
    fn runnable_others_leave_out_plumbs_threads() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        write(&r.proc("loadavg"), "3.50 1.00 0.50 1/100 999\n");
        write(
            &r.proc("stat"),
            "cpu  100 0 50 1000 10 0 0 0 0 0\ncpu0 100 0 50 1000 10 0 0 0 0 0\nprocs_running 4\nprocs_blocked 0\n",
        );
        write(&r.proc("self/task/10/stat"), "10 (plumb) R 1 2 3");
        write(&r.proc("self/task/11/stat"), "11 (plumb-worker) R 1 2 3");
        write(&r.proc("self/task/12/stat"), "12 (plumb-sampler) S 1 2 3");
        let l = load_at_start(&r, Duration::from_millis(20));
        assert_eq!(l.load_avg_1m, 3.5);
        assert_eq!(l.runnable_other_mean, Some(2.0));
        assert_eq!(l.runnable_other_max, Some(2));
        // The fixture's counters do not move: an idle window.
        assert_eq!(l.busy_other_pct, Some(0.0));
        let none = load_at_start(&r, Duration::ZERO);
        assert_eq!((none.busy_other_pct, none.runnable_samples), (None, 0));
    }

    #[test]
    fn the_kernels_runnable_threads_are_not_other_programs() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        write(&r.proc("loadavg"), "1.00 1.00 0.50 1/100 999\n");
        write(
            &r.proc("stat"),
            "cpu  100 0 50 1000 10 0 0 0 0 0\nprocs_running 4\nprocs_blocked 0\n",
        );
        write(&r.proc("self/task/10/stat"), "10 (plumb) R 1 2 3");
        // kthreadd and two of its children running (a kworker writing back, ksoftirqd),
        // one asleep; flags 0x208040 carry PF_KTHREAD.
        write(&r.proc("2/stat"), "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0");
        write(&r.proc("2/task/2/children"), "3 4 5 ");
        write(
            &r.proc("3/stat"),
            "3 (kworker/u4:1-flush-254:0) R 2 0 0 0 -1 69238880 0",
        );
        write(&r.proc("4/stat"), "4 (ksoftirqd/0) R 2 0 0 0 -1 69238848 0");
        write(&r.proc("5/stat"), "5 (kworker/0:1) I 2 0 0 0 -1 69238880 0");
        let l = load_at_start(&r, Duration::from_millis(20));
        assert_eq!(l.runnable_kernel_mean, Some(2.0));
        assert_eq!(l.runnable_kernel_max, Some(2));
        assert_eq!(l.runnable_other_mean, Some(1.0));
        // Where PID 2 is not the kernel's (a PID namespace), nothing is told apart.
        write(&r.proc("2/stat"), "2 (sh) S 1 2 2 0 -1 4194560 0 0");
        let l = load_at_start(&r, Duration::from_millis(20));
        assert_eq!(l.runnable_kernel_mean, None);
        assert_eq!(l.runnable_other_mean, Some(3.0));
    }
}
