//! What parsing reads from the machine: environment variables for `${VAR}` and the values of
//! fio's reserved words `$pagesize`, `$mb_memory` and `$ncpus`. Tests build their own.

use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Host {
    /// None reads the process environment.
    vars: Option<HashMap<String, String>>,
    pub pagesize: u64,
    /// Total RAM in MiB.
    pub mb_memory: u64,
    /// Configured CPUs.
    pub ncpus: u64,
}

impl Host {
    /// This machine and the process environment.
    pub fn real() -> Host {
        // SAFETY: sysconf has no preconditions; a -1 (unknown) is mapped to 0 below.
        let (page, pages, cpus) = unsafe {
            (
                libc::sysconf(libc::_SC_PAGESIZE),
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_NPROCESSORS_CONF),
            )
        };
        let page = u64::try_from(page).unwrap_or(0);
        let pages = u64::try_from(pages).unwrap_or(0);
        Host {
            vars: None,
            pagesize: page,
            mb_memory: page.saturating_mul(pages) / (1024 * 1024),
            ncpus: u64::try_from(cpus).unwrap_or(0),
        }
    }

    /// A fixed machine for tests.
    #[cfg(test)]
    pub fn fixed(vars: &[(&str, &str)], pagesize: u64, mb_memory: u64, ncpus: u64) -> Host {
        Host {
            vars: Some(
                vars.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            pagesize,
            mb_memory,
            ncpus,
        }
    }

    pub fn var(&self, name: &str) -> Option<String> {
        match &self.vars {
            Some(m) => m.get(name).cloned(),
            None => std::env::var(name).ok(),
        }
    }
}
