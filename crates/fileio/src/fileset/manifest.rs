//! The manifest: plumb's record of the files it created in a directory. plumb writes,
//! extends, truncates and removes only files listed here, and only while the file is still
//! the one it created (same device and inode).

use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::FileioError;

pub const MANIFEST: &str = "plumb-fileio.manifest";
pub const SCHEMA: &str = "plumb.fileset/1";

/// Data layout of a file that runs wrote over with another fill.
pub const MIXED: &str = "mixed";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    /// Bytes from the start of the file known to hold `fill` data, written in full.
    pub valid_bytes: u64,
    /// Device and inode of the file plumb created; 0/0 while it is being created.
    pub dev: u64,
    pub ino: u64,
    /// "random", "zero", "validate" or "mixed".
    pub fill: String,
    /// Block size of the validate layout (checksums are per block).
    pub block_size: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    pub schema: String,
    pub creator: String,
    pub updated_at_unix_s: u64,
    pub files: Vec<Entry>,
}

/// How a name in the directory relates to the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// No such file.
    Absent,
    /// plumb created it (or was creating it when stopped).
    Owned,
    /// Exists but not listed.
    Unlisted,
    /// Listed, but the file now there is another one.
    Replaced,
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest {
            schema: SCHEMA.into(),
            creator: format!("plumb {}", env!("CARGO_PKG_VERSION")),
            updated_at_unix_s: 0,
            files: Vec::new(),
        }
    }
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(MANIFEST)
}

impl Manifest {
    /// The directory's manifest, if there is one.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, FileioError> {
        let p = path(dir);
        let text = match fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(FileioError::io(format!("cannot read {}", p.display()), e)),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            FileioError::Other(format!(
                "{} is damaged ({e}); plumb cannot tell which files it created: remove the test_file.* files and the manifest by hand",
                p.display()
            ))
        })?;
        if m.schema != SCHEMA {
            return Err(FileioError::Other(format!(
                "{} has schema '{}', this plumb reads '{SCHEMA}'",
                p.display(),
                m.schema
            )));
        }
        Ok(Some(m))
    }

    /// Write atomically: a crash leaves either the old or the new manifest.
    pub fn save(&mut self, dir: &Path) -> Result<(), FileioError> {
        self.updated_at_unix_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let p = path(dir);
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        let text = serde_json::to_string_pretty(self).expect("manifest serialises");
        let res = fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .and_then(|_| fs::rename(&tmp, &p));
        res.map_err(|e| {
            // A full disk fails the write: the old manifest stays, the half-written copy goes.
            let _ = fs::remove_file(&tmp);
            FileioError::io(format!("cannot write {}", p.display()), e)
        })
    }

    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.files.iter().find(|e| e.name == name)
    }

    /// The entry for `name`, added empty if missing.
    pub fn upsert(&mut self, name: &str) -> &mut Entry {
        if let Some(i) = self.files.iter().position(|e| e.name == name) {
            return &mut self.files[i];
        }
        self.files.push(Entry {
            name: name.to_string(),
            valid_bytes: 0,
            dev: 0,
            ino: 0,
            fill: String::new(),
            block_size: 0,
        });
        self.files.last_mut().expect("just pushed")
    }

    pub fn remove(&mut self, name: &str) {
        self.files.retain(|e| e.name != name);
    }

    /// Whether `dir/name` is a file this manifest owns.
    pub fn ownership(&self, dir: &Path, name: &str) -> Ownership {
        let meta = match fs::symlink_metadata(dir.join(name)) {
            Ok(m) => m,
            Err(_) => return Ownership::Absent,
        };
        match self.entry(name) {
            None => Ownership::Unlisted,
            // Being created when plumb stopped: created with O_EXCL right after the
            // manifest listed it, so the file there is plumb's.
            Some(e) if e.ino == 0 && meta.is_file() => Ownership::Owned,
            Some(e) if e.dev == meta.dev() && e.ino == meta.ino() && meta.is_file() => {
                Ownership::Owned
            }
            Some(_) => Ownership::Replaced,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_load_and_ownership() {
        let d = tempfile::tempdir().unwrap();
        assert!(Manifest::load(d.path()).unwrap().is_none());
        fs::write(d.path().join("test_file.0"), b"x").unwrap();
        fs::write(d.path().join("test_file.1"), b"y").unwrap();
        let meta = fs::metadata(d.path().join("test_file.0")).unwrap();
        let mut m = Manifest::default();
        let e = m.upsert("test_file.0");
        e.dev = meta.dev();
        e.ino = meta.ino();
        m.upsert("test_file.1").ino = 1; // some other inode
        m.save(d.path()).unwrap();
        let m = Manifest::load(d.path()).unwrap().unwrap();
        assert_eq!(m.ownership(d.path(), "test_file.0"), Ownership::Owned);
        assert_eq!(m.ownership(d.path(), "test_file.1"), Ownership::Replaced);
        assert_eq!(m.ownership(d.path(), "test_file.2"), Ownership::Absent);
        fs::write(d.path().join("test_file.3"), b"z").unwrap();
        assert_eq!(m.ownership(d.path(), "test_file.3"), Ownership::Unlisted);
    }

    #[test]
    fn damaged_manifest_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        fs::write(path(d.path()), "{not json").unwrap();
        let e = Manifest::load(d.path()).unwrap_err().to_string();
        assert!(e.contains("damaged"), "{e}");
    }
}
