//! The "Run status group" figures, computed over the report units as fio does.

use super::model::{Dir, FioDoc};

/// One direction of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupDir {
    /// Σ bytes × 1000 / the longest unit runtime, B/s.
    pub agg_bw: u64,
    /// The slowest and fastest unit's bandwidth, B/s.
    pub min_bw: u64,
    pub max_bw: u64,
    pub io_bytes: u64,
    /// The shortest and longest unit runtime, ms (max 0: the direction did nothing).
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

/// One reporting group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupRun {
    pub groupid: u32,
    /// read, write, trim.
    pub dirs: [GroupDir; 3],
    /// The group's units' unified_rw_reporting, OR-ed together as fio does: 1 (`mixed`:
    /// the read figures are the mixed ones, labelled `MIXED`), 2 (`both`: a `MIXED` line
    /// after the directions'); 3, units of both kinds, is neither.
    pub unified: u8,
}

/// `GroupRun::unified` of a group whose units sum their directions.
pub const UNIFIED_MIXED: u8 = 1;
/// `GroupRun::unified` of a group whose units report the sum besides the directions.
pub const UNIFIED_BOTH: u8 = 2;

impl GroupRun {
    pub fn dir(&self, d: Dir) -> &GroupDir {
        &self.dirs[d as usize]
    }

    /// unified_rw_reporting=both's `MIXED` line: the directions that ran, their bytes and
    /// aggregates added, the extremes of their bandwidths and run times. A group where no
    /// direction ran keeps the extremes' starting values, as fio prints them.
    pub fn mixed_line(&self) -> GroupDir {
        let mut m = GroupDir {
            min_bw: u64::MAX,
            min_run_ms: u64::MAX,
            ..GroupDir::default()
        };
        for d in self.dirs.iter().filter(|d| d.max_run_ms != 0) {
            m.io_bytes += d.io_bytes;
            m.agg_bw += d.agg_bw;
            m.min_bw = m.min_bw.min(d.min_bw);
            m.max_bw = m.max_bw.max(d.max_bw);
            m.min_run_ms = m.min_run_ms.min(d.min_run_ms);
            m.max_run_ms = m.max_run_ms.max(d.max_run_ms);
        }
        m
    }
}

/// Groups 0 to the highest groupid of any unit, each with its units' figures.
pub fn group_runs(doc: &FioDoc) -> Vec<GroupRun> {
    let count = doc.units.iter().map(|u| u.groupid + 1).max().unwrap_or(0);
    let mut groups: Vec<GroupRun> = (0..count)
        .map(|groupid| GroupRun {
            groupid,
            dirs: [GroupDir {
                min_bw: u64::MAX,
                min_run_ms: u64::MAX,
                ..GroupDir::default()
            }; 3],
            unified: 0,
        })
        .collect();
    for unit in &doc.units {
        let Some(group) = groups.get_mut(unit.groupid as usize) else {
            continue;
        };
        if unit.mixed {
            group.unified |= UNIFIED_MIXED;
        }
        if unit.both.is_some() {
            group.unified |= UNIFIED_BOTH;
        }
        for d in Dir::ALL {
            let s = unit.dir(d);
            if s.runtime_ms == 0 {
                continue;
            }
            let g = &mut group.dirs[d as usize];
            g.min_run_ms = g.min_run_ms.min(s.runtime_ms);
            g.max_run_ms = g.max_run_ms.max(s.runtime_ms);
            let bw = bytes_per_s(s.io_bytes, s.runtime_ms);
            g.min_bw = g.min_bw.min(bw);
            g.max_bw = g.max_bw.max(bw);
            g.io_bytes += s.io_bytes;
        }
    }
    for g in groups.iter_mut().flat_map(|g| g.dirs.iter_mut()) {
        if g.max_run_ms > 0 {
            g.agg_bw = bytes_per_s(g.io_bytes, g.max_run_ms);
        }
    }
    groups
}

/// fio's integer bandwidth: bytes × 1000 / ms (0 over no time).
pub(crate) fn bytes_per_s(bytes: u64, ms: u64) -> u64 {
    if ms == 0 {
        0
    } else {
        (u128::from(bytes) * 1000 / u128::from(ms)) as u64
    }
}

/// A unit's bandwidth mean as a share of its group's aggregate, % (normal and JSON): fio
/// truncates the mean to an integer first and caps the share at 100.
pub(crate) fn share_of_agg(mean_kib: f64, agg_bw: u64) -> f64 {
    if agg_bw <= 1024 {
        return 100.0;
    }
    let p = (mean_kib as i32) as f64 * 100.0 / (agg_bw as f64 / 1024.0);
    p.min(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::model::{DirStats, Unit};

    fn unit(groupid: u32, bytes: u64, ms: u64) -> Unit {
        Unit {
            groupid,
            read: DirStats {
                io_bytes: bytes,
                runtime_ms: ms,
                ..DirStats::default()
            },
            ..Unit::default()
        }
    }

    #[test]
    fn aggregate_over_the_longest_runtime() {
        let doc = FioDoc {
            units: vec![
                unit(0, 1 << 20, 1001),
                unit(0, 1 << 20, 1000),
                unit(1, 0, 0),
            ],
            ..FioDoc::default()
        };
        let g = group_runs(&doc);
        assert_eq!(g.len(), 2);
        let r = g[0].dir(Dir::Read);
        assert_eq!(r.agg_bw, 2 * 1_048_576_000 / 1001);
        assert_eq!((r.min_bw, r.max_bw), (1_048_576_000 / 1001, 1_048_576));
        assert_eq!((r.min_run_ms, r.max_run_ms), (1000, 1001));
        assert_eq!(g[1].dir(Dir::Read).max_run_ms, 0);
        assert_eq!(g[0].dir(Dir::Write).max_run_ms, 0);
    }

    #[test]
    fn share_truncates_the_mean_and_caps() {
        // 1032 KiB/s of a 2046 KiB/s group (numjobs=2 without group_reporting): 50.44%.
        assert_eq!(format!("{:.2}", share_of_agg(1032.0, 2_095_056)), "50.44");
        assert_eq!(share_of_agg(5000.0, 2_095_056), 100.0);
        assert_eq!(share_of_agg(10.0, 1000), 100.0);
    }
}
