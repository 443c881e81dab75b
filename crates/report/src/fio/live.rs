//! fio's status line (`--eta`): `Jobs: 1 (f=1): [r(1)][60.0%][r=68.6MiB/s][r=17.6k IOPS][eta 00m:02s]`,
//! redrawn every second while the jobs run. The percentage and ETA follow fio's estimate:
//! per job, the share of its bytes done (or of its runtime, whichever is less for a
//! time-based job); the group's ETA is the longest job's (the shortest with exitall).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use plumb_pipeline::live::{LiveJob, LiveState, LiveStatus, LiveView};

use super::adapt::info;
use super::job::FioJobInfo;
use super::num::{num2str, N2sUnit};

/// No estimate yet (fio's INT_MAX): the first seconds, before rates settle.
const UNKNOWN: u64 = u64::MAX;

pub struct FioStatus {
    period: Duration,
    exitall: bool,
    /// `--eta-newline`: a fresh line this often instead of one line drawn over.
    newline: Option<Duration>,
    /// An estimate has been shown: from then on a zero ETA prints as a percentage.
    eta_good: Mutex<bool>,
    /// When the current line began (the first draw, or the last newline).
    line_since: Mutex<Option<Instant>>,
}

impl FioStatus {
    pub fn new(period: Duration, exitall: bool, newline: Option<Duration>) -> Self {
        FioStatus {
            period,
            exitall,
            newline,
            eta_good: Mutex::new(false),
            line_since: Mutex::new(None),
        }
    }

    /// "\n" when the line has been drawn over for longer than `--eta-newline`.
    fn line_break(&self) -> &'static str {
        let Some(every) = self.newline else {
            return "";
        };
        let mut since = self.line_since.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match *since {
            Some(t) if now.duration_since(t) > every => {
                *since = Some(now);
                "\n"
            }
            Some(_) => "",
            None => {
                *since = Some(now);
                ""
            }
        }
    }
}

impl LiveStatus for FioStatus {
    fn period(&self) -> Duration {
        self.period
    }

