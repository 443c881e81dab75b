//! A benchmark's target: path → mount → filesystem → block device → whole disks, and whether
//! that is the disk the user probably meant.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::blockdev::{self, BlockDevice, DeviceKind};
use crate::error::{ObserveError, Result};
use crate::mountinfo::{self, Mount};
use crate::roots::{self, Roots};

/// What really stores the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A filesystem on a block device backed by hardware (or a virtual disk of a VM).
    Disk,
    /// tmpfs, ramfs, hugetlbfs: memory, no device.
    Tmpfs,
    /// A block device that is memory (zram, brd).
    Ramdisk,
    /// overlay/aufs (containers): writes go to an upper directory on another filesystem.
    Overlay,
    /// NFS, SMB, Ceph, 9p, virtiofs, ...: the data lives elsewhere.
    Network,
    Other,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Disk => "disk",
            TargetKind::Tmpfs => "tmpfs",
            TargetKind::Ramdisk => "ramdisk",
            TargetKind::Overlay => "overlay",
            TargetKind::Network => "network",
            TargetKind::Other => "other",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// As given.
    pub path: PathBuf,
    /// Absolute, symlinks resolved.
    pub resolved_path: PathBuf,
    pub kind: TargetKind,
    pub mount_point: PathBuf,
    pub fs_type: String,
    /// What was mounted ("/dev/vda1", "tmpfs", "server:/export").
    pub mount_source: String,
    /// Mount and filesystem options together.
    pub mount_options: String,
    /// For a bind mount, the directory of the source filesystem that is shown.
    pub bind_root: Option<String>,
    /// For overlay, the upper directory that receives writes (the device below is its).
    pub overlay_upper_dir: Option<PathBuf>,
    /// The block device holding the filesystem (a partition, dm or md device, or a disk).
    pub device: Option<BlockDevice>,
    /// The whole disks under it (the device itself when it is a whole disk).
    pub disks: Vec<BlockDevice>,
    /// The target shares a disk with the root filesystem.
    pub on_system_disk: Option<bool>,
    /// Whole disks under the root filesystem.
    pub system_disks: Vec<String>,
    /// Hardware disks in the machine that the target does not use.
    pub other_disks: Vec<String>,
    pub fs_size_bytes: Option<u64>,
    pub fs_free_bytes: Option<u64>,
    /// Free space an unprivileged user can use.
    pub fs_available_bytes: Option<u64>,
    /// Facts that did not fit a field ("loop device backed by /img").
    pub notes: Vec<String>,
}

impl Target {
    /// Every device a sampler should watch: the filesystem's device then its whole disks.
    pub fn sampled_devices(&self) -> Vec<String> {
        let mut v: Vec<String> = self.device.iter().map(|d| d.name.clone()).collect();
        for d in &self.disks {
            if !v.contains(&d.name) {
                v.push(d.name.clone());
            }
        }
        v
    }
}

const MEMORY_FS: &[&str] = &["tmpfs", "ramfs", "hugetlbfs", "devtmpfs", "shm"];
const OVERLAY_FS: &[&str] = &["overlay", "overlayfs", "aufs", "fuse.fuse-overlayfs"];
const NETWORK_FS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "9p",
    "virtiofs",
    "lustre",
    "gpfs",
    "afs",
    "beegfs",
    "orangefs",
    "ncpfs",
    "davfs",
    "fuse.sshfs",
    "fuse.glusterfs",
    "fuse.ceph",
    "fuse.ceph-fuse",
    "fuse.s3fs",
    "fuse.rclone",
    "fuse.davfs2",
    "fuse.gcsfuse",
    "fuse.juicefs",
    "fuse.cephfs",
];
/// Local filesystems whose st_dev is anonymous (0:N) but which live on disks.
const DISK_FS: &[&str] = &[
    "btrfs", "zfs", "bcachefs", "ext2", "ext3", "ext4", "xfs", "f2fs",
];

/// The device number of a path, the way target resolution needs it: a block device node gives
/// the device it is (st_rdev), anything else the device it lives on (st_dev).
pub type DevOf<'a> = &'a dyn Fn(&Path) -> Option<(u32, u32)>;

