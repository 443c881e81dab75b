//! A progress bar for long work (prepare), drawn on stderr only when stderr is a terminal,
//! at most ten times a second; silent otherwise, so logs and pipes stay clean.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plumb_core::progress::Progress;

// The bar takes what the terminal width leaves, so the line never wraps (a wrapped bar
// cannot be redrawn in place).
const TEMPLATE: &str = "{msg} [{wide_bar}] {percent:>3}% {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}";

pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new(label: &'static str) -> Bar {
        // Decided here rather than left to indicatif, so the rule (stderr is a terminal) is
        // the one the module documents whatever the library's own detection does.
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr_with_hz(10)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(0), target)
            .with_style(style())
            .with_message(label);
        Bar { bar }
    }

    /// A writer for the lines logged while the bar is shown (on the same terminal): each
    /// whole line is written with the bar lifted, so the bar neither overwrites nor splits it.
    pub fn log_above(&self, inner: Box<dyn Write + Send>) -> LogAbove {
        LogAbove {
            bar: self.bar.clone(),
            inner,
            pending: Vec::new(),
        }
    }
}

pub struct LogAbove {
    bar: ProgressBar,
    inner: Box<dyn Write + Send>,
    pending: Vec<u8>,
}

impl LogAbove {
    fn emit(&mut self, upto: usize) -> std::io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..upto).collect();
        let inner = &mut self.inner;
        self.bar
            .suspend(|| inner.write_all(&chunk).and_then(|_| inner.flush()))
    }
}

impl Write for LogAbove {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.emit(end + 1)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.emit(self.pending.len())?;
        }
        self.inner.flush()
    }
}

impl Drop for LogAbove {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

fn style() -> ProgressStyle {
    ProgressStyle::with_template(TEMPLATE)
        .map(|s| s.progress_chars("## "))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Progress for Bar {
    fn start(&mut self, total_bytes: u64) {
        self.bar.set_length(total_bytes);
        // Rate and ETA count from the start of the work, not from the bar's creation.
        self.bar.reset();
    }
    fn advance(&mut self, bytes: u64) {
        self.bar.inc(bytes);
    }
    fn finish(&mut self) {
        // The bar goes once the work ends: the line logged next (bytes written and speed, or
        // the error) says how it ended, and a finished bar would be redrawn below it.
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_valid() {
        assert!(ProgressStyle::with_template(TEMPLATE).is_ok());
    }

    #[test]
    fn counts_bytes_when_hidden() {
        let mut b = Bar::new("x");
        b.start(100);
        b.advance(40);
        b.advance(60);
        assert_eq!(b.bar.position(), 100);
        assert_eq!(b.bar.length(), Some(100));
        b.finish();
        assert!(b.bar.is_finished());
    }

    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn log_lines_pass_through_whole() {
        let b = Bar::new("x");
        let out = Shared::default();
        let mut log = b.log_above(Box::new(out.clone()));
        write!(log, "Creating file ").unwrap();
        assert!(out.0.lock().unwrap().is_empty(), "half a line waits");
        writeln!(log, "test_file.0").unwrap();
        write!(log, "tail").unwrap();
        assert_eq!(&*out.0.lock().unwrap(), b"Creating file test_file.0\n");
        drop(log);
        assert_eq!(&*out.0.lock().unwrap(), b"Creating file test_file.0\ntail");
    }
}
