//! From plumb's record to fio's report model: one [`Unit`] per job, or per run of jobs that
//! group_reporting merges (histograms merged bucket by bucket, counts summed, bandwidth and
//! IOPS sample statistics added field by field as fio adds them).
//!
//! What plumb measures and fio's names for it:
//! - Blocking engines time each request around its system call: that is fio's clat, and
//!   its lat too (fio's lat adds only the time to build the request). Both lines show it.
//! - Queued engines time a request from just before the call that submits it to just after
//!   the one that reaps it: fio's lat. plumb keeps no separate submission latency, so
//!   those jobs print `lat` and its percentiles, and no slat or clat lines.
//! - Trims are done inside their submission on every engine, as fio's are: clat and lat,
//!   never slat, whatever the engine.
//! - Bandwidth and IOPS samples come from the run's 500 ms windows (fio's bwavgtime).
//! - CPU, context switches and faults are the process's over the group, shared among the
//!   group's jobs in proportion to their run time.

use plumb_core::result::IntervalResult;
use plumb_core::stats::{Histogram, SparseHistogram};
use plumb_fileio::settings::FileioSettings;
use plumb_fileio::workload::{
    READS_FAILED, TRIMS_FAILED, WRITES_FAILED, WRITES_FULL, WRITES_SHORT,
};
use plumb_observe::observations::{DeviceRole, Observations};
use plumb_pipeline::record::{JobRecord, Record, Settings};

use super::job::FioJobInfo;
use super::model::{
    DirStats, DiskUtil, ErrorSummary, FioDoc, IoDepths, LatBuckets, LatStats, LatencyTarget,
    PercentileOptions, SampleStats, SyncStats, Unit,
};
use super::num::percentile_precision;

