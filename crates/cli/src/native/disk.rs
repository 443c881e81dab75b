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
    #[arg(long, value_name = "SECONDS")]
    time: Option<u32>,
    /// The read tests only, on the data already there (no file written: a device that holds
    /// data can be read)
    #[arg(long)]
    read_only: bool,
    /// Keep a test file plumb made (it is removed at the end)
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

/// The file the tests use, and whether plumb makes it.
fn test_file(target: &Path) -> anyhow::Result<(PathBuf, bool)> {
    let meta =
        std::fs::metadata(target).map_err(|e| anyhow::anyhow!("{}: {e}", target.display()))?;
    if meta.is_dir() {
        let f = target.join("plumb-disk.dat");
        let exists = f.exists();
        return Ok((f, !exists));
    }
    Ok((target.to_path_buf(), false))
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

pub fn run(a: Args) -> anyhow::Result<i32> {
    a.run.check()?;
    let (file, made) = test_file(&a.target)?;
    let size = a
        .size
        .clone()
        .unwrap_or_else(|| if a.quick { "512M" } else { "2G" }.to_string());
    let secs = a.time.unwrap_or(if a.quick { 2 } else { 5 });
    if secs == 0 {
        return Err(crate::exit::UsageError("--time must be at least 1 second".into()).into());
    }
    let choices = serde_json::json!({
        "file": file.display().to_string(),
        "size": size,
        "made": made,
        "seconds": secs,
        "read_only": a.read_only,
    });
    let layout = Disk::LAYOUT;
    print!(
        "{}{}",
        plumb_pipeline::Layout::banner(&layout),
        Disk::target_line(Some(&choices))
    );
    let args = fio_args(&file, &size, secs, a.read_only);
    let status = fio_jobs::run(args, "disk", &layout, Some(choices), &a.run);
    if made && !a.keep_file {
        let _ = std::fs::remove_file(&file);
    }
    status
}
