//! A small tmpfs mounted for a test, where writes run out of space (ENOSPC) after a few
//! MiB. Mounting needs root: elsewhere the test is skipped with a line, under CI
//! (`CI=true`) it fails.

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

use super::peers::under_ci;

/// A tmpfs of a few MiB mounted on a fresh directory, unmounted when dropped.
pub struct SmallFs {
    dir: TempDir,
}

impl SmallFs {
    pub fn mount(mib: u64) -> Option<SmallFs> {
        let dir = TempDir::new().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(!under_ci(), "CI must be able to mount a tmpfs");
            eprintln!("skipping: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(SmallFs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Remove everything in it (files only: the tests make no directories there).
    pub fn clear(&self) {
        for e in std::fs::read_dir(self.path()).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
    }

    /// Take every byte still free with a file named `name`.
    pub fn fill_up(&self, name: &str) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path().join(name)).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        // A process that used io_uring on the files has exited, but the kernel releases the
        // ring's file references in a worker of its own a moment later: until then the
        // unmount fails as busy, and a mount left behind would outlive the test.
        for _ in 0..200 {
            let done = Command::new("umount")
                .arg(self.dir.path())
                .output()
                .is_ok_and(|o| o.status.success());
            if done {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
