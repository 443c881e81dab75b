//! Where a data set's prepare and cleanup go: prepare before its first point, cleanup after
//! its last; what keep_data leaves is said. The cleanup is owed from before the prepare, so
//! that a signal or an error cleans up a prepare cut short too.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

use plumb_core::StopFlag;

use super::checked::Checked;
use super::front_end::{Command, DataSteps, Phase};
use super::laid::{self, Laid};
use super::points;
use super::progress::Progress;
use super::stop::Failure;

/// What removes a data set.
pub(super) enum Cleanup {
    /// The front end's cleanup command (`plumb fileio ... cleanup`).
    Command(Vec<String>),
    /// The files the data set's runs laid out (fio).
    Files(Laid),
}

impl Cleanup {
    /// What it does, in the line before it: the command as typed, or the files it removes.
    pub fn shown(&self, cmd: &dyn Command) -> String {
        match self {
            Cleanup::Command(args) => cmd.typed(args),
            Cleanup::Files(l) => format!("remove {}", laid::shown(&l.present())),
        }
    }

    pub fn run(&self, cmd: &dyn Command, stop: &StopFlag) -> anyhow::Result<()> {
        match self {
            Cleanup::Command(args) => cmd.run(args, stop).map(|_| ()),
            Cleanup::Files(l) => l.remove(stop).map(|_| ()),
        }
    }

    /// What a cleanup stopped or failed left, in words when the front end can say it, and
    /// the command that removes it.
    pub fn left(&self, cmd: &dyn Command) -> (Option<String>, String) {
        match self {
            Cleanup::Command(args) => (cmd.data_set(args), cmd.typed(args)),
            Cleanup::Files(l) => (Some(laid::shown(&l.present())), l.remove_command()),
        }
    }
}

/// What the sweep owes the data sets: kept across the points so that a sweep stopped
/// half-way still knows what to clean up.
#[derive(Default)]
pub(super) struct Owed {
    /// The cleanup of the data set in use that the sweep has still to run: a signal or an
    /// error runs it.
    pub clean: Option<Cleanup>,
    /// A cleanup that failed after its data set's last point: said, not run again.
    pub failed: Option<(Cleanup, String)>,
    /// keep_data on a data set whose runs lay it out: what they laid out, to say it stays.
    keep: Option<Laid>,
}

impl Owed {
    /// Before the first point of a data set (point `i`), before its prepare.
    pub fn start(&mut self, s: &Checked, i: usize) {
        let points = &s.points;
        let last = points::set_end(points, i);
        match s.steps {
            DataSteps::Separate { cleanup: true, .. } => {
                let args = s.args(&points[last], Phase::Cleanup);
                self.clean = Some(Cleanup::Command(args));
            }
            DataSteps::ByTheRun { cleanup } => {
                // A job that opens no file (fio's null engine): nothing to remove or keep.
                let laid = Some(Laid::before(&points::set_files(&points[i..=last])))
                    .filter(|l| !l.is_empty());
                if cleanup {
                    self.clean = laid.map(Cleanup::Files);
                } else {
                    self.keep = laid;
                }
            }
            _ => {}
        }
    }

    /// After the last point of a data set (point `i`): say what stays, run the cleanup.
    pub fn end(
        &mut self,
        s: &Checked,
        i: usize,
        progress: &Progress,
        stop: &StopFlag,
    ) -> Result<(), Failure> {
        let pt = &s.points[i];
        if let Some(l) = self.keep.take() {
            progress.say(false, kept_line(&l));
        }
        if let DataSteps::Separate {
            cleanup: false,
            added: true,
            ..
        } = s.steps
        {
            let args = s.args(pt, Phase::Cleanup);
            progress.say(
                false,
                format!(
                    "sweep: keep_data: the data set stays (to remove it: {})",
                    s.cmd.typed(&args)
                ),
            );
        }
        let Some(c) = self.clean.take() else {
            return Ok(());
        };
        let outcome = match &c {
            Cleanup::Command(args) => {
                progress.say(false, format!("sweep: cleanup: {}", s.cmd.typed(args)));
                s.cmd.run(args, stop).map(|_| ())
            }
            Cleanup::Files(l) => l.remove(stop).map(|removed| {
                progress.say(false, removed_line(l, &removed));
            }),
        };
        if let Err(e) = outcome {
            let f = Failure::new(
                format!("the cleanup after point {}", i + 1),
                s.label(pt),
                &e,
            );
            if stop.load(Relaxed) != 0 {
                // Cut short by the signal: the stop runs it again, to be stopped again.
                self.clean = Some(c);
            } else {
                self.failed = Some((c, f.error.clone()));
            }
            return Err(f);
        }
        Ok(())
    }
}

/// The prepare before point `i`, the first of its data set, when the sweep runs one.
pub(super) fn prepare(
    s: &Checked,
    i: usize,
    progress: &Progress,
    stop: &StopFlag,
) -> Result<(), Failure> {
    let DataSteps::Separate { prepare: true, .. } = s.steps else {
        return Ok(());
    };
    let pt = &s.points[i];
    let args = s.args(pt, Phase::Prepare);
    progress.say(false, format!("sweep: prepare: {}", s.cmd.typed(&args)));
    s.cmd.run(&args, stop).map(|_| ()).map_err(|e| {
        Failure::new(
            format!("the prepare before point {}", i + 1),
            s.label(pt),
            &e,
        )
    })
}

/// What the end of a data set whose runs laid out its files did with them.
fn removed_line(l: &Laid, removed: &[PathBuf]) -> String {
    let removed: Vec<&Path> = removed.iter().map(PathBuf::as_path).collect();
    let mut s = if removed.is_empty() {
        "sweep: cleanup: no file to remove (the runs left none they laid out)".to_string()
    } else {
        format!(
            "sweep: cleanup: removed the files the runs laid out: {}",
            laid::shown(&removed)
        )
    };
    let kept = l.kept();
    if !kept.is_empty() {
        s.push_str(&format!(
            "; kept {} (there before the data set's first point)",
            laid::shown(&kept)
        ));
    }
    s
}

/// What keep_data keeps at the end of a data set whose runs laid out its files.
fn kept_line(l: &Laid) -> String {
    let laid = l.present();
    if laid.is_empty() {
        "sweep: keep_data: the runs left no file they laid out".to_string()
    } else {
        format!(
            "sweep: keep_data: the files the runs laid out stay: {} (to remove them: {})",
            laid::shown(&laid),
            l.remove_command()
        )
    }
}
