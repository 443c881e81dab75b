//! A thread's requests as it issues them, in fio's iolog (version 3) text: what fio's
//! `write_iolog` keeps, and what `read_iolog` replays.
//!
//! One line per event, each stamped with the microseconds since the thread began:
//! `<us> <file> add` for each file at the start, `<us> <file> open` before a file's first
//! request of each round (fio opens its files lazily), `<us> <file> <read|write|trim|sync>
//! <offset> <length>` for each request when it is queued, and `<us> <file> close` when the
//! walk finds a file done (fio closes it there) and for the files still open, in file
//! order, when a round (or a read-back) ends and when the thread does.
//! A sync carries the offset of the request before it and length 0, as fio's reused
//! request does (exact at iodepth=1, where fio has one). The file is opened for appending,
//! as fio opens it, so the clones of a job and a second run add to it; each thread's lines
//! reach it in blocks of 8 KiB (fio's buffer), so several threads' blocks interleave.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::pattern::Op;

/// Where a job's threads log their requests, and the files' names as the log spells them
/// (fio's: `directory/name` as given, in the order of the job's files).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub names: Vec<String>,
}

/// The log could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[error("write_iolog {path}: {source}")]
pub struct TraceError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// One thread's log.
pub struct IoTrace {
    out: BufWriter<File>,
    path: PathBuf,
    names: Vec<String>,
    opened: Vec<bool>,
    since: Instant,
    last_offset: u64,
    /// The first write error; later lines are dropped, and the thread's end reports it.
    failed: Option<std::io::Error>,
}

impl IoTrace {
    /// Open `spec.path` for appending and write the header and the files' `add` lines.
    pub fn open(spec: &TraceSpec) -> Result<IoTrace, TraceError> {
        let file = File::options()
            .append(true)
            .create(true)
            .open(&spec.path)
            .map_err(|source| Self::error(&spec.path, source))?;
        let mut t = IoTrace {
            out: BufWriter::with_capacity(8192, file),
            path: spec.path.clone(),
            names: spec.names.clone(),
            opened: vec![false; spec.names.len()],
            since: Instant::now(),
            last_offset: 0,
            failed: None,
        };
        Self::put(
            &mut t.out,
            &mut t.failed,
            format_args!("fio version 3 iolog\n"),
        );
        for f in 0..t.names.len() {
            t.file(f, "add");
        }
        Ok(t)
    }

    fn error(path: &Path, source: std::io::Error) -> TraceError {
        TraceError {
            path: path.display().to_string(),
            source,
        }
    }

    fn us(&self) -> u128 {
        self.since.elapsed().as_micros()
    }

    /// Write one line; after a failure nothing more is written.
    fn put(
        out: &mut BufWriter<File>,
        failed: &mut Option<std::io::Error>,
        line: std::fmt::Arguments<'_>,
    ) {
        if failed.is_none() {
            if let Err(e) = out.write_fmt(line) {
                *failed = Some(e);
            }
        }
    }

    fn file(&mut self, f: usize, what: &str) {
        let us = self.us();
        Self::put(
            &mut self.out,
            &mut self.failed,
            format_args!("{us} {} {what}\n", self.names[f]),
        );
    }

    /// `op` is about to be queued (or, for a drain, the round is over).
    pub fn op(&mut self, op: &Op) {
        let (file, what, offset, len) = match *op {
            Op::Read(io) | Op::ReadBack(io) => (io.file, "read", io.offset, io.len as u64),
            Op::Write(io) => (io.file, "write", io.offset, io.len as u64),
            Op::Trim(io) => (io.file, "trim", io.offset, io.len as u64),
            Op::Fsync(file) => (file, "sync", self.last_offset, 0),
            Op::Drain => return self.close_all(),
            Op::DropCache(_) | Op::DropZone(..) | Op::Pause(_) | Op::Done => return,
        };
        let f = file as usize;
        if f >= self.names.len() {
            return;
        }
        if !self.opened[f] {
            self.opened[f] = true;
            self.file(f, "open");
        }
        self.last_offset = offset;
        let us = self.us();
        Self::put(
            &mut self.out,
            &mut self.failed,
            format_args!("{us} {} {what} {offset} {len}\n", self.names[f]),
        );
    }

    /// Files the walk found done: fio closes each there.
    pub fn closed(&mut self, files: impl Iterator<Item = u32>) {
        for f in files {
            let f = f as usize;
            if self.opened.get(f).copied().unwrap_or(false) {
                self.opened[f] = false;
                self.file(f, "close");
            }
        }
    }

    /// The round is over: its open files are closed, in file order.
    fn close_all(&mut self) {
        for f in 0..self.opened.len() {
            if std::mem::take(&mut self.opened[f]) {
                self.file(f, "close");
            }
        }
    }

    /// The thread is done: close what is open and write out the rest.
    pub fn finish(&mut self) -> Result<(), TraceError> {
        self.close_all();
        if self.failed.is_none() {
            if let Err(e) = self.out.flush() {
                self.failed = Some(e);
            }
        }
        match self.failed.take() {
            Some(e) => Err(Self::error(&self.path, e)),
            None => Ok(()),
        }
    }
}
