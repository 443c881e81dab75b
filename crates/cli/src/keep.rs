//! The one place a finished run goes into the history (`plumb history`). Every front end
//! calls [`keep`] with its record once its report is out, so a history that cannot be
//! written costs one warning line and never the run or its output.

use plumb_pipeline::Record;

/// What the user asked for the history of this run.
#[derive(Clone, Debug)]
pub struct Keep {
    /// Store the run (`--no-history` turns it off).
    pub store: bool,
    /// `--tag NAME`, checked already.
    pub tags: Vec<String>,
    /// A failure may be reported on stderr (not under a drop-in name, whose stderr is the
    /// peer tool's).
    pub warn: bool,
}

impl Keep {
    /// Under plumb's own name.
    pub fn plumb(no_history: bool, tags: Vec<String>) -> Keep {
        Keep {
            store: !no_history,
            tags,
            warn: true,
        }
    }

    /// Under a drop-in name: stored, silently.
    pub fn silent() -> Keep {
        Keep {
            store: true,
            tags: Vec::new(),
            warn: false,
        }
    }
}

/// Check a `--tag` value before anything runs.
pub fn check_tag(name: &str) -> Result<(), String> {
    plumb_history::check_name("tag", name).map_err(|e| format!("--tag: {e}"))
}

/// Store `record` as `k` says; returns the run's id when it was stored.
pub fn keep(record: &Record, k: &Keep) -> Option<i64> {
    if !k.store || record.groups.is_empty() {
        return None;
    }
    let stored =
        plumb_history::Store::open_default().and_then(|mut s| s.add(record, &k.tags, None));
    match stored {
        Ok(id) => Some(id),
        Err(e) => {
            if k.warn {
                eprintln!("plumb: warning: the run was not kept in the history: {e}");
            }
            None
        }
    }
}
