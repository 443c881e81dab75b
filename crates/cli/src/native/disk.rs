//! `plumb disk [PATH|DEVICE]`: the quick check people run first (CrystalDiskMark's presets:
//! sequential 1 MiB at queue depth 8 and 1, random 4 KiB at 32 and 1, read and write), done
//! so that it does not lie: O_DIRECT, on a file filled with incompressible data first, the
//! disk observed underneath, and the findings. Each preset is a fio job run by the fio front
//! end, so the figures mean what `plumb fio` prints for the same job.

use std::path::{Path, PathBuf};

use plumb_report::disk::{Disk, PRECONDITION};

use super::fio_jobs::{self, RunArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A directory (the test file is made there), a file, or a block device
    #[arg(value_name = "PATH|DEVICE", default_value = ".")]
    target: PathBuf,
    /// A short version: a 512 MiB file, 2 s per test
    #[arg(long)]
    quick: bool,
    /// The test file's size, fio's syntax (default 2G, 512M with --quick)
    #[arg(long, value_name = "SIZE")]
    size: Option<String>,
    /// Seconds per test, after a warm-up of a fifth of it (default 5, 2 with --quick)
    #[arg(long, value_name = "SECONDS", value_parser = seconds, allow_hyphen_values = true)]
    time: Option<u32>,
    /// The read tests only, on the data already there (nothing written: a device that holds
    /// data can be read); a directory needs the plumb-disk.dat a run with --keep-file left.
    /// Without --size, all the data there is read (up to the default size)
    #[arg(long)]
    read_only: bool,
    /// Keep a test file plumb made (it is removed at the end); a later run may write over
    /// it again, as over no file plumb did not make
    #[arg(long)]
    keep_file: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// (name, rw, block size, queue depth) in CrystalDiskMark's order.
const PRESETS: [(&str, &str, &str, u32); 4] = [
    ("SEQ1M-Q8T1", "read", "1m", 8),
    ("SEQ1M-Q1T1", "read", "1m", 1),
    ("RND4K-Q32T1", "randread", "4k", 32),
    ("RND4K-Q1T1", "randread", "4k", 1),
];

/// The largest request the tests make: the file must hold one.
const LARGEST_REQUEST: u64 = 1 << 20;

/// --time: whole seconds, at least one (a negative number is a value here, not an option).
fn seconds(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("a whole number of seconds, at least 1".into()),
    }
}

/// --size in bytes: fio's syntax, a percentage meaning a share of the data there (`data`).
fn size_bytes(s: &str, data: Option<u64>) -> anyhow::Result<u64> {
    use crate::fio::values::{parse_size, KbBase, Size};
    let bad =
        |why: &str| crate::exit::UsageError(format!("invalid value for --size: '{s}' ({why})"));
    let bytes = match parse_size(s, KbBase::K1024, true) {
        Ok(Size::Bytes(b)) => b,
        Ok(Size::Percent(p)) => match data {
            Some(d) if p <= 100 => (u128::from(d) * u128::from(p) / 100) as u64,
            Some(_) => return Err(bad("at most 100%").into()),
            None => return Err(bad("a percentage of the data there, and there is none yet").into()),
        },
        Err(_) => return Err(bad("a size such as 512M or 2G").into()),
    };
    if bytes < LARGEST_REQUEST {
        return Err(bad("at least 1M: the tests make 1 MiB requests").into());
    }
    Ok(bytes)
}

/// The extended attribute on a test file plumb disk made and kept (`--keep-file`): a later
/// run may write over that file; plumb writes over no other (DESIGN: plumb writes only
/// files it created).
const MADE_BY: &str = "user.plumb.made-by";
const MADE_BY_DISK: &[u8] = b"plumb disk";

fn c_path(f: &Path) -> Option<std::ffi::CString> {
    std::ffi::CString::new(f.as_os_str().as_encoded_bytes()).ok()
}

