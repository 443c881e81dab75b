//! How a sweep ends when it does not run to its end: what stopped it (a signal, or a step
//! that failed), then the data set's cleanup the sweep still owes, run so that a further
//! signal leaves the data set in place, and the one line that says what was kept and left.

use std::sync::atomic::Ordering::Relaxed;

use plumb_core::StopFlag;

use super::data_set::Cleanup;
use super::front_end::{Command, DataSteps};

/// A step of the sweep that failed.
pub(super) struct Failure {
    /// `point 2`, `the prepare before point 3`, `the cleanup after point 4`.
    pub at: String,
    /// Its point's values.
    values: String,
    /// The error, in one line.
    pub error: String,
}

impl Failure {
    pub fn new(at: String, values: String, e: &anyhow::Error) -> Failure {
        let text = crate::exit::message(e);
        let error = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Failure { at, values, error }
    }

    /// The one line that says it: `point 2 (rw=trim): fio: ...`.
    pub fn line(&self) -> String {
        format!("{} ({}): {}", self.at, self.values, self.error)
    }
}

/// What stopped a sweep.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) enum Cause {
    /// SIGINT or SIGTERM (its number).
    Signal(i32),
    /// A step that failed: `at` names it (`point 2`), `line` says it with the error.
    Error { at: String, line: String },
}

/// How the walk through the points ended before its last one.
pub(super) enum Ended {
    Failed(Failure),
    /// A run saw this signal.
    Interrupted(i32),
}

impl Cause {
    /// What stopped the sweep, if anything: a signal wins over a failure, which it may
    /// have caused (a step cut short fails).
    pub fn of(ended: Option<Ended>, stop: &StopFlag) -> Option<Cause> {
        let (mut interrupted, failure) = match ended {
            Some(Ended::Interrupted(s)) => (Some(s), None),
            Some(Ended::Failed(f)) => (None, Some(f)),
            None => (None, None),
        };
        if interrupted.is_none() && stop.load(Relaxed) != 0 {
            interrupted = Some(stop.load(Relaxed) as i32);
        }
        match (interrupted, failure) {
            (Some(sig), _) => Some(Cause::Signal(sig)),
            (None, Some(f)) => Some(Cause::Error {
                at: f.at.clone(),
                line: f.line(),
            }),
            (None, None) => None,
        }
    }
}

/// A sweep stopped by a signal or an error.
pub(super) struct Stopped {
    pub cause: Cause,
    /// Runs done and kept, of those planned.
    pub kept: usize,
    pub planned: usize,
    pub steps: DataSteps,
    /// The plan's `prepare`.
    pub prepare: bool,
}

impl Stopped {
    /// Run `cleanup` (the data set's cleanup the sweep had still to run, if any) so that a
    /// signal stops it and leaves the data set (after a first signal, with the signals
    /// armed again); the line that says how the sweep ended. `failed`: the data set's
    /// cleanup that failed already, with its error.
    /// What stopped the sweep and what it kept: `stopped by SIGINT: 2 of 6 run(s) done and
    /// kept` (the history keeps it as how the sweep ended).
    pub fn headline(&self) -> String {
        let by = match &self.cause {
            Cause::Signal(s) => plumb_core::result::signal_name(*s).to_string(),
            Cause::Error { at, .. } => format!("an error in {at}"),
        };
        format!(
            "stopped by {by}: {} of {} run(s) done and kept",
            self.kept, self.planned
        )
    }

