//! A worker thread leaves glibc's restartable-sequences registration.
//!
//! glibc (2.35 and later) registers every thread with the kernel's rseq(2) so that
//! `sched_getcpu` can read the CPU from memory. The price is paid at every context switch:
//! the kernel marks the thread to update that memory on its way back to user space, and the
//! pass it then makes (`exit_to_user_mode_loop`: the rseq update with its user-memory reads
//! and writes, the block cgroup throttle check) runs once per wakeup. A database worker
//! sleeps and wakes once per statement, so on this machine that pass was 4% of plumb's CPU
//! per point select (perf; docs/performance.md, "Session 23"), all of it for a feature no
//! worker uses. Unregistered, glibc's `sched_getcpu` falls back to the vDSO call (the kernel
//! sets the area's cpu_id to -1, which glibc checks), so nothing in the process breaks.
//!
//! Best effort: where the C library exports no registration (another libc, an older glibc,
//! `glibc.pthread.rseq=0`) or the kernel refuses, the thread stays as it was.

/// The signature glibc registers with (`RSEQ_SIG`), which the kernel checks on
/// unregistration.
#[cfg(target_arch = "x86_64")]
const RSEQ_SIG: u32 = 0x5305_3053;
#[cfg(target_arch = "aarch64")]
const RSEQ_SIG: u32 = 0xd428_bc00;

const RSEQ_FLAG_UNREGISTER: libc::c_int = 1;

/// The length glibc 2.35-2.39 registers with; later versions (and Debian 12's 2.36 by a
/// backport) export a smaller `__rseq_size`, the features' size, and still register at least
/// this much.
const RSEQ_MIN_LEN: u32 = 32;

/// Where glibc put this thread's rseq area (`__rseq_offset` from the thread pointer) and
/// the size it exports, or None where it exports none.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn glibc_registration() -> Option<(isize, u32)> {
    use std::sync::OnceLock;
    static FOUND: OnceLock<Option<(isize, u32)>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names; the symbols, when
        // present, are glibc's `const ptrdiff_t __rseq_offset` and `const unsigned int
        // __rseq_size`, read once.
        unsafe {
            let off = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr());
            let size = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr());
            if off.is_null() || size.is_null() {
                return None;
            }
            let size = *(size as *const u32);
            (size > 0).then(|| (*(off as *const isize), size))
        }
    })
}

/// The thread pointer glibc's `__rseq_offset` is relative to.
#[cfg(target_arch = "x86_64")]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: on x86-64 glibc the word at %fs:0 is the thread control block's pointer to
    // itself, the thread pointer.
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
    };
    tp
}

#[cfg(target_arch = "aarch64")]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: reading TPIDR_EL0 has no side effects.
    unsafe {
        std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nomem, nostack, preserves_flags))
    };
    tp
}

/// Unregisters the calling thread from rseq; true when it was registered and now is not.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn leave() -> bool {
    let Some((offset, size)) = glibc_registration() else {
        return false;
    };
    let area = thread_pointer().wrapping_add_signed(offset);
    let registered = RSEQ_MIN_LEN.max(size);
    [registered, size][..if size == registered { 1 } else { 2 }]
        .iter()
        .any(|&len| {
            // SAFETY: rseq(2) unregistration only compares the arguments with the thread's
            // registration and, when they match, writes the area glibc owns for this thread.
            unsafe { libc::syscall(libc::SYS_rseq, area, len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0 }
        })
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn leave() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_left_still_knows_its_cpu_and_cannot_leave_twice() {
        std::thread::spawn(|| {
            let registered = glibc_registration().is_some();
            assert_eq!(leave(), registered);
            // Left, or never registered: nothing more to leave.
            assert!(!leave());
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = unsafe { libc::sched_getcpu() };
            assert!(cpu >= 0, "sched_getcpu after leaving: {cpu}");
        })
        .join()
        .unwrap();
    }
}
