//! fio's `read_iolog`: a log written by `write_iolog` (version 3) or an older version 2
//! log, read into the requests a job replays in place of its own walk
//! ([`plumb_fileio::walk::replay`]).
//!
//! As fio 3.33 reads it: the log's `add` lines name the job's files (the job's own files
//! are dropped); each request line becomes a request on its file, its offset divided by
//! `replay_scale` and aligned down to `replay_align`; with `replay_redirect` every line
//! goes to that one file. A version 3 line waits for the gap to the line before it in
//! the log (scaled by `replay_time_scale`, none with `replay_no_stall`); the first line
//! and a line stamped before the one above it wait for nothing. A version 2 `wait` waits
//! until its time since the start. Where fio prints a complaint about a line and skips it,
//! plumb refuses the log in one line naming it: a replay that silently drops requests
//! measures something else.

use std::path::Path;
use std::sync::Arc;

use plumb_fileio::walk::replay::{Action, Entry, Script, Wait};

/// The replay options of a job.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    pub redirect: Option<String>,
    /// Offsets are divided by this (0: not at all).
    pub scale: u64,
    /// Offsets are aligned down to this power of two (0: not at all).
    pub align: u64,
    /// Percent of the logged pace (100: as logged).
    pub time_scale: u64,
    pub no_stall: bool,
}

/// A log read for one job clone.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The files as the log names them (after the redirect), in the order added.
    pub names: Vec<String>,
    pub script: Arc<Script>,
    /// Bytes of all requests (fio's size of the job).
    pub bytes: u64,
    /// Per file, the end of the furthest request.
    pub extents: Vec<u64>,
    /// The largest request of each direction (read, write, trim); 0: none.
    pub max_len: [u64; 3],
    pub syncs: bool,
    pub datasyncs: bool,
}

impl Replay {
    pub fn reads(&self) -> bool {
        self.max_len[0] > 0
    }
    pub fn writes(&self) -> bool {
        self.max_len[1] > 0
    }
    pub fn trims(&self) -> bool {
        self.max_len[2] > 0
    }
}

/// A log that cannot be replayed: one line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ReplayError(pub String);

/// blktrace's magic (fio's BLK_IO_TRACE_MAGIC), in the first word of a binary trace.
const BLKTRACE_MAGIC: u32 = 0x6561_7400;

/// Read the log at `shown` (resolved against `cwd`).
pub fn load(shown: &str, cwd: &Path, o: &ReplayOptions) -> Result<Replay, ReplayError> {
    let path = cwd.join(shown);
    let bytes = std::fs::read(&path)
        .map_err(|e| ReplayError(format!("fio: read_iolog {shown}: {}", os_words(&e))))?;
    if let Some(w) = bytes.get(..4) {
        let w = [w[0], w[1], w[2], w[3]];
        let magic = [u32::from_le_bytes(w), u32::from_be_bytes(w)];
        if magic.iter().any(|m| m & 0xffff_ff00 == BLKTRACE_MAGIC) {
            return Err(ReplayError(format!(
                "plumb: read_iolog {shown} is a blktrace file; plumb replays fio's text iologs only (not yet blktrace)"
            )));
        }
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| ReplayError(format!("fio: read_iolog {shown}: not a text iolog")))?;
    parse(&text, o).map_err(|e| ReplayError(format!("fio: read_iolog {shown}: {e}")))
}

fn os_words(e: &std::io::Error) -> String {
    plumb_fileio::dd::strerror(e)
}

