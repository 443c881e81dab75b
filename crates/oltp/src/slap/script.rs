//! Statements given as text (`--create`, `--query`, `--pre-query`, `--post-query`): a file
//! when the value names one, split at the delimiter as mysqlslap splits them.

use std::path::Path;

/// Split `script` at each `delimiter` byte (mysqlslap uses the delimiter's first character
/// only); one whitespace character after a delimiter is skipped, text after the last
/// delimiter is a statement of its own. Empty statements are kept: mysqlslap stops walking
/// a list at the first one ([`walkable`]) but counts them.
pub fn split(script: &str, delimiter: u8) -> Vec<String> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(pos) = b[at..].iter().position(|&c| c == delimiter) {
        out.push(String::from_utf8_lossy(&b[at..at + pos]).into_owned());
        at += pos + 1;
        if b.get(at)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == 0x0b)
        {
            at += 1;
        }
    }
    if at < b.len() {
        out.push(String::from_utf8_lossy(&b[at..]).into_owned());
    }
    out
}

/// The statements a walk of `list` runs: those before the first empty one.
pub fn walkable(list: &[String]) -> &[String] {
    let end = list.iter().position(|s| s.is_empty()).unwrap_or(list.len());
    &list[..end]
}

/// Why a statement file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{0} is not a regular file")]
    NotRegular(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

/// The SQL a value stands for: the content of the file it names, if it names one, else the
/// value itself (mysqlslap's rule: a value that is a path is read).
pub fn source(value: &str) -> Result<String, ScriptError> {
    let p = Path::new(value);
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => std::fs::read(p)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|source| ScriptError::Read {
                path: value.to_string(),
                source,
            }),
        Ok(_) => Err(ScriptError::NotRegular(value.to_string())),
        Err(_) => Ok(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_as_mysqlslap_does() {
        assert_eq!(split("select 1;select 2", b';'), ["select 1", "select 2"]);
        assert_eq!(split("a; b;", b';'), ["a", "b"]);
        assert_eq!(split("a;  b", b';'), ["a", " b"]);
        assert_eq!(split("select 1;select 2", b'\n'), ["select 1;select 2"]);
        assert_eq!(split("a\nb\n", b'\n'), ["a", "b"]);
        assert_eq!(split("a;;b", b';'), ["a", "", "b"]);
        assert!(split("", b';').is_empty());
        let l = split("a;;b", b';');
        assert_eq!(walkable(&l), ["a"]);
    }

    #[test]
    fn a_value_naming_a_file_is_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("q.sql");
        std::fs::write(&f, "select 1").unwrap();
        assert_eq!(source(f.to_str().unwrap()).unwrap(), "select 1");
        assert_eq!(source("select 2").unwrap(), "select 2");
        assert!(matches!(
            source(d.path().to_str().unwrap()),
            Err(ScriptError::NotRegular(_))
        ));
    }
}
