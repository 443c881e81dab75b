//! Block-device counters (/sys/block/DEV/stat, /proc/diskstats) and the figures `iostat -x`
//! derives from two readings, with sysstat's formulas.

use serde::{Deserialize, Serialize};

/// One reading of a device's cumulative counters. Sectors are 512 bytes whatever the device's
/// block size; times are milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    /// Time with at least one request in flight.
    pub io_ticks_ms: u64,
    /// Request-time summed over requests (in flight × time).
    pub time_in_queue_ms: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flush_ios: u64,
    pub flush_ticks_ms: u64,
}

impl DiskCounters {
    /// Parse the numbers of a sysfs `stat` file (11, 15 or 17 fields by kernel version; old
    /// kernels gave partitions 4: reads, read sectors, writes, write sectors).
    pub fn parse(fields: &str) -> Option<DiskCounters> {
        let v: Vec<u64> = fields
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        match v.len() {
            4 => Some(DiskCounters {
                read_ios: v[0],
                read_sectors: v[1],
                write_ios: v[2],
                write_sectors: v[3],
                ..Default::default()
            }),
            n if n >= 11 => Some(DiskCounters {
                read_ios: g(0),
                read_merges: g(1),
                read_sectors: g(2),
                read_ticks_ms: g(3),
                write_ios: g(4),
                write_merges: g(5),
                write_sectors: g(6),
                write_ticks_ms: g(7),
                in_flight: g(8),
                io_ticks_ms: g(9),
                time_in_queue_ms: g(10),
                discard_ios: g(11),
                discard_merges: g(12),
                discard_sectors: g(13),
                discard_ticks_ms: g(14),
                flush_ios: g(15),
                flush_ticks_ms: g(16),
            }),
            _ => None,
        }
    }

    /// Requests of any kind ever completed (iostat hides devices where this is 0).
    pub fn any_ios(&self) -> u64 {
        self.read_ios + self.write_ios + self.discard_ios + self.flush_ios
    }

    /// What happened between `prev` and `self`; a counter that went backwards (device
    /// re-registered, 32-bit wrap) counts as 0, as iostat does.
    pub fn delta(&self, prev: &DiskCounters) -> DiskCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        DiskCounters {
            read_ios: d(self.read_ios, prev.read_ios),
            read_merges: d(self.read_merges, prev.read_merges),
            read_sectors: d(self.read_sectors, prev.read_sectors),
            read_ticks_ms: d(self.read_ticks_ms, prev.read_ticks_ms),
            write_ios: d(self.write_ios, prev.write_ios),
            write_merges: d(self.write_merges, prev.write_merges),
            write_sectors: d(self.write_sectors, prev.write_sectors),
            write_ticks_ms: d(self.write_ticks_ms, prev.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: d(self.io_ticks_ms, prev.io_ticks_ms),
            time_in_queue_ms: d(self.time_in_queue_ms, prev.time_in_queue_ms),
            discard_ios: d(self.discard_ios, prev.discard_ios),
            discard_merges: d(self.discard_merges, prev.discard_merges),
            discard_sectors: d(self.discard_sectors, prev.discard_sectors),
            discard_ticks_ms: d(self.discard_ticks_ms, prev.discard_ticks_ms),
            flush_ios: d(self.flush_ios, prev.flush_ios),
            flush_ticks_ms: d(self.flush_ticks_ms, prev.flush_ticks_ms),
        }
    }
}

/// One line of /proc/diskstats: (major, minor, name, counters).
pub fn parse_diskstats_line(line: &str) -> Option<(u32, u32, String, DiskCounters)> {
    let mut it = line.split_whitespace();
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    let name = it.next()?.to_string();
    let rest: Vec<&str> = it.collect();
    let c = DiskCounters::parse(&rest.join(" "))?;
    Some((major, minor, name, c))
}

pub fn parse_diskstats(text: &str) -> Vec<(u32, u32, String, DiskCounters)> {
    text.lines().filter_map(parse_diskstats_line).collect()
}