/// The log's text.
fn parse(text: &str, o: &ReplayOptions) -> Result<Replay, String> {
    let mut lines = text.lines().enumerate();
    let first = lines.next().map(|l| l.1).unwrap_or("");
    let version = if first.starts_with("fio version 2 iolog") {
        2
    } else if first.starts_with("fio version 3 iolog") {
        3
    } else {
        return Err("iolog version 1 is no longer supported".into());
    };
    let mut r = Replay {
        names: Vec::new(),
        script: Arc::new(Script::default()),
        bytes: 0,
        extents: Vec::new(),
        max_len: [0; 3],
        syncs: false,
        datasyncs: false,
    };
    let mut entries = Vec::new();
    let mut last_ttime = 0u64;
    for (i, line) in lines {
        let n = i + 1;
        let bad = |why: &str| format!("line {n} ({line:?}): {why}");
        let mut f = line.split_whitespace();
        let mut wait = Wait::None;
        if version == 3 {
            let Some(t) = f.next() else {
                continue;
            };
            let t: u64 = t.parse().map_err(|_| bad("no time stamp"))?;
            // fio's delay_since_ttime: nothing to wait for on the first line, after a line
            // stamped 0, or before a line stamped earlier than the one above it.
            if last_ttime != 0 && !o.no_stall && t >= last_ttime {
                let gap = t - last_ttime;
                let us = if o.time_scale == 100 {
                    gap
                } else {
                    (gap as f64 * 100.0 / o.time_scale.max(1) as f64) as u64
                };
                wait = Wait::AfterLast(us);
            }
            last_ttime = t;
        }
        let fields: Vec<&str> = f.collect();
        if fields.is_empty() && version == 2 {
            continue;
        }
        let name = match &o.redirect {
            Some(r) => r.as_str(),
            None => fields.first().copied().ok_or_else(|| bad("no file name"))?,
        };
        match fields.as_slice() {
            [_, act] => {
                let file = match *act {
                    "add" => {
                        if !r.names.iter().any(|x| x == name) {
                            r.names.push(name.to_string());
                            r.extents.push(0);
                        }
                        // Nothing to do but the wait.
                        if wait != Wait::None {
                            entries.push(wait_only(wait));
                        }
                        continue;
                    }
                    "open" | "close" => {
                        file_no(&r.names, name).ok_or_else(|| bad("a file the log never added"))?
                    }
                    other => return Err(bad(&format!("unknown file action '{other}'"))),
                };
                let action = if fields[1] == "open" {
                    Action::Open
                } else {
                    Action::Wait
                };
                if action == Action::Open || wait != Wait::None {
                    entries.push(Entry {
                        action,
                        file,
                        offset: 0,
                        len: 0,
                        wait,
                    });
                }
            }
            [_, act, off, len] => {
                let off: u64 = off.parse().map_err(|_| bad("a bad offset"))?;
                let len: u32 = len.parse().map_err(|_| bad("a bad length"))?;
                if *act == "wait" {
                    if version == 3 {
                        return Err(bad("'wait' is not allowed in a version 3 iolog"));
                    }
                    if !o.no_stall {
                        // fio 3.33 takes the offset field as the milliseconds to wait
                        // for since the start.
                        entries.push(wait_only(Wait::SinceStart(off.saturating_mul(1000))));
                    }
                    continue;
                }
                let action = match *act {
                    "read" => Action::Read,
                    "write" => Action::Write,
                    "trim" => Action::Trim,
                    "sync" => {
                        r.syncs = true;
                        Action::Sync
                    }
                    "datasync" => {
                        r.datasyncs = true;
                        Action::Sync
                    }
                    other => return Err(bad(&format!("unknown action '{other}'"))),
                };
                let file =
                    file_no(&r.names, name).ok_or_else(|| bad("a file the log never added"))?;
                let mut offset = off.checked_div(o.scale).unwrap_or(off);
                if o.align > 0 {
                    offset &= !(o.align - 1);
                }
                let dir = match action {
                    Action::Read => Some(0),
                    Action::Write => Some(1),
                    Action::Trim => Some(2),
                    _ => None,
                };
                if let Some(d) = dir {
                    if len == 0 {
                        return Err(bad("a request of no bytes"));
                    }
                    r.max_len[d] = r.max_len[d].max(len as u64);
                    r.bytes += len as u64;
                    let end = offset + len as u64;
                    let x = &mut r.extents[file as usize];
                    *x = (*x).max(end);
                }
                entries.push(Entry {
                    action,
                    file,
                    offset,
                    len,
                    wait,
                });
            }
            _ => return Err(bad("not an iolog line")),
        }
    }
    if r.bytes == 0 {
        return Err("no read, write or trim to replay".into());
    }
    r.script = Arc::new(Script { entries });
    Ok(r)
}

