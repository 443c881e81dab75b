//! A walk that replays a logged sequence of requests (fio's `read_iolog`) instead of
//! drawing one: each entry in order, once, then the job is done.
//!
//! Timing, as fio 3.33 replays a version 3 log: an entry waits until its delay (the gap
//! to the line before it in the log, already scaled) has passed since the previous
//! request was handed out, so a slow request is never made up for by a burst after it; a
//! version 2 `wait` entry waits until a time since the job began. A file's `open` drops
//! its cached pages when the job invalidates (fio opens the file again there).

use std::sync::Arc;
use std::time::Instant;

use crate::pattern::{Io, Op};

/// What a logged line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Read,
    Write,
    Trim,
    Sync,
    /// The file is opened (again): its cached pages go when the job invalidates.
    Open,
    /// Only the wait (a version 2 `wait`, or file events plumb has nothing to do for).
    Wait,
}

/// When an entry may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// At once.
    None,
    /// This many microseconds after the previous request was handed out.
    AfterLast(u64),
    /// This many microseconds after the job began (a version 2 `wait`).
    SinceStart(u64),
}

/// One logged line to replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub action: Action,
    /// Index into the job's files.
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub wait: Wait,
}

/// A log to replay, shared by nothing but read by its one thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub entries: Vec<Entry>,
}

/// The thread's place in its script.
pub(super) struct Replay {
    script: Arc<Script>,
    next: usize,
    /// The current entry's wait is over.
    waited: bool,
    began: Option<Instant>,
    last_issue: Option<Instant>,
    invalidate: bool,
}

impl Replay {
    pub(super) fn new(script: Arc<Script>, invalidate: bool) -> Replay {
        Replay {
            script,
            next: 0,
            waited: false,
            began: None,
            last_issue: None,
            invalidate,
        }
    }

    /// The next operation: a pause while the entry's time has not come, then the entry.
    pub(super) fn next(&mut self) -> Op {
        loop {
            let Some(&e) = self.script.entries.get(self.next) else {
                return Op::Done;
            };
            let now = Instant::now();
            let began = *self.began.get_or_insert(now);
            if !self.waited {
                let left = match e.wait {
                    Wait::None => 0,
                    Wait::AfterLast(us) => {
                        let since = self.last_issue.map_or(u64::MAX, |t| micros(now - t));
                        us.saturating_sub(since)
                    }
                    Wait::SinceStart(us) => us.saturating_sub(micros(now - began)),
                };
                if left > 0 {
                    self.waited = true;
                    return Op::Pause(left);
                }
            }
            self.waited = false;
            self.next += 1;
            // fio takes the time of file events as of a request too.
            self.last_issue = Some(now);
            let io = Io {
                file: e.file,
                offset: e.offset,
                len: e.len,
            };
            let op = match e.action {
                Action::Read => Op::Read(io),
                Action::Write => Op::Write(io),
                Action::Trim => Op::Trim(io),
                Action::Sync => Op::Fsync(e.file),
                Action::Open if self.invalidate => Op::DropCache(e.file),
                Action::Open | Action::Wait => continue,
            };
            return op;
        }
    }
}

fn micros(d: std::time::Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}
