//! The page of one run, or of several runs on the same axes (a comparison): per job, its
//! throughput and latency over time and its latency distribution; per group, what happened
//! underneath (device, page cache and buffer pool, CPU); each finding beside the chart whose
//! data explains it.

use plumb_core::stats::Histogram;
use plumb_oltp::driver::ServerCounters;
use plumb_oltp::settings::DatabaseSettings;
use plumb_pipeline::{GroupRecord, JobRecord, Settings};

use super::chart::{Chart, Series, XAxis};
use super::page::{Page, Shown};
use super::topics::{self, Topic};
use super::{latency_unit, Run};

const NO_INTERVALS: &str = "No interval samples: the run ended within its first sample (one a \
     second, or every --report-interval=N), or its command records none (dd, mysqlslap).";
const NO_DEVICE: &str = "No device samples: the test worked on no directory (CPU, memory and \
     lock tests touch no disk), the target's device could not be found, or sampling was off \
     (--observe-interval=0).";

/// Several runs are told apart by a letter (A, B, ...) in legends and beside findings.
fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

/// A job of each run at one place (group, position): the pairs a comparison puts together.
struct Slot<'a> {
    run: usize,
    job: &'a JobRecord,
}

pub fn render(runs: &[Run<'_>], comparison: &[Vec<String>]) -> String {
    let many = runs.len() > 1;
    let mut p = Page::default();
    let title = if many {
        format!("plumb: {} runs compared", runs.len())
    } else {
        format!("plumb: {}", runs[0].label)
    };
    p.heading(1, &title, None);
    header(&mut p, runs);
    if !comparison.is_empty() {
        p.heading(2, "Comparison", Some("comparison"));
        p.para(
            "note",
            "As plumb compare prints it: each figure of B against A, the ratio's 95% interval from the runs' own interval samples, and whether the difference is beyond noise.",
        );
        p.table(comparison);
    }
    let groups = runs
        .iter()
        .map(|r| r.record.groups.len())
        .max()
        .unwrap_or(0);
    let one_job = runs.iter().all(|r| r.record.jobs().count() == 1);
    for gi in 0..groups {
        let jobs = runs
            .iter()
            .filter_map(|r| r.record.groups.get(gi))
            .map(|g| g.jobs.len())
            .max()
            .unwrap_or(0);
        for ji in 0..jobs {
            let slots: Vec<Slot> = runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    r.record
                        .groups
                        .get(gi)
                        .and_then(|g| g.jobs.get(ji))
                        .map(|job| Slot { run: i, job })
                })
                .collect();
            let name = &slots[0].job.name;
            let anchor = format!("g{}j{}", gi + 1, ji + 1);
            if one_job {
                p.heading(2, &format!("Job {name}"), Some(&anchor));
            } else {
                p.heading(2, &format!("Group {}, job {name}", gi + 1), Some(&anchor));
            }
            job_sections(&mut p, &anchor, &slots, many);
        }
        let sides: Vec<(usize, &GroupRecord)> = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.record.groups.get(gi).map(|g| (i, g)))
            .collect();
        let anchor = format!("g{}", gi + 1);
        if groups > 1 {
            p.heading(2, &format!("Underneath group {}", gi + 1), Some(&anchor));
        } else {
            p.heading(2, "Underneath the run", Some(&anchor));
        }
        group_sections(&mut p, &anchor, &sides, many);
    }
    p.finish(&title)
}

