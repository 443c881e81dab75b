//! Which file serves the next request when a job does not simply take its files in turn
//! one request each (fio's `file_service_type`), as fio 3.33's __get_next_file picks: a
//! picked file serves N requests (or, `sequential`, every request until it is done), then
//! the next pick is the next file in order or one drawn at random among those not done.
//! A file that is done before its N requests ends the pick. Syncs count as requests.

use plumb_core::random::Rng;

use crate::spec::FileService;

use super::file::FileWalk;

pub(super) struct Service {
    kind: FileService,
    /// Requests the current pick still serves after the next one.
    left: u64,
    /// The next request starts a new pick.
    picking: bool,
    /// The file that served the last request.
    last: usize,
}

impl Service {
    /// `None` for fio's default (one request per file in turn), which the walk does itself.
    pub(super) fn new(kind: FileService) -> Option<Service> {
        (kind != FileService::RoundRobin(1)).then_some(Service {
            kind,
            left: 0,
            picking: true,
            last: usize::MAX,
        })
    }

    /// File `fi` served a request: the file to try next (the walk goes on from it past any
    /// that are done).
    pub(super) fn after(&mut self, fi: usize, files: &[FileWalk], rng: &mut Rng) -> usize {
        let per = match self.kind {
            FileService::RoundRobin(n) | FileService::Random(n) => n.max(1),
            FileService::Sequential => 1,
        };
        if self.picking || fi != self.last {
            self.left = per - 1;
            self.picking = false;
        }
        self.last = fi;
        let n = files.len();
        match self.kind {
            FileService::Sequential => fi,
            _ if self.left > 0 => {
                self.left -= 1;
                fi
            }
            FileService::RoundRobin(_) => {
                self.picking = true;
                if fi + 1 == n {
                    0
                } else {
                    fi + 1
                }
            }
            FileService::Random(_) => {
                self.picking = true;
                // fio draws again until the file is not done.
                for _ in 0..4 * n {
                    let k = rng.below(n as u64) as usize;
                    if !files[k].done {
                        return k;
                    }
                }
                (0..n).find(|&k| !files[k].done).unwrap_or(fi)
            }
        }
    }
}