/// A job's fio facts, when the fio front end made it.
pub fn info(job: &JobRecord) -> Option<FioJobInfo> {
    job.layout
        .as_ref()
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

fn histogram(job: &JobRecord, kind: &str) -> Option<Histogram> {
    job.histograms
        .get(kind)
        .and_then(|h: &SparseHistogram| Histogram::try_from(h).ok())
        .filter(|h| h.count() > 0)
}

fn lat_stats(h: &Histogram, percentiles: Option<&[f64]>) -> LatStats {
    LatStats {
        min_ns: h.min().unwrap_or(0),
        max_ns: h.max().unwrap_or(0),
        mean_ns: h.mean().unwrap_or(0.0),
        stddev_ns: sample_stddev(h),
        n: h.count(),
        percentiles: percentiles
            .map(|ps| {
                ps.iter()
                    .map(|&p| (p, h.percentile(p).unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default(),
        bins: if percentiles.is_some() {
            h.nonzero()
                .map(|(lo, hi, n)| (lo + (hi - lo) / 2, n))
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// fio's stddev divides by n - 1.
fn sample_stddev(h: &Histogram) -> f64 {
    let n = h.count() as f64;
    match h.stddev() {
        Some(sd) if n > 1.0 => sd * (n / (n - 1.0)).sqrt(),
        _ => 0.0,
    }
}

fn samples(v: &[f64]) -> SampleStats {
    if v.is_empty() {
        return SampleStats::default();
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    SampleStats {
        min: v.iter().cloned().fold(f64::INFINITY, f64::min) as u64,
        max: v.iter().cloned().fold(0.0, f64::max) as u64,
        mean,
        stddev: var.sqrt(),
        samples: v.len() as u64,
    }
}

/// Per-window bandwidth (KiB/s, or kB/s with kb_base 1000) and IOPS of one direction.
fn window_samples(
    intervals: &[IntervalResult],
    kind: &str,
    bytes: &str,
    kb: f64,
) -> (SampleStats, SampleStats) {
    let measured: Vec<&IntervalResult> = intervals
        .iter()
        .filter(|i| !i.warmup && i.length_s > 0.0)
        .collect();
    let bw: Vec<f64> = measured
        .iter()
        .map(|i| (i.counter(bytes) as f64 / i.length_s / kb).floor())
        .collect();
    let iops: Vec<f64> = measured
        .iter()
        .map(|i| (i.operation(kind) as f64 / i.length_s).floor())
        .collect();
    if bw.iter().all(|&b| b == 0.0) {
        return Default::default();
    }
    (samples(&bw), samples(&iops))
}

/// fio's latency buckets: labels are exclusive upper bounds.
const LABELS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

fn add_buckets(b: &mut LatBuckets, h: &Histogram) {
    for (lo, hi, n) in h.nonzero() {
        let v = lo + (hi - lo) / 2;
        let (arr, scaled): (&mut [u64], u64) = if v < 1000 {
            (&mut b.ns[..], v)
        } else if v < 1_000_000 {
            (&mut b.us[..], v / 1000)
        } else {
            (&mut b.ms[..], v / 1_000_000)
        };
        let idx = LABELS.iter().position(|&l| scaled < l);
        match idx {
            Some(i) => arr[i] += n,
            None if arr.len() == 12 => {
                if scaled < 2000 {
                    arr[10] += n
                } else {
                    arr[11] += n
                }
            }
            // 1000 units and up belong to the next scale's first bucket.
            None => {
                if arr.len() == 10 && v < 1000 {
                    b.us[0] += n
                } else {
                    b.ms[0] += n
                }
            }
        }
    }
}

/// fio's error number for a job's failure: EILSEQ for a verification failure (as fio
/// reports it); the errno of the failed call when the message names one (`BLKDISCARD failed:
/// Inappropriate ioctl for device` is 25, as fio reports a trim of a regular file); EIO
/// otherwise.
fn errno_of(msg: &str) -> i32 {
    if msg.contains("verify") {
        return 84;
    }
    (1..134)
        .find(|&e| msg.contains(&format!("failed: {}", plumb_fileio::error::errno_text(e))))
        .unwrap_or(5)
}

/// A run time as fio reports it: whole milliseconds rounded up from microseconds, so a job
/// that did I/O never reports 0 ms (which would drop its direction and group lines).
fn runtime_ms(seconds: f64) -> u64 {
    ((seconds * 1e6).round() as u64).div_ceil(1000)
}

/// One job as a report unit of one member.
fn unit_of(job: &JobRecord, fi: &FioJobInfo, group_cpu: &GroupShare, kb: f64) -> Unit {
    let fs: Option<&FileioSettings> = match &job.workload {
        Settings::Fileio(f) => Some(f),
        _ => None,
    };
    let queued = fs.is_some_and(|f| f.engine_caps.queued);
    // One blocking call per request on the files (falloc's too, which moves no data).
    let calls = fs.is_some_and(|f| f.engine_caps.needs_files);
    let runtime_ms = runtime_ms(job.total_time_s);
    let pct: Option<&[f64]> = Some(&fi.percentiles);
    let split =
        job.histograms.contains_key("read_submit") || job.histograms.contains_key("write_submit");
    let mut buckets = LatBuckets::default();
    // Under a rate, plumb's per-kind latencies run from each request's intended start; fio's
    // run from the actual one, which is the schedule's service time (one direction only).
    // A job that reads and writes keeps one service histogram for both: its directions show
    // their own latencies, from the intended start (plumb's section gives lag and service).
    let one_direction = ["read", "write", "trim"]
        .iter()
        .filter(|k| job.histograms.get(**k).is_some_and(|h| h.count > 0))
        .count()
        <= 1;
    let service = job
        .open_loop
        .as_ref()
        .filter(|_| one_direction)
        .and_then(|o| Histogram::try_from(&o.service_histogram).ok())
        .filter(|h| h.count() > 0);
    let mut dir = |kind: &str, bytes: &str| -> DirStats {
        // Writes that found the disk full were issued, though not timed (fio counts them).
        // So were the writes cut short, whose rest went out again.
        let counter = |c: &str| job.counters.get(c).copied().unwrap_or(0);
        let short_ios = match kind {
            "write" => counter(WRITES_SHORT),
            _ => 0,
        };
        // And so were the requests that failed with an error the job went on after.
        let untimed = match kind {
            "read" => counter(READS_FAILED),
            "write" => counter(WRITES_FULL) + short_ios + counter(WRITES_FAILED),
            "trim" => counter(TRIMS_FAILED),
            _ => 0,
        };
        let Some(counted) = histogram(job, kind) else {
            return DirStats {
                total_ios: untimed,
                short_ios,
                ..DirStats::default()
            };
        };
        let total_ios = counted.count() + untimed;
        let h = service.clone().unwrap_or(counted);
        let (bw, iops) = window_samples(&job.intervals, kind, bytes, kb);
        // fio's disable_* switches: a series that is not collected is not reported.
        let stats = |h: &Histogram, on: bool, with: bool| {
            on.then(|| lat_stats(h, with.then_some(&fi.percentiles[..])))
        };
        let (s_on, c_on, l_on) = (fi.series.slat, fi.series.clat, fi.series.lat);
        // Engines that submit with a call of their own keep both halves of each request.
        let halves = (
            histogram(job, &format!("{kind}_submit")),
            histogram(job, &format!("{kind}_complete")),
        );
        let (slat, clat, lat) = match halves {
            (Some(sub), Some(done)) if service.is_none() => {
                if c_on {
                    add_buckets(&mut buckets, &done);
                }
                (
                    stats(&sub, s_on, fi.slat_percentiles),
                    stats(&done, c_on, fi.clat_percentiles),
                    stats(&h, l_on, fi.lat_percentiles),
                )
            }
            _ if queued && kind != "trim" => {
                if c_on {
                    add_buckets(&mut buckets, &h);
                }
                (None, None, stats(&h, l_on, true))
            }
            _ => {
                if c_on {
                    add_buckets(&mut buckets, &h);
                }
                let on_lat = fi.lat_percentiles && !fi.clat_percentiles;
                (None, stats(&h, c_on, !on_lat), stats(&h, l_on, on_lat))
            }
        };
        DirStats {
            io_bytes: job.counters.get(bytes).copied().unwrap_or(0),
            runtime_ms,
            total_ios,
            short_ios,
            drop_ios: 0,
            slat,
            clat,
            lat,
            bw,
            iops,
        }
    };
    let read = dir("read", "bytes_read");
    let write = dir("write", "bytes_written");
    let trim = dir("trim", "bytes_trimmed");
    // Without clat, fio keeps no sync latencies either (the calls are still counted).
    let sync = histogram(job, "fsync").map(|h| SyncStats {
        total_ios: h.count(),
        lat: if fi.series.clat {
            lat_stats(&h, pct)
        } else {
            LatStats::default()
        },
    });
    let ios = read.total_ios + write.total_ios + trim.total_ios;
    let syncs = sync.as_ref().map_or(0, |s| s.total_ios);
    let c = |name: &str| job.counters.get(name).copied().unwrap_or(0);
    let depths = if queued {
        let mut d = IoDepths::default();
        for (i, k) in ["1", "2", "4", "8", "16", "32", "64"].iter().enumerate() {
            d.level[i] = c(&format!("depth_{k}"));
        }
        d.level[0] += syncs;
        for (i, k) in ["0", "4", "8", "16", "32", "64", "65"].iter().enumerate() {
            d.submit[i] = c(&format!("submit_{k}"));
            d.complete[i] = c(&format!("reap_{k}"));
        }
        d.total_submit = d.submit.iter().sum();
        d.total_complete = d.complete.iter().sum();
        d
    } else if calls {
        // Every request is one call that completes it: depth 1, one I/O per submit and reap.
        IoDepths {
            level: [ios + syncs, 0, 0, 0, 0, 0, 0],
            submit: [0, ios, 0, 0, 0, 0, 0],
            total_submit: ios,
            complete: [0, ios, 0, 0, 0, 0, 0],
            total_complete: ios,
        }
    } else {
        IoDepths {
            level: [ios + syncs, 0, 0, 0, 0, 0, 0],
            ..Default::default()
        }
    };
    let share = group_cpu.share(runtime_ms);
    Unit {
        name: fi.header.name.clone(),
        groupid: fi.header.groupid,
        members: 1,
        // fio's own words when the front end has them (a full disk), else plumb's message;
        // a job that went on after its errors reports the first.
        error: match (&fi.failure, &job.error, &fi.errors) {
            (Some(f), _, _) => f.errno,
            (None, Some(e), _) => errno_of(e),
            (None, None, Some(e)) => e.first,
            (None, None, None) => 0,
        },
        error_text: match (&fi.failure, &job.error, &fi.errors) {
            (Some(f), _, _) => Some(f.verror.clone()),
            (None, Some(e), _) => Some(e.clone()),
            (None, None, Some(e)) => Some(e.words.clone()),
            (None, None, None) => None,
        },
        pid: fi.pid,
        time_text: String::new(),
        description: fi.description.clone(),
        job_options: fi.job_options.clone(),
        eta_s: 2147483647,
        elapsed_s: 0,
        job_runtime_ms: runtime_ms,
        read,
        write,
        trim,
        sync,
        usr_cpu_pct: share.usr_pct,
        sys_cpu_pct: share.sys_pct,
        ctx: share.ctx,
        majf: share.majf,
        minf: share.minf,
        depths,
        lat_buckets: buckets,
        zone_resets: 0,
        errors: fi.errors.as_ref().map(|e| ErrorSummary {
            total: e.total,
            first_error: e.first,
            first_error_text: plumb_fileio::error::errno_text(e.first),
        }),
        latency_target: LatencyTarget {
            depth: fi.header.iodepth,
            target_ns: 0,
            window_us: 0,
            percentile: 100.0,
        },
        percentiles: PercentileOptions {
            list: fi.percentiles.clone(),
            precision: fi
                .percentile_list_text
                .as_deref()
                .map_or(2, percentile_precision),
            clat: fi.clat_percentiles && (!queued || split),
            lat: fi.lat_percentiles || (queued && !split && fi.clat_percentiles),
            slat: fi.slat_percentiles && split,
        },
        mixed: false,
        both: None,
        steady: fi.steady.clone(),
    }
}

/// The process's CPU, switches and faults over one group, shared among its jobs.
struct GroupShare {
    user_ns: u64,
    sys_ns: u64,
    ctx: u64,
    majf: u64,
    minf: u64,
    /// Run time of all jobs of the group together, ms.
    total_runtime_ms: u64,
    /// How long the process was observed (the CPU figures' span), ms.
    observed_ms: f64,
}

struct Share {
    usr_pct: f64,
    sys_pct: f64,
    ctx: u64,
    majf: u64,
    minf: u64,
}

impl GroupShare {
    fn new(obs: Option<&Observations>, total_runtime_ms: u64) -> GroupShare {
        let t = obs.map(|o| &o.process.totals);
        GroupShare {
            user_ns: t.map_or(0, |t| t.user_cpu_ns),
            sys_ns: t.map_or(0, |t| t.system_cpu_ns),
            ctx: t.map_or(0, |t| {
                t.voluntary_context_switches + t.involuntary_context_switches
            }),
            majf: t.map_or(0, |t| t.major_faults),
            minf: t.map_or(0, |t| t.minor_faults),
            total_runtime_ms,
            observed_ms: obs.map_or(0.0, |o| o.duration_s * 1000.0),
        }
    }
    fn share(&self, runtime_ms: u64) -> Share {
        let f = if self.total_runtime_ms == 0 {
            0.0
        } else {
            runtime_ms as f64 / self.total_runtime_ms as f64
        };
        // The process's CPU time over the span it was observed in, this job's share of it.
        let ns = (self.observed_ms * 1e6 * f).max(1.0);
        Share {
            usr_pct: 100.0 * self.user_ns as f64 * f / ns,
            sys_pct: 100.0 * self.sys_ns as f64 * f / ns,
            ctx: (self.ctx as f64 * f).round() as u64,
            majf: (self.majf as f64 * f).round() as u64,
            minf: (self.minf as f64 * f).round() as u64,
        }
    }
}

fn merge_lat(
    a: &mut Option<LatStats>,
    ha: &mut Option<Histogram>,
    hb: Option<&Histogram>,
    pct: &[f64],
) {
    // A series the unit prints (clat or lat) is merged from the histograms.
    let (Some(l), Some(x), Some(y)) = (a.as_ref(), ha.as_mut(), hb) else {
        return;
    };
    let with = !l.percentiles.is_empty();
    x.merge(y);
    *a = Some(lat_stats(x, with.then_some(pct)));
}

/// fio's sum of two sample series (`sum_stat` with `pure_sum`): min, max, mean and count
/// added, and the sums of squared deviations added, from which the stddev is taken again
/// over the summed count.
fn add_samples(a: &mut SampleStats, b: &SampleStats) {
    if b.samples == 0 {
        return;
    }
    if a.samples == 0 {
        *a = b.clone();
        return;
    }
    let squares = |s: &SampleStats| s.stddev * s.stddev * (s.samples as f64 - 1.0).max(0.0);
    let sum_sq = squares(a) + squares(b);
    a.min += b.min;
    a.max += b.max;
    a.mean += b.mean;
    a.samples += b.samples;
    a.stddev = if a.samples > 1 {
        (sum_sq / (a.samples as f64 - 1.0)).sqrt()
    } else {
        0.0
    };
}

/// Add `job`'s figures to `unit` (group_reporting).
fn merge_into(unit: &mut Unit, hists: &mut UnitHists, next: Unit, job: &JobRecord, pct: &[f64]) {
    unit.members += 1;
    // fio copies each member's steady-state figures over the last: the last one's stay
    // (it holds the group's window).
    if next.steady.is_some() {
        unit.steady = next.steady.clone();
    }
    unit.job_runtime_ms += next.job_runtime_ms;
    // fio's group: the first member's error that has one; the errors counted summed, with
    // the last member's first error and its continue_on_error deciding the line.
    if unit.error == 0 && next.error != 0 {
        unit.error = next.error;
        unit.error_text = next.error_text.clone();
    }
    let before = unit.errors.as_ref().map_or(0, |e| e.total);
    unit.errors = next.errors.clone().map(|e| ErrorSummary {
        total: e.total + before,
        ..e
    });
    for (d, n, kind, h) in [
        (&mut unit.read, &next.read, "read", &mut hists.read),
        (&mut unit.write, &next.write, "write", &mut hists.write),
        (&mut unit.trim, &next.trim, "trim", &mut hists.trim),
    ] {
        d.io_bytes += n.io_bytes;
        d.total_ios += n.total_ios;
        d.runtime_ms = d.runtime_ms.max(n.runtime_ms);
        let hb = histogram(job, kind);
        if h.is_none() {
            *h = hb;
            d.clat = n.clat.clone();
            d.lat = n.lat.clone();
        } else {
            // clat and lat are the same measurement here: merge both from one histogram.
            let mut hc = h.clone();
            merge_lat(&mut d.clat, &mut hc, hb.as_ref(), pct);
            merge_lat(&mut d.lat, h, hb.as_ref(), pct);
        }
        add_samples(&mut d.bw, &n.bw);
        add_samples(&mut d.iops, &n.iops);
    }
    if let Some(ns) = &next.sync {
        let hb = histogram(job, "fsync");
        match (&mut unit.sync, &mut hists.sync, hb) {
            (Some(s), Some(h), Some(b)) => {
                h.merge(&b);
                s.total_ios += ns.total_ios;
                // Jobs that keep no clat (disable_clat) keep no sync latencies to merge.
                if s.lat.n > 0 || ns.lat.n > 0 {
                    s.lat = lat_stats(h, Some(pct));
                }
            }
            (s, h, b) => {
                *s = Some(ns.clone());
                *h = b;
            }
        }
    }
    let w_old = unit.job_runtime_ms - next.job_runtime_ms;
    let total = unit.job_runtime_ms.max(1) as f64;
    // CPU: total usr time over total run time, as fio averages it.
    unit.usr_cpu_pct =
        (unit.usr_cpu_pct * w_old as f64 + next.usr_cpu_pct * next.job_runtime_ms as f64) / total;
    unit.sys_cpu_pct =
        (unit.sys_cpu_pct * w_old as f64 + next.sys_cpu_pct * next.job_runtime_ms as f64) / total;
    unit.ctx += next.ctx;
    unit.majf += next.majf;
    unit.minf += next.minf;
    for i in 0..7 {
        unit.depths.level[i] += next.depths.level[i];
        unit.depths.submit[i] += next.depths.submit[i];
        unit.depths.complete[i] += next.depths.complete[i];
    }
    unit.depths.total_submit += next.depths.total_submit;
    unit.depths.total_complete += next.depths.total_complete;
    for i in 0..10 {
        unit.lat_buckets.ns[i] += next.lat_buckets.ns[i];
        unit.lat_buckets.us[i] += next.lat_buckets.us[i];
    }
    for i in 0..12 {
        unit.lat_buckets.ms[i] += next.lat_buckets.ms[i];
    }
}

/// unified_rw_reporting=both's `mixed` figures of `unit`: the latencies of `summed` (the
/// directions' histograms merged), the directions' counts added, and their bandwidth and
/// IOPS samples added field by field, counts too, as fio's sum of a unit's directions adds
/// them.
fn both_sum(unit: &Unit, summed: DirStats) -> DirStats {
    let dirs = [&unit.read, &unit.write, &unit.trim];
    let mut m = DirStats {
        io_bytes: dirs.iter().map(|d| d.io_bytes).sum(),
        total_ios: dirs.iter().map(|d| d.total_ios).sum(),
        short_ios: dirs.iter().map(|d| d.short_ios).sum(),
        drop_ios: dirs.iter().map(|d| d.drop_ios).sum(),
        runtime_ms: dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0),
        bw: SampleStats::default(),
        iops: SampleStats::default(),
        ..summed
    };
    for d in dirs {
        add_samples(&mut m.bw, &d.bw);
        add_samples(&mut m.iops, &d.iops);
    }
    m
}

#[derive(Default)]
struct UnitHists {
    read: Option<Histogram>,
    write: Option<Histogram>,
    trim: Option<Histogram>,
    sync: Option<Histogram>,
}

impl UnitHists {
    fn of(job: &JobRecord) -> UnitHists {
        UnitHists {
            read: histogram(job, "read"),
            write: histogram(job, "write"),
            trim: histogram(job, "trim"),
            sync: histogram(job, "fsync"),
        }
    }
}

/// The fio report model of a whole run.
pub fn doc(record: &Record, time_text: &str, timestamp_ms: u64) -> FioDoc {
    let first = record
        .groups
        .iter()
        .flat_map(|g| g.jobs.iter())
        .find_map(info)
        .unwrap_or_default();
    let kb_base = first.header.kb_base.max(1000);
    let kb = kb_base as f64;
    let elapsed = record
        .groups
        .iter()
        .flat_map(|g| g.observations.as_ref())
        .map(|o| o.duration_s)
        .sum::<f64>()
        .ceil() as u64;
    let mut units: Vec<Unit> = Vec::new();
    let mut hists: Vec<UnitHists> = Vec::new();
    // unified_rw_reporting=both: each unit's directions summed, as a unit of its own whose
    // read is the sum, merged the way the units are.
    let mut sums: Vec<Option<(Unit, UnitHists)>> = Vec::new();
    for g in &record.groups {
        let total_ms: u64 = g.jobs.iter().map(|j| runtime_ms(j.total_time_s)).sum();
        let share = GroupShare::new(g.observations.as_ref(), total_ms);
        for job in &g.jobs {
            let Some(fi) = info(job).filter(|fi| !fi.stats_off) else {
                continue;
            };
            let folded = fi.unified_mixed.then(|| super::mixed::fold_directions(job));
            let job = folded.as_ref().unwrap_or(job);
            let mut u = unit_of(job, &fi, &share, kb);
            u.mixed = fi.unified_mixed;
            u.time_text = time_text.to_string();
            u.elapsed_s = elapsed;
            let merge = fi.group_reporting
                && units
                    .last()
                    .is_some_and(|last| last.groupid == fi.header.groupid);
            // A merged unit reports as its first member says, whatever the others say.
            let both = if merge {
                sums.last().is_some_and(Option::is_some)
            } else {
                fi.unified_both
            };
            let sum = both.then(|| {
                let summed = super::mixed::fold_directions(job);
                (unit_of(&summed, &fi, &share, kb), summed)
            });
            if merge {
                let (last, lh) = (units.last_mut().unwrap(), hists.last_mut().unwrap());
                merge_into(last, lh, u, job, &fi.percentiles);
                if let (Some(Some((su, sh))), Some((next, summed))) = (sums.last_mut(), sum) {
                    merge_into(su, sh, next, &summed, &fi.percentiles);
                }
            } else {
                hists.push(UnitHists::of(job));
                units.push(u);
                sums.push(sum.map(|(next, summed)| (next, UnitHists::of(&summed))));
            }
        }
    }
    for (u, sum) in units.iter_mut().zip(sums) {
        u.both = sum.map(|(s, _)| both_sum(u, s.read));
    }
    FioDoc {
        version: "fio-3.33".into(),
        timestamp_ms,
        time_text: time_text.to_string(),
        kb_base,
        unit_bits: first.unit_bits,
        sig_figs: first.header.sig_figs.max(1),
        global_options: first.global_options.clone(),
        units,
        disks: disks(record),
    }
}

/// fio's Disk stats: the whole disks under the jobs' files, summed over the groups. A
/// group whose jobs all say `disk_util=0` adds none (fio tracks the disks of the jobs that
/// keep it on; plumb observes a group's disks together, so a group that mixes the two
/// shows all of its disks).
fn disks(record: &Record) -> Vec<DiskUtil> {
    let mut out: Vec<DiskUtil> = Vec::new();
    let mut elapsed_ms: Vec<f64> = Vec::new();
    let mut busy_ms: Vec<u64> = Vec::new();
    for g in &record.groups {
        let Some(o) = &g.observations else { continue };
        let wanted = g
            .jobs
            .iter()
            .any(|j| info(j).is_none_or(|fi| !fi.no_disk_util));
        if !wanted {
            continue;
        }
        // The whole disks under the files; the filesystem's device when it is one itself.
        let has_disk = o.devices.iter().any(|d| d.role == DeviceRole::Disk);
        let shown = |d: &&plumb_observe::observations::DeviceObservation| {
            d.role == DeviceRole::Disk || !has_disk
        };
        for d in o.devices.iter().filter(shown) {
            let c = &d.totals.counters;
            let i = match out.iter().position(|u| u.name == d.name) {
                Some(i) => i,
                None => {
                    out.push(DiskUtil {
                        name: d.name.clone(),
                        ..Default::default()
                    });
                    elapsed_ms.push(0.0);
                    busy_ms.push(0);
                    out.len() - 1
                }
            };
            let u = &mut out[i];
            u.read_ios += c.read_ios;
            u.write_ios += c.write_ios;
            u.read_merges += c.read_merges;
            u.write_merges += c.write_merges;
            u.read_ticks += c.read_ticks_ms;
            u.write_ticks += c.write_ticks_ms;
            u.in_queue += c.time_in_queue_ms;
            elapsed_ms[i] += o.duration_s * 1000.0;
            busy_ms[i] += c.io_ticks_ms;
        }
    }
    for (i, u) in out.iter_mut().enumerate() {
        u.util_pct = if elapsed_ms[i] > 0.0 {
            (100.0 * busy_ms[i] as f64 / elapsed_ms[i]).min(100.0)
        } else {
            0.0
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{add_samples, both_sum, errno_of, runtime_ms};
    use crate::fio::model::{DirStats, SampleStats, Unit};

    fn samples(min: u64, max: u64, mean: f64, stddev: f64, samples: u64) -> SampleStats {
        SampleStats {
            min,
            max,
            mean,
            stddev,
            samples,
        }
    }

    /// fio 3.33's JSON of unified_rw_reporting=both (tests/fixtures/fio/null_both): the
    /// `mixed` bandwidth and IOPS samples are the read and write ones added, deviations
    /// through their sums of squares.
    #[test]
    fn both_adds_the_directions_samples_as_fio_does() {
        let dir = |bytes, ios, bw, iops| DirStats {
            io_bytes: bytes,
            total_ios: ios,
            runtime_ms: 2004,
            bw,
            iops,
            ..DirStats::default()
        };
        let unit = Unit {
            read: dir(
                18_299_453_440,
                4_467_640,
                samples(8706112, 9116136, 8873530.666667, 98301.604391, 7),
                samples(2176528, 2279034, 2218383.166667, 24575.473456, 7),
            ),
            write: dir(
                18_290_941_952,
                4_465_562,
                samples(8698736, 9101432, 8869194.0, 97857.765013, 7),
                samples(2174684, 2275356, 2217298.5, 24464.371192, 7),
            ),
            ..Unit::default()
        };
        let m = both_sum(&unit, DirStats::default());
        assert_eq!(
            (m.io_bytes, m.total_ios, m.runtime_ms),
            (36_590_395_392, 8_933_202, 2004)
        );
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-4 * b, "{a} vs {b}");
        assert_eq!((m.bw.min, m.bw.max, m.bw.samples), (17404848, 18217568, 14));
        close(m.bw.mean, 17742724.666667);
        close(m.bw.stddev, 94232.154236);
        assert_eq!(
            (m.iops.min, m.iops.max, m.iops.samples),
            (4351212, 4554390, 14)
        );
        close(m.iops.mean, 4435681.666667);
        close(m.iops.stddev, 23558.039818);
    }

    #[test]
    fn adding_no_samples_changes_nothing() {
        let one = samples(5, 9, 7.0, 2.0, 3);
        let mut a = SampleStats::default();
        add_samples(&mut a, &one);
        assert_eq!(a, one);
        add_samples(&mut a, &SampleStats::default());
        assert_eq!(a, one);
    }

    #[test]
    fn errno_comes_from_the_failed_call_when_the_message_names_it() {
        let trim = "trim of /tmp/x at offset 0 (4096 bytes): BLKDISCARD failed: Inappropriate ioctl for device (BLKDISCARD trims block devices only)";
        assert_eq!(errno_of(trim), 25);
        assert_eq!(errno_of("read from x: pread failed: Input/output error"), 5);
        assert_eq!(errno_of("bad crc32c (verify) in x"), 84);
        assert_eq!(errno_of("something odd"), 5);
    }

    #[test]
    fn runtime_rounds_up_to_whole_milliseconds() {
        assert_eq!(runtime_ms(0.0), 0);
        assert_eq!(runtime_ms(0.000_3), 1);
        assert_eq!(runtime_ms(0.001), 1);
        assert_eq!(runtime_ms(0.001_001), 2);
        assert_eq!(runtime_ms(2.0), 2000);
    }
}
