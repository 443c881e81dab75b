//! fio's command line (§1.2, §1.8), read as glibc's getopt_long_only reads it: `--opt=value`,
//! `-opt=value`, `--opt value` (an option that needs a value takes the next argument, whatever
//! it is), unique prefixes (`--runtim`), non-options anywhere are job files. Options before the
//! first `--name` (or after `--name=global...`) are global; `--name=X` starts a job. Engine
//! options are known only after `--ioengine=` selects their engine.

use super::apply::{self, Refusal};
use super::error::FioError;
use super::help;
use super::host::Host;
use super::job::{self, Origin, ParsedJob, Setting};
use super::jobfile::{self, FileContext};
use super::options;
use super::values::{parse_time_ns, TimeUnit, ValueError};

/// Output formats asked for (`--output-format` is a comma list; `--minimal` = terse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Formats {
    pub normal: bool,
    pub terse: bool,
    pub json: bool,
    pub json_plus: bool,
}

/// `--eta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Eta {
    #[default]
    Auto,
    Always,
    Never,
}

/// fio's own flags, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flags {
    pub output: Option<String>,
    pub formats: Formats,
    pub terse_version: u8,
    pub parse_only: bool,
    pub readonly: bool,
    pub warnings_fatal: bool,
    pub eta: Eta,
    /// `--eta-interval`: between redraws of the status line, ms.
    pub eta_interval_ms: u64,
    /// `--eta-newline`: start a new status line this often, ms.
    pub eta_newline_ms: Option<u64>,
    /// `--status-interval`: a full report of the figures so far this often, ms.
    pub status_interval_ms: Option<u64>,
    pub sections: Vec<String>,
}

impl Default for Flags {
    fn default() -> Flags {
        Flags {
            output: None,
            formats: Formats {
                normal: true,
                terse: false,
                json: false,
                json_plus: false,
            },
            terse_version: 3,
            parse_only: false,
            readonly: false,
            warnings_fatal: false,
            eta: Eta::Auto,
            eta_interval_ms: 1000,
            eta_newline_ms: None,
            status_interval_ms: None,
            sections: Vec::new(),
        }
    }
}

/// The jobs of a command line and its files.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub jobs: Vec<ParsedJob>,
    /// The global set at the end (the last file's), for JSON `global options` (bare ones
    /// left out there, as for job options).
    pub global_options: Vec<Setting>,
    pub flags: Flags,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Run(Parsed),
    /// Print this on stdout and exit 0 (`--help`, `--version`, `--showcmd`).
    Print(String),
    /// `--cmdhelp`: stdout, then stderr; exit 0.
    CmdHelp {
        stdout: String,
        stderr: String,
    },
}

