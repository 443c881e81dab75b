//! The hot-path clock. Every operation costs two timestamps, so their price matters: on a KVM
//! guest the vDSO's clock_gettime takes 24-26 ns, while reading the TSC takes under 10. When
//! the kernel itself trusts the TSC (clocksource `tsc`, with `constant_tsc` and `nonstop_tsc`),
//! plumb reads it directly and converts ticks to nanoseconds with a factor calibrated against
//! CLOCK_MONOTONIC; otherwise it falls back to `Instant` (the vDSO), as fio does with its
//! `clocksource` option.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const UNSET: u8 = 0;
const MONOTONIC: u8 = 1;
const TSC: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(UNSET);
/// Nanoseconds per tick, as a 32.32 fixed-point number (TSC mode).
static NS_PER_TICK_FP: AtomicU64 = AtomicU64::new(1 << 32);
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// A point in time on the hot-path clock: ticks in TSC mode, ns since an epoch otherwise.
/// Only differences between stamps mean anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(u64);

/// Which clock stamps come from.
pub fn source() -> &'static str {
    init();
    if MODE.load(Relaxed) == TSC {
        "tsc"
    } else {
        "monotonic"
    }
}

/// Choose and calibrate the clock. Cheap after the first call; the harness calls it before
/// workers start so the first stamp on the hot path never pays for calibration.
pub fn init() {
    if MODE.load(Relaxed) != UNSET {
        return;
    }
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        EPOCH.get_or_init(Instant::now);
        let mode = match calibrate_tsc() {
            Some(fp) => {
                NS_PER_TICK_FP.store(fp, Relaxed);
                TSC
            }
            None => MONOTONIC,
        };
        MODE.store(mode, Relaxed);
    });
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ticks() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn ticks() -> u64 {
    0
}

fn tsc_trusted() -> bool {
    if !cfg!(target_arch = "x86_64")
        || std::env::var_os("PLUMB_CLOCK").is_some_and(|v| v == "monotonic")
    {
        return false;
    }
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    clocksource.trim() == "tsc" && has("constant_tsc") && has("nonstop_tsc")
}

/// ns per tick in 32.32 fixed point, measured over ~20 ms against CLOCK_MONOTONIC.
///
/// Both clocks are read at either end of a sleep: the TSC ticks at a constant rate through
/// it (`constant_tsc`, `nonstop_tsc`), and a spin would have cost 20 ms of CPU (a run's
/// client CPU counts it; a spin on clock_gettime was 3% of a 5 s database run's user time).
fn calibrate_tsc() -> Option<u64> {
    if !tsc_trusted() {
        return None;
    }
    let (i0, t0) = (Instant::now(), ticks());
    std::thread::sleep(Duration::from_millis(20));
    let (i1, t1) = (Instant::now(), ticks());
    let ns = i1.duration_since(i0).as_nanos() as f64;
    let dt = t1.checked_sub(t0)? as f64;
    if dt <= 0.0 {
        return None;
    }
    Some(((ns / dt) * (1u64 << 32) as f64) as u64)
}

impl Stamp {
    /// Now. Call [`init`] once before using stamps on a hot path.
    #[inline(always)]
    pub fn now() -> Stamp {
        if MODE.load(Relaxed) == TSC {
            Stamp(ticks())
        } else {
            Stamp(monotonic_ns())
        }
    }

    /// Nanoseconds from `earlier` to `self`, 0 if `earlier` is later.
    #[inline(always)]
    pub fn ns_since(self, earlier: Stamp) -> u64 {
        let d = self.0.saturating_sub(earlier.0);
        if MODE.load(Relaxed) == TSC {
            ((d as u128 * NS_PER_TICK_FP.load(Relaxed) as u128) >> 32) as u64
        } else {
            d
        }
    }

    /// This stamp moved forward by `ns` nanoseconds.
    #[inline]
    pub fn add_ns(self, ns: u64) -> Stamp {
        if MODE.load(Relaxed) == TSC {
            let fp = NS_PER_TICK_FP.load(Relaxed).max(1) as u128;
            Stamp(self.0 + (((ns as u128) << 32) / fp) as u64)
        } else {
            Stamp(self.0 + ns)
        }
    }

    /// Time left from now until this stamp (zero if it has passed).
    pub fn until(self) -> Duration {
        Duration::from_nanos(self.ns_since(Stamp::now()))
    }
}

#[inline(always)]
fn monotonic_ns() -> u64 {
    let epoch = *EPOCH.get_or_init(Instant::now);
    Instant::now().saturating_duration_since(epoch).as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_measure_elapsed_time() {
        init();
        let a = Stamp::now();
        let i = Instant::now();
        std::thread::sleep(Duration::from_millis(30));
        let b = Stamp::now();
        let real = i.elapsed().as_nanos() as f64;
        let got = b.ns_since(a) as f64;
        // Calibrated against the monotonic clock: within 2% (plus scheduling noise).
        assert!(
            (got - real).abs() / real < 0.02,
            "{got} vs {real} ({})",
            source()
        );
        assert_eq!(a.ns_since(b), 0);
    }

    #[test]
    fn add_ns_round_trips() {
        init();
        let a = Stamp::now();
        let b = a.add_ns(1_000_000);
        let d = b.ns_since(a);
        assert!((999_000..=1_001_000).contains(&d), "{d}");
    }
}
