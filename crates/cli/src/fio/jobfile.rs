//! Job files (§1.1-1.4): lines, comments, `[sections]`, `include`, substitutions, and fio's
//! order of applying a section's options (by priority: kb_base first, filename last; engine
//! options after all main ones, once the engine is known).

use std::path::Path;

use super::apply::{self, Refusal};
use super::error::FioError;
use super::host::Host;
use super::job::{Origin, ParsedJob, Setting};
use super::options;
use super::subst;

/// One section of a job file, with its include files pasted in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    /// Any name that starts with `global`.
    pub global: bool,
    /// Option lines, comments and blanks removed, before substitution.
    pub lines: Vec<String>,
}

/// Reads a job file (`-` is stdin).
pub fn read(path: &str) -> Result<String, FioError> {
    if path == "-" {
        let mut s = String::new();
        return std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map(|_| s)
            .map_err(|e| FioError::Read {
                path: path.into(),
                reason: e.to_string(),
            });
    }
    std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => FioError::Read {
            path: path.into(),
            reason: "not UTF-8 text".into(),
        },
        _ => FioError::UnableToOpen(path.into()),
    })
}

/// A line with fio's trimming: blanks at both ends, and everything from the first `;` or `#`.
fn clean(line: &str) -> &str {
    let cut = line.find([';', '#']).unwrap_or(line.len());
    line[..cut].trim()
}

/// Splits a job file's text into sections. `path` locates relative include files.
pub fn sections(text: &str, path: &str) -> Result<Vec<Section>, FioError> {
    let mut out: Vec<Section> = Vec::new();
    for raw in text.lines() {
        let line = clean(raw);
        if line.is_empty() {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[') {
            // fio (init.c) reads the rest of the line and drops its last character whatever
            // it is: `[a]` is "a", but an unclosed `[ab` is "a" and `[a` is "" (a job with an
            // empty name). A lone `[` reads nothing and is an option outside any section.
            let Some((cut, _)) = inner.char_indices().next_back() else {
                return Err(FioError::OutsideSection(line.to_string()));
            };
            let name = &inner[..cut];
            out.push(Section {
                name: name.to_string(),
                global: name.starts_with("global"),
                lines: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(FioError::OutsideSection(line.to_string()));
        };
        push_line(&mut section.lines, line, path, 0)?;
    }
    Ok(out)
}

/// fio has no limit on include nesting; plumb stops a file that includes itself.
const MAX_INCLUDE_DEPTH: usize = 64;

fn push_line(
    lines: &mut Vec<String>,
    line: &str,
    path: &str,
    depth: usize,
) -> Result<(), FioError> {
    let Some(name) = include_target(line) else {
        lines.push(line.to_string());
        return Ok(());
    };
    let target = resolve_include(name, path);
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(FioError::IncludeOpen(target));
    }
    let text =
        std::fs::read_to_string(&target).map_err(|_| FioError::IncludeOpen(target.clone()))?;
    for raw in text.lines() {
        let l = clean(raw);
        if l.is_empty() {
            continue;
        }
        if l.starts_with('[') {
            return Err(FioError::SectionInInclude);
        }
        push_line(lines, l, &target, depth + 1)?;
    }
    Ok(())
}

fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    rest.starts_with(char::is_whitespace)
        .then(|| rest.trim_start())
}

/// An include name that does not exist from the current directory is looked up beside the
/// including file.
fn resolve_include(name: &str, including: &str) -> String {
    if Path::new(name).exists() {
        return name.to_string();
    }
    match including.rfind('/') {
        Some(slash) => format!("{}{name}", &including[..=slash]),
        None => name.to_string(),
    }
}

/// Applies one section's lines on top of `base` (the global set), as fio does: substitute,
/// sort by priority, main options first, then the engine's. Returns the section's own
/// settings in the order applied. `job` names the job for error texts; `dry_run` is
/// [`apply::apply`]'s.
pub fn apply_section(
    base: &[Setting],
    lines: &[String],
    host: &Host,
    job: &str,
    dry_run: bool,
) -> Result<Vec<Setting>, FioError> {
    let mut order: Vec<(i8, &String)> = lines
        .iter()
        .map(|l| {
            let key = l.split('=').next().unwrap_or(l).trim_end();
            (options::find(key).map_or(0, |o| o.prio), l)
        })
        .collect();
    // fio's sort is stable on glibc: equal priorities keep their order.
    order.sort_by_key(|(p, _)| std::cmp::Reverse(*p));

    let mut set: Vec<Setting> = base.to_vec();
    let mut own = Vec::new();
    let mut later = Vec::new();
    for (_, line) in &order {
        let text = subst::line(line, host);
        let (key, value) = split(&text);
        if value.is_some_and(|v| v.starts_with(char::is_whitespace)) {
            return Err(FioError::BlankValue(line.to_string()));
        }
        match apply::apply(&set, key, value, None, dry_run) {
            Ok(s) => {
                set.push(s.clone());
                own.push(s);
            }
            Err(Refusal::Unknown) => later.push((line, text.clone())),
            Err(r) => return Err(refusal(r, line, value, job)),
        }
    }
    let engine = apply::engine(&set).map(str::to_string);
    for (line, text) in later {
        let (key, value) = split(&text);
        match apply::apply(&set, key, value, engine.as_deref(), dry_run) {
            Ok(s) => {
                set.push(s.clone());
                own.push(s);
            }
            Err(r) => return Err(refusal(r, line, value, job)),
        }
    }
    Ok(own)
}

fn split(text: &str) -> (&str, Option<&str>) {
    match text.split_once('=') {
        Some((k, v)) => (k.trim_end(), Some(v)),
        None => (text, None),
    }
}

fn refusal(r: Refusal, line: &str, value: Option<&str>, job: &str) -> FioError {
    match r {
        Refusal::Unknown => FioError::BadOption {
            line: line.to_string(),
            suggestion: options::suggest_for_jobfile(line).map(str::to_string),
            job: job.to_string(),
        },
        Refusal::Bad {
            opt,
            bare,
            note,
            listed,
        } => apply::bad_value(opt, bare, note, listed, line, Some(job)),
        Refusal::NotSupported(opt) => apply::not_supported(opt, value),
        // Global sections (named global...) fill fio's default set, which is no job.
        Refusal::NotADirectory { dir, errno } => {
            apply::not_a_directory(&dir, errno, line, !job.starts_with("global"), Some(job))
        }
    }
}

/// The state that runs through the command line's job files.
pub struct FileContext<'a> {
    pub host: &'a Host,
    /// `--section` names; empty = all.
    pub sections: &'a [String],
    /// Collects `--showcmd` output when set.
    pub showcmd: Option<&'a mut String>,
    /// `--parse-only`: with `showcmd`, fio's dry run, which looks at no directory.
    pub parse_only: bool,
}

