//! A progress bar for long work (prepare), drawn on stderr only when stderr is a terminal,
//! at most ten times a second; silent otherwise, so logs and pipes stay clean.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use plumb_core::size::{format_mib, MIB};
use plumb_fileio::fileset::prepare::Progress;

pub struct Bar {
    label: &'static str,
    on: bool,
    total: u64,
    done: u64,
    start: Instant,
    last: Option<Instant>,
}

impl Bar {
    pub fn new(label: &'static str) -> Bar {
        Bar {
            label,
            on: std::io::stderr().is_terminal(),
            total: 0,
            done: 0,
            start: Instant::now(),
            last: None,
        }
    }

    fn draw(&mut self, force: bool) {
        let now = Instant::now();
        if !force
            && self
                .last
                .is_some_and(|l| now - l < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let frac = if self.total == 0 {
            1.0
        } else {
            self.done as f64 / self.total as f64
        };
        let secs = (now - self.start).as_secs_f64().max(1e-3);
        let rate = self.done as f64 / secs;
        let eta = if rate > 0.0 {
            (self.total.saturating_sub(self.done)) as f64 / rate
        } else {
            0.0
        };
        let width = 30;
        let filled = ((frac * width as f64) as usize).min(width);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} [{}{}] {:3.0}% {}/{} {:.0} MiB/s ETA {:.0}s   ",
            self.label,
            "#".repeat(filled),
            " ".repeat(width - filled),
            frac * 100.0,
            format_mib(self.done as f64, 0, ""),
            format_mib(self.total as f64, 0, ""),
            rate / MIB as f64,
            eta
        );
        let _ = err.flush();
    }
}

impl Progress for Bar {
    fn start(&mut self, total_bytes: u64) {
        self.total = total_bytes;
        self.start = Instant::now();
    }
    fn advance(&mut self, bytes: u64) {
        self.done += bytes;
        if self.on {
            self.draw(false);
        }
    }
    fn finish(&mut self) {
        if self.on && self.last.is_some() {
            self.draw(true);
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err);
        }
        self.on = false;
    }
}