/// The real stat(2) version of [`DevOf`].
pub fn dev_of(path: &Path) -> Option<(u32, u32)> {
    let md = std::fs::metadata(path).ok()?;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let d = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    Some((libc::major(d), libc::minor(d)))
}

pub fn resolve_with(roots: &Roots, path: &Path) -> Result<Target> {
    let resolved = std::fs::canonicalize(path).map_err(|err| ObserveError::Path {
        path: path.to_path_buf(),
        err,
    })?;
    let dev = dev_of(&resolved);
    let mi = roots.proc("self/mountinfo");
    let mounts = mountinfo::parse(&roots::read(&mi)?);
    let mut t = classify(roots, &mounts, path, &resolved, dev, &dev_of)?;
    if let Some(s) = statvfs(&resolved) {
        t.fs_size_bytes = Some(s.0);
        t.fs_free_bytes = Some(s.1);
        t.fs_available_bytes = Some(s.2);
    }
    Ok(t)
}

/// Everything but statvfs, from mountinfo, sysfs and a device-number lookup.
pub fn classify(
    roots: &Roots,
    mounts: &[Mount],
    path: &Path,
    resolved: &Path,
    dev: Option<(u32, u32)>,
    dev_of: DevOf<'_>,
) -> Result<Target> {
    let m = mountinfo::find(mounts, resolved, dev).ok_or_else(|| ObserveError::NoMount {
        path: resolved.to_path_buf(),
    })?;
    let fs = m.fs_type.as_str();
    let mut t = Target {
        path: path.to_path_buf(),
        resolved_path: resolved.to_path_buf(),
        kind: TargetKind::Other,
        mount_point: m.mount_point.clone(),
        fs_type: m.fs_type.clone(),
        mount_source: m.source.clone(),
        mount_options: m.all_options(),
        bind_root: m.is_bind().then(|| m.root.clone()),
        overlay_upper_dir: None,
        device: None,
        disks: Vec::new(),
        on_system_disk: None,
        system_disks: Vec::new(),
        other_disks: Vec::new(),
        fs_size_bytes: None,
        fs_free_bytes: None,
        fs_available_bytes: None,
        notes: Vec::new(),
    };
    // A block device node itself (fio's filename=/dev/sdb): the device its number names,
    // not the devtmpfs it is listed in.
    let raw = dev
        .filter(|&(maj, min)| maj != 0 && (maj, min) != (m.major, m.minor))
        .filter(|_| MEMORY_FS.contains(&fs))
        .and_then(|(maj, min)| blockdev::dir_for_dev(roots, maj, min));
    let (dir, kind) = if let Some(raw) = raw {
        t.notes.push(format!(
            "{} is a block device, used directly",
            resolved.display()
        ));
        let kind = match blockdev::describe(&raw).kind {
            DeviceKind::Ramdisk => TargetKind::Ramdisk,
            DeviceKind::Loop => TargetKind::Other,
            _ => TargetKind::Disk,
        };
        (Some(raw), kind)
    } else if MEMORY_FS.contains(&fs) {
        (None, TargetKind::Tmpfs)
    } else if NETWORK_FS.contains(&fs) || fs.starts_with("nfs") {
        (None, TargetKind::Network)
    } else if OVERLAY_FS.contains(&fs) {
        // Writes land in the upper directory: its device is the one that works.
        let upper = m.super_option("upperdir").map(PathBuf::from);
        let dir = upper.as_ref().and_then(|u| {
            let um = mountinfo::find(mounts, u, dev_of(u))?;
            device_dir(roots, um, dev_of(u), dev_of)
        });
        t.overlay_upper_dir = upper;
        (dir, TargetKind::Overlay)
    } else {
        let dir = device_dir(roots, m, dev, dev_of);
        let kind = match dir.as_ref().map(|d| blockdev::describe(d).kind) {
            Some(DeviceKind::Ramdisk) => TargetKind::Ramdisk,
            Some(DeviceKind::Loop) => TargetKind::Other,
            Some(_) => TargetKind::Disk,
            None if DISK_FS.contains(&fs) => TargetKind::Disk,
            None => TargetKind::Other,
        };
        (dir, kind)
    };
    t.kind = kind;
    if let Some(dir) = dir {
        let d = blockdev::describe(&dir);
        if let Some(b) = &d.backing_file {
            t.notes
                .push(format!("{} is a loop device backed by {b}", d.name));
        }
        let disks = blockdev::whole_disks(roots, &dir);
        t.disks = disks
            .iter()
            .filter_map(|n| blockdev::dir_for_name(roots, n))
            .map(|p| blockdev::describe(&p))
            .collect();
        // A device whose disks are all memory is a ramdisk too (dm over zram).
        if t.kind == TargetKind::Disk
            && !t.disks.is_empty()
            && t.disks.iter().all(|d| d.kind == DeviceKind::Ramdisk)
        {
            t.kind = TargetKind::Ramdisk;
        }
        t.device = Some(d);
    }
    // The system disk: whatever holds "/".
    let root = Path::new("/");
    if let Some(rm) = mountinfo::find(mounts, root, dev_of(root)) {
        if let Some(rdir) = device_dir(roots, rm, dev_of(root), dev_of) {
            t.system_disks = blockdev::whole_disks(roots, &rdir);
        }
    }
    let mine: Vec<&str> = t.disks.iter().map(|d| d.name.as_str()).collect();
    if !t.system_disks.is_empty() && !mine.is_empty() {
        t.on_system_disk = Some(t.system_disks.iter().any(|s| mine.contains(&s.as_str())));
    }
    t.other_disks = blockdev::physical_disks(roots)
        .into_iter()
        .filter(|d| !mine.contains(&d.as_str()))
        .collect();
    Ok(t)
}

