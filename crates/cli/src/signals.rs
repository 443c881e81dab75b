//! SIGINT / SIGTERM: the first one asks the run to stop and report; a second one exits at once
//! (unless [`rearm`] made the next one a first one again).
//!
//! A second signal within [`SAME_STOP_NS`] (50 ms) of the first is the same request: `timeout -s INT`
//! signals the program and then its whole process group, so the program gets two at once,
//! and killing it on the second would lose the report the first asked for (a sweep's
//! results and cleanup). A person pressing Ctrl-C again is far slower than that.
//!
//! SIGUSR1, under dd only: dd's info signal (see [`install_info`]). dd's SIGINT is its own
//! too (see [`install_dd`]).

use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize};
use std::sync::{Arc, OnceLock};

use plumb_core::StopFlag;

/// How close after the first a signal still counts as the same one.
const SAME_STOP_NS: u64 = 50_000_000;

/// The first signal's number, whether one came, and when (CLOCK_MONOTONIC, ns).
struct State {
    flag: StopFlag,
    seen: AtomicBool,
    at_ns: AtomicU64,
}

static STATE: OnceLock<Arc<State>> = OnceLock::new();

/// CLOCK_MONOTONIC in ns: clock_gettime is async-signal-safe.
fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec out-parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// What the handler does: only atomics, clock_gettime and _exit, all async-signal-safe.
fn on_signal(s: &State, sig: i32) {
    let now = now_ns();
    if s.seen.load(SeqCst) {
        if now.saturating_sub(s.at_ns.load(SeqCst)) > SAME_STOP_NS {
            signal_hook::low_level::exit(128 + sig);
        }
        return;
    }
    s.at_ns.store(now, SeqCst);
    s.seen.store(true, SeqCst);
    s.flag.store(sig as usize, SeqCst);
}

fn new_state() -> Arc<State> {
    Arc::new(State {
        flag: Arc::new(AtomicUsize::new(0)),
        seen: AtomicBool::new(false),
        at_ns: AtomicU64::new(0),
    })
}

/// Install the handlers (once) and return the flag that holds the first signal's number.
pub fn install() -> StopFlag {
    STATE
        .get_or_init(|| {
            let state = new_state();
            for sig in [libc::SIGINT, libc::SIGTERM] {
                let s = state.clone();
                // SAFETY: the action is async-signal-safe (see on_signal).
                let _ =
                    unsafe { signal_hook::low_level::register(sig, move || on_signal(&s, sig)) };
            }
            state
        })
        .flag
        .clone()
}

/// Forget the signal that came: the next one stops the work under way (through the same
/// flag) instead of exiting. For work that must run after an interruption and that a
/// second Ctrl-C should still be able to stop cleanly (a sweep's cleanup); the caller keeps
/// the first signal's number itself.
pub fn rearm() {
    if let Some(s) = STATE.get() {
        // The flag first: a signal between the two stores exits, as a second one did.
        s.flag.store(0, SeqCst);
        s.seen.store(false, SeqCst);
    }
}

/// dd's info signal (SIGUSR1): counted here, answered by the copy.
static INFO: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Only an atomic add: async-signal-safe.
extern "C" fn on_info(_sig: libc::c_int) {
    if let Some(n) = INFO.get() {
        n.fetch_add(1, SeqCst);
    }
}

/// Count SIGUSR1 as dd's info signal, and block it in this thread so that every thread
/// started from here on blocks it too: the one thread that unblocks it (the copy) is the
/// one the kernel interrupts. No SA_RESTART, as dd: a read waiting on a pipe returns EINTR
/// and the copy prints the statistics at once instead of when data comes. None under
/// POSIXLY_CORRECT, where dd leaves SIGUSR1 to its default action too.
pub fn install_info() -> Option<Arc<AtomicUsize>> {
    if std::env::var_os("POSIXLY_CORRECT").is_some() {
        return None;
    }
    let count = INFO.get_or_init(|| Arc::new(AtomicUsize::new(0))).clone();
    // SAFETY: sigaction and pthread_sigmask with sets built on the stack before use; the
    // handler is async-signal-safe (on_info).
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_info as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut act.sa_mask);
        act.sa_flags = 0;
        if libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut()) != 0 {
            return None;
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    Some(count)
}

/// The dd copy's thread while it copies (0: none), where dd's interrupt is sent on.
static COPIER: OnceLock<Arc<AtomicI32>> = OnceLock::new();

/// Die of `sig` as a process killed by it (what a shell and a parent see: GNU dd raises
/// its interrupt again, at its default action); `_exit(128 + sig)` should that return.
/// Async-signal-safe.
pub fn die_of(sig: i32) -> ! {
    // SAFETY: sigaction, sigprocmask and raise on a set built on the stack; all
    // async-signal-safe.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(sig, &act, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig)
    }
}

/// dd's interrupt handler: [`on_signal`]'s one stop for signals 50 ms apart, but a later
/// one dies of the signal, and the first is sent on to the copying thread, so that its
/// read or write returns EINTR at once (no SA_RESTART) wherever the kernel delivered it.
/// Only atomics, clock_gettime, getpid, gettid, tgkill and [`die_of`]: async-signal-safe.
extern "C" fn on_dd_interrupt(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler; the calls
    // are async-signal-safe.
    unsafe {
        let pid = libc::getpid();
        // Sent on by this handler in another thread: the EINTR was its point.
        if !info.is_null() && (*info).si_code == libc::SI_TKILL && (*info).si_pid() == pid {
            return;
        }
        let Some(s) = STATE.get() else {
            return;
        };
        let now = now_ns();
        if s.seen.load(SeqCst) {
            if now.saturating_sub(s.at_ns.load(SeqCst)) > SAME_STOP_NS {
                die_of(sig);
            }
            return;
        }
        s.at_ns.store(now, SeqCst);
        s.seen.store(true, SeqCst);
        s.flag.store(sig as usize, SeqCst);
        let copier = COPIER.get().map_or(0, |c| c.load(SeqCst));
        if copier != 0 && copier != libc::gettid() {
            libc::syscall(libc::SYS_tgkill, pid, copier, sig);
        }
    }
}

/// dd's interrupt: SIGINT (unless it came ignored, as dd leaves it then), and SIGTERM
/// when `term` too, handled by [`on_dd_interrupt`] instead of [`install`]'s handlers. The
/// flag holds the first one's number; the copying thread publishes itself in the second.
pub fn install_dd(term: bool) -> (StopFlag, Arc<AtomicI32>) {
    let state = STATE.get_or_init(new_state);
    let copier = COPIER.get_or_init(|| Arc::new(AtomicI32::new(0))).clone();
    let sigs: &[libc::c_int] = if term {
        &[libc::SIGINT, libc::SIGTERM]
    } else {
        &[libc::SIGINT]
    };
    for &sig in sigs {
        // SAFETY: sigaction with structs built on the stack; the handler is
        // async-signal-safe (see on_dd_interrupt).
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_dd_interrupt
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as libc::sighandler_t;
            libc::sigemptyset(&mut act.sa_mask);
            act.sa_flags = libc::SA_SIGINFO;
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
    (state.flag.clone(), copier)
}
