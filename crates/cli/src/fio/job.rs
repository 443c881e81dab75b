//! What parsing produces: the jobs in creation order, each with its options as fio would
//! apply them, and typed getters that read a value (or fio's default) through the grammar.

use super::options::{self, Opt};
use super::values::{self, KbBase, ValueError};

/// One option as given: its canonical name and the raw value after `${VAR}` substitution
/// (None when given bare).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub value: Option<String>,
    /// The kb_base in force when fio parsed the value: fio turns a size into bytes as it
    /// applies the option, so a later kb_base does not change it.
    pub kb: KbBase,
}

/// Where a job was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    CommandLine,
    /// A job file (`-` is stdin) and its position on the command line (0 = first).
    File {
        path: String,
        index: usize,
    },
}

/// One job section (or `--name`), before numjobs expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedJob {
    pub name: String,
    pub origin: Origin,
    /// fio's group id (§2.1).
    pub group: u32,
    /// The first job of a job file after the first: fio gives it a stonewall.
    pub implicit_stonewall: bool,
    /// The global set as the job copied it, then the job's own options, in the order fio
    /// applies them. A later setting of the same option wins.
    pub options: Vec<Setting>,
    /// How many of `options` are the job's own (they are the last ones).
    pub own: usize,
}

/// The error of a typed getter: the option and its value, and why it is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fio: failed parsing {name}={value}: {reason}")]
pub struct OptError {
    pub name: String,
    pub value: String,
    pub reason: ValueError,
}

impl ParsedJob {
    /// The job's own options for fio's JSON `job options`: canonical names, values as given;
    /// bare options are left out (command-line jobs start with `name`).
    pub fn job_options(&self) -> Vec<(&str, &str)> {
        self.options[self.options.len() - self.own..]
            .iter()
            .filter_map(|s| s.value.as_deref().map(|v| (s.name, v)))
            .collect()
    }

    /// The job's name as fio reports it and as `wait_for` finds it: a job file section's own
    /// `name=` (one in `[global]` is overridden by each section's name), else the section's
    /// or `--name`'s name. Its files keep the section's name.
    pub fn fio_name(&self) -> &str {
        self.options[self.options.len() - self.own..]
            .iter()
            .rev()
            .find(|s| s.name == "name")
            .and_then(|s| s.value.as_deref())
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.name)
    }

    /// The last setting of an option: Some(None) when given bare, None when not set at all.
    pub fn raw(&self, name: &str) -> Option<Option<&str>> {
        self.options
            .iter()
            .rev()
            .find(|s| s.name == name)
            .map(|s| s.value.as_deref())
    }

    /// The kb_base `name`'s value is read with (see [`Setting::kb`]). fio parses its
    /// defaults before any kb_base is applied, so an unset option reads as kb_base=1024.
    pub fn kb_of(&self, name: &str) -> KbBase {
        self.options
            .iter()
            .rev()
            .find(|s| s.name == name)
            .map_or(KbBase::K1024, |s| s.kb)
    }

    /// The option's text, or fio's default; None when neither exists.
    pub fn value(&self, name: &str) -> Option<&str> {
        match self.raw(name) {
            Some(v) => v,
            None => opt(name).and_then(|o| o.default),
        }
    }

    fn parse<'s, T>(
        &'s self,
        name: &str,
        f: impl FnOnce(&'s str) -> Result<T, ValueError>,
    ) -> Result<Option<T>, OptError> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        f(v).map(Some).map_err(|reason| OptError {
            name: name.to_string(),
            value: v.to_string(),
            reason,
        })
    }

    /// A bool or set option (direct, time_based...): false when unset and no default.
    pub fn flag(&self, name: &str) -> Result<bool, OptError> {
        let bare_ok = opt(name).is_some_and(Opt::may_be_bare);
        match self.raw(name) {
            Some(None) if bare_ok => Ok(true),
            Some(None) => Err(OptError {
                name: name.to_string(),
                value: String::new(),
                reason: ValueError::Empty,
            }),
            _ => Ok(self
                .parse(name, |v| values::parse_set(Some(values::first_field(v))))?
                .unwrap_or(false)),
        }
    }

    /// stonewall as fio applies it: the option, or the implicit one of a later job file.
    pub fn stonewall(&self) -> Result<bool, OptError> {
        Ok(self.implicit_stonewall || self.flag("stonewall")?)
    }
}

fn opt(name: &str) -> Option<&'static Opt> {
    options::find(name).or_else(|| options::find_any_engine_option(name))
}

/// Group ids as fio assigns them (§2.1): a job with stonewall or new_group opens a new group
/// when the current one already has a job.
pub fn assign_groups(jobs: &mut [ParsedJob]) -> Result<(), OptError> {
    let mut group = 0;
    let mut in_group = 0;
    for job in jobs {
        if (job.stonewall()? || job.flag("new_group")?) && in_group > 0 {
            group += 1;
            in_group = 0;
        }
        job.group = group;
        in_group += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(opts: &[(&'static str, Option<&str>)], own: usize) -> ParsedJob {
        ParsedJob {
            name: "j".into(),
            origin: Origin::CommandLine,
            group: 0,
            implicit_stonewall: false,
            options: opts
                .iter()
                .map(|(n, v)| Setting {
                    name: n,
                    value: v.map(str::to_string),
                    kb: KbBase::K1024,
                })
                .collect(),
            own,
        }
    }

    #[test]
    fn groups() {
        let mk = |opts: &[(&'static str, Option<&str>)]| job(opts, opts.len());
        // §2.1: a, b new_group, c, d stonewall, e, f.
        let mut jobs = vec![
            mk(&[("stonewall", None)]),
            mk(&[("new_group", None)]),
            mk(&[]),
            mk(&[("stonewall", None)]),
            mk(&[]),
            mk(&[("stonewall", Some("0"))]),
        ];
        assign_groups(&mut jobs).unwrap();
        let g: Vec<u32> = jobs.iter().map(|j| j.group).collect();
        assert_eq!(g, vec![0, 1, 1, 2, 2, 2]);
        let mut jobs = vec![mk(&[]), mk(&[])];
        jobs[1].implicit_stonewall = true;
        assign_groups(&mut jobs).unwrap();
        assert_eq!(jobs[1].group, 1);
    }
}
