//! fio's `opendir=DIR`: the job's files are the regular files below DIR, found as fio's
//! recurse_dir finds them (filesetup.c): in the order the directory lists them (readdir's,
//! not sorted), named `DIR/entry`, into subdirectories, leaving out symbolic links and
//! anything else that is not a regular file.

use std::io;
use std::path::Path;

use plumb_fileio::error::errno_text;

/// Why a directory could not be listed: fio's line on stdout names the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlisted {
    pub dir: String,
    /// The C library's text for the error ("No such file or directory").
    pub error: String,
}

impl Unlisted {
    fn new(dir: &str, e: io::Error) -> Unlisted {
        Unlisted {
            dir: dir.to_string(),
            error: match e.raw_os_error() {
                Some(n) => errno_text(n),
                None => e.to_string(),
            },
        }
    }

    /// fio's words (td_verror at filesetup.c:1977).
    pub fn fio_line(&self) -> String {
        format!(
            "fio: file:filesetup.c:1977, func=opendir({}), error={}",
            self.dir, self.error
        )
    }
}

/// The regular files below `dir` (relative names from `cwd`, as fio opens them).
pub fn files_below(dir: &str, cwd: &Path) -> Result<Vec<String>, Unlisted> {
    let mut out = Vec::new();
    walk(dir, cwd, &mut out)?;
    Ok(out)
}

fn walk(dir: &str, cwd: &Path, out: &mut Vec<String>) -> Result<(), Unlisted> {
    let unlisted = |e| Unlisted::new(dir, e);
    for entry in std::fs::read_dir(cwd.join(dir)).map_err(unlisted)? {
        let entry = entry.map_err(unlisted)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            return Err(unlisted(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "plumb cannot name {:?}: file names that are not UTF-8",
                    entry.file_name()
                ),
            )));
        };
        let full = format!("{dir}/{name}");
        // lstat, as fio: a link is neither a regular file nor a directory. An entry gone
        // since the listing is passed over.
        let meta = match std::fs::symlink_metadata(cwd.join(&full)) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(unlisted(e)),
        };
        if meta.is_file() {
            out.push(full);
        } else if meta.is_dir() {
            walk(&full, cwd, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_below_in_listing_order_links_left_out() {
        let d = tempfile::tempdir().unwrap();
        let od = d.path().join("od");
        std::fs::create_dir_all(od.join("sub/deeper")).unwrap();
        for f in ["a", "b", "sub/c", "sub/deeper/d"] {
            std::fs::write(od.join(f), b"x").unwrap();
        }
        std::os::unix::fs::symlink("a", od.join("link")).unwrap();
        let mut got = files_below("od", d.path()).unwrap();
        // The order is the directory's own; the set is fixed.
        let listed: Vec<String> = std::fs::read_dir(&od)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n == "a" || n == "b" || n == "sub")
            .collect();
        let first_of = |n: &str| got.iter().position(|g| g.starts_with(&format!("od/{n}")));
        let mut positions: Vec<usize> = listed.iter().map(|n| first_of(n).unwrap()).collect();
        let sorted = {
            let mut p = positions.clone();
            p.sort();
            p
        };
        assert_eq!(positions, sorted, "{got:?} against {listed:?}");
        positions.clear();
        got.sort();
        assert_eq!(got, ["od/a", "od/b", "od/sub/c", "od/sub/deeper/d"]);
    }

    #[test]
    fn a_missing_directory_is_named_as_fio_names_it() {
        let d = tempfile::tempdir().unwrap();
        let e = files_below("nonexist", d.path()).unwrap_err();
        assert_eq!(
            e.fio_line(),
            "fio: file:filesetup.c:1977, func=opendir(nonexist), error=No such file or directory"
        );
    }
}