fn wait_only(wait: Wait) -> Entry {
    Entry {
        action: Action::Wait,
        file: 0,
        offset: 0,
        len: 0,
        wait,
    }
}

fn file_no(names: &[String], name: &str) -> Option<u32> {
    names.iter().position(|n| n == name).map(|i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(r: &Replay) -> Vec<(Action, u32, u64, Wait)> {
        r.script
            .entries
            .iter()
            .map(|e| (e.action, e.file, e.offset, e.wait))
            .collect()
    }

    fn opts() -> ReplayOptions {
        ReplayOptions {
            time_scale: 100,
            ..Default::default()
        }
    }

    #[test]
    fn a_version_3_log_becomes_its_requests_with_their_gaps() {
        let log = "fio version 3 iolog\n10 f1 add\n12 f2 add\n100 f1 open\n150 f1 read 8192 4096\n\
                   400 f2 write 0 16384\n410 f2 sync 0 0\n500 f1 close\n";
        let r = parse(log, &opts()).unwrap();
        assert_eq!(r.names, ["f1", "f2"]);
        assert_eq!(r.bytes, 4096 + 16384);
        assert_eq!(r.extents, [12288, 16384]);
        assert_eq!(r.max_len, [4096, 16384, 0]);
        let got = steps(&r);
        assert_eq!(
            got,
            [
                (Action::Wait, 0, 0, Wait::AfterLast(2)),
                (Action::Open, 0, 0, Wait::AfterLast(88)),
                (Action::Read, 0, 8192, Wait::AfterLast(50)),
                (Action::Write, 1, 0, Wait::AfterLast(250)),
                (Action::Sync, 1, 0, Wait::AfterLast(10)),
                (Action::Wait, 0, 0, Wait::AfterLast(90)),
            ]
        );
        // No stall: no waits at all; half the pace: twice the gaps.
        let fast = parse(
            log,
            &ReplayOptions {
                no_stall: true,
                ..opts()
            },
        )
        .unwrap();
        assert!(fast.script.entries.iter().all(|e| e.wait == Wait::None));
        let slow = parse(
            log,
            &ReplayOptions {
                time_scale: 50,
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(slow.script.entries[2].wait, Wait::AfterLast(100));
    }

    #[test]
    fn scale_align_and_redirect_move_the_requests() {
        let log = "fio version 2 iolog\na add\nb add\na read 12288 4096\nb write 40960 4096\nx wait 5 0\n";
        let o = ReplayOptions {
            redirect: Some("dev".into()),
            scale: 2,
            align: 4096,
            ..opts()
        };
        let r = parse(log, &o).unwrap();
        assert_eq!(r.names, ["dev"]);
        let got = steps(&r);
        assert_eq!(
            got,
            [
                (Action::Read, 0, 4096, Wait::None),
                (Action::Write, 0, 20480, Wait::None),
                (Action::Wait, 0, 0, Wait::SinceStart(5000)),
            ]
        );
    }

    #[test]
    fn what_cannot_be_replayed_is_named() {
        let e = |log: &str| parse(log, &opts()).unwrap_err();
        assert_eq!(
            e("1 f read 0 4096\n"),
            "iolog version 1 is no longer supported"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f read 0 4096\n"),
            "line 2 (\"1 f read 0 4096\"): a file the log never added"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n2 f scribble 0 4096\n"),
            "line 3 (\"2 f scribble 0 4096\"): unknown action 'scribble'"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n2 f read 0\n"),
            "line 3 (\"2 f read 0\"): not an iolog line"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n"),
            "no read, write or trim to replay"
        );
    }
}
