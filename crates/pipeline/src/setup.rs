//! The load baseline of a group whose setup steps (prepare, prewarm) work in a local
//! database server: taken while they run, from the moment the server is known, instead of
//! in a wait before the run.
//!
//! The server is known before the setup when the front end holds a connection of its own
//! ([`crate::PlanOptions::setup_server`], mysqlslap's main connection). A job that connects
//! only inside its steps (sysbench's OLTP tests) learns it from the step's first connection
//! and names it through [`SetupServer::found`]: the baseline starts then, still during the
//! step.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use plumb_observe::{Baseline, Ready};

use crate::plan::{Group, Plan, Step};

/// Where a group's setup baseline stands.
enum State {
    /// No server named yet.
    Waiting,
    Watching(Baseline),
    /// The run has begun: a server named now comes too late for this group.
    Over,
}

/// A handle on a group's setup baseline, for the jobs' setup steps (through
/// [`crate::StepContext::setup_server`]); cheap to clone, and usable from the threads a step
/// starts.
#[derive(Clone)]
pub struct SetupServer {
    window: Duration,
    state: Arc<Mutex<State>>,
}

impl SetupServer {
    /// A handle for `group` when its setup can overlap its baseline: it has a run step and
    /// begins with a setup step (the baseline must end as the run begins, and a group that
    /// starts with its run has no setup to overlap). Started at once when the plan names
    /// the server.
    pub(crate) fn for_group(plan: &Plan, group: &Group, window: Duration) -> Option<Self> {
        let setup_first = matches!(group.steps.first(), Some(Step::Prepare | Step::Prewarm));
        if !setup_first || !group.steps.contains(&Step::Run) {
            return None;
        }
        let s = SetupServer {
            window,
            state: Arc::new(Mutex::new(State::Waiting)),
        };
        if let Some(pid) = plan.options.setup_server {
            s.found(pid);
        }
        Some(s)
    }

    /// The setup works in local server process `pid` (its work for plumb is not other
    /// load): the baseline starts now, unless it already runs or the run has begun.
    pub fn found(&self, pid: u32) {
        let mut state = self.lock();
        if matches!(*state, State::Waiting) {
            *state = State::Watching(Baseline::start(
                plumb_observe::Roots::default(),
                self.window,
                pid,
            ));
        }
    }

    /// Whether a server is still wanted: a job need not look for it otherwise (over TCP
    /// that is a scan of /proc).
    pub fn waiting(&self) -> bool {
        matches!(*self.lock(), State::Waiting)
    }

    /// The run begins: the baseline's window ends, waiting only for what is left of it.
    /// None when no server was named (the observer then takes the baseline before the run,
    /// as it does for any plan).
    pub(crate) fn finish(&self) -> Option<Ready> {
        match std::mem::replace(&mut *self.lock(), State::Over) {
            State::Watching(b) => b.finish(),
            State::Waiting | State::Over => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A job thread that panicked while naming a server leaves a state still whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
