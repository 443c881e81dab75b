//! The sweep's progress: a line redrawn on a terminal (stderr); elsewhere, where nobody
//! sees a redrawn line, one plain line before each run says the same.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plumb_core::StopFlag;

pub(super) struct Progress {
    bar: ProgressBar,
    total: u64,
    started: Instant,
}

impl Progress {
    /// For `total` runs, the sweep started at `started`.
    pub fn new(total: u64, started: Instant) -> Progress {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        // The bar's position counts the runs done; its line names the run going on, and
        // says what is left as the plain lines do, from the mean time of the runs done.
        if let Ok(style) = ProgressStyle::with_template("run {run} {msg} [{clock} elapsed{left}]") {
            let style = style
                .with_key(
                    "run",
                    move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}/{total}", (s.pos() + 1).min(total));
                    },
                )
                .with_key(
                    "clock",
                    move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&clock(started.elapsed()));
                    },
                )
                .with_key(
                    "left",
                    move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&remaining(started.elapsed(), s.pos(), total));
                    },
                );
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_secs(1));
        Progress {
            bar,
            total,
            started,
        }
    }

    /// Run number `runs` (from 1) is about to start: `what` names it.
    pub fn before_run(&self, runs: u64, what: &str) {
        self.bar.set_message(what.to_string());
        self.bar.set_position(runs - 1);
        if !self.bar.is_hidden() {
            self.bar.tick();
        } else {
            eprintln!(
                "sweep: run {runs}/{}: {what} ({} elapsed{})",
                self.total,
                clock(self.started.elapsed()),
                remaining(self.started.elapsed(), runs - 1, self.total)
            );
        }
    }

    /// A whole line on stdout (`out`) or stderr, with the progress line lifted while it is
    /// written, so that the two do not mix.
    pub fn say(&self, out: bool, line: String) {
        self.bar.suspend(|| {
            if out {
                println!("{line}");
                let _ = std::io::stdout().flush();
            } else {
                eprintln!("{line}");
            }
        });
    }

    /// Take the progress line off before the results are printed.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Wait `d`, or until a signal: true when a signal came.
pub(super) fn pause(d: Duration, stop: &StopFlag) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if stop.load(Relaxed) != 0 {
            return true;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
    stop.load(Relaxed) != 0
}

/// H:MM:SS.
pub(super) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// "about H:MM:SS left", from the mean time of the runs done so far.
fn remaining(elapsed: Duration, done: u64, total: u64) -> String {
    if done == 0 {
        return String::new();
    }
    let left = elapsed.mul_f64((total - done) as f64 / done as f64);
    format!(", about {} left", clock(left))
}
