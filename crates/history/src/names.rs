//! Names users give (tags, baselines) and the ways a command names a run.

use std::path::PathBuf;

const MAX_NAME: usize = 64;

/// A tag or baseline name: 1 to 64 letters, digits, `.`, `_` or `-`, not a number alone (that
/// reads as a run id) and not ending in `.json` (that reads as a result file).
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let why = if name.is_empty() || name.len() > MAX_NAME {
        Some("1 to 64 characters")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        Some("letters, digits, '.', '_' or '-'")
    } else if name.chars().all(|c| c.is_ascii_digit()) {
        Some("not a number alone: that names a run id")
    } else if name.ends_with(".json") {
        Some("not ending in .json: that names a result file")
    } else {
        None
    };
    match why {
        Some(w) => Err(format!("invalid {what} name '{name}' ({w})")),
        None => Ok(()),
    }
}

/// How a command names a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunRef {
    /// A run id, as `plumb history` lists them.
    Id(i64),
    /// The newest run carrying this tag.
    Tag(String),
    /// `baseline:NAME`.
    Baseline(String),
    /// A result document (`--json=FILE`): a name with a `/` or ending in `.json`.
    File(PathBuf),
}

impl RunRef {
    pub fn parse(s: &str) -> Result<RunRef, String> {
        if s.contains('/') || s.ends_with(".json") {
            return Ok(RunRef::File(PathBuf::from(s)));
        }
        if let Some(name) = s.strip_prefix("baseline:") {
            check_name("baseline", name)?;
            return Ok(RunRef::Baseline(name.to_string()));
        }
        if let Some(id) = s.strip_prefix("sweep:") {
            // Where one run is asked for (show, tag, baseline): a sweep is many.
            return Err(format!(
                "{s} is a sweep, not one run: plumb history --sweep={id} lists its runs, plumb html {s} draws it, plumb compare {s} sweep:N compares two"
            ));
        }
        if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
            return s
                .parse()
                .map(RunRef::Id)
                .map_err(|_| format!("run id '{s}' is too large"));
        }
        check_name("tag", s).map_err(|e| {
            format!("{e}; a run is named by its id, a tag, baseline:NAME or a result file")
        })?;
        Ok(RunRef::Tag(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["nightly", "v1.2", "pre-upgrade_2", "a", "1a"] {
            assert!(check_name("tag", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "42",
            "a b",
            "x/y",
            "r.json",
            "baseline:x",
            &"x".repeat(65),
        ] {
            assert!(check_name("tag", bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_name("tag", "42").unwrap_err(),
            "invalid tag name '42' (not a number alone: that names a run id)"
        );
    }

    #[test]
    fn references() {
        assert_eq!(RunRef::parse("12").unwrap(), RunRef::Id(12));
        assert_eq!(
            RunRef::parse("nightly").unwrap(),
            RunRef::Tag("nightly".into())
        );
        assert_eq!(
            RunRef::parse("baseline:ssd").unwrap(),
            RunRef::Baseline("ssd".into())
        );
        assert_eq!(
            RunRef::parse("r.json").unwrap(),
            RunRef::File("r.json".into())
        );
        assert_eq!(RunRef::parse("./r").unwrap(), RunRef::File("./r".into()));
        assert!(RunRef::parse("baseline:").is_err());
        assert!(RunRef::parse("a b").is_err());
        assert!(RunRef::parse("99999999999999999999").is_err());
    }
}
