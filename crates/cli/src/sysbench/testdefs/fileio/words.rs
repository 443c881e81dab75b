//! sysbench's words for plumb-fileio's settings and errors: option names, notes about
//! options without effect, the extra-flags list, sizes as sysbench prints them.

use plumb_core::size::format_sysbench;
use plumb_fileio::setting::Setting;
use plumb_fileio::spec::{FileioSpec, FsyncMode, OpenFlags, SpecError};
use plumb_fileio::FileioError;

use super::modes::{IoMode, TestMode, TEST_MODES};
use plumb_pipeline::JobError;

use crate::exit::UsageError;
use crate::sysbench::options::Values;

/// `--file-extra-flags`: any combination (sysbench 1.0 refuses some with "Unknown extra
/// flags value"; plumb takes any). Err: the first word that is not a flag.
pub(super) fn parse_extra_flags<S: AsRef<str>>(items: &[S]) -> Result<OpenFlags, String> {
    let mut f = OpenFlags::default();
    for i in items {
        match i.as_ref() {
            "sync" => f.sync = true,
            "dsync" => f.dsync = true,
            "direct" => f.direct = true,
            other => return Err(other.to_string()),
        }
    }
    Ok(f)
}

/// Notes about options given that have no effect with this test mode and I/O mode
/// (accepted so sysbench recipes run unchanged, but said out loud).
pub(super) fn notes(
    v: &Values,
    mode: TestMode,
    io_mode: IoMode,
    fsync_mode: FsyncMode,
) -> Vec<String> {
    let mut notes = Vec::new();
    if io_mode == IoMode::Mmap && fsync_mode == FsyncMode::Fdatasync {
        notes.push(
            "--file-fsync-mode=fdatasync has no effect with --file-io-mode=mmap: files are synced with msync()".into(),
        );
    }
    if !mode.writes() {
        for opt in ["file-fsync-freq", "file-fsync-all"] {
            if v.given(opt) {
                notes.push(format!(
                    "--{opt} has no effect in {} mode: it writes nothing",
                    mode.name()
                ));
            }
        }
    }
    if mode != TestMode::RndRw && v.given("file-rw-ratio") {
        notes.push(format!(
            "--file-rw-ratio only applies to rndrw; it has no effect in {} mode",
            mode.name()
        ));
    }
    if !mode.is_sequential() && v.given("file-merged-requests") {
        notes.push(format!(
            "--file-merged-requests only applies to sequential modes; it has no effect in {} mode",
            mode.name()
        ));
    }
    if io_mode != IoMode::Async && v.given("file-async-backlog") {
        notes.push(format!(
            "--file-async-backlog only applies to --file-io-mode=async; it has no effect with {}",
            io_mode.name()
        ));
    }
    notes
}

/// A setting as sysbench's fileio options name it.
pub(super) fn spell(s: Setting) -> String {
    match s {
        Setting::Dir => "--file-dir",
        Setting::FileCount => "--file-num",
        Setting::TotalSize => "--file-total-size",
        Setting::BlockSize => "--file-block-size",
        Setting::MergedRequests => "--file-merged-requests",
        Setting::Access => "--file-test-mode",
        Setting::Engine => "--file-io-mode",
        Setting::QueueDepth => "--file-async-backlog",
        Setting::Threads => "--threads",
        Setting::OpenFlags => "--file-extra-flags",
        Setting::Direct => "--file-extra-flags=direct",
        Setting::ZeroFill => "--file-fill=zero",
        Setting::Validate => "--validate",
    }
    .to_string()
}

/// A settings error in sysbench's terms.
pub(super) fn usage(e: &SpecError) -> UsageError {
    UsageError(match e {
        SpecError::NoAccess => format!(
            "missing required option --file-test-mode for 'run' (allowed: {})",
            TEST_MODES.join(", ")
        ),
        other => other.describe(&spell),
    })
}

/// A job's error in sysbench's terms: settings errors are usage errors (exit 2) spelled
/// with sysbench's option names, a missing file set says how to prepare it.
pub(super) fn job_error(spec: &FileioSpec, dropin: Option<u64>, e: JobError) -> JobError {
    let JobError::Failed(b) = e else {
        return e;
    };
    let e = match b.downcast::<FileioError>() {
        Ok(e) => *e,
        Err(other) => return JobError::Failed(other),
    };
    match e {
        FileioError::Spec(s) => JobError::Usage(usage(&s).0),
        FileioError::Interrupted(sig) => JobError::Interrupted(sig),
        FileioError::NotPrepared(what) => match dropin.and_then(|v| unfit_file(spec, v)) {
            Some(words) => JobError::failed(words),
            None => JobError::failed(format!(
                "{}: run 'plumb fileio --file-num={} --file-total-size={} prepare'{} first",
                what.describe(&spell),
                spec.num_files,
                spec.total_size,
                if spec.dir == std::path::Path::new(".") {
                    String::new()
                } else {
                    format!(" --file-dir={}", spec.dir.display())
                }
            )),
        },
        e @ (FileioError::Direct(_) | FileioError::Settings(_) | FileioError::Foreign { .. }) => {
            JobError::failed(e.describe(&spell))
        }
        other => JobError::failed(other),
    }
}

/// sysbench's words (under the drop-in name, at `verbosity`) for the first of the set's
/// files it would refuse: sysbench opens them in order and stops at the first that is
/// missing or smaller than the set needs; its warning is a level-2 message, and at its
/// debug level (5) each file's "Opening file" line comes first. None when every file is
/// there and large enough (plumb refused the set for a reason sysbench has not).
fn unfit_file(spec: &FileioSpec, verbosity: u64) -> Option<String> {
    let refusal = first_unfit_file(spec, verbosity)?;
    let (i, words) = refusal;
    let opened: String = (0..=i)
        .filter(|_| verbosity >= 5)
        .map(|j| {
            format!(
                "DEBUG: Opening file: {}\n",
                plumb_fileio::fileset::file_name(j)
            )
        })
        .collect();
    Some(format!("{opened}{words}"))
}

/// The first file sysbench would refuse, with its words.
fn first_unfit_file(spec: &FileioSpec, verbosity: u64) -> Option<(u32, String)> {
    let warn = |w: &str| {
        if verbosity >= 2 {
            format!("\nWARNING: {w}")
        } else {
            String::new()
        }
    };
    let need = spec.file_size();
    (0..spec.num_files).find_map(|i| {
        let name = plumb_fileio::fileset::file_name(i);
        let words =
            match std::fs::metadata(spec.dir.join(&name)) {
                Err(_) => Some(format!(
                    "Cannot open file '{name}' errno = 2 (No such file or directory){}",
                    warn("Did you forget to run the prepare step?")
                )),
                Ok(m) if m.len() < need => Some(format!(
                "Size of file '{name}' is {}, but at least {} is expected.{}",
                format_sysbench(m.len()),
                format_sysbench(need),
                warn("Did you run 'prepare' with different --file-total-size or --file-num values?")
            )),
                Ok(_) => None,
            };
        words.map(|w| (i, w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_flags_combine() {
        let f = parse_extra_flags(&["direct", "sync"]).unwrap();
        assert!(f.direct && f.sync && !f.dsync);
        assert_eq!(parse_extra_flags(&["bogus"]).unwrap_err(), "bogus");
    }
}
