//! fio's help texts: `--cmdhelp[=opt]`, the valid-values list of an enum, and the usage page.

use super::options::{self, Kind, Opt};

fn type_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Str | Kind::StrUll | Kind::StrVal | Kind::StrStore => "string (opt=bla)",
        Kind::StrMulti => "string with possible k/m/g postfix (opt=4k)",
        Kind::StrValTime => "string with time postfix (opt=10s)",
        Kind::Range => "one to three ranges (opt=1k-4k[,4k-8k[,1k-8k]])",
        Kind::Int | Kind::Ull => "integer value (opt=100)",
        Kind::Bool => "boolean value (opt=1)",
        Kind::FloatList => "list of floating point values separated by ':' (opt=5.9:7.8)",
        Kind::StrSet => "empty or boolean value ([0|1])",
        // fio's type-name table has no entry for this type and printf prints "(null)".
        Kind::StrValZone => "(null)",
        Kind::Deprecated | Kind::SoftDeprecated => "deprecated",
    }
}

/// The valid-values block fio prints on stdout for an enum (ends with a blank line).
pub fn valid_values(o: &Opt) -> String {
    let mut out = String::new();
    for (i, (word, help)) in o.values.iter().enumerate() {
        let label = if i == 0 { "valid values" } else { "" };
        out.push_str(&format!("{label:>20}: {word:<10}"));
        if let Some(h) = help {
            out.push_str(&format!(" {h}"));
        }
        out.push('\n');
    }
    // fio ends the block with a newline whether or not there were values.
    out.push('\n');
    out
}

fn option_help(o: &Opt) -> String {
    let mut out = String::new();
    if let Some(a) = o.alias {
        out.push_str(&format!("{:>20}: {a}\n", "alias"));
    }
    out.push_str(&format!("{:>20}: {}\n", "type", type_text(o.kind)));
    out.push_str(&format!(
        "{:>20}: {}\n",
        "default",
        o.default.unwrap_or("no default")
    ));
    if let Some(r) = o.range {
        out.push_str(&format!("{:>20}: {r}\n", "range"));
    }
    out.push_str(&valid_values(o));
    out
}

/// `fio --cmdhelp[=NAME]`: (stdout, stderr). None or `all` lists every option as a tree.
pub fn cmdhelp(name: Option<&str>) -> (String, String) {
    let all = options::main_options();
    let listed = |o: &&Opt| !matches!(o.kind, Kind::Deprecated | Kind::SoftDeprecated);
    let Some(name) = name.filter(|n| *n != "all") else {
        let mut out = String::new();
        for (i, o) in all.iter().enumerate() {
            if listed(&o) && o.parent.is_none() {
                print_tree(all, i, &mut out);
            }
        }
        return (out, String::new());
    };
    let mut out = String::new();
    let mut closest: Option<(&Opt, usize)> = None;
    for o in all.iter().filter(listed) {
        if o.name == name || o.alias == Some(name) {
            out.push_str(&format!("{:>20}: {}\n", o.name, o.help));
            out.push_str(&option_help(o));
        } else {
            let d = options::string_distance(name, o.name);
            if closest.is_none_or(|(_, bd)| d < bd) {
                closest = Some((o, d));
            }
        }
    }
    if !out.is_empty() {
        return (out, String::new());
    }
    let err = format!("No such command: {name}");
    match closest.filter(|(_, d)| *d < 3) {
        Some((o, _)) => (
            format!(
                " - showing closest match\n{:>20}: {}\n{}",
                o.name,
                o.help,
                option_help(o)
            ),
            err,
        ),
        None => ("\n".to_string(), err),
    }
}

/// fio's print_option: the option, then its children; then the children of the last child
/// printed, one level deeper, and so on (each search starts after the last option printed).
fn print_tree(all: &[Opt], start: usize, out: &mut String) {
    let line = |o: &Opt, level: usize, out: &mut String| {
        let name = format!("{}{}", "  ".repeat(level), o.name);
        out.push_str(&format!("{name:<24}: {}\n", o.help));
    };
    line(&all[start], 0, out);
    let mut cur = start;
    let mut parent = start;
    let mut level = 0;
    loop {
        level += 1;
        let mut printed = false;
        while let Some(child) =
            (cur + 1..all.len()).find(|&i| all[i].parent == Some(all[parent].name))
        {
            line(&all[child], level, out);
            cur = child;
            printed = true;
        }
        if !printed {
            break;
        }
        parent = cur;
    }
}

