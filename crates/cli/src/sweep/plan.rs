//! The plan file: a command, a matrix of option values, and how to run the points.
//! Every mistake is one line naming the file, the line and the key.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    command: String,
    #[serde(alias = "front-end")]
    front_end: Option<String>,
    matrix: toml::Table,
    repeat: Option<u32>,
    warmup: Option<toml::Value>,
    pause: Option<toml::Value>,
    tag: Option<String>,
    prepare: Option<bool>,
    #[serde(alias = "keep-data")]
    keep_data: Option<bool>,
}

/// A plan file, checked for its form (the front end checks the options).
#[derive(Debug)]
pub struct Plan {
    /// The file's text, kept in the history with the sweep, secrets masked.
    pub text: String,
    pub command: Vec<String>,
    pub front_end: Option<String>,
    /// Each key with its values as the command line spells them, in the file's order, and
    /// the line it is on.
    pub matrix: Vec<(String, Vec<String>, usize)>,
    pub repeat: u32,
    pub warmup: Option<Duration>,
    pub pause: Duration,
    pub tag: Option<String>,
    pub prepare: bool,
    /// `keep_data = true`: the data set stays after its last point (and when the sweep is
    /// stopped): no cleanup.
    pub keep_data: bool,
}

/// An error in the plan file: `FILE:LINE: what` (or `FILE: what` when no line applies).
pub fn at(path: &Path, line: Option<usize>, what: impl std::fmt::Display) -> String {
    match line {
        Some(l) => format!("{}:{l}: {what}", path.display()),
        None => format!("{}: {what}", path.display()),
    }
}

/// The line (from 1) where `key` is set, in `section` (`None`: the top level).
pub fn line_of(text: &str, section: Option<&str>, key: &str) -> Option<usize> {
    let mut current: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = Some(h.trim().to_string());
            continue;
        }
        let Some((k, _)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        let here = current.as_deref() == section && k == key;
        let dotted = current.is_none() && section.is_some_and(|s| k == format!("{s}.{key}"));
        if here || dotted {
            return Some(i + 1);
        }
    }
    None
}

/// `30s`, `1m`, `500ms`, `2h`, or a number of seconds.
pub fn duration(v: &toml::Value) -> Result<Duration, String> {
    let shown = match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let bad =
        || format!("'{shown}' is not a duration (e.g. \"30s\", \"2m\", \"500ms\", or seconds)");
    let secs = match v {
        toml::Value::Integer(n) if *n >= 0 => *n as f64,
        toml::Value::Float(f) if f.is_finite() && *f >= 0.0 => *f,
        toml::Value::String(s) => {
            let s = s.trim();
            let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
                (n, 0.001)
            } else if let Some(n) = s.strip_suffix('s') {
                (n, 1.0)
            } else if let Some(n) = s.strip_suffix('m') {
                (n, 60.0)
            } else if let Some(n) = s.strip_suffix('h') {
                (n, 3600.0)
            } else {
                (s, 1.0)
            };
            let n: f64 = num.trim().parse().map_err(|_| bad())?;
            if !n.is_finite() || n < 0.0 {
                return Err(bad());
            }
            n * scale
        }
        _ => return Err(bad()),
    };
    Ok(Duration::from_secs_f64(secs))
}

fn scalar(v: &toml::Value) -> Option<String> {
    Some(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => if *b { "1" } else { "0" }.to_string(),
        _ => return None,
    })
}

/// Read and check `path`.
pub fn read(path: &Path) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| at(path, None, format!("cannot read it: {e}")))?;
    let file: File = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        at(path, line, e.message().trim())
    })?;
    let top = |key: &str| line_of(&text, None, key);
    let command = shlex::split(&file.command).ok_or_else(|| {
        at(
            path,
            top("command"),
            "command: a quote is not closed (it is split as a shell splits it)",
        )
    })?;
    if command.is_empty() {
        return Err(at(
            path,
            top("command"),
            "command is empty: e.g. command = \"oltp_read_write --tables=8 run\"",
        ));
    }
    if file.matrix.is_empty() {
        return Err(at(path, line_of(&text, None, "[matrix]").or(top("matrix")), "the matrix is empty: give at least one option and its values, e.g. threads = [1, 2, 4]"));
    }
    let mut matrix = Vec::new();
    for (key, v) in &file.matrix {
        let line = line_of(&text, Some("matrix"), key);
        if plumb_core::redact::is_secret_option(key) {
            // Its values would name every point, in the output, the history and the HTML.
            return Err(at(
                path,
                line,
                format!("matrix.{key}: a secret cannot be swept: put it in the command, where plumb masks it"),
            ));
        }
        let list = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
            at(
                path,
                line,
                format!(
                    "matrix.{key}: expected a non-empty list of values, e.g. {key} = [1, 2, 4]"
                ),
            )
        })?;
        let mut values = Vec::new();
        for item in list {
            let s = scalar(item).ok_or_else(|| {
                at(
                    path,
                    line,
                    format!("matrix.{key}: {item} is not a value (a number, a word or true/false)"),
                )
            })?;
            if values.contains(&s) {
                return Err(at(path, line, format!("matrix.{key}: {s} is listed twice")));
            }
            values.push(s);
        }
        matrix.push((key.clone(), values, line.unwrap_or(0)));
    }
    let repeat = file.repeat.unwrap_or(1);
    if repeat == 0 {
        return Err(at(
            path,
            top("repeat"),
            "repeat = 0: each point runs at least once",
        ));
    }
    let warmup = file
        .warmup
        .as_ref()
        .map(|v| duration(v).map_err(|e| at(path, top("warmup"), format!("warmup: {e}"))))
        .transpose()?;
    let pause = file
        .pause
        .as_ref()
        .map(|v| duration(v).map_err(|e| at(path, top("pause"), format!("pause: {e}"))))
        .transpose()?
        .unwrap_or_default();
    if let Some(t) = &file.tag {
        crate::keep::check_tag(t).map_err(|e| at(path, top("tag"), e.replace("--tag", "tag")))?;
    }
    Ok(Plan {
        // Kept and shown (history, --json, HTML, compare): never with the command's secrets.
        text: plumb_core::redact::text(&text, &command),
        command,
        front_end: file.front_end,
        matrix,
        repeat,
        warmup,
        pause,
        tag: file.tag,
        prepare: file.prepare.unwrap_or(true),
        keep_data: file.keep_data.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let d = |s: &str| duration(&toml::Value::String(s.into()));
        assert_eq!(d("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(d("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(d("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(d("1.5").unwrap(), Duration::from_millis(1500));
        assert!(d("soon").is_err());
        assert!(d("-1s").is_err());
        assert_eq!(
            duration(&toml::Value::Integer(3)).unwrap(),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn lines_of_keys() {
        let t = "command = \"x\"\nrepeat = 2\n[matrix]\nthreads = [1]\n\"table-size\" = [2]\n";
        assert_eq!(line_of(t, None, "repeat"), Some(2));
        assert_eq!(line_of(t, Some("matrix"), "threads"), Some(4));
        assert_eq!(line_of(t, Some("matrix"), "table-size"), Some(5));
        assert_eq!(line_of(t, None, "threads"), None);
        assert_eq!(line_of("matrix.bs = [1]\n", Some("matrix"), "bs"), Some(1));
    }
}