fn header(p: &mut Page, runs: &[Run<'_>]) {
    let many = runs.len() > 1;
    for (i, r) in runs.iter().enumerate() {
        if many {
            p.heading(
                2,
                &format!("{}: {}", letter(i), r.label),
                Some(&format!("run-{}", letter(i))),
            );
        }
        let rec = r.record;
        let host = rec
            .groups
            .iter()
            .find_map(|g| g.observations.as_ref())
            .map_or("unknown".to_string(), |o| {
                format!(
                    "{} (Linux {}, {} CPUs, {:.1} GiB)",
                    o.host.hostname.as_deref().unwrap_or("unknown"),
                    o.host.kernel_release.as_deref().unwrap_or("?"),
                    o.host.logical_cpus,
                    o.host.memory_total_bytes as f64 / (1u64 << 30) as f64
                )
            });
        let status = rec
            .jobs()
            .map(|j| j.stop_reason.clone())
            .find(|s| s.starts_with("signal") || s == "forced_shutdown")
            .map_or("completed".to_string(), |s| format!("stopped: {s}"));
        let mut rows = vec![
            ("started", r.when.clone()),
            ("host", host),
            (
                "front end",
                format!("{} (plumb {})", rec.front_end, rec.plumb_version),
            ),
            ("status", status),
        ];
        if !r.tags.is_empty() {
            rows.push(("tags", r.tags.join(", ")));
        }
        p.facts(&rows);
        p.raw(&format!(
            "<pre class=\"command\">{}</pre>\n",
            super::escape::text(&command_line(&rec.command_line))
        ));
    }
    let mut rows = vec![[
        "run", "job", "threads", "time", "events/s", "p50", "p95", "p99", "max", "findings",
    ]
    .map(str::to_string)
    .to_vec()];
    for (i, r) in runs.iter().enumerate() {
        for j in r.record.jobs() {
            let h = j.events_histogram();
            let pct = |q: f64| {
                h.percentile(q)
                    .map_or("-".to_string(), |v| human_ns(v as f64))
            };
            rows.push(vec![
                if many { letter(i) } else { r.label.clone() },
                j.name.clone(),
                j.settings.threads.to_string(),
                format!("{:.2} s", j.total_time_s),
                format!("{:.2}", j.events_per_s),
                pct(50.0),
                pct(95.0),
                pct(99.0),
                h.max().map_or("-".to_string(), |v| human_ns(v as f64)),
                j.findings.len().to_string(),
            ]);
        }
    }
    p.heading(2, "Key figures", Some("figures"));
    p.table(&rows);
}

fn command_line(args: &[String]) -> String {
    let mut s = String::new();
    for a in args {
        if !s.is_empty() {
            s.push(' ');
        }
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
            s.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
        } else {
            s.push_str(a);
        }
    }
    s
}

pub fn human_ns(ns: f64) -> String {
    let (div, unit) = latency_unit(ns * 10.0);
    format!("{:.2} {unit}", ns / div)
}

fn shown<'a>(
    findings: impl Iterator<Item = (Option<String>, &'a plumb_advise::Finding)>,
    topic: Topic,
) -> Vec<Shown<'a>> {
    findings
        .filter(|(_, f)| topics::of(&f.id) == topic)
        .map(|(whose, finding)| Shown { whose, finding })
        .collect()
}