/// What `iostat -x` prints for one device over one interval, in plumb's units: bytes rather
/// than kB or sectors (iostat's kB are 1024 bytes), milliseconds for the kernel's ms counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IostatFigures {
    /// r/s, w/s, d/s, f/s: requests completed per second (after merging).
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub discards_per_s: f64,
    pub flushes_per_s: f64,
    /// rkB/s, wkB/s, dkB/s × 1024.
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    pub discard_bytes_per_s: f64,
    /// rrqm/s, wrqm/s, drqm/s: requests merged into others per second.
    pub read_merges_per_s: f64,
    pub write_merges_per_s: f64,
    pub discard_merges_per_s: f64,
    /// %rrqm, %wrqm, %drqm: share of requests merged before reaching the device.
    pub read_merged_pct: f64,
    pub write_merged_pct: f64,
    pub discard_merged_pct: f64,
    /// r_await, w_await, d_await, f_await: mean time from queueing to completion.
    pub read_await_ms: f64,
    pub write_await_ms: f64,
    pub discard_await_ms: f64,
    pub flush_await_ms: f64,
    /// await over reads, writes and discards together.
    pub await_ms: f64,
    /// rareq-sz, wareq-sz, dareq-sz, areq-sz × 1024.
    pub read_request_bytes: f64,
    pub write_request_bytes: f64,
    pub discard_request_bytes: f64,
    pub request_bytes: f64,
    /// aqu-sz: mean number of requests queued or in service.
    pub queue_size: f64,
    /// %util: share of time with at least one request in flight (not saturation on devices
    /// that serve requests in parallel).
    pub util_pct: f64,
}

fn per(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 / d as f64
    }
}

fn pct_merged(merges: u64, ios: u64) -> f64 {
    if merges + ios == 0 {
        0.0
    } else {
        merges as f64 / (merges + ios) as f64 * 100.0
    }
}

