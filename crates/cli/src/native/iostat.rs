//! `plumb iostat [DEVICE...] [INTERVAL [COUNT]]`: the device sampler as a live view, in the
//! column layout of sysstat's `iostat -x` (first report since boot, then per interval).

use std::fmt::Write as _;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use plumb_observe::diskstats::{self, DiskCounters, IostatFigures};
use plumb_observe::procstat::{self, CpuPct, CpuTicks};
use plumb_observe::Roots;

use crate::exit::{self, UsageError};
use crate::signals;

const USAGE: &str = "plumb iostat [DEVICE...] [INTERVAL [COUNT]]";

/// The command line as clap sees it: words whose meaning depends on their form (a device
/// name, then numbers), as in sysstat's iostat, so [`parse_args`] sorts them.
#[derive(clap::Args, Debug)]
#[command(override_usage = USAGE)]
pub struct Args {
    /// Devices to show (sda, /dev/nvme0n1; default: every whole device that has done I/O),
    /// then the interval in seconds (0.01 to 86400; default: one report since boot),
    /// then the number of reports (default: until Ctrl-C)
    #[arg(value_name = "DEVICE|INTERVAL|COUNT")]
    words: Vec<String>,
}

#[derive(Debug, PartialEq)]
struct Parsed {
    devices: Vec<String>,
    interval: Option<Duration>,
    count: Option<u64>,
}

fn parse_args(args: &[String]) -> Result<Parsed, UsageError> {
    let mut a = Parsed {
        devices: Vec::new(),
        interval: None,
        count: None,
    };
    for s in args {
        let numeric = s
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == b'.');
        if !numeric {
            if a.interval.is_some() {
                return Err(UsageError(format!(
                    "device '{s}' after the interval: devices come first (usage: {USAGE})"
                )));
            }
            a.devices.push(s.trim_start_matches("/dev/").to_string());
        } else if a.interval.is_none() {
            let v: f64 = s
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.01 && *v <= 86400.0)
                .ok_or_else(|| {
                    UsageError(format!(
                        "invalid interval '{s}' (allowed: seconds from 0.01 to 86400)"
                    ))
                })?;
            a.interval = Some(Duration::from_secs_f64(v));
        } else if a.count.is_none() {
            let c: u64 = s.parse().ok().filter(|&c| c >= 1).ok_or_else(|| {
                UsageError(format!(
                    "invalid count '{s}' (allowed: a whole number, 1 or more)"
                ))
            })?;
            a.count = Some(c);
        } else {
            return Err(UsageError(format!(
                "unexpected argument '{s}' (usage: {USAGE})"
            )));
        }
    }
    Ok(a)
}

const COLUMNS: &str = "     r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util";

/// The device header line.
fn device_header() -> String {
    format!("Device       {COLUMNS}")
}

/// One device row, with iostat -x's widths (kB = 1024 bytes).
fn device_row(name: &str, f: &IostatFigures) -> String {
    let kb = 1024.0;
    let mut s = format!("{name:<13}");
    let cols: [(f64, usize); 22] = [
        (f.reads_per_s, 7),
        (f.read_bytes_per_s / kb, 9),
        (f.read_merges_per_s, 8),
        (f.read_merged_pct, 6),
        (f.read_await_ms, 7),
        (f.read_request_bytes / kb, 8),
        (f.writes_per_s, 7),
        (f.write_bytes_per_s / kb, 9),
        (f.write_merges_per_s, 8),
        (f.write_merged_pct, 6),
        (f.write_await_ms, 7),
        (f.write_request_bytes / kb, 8),
        (f.discards_per_s, 7),
        (f.discard_bytes_per_s / kb, 9),
        (f.discard_merges_per_s, 8),
        (f.discard_merged_pct, 6),
        (f.discard_await_ms, 7),
        (f.discard_request_bytes / kb, 8),
        (f.flushes_per_s, 7),
        (f.flush_await_ms, 7),
        (f.queue_size, 7),
        (f.util_pct, 6),
    ];
    for (v, w) in cols {
        let _ = write!(s, " {v:>w$.2}");
    }
    s
}

fn avg_cpu(c: &CpuPct) -> String {
    let mut s = String::from("avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n       ");
    for v in [
        c.user_pct,
        c.nice_pct,
        c.system_pct,
        c.iowait_pct,
        c.steal_pct,
        c.idle_pct,
    ] {
        let _ = write!(s, " {v:>7.2}");
    }
    s.push('\n');
    s
}

fn banner(cpus: u32) -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid out-parameter.
    unsafe { libc::uname(&mut u) };
    let f = |b: &[libc::c_char]| {
        let v: Vec<u8> = b
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&v).into_owned()
    };
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: now and tm are valid; localtime_r is thread-safe.
    unsafe { libc::localtime_r(&now, &mut tm) };
    format!(
        "{} {} ({}) \t{:02}/{:02}/{} \t_{}_\t({cpus} CPU)\n",
        f(&u.sysname),
        f(&u.release),
        f(&u.nodename),
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_year + 1900,
        f(&u.machine),
    )
}