    pub fn clean_up(
        &self,
        cmd: &dyn Command,
        cleanup: Option<Cleanup>,
        failed: Option<(Cleanup, String)>,
        stop: &StopFlag,
    ) -> String {
        let head = format!("sweep: {}", self.headline());
        let left = |c: &Cleanup, why: String| {
            let (what, remove) = c.left(cmd);
            let what = what.map_or(String::new(), |w| format!(" ({w})"));
            format!("{head}; {why}: the data set is left in place, whole or in part{what}; to remove it: {remove}")
        };
        if let Some((c, e)) = failed {
            return left(&c, format!("the cleanup failed ({e})"));
        }
        let Some(c) = cleanup else {
            let why = match self.steps {
                DataSteps::Separate {
                    cleanup: false,
                    added: true,
                    ..
                }
                | DataSteps::ByTheRun { cleanup: false } => {
                    "; the data set stays (keep_data = true)"
                }
                DataSteps::Separate { cleanup: false, .. } => {
                    "; the data set stays (the command names no cleanup)"
                }
                DataSteps::None if !self.prepare => {
                    "; the data set stays (prepare = false: the sweep does not touch it)"
                }
                _ => "",
            };
            return format!("{head}{why}");
        };
        if let Cleanup::Files(l) = &c {
            if l.present().is_empty() {
                return format!("{head}; no file to remove (the runs left none they laid out)");
            }
        }
        let shown = c.shown(cmd);
        match &self.cause {
            Cause::Signal(s) => {
                let sig = plumb_core::result::signal_name(*s);
                eprintln!(
                    "sweep: {sig}: cleaning up the data set: {shown} (Ctrl-C again leaves it in place)"
                );
                crate::signals::rearm();
            }
            // No signal yet: the first one stops the cleanup, as a second one does above.
            Cause::Error { at, .. } => eprintln!(
                "sweep: {at} failed: cleaning up the data set: {shown} (Ctrl-C leaves it in place)"
            ),
        }
        match c.run(cmd, stop) {
            Ok(()) => format!("{head}; the data set was cleaned up"),
            Err(_) if stop.load(Relaxed) != 0 => left(
                &c,
                format!(
                    "the cleanup was stopped by {}",
                    plumb_core::result::signal_name(stop.load(Relaxed) as i32)
                ),
            ),
            Err(e) => left(
                &c,
                format!("the cleanup failed ({})", crate::exit::message(&e)),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::front_end::{Phase, Swept};
    use crate::sweep::laid::Laid;
    use std::cell::Cell;
    use std::path::PathBuf;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// A front end whose every run fails: after storing `signal` in the stop flag (a
    /// signal that came during it), or with an error of its own.
    struct Failing {
        signal: usize,
        runs: Cell<u32>,
    }

    impl Command for Failing {
        fn option(&self, _: &str) -> Result<Swept, String> {
            Err("none".into())
        }
        fn warmup(&self, _: f64) -> String {
            String::new()
        }
        fn warmup_name(&self) -> &'static str {
            "warmup"
        }
        fn data_steps(&self, _: bool, _: bool) -> Result<DataSteps, String> {
            Ok(DataSteps::None)
        }
        fn args(&self, _: &[String], _: &[String], _: Phase) -> Vec<String> {
            Vec::new()
        }
        fn check(&self, _: &[String]) -> Result<Vec<PathBuf>, String> {
            Ok(Vec::new())
        }
        fn run(&self, _: &[String], stop: &StopFlag) -> anyhow::Result<plumb_pipeline::Finished> {
            self.runs.set(self.runs.get() + 1);
            if self.signal != 0 {
                stop.store(self.signal, Relaxed);
                anyhow::bail!("interrupted");
            }
            anyhow::bail!("the disk went away")
        }
        fn unit(&self) -> &'static str {
            "events/s"
        }
        fn typed(&self, args: &[String]) -> String {
            format!("plumb {}", args.join(" "))
        }
        fn data_set(&self, _: &[String]) -> Option<String> {
            Some("2 file(s) test_file.0..1".into())
        }
    }

    fn stopped(cause: Cause, steps: DataSteps) -> Stopped {
        Stopped {
            cause,
            kept: 1,
            planned: 3,
            steps,
            prepare: true,
        }
    }

    const SEPARATE: DataSteps = DataSteps::Separate {
        prepare: true,
        cleanup: true,
        added: true,
    };

    fn cleanup() -> Cleanup {
        Cleanup::Command(vec!["fileio".into(), "cleanup".into()])
    }

    #[test]
    fn a_signal_stops_the_cleanup_after_an_error_and_the_line_says_what_is_left() {
        let cmd = Failing {
            signal: libc::SIGINT as usize,
            runs: Cell::new(0),
        };
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        let s = stopped(
            Cause::Error {
                at: "point 2".into(),
                line: String::new(),
            },
            SEPARATE,
        );
        assert_eq!(
            s.clean_up(&cmd, Some(cleanup()), None, &stop),
            "sweep: stopped by an error in point 2: 1 of 3 run(s) done and kept; the cleanup was stopped by SIGINT: the data set is left in place, whole or in part (2 file(s) test_file.0..1); to remove it: plumb fileio cleanup"
        );
        assert_eq!(cmd.runs.get(), 1);
    }

    #[test]
    fn a_cleanup_that_failed_already_is_not_run_again() {
        let cmd = Failing {
            signal: 0,
            runs: Cell::new(0),
        };
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        let s = stopped(
            Cause::Error {
                at: "the cleanup after point 3".into(),
                line: String::new(),
            },
            SEPARATE,
        );
        assert_eq!(
            s.clean_up(&cmd, None, Some((cleanup(), "the disk went away".into())), &stop),
            "sweep: stopped by an error in the cleanup after point 3: 1 of 3 run(s) done and kept; the cleanup failed (the disk went away): the data set is left in place, whole or in part (2 file(s) test_file.0..1); to remove it: plumb fileio cleanup"
        );
        assert_eq!(cmd.runs.get(), 0);
        // One that fails now says so the same way.
        let s = stopped(Cause::Signal(libc::SIGTERM), SEPARATE);
        assert!(s
            .clean_up(&cmd, Some(cleanup()), None, &stop)
            .ends_with("; the cleanup failed (the disk went away): the data set is left in place, whole or in part (2 file(s) test_file.0..1); to remove it: plumb fileio cleanup"));
    }

    #[test]
    fn files_a_second_signal_leaves_are_named_with_the_command_that_removes_them() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("r.0.0");
        let laid = Laid::before(std::slice::from_ref(&f));
        std::fs::write(&f, b"x").unwrap();
        let cmd = Failing {
            signal: 0,
            runs: Cell::new(0),
        };
        // The second signal, come before the first file is removed.
        let stop: StopFlag = Arc::new(AtomicUsize::new(libc::SIGINT as usize));
        let s = stopped(
            Cause::Signal(libc::SIGINT),
            DataSteps::ByTheRun { cleanup: true },
        );
        let dir = d.path().display();
        assert_eq!(
            s.clean_up(&cmd, Some(Cleanup::Files(laid)), None, &stop),
            format!("sweep: stopped by SIGINT: 1 of 3 run(s) done and kept; the cleanup was stopped by SIGINT: the data set is left in place, whole or in part (r.0.0 in {dir}); to remove it: rm -f -- {dir}/r.0.0")
        );
        assert!(f.exists());
    }