/// Whether `f` is a test file plumb disk made and kept.
fn made_by_plumb(f: &Path) -> bool {
    let (Some(path), Ok(name)) = (c_path(f), std::ffi::CString::new(MADE_BY)) else {
        return false;
    };
    let mut buf = [0u8; 32];
    // SAFETY: valid C strings and a buffer of the length passed.
    let n = unsafe {
        libc::getxattr(
            path.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n >= 0 && &buf[..n as usize] == MADE_BY_DISK
}

/// Mark a kept test file as plumb's, so that a later run may write over it.
fn mark_made_by_plumb(f: &Path) -> std::io::Result<()> {
    let path = c_path(f).ok_or(std::io::ErrorKind::InvalidInput)?;
    let name = std::ffi::CString::new(MADE_BY).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    // SAFETY: valid C strings and a value of the length passed.
    let r = unsafe {
        libc::setxattr(
            path.as_ptr(),
            name.as_ptr(),
            MADE_BY_DISK.as_ptr().cast(),
            MADE_BY_DISK.len(),
            0,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The write tests' refusal of a file plumb did not make.
fn not_plumbs(f: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: plumb did not make this file, and the write tests would overwrite it: read it with --read-only, or give a directory (plumb makes its own test file there)",
        f.display()
    )
}

/// The file the tests use, whether plumb makes it, and how much data it holds now (none
/// when it is to be made).
fn test_file(target: &Path, read_only: bool) -> anyhow::Result<(PathBuf, bool, Option<u64>)> {
    use fio_jobs::Kind;
    match fio_jobs::kind(target)? {
        Kind::Dir => {
            let f = target.join("plumb-disk.dat");
            if f.exists() {
                if !read_only && !made_by_plumb(&f) {
                    return Err(not_plumbs(&f));
                }
                let len = fio_jobs::data_len(&f)?;
                return Ok((f, false, Some(len)));
            }
            if read_only {
                // Nothing to read, and read-only never makes the file.
                anyhow::bail!(
                    "no data to read at {}: run plumb disk {} --keep-file first, or give a file or device",
                    target.display(),
                    target.display()
                );
            }
            Ok((f, true, None))
        }
        Kind::File if !read_only && !made_by_plumb(target) => Err(not_plumbs(target)),
        Kind::File | Kind::Block => {
            let len = fio_jobs::data_len(target)?;
            Ok((target.to_path_buf(), false, Some(len)))
        }
        Kind::Other => anyhow::bail!(
            "{}: not a directory, a file or a block device",
            target.display()
        ),
    }
}

/// The bytes the tests use. Read-only, they must be there already: an explicit --size beyond
/// the data is refused (reading past it would read nothing), and without one the data there
/// is read, up to the default size, in whole 1 MiB requests.
fn test_size(a: &Args, file: &Path, data: Option<u64>) -> anyhow::Result<u64> {
    let default = if a.quick { 512 << 20 } else { 2 << 30 };
    let given = a.size.as_deref().map(|s| size_bytes(s, data)).transpose()?;
    if !a.read_only {
        return Ok(given.unwrap_or(default));
    }
    let have = data.unwrap_or(0);
    let holds = |n: u64| plumb_core::size::format_compact(n);
    match given {
        Some(want) if want > have => anyhow::bail!(
            "{}: holds {}, less than --size {} (--read-only reads only the data there: give a smaller --size, or none to read it all)",
            file.display(),
            holds(have),
            a.size.as_deref().unwrap_or_default()
        ),
        Some(want) => Ok(want),
        None if have < LARGEST_REQUEST => anyhow::bail!(
            "{}: holds {}, too little to read in 1 MiB requests (--read-only reads only the data there)",
            file.display(),
            holds(have)
        ),
        None => Ok(have.min(default) / LARGEST_REQUEST * LARGEST_REQUEST),
    }
}

/// fio's arguments for the whole check.
fn fio_args(file: &Path, size: &str, secs: u32, read_only: bool) -> Vec<String> {
    let ramp = (secs / 5).max(1);
    let mut a = vec![
        format!("--filename={}", file.display()),
        format!("--size={size}"),
        "--direct=1".into(),
        "--ioengine=libaio".into(),
        // fio's own report is not printed (the disk layout is): no normal-output lines.
        "--output-format=json".into(),
        // Buffers in transparent huge pages: a 1 MiB buffer of 256 small pages is cut by a
        // disk that takes fewer segments per request (virtio: 254) whenever its pages are not
        // physically contiguous, at random per run; inside a huge page it never is.
        "--plumb-buffers=thp".into(),
    ];
    if !read_only {
        // Fill the file once with incompressible data: reads then read real blocks, and
        // writes overwrite allocated ones.
        a.extend([
            format!("--name={PRECONDITION}"),
            "--rw=write".into(),
            "--bs=1m".into(),
            "--iodepth=8".into(),
        ]);
    }
    let dirs: &[(&str, &str)] = if read_only {
        &[("read", "")]
    } else {
        &[("read", ""), ("write", "write")]
    };
    for (dir, _) in dirs {
        for (name, rw, bs, depth) in PRESETS {
            let rw = if *dir == "write" {
                rw.replace("read", "write")
            } else {
                rw.to_string()
            };
            a.extend([
                format!("--name={name}-{dir}"),
                "--stonewall".into(),
                format!("--rw={rw}"),
                format!("--bs={bs}"),
                format!("--iodepth={depth}"),
                "--time_based".into(),
                format!("--runtime={secs}"),
                format!("--ramp_time={ramp}"),
            ]);
        }
    }
    a
}

/// Stop the run (as SIGPIPE, which the report's writer also stops it for) once stdout's
/// reader has gone (`plumb disk | head -3`), looked at about once a second: the report
/// writes only between tests, and until then a write test would go on writing its file
/// for nobody. The thread ends with the process.
fn watch_stdout(stop: plumb_core::StopFlag) {
    use std::sync::atomic::Ordering::SeqCst;
    let _ = std::thread::Builder::new()
        .name("plumb-stdout".into())
        .spawn(move || loop {
            let mut p = libc::pollfd {
                fd: libc::STDOUT_FILENO,
                // None asked for: POLLERR and POLLHUP come anyway.
                events: 0,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut p, 1, 1000) };
            if n > 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                let _ = stop.compare_exchange(0, libc::SIGPIPE as usize, SeqCst, SeqCst);
                return;
            }
            // No stdout to watch (closed, or poll refuses it): the writes say what they find.
            if (n < 0 && errno_is_not_eintr()) || p.revents & libc::POLLNVAL != 0 {
                return;
            }
            if stop.load(SeqCst) != 0 {
                return;
            }
        });
}

fn errno_is_not_eintr() -> bool {
    std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    a.run.check()?;
    let (file, made, data) = test_file(&a.target, a.read_only)?;
    let size = test_size(&a, &file, data)?;
    let secs = a.time.unwrap_or(if a.quick { 2 } else { 5 });
    // The size as the user wrote it, else in plumb's compact units.
    let shown = match &a.size {
        Some(s) => s.clone(),
        None if a.read_only => plumb_core::size::format_compact(size),
        None => if a.quick { "512M" } else { "2G" }.to_string(),
    };
    let choices = serde_json::json!({
        "file": file.display().to_string(),
        "size": shown,
        "made": made,
        "seconds": secs,
        "read_only": a.read_only,
    });
    let layout = Disk::LAYOUT;
    let head = format!(
        "{}{}",
        plumb_pipeline::Layout::banner(&layout),
        Disk::target_line(Some(&choices))
    );
    let args = fio_args(&file, &size.to_string(), secs, a.read_only);
    watch_stdout(crate::signals::install());
    let status = fio_jobs::run(
        args,
        "disk",
        &layout,
        Some(choices),
        &head,
        a.read_only,
        &a.run,
    );
    if made && !a.keep_file {
        let _ = std::fs::remove_file(&file);
    } else if made && file.exists() {
        if let Err(e) = mark_made_by_plumb(&file) {
            eprintln!(
                "plumb: note: {} is kept but cannot be marked as plumb's ({e}): a later run will only read it (--read-only)",
                file.display()
            );
        }
    }
    status
}
