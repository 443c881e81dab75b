//! Where the history lives: `$PLUMB_HOME/history.db`, else `$XDG_DATA_HOME/plumb/history.db`,
//! else `$HOME/.local/share/plumb/history.db` (the XDG default). An empty variable counts as
//! unset, and XDG_DATA_HOME must be absolute, as the XDG specification says.

use std::path::{Path, PathBuf};

use crate::{HistoryError, Result};

pub const FILE_NAME: &str = "history.db";

/// The database path for this environment.
pub fn database() -> Result<PathBuf> {
    database_from(|k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// [`database`] with the environment given (for tests).
pub fn database_from(var: impl Fn(&str) -> Option<PathBuf>) -> Result<PathBuf> {
    if let Some(home) = var("PLUMB_HOME") {
        return Ok(home.join(FILE_NAME));
    }
    if let Some(data) = var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Ok(data.join("plumb").join(FILE_NAME));
    }
    match var("HOME") {
        Some(home) => Ok(home.join(".local/share/plumb").join(FILE_NAME)),
        None => Err(HistoryError::NoHome),
    }
}

/// Create the directory that holds `db`.
pub(crate) fn make_dir(db: &Path) -> Result<()> {
    match db.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Dir {
                path: dir.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<PathBuf> {
        database_from(|k| {
            vars.iter()
                .find(|(n, v)| *n == k && !v.is_empty())
                .map(|(_, v)| PathBuf::from(v))
        })
    }

    #[test]
    fn plumb_home_then_xdg_then_home() {
        let all = [
            ("PLUMB_HOME", "/p"),
            ("XDG_DATA_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(with(&all).unwrap(), PathBuf::from("/p/history.db"));
        assert_eq!(
            with(&all[1..]).unwrap(),
            PathBuf::from("/x/plumb/history.db")
        );
        assert_eq!(
            with(&all[2..]).unwrap(),
            PathBuf::from("/h/.local/share/plumb/history.db")
        );
        // Empty and relative XDG_DATA_HOME are ignored.
        assert_eq!(
            with(&[("PLUMB_HOME", ""), ("XDG_DATA_HOME", "rel"), ("HOME", "/h")]).unwrap(),
            PathBuf::from("/h/.local/share/plumb/history.db")
        );
        assert!(matches!(with(&[]), Err(HistoryError::NoHome)));
    }
}