    fn end(&self) -> &'static str {
        // fio's report begins with the blank line that ends the status line.
        ""
    }

    fn show(&self, text: &str) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn line(&self, view: &LiveView<'_>) -> Option<String> {
        let jobs: Vec<(FioJobInfo, &LiveJob<'_>)> = view
            .jobs
            .iter()
            .filter_map(|j| info(j.head).map(|i| (i, j)))
            .collect();
        let running: Vec<&(FioJobInfo, &LiveJob<'_>)> = jobs
            .iter()
            .filter(|(_, j)| j.state == LiveState::Running)
            .collect();
        let pending = jobs
            .iter()
            .filter(|(_, j)| j.state == LiveState::Pending)
            .count();
        if running.is_empty() && pending == 0 {
            return None;
        }
        let elapsed_s = view.elapsed.as_millis().div_ceil(1000) as u64;
        let etas: Vec<u64> = jobs
            .iter()
            .map(|(i, j)| {
                if elapsed_s >= 3 {
                    job_eta(i, j, view.elapsed)
                } else {
                    UNKNOWN
                }
            })
            .collect();
        let eta = if self.exitall {
            etas.iter().copied().min().unwrap_or(UNKNOWN)
        } else {
            etas.iter().copied().max().unwrap_or(0)
        };
        let files: u32 = running.iter().map(|(i, _)| i.progress.files).sum();
        let mut line = format!("{}Jobs: {} (f={files})", self.line_break(), running.len());
        line.push_str(&rate_limits(&running));
        if eta == UNKNOWN || running.is_empty() {
            return Some(line);
        }
        let in_ramp = running
            .iter()
            .filter(|(_, j)| j.last.as_ref().is_none_or(|l| l.warmup))
            .count();
        let mut good = self.eta_good.lock().unwrap_or_else(|p| p.into_inner());
        let perc = if (eta == 0 && !*good) || in_ramp == running.len() {
            "-.-%".to_string()
        } else {
            *good = true;
            let p = elapsed_s as f64 / (elapsed_s + eta) as f64;
            format!("{:3.1}%", p * 100.0)
        };
        line.push_str(&format!(": [{}][{perc}]", run_string(&jobs)));
        line.push_str(&rates(&running));
        line.push_str(&format!("[eta {}]", eta_text(eta)));
        Some(line)
    }
}

/// Seconds left for one job, as fio's `thread_eta` estimates them.
fn job_eta(i: &FioJobInfo, j: &LiveJob<'_>, now: Duration) -> u64 {
    let p = &i.progress;
    let timeout = p.runtime_s.map(|s| s as u64);
    match j.state {
        LiveState::Done => 0,
        LiveState::Pending => match p.runtime_s {
            Some(r) => {
                let due = r + p.start_delay_s + p.ramp_s;
                (due - now.as_secs_f64()).max(0.0) as u64
            }
            None => 0,
        },
        LiveState::Running => {
            let since = j.since.unwrap_or_default();
            let ran = now.saturating_sub(since);
            // fio counts the job's time from the end of its ramp.
            let elapsed = ran
                .saturating_sub(Duration::from_secs_f64(p.ramp_s))
                .as_millis()
                .div_ceil(1000) as u64;
            let done =
                j.counter("bytes_read") + j.counter("bytes_written") + j.counter("bytes_trimmed");
            let mut perc = if p.io_bytes > 0 {
                (done as f64 / p.io_bytes as f64).min(1.0)
            } else {
                0.0
            };
            if p.time_based {
                if let Some(t) = timeout.filter(|&t| t > 0) {
                    perc = perc.min(elapsed as f64 / t as f64);
                }
            }
            let mut eta = if perc == 0.0 {
                timeout.unwrap_or(0)
            } else {
                ((elapsed as f64 * (1.0 / perc)) as u64).saturating_sub(elapsed)
            };
            if let Some(t) = timeout {
                eta = eta.min(t.saturating_sub(elapsed));
            }
            eta
        }
    }
}

/// One letter a job (r/R read, w/W write (trimwrite too), m/M mixed, d/D trim; capital for
/// sequential; `_` done, `P` not started), runs of the same letter condensed: `[R(2),w(1)]`.
fn run_string(jobs: &[(FioJobInfo, &LiveJob<'_>)]) -> String {
    let letters: Vec<char> = jobs
        .iter()
        .map(|(i, j)| match j.state {
            LiveState::Done => '_',
            LiveState::Pending => 'P',
            LiveState::Running => letter(&i.header.rw),
        })
        .collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < letters.len() {
        let c = letters[k];
        let n = letters[k..].iter().take_while(|&&x| x == c).count();
        out.push(format!("{c}({n})"));
        k += n;
    }
    out.join(",")
}

fn letter(rw: &str) -> char {
    let sequential = !rw.starts_with("rand");
    let c = match rw.trim_start_matches("rand") {
        "read" => 'r',
        "write" | "trimwrite" => 'w',
        "trim" => 'd',
        _ => 'm',
    };
    if sequential {
        c.to_ascii_uppercase()
    } else {
        c
    }
}

/// `, 0-500 IOPS` or `, 0-10.0MiB/s`: the rate limits of the running jobs.
fn rate_limits(running: &[&(FioJobInfo, &LiveJob<'_>)]) -> String {
    let bytes: u64 = running.iter().map(|(i, _)| i.progress.rate_bytes).sum();
    let iops: u64 = running.iter().map(|(i, _)| i.progress.rate_iops).sum();
    let pow2 = running.iter().any(|(i, _)| i.header.kb_base == 1024);
    if bytes > 0 {
        format!(
            ", {}-{}",
            num2str(0, 4, pow2, N2sUnit::BytePerSec),
            num2str(bytes, 4, pow2, N2sUnit::BytePerSec)
        )
    } else if iops > 0 {
        format!(", 0-{iops} IOPS")
    } else {
        String::new()
    }
}

/// `[r=68.6MiB/s,w=1234KiB/s][r=17.6k,w=308 IOPS]` from the last sample of each job
/// (`t=` for trims).
fn rates(running: &[&(FioJobInfo, &LiveJob<'_>)]) -> String {
    let mut bw = [0f64; 3];
    let mut iops = [0f64; 3];
    const DIRS: [(&str, &str); 3] = [
        ("read", "bytes_read"),
        ("write", "bytes_written"),
        ("trim", "bytes_trimmed"),
    ];
    for (_, j) in running {
        let Some(l) = &j.last else { continue };
        if l.length_s <= 0.0 {
            continue;
        }
        for (d, (kind, bytes)) in DIRS.iter().enumerate() {
            bw[d] += l.counter(bytes) as f64 / l.length_s;
            iops[d] += l.operation(kind) as f64 / l.length_s;
        }
    }
    let pow2 = running.iter().any(|(i, _)| i.header.kb_base == 1024);
    let dirs: Vec<usize> = (0..3).filter(|&d| bw[d] >= 1.0 || iops[d] >= 1.0).collect();
    if dirs.is_empty() {
        return String::new();
    }
    let c = ['r', 'w', 't'];
    let bw_text: Vec<String> = dirs
        .iter()
        .map(|&d| {
            // fio shows whole KiB/s.
            let kib = (bw[d] / 1024.0) as u64;
            format!(
                "{}={}",
                c[d],
                num2str(kib * 1024, 4, pow2, N2sUnit::BytePerSec)
            )
        })
        .collect();
    let iops_text: Vec<String> = dirs
        .iter()
        .map(|&d| {
            format!(
                "{}={}",
                c[d],
                num2str(iops[d] as u64, 4, false, N2sUnit::None)
            )
        })
        .collect();
    format!("[{}][{} IOPS]", bw_text.join(","), iops_text.join(","))
}

/// `01m:05s`, with hours and days once they are needed.
fn eta_text(s: u64) -> String {
    let (d, h, m, s) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    let mut out = String::new();
    if d > 0 {
        out.push_str(&format!("{d:02}d:"));
    }
    if d > 0 || h > 0 {
        out.push_str(&format!("{h:02}h:"));
    }
    out.push_str(&format!("{m:02}m:{s:02}s"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_text_grows_units_as_needed() {
        assert_eq!(eta_text(2), "00m:02s");
        assert_eq!(eta_text(3725), "01h:02m:05s");
        assert_eq!(eta_text(90_061), "01d:01h:01m:01s");
    }

    #[test]
    fn letters_follow_the_pattern() {
        assert_eq!(letter("randread"), 'r');
        assert_eq!(letter("read"), 'R');
        assert_eq!(letter("randwrite"), 'w');
        assert_eq!(letter("write"), 'W');
        assert_eq!(letter("trim"), 'D');
        assert_eq!(letter("randtrim"), 'd');
        assert_eq!(letter("trimwrite"), 'W');
        assert_eq!(letter("randtrimwrite"), 'w');
        assert_eq!(letter("randrw"), 'm');
        assert_eq!(letter("rw"), 'M');
    }
}
