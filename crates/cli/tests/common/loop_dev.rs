//! A loop device over a file of its own, for tests that need a block device no other
//! test or disk of the machine shares. Needs root and losetup: elsewhere the test is
//! skipped with a line, under CI (`CI=true`) it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use super::peers::under_ci;

/// A loop device over a file of `mib` MiB, detached when dropped.
pub struct LoopDev {
    pub dev: PathBuf,
    _backing: TempDir,
}

impl LoopDev {
    pub fn new(mib: u64) -> Option<LoopDev> {
        let backing = TempDir::new().unwrap();
        let img = backing.path().join("disk.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(mib << 20)
            .unwrap();
        match Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
        {
            Ok(o) if o.status.success() => Some(LoopDev {
                dev: PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
                _backing: backing,
            }),
            _ => {
                assert!(
                    !under_ci(),
                    "CI must be able to set up a loop device (root and losetup)"
                );
                eprintln!("skipping: cannot set up a loop device here (needs root and losetup)");
                None
            }
        }
    }

    /// Its sysfs `queue/scheduler` file.
    pub fn scheduler_file(&self) -> PathBuf {
        Path::new("/sys/block")
            .join(self.dev.file_name().unwrap())
            .join("queue/scheduler")
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}
