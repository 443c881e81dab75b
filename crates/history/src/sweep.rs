//! A saved sweep, wherever it was read from (the history's `sweep:ID` or a `plumb sweep
//! --json` file): its runs with their points. What `plumb html` draws and `plumb compare`
//! puts beside another sweep.

use plumb_pipeline::Record;

/// A sweep and how the user named it.
pub struct SweepSide {
    /// `sweep 3`, or the file's name.
    pub label: String,
    pub started_at_unix_s: u64,
    /// The plan file's text, when known.
    pub plan: Option<String>,
    /// The plan's command (`cpu --time=10 run`), when known.
    pub command: Option<String>,
    /// What stopped it before its last point, when it was stopped ("stopped by SIGINT: 2 of
    /// 6 run(s) done and kept"); None when it completed or that is not known.
    pub stopped: Option<String>,
    /// Its runs, by point then repeat.
    pub runs: Vec<SweepRun>,
}

/// One run of a sweep.
pub struct SweepRun {
    /// The point's number in the sweep.
    pub point: usize,
    /// `run 12`, or `point 3` for a run not kept in the history.
    pub label: String,
    /// The point's values by key, as the plan spells the keys.
    pub values: Vec<(String, String)>,
    pub record: Record,
}

/// A point of a sweep with its runs.
pub struct PointRuns<'a> {
    /// The point's number in the sweep.
    pub index: usize,
    /// Its values, one per key of [`SweepSide::keys`] (empty when the point has no value
    /// for a key).
    pub values: Vec<String>,
    pub runs: Vec<&'a SweepRun>,
}

impl SweepSide {
    /// The swept keys in the plan's order: as the history keeps them; a JSON file's object
    /// is in name order, so the plan's text orders them when it names them.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for r in &self.runs {
            for (k, _) in &r.values {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        if let Some(p) = &self.plan {
            let matrix = p.find("[matrix]").map_or("", |i| &p[i..]);
            keys.sort_by_key(|k| {
                matrix
                    .lines()
                    .position(|l| {
                        let l = l.trim_start().trim_start_matches("--");
                        l.strip_prefix(k.as_str())
                            .is_some_and(|r| r.trim_start().starts_with('='))
                    })
                    .unwrap_or(usize::MAX)
            });
        }
        keys
    }

    /// The points run, in the sweep's order, each with its runs.
    pub fn points(&self) -> Vec<PointRuns<'_>> {
        let keys = self.keys();
        let mut order: Vec<usize> = self.runs.iter().map(|r| r.point).collect();
        order.sort();
        order.dedup();
        order
            .into_iter()
            .map(|index| {
                let runs: Vec<&SweepRun> = self.runs.iter().filter(|r| r.point == index).collect();
                let values = keys
                    .iter()
                    .map(|k| {
                        runs[0]
                            .values
                            .iter()
                            .find(|(n, _)| n == k)
                            .map_or(String::new(), |(_, v)| v.clone())
                    })
                    .collect();
                PointRuns {
                    index,
                    values,
                    runs,
                }
            })
            .collect()
    }

    /// What the sweep's throughput counts, as `plumb sweep` says it: `tps` for OLTP,
    /// `IOPS` for fio, `events/s` otherwise.
    pub fn unit(&self) -> &'static str {
        self.runs.first().map_or("events/s", |r| unit_of(&r.record))
    }
}

/// What a run's throughput counts, as `plumb sweep` says it.
pub fn unit_of(r: &Record) -> &'static str {
    match (
        r.front_end.as_str(),
        r.jobs().next().map(|j| j.workload.test()),
    ) {
        (_, Some("oltp")) => "tps",
        ("fio", _) => "IOPS",
        _ => "events/s",
    }
}

/// A key as the front ends read it: `--table_size` and `table-size` are one option.
pub(crate) fn same_key(k: &str) -> String {
    k.trim_start_matches("--").replace('_', "-")
}
