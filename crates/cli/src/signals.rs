//! SIGINT / SIGTERM: the first one asks the run to stop and report; a second one exits at once
//! (unless [`rearm`] made the next one a first one again).

use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, OnceLock};

use plumb_core::StopFlag;

/// The first signal's number, and whether one came (a signal when it is set exits at once).
static STATE: OnceLock<(StopFlag, Arc<AtomicBool>)> = OnceLock::new();

/// Install the handlers (once) and return the flag that holds the first signal's number.
pub fn install() -> StopFlag {
    STATE
        .get_or_init(|| {
            let flag: StopFlag = Arc::new(AtomicUsize::new(0));
            let seen = Arc::new(AtomicBool::new(false));
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // Order matters: the conditional exit checks `seen` before it is set, so only
                // a second signal exits immediately.
                let code = 128 + sig;
                let _ = signal_hook::flag::register_conditional_shutdown(sig, code, seen.clone());
                let _ = signal_hook::flag::register(sig, seen.clone());
                let _ = signal_hook::flag::register_usize(sig, flag.clone(), sig as usize);
            }
            (flag, seen)
        })
        .0
        .clone()
}

/// Forget the signal that came: the next one stops the work under way (through the same
/// flag) instead of exiting. For work that must run after an interruption and that a
/// second Ctrl-C should still be able to stop cleanly (a sweep's cleanup); the caller keeps
/// the first signal's number itself.
pub fn rearm() {
    if let Some((flag, seen)) = STATE.get() {
        // The flag first: a signal between the two stores exits, as a second one did.
        flag.store(0, SeqCst);
        seen.store(false, SeqCst);
    }
}
