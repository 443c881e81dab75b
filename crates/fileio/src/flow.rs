//! fio's flow control (`flow_id`, `flow`, `flow_sleep`): jobs that share a flow id issue
//! requests in the ratio of their weights.
//!
//! As fio 3.33 does it (flow.c): every job adds its weight to its flow when the run is set
//! up (fio's add_job), so a job still waiting for its turn (a later stonewall group) holds
//! its share too; a job that ends takes its weight and its requests back out when fio's
//! main thread reaps it (flow_exit_job), which looks every 10 ms: until then the others
//! stay held as before, so jobs that end within a few milliseconds of each other keep their
//! ratio to the end (plumb's jobs of a group start a millisecond or so apart, and one
//! running free for that long would skew the counts by thousands of requests). Before each request a job compares its share of
//! the flow's requests (the flow's count starts at 1) with its share of the weight, and
//! over it, it waits and asks again (flow_threshold_exceeded): `flow_sleep` microseconds
//! after completing what it has in flight, or, with no sleep, at once (fio spins; plumb
//! yields the CPU between two asks, so that on few cores the jobs it waits for can run).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long an ended job stays in its flow: fio's main thread reaps ended jobs every 10 ms.
const REAPED_AFTER: Duration = Duration::from_millis(10);

/// One flow id's jobs.
#[derive(Debug)]
pub struct Flow {
    /// Requests of its jobs, plus one.
    issued: AtomicU64,
    weight: AtomicU64,
    /// Jobs ended and not reaped yet: when they go, their requests and weight.
    ended: Mutex<Vec<(Instant, u64, u64)>>,
    any_ended: AtomicBool,
}

impl Flow {
    fn new() -> Flow {
        Flow {
            issued: AtomicU64::new(1),
            weight: AtomicU64::new(0),
            ended: Mutex::new(Vec::new()),
            any_ended: AtomicBool::new(false),
        }
    }

    /// Take out the ended jobs whose time has come.
    #[cold]
    fn reap(&self) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        ended.retain(|&(at, issued, weight)| {
            if at > now {
                return true;
            }
            self.issued.fetch_sub(issued, Relaxed);
            self.weight.fetch_sub(weight, Relaxed);
            false
        });
        self.any_ended.store(!ended.is_empty(), Relaxed);
    }
}

/// The flows of one run, by id.
#[derive(Debug, Default)]
pub struct Flows(Mutex<HashMap<u32, Arc<Flow>>>);

impl Flows {
    /// Flow `id`, one job of `weight` added to it.
    pub fn join(&self, id: u32, weight: u32) -> Arc<Flow> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let flow = all.entry(id).or_insert_with(|| Arc::new(Flow::new()));
        flow.weight.fetch_add(u64::from(weight), Relaxed);
        flow.clone()
    }
}

/// A job's place in a flow.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FlowSpec {
    pub id: u32,
    pub weight: u32,
    /// Microseconds to sleep when held back (0: ask again at once).
    pub sleep_us: u64,
    /// The flow it joined (none in a record read back: it ran then).
    #[serde(skip)]
    pub flow: Option<Arc<Flow>>,
}

impl PartialEq for FlowSpec {
    fn eq(&self, other: &FlowSpec) -> bool {
        (self.id, self.weight, self.sleep_us) == (other.id, other.weight, other.sleep_us)
    }
}

/// One job's gate into its flow, for its worker thread. Dropped when the job ends, it
/// takes the job's weight and requests back out of the flow.
#[derive(Debug)]
pub struct Gate {
    flow: Arc<Flow>,
    weight: u64,
    mine: u64,
    pub sleep: Duration,
}

impl Gate {
    pub fn new(spec: &FlowSpec) -> Option<Gate> {
        Some(Gate {
            flow: spec.flow.clone()?,
            weight: u64::from(spec.weight),
            mine: 0,
            sleep: Duration::from_micros(spec.sleep_us),
        })
    }

    /// Whether the job may issue a request now (then counted), or is over its share.
    #[inline]
    pub fn pass(&mut self) -> bool {
        if self.flow.any_ended.load(Relaxed) {
            self.flow.reap();
        }
        let all = self.flow.issued.load(Relaxed);
        let weight = self.flow.weight.load(Relaxed);
        // mine / all > weight / total, without a division.
        if u128::from(self.mine) * u128::from(weight) > u128::from(self.weight) * u128::from(all) {
            return false;
        }
        self.flow.issued.fetch_add(1, Relaxed);
        self.mine += 1;
        true
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let mut ended = self.flow.ended.lock().unwrap_or_else(|e| e.into_inner());
        ended.push((Instant::now() + REAPED_AFTER, self.mine, self.weight));
        self.flow.any_ended.store(true, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(flows: &Flows, weight: u32) -> Gate {
        Gate::new(&FlowSpec {
            id: 1,
            weight,
            sleep_us: 0,
            flow: Some(flows.join(1, weight)),
        })
        .unwrap()
    }

    #[test]
    fn jobs_pass_in_the_ratio_of_their_weights() {
        let flows = Flows::default();
        let (mut a, mut b) = (gate(&flows, 1), gate(&flows, 3));
        let (mut na, mut nb) = (0, 0);
        // Both ask as fast as they can, in turn.
        for _ in 0..4000 {
            na += u32::from(a.pass());
            nb += u32::from(b.pass());
        }
        assert!((2990..=3010).contains(&(nb * 1000 / na)), "{na} {nb}");
        // One that ends frees the others once it is reaped, 10 ms later; then one job
        // alone in its flow always passes.
        drop(b);
        let before = na;
        for _ in 0..100 {
            na += u32::from(a.pass());
        }
        assert!(na - before < 5, "{}", na - before);
        std::thread::sleep(REAPED_AFTER);
        let before = na;
        for _ in 0..100 {
            na += u32::from(a.pass());
        }
        assert_eq!(na - before, 100);
        assert_eq!(flows.join(2, 5).issued.load(Relaxed), 1);
    }

    #[test]
    fn a_job_not_running_yet_holds_its_share() {
        let flows = Flows::default();
        let mut a = gate(&flows, 1);
        let _waiting = flows.join(1, 1);
        // Half the weight: a passes while it holds at most half the count (which starts
        // at 1), so twice, then waits for the other.
        let passed = (0..10).filter(|_| a.pass()).count();
        assert_eq!(passed, 2);
    }
}
