//! sysbench's words for plumb-fileio's settings and errors: option names, notes about
//! options without effect, the extra-flags list, sizes as sysbench prints them.

use plumb_fileio::setting::Setting;
use plumb_fileio::spec::{FileioSpec, FsyncMode, OpenFlags, SpecError};
use plumb_fileio::FileioError;

use super::modes::{IoMode, TestMode, TEST_MODES};
use crate::exit::{Interrupted, UsageError};
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

/// The flags as sysbench prints them after "Extra file open flags:".
pub(super) fn extra_flags_words(f: OpenFlags) -> String {
    if !f.any() {
        return "(none)".into();
    }
    f.names()
        .iter()
        .map(|n| if *n == "direct" { "directio" } else { n })
        .collect::<Vec<_>>()
        .join(" ")
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

/// A fileio error as the CLI reports it, in sysbench's option names: usage errors exit 2,
/// a signal 128+n, the rest 1.
pub(super) fn cli_error(spec: &FileioSpec, e: FileioError) -> anyhow::Error {
    match e {
        FileioError::Spec(s) => usage(&s).into(),
        FileioError::Interrupted(sig) => Interrupted(sig).into(),
        FileioError::NotPrepared(what) => anyhow::anyhow!(
            "{}: run 'plumb fileio --file-num={} --file-total-size={} prepare'{} first",
            what.describe(&spell),
            spec.num_files,
            spec.total_size,
            if spec.dir == std::path::Path::new(".") {
                String::new()
            } else {
                format!(" --file-dir={}", spec.dir.display())
            }
        ),
        e @ (FileioError::Direct(_) | FileioError::Settings(_) | FileioError::Foreign { .. }) => {
            anyhow::anyhow!(e.describe(&spell))
        }
        other => anyhow::Error::new(other),
    }
}

/// "16MiB", "1.5GiB", as sysbench's sb_print_value_size (%.5g and a binary unit) + "B".
pub(super) fn sb_size(bytes: u64) -> String {
    let mut v = bytes as f64;
    let mut unit = "";
    for u in ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    let int_digits = if v >= 1.0 {
        (v.log10().floor() as i32 + 1).max(1)
    } else {
        1
    };
    let decimals = (5 - int_digits).max(0) as usize;
    let mut s = format!("{v:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{s}{unit}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_flags_combine_and_print_like_sysbench() {
        let f = parse_extra_flags(&["direct", "sync"]).unwrap();
        assert_eq!(extra_flags_words(f), "sync directio");
        assert_eq!(extra_flags_words(OpenFlags::default()), "(none)");
        assert_eq!(parse_extra_flags(&["bogus"]).unwrap_err(), "bogus");
    }

    #[test]
    fn sizes_print_like_sysbench() {
        assert_eq!(sb_size(16 << 20), "16MiB");
        assert_eq!(sb_size(64 << 20), "64MiB");
        assert_eq!(sb_size(16384), "16KiB");
        assert_eq!(sb_size(3 << 29), "1.5GiB");
        assert_eq!(sb_size(1000000), "976.56KiB");
        assert_eq!(sb_size(512), "512B");
    }
}
