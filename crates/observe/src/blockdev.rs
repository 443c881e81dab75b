//! Block devices as sysfs describes them: what a filesystem's st_dev is (disk, partition,
//! device-mapper, md, loop, ramdisk), its queue settings, and the whole disks underneath.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::roots::{attr, attr_u64, Roots};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    Disk,
    Partition,
    DeviceMapper,
    Md,
    Loop,
    /// zram or brd: memory posing as a disk.
    Ramdisk,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name: "sda", "nvme0n1p2", "dm-0".
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub kind: DeviceKind,
    /// The device-mapper name ("vg0-data").
    pub mapped_name: Option<String>,
    /// For a partition, the disk it is on.
    pub parent: Option<String>,
    /// Members of a device-mapper or md device ("slaves" in sysfs), kernel names.
    pub members: Vec<String>,
    pub md_level: Option<String>,
    /// The file behind a loop device.
    pub backing_file: Option<String>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    /// The kernel driver of the device ("virtio_blk", "nvme", "sd").
    pub driver: Option<String>,
    pub rotational: Option<bool>,
    /// The active I/O scheduler ("mq-deadline", "none").
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    /// The largest request the kernel sends the device (queue/max_sectors_kb, in bytes): a
    /// larger I/O is cut into several.
    #[serde(default)]
    pub max_request_bytes: Option<u64>,
    /// The most memory segments one request may carry (queue/max_segments): an I/O whose
    /// buffer pages are not physically contiguous needs one per page.
    #[serde(default)]
    pub max_segments: Option<u64>,
    pub logical_block_size_bytes: Option<u64>,
    pub physical_block_size_bytes: Option<u64>,
    /// "write back" (volatile cache, flushes matter) or "write through".
    pub write_cache: Option<String>,
    pub size_bytes: Option<u64>,
    pub removable: Option<bool>,
}

/// The sysfs directory of the device with this number (`/sys/dev/block/MAJ:MIN` resolved).
pub fn dir_for_dev(roots: &Roots, major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(roots.sys(&format!("dev/block/{major}:{minor}"))).ok()
}

