//! fio 3.33's words for a job that fills the disk (ENOSPC, EDQUOT), measured on a full tmpfs:
//!
//! - while the files are laid out (a job that reads, whose file is written in full first):
//!   `fio: ENOSPC on laying out file, stopping` on stdout, `fio: pid=0, err=28/file:filesetup.c:240,
//!   func=write, error=No space left on device` on stderr; the job does not run and prints no
//!   block (JSON lists it with `"error" : 28`). Any other failed layout write gets the
//!   stderr line without the notice.
//! - while it runs (a pure writer: fio's `fallocate` failure is silent): one line per failed
//!   request on stderr, `fio: io_u error on file <name>: No space left on device: write
//!   offset=<o>, buflen=<n>` (libaio at iodepth=4: four), `fio: pid=<pid>, err=28/file:io_u.c:1876,
//!   func=io_u error, error=No space left on device` on stdout, and the job's block says
//!   `err=28 (file:io_u.c:1876, func=io_u error, error=No space left on device)`. Under
//!   fill_device only the stderr lines: the job ends cleanly.
//!
//! Either way the other jobs run and are reported, and the exit status counts the failed jobs.
//! A job below its minimum rate fails the same way, in its own words ([`super::min_rate`]).

use plumb_fileio::engine::Dir;
use plumb_fileio::error::{errno_text, FailedRequest};
use plumb_pipeline::JobRecord;
use plumb_report::fio::job::{FioFailure, FioJobInfo};

/// fio's words for a job's run: its failure, when it `failed`, and its stderr lines. Failed
/// requests (`full`: writes that found the disk full, and any request whose call failed)
/// get a line each, and are the failure unless the job ended cleanly (fill_device);
/// directions below their minimum rate (`short`) get a line each and are the failure (see
/// [`super::min_rate`]).
pub fn of_run(
    failed: bool,
    full: &[FailedRequest],
    short: &[plumb_fileio::min_rate::Miss],
    slow: &[plumb_fileio::max_latency::Exceeded],
    job: &str,
    names: &[String],
) -> (Option<FioFailure>, Vec<String>) {
    let mut said = io_u_lines(full, names);
    said.extend(super::min_rate::lines(job, short));
    said.extend(slow.iter().map(|e| super::max_latency::line(e, names)));
    let failure = match failed {
        false => None,
        true if !short.is_empty() => Some(super::min_rate::failure()),
        true if !slow.is_empty() => Some(super::max_latency::failure()),
        true => while_running(full),
    };
    (failure, said)
}

/// A write of the layout failed with `errno`.
pub fn in_layout(errno: i32) -> FioFailure {
    FioFailure {
        errno,
        verror: format!(
            "file:filesetup.c:240, func=write, error={}",
            errno_text(errno)
        ),
        in_layout: true,
    }
}

/// A layout call other than a write failed: `fallocate` (fio's `fallocate=keep`) or
/// `ftruncate` (`fallocate=truncate`), at the lines of filesetup.c that report them.
pub fn in_layout_call(call: &str, errno: i32) -> FioFailure {
    let line = if call == "fallocate" { 93 } else { 106 };
    FioFailure {
        errno,
        verror: format!(
            "file:filesetup.c:{line}, func={call}, error={}",
            errno_text(errno)
        ),
        in_layout: true,
    }
}

/// A missing file the job may not create (`allow_file_create=0`): fio says so in one line
/// on stderr and the job, which never starts, keeps error 0 (its exit status is still 1).
pub fn create_disallowed() -> (FioFailure, String) {
    (
        FioFailure {
            errno: 0,
            verror: String::new(),
            in_layout: true,
        },
        "fio: file creation disallowed by allow_file_create=0".to_string(),
    )
}

/// Requests failed while the job ran (writes found the disk full).
pub fn while_running(full: &[FailedRequest]) -> Option<FioFailure> {
    let first = full.first()?;
    Some(FioFailure {
        errno: first.errno,
        verror: format!(
            "file:io_u.c:1876, func=io_u error, error={}",
            errno_text(first.errno)
        ),
        in_layout: false,
    })
}

/// A request whose call failed, other than on a full disk: plumb's own line for it says
/// more than fio's (what trims a regular file), so plumb's name prints that one.
pub fn plumb_says_more(f: &FioFailure) -> bool {
    f.verror.contains("func=io_u error") && !plumb_fileio::error::is_full(f.errno)
}

/// fio's stderr line for each failed request; `names` are the job's files as fio spells
/// them (a request's `file` indexes them).
pub fn io_u_lines(full: &[FailedRequest], names: &[String]) -> Vec<String> {
    full.iter()
        .map(|w| {
            format!(
                "fio: io_u error on file {}: {}: {} offset={}, buflen={}",
                names.get(w.file as usize).unwrap_or(&w.path),
                errno_text(w.errno),
                match w.dir {
                    Dir::Read => "read",
                    Dir::Write => "write",
                    Dir::Trim => "trim",
                },
                w.offset,
                w.len
            )
        })
        .collect()
}

/// Keep fio's words in the job's fio facts, where the report and the exit lines find them.
pub fn record(job: &mut JobRecord, failure: Option<&FioFailure>, stderr: Vec<String>) {
    let Some(serde_json::Value::Object(m)) = &mut job.layout else {
        return;
    };
    if let Some(v) = failure.and_then(|f| serde_json::to_value(f).ok()) {
        m.insert("failure".into(), v);
    }
    if !stderr.is_empty() {
        m.insert("stderr".into(), stderr.into());
    }
}

/// The errors a job that counts them counted, in its fio facts.
pub fn record_errors(job: &mut JobRecord, total: u64, first: i32, words: String) {
    let Some(serde_json::Value::Object(m)) = &mut job.layout else {
        return;
    };
    let e = plumb_report::fio::job::FioErrors {
        total,
        first,
        words,
    };
    if let Ok(v) = serde_json::to_value(e) {
        m.insert("errors".into(), v);
    }
}

/// A job's fio facts, when the fio front end made it.
pub fn info(job: &JobRecord) -> Option<FioJobInfo> {
    serde_json::from_value(job.layout.clone()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_words_for_a_full_disk() {
        assert_eq!(
            in_layout(libc::ENOSPC).pid_line(0),
            "fio: pid=0, err=28/file:filesetup.c:240, func=write, error=No space left on device"
        );
        assert_eq!(
            in_layout(libc::EDQUOT).layout_notice(),
            Some("fio: EDQUOT on laying out file, stopping")
        );
        assert_eq!(in_layout(libc::EIO).layout_notice(), None);
        let w = |offset| FailedRequest {
            dir: Dir::Write,
            file: 0,
            path: "/abs/a.0.0".into(),
            offset,
            len: 4096,
            errno: libc::EDQUOT,
        };
        let full = [w(0), w(4096)];
        assert_eq!(
            while_running(&full).unwrap().pid_line(7),
            "fio: pid=7, err=122/file:io_u.c:1876, func=io_u error, error=Disk quota exceeded"
        );
        assert_eq!(
            io_u_lines(&full, &["d/a.0.0".into()]),
            [
                "fio: io_u error on file d/a.0.0: Disk quota exceeded: write offset=0, buflen=4096",
                "fio: io_u error on file d/a.0.0: Disk quota exceeded: write offset=4096, buflen=4096"
            ]
        );
        assert_eq!(
            io_u_lines(&full, &[])[0].split(':').nth(1),
            Some(" io_u error on file /abs/a.0.0")
        );
        assert!(while_running(&[]).is_none());
    }
}
