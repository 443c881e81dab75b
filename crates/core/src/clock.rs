//! The hot-path clock. Every operation costs two timestamps, so their price matters: on a KVM
//! guest the vDSO's clock_gettime takes 24-26 ns, while reading the TSC takes under 10. When
//! the kernel itself trusts the TSC (clocksource `tsc`, with `constant_tsc` and `nonstop_tsc`),
//! plumb reads it directly and converts ticks to nanoseconds with a factor calibrated against
//! CLOCK_MONOTONIC; otherwise it falls back to `Instant` (the vDSO), as fio does with its
//! `clocksource` option.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const UNSET: u8 = 0;
const MONOTONIC: u8 = 1;
const TSC: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(UNSET);
/// CLOCK_MONOTONIC asked for even where the TSC is trusted ([`prefer`]).
static MONOTONIC_ASKED: AtomicBool = AtomicBool::new(false);
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

/// How long the calibration watches both clocks at least.
const CALIBRATION: Duration = Duration::from_millis(20);

/// The calibration's first readings of both clocks, when the TSC is trusted (taken by
/// [`begin`]).
static FIRST: OnceLock<Option<(Instant, u64)>> = OnceLock::new();

/// Start the calibration: decide whether the TSC is trusted and read both clocks once.
/// [`init`] reads them again and waits only for what is left of the calibration's 20 ms,
/// so work done in between (a run's setup) takes the place of the wait, and the longer
/// span only makes the factor more accurate. Cheap after the first call.
pub fn begin() {
    FIRST.get_or_init(|| tsc_trusted().then(|| (Instant::now(), ticks())));
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
        begin();
        let mode = match FIRST.get().copied().flatten().and_then(calibrate_tsc) {
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

/// The clock a front end asks for (fio's `clocksource`): the TSC where the kernel trusts it
/// (`Tsc`, the default), or CLOCK_MONOTONIC (`Monotonic`). The last call before the clock
/// is chosen ([`begin`]) decides; after that it changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preference {
    Tsc,
    Monotonic,
}

pub fn prefer(p: Preference) {
    MONOTONIC_ASKED.store(p == Preference::Monotonic, Relaxed);
}

/// Whether the TSC can time requests here (x86-64, and the kernel's own clocksource is
/// `tsc` with `constant_tsc` and `nonstop_tsc`).
pub fn tsc_usable() -> bool {
    cfg!(target_arch = "x86_64") && tsc_trusted_by_kernel()
}

fn tsc_trusted() -> bool {
    if MONOTONIC_ASKED.load(Relaxed)
        || std::env::var_os("PLUMB_CLOCK").is_some_and(|v| v == "monotonic")
    {
        return false;
    }
    tsc_usable()
}

fn tsc_trusted_by_kernel() -> bool {
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

/// ns per tick in 32.32 fixed point, measured against CLOCK_MONOTONIC from `(i0, t0)`
/// ([`begin`]'s readings) over at least 20 ms.
///
/// Both clocks are read at either end of a span the thread spends doing other work or
/// asleep: the TSC ticks at a constant rate through it (`constant_tsc`, `nonstop_tsc`), and
/// a spin would have cost 20 ms of CPU (a run's client CPU counts it; a spin on
/// clock_gettime was 3% of a 5 s database run's user time).
fn calibrate_tsc((i0, t0): (Instant, u64)) -> Option<u64> {
    std::thread::sleep(CALIBRATION.saturating_sub(i0.elapsed()));
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
    fn a_calibration_begun_earlier_waits_only_for_the_rest() {
        let (i0, t0) = (Instant::now() - Duration::from_millis(50), ticks());
        // Readings that claim 50 ms have passed already: no sleep, and the factor comes
        // out of the real ticks over the (claimed) span.
        let t = Instant::now();
        let fp = calibrate_tsc((i0, t0));
        assert!(t.elapsed() < CALIBRATION, "{:?}", t.elapsed());
        if cfg!(target_arch = "x86_64") {
            // The claimed span is longer than the ticks say: more ns per tick than real.
            let real = {
                let (i, t) = (Instant::now(), ticks());
                calibrate_tsc((i, t)).unwrap()
            };
            assert!(fp.unwrap() > real, "{fp:?} {real}");
        }
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