/// fio's usage page (stdout), as printed after `No job(s) defined` or for `--help`.
pub fn usage(prog: &str) -> String {
    format!(
        "fio-3.33\n{prog} [options] [job options] <job file(s)>\n{}",
        USAGE_BODY
    )
}

const USAGE_BODY: &str = "  --debug=options\tEnable debug logging. May be one/more of:
\t\t\tprocess,file,io,mem,blktrace,verify,random,parse,
\t\t\tdiskutil,job,mutex,profile,time,net,rate,compress,
\t\t\tsteadystate,helperthread,zbd
  --parse-only\t\tParse options only, don't start any IO
  --merge-blktrace-only\tMerge blktraces only, don't start any IO
  --output\t\tWrite output to file
  --bandwidth-log\tGenerate aggregate bandwidth logs
  --minimal\t\tMinimal (terse) output
  --output-format=type\tOutput format (terse,json,json+,normal)
  --terse-version=type\tSet terse version output format (default 3, or 2 or 4 or 5)
  --version\t\tPrint version info and exit
  --help\t\tPrint this page
  --cpuclock-test\tPerform test/validation of CPU clock
  --crctest=[type]\tTest speed of checksum functions
  --cmdhelp=cmd\t\tPrint command help, \"all\" for all of them
  --enghelp=engine\tPrint ioengine help, or list available ioengines
  --enghelp=engine,cmd\tPrint help for an ioengine cmd
  --showcmd\t\tTurn a job file into command line options
  --eta=when\t\tWhen ETA estimate should be printed
            \t\tMay be \"always\", \"never\" or \"auto\"
  --eta-newline=t\tForce a new line for every 't' period passed
  --status-interval=t\tForce full status dump every 't' period passed
  --readonly\t\tTurn on safety read-only checks, preventing writes
  --section=name\tOnly run specified section in job file, multiple sections can be specified
  --alloc-size=kb\tSet smalloc pool to this size in kb (def 16384)
  --warnings-fatal\tFio parser warnings are fatal
  --max-jobs=nr\t\tMaximum number of threads/processes to support
  --server=args\t\tStart a backend fio server
  --daemonize=pidfile\tBackground fio server, write pid to file
  --client=hostname\tTalk to remote backend(s) fio server at hostname
  --remote-config=file\tTell fio server to load this local job file
  --idle-prof=option\tReport cpu idleness on a system or percpu basis
\t\t\t(option=system,percpu) or run unit work
\t\t\tcalibration only (option=calibrate)
  --inflate-log=log\tInflate and output compressed log
  --trigger-file=file\tExecute trigger cmd when file exists
  --trigger-timeout=t\tExecute trigger at this time
  --trigger=cmd\t\tSet this command as local trigger
  --trigger-remote=cmd\tSet this command as remote trigger
  --aux-path=path\tUse this path for fio state generated files

Fio was written by Jens Axboe <axboe@kernel.dk>
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_option() {
        let (out, err) = cmdhelp(Some("bs"));
        assert_eq!(
            out,
            "                  bs: Block size unit\n               alias: blocksize\n                type: integer value (opt=100)\n             default: 4096\n               range: min=1, max=-1\n\n"
        );
        assert!(err.is_empty());
        let (out, _) = cmdhelp(Some("blocksize"));
        assert!(out.starts_with("                  bs: Block size unit\n"));
        let (out, _) = cmdhelp(Some("rw"));
        assert!(out.contains("        valid values: read       Sequential read\n"));
        assert!(out.contains(
            "                    : randtrimwrite Randomly trim and write mix, trims preceding writes\n\n"
        ));
    }

    #[test]
    fn unknown_and_closest() {
        let (out, err) = cmdhelp(Some("nosuch"));
        assert_eq!(err, "No such command: nosuch");
        assert_eq!(out, "\n");
        let (out, _) = cmdhelp(Some("direkt"));
        assert!(out.starts_with(" - showing closest match\n              direct: "));
    }

    #[test]
    fn listing_is_a_tree() {
        let (out, _) = cmdhelp(None);
        assert!(out.starts_with("description             : Text job description\nname                    : Name of this job\n"));
        assert!(out.contains("filename                : File(s) to use for the workload\n  lockfile              : Lock file when doing IO to it\n"));
        assert!(out.contains(
            "rw                      : IO direction\n  bs                    : Block size unit\n"
        ));
        assert_eq!(cmdhelp(Some("all")).0, out);
    }

    #[test]
    fn usage_text() {
        let u = usage("fio");
        assert!(u.starts_with("fio-3.33\nfio [options] [job options] <job file(s)>\n"));
        assert!(u.ends_with("Jens Axboe <axboe@kernel.dk>\n"));
    }
}
