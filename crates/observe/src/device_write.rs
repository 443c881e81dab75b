//! Before writing to a block device: is it, or a partition of it, in use (mounted, swap),
//! or does it hold data (a filesystem, LVM or LUKS signature, a partition table)?
//!
//! fio checks only that the node it is given is mounted (fio#1382: a disk whose partition is
//! mounted passes); plumb also looks at the device's partitions and at its first sectors.
//! Device-mapper or md devices built on top of the disk are not followed.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::blockdev::dir_for_dev;
use crate::mountinfo::{self, Mount};
use crate::roots::{attr, Roots};

/// A device number, (major, minor).
pub type Dev = (u32, u32);

/// What makes writing to the device destructive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// The device, or its partition `node`, is mounted at `mount_point`.
    Mounted { node: PathBuf, mount_point: PathBuf },
    /// The device, or its partition `node`, is in use as swap.
    Swap { node: PathBuf },
    /// A signature at `offset` bytes: what it marks ("an ext4 filesystem", "an LVM physical
    /// volume", "an MBR partition table").
    Signature { what: &'static str, offset: u64 },
    /// The device could not be read, so it could not be checked.
    Unreadable { why: String },
}

/// Why plumb will not write to a device. Its Display is one line for the user.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct DeviceRefusal {
    pub device: PathBuf,
    pub found: Found,
    /// How the front end spells the override ("allow_mounted_write=1").
    pub override_setting: String,
}

impl fmt::Display for DeviceRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dev = self.device.display();
        let of_it = |node: &Path| {
            if node == self.device {
                String::new()
            } else {
                format!(" (its partition {})", node.display())
            }
        };
        match &self.found {
            Found::Mounted { node, mount_point } => write!(
                f,
                "{dev} is mounted on {}{}",
                mount_point.display(),
                of_it(node)
            )?,
            Found::Swap { node } => write!(f, "{dev} is in use as swap{}", of_it(node))?,
            Found::Signature { what, offset } => {
                write!(f, "{dev} holds {what} (signature at byte {offset})")?
            }
            Found::Unreadable { why } => write!(
                f,
                "{dev} cannot be read to check that it holds no data ({why})"
            )?,
        }
        write!(
            f,
            "; plumb will not write to it unless {}",
            self.override_setting
        )
    }
}

/// Refuse to write to `path` when it is a block device that is in use or holds data (see
/// the module). Anything that is not a block device (a regular file, a path not created
/// yet) passes. `override_setting` is how the front end spells the option that skips this
/// check, for the message.
pub fn check_device_write(path: &Path, override_setting: &str) -> Result<(), DeviceRefusal> {
    check_device_write_in(&Roots::default(), path, override_setting)
}

/// [`check_device_write`] with /proc and /sys under `roots`.
pub fn check_device_write_in(
    roots: &Roots,
    path: &Path,
    override_setting: &str,
) -> Result<(), DeviceRefusal> {
    let refuse = |found| {
        Err(DeviceRefusal {
            device: path.to_path_buf(),
            found,
            override_setting: override_setting.to_string(),
        })
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_block_device() {
        return Ok(());
    }
    let dev = split_dev(meta.rdev());
    let mut devs = vec![(dev, path.to_path_buf())];
    devs.extend(partitions(roots, dev));
    let mountinfo = std::fs::read_to_string(roots.proc("self/mountinfo")).unwrap_or_default();
    let swaps = std::fs::read_to_string(roots.proc("swaps")).unwrap_or_default();
    if let Some(found) = in_use(&mountinfo, &swaps, &devs, rdev_of) {
        return refuse(found);
    }
    match File::open(path).and_then(signature) {
        Ok(Some(found)) => refuse(found),
        Ok(None) => Ok(()),
        Err(e) => refuse(Found::Unreadable { why: e.to_string() }),
    }
}

fn split_dev(rdev: u64) -> Dev {
    (libc::major(rdev), libc::minor(rdev))
}

/// The device number of the block device node at `p`.
fn rdev_of(p: &Path) -> Option<Dev> {
    let m = std::fs::metadata(p).ok()?;
    m.file_type().is_block_device().then(|| split_dev(m.rdev()))
}

/// The partitions of the disk `dev` as sysfs lists them, with their /dev nodes (named as
/// the kernel names them).
fn partitions(roots: &Roots, dev: Dev) -> Vec<(Dev, PathBuf)> {
    let Some(dir) = dir_for_dev(roots, dev.0, dev.1) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if !p.join("partition").exists() {
            continue;
        }
        let Some(d) = attr(&p.join("dev")).and_then(|d| {
            let (a, b) = d.split_once(':')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        }) else {
            continue;
        };
        out.push((d, Path::new("/dev").join(e.file_name())));
    }
    out.sort();
    out
}

