//! fio's `ioscheduler`: the I/O scheduler of the disk under each of a job's files, switched
//! before its I/O as fio 3.33's set_ioscheduler does (written to `queue/scheduler`, read
//! back, the name in brackets or the job fails), for regular files and block devices whose
//! disk fio's disk statistics would find (none under `disk_util=0`).
//!
//! Unlike fio, plumb puts every scheduler it switched back as the run ends: a benchmark
//! should not leave a disk of the machine it measured tuned otherwise (fio leaves it).

use std::io::{Read, Seek, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use plumb_observe::blockdev::dir_for_dev;
use plumb_observe::Roots;

/// The schedulers switched in this run: each `queue/scheduler` file with the one active
/// before the first switch.
static SWITCHED: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

/// A switch that did not take: fio's line for it (the job then fails with EINVAL).
pub struct Refused(pub String);

/// Switch the disks under `files` to `name`. `Ok` holds fio's notes on stderr (a kernel
/// without switching, a queue with no scheduler to choose).
pub fn switch(files: &[PathBuf], name: &str) -> Result<Vec<String>, Refused> {
    let roots = Roots::default();
    let mut notes = Vec::new();
    let mut seen = Vec::new();
    for f in files {
        let Some(queue) = queue_of(&roots, f) else {
            continue;
        };
        if seen.contains(&queue) {
            continue;
        }
        seen.push(queue.clone());
        let path = queue.join("scheduler");
        let Ok(mut file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
        else {
            notes.push("fio: os or kernel doesn't support IO scheduler switching".into());
            continue;
        };
        let mut before = String::new();
        let _ = file.read_to_string(&mut before);
        // An unknown name is refused by the write; the read-back says so either way.
        let _ = file.rewind().and_then(|()| file.write_all(name.as_bytes()));
        let mut after = String::new();
        let _ = file
            .rewind()
            .and_then(|()| file.read_to_string(&mut after).map(drop));
        let after = after.lines().next().unwrap_or("");
        if after == "none" {
            notes.push("fio: io scheduler is not tunable".into());
            continue;
        }
        if !after.contains(&format!("[{name}]")) {
            return Err(Refused(format!(
                "fio: unable to set io scheduler to {name}"
            )));
        }
        let active = plumb_observe::blockdev::active_scheduler(&before);
        let mut switched = SWITCHED.lock().unwrap_or_else(|p| p.into_inner());
        if !switched.iter().any(|(p, _)| *p == path) && active != name {
            switched.push((path, active));
        }
    }
    Ok(notes)
}

/// Put back every scheduler this run switched.
pub fn restore_all() {
    let mut switched = SWITCHED.lock().unwrap_or_else(|p| p.into_inner());
    for (path, name) in switched.drain(..) {
        let _ = std::fs::write(&path, name.as_bytes());
    }
}

/// The `queue` directory of the disk that holds `file` (a block device: itself), the
/// partition's disk for a partition; `None` for anything else (character devices, pipes,
/// a filesystem with no block device under it).
fn queue_of(roots: &Roots, file: &Path) -> Option<PathBuf> {
    // A file not made yet lives on its directory's device.
    let m = match std::fs::metadata(file) {
        Ok(m) => m,
        Err(_) => std::fs::metadata(file.parent().filter(|p| !p.as_os_str().is_empty())?).ok()?,
    };
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else if m.is_file() || m.is_dir() {
        m.dev()
    } else {
        return None;
    };
    let dir = dir_for_dev(roots, libc::major(dev), libc::minor(dev))?;
    [dir.join("queue"), dir.parent()?.join("queue")]
        .into_iter()
        .find(|q| q.is_dir())
}