fn job_sections(p: &mut Page, anchor: &str, slots: &[Slot<'_>], many: bool) {
    let prefix = |s: &Slot, what: &str| {
        if many {
            if what.is_empty() {
                letter(s.run)
            } else {
                format!("{} {what}", letter(s.run))
            }
        } else {
            what.to_string()
        }
    };
    let findings = |topic| {
        shown(
            slots.iter().flat_map(|s| {
                s.job
                    .findings
                    .iter()
                    .map(move |f| (many.then(|| letter(s.run)), f))
            }),
            topic,
        )
    };

    // Throughput over time, warm-up intervals apart.
    let mut series = Vec::new();
    for s in slots {
        let (warm, measured): (Vec<_>, Vec<_>) = s.job.intervals.iter().partition(|i| i.warmup);
        let pts = |v: &[&plumb_core::result::IntervalResult]| {
            v.iter()
                .map(|i| (i.at_s, i.events_per_s))
                .collect::<Vec<_>>()
        };
        series.push((Series::line(prefix(s, "events/s"), s.run), pts(&measured)));
        series.push((
            Series::line(prefix(s, "warm-up"), s.run).dashed(),
            pts(&warm),
        ));
    }
    let tput = Chart::join(
        "Throughput over time",
        XAxis::linear("seconds since the start"),
        vec!["events/s".into()],
        series,
    )
    .ok_or_else(|| NO_INTERVALS.to_string());

    // Latency percentiles over time: the ones the intervals carry (--percentile, 95 by default).
    let max_ns = slots
        .iter()
        .flat_map(|s| s.job.intervals.iter())
        .flat_map(|i| i.latency_percentiles.iter())
        .map(|p| p.value_ns as f64)
        .fold(0.0, f64::max);
    let (div, unit) = latency_unit(max_ns);
    let mut series = Vec::new();
    for s in slots {
        let mut pcts: Vec<f64> = s
            .job
            .intervals
            .iter()
            .flat_map(|i| i.latency_percentiles.iter().map(|p| p.percentile))
            .collect();
        pcts.sort_by(f64::total_cmp);
        pcts.dedup();
        for (k, pc) in pcts.iter().enumerate() {
            let pts: Vec<(f64, f64)> = s
                .job
                .intervals
                .iter()
                .filter_map(|i| {
                    i.latency_percentiles
                        .iter()
                        .find(|p| p.percentile == *pc)
                        .map(|p| (i.at_s, p.value_ns as f64 / div))
                })
                .collect();
            let colour = if many { s.run } else { k };
            series.push((Series::line(prefix(s, &format!("p{pc}")), colour), pts));
        }
    }
    let lat = Chart::join(
        "Latency percentiles over time (per interval)",
        XAxis::linear("seconds since the start"),
        vec![unit.to_string()],
        series,
    )
    .ok_or_else(|| {
        "No latency percentiles over time: the run has no interval samples (see above).".to_string()
    });
    p.section(
        &format!("{anchor}-time"),
        "Throughput and latency over time",
        vec![tput, lat],
        &findings(Topic::Throughput),
        &[],
    );

    // The latency distribution, from the lossless histograms.
    let hists: Vec<(&Slot, Histogram)> = slots
        .iter()
        .map(|s| (s, s.job.events_histogram()))
        .collect();
    let max_ns = hists.iter().filter_map(|(_, h)| h.max()).max().unwrap_or(0) as f64;
    let (div, unit) = latency_unit(max_ns);
    let series = hists
        .iter()
        .map(|(s, h)| {
            (
                Series::line(prefix(s, "share of events"), s.run),
                distribution(h, div),
            )
        })
        .collect();
    let dist = Chart::join(
        "Latency distribution (all events; share per quarter-octave bin)",
        XAxis::log(format!("latency ({unit}, log scale)")),
        vec!["% of events".into()],
        series,
    )
    .ok_or_else(|| "No latency distribution: the job recorded no events.".to_string());
    let notes: Vec<String> = hists
        .iter()
        .filter(|(_, h)| h.count() > 0)
        .map(|(s, h)| {
            let q = |x: f64| h.percentile(x).map_or("-".into(), |v| human_ns(v as f64));
            format!(
                "{}{} events: min {}, p50 {}, p95 {}, p99 {}, p99.9 {}, max {}.",
                if many {
                    format!("{}: ", letter(s.run))
                } else {
                    String::new()
                },
                h.count(),
                h.min().map_or("-".into(), |v| human_ns(v as f64)),
                q(50.0),
                q(95.0),
                q(99.0),
                q(99.9),
                h.max().map_or("-".into(), |v| human_ns(v as f64)),
            )
        })
        .collect();
    p.section(
        &format!("{anchor}-latency"),
        "Latency distribution",
        vec![dist],
        &findings(Topic::Distribution),
        &notes,
    );
}

/// The histogram as shares of events in quarter-octave bins (by each bucket's upper bound),
/// x at the bin's upper edge divided by `div`.
fn distribution(h: &Histogram, div: f64) -> Vec<(f64, f64)> {
    let total = h.count();
    if total == 0 {
        return Vec::new();
    }
    let mut bins: std::collections::BTreeMap<i64, u64> = Default::default();
    for (_, high, count) in h.nonzero() {
        let bin = ((high.max(1) as f64).log2() * 4.0).ceil() as i64;
        *bins.entry(bin).or_default() += count;
    }
    bins.into_iter()
        .map(|(b, c)| {
            (
                2f64.powf(b as f64 / 4.0) / div,
                c as f64 * 100.0 / total as f64,
            )
        })
        .collect()
}

fn group_sections(p: &mut Page, anchor: &str, sides: &[(usize, &GroupRecord)], many: bool) {
    let findings = |topic| {
        shown(
            sides.iter().flat_map(|(run, g)| {
                let jobs = g.jobs.len();
                g.jobs.iter().flat_map(move |j| {
                    j.findings.iter().map(move |f| {
                        let whose = match (many, jobs > 1) {
                            (false, false) => None,
                            (true, false) => Some(letter(*run)),
                            (false, true) => Some(j.name.clone()),
                            (true, true) => Some(format!("{}, {}", letter(*run), j.name)),
                        };
                        (whose, f)
                    })
                })
            }),
            topic,
        )
    };
    let tag = |run: usize, what: &str| {
        if many {
            format!("{} {what}", letter(run))
        } else {
            what.to_string()
        }
    };

    // Devices: utilisation and queue depth, reads and writes.
    let mut util = Vec::new();
    let mut queue = Vec::new();
    let mut rw = Vec::new();
    for (run, g) in sides {
        let Some(o) = &g.observations else { continue };
        // One run: every device under the target; several: the filesystem's device of each.
        let devices: Vec<_> = if many {
            o.filesystem_device().into_iter().collect()
        } else {
            o.devices.iter().collect()
        };
        for (k, d) in devices.iter().enumerate() {
            let colour = if many { *run } else { k };
            let name = tag(*run, &d.name);
            let pts = |f: &dyn Fn(&plumb_observe::diskstats::IostatFigures) -> f64| {
                d.samples
                    .iter()
                    .map(|s| (s.t_s, f(&s.figures)))
                    .collect::<Vec<_>>()
            };
            util.push((
                Series::line(format!("{name} %util"), colour),
                pts(&|f| f.util_pct),
            ));
            queue.push((
                Series::line(format!("{name} aqu-sz"), colour),
                pts(&|f| f.queue_size),
            ));
            rw.push((
                Series::line(format!("{name} read"), colour),
                pts(&|f| f.read_bytes_per_s / MIB),
            ));
            rw.push((
                Series::line(format!("{name} write"), colour).dashed(),
                pts(&|f| f.write_bytes_per_s / MIB),
            ));
        }
    }
    let secs = || XAxis::linear("seconds since observation started");
    // Without samples the three charts are absent for one reason: say it once.
    let charts = match Chart::join(
        "Device utilisation (%util)",
        secs(),
        vec!["%util".into()],
        util,
    ) {
        None => vec![Err(NO_DEVICE.to_string())],
        Some(u) => [
            Some(u),
            Chart::join(
                "Device queue depth (aqu-sz)",
                secs(),
                vec!["requests".into()],
                queue,
            ),
            Chart::join("Device reads and writes", secs(), vec!["MiB/s".into()], rw),
        ]
        .into_iter()
        .flatten()
        .map(Ok)
        .collect(),
    };
    p.section(
        &format!("{anchor}-device"),
        "Device utilisation and queue depth",
        charts,
        &findings(Topic::Device),
        &["%util is the share of time with at least one request in flight: on SSDs and arrays that serve requests in parallel, 100% does not mean saturated.".to_string()],
    );

    // Page cache and buffer pool.
    let mut mem = Vec::new();
    let mut notes = Vec::new();
    for (run, g) in sides {
        let Some(o) = &g.observations else { continue };
        let pts = |f: &dyn Fn(&plumb_observe::meminfo::MemSnapshot) -> u64| {
            o.memory
                .samples
                .iter()
                .map(|s| (s.t_s, f(&s.memory) as f64 / MIB))
                .collect::<Vec<_>>()
        };
        let c = |k: usize| if many { *run } else { k };
        mem.push((
            Series::line(tag(*run, "page cache"), c(0)),
            pts(&|m| m.cached_bytes),
        ));
        mem.push((
            Series::line(tag(*run, "dirty"), c(1)).dashed().right(),
            pts(&|m| m.dirty_bytes),
        ));
        mem.push((
            Series::line(tag(*run, "writeback"), c(2)).dashed().right(),
            pts(&|m| m.writeback_bytes),
        ));
        if let Some(r) = &o.residency {
            notes.push(format!(
                "{}test files in the page cache: {:.1}% at the start ({:.1} of {:.1} MiB), {:.1}% at the end ({}).",
                if many { format!("{}: ", letter(*run)) } else { String::new() },
                r.start.resident_pct,
                r.start.resident_bytes as f64 / MIB,
                r.start.total_bytes as f64 / MIB,
                r.end.resident_pct,
                serde_json::to_value(r.start.method).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
            ));
        }
        for j in &g.jobs {
            if let Some(n) = buffer_pool(j) {
                let who = match (many, g.jobs.len() > 1) {
                    (false, false) => String::new(),
                    (true, false) => format!("{}: ", letter(*run)),
                    (false, true) => format!("{}: ", j.name),
                    (true, true) => format!("{}, {}: ", letter(*run), j.name),
                };
                notes.push(format!("{who}{n}"));
            }
        }
    }
    if mem.iter().all(|(_, v)| v.len() < 2)
        && notes.is_empty()
        && sides.iter().all(|(_, g)| g.observations.is_none())
    {
        notes.push("Nothing was observed underneath this run.".to_string());
    }
    let cache = Chart::join(
        "Page cache, dirty and writeback memory (whole machine)",
        secs(),
        vec!["page cache MiB".into(), "dirty / writeback MiB".into()],
        mem,
    )
    .ok_or_else(|| "No memory samples: sampling was off (--observe-interval=0).".to_string());
    p.section(
        &format!("{anchor}-cache"),
        "Page cache and buffer pool",
        vec![cache],
        &findings(Topic::Cache),
        &notes,
    );

    // CPU: the machine's and plumb's busiest worker.
    let mut cpu = Vec::new();
    for (run, g) in sides {
        let Some(o) = &g.observations else { continue };
        let c = |k: usize| if many { *run } else { k };
        let sys = |f: &dyn Fn(&plumb_observe::procstat::CpuPct) -> f64| {
            o.system
                .samples
                .iter()
                .map(|s| (s.t_s, f(&s.figures.cpu)))
                .collect::<Vec<_>>()
        };
        cpu.push((
            Series::line(tag(*run, "user %"), c(0)),
            sys(&|p| p.user_pct + p.nice_pct),
        ));
        cpu.push((
            Series::line(tag(*run, "system %"), c(1)).dashed(),
            sys(&|p| p.system_pct),
        ));
        cpu.push((
            Series::line(tag(*run, "iowait %"), c(2)).dashed(),
            sys(&|p| p.iowait_pct),
        ));
        cpu.push((
            Series::line(tag(*run, "busiest plumb worker, % of a core"), c(3)).right(),
            o.process
                .samples
                .iter()
                .map(|s| (s.t_s, s.worker_max_cpu_pct))
                .collect(),
        ));
    }
    let cpu = Chart::join(
        "CPU: the machine (share of all CPUs) and plumb's busiest worker (share of one core)",
        secs(),
        vec!["% of all CPUs".into(), "% of one core".into()],
        cpu,
    )
    .ok_or_else(|| "No CPU samples: sampling was off (--observe-interval=0).".to_string());
    p.section(
        &format!("{anchor}-cpu"),
        "CPU",
        vec![cpu],
        &findings(Topic::Cpu),
        &[],
    );

    let other = findings(Topic::Other);
    if !other.is_empty() {
        p.section(
            &format!("{anchor}-other"),
            "Other findings",
            vec![],
            &other,
            &[],
        );
    }
}

const MIB: f64 = 1048576.0;

/// What the job's database says about its buffer pool or cache, in one sentence.
fn buffer_pool(j: &JobRecord) -> Option<String> {
    let (db, act): (Option<&DatabaseSettings>, Option<&ServerCounters>) = match &j.workload {
        Settings::Oltp(s) => (s.database.as_ref(), s.server_activity.as_ref()),
        Settings::Slap(s) => (s.database.as_ref(), s.server_activity.as_ref()),
        _ => return None,
    };
    let mut parts = Vec::new();
    match db? {
        DatabaseSettings::Sqlite(s) => {
            let cache = if s.cache_size < 0 {
                (-s.cache_size) as f64 * 1024.0
            } else {
                s.cache_size as f64 * s.page_size_bytes as f64
            };
            parts.push(format!(
                "SQLite page cache {:.1} MiB per connection (cache_size {}, page size {} bytes), journal {}, synchronous {}",
                cache / MIB,
                s.cache_size,
                s.page_size_bytes,
                s.journal_mode,
                s.synchronous
            ));
        }
        DatabaseSettings::Mysql(s) | DatabaseSettings::Pgsql(s) => {
            let mib = |b: Option<u64>| {
                b.map_or("unknown".to_string(), |b| {
                    format!("{:.1} MiB", b as f64 / MIB)
                })
            };
            parts.push(format!(
                "{} buffer pool {}, data set (tables and indexes) {}",
                s.version,
                mib(s.buffer_pool_bytes),
                mib(s.data_set_bytes)
            ));
            if let (Some(pool), Some(data)) = (s.buffer_pool_bytes, s.data_set_bytes) {
                parts.push(if data <= pool {
                    "the data set fits in the buffer pool".to_string()
                } else {
                    format!(
                        "the data set is {:.1}x the buffer pool",
                        data as f64 / pool.max(1) as f64
                    )
                });
            }
        }
    }
    if let Some(a) = act {
        if a.pool_requests > 0 {
            parts.push(format!(
                "buffer pool hit ratio {:.3}% ({} page requests, {} misses)",
                (1.0 - a.pool_misses as f64 / a.pool_requests as f64) * 100.0,
                a.pool_requests,
                a.pool_misses
            ));
        }
    }
    Some(format!("{}.", parts.join("; ")))
}
