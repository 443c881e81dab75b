//! `cleanup`: remove the files the manifest lists (whatever --file-num says now), then the
//! manifest. Files plumb did not create stay, and the user is told.

use std::fs;
use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;

use plumb_core::StopFlag;

use super::manifest::{self, Manifest, Ownership};
use super::{check_dir, is_test_file_name};
use crate::error::FileioError;
use crate::spec::FileioSpec;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CleanupOutcome {
    pub removed: u32,
    /// Names that look like test files but were left in place (not plumb's).
    pub kept: Vec<String>,
}

pub fn cleanup(
    spec: &FileioSpec,
    stop: &StopFlag,
    log: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<CleanupOutcome, FileioError> {
    let dir = spec.dir.as_path();
    check_dir(dir)?;
    let _ = writeln!(log, "Removing test files...");
    let mut out = CleanupOutcome::default();
    let manifest = Manifest::load(dir)?;
    if let Some(mut m) = manifest {
        let names: Vec<String> = m.files.iter().map(|e| e.name.clone()).collect();
        for name in names {
            let sig = stop.load(Relaxed);
            if sig != 0 {
                m.save(dir)?;
                return Err(FileioError::Interrupted(sig as i32));
            }
            match m.ownership(dir, &name) {
                Ownership::Owned => {
                    let p = dir.join(&name);
                    fs::remove_file(&p).map_err(|e| {
                        FileioError::io(format!("cannot remove {}", p.display()), e)
                    })?;
                    out.removed += 1;
                }
                Ownership::Absent => {}
                Ownership::Replaced | Ownership::Unlisted => out.kept.push(name.clone()),
            }
            m.remove(&name);
        }
        let p = manifest::path(dir);
        fs::remove_file(&p)
            .map_err(|e| FileioError::io(format!("cannot remove {}", p.display()), e))?;
    }
    // Test files plumb does not own: say so, never remove.
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if is_test_file_name(&n) && !out.kept.contains(&n) {
                out.kept.push(n);
            }
        }
    }
    if !out.kept.is_empty() {
        out.kept.sort_by_key(|n| {
            n.trim_start_matches("test_file.")
                .parse::<u64>()
                .unwrap_or(u64::MAX)
        });
        let shown: Vec<&str> = out.kept.iter().take(3).map(String::as_str).collect();
        let _ = writeln!(
            warn,
            "plumb: left {} file(s) plumb did not create in {} ({}{}): remove them yourself if they are not needed (sysbench's: 'sysbench fileio cleanup')",
            out.kept.len(),
            dir.display(),
            shown.join(", "),
            if out.kept.len() > 3 { ", ..." } else { "" }
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileset::prepare::{prepare, Quiet};
    use crate::fileset::MANIFEST;

    #[test]
    fn removes_only_what_the_manifest_lists() {
        let d = tempfile::tempdir().unwrap();
        let s = FileioSpec {
            dir: d.path().to_path_buf(),
            num_files: 3,
            total_size: 3 << 16,
            ..Default::default()
        };
        prepare(&s, &StopFlag::default(), &mut Vec::new(), &mut Quiet).unwrap();
        fs::write(d.path().join("test_file.9"), b"foreign").unwrap();
        fs::write(d.path().join("keep.txt"), b"mine").unwrap();
        // Cleanup with another --file-num still removes the whole set plumb made.
        let one = FileioSpec {
            num_files: 1,
            ..s.clone()
        };
        let mut warn = Vec::new();
        let o = cleanup(&one, &StopFlag::default(), &mut Vec::new(), &mut warn).unwrap();
        assert_eq!(o.removed, 3);
        assert_eq!(o.kept, ["test_file.9"]);
        let warn = String::from_utf8(warn).unwrap();
        assert!(warn.contains("test_file.9"), "{warn}");
        assert!(d.path().join("test_file.9").exists());
        assert!(d.path().join("keep.txt").exists());
        assert!(!d.path().join("test_file.0").exists());
        assert!(!d.path().join(MANIFEST).exists());
        // Nothing to do is fine.
        let o = cleanup(&s, &StopFlag::default(), &mut Vec::new(), &mut Vec::new()).unwrap();
        assert_eq!(o.removed, 0);
    }
}