    #[test]
    fn what_stays_when_nothing_is_cleaned_up() {
        let cmd = Failing {
            signal: 0,
            runs: Cell::new(0),
        };
        let stop: StopFlag = Arc::new(AtomicUsize::new(0));
        let line = |steps, prepare| {
            let mut s = stopped(Cause::Signal(libc::SIGINT), steps);
            s.prepare = prepare;
            s.clean_up(&cmd, None, None, &stop)
        };
        let head = "sweep: stopped by SIGINT: 1 of 3 run(s) done and kept";
        assert_eq!(
            line(DataSteps::ByTheRun { cleanup: false }, true),
            format!("{head}; the data set stays (keep_data = true)")
        );
        assert_eq!(
            line(
                DataSteps::Separate {
                    prepare: true,
                    cleanup: false,
                    added: true
                },
                true
            ),
            format!("{head}; the data set stays (keep_data = true)")
        );
        assert_eq!(
            line(
                DataSteps::Separate {
                    prepare: true,
                    cleanup: false,
                    added: false
                },
                true
            ),
            format!("{head}; the data set stays (the command names no cleanup)")
        );
        assert_eq!(
            line(DataSteps::None, false),
            format!("{head}; the data set stays (prepare = false: the sweep does not touch it)")
        );
        assert_eq!(line(DataSteps::None, true), head);
        assert_eq!(cmd.runs.get(), 0);
    }
}
