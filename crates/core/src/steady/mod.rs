//! Steady-state detection, as fio 3.33 does it (`steadystate`, `ss_dur`, `ss_ramp`): once a
//! second the jobs of a group say how far they got; the group's IOPS and bandwidth over
//! that second go into a [`Window`] of the last `ss_dur` seconds; when the window's
//! criterion holds, the group has attained steady state and every job of it stops.
//!
//! A group is one job, or under fio's group_reporting the jobs of one reporting group. The
//! once-a-second tick is taken by whichever of the group's harnesses gets there first, so
//! no thread of its own is needed; the harness reads its workers' counts for it through
//! a [`Probe`].

mod window;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use window::{Criterion, Metric, Window, WindowState};

/// fio's STEADYSTATE_MSEC: how often the group is sampled.
const TICK: Duration = Duration::from_secs(1);

/// What a group judges, over how long.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadySpec {
    pub criterion: Criterion,
    /// Samples in the window, one a second (fio's ss_dur in whole seconds; at least 1).
    pub window_s: u32,
    /// A job's samples count from this long after its start, plus one second (fio's
    /// ss_ramp; 0: from the start).
    pub ramp: Duration,
}

/// What a job's progress is counted in: the operation kinds that are its I/Os and the
/// counters that hold its bytes (names from the workload's `kinds()` and `counters()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub ios: &'static [&'static str],
    pub bytes: &'static [&'static str],
}

/// A running job's cumulative (I/Os, bytes), read at each tick.
pub type Probe = Box<dyn Fn() -> (u64, u64) + Send + Sync>;

/// The jobs judged together, and their window.
pub struct SteadyGroup {
    spec: SteadySpec,
    tally: Tally,
    attained: AtomicBool,
    state: Mutex<GroupState>,
}

struct GroupState {
    members: Vec<Member>,
    window: Window,
    /// When the next sample is due; none until a job starts.
    next_tick: Option<Instant>,
}

#[derive(Default)]
struct Member {
    /// Set while the job runs.
    probe: Option<Probe>,
    epoch: Option<Instant>,
    prev_time: Option<Instant>,
    prev_ios: u64,
    prev_bytes: u64,
    ramp_over: bool,
}

/// How a group's detection ended, for the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    pub criterion: Criterion,
    /// Samples in the window (fio's `duration`).
    pub window_s: u32,
    pub attained: bool,
    pub window: WindowState,
}

impl SteadyGroup {
    /// A group of `members` jobs (each joins with [`SteadyGroup::member`]).
    pub fn new(spec: SteadySpec, tally: Tally, members: usize) -> Arc<SteadyGroup> {
        let window = Window::new(spec.window_s.max(1) as usize);
        Arc::new(SteadyGroup {
            spec,
            tally,
            attained: AtomicBool::new(false),
            state: Mutex::new(GroupState {
                members: (0..members.max(1)).map(|_| Member::default()).collect(),
                window,
                next_tick: None,
            }),
        })
    }

    /// The place of job `index` (0-based, in the order fio creates them: the last one
    /// holds the group's window).
    pub fn member(self: &Arc<Self>, index: usize) -> SteadyMember {
        SteadyMember {
            group: self.clone(),
            index,
        }
    }

    pub fn spec(&self) -> &SteadySpec {
        &self.spec
    }

    pub fn attained(&self) -> bool {
        self.attained.load(Relaxed)
    }

    pub fn report(&self) -> SteadyReport {
        let st = self.lock();
        SteadyReport {
            criterion: self.spec.criterion,
            window_s: st.window.len() as u32,
            attained: self.attained(),
            window: st.window.state(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GroupState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One sample, as fio's steadystate_check takes it for one group: each running job's
    /// I/Os and bytes since its previous sample, per second (integer ms, as fio measures),
    /// summed over the jobs past their ramp; the window takes the sum only while the last
    /// job (which holds the window in fio) runs and once some job's ramp is over.
    fn tick(&self, st: &mut GroupState, now: Instant) {
        let ramp = self.spec.ramp;
        let (mut iops, mut bw, mut counted) = (0u64, 0u64, 0u32);
        for m in st.members.iter_mut() {
            let (Some(probe), Some(epoch), Some(prev)) = (&m.probe, m.epoch, m.prev_time) else {
                continue;
            };
            if !m.ramp_over && now.saturating_duration_since(epoch) >= ramp + TICK {
                m.ramp_over = true;
            }
            let (ios, bytes) = probe();
            // fio divides by the milliseconds since the job's previous sample; a zero
            // would be its division by zero.
            let ms = (now.saturating_duration_since(prev).as_millis() as u64).max(1);
            m.prev_time = Some(now);
            if m.ramp_over {
                let per_s =
                    |now: u64, before: u64| 1000u64.wrapping_mul(now.wrapping_sub(before)) / ms;
                iops = iops.wrapping_add(per_s(ios, m.prev_ios));
                bw = bw.wrapping_add(per_s(bytes, m.prev_bytes));
                counted += 1;
            }
            m.prev_ios = ios;
            m.prev_bytes = bytes;
        }
        let holder_runs = st.members.last().is_some_and(|m| m.probe.is_some());
        if holder_runs && counted > 0 && st.window.push(&self.spec.criterion, iops, bw) {
            self.attained.store(true, Relaxed);
        }
    }
}

/// One job's place in its group; the harness drives it (see `RunConfig::steady`).
#[derive(Clone)]
pub struct SteadyMember {
    group: Arc<SteadyGroup>,
    index: usize,
}

impl fmt::Debug for SteadyMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SteadyMember")
            .field("spec", &self.group.spec)
            .field("index", &self.index)
            .finish()
    }
}

impl SteadyMember {
    pub fn group(&self) -> &Arc<SteadyGroup> {
        &self.group
    }

    pub fn tally(&self) -> Tally {
        self.group.tally
    }

    /// The job starts running now; `probe` reads its counts until [`SteadyMember::stop`].
    pub fn start(&self, now: Instant, probe: Probe) {
        let g = &self.group;
        let mut st = g.lock();
        let ramp_over = g.spec.ramp.is_zero();
        if let Some(m) = st.members.get_mut(self.index) {
            *m = Member {
                probe: Some(probe),
                epoch: Some(now),
                prev_time: Some(now),
                prev_ios: 0,
                prev_bytes: 0,
                ramp_over,
            };
        }
        st.next_tick.get_or_insert(now + TICK);
    }

    /// Takes the group's sample when one is due; true once the group attained steady state.
    pub fn poll(&self, now: Instant) -> bool {
        let g = &self.group;
        if g.attained() {
            return true;
        }
        let mut st = g.lock();
        if let Some(due) = st.next_tick.filter(|d| now >= *d) {
            g.tick(&mut st, now);
            let next = due + TICK;
            // After a stall the schedule starts over from now rather than catching up.
            st.next_tick = Some(if next <= now { now + TICK } else { next });
        }
        g.attained()
    }

    /// When the next sample is due (a harness wakes for it).
    pub fn next_tick(&self) -> Option<Instant> {
        self.group.lock().next_tick
    }

    /// The job stopped running: it is no longer sampled.
    pub fn stop(&self) {
        if let Some(m) = self.group.lock().members.get_mut(self.index) {
            m.probe = None;
        }
    }

    pub fn report(&self) -> SteadyReport {
        self.group.report()
    }
}

#[cfg(test)]
mod tests;
