//! /proc/self/mountinfo: which mount holds a path.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One mountinfo line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    pub mount_id: u32,
    pub parent_id: u32,
    /// st_dev of files on this mount, "MAJ:MIN".
    pub major: u32,
    pub minor: u32,
    /// The directory of the source filesystem this mount shows (not "/" for a bind mount).
    pub root: String,
    pub mount_point: PathBuf,
    /// Per-mount options (rw, noatime, ...).
    pub options: String,
    pub fs_type: String,
    /// What was mounted: a device path, "tmpfs", "server:/export", ...
    pub source: String,
    /// Filesystem options (discard, data=ordered, upperdir=..., ...).
    pub super_options: String,
}

impl Mount {
    /// Both option lists, mount options first, each option once ("rw" is in both).
    pub fn all_options(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for o in self.options.split(',').chain(self.super_options.split(',')) {
            if !o.is_empty() && !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen.join(",")
    }

    /// The value of `key=value` in the filesystem options.
    pub fn super_option(&self, key: &str) -> Option<&str> {
        self.super_options
            .split(',')
            .find_map(|o| o.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
    }

    /// A bind mount shows a subdirectory of its filesystem.
    pub fn is_bind(&self) -> bool {
        self.root != "/"
    }
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4);
        if b[i] == b'\\' {
            if let Some(o) = oct.filter(|o| o.iter().all(|c| (b'0'..=b'7').contains(c))) {
                let v = (o[0] - b'0') as u32 * 64 + (o[1] - b'0') as u32 * 8 + (o[2] - b'0') as u32;
                if let Ok(v) = u8::try_from(v) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse one line; None for a line that does not have the mountinfo layout.
pub fn parse_line(line: &str) -> Option<Mount> {
    let mut it = line.split(' ');
    let mount_id = it.next()?.parse().ok()?;
    let parent_id = it.next()?.parse().ok()?;
    let (maj, min) = it.next()?.split_once(':')?;
    let root = unescape(it.next()?);
    let mount_point = PathBuf::from(unescape(it.next()?));
    let options = it.next()?.to_string();
    // Optional fields ("shared:1", "master:2") end at a lone "-".
    for f in it.by_ref() {
        if f == "-" {
            break;
        }
    }
    let fs_type = it.next()?.to_string();
    let source = unescape(it.next()?);
    let super_options = it.next().unwrap_or("").to_string();
    Some(Mount {
        mount_id,
        parent_id,
        major: maj.parse().ok()?,
        minor: min.parse().ok()?,
        root,
        mount_point,
        options,
        fs_type,
        source,
        super_options,
    })
}

pub fn parse(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

/// The mount that holds `path` (absolute, symlinks resolved): the longest mount point that is a
/// prefix of it; among equal ones the last listed (mounted on top). When `dev` (the path's
/// st_dev) is known, a mount with that device is preferred, which settles stacked mounts and
/// mount points hidden under later mounts.
pub fn find<'a>(mounts: &'a [Mount], path: &Path, dev: Option<(u32, u32)>) -> Option<&'a Mount> {
    let holds = |m: &&Mount| path.starts_with(&m.mount_point);
    let longest = |cands: Vec<&'a Mount>| -> Option<&'a Mount> {
        let best = cands
            .iter()
            .map(|m| m.mount_point.components().count())
            .max()?;
        cands
            .into_iter()
            .rfind(|m| m.mount_point.components().count() == best)
    };
    if let Some((maj, min)) = dev {
        let same_dev: Vec<&Mount> = mounts
            .iter()
            .filter(holds)
            .filter(|m| m.major == maj && m.minor == min)
            .collect();
        if let Some(m) = longest(same_dev) {
            return Some(m);
        }
    }
    longest(mounts.iter().filter(holds).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
25 24 0:23 / /dev/shm rw,relatime shared:5 - tmpfs tmpfs rw,size=24684092k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
40 27 8:17 / /data rw,noatime shared:7 master:3 - xfs /dev/sdb1 rw,attr2,inode64
41 27 8:17 /projects/x /srv/x rw,noatime - xfs /dev/sdb1 rw,attr2
42 27 0:50 / /var/lib/docker/overlay2/abc/merged rw,relatime - overlay overlay rw,lowerdir=/l1:/l2,upperdir=/var/lib/docker/overlay2/abc/diff,workdir=/var/lib/docker/overlay2/abc/work
43 27 0:51 / /mnt/nfs rw,relatime - nfs4 server:/export rw,vers=4.2,proto=tcp
44 27 0:52 / /mnt/with\\040space rw - tmpfs tmpfs rw
45 40 0:53 / /data/tmp rw - tmpfs tmpfs rw
46 40 8:33 / /data rw - ext4 /dev/sdc1 rw
";

    #[test]
    fn parses_fields_optional_tags_and_escapes() {
        let m = parse(FIXTURE);
        assert_eq!(m.len(), 10);
        let data = &m[3];
        assert_eq!((data.major, data.minor), (8, 17));
        assert_eq!(data.fs_type, "xfs");
        assert_eq!(data.source, "/dev/sdb1");
        assert_eq!(data.options, "rw,noatime");
        assert_eq!(data.super_options, "rw,attr2,inode64");
        assert_eq!(data.all_options(), "rw,noatime,attr2,inode64");
        assert!(!data.is_bind());
        assert!(m[4].is_bind());
        assert_eq!(m[4].root, "/projects/x");
        assert_eq!(m[7].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(
            m[5].super_option("upperdir"),
            Some("/var/lib/docker/overlay2/abc/diff")
        );
    }

    #[test]
    fn longest_prefix_wins_and_components_not_strings() {
        let m = parse(FIXTURE);
        let f = |p: &str| find(&m, Path::new(p), None).unwrap().mount_point.clone();
        assert_eq!(f("/dev/shm/x"), PathBuf::from("/dev/shm"));
        assert_eq!(f("/tmp/a"), PathBuf::from("/"));
        // "/datafile" is not under "/data".
        assert_eq!(f("/datafile"), PathBuf::from("/"));
        assert_eq!(f("/data/tmp/q"), PathBuf::from("/data/tmp"));
        assert_eq!(f("/srv/x/y"), PathBuf::from("/srv/x"));
        assert_eq!(f("/mnt/with space/f"), PathBuf::from("/mnt/with space"));
    }

    #[test]
    fn stacked_mounts_last_one_or_matching_device() {
        let m = parse(FIXTURE);
        // Two mounts on /data: the later (ext4 on sdc1) is on top.
        let top = find(&m, Path::new("/data/f"), None).unwrap();
        assert_eq!(top.fs_type, "ext4");
        // The device of the file says which one really holds it.
        let by_dev = find(&m, Path::new("/data/f"), Some((8, 17))).unwrap();
        assert_eq!(by_dev.fs_type, "xfs");
        // An unknown device falls back to the prefix rule.
        let other = find(&m, Path::new("/data/f"), Some((9, 9))).unwrap();
        assert_eq!(other.fs_type, "ext4");
    }

    #[test]
    fn garbage_lines_are_skipped() {
        assert!(parse_line("not a mountinfo line").is_none());
        assert!(parse_line("1 2 3:4 / /x rw").is_none());
    }
}