impl IostatFigures {
    /// From a counter delta over `secs` seconds.
    pub fn from_delta(d: &DiskCounters, secs: f64) -> IostatFigures {
        let s = secs.max(1e-9);
        let ms = s * 1000.0;
        let nr = d.read_ios + d.write_ios + d.discard_ios;
        IostatFigures {
            reads_per_s: d.read_ios as f64 / s,
            writes_per_s: d.write_ios as f64 / s,
            discards_per_s: d.discard_ios as f64 / s,
            flushes_per_s: d.flush_ios as f64 / s,
            read_bytes_per_s: d.read_sectors as f64 * 512.0 / s,
            write_bytes_per_s: d.write_sectors as f64 * 512.0 / s,
            discard_bytes_per_s: d.discard_sectors as f64 * 512.0 / s,
            read_merges_per_s: d.read_merges as f64 / s,
            write_merges_per_s: d.write_merges as f64 / s,
            discard_merges_per_s: d.discard_merges as f64 / s,
            read_merged_pct: pct_merged(d.read_merges, d.read_ios),
            write_merged_pct: pct_merged(d.write_merges, d.write_ios),
            discard_merged_pct: pct_merged(d.discard_merges, d.discard_ios),
            read_await_ms: per(d.read_ticks_ms, d.read_ios),
            write_await_ms: per(d.write_ticks_ms, d.write_ios),
            discard_await_ms: per(d.discard_ticks_ms, d.discard_ios),
            flush_await_ms: per(d.flush_ticks_ms, d.flush_ios),
            await_ms: per(d.read_ticks_ms + d.write_ticks_ms + d.discard_ticks_ms, nr),
            read_request_bytes: per(d.read_sectors * 512, d.read_ios),
            write_request_bytes: per(d.write_sectors * 512, d.write_ios),
            discard_request_bytes: per(d.discard_sectors * 512, d.discard_ios),
            request_bytes: per(
                (d.read_sectors + d.write_sectors + d.discard_sectors) * 512,
                nr,
            ),
            queue_size: d.time_in_queue_ms as f64 / ms,
            util_pct: d.io_ticks_ms as f64 / ms * 100.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two readings of /sys/block/sda/stat one second apart (17 fields, kernel 5.5+).
    const T0: &str = "   54624     9912  5097842    40539    70016    15392  4309088    23465        0    10856    65201    10279       59  1182896      721     9548      475";
    const T1: &str = "   55624     9932  5113842    41539    70516    15892  4341088    26465        2    11656    69201    10289       59  1184896      731     9598      525";

    #[test]
    fn parses_17_15_11_and_4_fields() {
        let c = DiskCounters::parse(T0).unwrap();
        assert_eq!(c.read_ios, 54624);
        assert_eq!(c.time_in_queue_ms, 65201);
        assert_eq!(c.discard_sectors, 1182896);
        assert_eq!(c.flush_ios, 9548);
        assert_eq!(c.flush_ticks_ms, 475);
        let f15 = DiskCounters::parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").unwrap();
        assert_eq!((f15.discard_ticks_ms, f15.flush_ios), (15, 0));
        let f11 = DiskCounters::parse("1 2 3 4 5 6 7 8 9 10 11").unwrap();
        assert_eq!((f11.io_ticks_ms, f11.discard_ios), (10, 0));
        let p4 = DiskCounters::parse("10 20 30 40").unwrap();
        assert_eq!(
            (p4.read_ios, p4.read_sectors, p4.write_ios, p4.write_sectors),
            (10, 20, 30, 40)
        );
        assert!(DiskCounters::parse("1 2 3").is_none());
        assert!(DiskCounters::parse("1 2 x 4").is_none());
    }

    #[test]
    fn diskstats_lines() {
        let text = format!(
            " 254       0 vda {T0}\n   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n bad\n"
        );
        let v = parse_diskstats(&text);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].0, v[0].1, v[0].2.as_str()), (254, 0, "vda"));
        assert_eq!(v[0].3.read_ios, 54624);
        assert_eq!(v[1].3.any_ios(), 0);
    }

    #[test]
    fn iostat_formulas_on_hand_computed_deltas() {
        let a = DiskCounters::parse(T0).unwrap();
        let b = DiskCounters::parse(T1).unwrap();
        let d = b.delta(&a);
        // Deltas: reads 1000 (merges 20, sectors 16000, ticks 1000 ms), writes 500 (merges
        // 500, sectors 32000, ticks 3000 ms), io_ticks 800 ms, time_in_queue 4000 ms,
        // discards 10 (sectors 2000, ticks 10), flushes 50 (ticks 50).
        let f = IostatFigures::from_delta(&d, 2.0);
        let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(close(f.reads_per_s, 500.0));
        assert!(close(f.writes_per_s, 250.0));
        assert!(close(f.read_bytes_per_s, 16000.0 * 512.0 / 2.0)); // rkB/s 4000
        assert!(close(f.write_bytes_per_s, 32000.0 * 512.0 / 2.0)); // wkB/s 8000
        assert!(close(f.read_merges_per_s, 10.0));
        assert!(close(f.write_merges_per_s, 250.0));
        assert!(close(f.read_merged_pct, 20.0 / 1020.0 * 100.0));
        assert!(close(f.write_merged_pct, 50.0));
        assert!(close(f.read_await_ms, 1.0));
        assert!(close(f.write_await_ms, 6.0));
        assert!(close(f.discard_await_ms, 1.0));
        assert!(close(f.flush_await_ms, 1.0));
        assert!(close(f.flushes_per_s, 25.0));
        // await: (1000 + 3000 + 10) / (1000 + 500 + 10)
        assert!(close(f.await_ms, 4010.0 / 1510.0));
        assert!(close(f.read_request_bytes, 8192.0)); // rareq-sz 8 kB
        assert!(close(f.write_request_bytes, 32768.0)); // wareq-sz 32 kB
        assert!(close(f.discard_request_bytes, 2000.0 * 512.0 / 10.0));
        assert!(close(f.request_bytes, 50000.0 * 512.0 / 1510.0));
        assert!(close(f.queue_size, 2.0)); // 4000 ms / 2000 ms
        assert!(close(f.util_pct, 40.0)); // 800 ms / 2000 ms
        assert_eq!(d.in_flight, 2);
    }

    #[test]
    fn idle_device_and_backwards_counters_give_zeros() {
        let a = DiskCounters::parse(T1).unwrap();
        let b = DiskCounters::parse(T0).unwrap();
        let f = IostatFigures::from_delta(&b.delta(&a), 1.0);
        assert_eq!(f.reads_per_s, 0.0);
        assert_eq!(f.read_await_ms, 0.0);
        assert_eq!(f.read_merged_pct, 0.0);
        assert_eq!(f.util_pct, 0.0);
    }
}
