//! How much of a set of files is in the page cache: cachestat(2) (Linux 6.5+) where the kernel
//! has it, else mincore(2) on a read-only mapping (mapping does not fault pages in).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResidencyMethod {
    Cachestat,
    Mincore,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileResidency {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub resident_bytes: u64,
    /// cachestat only: dirty pages and pages under writeback.
    pub dirty_bytes: Option<u64>,
    pub writeback_bytes: Option<u64>,
    pub method: Option<ResidencyMethod>,
    /// Why the file could not be measured.
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResidencySnapshot {
    /// The method used for the files (cachestat, or mincore when the kernel lacks it).
    pub method: ResidencyMethod,
    pub total_bytes: u64,
    pub resident_bytes: u64,
    pub resident_pct: f64,
    /// Sum over files measured with cachestat.
    pub dirty_bytes: Option<u64>,
    pub writeback_bytes: Option<u64>,
    pub files: Vec<FileResidency>,
}

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
#[allow(dead_code)] // the kernel fills all five; plumb reads three
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// cachestat's number where the generic syscall table is used (x86_64, aarch64, riscv64).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
const SYS_CACHESTAT: Option<libc::c_long> = Some(451);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const SYS_CACHESTAT: Option<libc::c_long> = None;

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

enum Outcome {
    Done(u64, u64, u64),
    /// The kernel has no cachestat at all: stop trying it.
    NoSyscall,
    /// This file's filesystem does not support it.
    Unsupported,
}

fn cachestat(f: &File) -> Outcome {
    let Some(nr) = SYS_CACHESTAT else {
        return Outcome::NoSyscall;
    };
    let range = CachestatRange { off: 0, len: 0 };
    let mut cs = Cachestat::default();
    // SAFETY: fd is open, range and cs are valid repr(C) structs matching the kernel ABI.
    let rc = unsafe {
        libc::syscall(
            nr,
            f.as_raw_fd(),
            &range as *const CachestatRange,
            &mut cs as *mut Cachestat,
            0u32,
        )
    };
    if rc == 0 {
        let ps = page_size();
        return Outcome::Done(cs.nr_cache * ps, cs.nr_dirty * ps, cs.nr_writeback * ps);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOSYS) => Outcome::NoSyscall,
        _ => Outcome::Unsupported,
    }
}

/// Resident bytes by mincore over read-only mappings of at most 256 MiB at a time.
fn mincore(f: &File, size: u64) -> std::io::Result<u64> {
    const CHUNK: u64 = 256 << 20;
    let ps = page_size();
    let mut resident_pages = 0u64;
    let mut vec: Vec<u8> = Vec::new();
    let mut off = 0u64;
    while off < size {
        let len = (size - off).min(CHUNK);
        // SAFETY: a fresh PROT_READ shared mapping of an open file; unmapped below; the
        // mapping is never read, so pages are not faulted in.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                off as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let pages = len.div_ceil(ps) as usize;
        vec.clear();
        vec.resize(pages, 0);
        // SAFETY: addr/len is the mapping above and vec holds one byte per page.
        let rc = unsafe { libc::mincore(addr, len as usize, vec.as_mut_ptr()) };
        let err = std::io::Error::last_os_error();
        // SAFETY: unmapping exactly what was mapped.
        unsafe { libc::munmap(addr, len as usize) };
        if rc != 0 {
            return Err(err);
        }
        resident_pages += vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
        off += len;
    }
    Ok(resident_pages * ps)
}

/// Measures residency, remembering whether cachestat exists after the first try.
pub struct ResidencyProbe {
    cachestat_works: bool,
}

impl Default for ResidencyProbe {
    fn default() -> Self {
        ResidencyProbe {
            cachestat_works: SYS_CACHESTAT.is_some(),
        }
    }
}