impl Parsed {
    /// `global options` for JSON: canonical names, values as given, bare ones left out.
    pub fn global_options_json(&self) -> Vec<(&str, &str)> {
        self.global_options
            .iter()
            .filter_map(|s| s.value.as_deref().map(|v| (s.name, v)))
            .collect()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    Required,
    Optional,
}

/// fio's own flags: name and argument. Those plumb does not implement are refused by name.
const FLAGS: &[(&str, Arg)] = &[
    ("output", Arg::Required),
    ("latency-log", Arg::Required),
    ("bandwidth-log", Arg::None),
    ("minimal", Arg::None),
    ("output-format", Arg::Required),
    ("append-terse", Arg::Optional),
    ("version", Arg::None),
    ("help", Arg::None),
    ("cmdhelp", Arg::Optional),
    ("enghelp", Arg::Optional),
    ("showcmd", Arg::None),
    ("readonly", Arg::None),
    ("eta", Arg::Required),
    ("eta-interval", Arg::Required),
    ("eta-newline", Arg::Required),
    ("debug", Arg::Required),
    ("parse-only", Arg::None),
    ("section", Arg::Required),
    ("inflate-log", Arg::Required),
    ("alloc-size", Arg::Required),
    ("profile", Arg::Required),
    ("warnings-fatal", Arg::None),
    ("max-jobs", Arg::Required),
    ("terse-version", Arg::Required),
    ("server", Arg::Optional),
    ("daemonize", Arg::Required),
    ("client", Arg::Required),
    ("remote-config", Arg::Required),
    ("cpuclock-test", Arg::None),
    ("crctest", Arg::Optional),
    ("memcpytest", Arg::Optional),
    ("idle-prof", Arg::Required),
    ("status-interval", Arg::Required),
    ("trigger-file", Arg::Required),
    ("trigger-timeout", Arg::Required),
    ("trigger", Arg::Required),
    ("trigger-remote", Arg::Required),
    ("aux-path", Arg::Required),
    ("merge-blktrace-only", Arg::None),
];

/// Single-letter forms getopt accepts with one dash (`-v`).
const SHORT: &[(char, &str)] = &[
    ('v', "version"),
    ('h', "help"),
    ('m', "minimal"),
    ('s', "showcmd"),
    ('r', "readonly"),
    ('P', "parse-only"),
    ('w', "warnings-fatal"),
];

#[derive(Clone, Copy)]
enum Target {
    Flag(&'static str, Arg),
    Job(&'static options::Opt, &'static str),
}

/// The long options getopt knows at this point: the flags, every main option and alias, and
/// the options of the engine the current job has selected.
fn long_options(engine: Option<&str>) -> Vec<(&'static str, Target)> {
    let mut v: Vec<(&'static str, Target)> = FLAGS
        .iter()
        .map(|(n, a)| (*n, Target::Flag(n, *a)))
        .collect();
    let mains = options::main_options()
        .iter()
        .chain(options::profile_options());
    let engines = options::engine_options()
        .iter()
        .filter(|o| engine.is_some_and(|e| o.engines.contains(&e)));
    for o in mains.chain(engines) {
        v.push((o.name, Target::Job(o, o.name)));
        if let Some(a) = o.alias {
            v.push((a, Target::Job(o, a)));
        }
    }
    v
}

fn arg_of(t: Target) -> Arg {
    match t {
        Target::Flag(_, a) => a,
        Target::Job(o, _) if o.kind == options::Kind::StrSet => Arg::Optional,
        Target::Job(..) => Arg::Required,
    }
}

/// Parses `args` (without the program name). `prog` is argv[0] for the error texts.
pub fn parse(prog: &str, args: &[String], host: &Host) -> Result<Invocation, FioError> {
    let mut flags = Flags::default();
    let mut showcmd = false;
    let mut did_arg = false;
    let mut files: Vec<String> = Vec::new();
    let mut globals: Vec<Setting> = Vec::new();
    // The job being built from the command line: its name and own settings.
    let mut current: Option<(String, Vec<Setting>)> = None;
    let mut jobs: Vec<ParsedJob> = Vec::new();
    let mut skipping = false;

    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            files.extend(args[i..].iter().cloned());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            files.push(a.clone());
            continue;
        }
        let body = a.strip_prefix("--").unwrap_or(&a[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let set_now: Vec<Setting> = match &current {
            Some((_, own)) => globals.iter().chain(own).cloned().collect(),
            None => globals.clone(),
        };
        let engine = apply::engine(&set_now).map(str::to_string);
        let target = lookup(prog, a, name, engine.as_deref())?;
        let value: Option<String> = match (arg_of(target), inline) {
            (_, Some(v)) => Some(v.to_string()),
            (Arg::Required, None) => match args.get(i) {
                Some(next) => {
                    i += 1;
                    Some(next.clone())
                }
                None => {
                    return Err(FioError::MissingArgument {
                        prog: prog.to_string(),
                        arg: a.clone(),
                        suggestion: suggest(name, engine.as_deref()),
                    })
                }
            },
            _ => None,
        };
        if let (Target::Job(_, typed), Arg::Required, Some("")) =
            (target, arg_of(target), value.as_deref())
        {
            return Err(FioError::EmptyArgument(typed.to_string()));
        }
        match target {
            Target::Flag(flag, _) => {
                if let Some(out) = flag_action(flag, value.as_deref(), &mut flags, &mut did_arg)? {
                    return Ok(out);
                }
                showcmd |= flag == "showcmd";
            }
            Target::Job(opt, typed) => {
                if opt.name == "name" {
                    let v = value.clone().unwrap_or_default();
                    if let Some((n, own)) = current.take() {
                        jobs.push(cmdline_job(n, &globals, own));
                        did_arg = true;
                    }
                    skipping = false;
                    if v.starts_with("global") {
                        continue;
                    }
                    if !flags.sections.is_empty() && !flags.sections.contains(&v) {
                        // fio skips a filtered-out job; its options then land in the
                        // global set.
                        skipping = true;
                        continue;
                    }
                    current = Some((v.clone(), Vec::new()));
                }
                let set = match &current {
                    Some((_, own)) if !skipping => globals.iter().chain(own).cloned().collect(),
                    _ => globals.clone(),
                };
                let dry_run = showcmd || flags.parse_only;
                let applied =
                    apply::apply(&set, typed, value.as_deref(), engine.as_deref(), dry_run);
                let s = match applied {
                    Ok(s) => s,
                    Err(Refusal::NotADirectory { dir, errno }) => {
                        let text = format!("{typed}={}", value.as_deref().unwrap_or_default());
                        let in_job = current.is_some() && !skipping;
                        return Err(apply::not_a_directory(&dir, errno, &text, in_job, None));
                    }
                    Err(Refusal::Bad {
                        opt, note, listed, ..
                    }) => {
                        let text = format!("{typed}={}", value.as_deref().unwrap_or("(null)"));
                        return Err(apply::bad_value(opt, false, note, listed, &text, None));
                    }
                    Err(Refusal::NotSupported(opt)) => {
                        return Err(apply::not_supported(opt, value.as_deref()))
                    }
                    Err(Refusal::Unknown) => {
                        return Err(unrecognized(prog, a, name, engine.as_deref()))
                    }
                };
                match &mut current {
                    Some((_, own)) => own.push(s),
                    None => globals.push(s),
                }
            }
        }
    }
    if let Some((n, own)) = current.take() {
        jobs.push(cmdline_job(n, &globals, own));
    }

    if showcmd {
        let mut out = String::new();
        for (index, f) in files.iter().enumerate() {
            let mut g = if index == 0 {
                globals.clone()
            } else {
                Vec::new()
            };
            let mut ctx = FileContext {
                host,
                sections: &flags.sections,
                showcmd: Some(&mut out),
                parse_only: flags.parse_only,
            };
            jobfile::parse_file(f, index, &mut g, &mut ctx, &mut Vec::new())?;
        }
        return Ok(Invocation::Print(out));
    }
    for (index, f) in files.iter().enumerate() {
        if index > 0 {
            globals.clear();
        }
        let mut ctx = FileContext {
            host,
            sections: &flags.sections,
            showcmd: None,
            parse_only: flags.parse_only,
        };
        jobfile::parse_file(f, index, &mut globals, &mut ctx, &mut jobs)?;
    }
    if jobs.is_empty() && !did_arg && !flags.parse_only {
        return Err(FioError::NoJobs);
    }
    job::assign_groups(&mut jobs).map_err(|e| FioError::FailedParsing {
        text: format!("{}={}", e.name, e.value),
        note: None,
        values: None,
        job: None,
    })?;
    Ok(Invocation::Run(Parsed {
        jobs,
        global_options: globals,
        flags,
    }))
}

fn cmdline_job(name: String, globals: &[Setting], own: Vec<Setting>) -> ParsedJob {
    let mut options = globals.to_vec();
    let n = own.len();
    options.extend(own);
    ParsedJob {
        name,
        origin: Origin::CommandLine,
        group: 0,
        implicit_stonewall: false,
        options,
        own: n,
    }
}

/// Finds the long option `name` as getopt_long_only does: an exact name, else the one option
/// it is a prefix of (several are ambiguous), else a one-letter flag.
fn lookup(prog: &str, arg: &str, name: &str, engine: Option<&str>) -> Result<Target, FioError> {
    let all = long_options(engine);
    if let Some((_, t)) = all.iter().find(|(n, _)| *n == name) {
        return Ok(*t);
    }
    let single_dash = !arg.starts_with("--");
    if single_dash && name.chars().count() == 1 {
        if let Some((_, flag)) = SHORT.iter().find(|(c, _)| name.starts_with(*c)) {
            if let Some((_, t)) = all.iter().find(|(n, _)| n == flag) {
                return Ok(*t);
            }
        }
    }
    let prefixed: Vec<&(&str, Target)> = if name.is_empty() {
        Vec::new()
    } else {
        all.iter().filter(|(n, _)| n.starts_with(name)).collect()
    };
    match prefixed.as_slice() {
        [(_, t)] => Ok(*t),
        [] => Err(unrecognized(prog, arg, name, engine)),
        many => Err(FioError::Ambiguous {
            prog: prog.to_string(),
            arg: arg.to_string(),
            candidates: many.iter().map(|(n, _)| n.to_string()).collect(),
            suggestion: suggest(arg.trim_start_matches('-'), engine),
        }),
    }
}

fn unrecognized(prog: &str, arg: &str, name: &str, engine: Option<&str>) -> FioError {
    let _ = name;
    FioError::Unrecognized {
        prog: prog.to_string(),
        arg: arg.to_string(),
        suggestion: suggest(arg.trim_start_matches('-'), engine),
    }
}

/// fio measures the distance from the whole argument, dashes stripped, `=value` included.
fn suggest(typed: &str, engine: Option<&str>) -> Option<String> {
    let names = long_options(engine);
    options::closest(typed, names.iter().map(|(n, _)| *n)).map(str::to_string)
}

/// Applies one of fio's flags; Some(action) when it ends parsing there.
fn flag_action(
    flag: &str,
    value: Option<&str>,
    flags: &mut Flags,
    did_arg: &mut bool,
) -> Result<Option<Invocation>, FioError> {
    match flag {
        "output" => flags.output = value.map(str::to_string),
        "minimal" => {
            flags.formats = Formats {
                normal: false,
                terse: true,
                json: false,
                json_plus: false,
            }
        }
        "output-format" => flags.formats = output_formats(value.unwrap_or(""))?,
        "terse-version" => {
            flags.terse_version = match value.and_then(|v| v.trim().parse::<u8>().ok()) {
                Some(v @ 2..=5) => v,
                _ => return Err(FioError::TerseVersion),
            }
        }
        "parse-only" => {
            flags.parse_only = true;
            *did_arg = true;
        }
        "showcmd" => *did_arg = true,
        "version" => return Ok(Some(Invocation::Print("fio-3.33\n".into()))),
        "help" => return Ok(Some(Invocation::Print(help::usage("fio")))),
        "cmdhelp" => {
            let (stdout, stderr) = help::cmdhelp(value);
            return Ok(Some(Invocation::CmdHelp { stdout, stderr }));
        }
        // fio ignores a value other than always/never.
        "eta" => {
            flags.eta = match value {
                Some("always") => Eta::Always,
                Some("never") => Eta::Never,
                _ => flags.eta,
            }
        }
        // Both are times with seconds as the bare unit (fio's check_str_time).
        "eta-newline" => {
            let v = value.unwrap_or("");
            let ns = parse_time_ns(v, TimeUnit::Seconds)
                .map_err(|_| FioError::EtaNewlineParse(v.to_string()))?;
            match ns / 1_000_000 {
                0 => return Err(FioError::EtaNewlineShort),
                ms => flags.eta_newline_ms = Some(ms),
            }
        }
        "eta-interval" => {
            let v = value.unwrap_or("");
            let ns = parse_time_ns(v, TimeUnit::Seconds)
                .map_err(|_| FioError::EtaIntervalParse(v.to_string()))?;
            match ns / 1_000_000 {
                ms if ms < 250 => return Err(FioError::EtaIntervalShort),
                ms => flags.eta_interval_ms = ms,
            }
        }
        "status-interval" => flags.status_interval_ms = Some(status_interval(value.unwrap_or(""))?),
        "readonly" => flags.readonly = true,
        "warnings-fatal" => flags.warnings_fatal = true,
        // fio 3.33 takes any value and does nothing with it (its jobs no longer live in a
        // shared segment sized by it); its own test scripts pass --max-jobs=16.
        "max-jobs" => {}
        "section" => {
            let v = value.unwrap_or("");
            if v == "global" {
                return Err(FioError::GlobalSection);
            }
            flags.sections.push(v.to_string());
        }
        other => return Err(FioError::FlagNotSupported(other.to_string())),
    }
    Ok(None)
}

/// `--status-interval`'s milliseconds, as fio reads them: a time with seconds as the bare
/// unit, at least 1 ms (a negative one is too small as well).
fn status_interval(v: &str) -> Result<u64, FioError> {
    let t = v.trim_start();
    let parsed = if t.len() < v.len() {
        // strtoll skips leading blanks, fio's unit lookup does not: it finds no unit there
        // and takes seconds, so ` 500ms` is 500 s.
        leading_seconds(t)
            .map(|s| u64::try_from(s).unwrap_or(0).saturating_mul(1_000_000_000))
            .ok_or(())
    } else {
        match parse_time_ns(v, TimeUnit::Seconds) {
            Ok(ns) => Ok(ns),
            Err(ValueError::Negative(_)) => Ok(0),
            Err(_) => Err(()),
        }
    };
    match parsed {
        Ok(ns) if ns >= 1_000_000 => Ok(ns / 1_000_000),
        Ok(_) => Err(FioError::StatusIntervalShort),
        Err(()) => Err(FioError::StatusIntervalParse(v.to_string())),
    }
}

/// The decimal number a value starts with (a sign allowed), as strtoll reads it.
fn leading_seconds(t: &str) -> Option<i64> {
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let n: i64 = body[..end].parse().ok()?;
    Some(if neg { -n } else { n })
}

fn output_formats(list: &str) -> Result<Formats, FioError> {
    let mut f = Formats {
        normal: false,
        terse: false,
        json: false,
        json_plus: false,
    };
    for word in list.split(',') {
        match word {
            "minimal" | "terse" | "csv" => f.terse = true,
            "json" => f.json = true,
            "json+" => {
                f.json = true;
                f.json_plus = true;
            }
            "normal" => f.normal = true,
            _ => return Err(FioError::OutputFormat(word.to_string())),
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host::fixed(&[], 4096, 1000, 2)
    }

    fn run(args: &[&str]) -> Result<Invocation, FioError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse("fio", &args, &host())
    }

    fn jobs(args: &[&str]) -> Parsed {
        match run(args).unwrap() {
            Invocation::Run(p) => p,
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn globals_jobs_and_forms() {
        let p = jobs(&[
            "--bs=8k",
            "--name=a",
            "--size",
            "4k",
            "-name=b",
            "-rw=randread",
        ]);
        assert_eq!(p.jobs.len(), 2);
        assert_eq!(p.jobs[0].name, "a");
        assert_eq!(p.jobs[0].value("bs"), Some("8k"));
        assert_eq!(p.jobs[0].value("size"), Some("4k"));
        assert_eq!(p.jobs[1].value("size"), None);
        assert_eq!(p.jobs[1].value("rw"), Some("randread"));
        assert_eq!(p.jobs[0].job_options(), vec![("name", "a"), ("size", "4k")]);
        assert_eq!(p.global_options_json(), vec![("bs", "8k")]);
        assert_eq!(p.jobs[0].origin, Origin::CommandLine);
    }

    #[test]
    fn order_matters_on_the_command_line() {
        let p = jobs(&["--name=a", "--bs=4k", "--kb_base=1000"]);
        // Applied in the order given; the getter reads the final kb_base, as the lead's
        // translation will, so it is documented here rather than hidden.
        assert_eq!(
            p.jobs[0].options.iter().map(|s| s.name).collect::<Vec<_>>(),
            vec!["name", "bs", "kb_base"]
        );
    }

    #[test]
    fn unknown_options() {
        let e = run(&["--foo=1"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fio: unrecognized option '--foo=1'\nfio: unrecognized option '--foo=1'\nDid you mean loops?"
        );
        let e = run(&["--name=a", "--hipri=1", "--ioengine=io_uring"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fio: unrecognized option '--hipri=1'\nfio: unrecognized option '--hipri=1'\nDid you mean prio?"
        );
        let p = jobs(&["--name=a", "--ioengine=io_uring", "--hipri", "--size=4k"]);
        assert!(p.jobs[0].flag("hipri").unwrap());
        let e = run(&["--name=a", "--r=1"]).unwrap_err();
        assert!(matches!(e, FioError::Ambiguous { .. }));
        assert!(e
            .to_string()
            .ends_with("fio: unrecognized option '--r=1'\nDid you mean rw?"));
    }

    #[test]
    fn prefixes_and_short_flags() {
        let p = jobs(&["--name=a", "--runtim=1", "--group_rep"]);
        assert_eq!(p.jobs[0].value("runtime"), Some("1"));
        assert!(p.jobs[0].flag("group_reporting").unwrap());
        assert_eq!(
            run(&["-v"]).unwrap(),
            Invocation::Print("fio-3.33\n".into())
        );
    }

    #[test]
    fn a_value_swallows_the_next_argument() {
        let e = run(&["--name=a", "--direct", "--size=1M"]).unwrap_err();
        assert_eq!(e.to_string(), "fio: failed parsing direct=--size=1M");
        let e = run(&["--name=a", "--direct"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fio: option '--direct' requires an argument\nfio: unrecognized option '--direct'\nDid you mean direct?"
        );
        let e = run(&["--name=a", "--rw=readx"]).unwrap_err();
        assert_eq!(e.to_string(), "fio: failed parsing rw=readx");
        assert!(e.stdout().unwrap().contains("randtrimwrite"));
        let e = run(&["--name=a", "--direct=true"]).unwrap_err();
        assert_eq!(e.to_string(), "fio: failed parsing direct=true");
    }

    #[test]
    fn an_empty_value_stops_the_command_line() {
        // fio checks the empty value before parsing it and stops there: the later
        // `--direct --size=1M` is never read.
        let e = run(&["--name=a", "--bs=", "--direct", "--size=1M"]).unwrap_err();
        assert_eq!(e.to_string(), "fio: option bs requires an argument");
        let e = run(&["--name=a", "--blocksize", ""]).unwrap_err();
        assert_eq!(e.to_string(), "fio: option blocksize requires an argument");
        // A set-only option takes no value, so an empty one is its own parse error.
        let e = run(&["--name=a", "--thread="]).unwrap_err();
        assert_eq!(e.to_string(), "fio: failed parsing thread=");
    }

    #[test]
    fn flags() {
        let p = jobs(&[
            "--output-format=json,normal",
            "--output",
            "o.json",
            "--eta=never",
            "--readonly",
            "--name=a",
        ]);
        assert!(p.flags.formats.json && p.flags.formats.normal && !p.flags.formats.terse);
        assert_eq!(p.flags.output.as_deref(), Some("o.json"));
        assert_eq!(p.flags.eta, Eta::Never);
        assert!(p.flags.readonly);
        assert!(jobs(&["--minimal", "--name=a"]).flags.formats.terse);
        assert_eq!(
            run(&["--output-format=xml"]).unwrap_err().to_string(),
            "fio: invalid output format xml\nfio: failed parsing output-format"
        );
        assert_eq!(
            run(&["--terse-version=9"]).unwrap_err(),
            FioError::TerseVersion
        );
        assert_eq!(
            run(&["--section=global"]).unwrap_err(),
            FioError::GlobalSection
        );
        assert_eq!(
            run(&["--client=h"]).unwrap_err().to_string(),
            "plumb: fio flag '--client' is not supported yet"
        );
        assert!(matches!(
            run(&["--cmdhelp=bs"]).unwrap(),
            Invocation::CmdHelp { .. }
        ));
        assert!(matches!(run(&["--help"]).unwrap(), Invocation::Print(_)));
    }

    #[test]
    fn status_interval_reads_times_as_fio_does() {
        let ms = |v: &str| {
            let args = [format!("--status-interval={v}"), "--name=a".to_string()];
            match parse("fio", &args, &host()) {
                Ok(Invocation::Run(p)) => Ok(p.flags.status_interval_ms.unwrap()),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(ms("1"), Ok(1000));
        assert_eq!(ms("1.5"), Ok(1000));
        assert_eq!(ms("2s"), Ok(2000));
        assert_eq!(ms("1m"), Ok(60_000));
        assert_eq!(ms("1ms"), Ok(1));
        assert_eq!(ms("1000ms"), Ok(1000));
        assert_eq!(ms("+1"), Ok(1000));
        assert_eq!(ms(" 1"), Ok(1000));
        assert_eq!(ms(" 500ms"), Ok(500_000));
        let small = Err("fio: status interval too small".to_string());
        for v in [
            "0", "0.5", "999us", "-1", " -1", "10x", "1k", "1sec", "1e3", "0x10",
        ] {
            assert_eq!(ms(v), small, "{v}");
        }
        for v in ["abc", "", " ", " x"] {
            assert_eq!(ms(v), Err(format!("fio: failed parsing time {v}")), "{v:?}");
        }
        assert!(jobs(&["--name=a"]).flags.status_interval_ms.is_none());
    }

    #[test]
    fn no_jobs() {
        assert_eq!(run(&[]).unwrap_err(), FioError::NoJobs);
        assert_eq!(run(&["--bs=4k"]).unwrap_err(), FioError::NoJobs);
        assert!(jobs(&["--parse-only"]).jobs.is_empty());
    }

    #[test]
    fn files_globals_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let f1 = dir.path().join("f1.fio");
        let f2 = dir.path().join("f2.fio");
        std::fs::write(&f1, "[global]\nbs=8k\n[a]\n[b]\nnew_group\n").unwrap();
        std::fs::write(&f2, "[c]\n").unwrap();
        let (f1, f2) = (f1.to_str().unwrap(), f2.to_str().unwrap());
        let p = jobs(&[f1, "--bs=16k", "--size=4k", "--name=z", f2]);
        let names: Vec<&str> = p.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, vec!["z", "a", "b", "c"]);
        assert_eq!(p.jobs[0].value("bs"), Some("16k"));
        // The file's global wins; command-line globals reach the first file's jobs.
        assert_eq!(p.jobs[1].value("bs"), Some("8k"));
        assert_eq!(p.jobs[1].value("size"), Some("4k"));
        // A later file starts from fresh defaults and a stonewall.
        assert_eq!(p.jobs[3].value("bs"), Some("4096"));
        assert!(p.jobs[3].implicit_stonewall);
        let groups: Vec<u32> = p.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, vec![0, 0, 1, 2]);
        assert_eq!(
            p.jobs[3].origin,
            Origin::File {
                path: f2.to_string(),
                index: 1
            }
        );
    }

    #[test]
    fn showcmd_prints_the_file_as_options() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("j.fio");
        std::fs::write(&f, "[global]\nbs=8k\n[a]\nsize=4k\n").unwrap();
        let out = run(&["--showcmd", "--bs=16k", f.to_str().unwrap()]).unwrap();
        assert_eq!(
            out,
            Invocation::Print("fio --bs=16k --bs=8k --name=a --size=4k \n".into())
        );
    }
}
