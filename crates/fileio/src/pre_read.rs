//! fio's `pre_read`: before the job's requests, each file's region is read once from its
//! start, so the run starts from a warm page cache. As fio 3.33's pre_read_file does it: on
//! the job's own descriptor, a seek to the region's start, then `read` calls of the job's
//! largest read size (the last one shorter); a read that comes back short fails the job.
//! It belongs to the job's set-up: done while the workers are built, outside the measured
//! time.

use crate::fileset::FileTable;
use crate::spec::NamedFile;

/// Read every file's region through `table`'s descriptors, `chunk` bytes a call.
pub fn pre_read(table: &FileTable, files: &[NamedFile], chunk: u64) -> Result<(), String> {
    let chunk = chunk.max(1);
    let mut buf = vec![
        0u8;
        chunk
            .min(files.iter().map(|f| f.length).max().unwrap_or(0))
            .max(1) as usize
    ];
    for (i, f) in files.iter().enumerate() {
        let fd = table.fd(i as u32);
        let at = libc::off_t::try_from(f.offset)
            .map_err(|_| format!("{}: offset too large", f.path.display()))?;
        // SAFETY: fd is the table's open descriptor for this file.
        if unsafe { libc::lseek(fd, at, libc::SEEK_SET) } < 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("pre-reading {}: {e}", f.path.display()));
        }
        let mut left = f.length;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            // SAFETY: buf holds at least n bytes and outlives the call.
            let got = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), n) };
            if got != n as isize {
                let why = if got < 0 {
                    std::io::Error::last_os_error().to_string()
                } else {
                    format!("a read of {n} bytes gave {got}")
                };
                return Err(format!(
                    "pre-reading {} at offset {}: {why}",
                    f.path.display(),
                    f.offset + f.length - left
                ));
            }
            left -= n as u64;
        }
    }
    Ok(())
}
