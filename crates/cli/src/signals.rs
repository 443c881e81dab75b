//! SIGINT / SIGTERM: the first one asks the run to stop and report; a second one exits at once.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, OnceLock};

use plumb_core::StopFlag;

static FLAG: OnceLock<StopFlag> = OnceLock::new();

/// Install the handlers (once) and return the flag that holds the first signal's number.
pub fn install() -> StopFlag {
    FLAG.get_or_init(|| {
        let flag: StopFlag = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(AtomicBool::new(false));
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // Order matters: the conditional exit checks `seen` before it is set, so only a
            // second signal exits immediately.
            let code = 128 + sig;
            let _ = signal_hook::flag::register_conditional_shutdown(sig, code, seen.clone());
            let _ = signal_hook::flag::register(sig, seen.clone());
            let _ = signal_hook::flag::register_usize(sig, flag.clone(), sig as usize);
        }
        flag
    })
    .clone()
}