/// Whether one of `devs` (device number, node) is mounted (per `mountinfo`) or a swap area
/// (per `swaps`, /proc/swaps). A mount matches by its device number or by its source, a
/// device node resolved with `rdev_of` (btrfs reports an anonymous device number).
pub(crate) fn in_use(
    mountinfo: &str,
    swaps: &str,
    devs: &[(Dev, PathBuf)],
    rdev_of: impl Fn(&Path) -> Option<Dev>,
) -> Option<Found> {
    let node_of = |d: Dev| devs.iter().find(|(x, _)| *x == d).map(|(_, n)| n.clone());
    let mounts: Vec<Mount> = mountinfo::parse(mountinfo);
    for m in &mounts {
        let by_number = node_of((m.major, m.minor));
        let by_source = || {
            m.source
                .starts_with('/')
                .then(|| rdev_of(Path::new(&m.source)))
                .flatten()
                .and_then(node_of)
        };
        if let Some(node) = by_number.or_else(by_source) {
            return Some(Found::Mounted {
                node,
                mount_point: m.mount_point.clone(),
            });
        }
    }
    for path in swap_paths(swaps) {
        if let Some(node) = rdev_of(&path).and_then(node_of) {
            return Some(Found::Swap { node });
        }
    }
    None
}

/// The swap areas /proc/swaps lists (the header line first; names escape a space as \040).
pub(crate) fn swap_paths(swaps: &str) -> Vec<PathBuf> {
    swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|p| PathBuf::from(p.replace("\\040", " ")))
        .collect()
}

/// How much of the device start the signatures span (btrfs's at 64 KiB is the furthest).
const HEAD: usize = 65600 + 8;

/// The first signature found in what `r` reads from its start, if any.
pub(crate) fn signature<R: Read>(mut r: R) -> io::Result<Option<Found>> {
    let mut head = Vec::with_capacity(HEAD);
    r.by_ref().take(HEAD as u64).read_to_end(&mut head)?;
    Ok(find_signature(&head))
}

fn at(head: &[u8], offset: usize, magic: &[u8]) -> bool {
    head.get(offset..offset + magic.len()) == Some(magic)
}

