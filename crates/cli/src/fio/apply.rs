//! Applying one option to a job's option set: look the name up, check the value with fio's
//! grammar, refuse what plumb does not support yet. Shared by job files and the command line,
//! which differ only in how they word the errors.

use super::error::FioError;
use super::help;
use super::job::Setting;
use super::options::{self, Opt};
use super::values::{KbBase, ValueError};

/// Why an option could not be applied.
pub(super) enum Refusal {
    /// Not a main option, nor an option of the job's engine.
    Unknown,
    /// fio would fail to parse it: `note` is a line fio prints first (the option's own
    /// check, or a range), `listed` whether fio then lists the valid values.
    Bad {
        opt: &'static Opt,
        bare: bool,
        note: Option<String>,
        listed: bool,
    },
    /// Known to fio, not to plumb yet.
    NotSupported(&'static Opt),
    /// A `directory` name that is not a directory (fio checks as it parses the option):
    /// the name, and lstat's errno when it failed (fio then records a job error).
    NotADirectory { dir: String, errno: Option<i32> },
}

/// The engine the options so far select, if one was given.
pub(super) fn engine(set: &[Setting]) -> Option<&str> {
    set.iter()
        .rev()
        .find(|s| s.name == "ioengine")
        .and_then(|s| s.value.as_deref())
}

fn kb_base(set: &[Setting]) -> KbBase {
    match set
        .iter()
        .rev()
        .find(|s| s.name == "kb_base")
        .and_then(|s| s.value.as_deref())
    {
        Some("1000") => KbBase::K1000,
        _ => KbBase::K1024,
    }
}

/// Looks `key` up (a main option, or with `engine` one of its options) and checks `value`
/// against what `set` already holds. `dry_run` (fio's --parse-only and --showcmd) skips
/// the checks that look at the file system.
pub(super) fn apply(
    set: &[Setting],
    key: &str,
    value: Option<&str>,
    engine: Option<&str>,
    dry_run: bool,
) -> Result<Setting, Refusal> {
    let opt = options::find(key)
        .or_else(|| engine.and_then(|e| options::find_engine_option(key, e)))
        .ok_or(Refusal::Unknown)?;
    let kb = kb_base(set);
    if let Err(e) = opt.check(value, kb) {
        // An option's own check speaks for the word (one of the valid ones): no list then.
        let (note, listed) = match e {
            ValueError::Callback(said) => (Some(said), false),
            _ => (value.and_then(|v| opt.range_note(v, kb)), true),
        };
        return Err(Refusal::Bad {
            opt,
            bare: value.is_none(),
            note,
            listed,
        });
    }
    if let (Some(v), true) = (value, opt.is_rwt()) {
        // fio takes an r,w,t list when one field is good, but still says why each of the
        // others failed, as it parses (on stderr, before anything else).
        if let Some(notes) = opt.range_note(v, kb) {
            eprintln!("{notes}");
        }
    }
    if !opt.supported {
        return Err(Refusal::NotSupported(opt));
    }
    if let (Some(v), "directory", false) = (value, opt.name, dry_run) {
        check_directory(v)?;
    }
    Ok(Setting {
        name: opt.name,
        value: value.map(str::to_string),
        kb,
    })
}

/// fio's str_directory_cb: every name of the `:` list must exist and be a directory
/// itself. It uses lstat, so a symbolic link to a directory is refused too; and it creates
/// nothing (only the directories on the way to a `filename` are created).
fn check_directory(value: &str) -> Result<(), Refusal> {
    for dir in colon_list(value) {
        let errno = match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => continue,
            Ok(_) => None,
            Err(e) => Some(e.raw_os_error().unwrap_or(libc::EIO)),
        };
        return Err(Refusal::NotADirectory { dir, errno });
    }
    Ok(())
}

/// The names of a `:` list as fio's get_next_str takes them apart: `\:` is a colon, colons
/// in front of a name are skipped, but a list ending in two colons (`a::`) still yields an
/// empty last name.
fn colon_list(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = Some(v);
    while let Some(s) = rest.filter(|s| !s.is_empty()) {
        let s = s.trim_start_matches(':');
        let mut name = String::new();
        rest = None;
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' if chars.peek().is_some_and(|(_, n)| *n == ':') => {
                    name.push(':');
                    chars.next();
                }
                ':' => {
                    rest = Some(&s[i + 1..]);
                    break;
                }
                c => name.push(c),
            }
        }
        out.push(name);
    }
    out
}

/// The error for a `directory` that is not one: fio's line naming it, then `failed parsing`
/// with `text` (as typed); in a job (not the global set) a failed lstat also leaves a job
/// error, which fio prints on stdout as it drops the job.
pub(super) fn not_a_directory(
    dir: &str,
    errno: Option<i32>,
    text: &str,
    in_job: bool,
    job: Option<&str>,
) -> FioError {
    FioError::FailedParsing {
        text: text.to_string(),
        note: Some(format!("fio: {dir} is not a directory")),
        values: errno.filter(|_| in_job).map(|e| {
            format!(
                "fio: file:options.c:1457, func=lstat, error={}\n",
                plumb_fileio::error::errno_text(e)
            )
        }),
        job: job.map(str::to_string),
    }
}

/// The error for a value fio fails to parse; `text` is what fio echoes, `note` a line fio
/// prints first, `listed` whether the valid values follow.
pub(super) fn bad_value(
    opt: &Opt,
    bare: bool,
    note: Option<String>,
    listed: bool,
    text: &str,
    job: Option<&str>,
) -> FioError {
    FioError::FailedParsing {
        text: text.to_string(),
        // Enum options go through the word list first, so fio skips this line for them.
        note: note.or_else(|| {
            (bare && opt.kind != options::Kind::Str)
                .then(|| format!("Option {} requires an argument", opt.name))
        }),
        values: (listed && !opt.values.is_empty() && !matches!(opt.kind, options::Kind::StrStore))
            .then(|| help::valid_values(opt)),
        job: job.map(str::to_string),
    }
}

pub(super) fn not_supported(opt: &Opt, value: Option<&str>) -> FioError {
    FioError::NotSupported {
        name: opt.name.to_string(),
        value: value.unwrap_or("").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::colon_list;

    #[test]
    fn colon_lists_split_as_fio_splits_them() {
        let cases: &[(&str, &[&str])] = &[
            ("a:b", &["a", "b"]),
            ("a::b", &["a", "b"]),
            (":a", &["a"]),
            ("a:", &["a"]),
            ("a::", &["a", ""]),
            ("::", &[""]),
            ("", &[]),
            ("a\\:b:c", &["a:b", "c"]),
        ];
        for (v, want) in cases {
            assert_eq!(colon_list(v), *want, "{v}");
        }
    }
}