/// Parses job file number `index` into `jobs`, with `globals` as the global set it starts
/// from (the command line's for the first file, fio's defaults for the others).
pub fn parse_file(
    path: &str,
    index: usize,
    globals: &mut Vec<Setting>,
    ctx: &mut FileContext<'_>,
    jobs: &mut Vec<ParsedJob>,
) -> Result<(), FioError> {
    let text = read(path)?;
    let sections = sections(&text, path)?;
    let mut stonewall = index > 0;
    let mut first = true;
    for s in sections {
        if !s.global && !ctx.sections.is_empty() && !ctx.sections.contains(&s.name) {
            continue;
        }
        if let Some(out) = ctx.showcmd.as_deref_mut() {
            if first {
                out.push_str("fio ");
            }
            if !s.global {
                out.push_str(&format!("--name={} ", s.name));
            }
        }
        first = false;
        let dry_run = ctx.parse_only || ctx.showcmd.is_some();
        let own = apply_section(globals, &s.lines, ctx.host, &s.name, dry_run)?;
        if s.global {
            globals.extend(own);
            if let Some(out) = ctx.showcmd.as_deref_mut() {
                out.push_str(&dump(globals));
            }
            continue;
        }
        if let Some(out) = ctx.showcmd.as_deref_mut() {
            out.push_str(&dump(&own));
        }
        let mut options = globals.clone();
        let n = own.len();
        options.extend(own);
        jobs.push(ParsedJob {
            name: s.name,
            origin: Origin::File {
                path: path.to_string(),
                index,
            },
            group: 0,
            implicit_stonewall: std::mem::take(&mut stonewall),
            options,
            own: n,
        });
    }
    if let Some(out) = ctx.showcmd.as_deref_mut() {
        out.push('\n');
    }
    Ok(())
}

