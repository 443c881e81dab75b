//! Where and how urgently a job's threads run: the CPUs they may use, their nice value and
//! their I/O priority (fio's cpus_allowed/cpumask, nice, prio/prioclass). Applied by each
//! worker thread to itself before its first request, so nothing else in the process moves.

use std::io;

/// A job's scheduling settings; the defaults change nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Placement {
    /// CPUs the threads may run on (none: wherever the process may).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// nice(2) value for the threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// I/O priority: (class 1 realtime, 2 best effort, 3 idle; level 0-7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_priority: Option<(u8, u8)>,
}

impl Placement {
    pub fn is_default(&self) -> bool {
        *self == Placement::default()
    }

    /// Apply to the calling thread.
    pub fn apply(&self) -> io::Result<()> {
        if let Some(cpus) = &self.cpus {
            // SAFETY: set is a plain bitmask, zeroed then filled with CPU_SET for valid CPUs;
            // sched_setaffinity(0) changes the calling thread only.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &c in cpus {
                    if c >= libc::CPU_SETSIZE as usize {
                        return Err(io::Error::from_raw_os_error(libc::EINVAL));
                    }
                    libc::CPU_SET(c, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        if let Some(n) = self.nice {
            // SAFETY: on Linux PRIO_PROCESS with a thread id sets that thread's nice value.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
            if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, n) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some((class, level)) = self.io_priority {
            const IOPRIO_WHO_PROCESS: libc::c_long = 1;
            const IOPRIO_CLASS_SHIFT: u32 = 13;
            let prio = ((class as libc::c_long) << IOPRIO_CLASS_SHIFT) | level as libc::c_long;
            // SAFETY: ioprio_set with who = 0 (the calling thread) and a valid priority word.
            if unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// The CPUs of a list like `0,5,8-15` (fio's cpus_allowed).
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The CPUs of a bit mask (fio's cpumask: bit N is CPU N).
pub fn cpus_of_mask(mask: u64) -> Vec<usize> {
    (0..64).filter(|b| mask >> b & 1 == 1).collect()
}

/// CPUs this process may run on now.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: set is written by sched_getaffinity before it is read.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_masks() {
        assert_eq!(parse_cpu_list("0,5,8-10"), Some(vec![0, 5, 8, 9, 10]));
        assert_eq!(parse_cpu_list("3"), Some(vec![3]));
        assert_eq!(parse_cpu_list("4-2"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(cpus_of_mask(0b101), vec![0, 2]);
    }

    #[test]
    fn a_thread_pins_itself_and_lowers_its_priority() {
        let first = allowed_cpus()[0];
        let p = Placement {
            cpus: Some(vec![first]),
            nice: Some(5),
            io_priority: Some((2, 7)),
        };
        std::thread::spawn(move || {
            p.apply().unwrap();
            assert_eq!(allowed_cpus(), vec![first]);
            // SAFETY: getpriority of the calling thread.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
            assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) }, 5);
        })
        .join()
        .unwrap();
        assert!(
            !allowed_cpus().is_empty(),
            "the test thread itself is unchanged"
        );
    }
}