fn read(roots: &Roots, what: &str) -> anyhow::Result<String> {
    Ok(plumb_observe::roots::read(&roots.proc(what))?)
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let a = parse_args(&args.words)?;
    let roots = Roots::default();
    let first = diskstats::parse_diskstats(&read(&roots, "diskstats")?);
    for d in &a.devices {
        if !first.iter().any(|(_, _, n, _)| n == d) {
            let names: Vec<&str> = first
                .iter()
                .filter(|(_, _, n, c)| c.any_ios() > 0 && is_whole(&roots, n))
                .map(|(_, _, n, _)| n.as_str())
                .collect();
            anyhow::bail!(
                "iostat: no block device named '{d}' (devices with I/O: {})",
                names.join(", ")
            );
        }
    }
    let stop = signals::install();
    let mut out = std::io::stdout().lock();
    let stat0 = procstat::parse(&read(&roots, "stat")?)
        .ok_or_else(|| anyhow::anyhow!("iostat: /proc/stat has no cpu line"))?;
    let _ = writeln!(out, "{}", banner(stat0.cpus));
    let uptime: f64 = read(&roots, "uptime")?
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    // The first report covers the time since boot, as iostat's does.
    let mut prev_disks: Vec<(String, DiskCounters)> = Vec::new();
    let mut prev_cpu = CpuTicks::default();
    // Instant cannot go back to boot (the monotonic clock may start later), so the first
    // span is the uptime itself.
    let mut prev_at: Option<Instant> = None;
    let mut reports = 0u64;
    loop {
        let now_disks = diskstats::parse_diskstats(&read(&roots, "diskstats")?);
        let stat = procstat::parse(&read(&roots, "stat")?)
            .ok_or_else(|| anyhow::anyhow!("iostat: /proc/stat has no cpu line"))?;
        let at = Instant::now();
        let secs = prev_at.map_or(uptime.max(0.01), |p| at.duration_since(p).as_secs_f64());
        let mut s = avg_cpu(&CpuPct::between(&prev_cpu, &stat.cpu));
        s.push('\n');
        s.push_str(&device_header());
        s.push('\n');
        let shown: Vec<&(u32, u32, String, DiskCounters)> = if a.devices.is_empty() {
            now_disks
                .iter()
                .filter(|(_, _, n, c)| c.any_ios() > 0 && is_whole(&roots, n))
                .collect()
        } else {
            a.devices
                .iter()
                .filter_map(|d| now_disks.iter().find(|(_, _, n, _)| n == d))
                .collect()
        };
        for (_, _, name, c) in shown {
            let p = prev_disks
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| *c)
                .unwrap_or_default();
            s.push_str(&device_row(
                name,
                &IostatFigures::from_delta(&c.delta(&p), secs),
            ));
            s.push('\n');
        }
        s.push('\n');
        if out
            .write_all(s.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            // stdout closed (a pipe into head): stop quietly.
            return Ok(0);
        }
        reports += 1;
        let Some(iv) = a.interval else { return Ok(0) };
        if a.count.is_some_and(|c| reports >= c) {
            return Ok(0);
        }
        prev_disks = now_disks.into_iter().map(|(_, _, n, c)| (n, c)).collect();
        prev_cpu = stat.cpu;
        prev_at = Some(at);
        let deadline = at + iv;
        loop {
            let sig = stop.load(Ordering::Relaxed);
            if sig != 0 {
                return Ok(exit::for_signal(sig as i32));
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
        }
    }
}

/// A whole device (listed in /sys/block), not a partition.
fn is_whole(roots: &Roots, name: &str) -> bool {
    roots.sys(&format!("block/{name}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments_like_iostat() {
        let a = parse_args(&s(&["vda", "1", "2"])).unwrap();
        assert_eq!(a.devices, vec!["vda"]);
        assert_eq!(a.interval, Some(Duration::from_secs(1)));
        assert_eq!(a.count, Some(2));
        let b = parse_args(&s(&["/dev/sda", "sdb", "0.5"])).unwrap();
        assert_eq!(b.devices, vec!["sda", "sdb"]);
        assert_eq!(b.count, None);
        assert!(parse_args(&s(&[])).unwrap().interval.is_none());
        assert!(parse_args(&s(&["1", "vda"])).is_err());
        assert!(parse_args(&s(&["0"])).is_err());
        assert!(parse_args(&s(&["1", "0"])).is_err());
        assert!(parse_args(&s(&["1", "2", "3"])).is_err());
    }

    #[test]
    fn rows_line_up_under_iostat_headers() {
        let f = IostatFigures {
            reads_per_s: 12.45,
            read_bytes_per_s: 256.78 * 1024.0,
            util_pct: 3.45,
            queue_size: 0.06,
            ..Default::default()
        };
        let row = device_row("sda", &f);
        let head = device_header();
        assert_eq!(row.len(), head.len());
        assert!(row.starts_with("sda             12.45    256.78     0.00"));
        assert!(row.ends_with("   0.06   3.45"));
        // Each value ends where its header ends.
        for (i, c) in head.char_indices() {
            if i >= 13 && c != ' ' && head[i + 1..].starts_with(' ') {
                assert_ne!(row.as_bytes()[i], b' ', "column ending at {i}");
            }
        }
        let cpu = avg_cpu(&CpuPct {
            user_pct: 7.77,
            system_pct: 1.48,
            iowait_pct: 0.69,
            idle_pct: 90.06,
            ..Default::default()
        });
        assert_eq!(
            cpu.lines().nth(1).unwrap(),
            "           7.77    0.00    1.48    0.69    0.00   90.06"
        );
    }
}
