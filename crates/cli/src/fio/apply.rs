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
/// against what `set` already holds.
pub(super) fn apply(
    set: &[Setting],
    key: &str,
    value: Option<&str>,
    engine: Option<&str>,
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
    if !opt.supported {
        return Err(Refusal::NotSupported(opt));
    }
    Ok(Setting {
        name: opt.name,
        value: value.map(str::to_string),
    })
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