/// Settings as `--showcmd` prints them: `--name=value `, bare ones `--name `, the
/// description quoted.
pub fn dump(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| match &s.value {
            None => format!("--{} ", s.name),
            Some(v) if s.name == "description" => format!("--{}=\"{v}\" ", s.name),
            Some(v) => format!("--{}={v} ", s.name),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host::fixed(&[("BS", "8k")], 4096, 1000, 2)
    }

    fn parse(text: &str) -> Result<Vec<ParsedJob>, FioError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.fio");
        std::fs::write(&p, text).unwrap();
        let mut jobs = Vec::new();
        let h = host();
        let mut ctx = FileContext {
            host: &h,
            sections: &[],
            showcmd: None,
            parse_only: false,
        };
        parse_file(p.to_str().unwrap(), 0, &mut Vec::new(), &mut ctx, &mut jobs)?;
        Ok(jobs)
    }

    #[test]
    fn comments_sections_and_globals() {
        let jobs = parse(
            "; comment\n# another\n[global]\nbs=8k # trailing\n[a]\nsize=4k;x\n[global-x]\nbs=16k\n[b]\n  rw=randread:8  \n[a]\n",
        )
        .unwrap();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].value("bs"), Some("8k"));
        assert_eq!(jobs[0].value("size"), Some("4k"));
        assert_eq!(jobs[1].value("bs"), Some("16k"));
        assert_eq!(jobs[1].value("rw"), Some("randread:8"));
        assert_eq!(jobs[2].name, "a");
        assert_eq!(jobs[0].job_options(), vec![("size", "4k")]);
        assert_eq!(jobs[0].own, 1);
    }

    #[test]
    fn option_outside_a_section() {
        assert_eq!(
            parse("size=1M\n[a]\n").unwrap_err(),
            FioError::OutsideSection("size=1M".into())
        );
    }

    #[test]
    fn an_unclosed_header_loses_its_last_character() {
        let jobs = parse("[a\nsize=4k\n[bc\n[global\n[d] x\n").unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        // `[global` is the job "globa", not a global section.
        assert_eq!(names, ["", "b", "globa", "d] "]);
        assert_eq!(
            parse("[\nsize=4k\n").unwrap_err(),
            FioError::OutsideSection("[".into())
        );
    }

    #[test]
    fn priority_order_and_engine_options() {
        let jobs =
            parse("[a]\nhipri\nbs=4k\nkb_base=1000\nioengine=io_uring\nfilename=/tmp/x\n").unwrap();
        let names: Vec<&str> = jobs[0].options.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            vec!["kb_base", "bs", "ioengine", "filename", "hipri"]
        );
        let kb = if jobs[0].value("kb_base") == Some("1000") {
            crate::fio::values::KbBase::K1000
        } else {
            crate::fio::values::KbBase::K1024
        };
        let bs = crate::fio::options::find("bs")
            .unwrap()
            .rwt_values(jobs[0].value("bs").unwrap(), kb);
        assert_eq!(bs, [Some(4000); 3]);
        let e = parse("[a]\nhipri\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Bad option <hipri>\nDid you mean prio?\nfio: job a dropped"
        );
    }

    #[test]
    fn errors_name_the_line_and_job() {
        let e = parse("[x]\nfoo=1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Bad option <foo=1>\nDid you mean flow?\nfio: job x dropped"
        );
        let e = parse("[x]\nrw=readx\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "fio: failed parsing rw=readx\nfio: job x dropped"
        );
        assert!(e
            .stdout()
            .unwrap()
            .starts_with("        valid values: read "));
        let e = parse("[a]\ndirect\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Option direct requires an argument\nfio: failed parsing direct\nfio: job a dropped"
        );
        let e = parse("[a]\ndirect=true\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "fio: failed parsing direct=true\nfio: job a dropped"
        );
        let e = parse("[a]\ncgroup=x\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "plumb: fio option 'cgroup' (value x) is not supported yet"
        );
        assert!(matches!(
            parse("[a]\nsize= 64k\n").unwrap_err(),
            FioError::BlankValue(_)
        ));
    }

    #[test]
    fn spacing_before_equals_is_fine() {
        let jobs = parse("[a]\nbs =8k\n").unwrap();
        assert_eq!(jobs[0].value("bs"), Some("8k"));
    }

    #[test]
    fn substitution_and_bare_set_options() {
        let jobs =
            parse("[a]\nbs=${BS}\nsize=$mb_memory\nnumjobs=$ncpus*2\ntime_based\nruntime=1\n")
                .unwrap();
        let j = &jobs[0];
        assert_eq!(j.value("bs"), Some("8k"));
        assert_eq!(j.value("size"), Some("1000"));
        assert_eq!(j.value("numjobs"), Some("4"));
        assert!(j.flag("time_based").unwrap());
        assert_eq!(
            j.job_options(),
            vec![
                ("bs", "8k"),
                ("size", "1000"),
                ("numjobs", "4"),
                ("runtime", "1")
            ]
        );
    }

    #[test]
    fn includes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("inc1.fio"), "bs=8k\ninclude inc2.fio\n").unwrap();
        std::fs::write(dir.path().join("inc2.fio"), "; c\nsize=4k\n").unwrap();
        std::fs::write(dir.path().join("bad.fio"), "[x]\n").unwrap();
        let main = dir.path().join("main.fio");
        std::fs::write(&main, "[global]\ninclude inc1.fio\n[a]\n").unwrap();
        let h = host();
        let mut ctx = FileContext {
            host: &h,
            sections: &[],
            showcmd: None,
            parse_only: false,
        };
        let mut jobs = Vec::new();
        parse_file(
            main.to_str().unwrap(),
            0,
            &mut Vec::new(),
            &mut ctx,
            &mut jobs,
        )
        .unwrap();
        assert_eq!(jobs[0].value("bs"), Some("8k"));
        assert_eq!(jobs[0].value("size"), Some("4k"));
        // Global-section options are not the job's own.
        assert!(jobs[0].job_options().is_empty());

        std::fs::write(&main, "[a]\ninclude bad.fio\n").unwrap();
        let e = parse_file(
            main.to_str().unwrap(),
            0,
            &mut Vec::new(),
            &mut ctx,
            &mut jobs,
        );
        assert_eq!(e.unwrap_err(), FioError::SectionInInclude);
        std::fs::write(&main, "[a]\ninclude missing.fio\n").unwrap();
        let e = parse_file(
            main.to_str().unwrap(),
            0,
            &mut Vec::new(),
            &mut ctx,
            &mut jobs,
        );
        assert!(matches!(e.unwrap_err(), FioError::IncludeOpen(_)));
        std::fs::write(dir.path().join("self.fio"), "include self.fio\n").unwrap();
        std::fs::write(&main, "[a]\ninclude self.fio\n").unwrap();
        let e = parse_file(
            main.to_str().unwrap(),
            0,
            &mut Vec::new(),
            &mut ctx,
            &mut jobs,
        );
        assert!(matches!(e.unwrap_err(), FioError::IncludeOpen(_)));
    }

    #[test]
    fn missing_file() {
        let h = host();
        let mut ctx = FileContext {
            host: &h,
            sections: &[],
            showcmd: None,
            parse_only: false,
        };
        let e = parse_file(
            "/nonexistent/x.fio",
            0,
            &mut Vec::new(),
            &mut ctx,
            &mut Vec::new(),
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "fio: unable to open '/nonexistent/x.fio' job file"
        );
    }

    #[test]
    fn section_filter_and_showcmd() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.fio");
        std::fs::write(
            &p,
            "[global]\nbs=8k\nioengine=null\n[a]\nsize=4k ; c\ndescription=hello world\ntime_based\nruntime=1\n[b]\nrw=randread:8\n",
        )
        .unwrap();
        let h = host();
        let mut out = String::new();
        let mut jobs = Vec::new();
        let mut ctx = FileContext {
            host: &h,
            sections: &[],
            showcmd: Some(&mut out),
            parse_only: false,
        };
        parse_file(p.to_str().unwrap(), 0, &mut Vec::new(), &mut ctx, &mut jobs).unwrap();
        // fio 3.33's output for the same file.
        assert_eq!(out, "fio --bs=8k --ioengine=null --name=a --size=4k --description=\"hello world\" --time_based --runtime=1 --name=b --rw=randread:8 \n");
        let only_b = vec!["b".to_string()];
        let mut ctx = FileContext {
            host: &h,
            sections: &only_b,
            showcmd: None,
            parse_only: false,
        };
        let mut jobs = Vec::new();
        parse_file(p.to_str().unwrap(), 0, &mut Vec::new(), &mut ctx, &mut jobs).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].value("bs"), Some("8k"));
    }
}
