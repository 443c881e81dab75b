//! The sweep in the history: one sweep id, each run kept as a point of it. A history that
//! cannot be opened or written costs a warning, never the sweep's runs.

use plumb_history::{Store, SweepPoint};
use plumb_pipeline::Record;

pub(super) struct Kept {
    /// The store and the sweep's id; None with --no-history or when it could not be opened.
    store: Option<(Store, i64)>,
    /// The plan's tag, on every run.
    tags: Vec<String>,
}

impl Kept {
    /// Start the sweep `plan` (its text) at `start_unix` in the default history, unless
    /// `no_history`.
    pub fn open(no_history: bool, start_unix: u64, plan: &str, tag: Option<&String>) -> Kept {
        let store = if no_history {
            None
        } else {
            match Store::open_default()
                .and_then(|mut s| s.new_sweep(start_unix, plan).map(|id| (s, id)))
            {
                Ok(s) => Some(s),
                Err(e) => {
                    eprintln!("plumb: warning: the sweep is not kept in the history: {e}");
                    None
                }
            }
        };
        Kept {
            store,
            tags: tag.into_iter().cloned().collect(),
        }
    }

    pub fn sweep_id(&self) -> Option<i64> {
        self.store.as_ref().map(|(_, id)| *id)
    }

    /// How the sweep ended (`completed`, or what stopped it), for the history.
    pub fn end(&mut self, points_planned: usize, ended: &str) {
        if let Some((s, id)) = self.store.as_mut() {
            if let Err(e) = s.end_sweep(*id, points_planned as u32, ended) {
                eprintln!("plumb: warning: how the sweep ended was not kept in the history: {e}");
            }
        }
    }

    /// Keep run `repeat` of point `i` (from 0), named by `values`: its run id.
    pub fn add(&mut self, i: usize, repeat: u32, values: String, record: &Record) -> Option<i64> {
        let (s, id) = self.store.as_mut()?;
        let at = SweepPoint {
            sweep: *id,
            index: i as u32 + 1,
            repeat,
            values,
        };
        s.add_point(record, &self.tags, &at)
            .map_err(|e| {
                eprintln!(
                    "plumb: warning: point {} was not kept in the history: {e}",
                    i + 1
                )
            })
            .ok()
    }
}