impl ResidencyProbe {
    pub fn file(&mut self, path: &Path) -> FileResidency {
        let mut r = FileResidency {
            path: path.to_path_buf(),
            size_bytes: 0,
            resident_bytes: 0,
            dirty_bytes: None,
            writeback_bytes: None,
            method: None,
            error: None,
        };
        let f = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                r.error = Some(e.to_string());
                return r;
            }
        };
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        r.size_bytes = size;
        if self.cachestat_works {
            match cachestat(&f) {
                Outcome::Done(res, dirty, wb) => {
                    r.resident_bytes = res.min(size);
                    r.dirty_bytes = Some(dirty.min(size));
                    r.writeback_bytes = Some(wb.min(size));
                    r.method = Some(ResidencyMethod::Cachestat);
                    return r;
                }
                Outcome::NoSyscall => self.cachestat_works = false,
                Outcome::Unsupported => {}
            }
        }
        if size == 0 {
            r.method = Some(ResidencyMethod::Mincore);
            return r;
        }
        match mincore(&f, size) {
            Ok(res) => {
                r.resident_bytes = res.min(size);
                r.method = Some(ResidencyMethod::Mincore);
            }
            Err(e) => r.error = Some(format!("mincore: {e}")),
        }
        r
    }

    pub fn files(&mut self, paths: &[PathBuf]) -> ResidencySnapshot {
        let files: Vec<FileResidency> = paths.iter().map(|p| self.file(p)).collect();
        let total: u64 = files.iter().map(|f| f.size_bytes).sum();
        let resident: u64 = files.iter().map(|f| f.resident_bytes).sum();
        let cs: Vec<&FileResidency> = files
            .iter()
            .filter(|f| f.method == Some(ResidencyMethod::Cachestat))
            .collect();
        let method = if cs.is_empty() {
            ResidencyMethod::Mincore
        } else {
            ResidencyMethod::Cachestat
        };
        let sum = |g: fn(&FileResidency) -> Option<u64>| {
            (!cs.is_empty()).then(|| cs.iter().filter_map(|f| g(f)).sum())
        };
        ResidencySnapshot {
            method,
            total_bytes: total,
            resident_bytes: resident,
            resident_pct: if total == 0 {
                0.0
            } else {
                resident as f64 / total as f64 * 100.0
            },
            dirty_bytes: sum(|f| f.dirty_bytes),
            writeback_bytes: sum(|f| f.writeback_bytes),
            files,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn cached_file(dir: &Path) -> PathBuf {
        let p = dir.join("data");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        drop(f);
        // Read it back: now its pages are cached.
        let mut v = Vec::new();
        File::open(&p).unwrap().read_to_end(&mut v).unwrap();
        p
    }

    #[test]
    fn a_file_just_read_is_resident_by_either_method() {
        let t = tempfile::tempdir().unwrap();
        let p = cached_file(t.path());
        let s = ResidencyProbe::default().files(std::slice::from_ref(&p));
        assert_eq!(s.total_bytes, 1 << 20);
        assert!(s.resident_bytes > 0, "{s:?}");
        assert!(s.resident_bytes <= s.total_bytes);
        // A probe that never tries cachestat: the fallback.
        let mut mincore_only = ResidencyProbe {
            cachestat_works: false,
        };
        let m = mincore_only.files(std::slice::from_ref(&p));
        assert_eq!(m.method, ResidencyMethod::Mincore);
        assert!(m.resident_bytes > 0);
        assert_eq!(m.dirty_bytes, None);
    }

    #[test]
    fn missing_and_empty_files() {
        let t = tempfile::tempdir().unwrap();
        let empty = t.path().join("empty");
        File::create(&empty).unwrap();
        let s = ResidencyProbe::default().files(&[t.path().join("nope"), empty]);
        assert!(s.files[0].error.is_some());
        assert_eq!(s.files[1].size_bytes, 0);
        assert!(s.files[1].error.is_none());
        assert_eq!(s.resident_pct, 0.0);
    }
}
