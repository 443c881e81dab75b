//! The points run one after the other, each `repeat` times, with their data sets' prepare
//! and cleanup around them. A signal or a failed step ends the walk at once; what it owes
//! the data set in use is handed back for the stop to settle.

use std::sync::atomic::Ordering::Relaxed;

use plumb_core::{StopCause, StopFlag};

use super::checked::Checked;
use super::data_set::{self, Owed};
use super::front_end::Phase;
use super::kept::Kept;
use super::points::{self, Done};
use super::progress::{self, Progress};
use super::results;
use super::stop::{Ended, Failure};

/// Where the walk got to.
pub(super) struct Walked {
    /// The runs done and kept, in the order they ran.
    pub done: Vec<Done>,
    /// None: every point ran, or a signal came between two steps.
    pub ended: Option<Ended>,
    pub owed: Owed,
}

struct Walk<'a> {
    s: &'a Checked,
    progress: &'a Progress,
    kept: &'a mut Kept,
    stop: &'a StopFlag,
    done: Vec<Done>,
    owed: Owed,
    /// Runs started so far, over every point.
    runs: u64,
}

pub(super) fn walk(s: &Checked, progress: &Progress, kept: &mut Kept, stop: &StopFlag) -> Walked {
    let mut w = Walk {
        s,
        progress,
        kept,
        stop,
        done: Vec::new(),
        owed: Owed::default(),
        runs: 0,
    };
    let ended = w.points();
    Walked {
        done: w.done,
        ended,
        owed: w.owed,
    }
}

impl Walk<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Relaxed) != 0
    }

    fn points(&mut self) -> Option<Ended> {
        let s = self.s;
        for i in 0..s.points.len() {
            if self.stopped() {
                // Before a prepare that would only be cleaned up again.
                return None;
            }
            if points::starts_set(&s.points, i) {
                self.owed.start(s, i);
                if let Err(f) = data_set::prepare(s, i, self.progress, self.stop) {
                    return Some(Ended::Failed(f));
                }
            }
            for r in 1..=s.plan.repeat {
                if self.stopped() {
                    return None;
                }
                if self.runs > 0
                    && !s.plan.pause.is_zero()
                    && progress::pause(s.plan.pause, self.stop)
                {
                    return None;
                }
                match self.run(i, r) {
                    Ok(d) => self.done.push(d),
                    Err(e) => return Some(e),
                }
            }
            if points::ends_set(&s.points, i) {
                if let Err(f) = self.owed.end(s, i, self.progress, self.stop) {
                    return Some(Ended::Failed(f));
                }
            }
        }
        None
    }

    /// Run `r` of point `i`.
    fn run(&mut self, i: usize, r: u32) -> Result<Done, Ended> {
        let s = self.s;
        let pt = &s.points[i];
        self.runs += 1;
        let rep = if s.plan.repeat > 1 {
            format!(" (repeat {r}/{})", s.plan.repeat)
        } else {
            String::new()
        };
        self.progress
            .before_run(self.runs, &format!("{}{rep}", s.label(pt)));
        let args = s.args(pt, Phase::Run);
        let finished = match s.cmd.run(&args, self.stop) {
            Ok(f) => f,
            Err(e) => {
                if !self.stopped() {
                    self.progress
                        .say(false, format!("sweep: point {} failed: not kept", i + 1));
                }
                return Err(Ended::Failed(Failure::new(
                    format!("point {}", i + 1),
                    s.label(pt),
                    &e,
                )));
            }
        };
        if let Some(StopCause::Signal(sig)) = finished.stopped_by {
            self.progress.say(
                false,
                format!("sweep: point {} interrupted: not kept", i + 1),
            );
            return Err(Ended::Interrupted(sig));
        }
        let run_id = self.kept.add(i, r, s.label(pt), &finished.record);
        let d = Done {
            point: i,
            repeat: r,
            run_id,
            record: finished.record,
        };
        self.progress.say(
            true,
            results::point_line(&d, &s.label(pt), s.cmd.unit(), s.points.len()),
        );
        Ok(d)
    }
}