/// The sysfs directory of a device by kernel name: a disk under /sys/block, or a partition
/// found inside its disk's directory.
pub fn dir_for_name(roots: &Roots, name: &str) -> Option<PathBuf> {
    let direct = roots.sys(&format!("block/{name}"));
    if direct.exists() {
        return std::fs::canonicalize(direct).ok();
    }
    let class = roots.sys(&format!("class/block/{name}"));
    if class.exists() {
        return std::fs::canonicalize(class).ok();
    }
    // Partitions without /sys/class/block: look inside every disk.
    for disk in std::fs::read_dir(roots.sys("block")).ok()?.flatten() {
        let p = disk.path().join(name);
        if p.join("partition").exists() {
            return std::fs::canonicalize(p).ok();
        }
    }
    None
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn link_name(p: &Path) -> Option<String> {
    std::fs::read_link(p)
        .ok()
        .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
}

fn kind_of(dir: &Path, name: &str) -> DeviceKind {
    if dir.join("partition").exists() {
        DeviceKind::Partition
    } else if dir.join("dm").is_dir() {
        DeviceKind::DeviceMapper
    } else if dir.join("md").is_dir() {
        DeviceKind::Md
    } else if dir.join("loop").is_dir() || name.starts_with("loop") {
        DeviceKind::Loop
    } else if name.starts_with("zram") || is_brd(name) {
        DeviceKind::Ramdisk
    } else {
        DeviceKind::Disk
    }
}

/// brd ramdisks are named ram0, ram1, ...
fn is_brd(name: &str) -> bool {
    name.strip_prefix("ram")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

fn dev_numbers(dir: &Path) -> (u32, u32) {
    attr(&dir.join("dev"))
        .and_then(|d| {
            let (a, b) = d.split_once(':')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((0, 0))
}

/// Describe the device whose sysfs directory is `dir`.
pub fn describe(dir: &Path) -> BlockDevice {
    let name = name_of(dir);
    let kind = kind_of(dir, &name);
    let (major, minor) = dev_numbers(dir);
    // A partition's queue and hardware facts are its disk's.
    let hw = if kind == DeviceKind::Partition {
        dir.parent().unwrap_or(dir).to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let q = hw.join("queue");
    let members = std::fs::read_dir(dir.join("slaves"))
        .map(|rd| {
            let mut v: Vec<String> = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        })
        .unwrap_or_default();
    let mapped_name = (kind == DeviceKind::DeviceMapper)
        .then(|| attr(&dir.join("dm/name")))
        .flatten()
        .filter(|s| !s.is_empty());
    BlockDevice {
        major,
        minor,
        kind,
        mapped_name,
        parent: (kind == DeviceKind::Partition).then(|| name_of(&hw)),
        members,
        md_level: attr(&dir.join("md/level")),
        backing_file: attr(&dir.join("loop/backing_file")),
        model: attr(&hw.join("device/model")).filter(|s| !s.is_empty()),
        vendor: attr(&hw.join("device/vendor")).filter(|s| !s.is_empty()),
        driver: link_name(&hw.join("device/driver"))
            .or_else(|| link_name(&hw.join("device/device/driver"))),
        rotational: attr_u64(&q.join("rotational")).map(|v| v != 0),
        scheduler: attr(&q.join("scheduler")).map(|s| active_scheduler(&s)),
        nr_requests: attr_u64(&q.join("nr_requests")),
        max_request_bytes: attr_u64(&q.join("max_sectors_kb")).map(|k| k * 1024),
        max_segments: attr_u64(&q.join("max_segments")),
        logical_block_size_bytes: attr_u64(&q.join("logical_block_size")),
        physical_block_size_bytes: attr_u64(&q.join("physical_block_size")),
        write_cache: attr(&q.join("write_cache")),
        size_bytes: attr_u64(&dir.join("size")).map(|s| s * 512),
        removable: attr_u64(&hw.join("removable")).map(|v| v != 0),
        name,
    }
}

/// "none [mq-deadline] kyber" → "mq-deadline"; a file with one word is that word.
pub fn active_scheduler(s: &str) -> String {
    s.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .or_else(|| s.split_whitespace().next())
        .unwrap_or("")
        .to_string()
}

/// The whole disks under a device: itself for a disk, its disk for a partition, the disks of
/// all members (recursively) for device-mapper and md. Kernel names, sorted, no duplicates.
pub fn whole_disks(roots: &Roots, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    collect_disks(roots, dir, &mut out, 0);
    out.sort();
    out.dedup();
    out
}

fn collect_disks(roots: &Roots, dir: &Path, out: &mut Vec<String>, depth: usize) {
    if depth > 16 {
        return;
    }
    let name = name_of(dir);
    match kind_of(dir, &name) {
        DeviceKind::Partition => {
            if let Some(p) = dir.parent() {
                collect_disks(roots, p, out, depth + 1)
            }
        }
        DeviceKind::DeviceMapper | DeviceKind::Md => {
            let Ok(rd) = std::fs::read_dir(dir.join("slaves")) else {
                return;
            };
            for e in rd.flatten() {
                if let Ok(member) = std::fs::canonicalize(e.path()) {
                    collect_disks(roots, &member, out, depth + 1);
                } else if let Some(d) = dir_for_name(roots, &e.file_name().to_string_lossy()) {
                    collect_disks(roots, &d, out, depth + 1);
                }
            }
        }
        _ => out.push(name),
    }
}

/// Disks a user could mean to test: whole block devices backed by hardware (not virtual:
/// loop, ram, zram, dm, md live under /sys/devices/virtual), with a size, not optical drives.
pub fn physical_disks(roots: &Roots) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(roots.sys("block")) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let real = std::fs::canonicalize(e.path()).ok()?;
            let virt = real.components().any(|c| c.as_os_str() == "virtual");
            let size = attr_u64(&real.join("size")).unwrap_or(0);
            let optical = name.starts_with("sr") || name.starts_with("fd");
            let kind = kind_of(&real, &name);
            (!virt && size > 0 && !optical && kind == DeviceKind::Disk).then_some(name)
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
pub(crate) mod fixture {
    //! A fake sysfs tree: devices under devices/, links in block/ and dev/block/.
    use std::os::unix::fs::symlink;
    use std::path::Path;

    pub fn write(p: &Path, s: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }

    /// A whole disk at devices/<bus>/block/<name>.
    pub fn disk(sys: &Path, bus: &str, name: &str, dev: &str, rot: bool) -> std::path::PathBuf {
        let d = sys.join(format!("devices/{bus}/block/{name}"));
        write(&d.join("dev"), &format!("{dev}\n"));
        write(&d.join("size"), "2097152\n");
        write(&d.join("queue/rotational"), if rot { "1\n" } else { "0\n" });
        write(&d.join("queue/scheduler"), "none [mq-deadline] kyber bfq\n");
        write(&d.join("queue/nr_requests"), "256\n");
        write(&d.join("queue/max_sectors_kb"), "1280\n");
        write(&d.join("queue/max_segments"), "128\n");
        write(&d.join("queue/logical_block_size"), "512\n");
        write(&d.join("queue/physical_block_size"), "4096\n");
        write(&d.join("queue/write_cache"), "write back\n");
        write(&d.join("device/model"), "FAKE SSD 1TB    \n");
        link(sys, &d, name, dev);
        d
    }

    pub fn partition(sys: &Path, disk: &Path, name: &str, dev: &str) -> std::path::PathBuf {
        let p = disk.join(name);
        write(&p.join("dev"), &format!("{dev}\n"));
        write(&p.join("partition"), "1\n");
        write(&p.join("size"), "1024\n");
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        symlink(&p, sys.join(format!("dev/block/{dev}"))).unwrap();
        p
    }

    /// A virtual device (dm, md, loop, zram) with members given as member dirs.
    pub fn virt(sys: &Path, name: &str, dev: &str, members: &[&Path]) -> std::path::PathBuf {
        let d = sys.join(format!("devices/virtual/block/{name}"));
        write(&d.join("dev"), &format!("{dev}\n"));
        write(&d.join("size"), "4096\n");
        write(&d.join("queue/scheduler"), "none\n");
        std::fs::create_dir_all(d.join("slaves")).unwrap();
        for m in members {
            symlink(m, d.join("slaves").join(m.file_name().unwrap())).unwrap();
        }
        link(sys, &d, name, dev);
        d
    }

    fn link(sys: &Path, d: &Path, name: &str, dev: &str) {
        std::fs::create_dir_all(sys.join("block")).unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        symlink(d, sys.join(format!("block/{name}"))).unwrap();
        symlink(d, sys.join(format!("dev/block/{dev}"))).unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::*;
    use super::*;

    fn roots(t: &Path) -> Roots {
        Roots::under(t)
    }

    #[test]
    fn partition_reports_its_disk_queue_and_parent() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        let sda = disk(&r.sys_dir, "pci0/ata1", "sda", "8:0", true);
        partition(&r.sys_dir, &sda, "sda1", "8:1");
        let dir = dir_for_dev(&r, 8, 1).unwrap();
        let d = describe(&dir);
        assert_eq!(d.name, "sda1");
        assert_eq!(d.kind, DeviceKind::Partition);
        assert_eq!(d.parent.as_deref(), Some("sda"));
        assert_eq!(d.rotational, Some(true));
        assert_eq!(d.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(d.nr_requests, Some(256));
        assert_eq!(d.max_request_bytes, Some(1280 << 10));
        assert_eq!(d.max_segments, Some(128));
        assert_eq!(d.physical_block_size_bytes, Some(4096));
        assert_eq!(d.write_cache.as_deref(), Some("write back"));
        assert_eq!(d.model.as_deref(), Some("FAKE SSD 1TB"));
        assert_eq!(d.size_bytes, Some(1024 * 512));
        assert_eq!(whole_disks(&r, &dir), vec!["sda"]);
    }

    #[test]
    fn device_mapper_over_md_over_partitions_reaches_the_disks() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        let sda = disk(&r.sys_dir, "pci0/ata1", "sda", "8:0", false);
        let sdb = disk(&r.sys_dir, "pci0/ata2", "sdb", "8:16", false);
        let a1 = partition(&r.sys_dir, &sda, "sda1", "8:1");
        let b1 = partition(&r.sys_dir, &sdb, "sdb1", "8:17");
        let md = virt(&r.sys_dir, "md0", "9:0", &[&a1, &b1]);
        write(&md.join("md/level"), "raid1\n");
        let nvme = disk(&r.sys_dir, "pci0/nvme0", "nvme0n1", "259:0", false);
        let dm = virt(&r.sys_dir, "dm-0", "253:0", &[&md, &nvme]);
        write(&dm.join("dm/name"), "vg0-data\n");

        let d = describe(&dir_for_dev(&r, 253, 0).unwrap());
        assert_eq!(d.kind, DeviceKind::DeviceMapper);
        assert_eq!(d.mapped_name.as_deref(), Some("vg0-data"));
        assert_eq!(d.members, vec!["md0", "nvme0n1"]);
        assert_eq!(d.scheduler.as_deref(), Some("none"));
        assert_eq!(
            whole_disks(&r, &dir_for_dev(&r, 253, 0).unwrap()),
            vec!["nvme0n1", "sda", "sdb"]
        );
        let m = describe(&dir_for_dev(&r, 9, 0).unwrap());
        assert_eq!(m.kind, DeviceKind::Md);
        assert_eq!(m.md_level.as_deref(), Some("raid1"));
        // Physical disks: the three hardware disks, not md0 or dm-0.
        assert_eq!(physical_disks(&r), vec!["nvme0n1", "sda", "sdb"]);
    }

    #[test]
    fn ramdisks_and_loops_are_recognised() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        let z = virt(&r.sys_dir, "zram0", "253:0", &[]);
        let b = virt(&r.sys_dir, "ram0", "1:0", &[]);
        let l = virt(&r.sys_dir, "loop0", "7:0", &[]);
        write(&l.join("loop/backing_file"), "/var/img/disk.img\n");
        assert_eq!(describe(&z).kind, DeviceKind::Ramdisk);
        assert_eq!(describe(&b).kind, DeviceKind::Ramdisk);
        let ld = describe(&l);
        assert_eq!(ld.kind, DeviceKind::Loop);
        assert_eq!(ld.backing_file.as_deref(), Some("/var/img/disk.img"));
        assert!(physical_disks(&r).is_empty());
        assert!(!is_brd("ramfs"));
    }

    #[test]
    fn scheduler_word() {
        assert_eq!(active_scheduler("none [mq-deadline] kyber"), "mq-deadline");
        assert_eq!(active_scheduler("none"), "none");
        assert_eq!(active_scheduler("[none] bfq"), "none");
    }
}