fn le32(head: &[u8], offset: usize) -> u32 {
    head.get(offset..offset + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn find_signature(head: &[u8]) -> Option<Found> {
    let sig = |what, offset: usize| {
        Some(Found::Signature {
            what,
            offset: offset as u64,
        })
    };
    if at(head, 0, b"LUKS\xba\xbe") {
        return sig("a LUKS encrypted volume", 0);
    }
    if at(head, 0, b"XFSB") {
        return sig("an XFS filesystem", 0);
    }
    // The ext2/3/4 superblock is at 1024, its magic 0xEF53 at 56 into it.
    if at(head, 1080, &[0x53, 0xef]) {
        let compat = le32(head, 1024 + 0x5c);
        let incompat = le32(head, 1024 + 0x60);
        // extents, 64bit, flex_bg: ext4; a journal without them: ext3.
        let what = if incompat & (0x40 | 0x80 | 0x200) != 0 {
            "an ext4 filesystem"
        } else if compat & 0x4 != 0 {
            "an ext3 filesystem"
        } else {
            "an ext2 filesystem"
        };
        return sig(what, 1080);
    }
    if at(head, 65600, b"_BHRfS_M") {
        return sig("a btrfs filesystem", 65600);
    }
    // Swap's signature ends the first page; pages of 4, 16 and 64 KiB.
    for page in [4096usize, 16384, 65536] {
        for magic in [&b"SWAPSPACE2"[..], b"SWAP-SPACE"] {
            if at(head, page - 10, magic) {
                return sig("a swap area", page - 10);
            }
        }
    }
    for sector in 0..4 {
        if at(head, sector * 512, b"LABELONE") {
            return sig("an LVM physical volume", sector * 512);
        }
    }
    // GPT header in LBA 1, for 512-byte and 4 KiB sectors.
    for lba1 in [512, 4096] {
        if at(head, lba1, b"EFI PART") {
            return sig("a GPT partition table", lba1);
        }
    }
    if at(head, 510, &[0x55, 0xaa]) {
        if at(head, 3, b"NTFS    ") {
            return sig("an NTFS filesystem", 3);
        }
        if at(head, 82, b"FAT32   ") {
            return sig("a FAT32 filesystem", 82);
        }
        if at(head, 54, b"FAT12   ") || at(head, 54, b"FAT16   ") || at(head, 54, b"FAT     ") {
            return sig("a FAT filesystem", 54);
        }
        // Four 16-byte entries from 446; an entry is used when its type byte is not 0.
        if (0..4).any(|i| head.get(446 + i * 16 + 4).is_some_and(|&t| t != 0)) {
            return sig("an MBR partition table", 510);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    /// A zeroed file of 128 KiB with `magic` written at each offset, read back through the
    /// reader the device check uses.
    /// Bytes to write at an offset.
    type Patch<'a> = (u64, &'a [u8]);

    fn detect(writes: &[Patch<'_>]) -> Option<Found> {
        let mut f = tempfile::tempfile().unwrap();
        f.set_len(128 << 10).unwrap();
        for (off, magic) in writes {
            f.seek(SeekFrom::Start(*off)).unwrap();
            f.write_all(magic).unwrap();
        }
        f.seek(SeekFrom::Start(0)).unwrap();
        signature(f).unwrap()
    }

    fn what(found: Option<Found>) -> Option<(&'static str, u64)> {
        match found? {
            Found::Signature { what, offset } => Some((what, offset)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn filesystem_and_volume_signatures_are_found_where_they_live() {
        let cases: [(&[Patch<'_>], &str, u64); 14] = [
            (&[(1080, &[0x53, 0xef])], "an ext2 filesystem", 1080),
            (
                &[(1080, &[0x53, 0xef]), (1024 + 0x5c, &[4, 0, 0, 0])],
                "an ext3 filesystem",
                1080,
            ),
            (
                &[(1080, &[0x53, 0xef]), (1024 + 0x60, &[0x40, 0x02, 0, 0])],
                "an ext4 filesystem",
                1080,
            ),
            (&[(0, b"XFSB")], "an XFS filesystem", 0),
            (&[(65600, b"_BHRfS_M")], "a btrfs filesystem", 65600),
            (&[(4086, b"SWAPSPACE2")], "a swap area", 4086),
            (&[(65526, b"SWAPSPACE2")], "a swap area", 65526),
            (&[(512, b"LABELONE")], "an LVM physical volume", 512),
            (&[(0, b"LUKS\xba\xbe")], "a LUKS encrypted volume", 0),
            (
                &[(3, b"NTFS    "), (510, &[0x55, 0xaa])],
                "an NTFS filesystem",
                3,
            ),
            (
                &[(82, b"FAT32   "), (510, &[0x55, 0xaa])],
                "a FAT32 filesystem",
                82,
            ),
            (
                &[(54, b"FAT16   "), (510, &[0x55, 0xaa])],
                "a FAT filesystem",
                54,
            ),
            (
                &[(446 + 16 + 4, &[0x83]), (510, &[0x55, 0xaa])],
                "an MBR partition table",
                510,
            ),
            (
                &[(512, b"EFI PART"), (446 + 4, &[0xee]), (510, &[0x55, 0xaa])],
                "a GPT partition table",
                512,
            ),
        ];
        for (writes, name, offset) in cases {
            assert_eq!(what(detect(writes)), Some((name, offset)), "{name}");
        }
    }

    #[test]
    fn blank_devices_and_near_misses_pass() {
        assert_eq!(detect(&[]), None);
        // A boot signature over an empty partition table is not a partition table.
        assert_eq!(detect(&[(510, &[0x55, 0xaa])]), None);
        // Magic one byte off its place, or only part of it.
        assert_eq!(detect(&[(1081, &[0x53, 0xef])]), None);
        assert_eq!(detect(&[(65600, b"_BHRfS_")]), None);
        assert_eq!(detect(&[(4087, b"SWAPSPACE2")]), None);
        assert_eq!(detect(&[(2048, b"LABELONE")]), None);
        // A device shorter than the signatures' span is read as far as it goes.
        assert_eq!(signature(&b"XFSB"[..]).unwrap(), sig_xfs());
        assert_eq!(signature(&b"XFS"[..]).unwrap(), None);
    }

    fn sig_xfs() -> Option<Found> {
        Some(Found::Signature {
            what: "an XFS filesystem",
            offset: 0,
        })
    }

    const MOUNTINFO: &str = "\
22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro
25 22 0:22 / /proc rw,nosuid - proc proc rw
30 22 253:17 / /data rw,relatime shared:5 - xfs /dev/vdb1 rw,attr2
31 22 0:45 / /pool rw,relatime shared:6 - btrfs /dev/vdc rw,space_cache=v2
32 22 0:46 / /mnt/with\\040space rw - ext4 /dev/vde rw
";

    const SWAPS: &str = "\
Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/vdd2                               partition\t1048572\t\t0\t\t-2
";

    /// Device nodes the fixture names, as if stat'ed.
    fn fake_rdev(p: &Path) -> Option<Dev> {
        Some(match p.to_str()? {
            "/dev/vda1" => (254, 1),
            "/dev/vdb1" => (253, 17),
            "/dev/vdc" => (253, 32),
            "/dev/vdd2" => (253, 50),
            "/dev/vde" => (253, 64),
            _ => return None,
        })
    }

    fn check(devs: &[(Dev, &str)]) -> Option<Found> {
        let devs: Vec<(Dev, PathBuf)> = devs.iter().map(|(d, n)| (*d, PathBuf::from(n))).collect();
        in_use(MOUNTINFO, SWAPS, &devs, fake_rdev)
    }

    #[test]
    fn a_disk_is_in_use_when_it_or_one_of_its_partitions_is_mounted_or_swap() {
        // The partition itself, by its device number.
        assert_eq!(
            check(&[((253, 17), "/dev/vdb1")]),
            Some(Found::Mounted {
                node: "/dev/vdb1".into(),
                mount_point: "/data".into()
            })
        );
        // The disk, through its mounted partition (fio would let this pass).
        assert_eq!(
            check(&[((253, 16), "/dev/vdb"), ((253, 17), "/dev/vdb1")]),
            Some(Found::Mounted {
                node: "/dev/vdb1".into(),
                mount_point: "/data".into()
            })
        );
        // btrfs shows an anonymous device number: matched by its source device.
        assert_eq!(
            check(&[((253, 32), "/dev/vdc")]),
            Some(Found::Mounted {
                node: "/dev/vdc".into(),
                mount_point: "/pool".into()
            })
        );
        assert_eq!(
            check(&[((253, 64), "/dev/vde")]),
            Some(Found::Mounted {
                node: "/dev/vde".into(),
                mount_point: "/mnt/with space".into()
            })
        );
        assert_eq!(
            check(&[((253, 48), "/dev/vdd"), ((253, 50), "/dev/vdd2")]),
            Some(Found::Swap {
                node: "/dev/vdd2".into()
            })
        );
        // A disk none of whose partitions is in use.
        assert_eq!(
            check(&[((253, 80), "/dev/vdf"), ((253, 81), "/dev/vdf1")]),
            None
        );
    }

    #[test]
    fn swaps_lists_paths_after_its_header() {
        assert_eq!(
            swap_paths("Filename Type Size Used Priority\n/swap\\040file file 10 0 -2\n"),
            vec![PathBuf::from("/swap file")]
        );
        assert!(swap_paths("Filename Type Size Used Priority\n").is_empty());
    }

    #[test]
    fn the_refusal_is_one_line_naming_the_device_and_the_override() {
        let r = DeviceRefusal {
            device: "/dev/vdb".into(),
            found: Found::Signature {
                what: "an ext4 filesystem",
                offset: 1080,
            },
            override_setting: "allow_mounted_write=1".into(),
        };
        assert_eq!(
            r.to_string(),
            "/dev/vdb holds an ext4 filesystem (signature at byte 1080); plumb will not write to it unless allow_mounted_write=1"
        );
        let r = DeviceRefusal {
            found: Found::Mounted {
                node: "/dev/vdb1".into(),
                mount_point: "/data".into(),
            },
            override_setting: "--allow-mounted-write".into(),
            ..r
        };
        assert_eq!(
            r.to_string(),
            "/dev/vdb is mounted on /data (its partition /dev/vdb1); plumb will not write to it unless --allow-mounted-write"
        );
    }

    #[test]
    fn anything_but_a_block_device_may_be_written() {
        let d = tempfile::tempdir().unwrap();
        let roots = Roots::under(d.path());
        let file = d.path().join("f");
        // A regular file passes even when it carries a filesystem image.
        let mut image = vec![0u8; 2048];
        image[1080..1082].copy_from_slice(&[0x53, 0xef]);
        std::fs::write(&file, image).unwrap();
        assert_eq!(check_device_write_in(&roots, &file, "x=1"), Ok(()));
        assert_eq!(
            check_device_write_in(&roots, &d.path().join("not-yet"), "x=1"),
            Ok(())
        );
        // /dev/null is a character device.
        assert_eq!(
            check_device_write_in(&roots, Path::new("/dev/null"), "x=1"),
            Ok(())
        );
    }
}