/// The sysfs directory of the block device behind a mount: the file's st_dev when it is a real
/// device number, else the mount source when that is a device node (btrfs and others show an
/// anonymous st_dev).
fn device_dir(
    roots: &Roots,
    m: &Mount,
    dev: Option<(u32, u32)>,
    dev_of: DevOf<'_>,
) -> Option<PathBuf> {
    let from_dev = |(maj, min): (u32, u32)| {
        (maj != 0)
            .then(|| blockdev::dir_for_dev(roots, maj, min))
            .flatten()
    };
    dev.and_then(from_dev)
        .or_else(|| from_dev((m.major, m.minor)))
        .or_else(|| {
            m.source
                .starts_with("/dev/")
                .then(|| dev_of(Path::new(&m.source)))
                .flatten()
                .and_then(from_dev)
        })
}

/// (size, free, available) in bytes.
pub fn statvfs(path: &Path) -> Option<(u64, u64, u64)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and s a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    if rc != 0 {
        return None;
    }
    let f = s.f_frsize as u64;
    Some((
        s.f_blocks as u64 * f,
        s.f_bfree as u64 * f,
        s.f_bavail as u64 * f,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blockdev::fixture::*;
    use std::collections::HashMap;

    struct Fx {
        _t: tempfile::TempDir,
        roots: Roots,
        mounts: Vec<Mount>,
        devs: HashMap<PathBuf, (u32, u32)>,
    }

    fn fx() -> Fx {
        let t = tempfile::tempdir().unwrap();
        let roots = Roots::under(t.path());
        let sys = &roots.sys_dir;
        let vda = disk(sys, "pci0/virtio1", "vda", "254:0", false);
        partition(sys, &vda, "vda1", "254:1");
        let sdb = disk(sys, "pci0/ata2", "sdb", "8:16", true);
        let sdb1 = partition(sys, &sdb, "sdb1", "8:17");
        let nvme = disk(sys, "pci0/nvme0", "nvme0n1", "259:0", false);
        let dm = virt(sys, "dm-0", "253:0", &[&sdb1, &nvme]);
        write(&dm.join("dm/name"), "vg-data\n");
        virt(sys, "zram0", "252:0", &[]);
        let mounts = mountinfo::parse(
            "\
27 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw,discard
28 27 0:23 / /dev/shm rw - tmpfs tmpfs rw,size=1g
29 27 253:0 / /data rw,noatime - xfs /dev/mapper/vg-data rw
30 27 253:0 /projects /srv/p rw - xfs /dev/mapper/vg-data rw
31 27 0:40 / /merged rw - overlay overlay rw,lowerdir=/l,upperdir=/data/up,workdir=/data/work
32 27 0:41 / /nfs rw - nfs4 srv:/e rw,vers=4.2
33 27 252:0 / /zr rw - ext4 /dev/zram0 rw
34 27 0:42 / /bt rw - btrfs /dev/sdb1 rw,ssd
",
        );
        let mut devs = HashMap::new();
        devs.insert(PathBuf::from("/"), (254, 1));
        devs.insert(PathBuf::from("/data/up"), (253, 0));
        devs.insert(PathBuf::from("/dev/sdb1"), (8, 17));
        Fx {
            _t: t,
            roots,
            mounts,
            devs,
        }
    }

    fn run(f: &Fx, p: &str, dev: Option<(u32, u32)>) -> Target {
        let lookup = |q: &Path| f.devs.get(q).copied();
        classify(
            &f.roots,
            &f.mounts,
            Path::new(p),
            Path::new(p),
            dev,
            &lookup,
        )
        .unwrap()
    }

    #[test]
    fn root_partition_is_the_system_disk() {
        let f = fx();
        let t = run(&f, "/tmp/x", Some((254, 1)));
        assert_eq!(t.kind, TargetKind::Disk);
        assert_eq!(t.fs_type, "ext4");
        assert_eq!(t.device.as_ref().unwrap().name, "vda1");
        assert_eq!(t.disks.len(), 1);
        assert_eq!(t.disks[0].name, "vda");
        assert_eq!(t.on_system_disk, Some(true));
        assert_eq!(t.system_disks, vec!["vda"]);
        assert_eq!(t.other_disks, vec!["nvme0n1", "sdb"]);
        assert_eq!(t.sampled_devices(), vec!["vda1", "vda"]);
    }

    #[test]
    fn lvm_volume_reaches_its_disks_and_is_not_the_system_disk() {
        let f = fx();
        let t = run(&f, "/data/f", Some((253, 0)));
        assert_eq!(t.kind, TargetKind::Disk);
        assert_eq!(
            t.device.as_ref().unwrap().mapped_name.as_deref(),
            Some("vg-data")
        );
        let names: Vec<_> = t.disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, vec!["nvme0n1", "sdb"]);
        assert_eq!(t.on_system_disk, Some(false));
        assert_eq!(t.other_disks, vec!["vda"]);
        // A bind mount of a subdirectory of the same filesystem.
        let b = run(&f, "/srv/p/x", Some((253, 0)));
        assert_eq!(b.bind_root.as_deref(), Some("/projects"));
        assert_eq!(b.device.as_ref().unwrap().name, "dm-0");
    }

    #[test]
    fn memory_network_overlay_ramdisk_and_anonymous_dev() {
        let f = fx();
        let shm = run(&f, "/dev/shm/a", Some((0, 23)));
        assert_eq!(shm.kind, TargetKind::Tmpfs);
        assert!(shm.device.is_none());
        assert_eq!(shm.on_system_disk, None);

        let nfs = run(&f, "/nfs/a", Some((0, 41)));
        assert_eq!(nfs.kind, TargetKind::Network);

        let ov = run(&f, "/merged/a", Some((0, 40)));
        assert_eq!(ov.kind, TargetKind::Overlay);
        assert_eq!(ov.overlay_upper_dir, Some(PathBuf::from("/data/up")));
        assert_eq!(ov.device.as_ref().unwrap().name, "dm-0");

        let zr = run(&f, "/zr/a", Some((252, 0)));
        assert_eq!(zr.kind, TargetKind::Ramdisk);

        // btrfs: st_dev is anonymous, the mount source names the device.
        let bt = run(&f, "/bt/a", Some((0, 42)));
        assert_eq!(bt.kind, TargetKind::Disk);
        assert_eq!(bt.device.as_ref().unwrap().name, "sdb1");
        assert_eq!(bt.disks[0].rotational, Some(true));
    }
}
