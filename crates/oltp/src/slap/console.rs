//! What mysqlslap prints besides its report: each statement followed by `;` under
//! `--only-print` (instead of running it) or `-vvv` (before running it), and its progress
//! notes from `-vv` on. Everything goes to one sink, the same one the report is written to,
//! so lines come out in the order they happened.

use std::io::Write;
use std::sync::{Arc, Mutex};

pub type Sink = Arc<Mutex<dyn Write + Send>>;

#[derive(Clone)]
pub struct Console {
    sink: Sink,
    /// Where errors and warnings go (stderr), each error line led by `prog: `.
    errors: Sink,
    prog: String,
    pub verbose: u32,
    pub only_print: bool,
}

impl Console {
    pub fn new(sink: Sink, errors: Sink, prog: &str, verbose: u32, only_print: bool) -> Self {
        Console {
            sink,
            errors,
            prog: prog.to_string(),
            verbose,
            only_print,
        }
    }

    /// A console that prints nothing (for runs that only measure).
    pub fn quiet() -> Self {
        let none = || -> Sink { Arc::new(Mutex::new(std::io::sink())) };
        Console::new(none(), none(), "mysqlslap", 0, false)
    }

    /// An error line on stderr: `prog: text`.
    pub fn error(&self, text: &str) {
        write_to(&self.errors, &format!("{}: {text}\n", self.prog));
    }

    /// A warning on stderr, as it is.
    pub fn warn(&self, text: &str) {
        write_to(&self.errors, &format!("{text}\n"));
    }

    pub fn sink(&self) -> Sink {
        self.sink.clone()
    }

    /// Write `text` as it is.
    pub fn write(&self, text: &str) {
        write_to(&self.sink, text);
    }

    /// A progress note, shown from verbosity `level` on.
    pub fn note(&self, level: u32, text: &str) {
        if self.verbose >= level {
            self.write(&format!("{text}\n"));
        }
    }

    /// Whether statements are printed.
    pub fn echoes(&self) -> bool {
        self.only_print || self.verbose >= 3
    }

    /// A statement about to run (or, with `--only-print`, instead of running), as mysqlslap
    /// prints it; appended to `buf` when given (a client's lines are kept together).
    pub fn statement(&self, sql: &str, buf: Option<&mut String>) {
        if !self.echoes() {
            return;
        }
        match buf {
            Some(b) => {
                b.push_str(sql);
                b.push_str(";\n");
            }
            None => self.write(&format!("{sql};\n")),
        }
    }
}

fn write_to(sink: &Sink, text: &str) {
    if text.is_empty() {
        return;
    }
    let mut w = sink.lock().unwrap_or_else(|p| p.into_inner());
    let _ = w.write_all(text.as_bytes());
    let _ = w.flush();
}
