//! `plumb hdparm -T -t DEVICE...`: hdparm's two timings with hdparm's lines, done as fio jobs
//! by plumb (observed underneath, kept in the history), then what each line measures:
//! `-T` times the page cache (memory), `-t` the first seconds of one sequential read.

use std::path::{Path, PathBuf};

use plumb_report::hdparm::Hdparm;

use super::fio_jobs::{self, RunArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Time cached reads: the same 2 MiB from the page cache for 2 s (memory, not the disk)
    #[arg(short = 'T')]
    cached: bool,
    /// Time buffered disk reads: one sequential read from the start of the device, 2 MiB at
    /// a time, for 3 s, after its cached pages are dropped
    #[arg(short = 't')]
    buffered: bool,
    /// Block devices (or files) to time
    #[arg(value_name = "DEVICE", required = true)]
    devices: Vec<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
}

/// fio's arguments: per device, -T's job then -t's, as hdparm orders them.
fn fio_args(a: &Args) -> Vec<String> {
    let mut v = vec![
        "--output-format=json".to_string(),
        "--ioengine=psync".into(),
        "--bs=2m".into(),
        "--rw=read".into(),
    ];
    for d in &a.devices {
        let dev = d.display();
        if a.cached {
            v.extend([
                format!("--name=T:{dev}"),
                format!("--filename={dev}"),
                "--stonewall".into(),
                "--size=2m".into(),
                // Keep the pages: the first second reads them in, the next two time them.
                "--invalidate=0".into(),
                "--time_based".into(),
                "--ramp_time=1".into(),
                "--runtime=2".into(),
            ]);
        }
        if a.buffered {
            v.extend([
                format!("--name=t:{dev}"),
                format!("--filename={dev}"),
                "--stonewall".into(),
                // Drop the device's cached pages first; stop after 3 s or at its end.
                "--invalidate=1".into(),
                "--runtime=3".into(),
            ]);
        }
    }
    v
}

/// hdparm's timings read 2 MiB at a time (its TIMING_BUF_BYTES).
const TIMING_BYTES: u64 = 2 << 20;

/// hdparm only ever reads: refuse, in hdparm's words, whatever it could not read 2 MiB at a
/// time from, before fio would lay a file out (and so write it) or ask for a size.
fn check_device(d: &Path) -> anyhow::Result<()> {
    let name = d.display();
    match fio_jobs::kind(d)? {
        fio_jobs::Kind::File | fio_jobs::Kind::Block => {}
        fio_jobs::Kind::Dir => anyhow::bail!("{name}: read() failed: Is a directory"),
        fio_jobs::Kind::Other => {
            anyhow::bail!("{name}: not a block device or a file: nothing to time")
        }
    }
    match fio_jobs::data_len(d)? {
        0 => anyhow::bail!("{name}: read() hit EOF - device too small"),
        n if n < TIMING_BYTES => anyhow::bail!(
            "{name}: read({TIMING_BYTES}) returned {n} bytes: too small to time (2 MiB reads)"
        ),
        _ => Ok(()),
    }
}

pub fn run(mut a: Args) -> anyhow::Result<i32> {
    a.run.check()?;
    // hdparm with neither flag prints the device's settings, which plumb does not: time both.
    if !a.cached && !a.buffered {
        a.cached = true;
        a.buffered = true;
    }
    for d in &a.devices {
        check_device(d)?;
    }
    fio_jobs::run(
        fio_args(&a),
        "hdparm",
        &Hdparm::LAYOUT,
        None,
        "",
        true,
        &a.run,
    )
}
