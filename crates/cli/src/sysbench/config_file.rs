//! sysbench's `--config-file=FILE`: options read from a file, as if typed where the option
//! stands (so later command-line options override them, earlier ones are overridden).
//!
//! sysbench 1.0.20's format (`read_config` in sb_options.c): a line is `name=value`; a line
//! without `=` is skipped; a value is a list of words separated by `,` or blanks, each bare or
//! quoted with `'` or `"`; `#` starts a comment. Unlike sysbench, which files names it does
//! not know away unread, every name goes through the same checks as a typed option, so a
//! misspelt one is refused instead of ignored.

use std::path::Path;

/// `args` with every `--config-file=FILE` replaced by the options the file holds, as
/// `--name=value` words. A file that cannot be read or parsed: the message.
pub fn expand(args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        match a.strip_prefix("--config-file") {
            Some(rest) if rest.starts_with('=') || rest.is_empty() => {
                let path = rest.strip_prefix('=').unwrap_or("");
                if path.is_empty() {
                    return Err("--config-file needs a file name".into());
                }
                out.extend(read(Path::new(path))?);
            }
            _ => out.push(a.clone()),
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--config-file: cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|m| format!("--config-file {}: {m}", path.display()))
}

/// The options of a config file's text, as `--name=value` words.
fn parse(text: &str) -> Result<Vec<String>, String> {
    let mut opts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some((name, rest)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        if name.is_empty() || name.starts_with('#') {
            continue;
        }
        let values = values(rest).ok_or_else(|| format!("unexpected EOL on line {}", n + 1))?;
        opts.push(format!("--{name}={}", values.join(",")));
    }
    Ok(opts)
}

/// The words of one value: blanks and `,` separate them, quotes keep them whole, `#` ends
/// the line. None: a quote left open.
fn values(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        let Some(c) = rest.chars().next() else {
            return Some(out);
        };
        match c {
            '#' => return Some(out),
            '\'' | '"' => {
                let body = &rest[1..];
                let end = body.find(c)?;
                out.push(body[..end].to_string());
                // Whatever follows the closing quote up to the next separator is dropped.
                rest = match body[end + 1..].find(',') {
                    Some(i) => &body[end + 1 + i + 1..],
                    None => "",
                };
            }
            _ => {
                let end = rest
                    .find(|ch: char| ch == ',' || ch.is_whitespace())
                    .unwrap_or(rest.len());
                out.push(rest[..end].to_string());
                rest = rest[end..].strip_prefix(',').unwrap_or(&rest[end..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lines_become_options_in_file_order() {
        let text = "threads=4\n# a comment line has no '=' to split\nno value line\ntime = 10 # seconds\npercentile=50, 95,99\nrand-type='pareto'\nhistogram=on\n";
        assert_eq!(
            parse(text).unwrap(),
            words(&[
                "--threads=4",
                "--time=10",
                "--percentile=50,95,99",
                "--rand-type=pareto",
                "--histogram=on"
            ])
        );
    }

    #[test]
    fn quotes_keep_separators_and_an_open_quote_is_refused() {
        assert_eq!(values("\"a b,c\" , d").unwrap(), words(&["a b,c", "d"]));
        assert_eq!(values("x#y").unwrap(), words(&["x#y"]));
        assert_eq!(values("").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse("a=1\nb='open\n").unwrap_err(),
            "unexpected EOL on line 2"
        );
    }

    #[test]
    fn the_file_takes_the_options_place() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("sb.conf");
        std::fs::write(&f, "threads=2\nevents=5\n").unwrap();
        let args = words(&[
            "--threads=8",
            &format!("--config-file={}", f.display()),
            "--events=7",
            "cpu",
            "run",
        ]);
        assert_eq!(
            expand(&args).unwrap(),
            words(&[
                "--threads=8",
                "--threads=2",
                "--events=5",
                "--events=7",
                "cpu",
                "run"
            ])
        );
        let missing = words(&["--config-file=/nonexistent/sb.conf", "cpu", "run"]);
        assert!(expand(&missing)
            .unwrap_err()
            .starts_with("--config-file: cannot read /nonexistent/sb.conf: "));
    }
}
