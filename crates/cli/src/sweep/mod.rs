//! `plumb sweep PLAN.toml`: a matrix of option values run point after point through a front
//! end's own pipeline, prepare and cleanup once per data set, every run kept in the history
//! under one sweep id, then a table and the knee of each swept variable.

mod checked;
mod data_set;
pub mod front_end;
mod json;
mod kept;
mod knee;
mod laid;
mod outline;
mod plan;
mod points;
mod progress;
mod results;
pub(crate) mod saved;
mod stop;
pub(crate) mod table;
mod walk;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::exit;
use kept::Kept;
use progress::Progress;
use stop::{Cause, Stopped};

/// What `plumb sweep` was asked.
pub struct Options {
    pub plan: PathBuf,
    pub dry_run: bool,
    pub no_history: bool,
    pub json: Option<PathBuf>,
    pub tag: Option<String>,
}

pub fn run(o: Options) -> anyhow::Result<i32> {
    let mut s = checked::check(&o.plan)?;
    if let Some(t) = o.tag {
        crate::keep::check_tag(&t).map_err(crate::exit::UsageError)?;
        match &s.plan.tag {
            Some(p) if *p != t => {
                return Err(crate::exit::UsageError(format!(
                    "--tag={t} and the plan's tag = \"{p}\" differ: give one"
                ))
                .into())
            }
            _ => s.plan.tag = Some(t),
        }
    }
    outline::print(&s);
    if o.dry_run {
        return Ok(0);
    }

    if let Some(f) = &o.json {
        writable(f).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", f.display()))?;
    }
    let stop = crate::signals::install();
    let started = Instant::now();
    let start_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut kept = Kept::open(o.no_history, start_unix, &s.plan.text, s.plan.tag.as_ref());
    let sweep_id = kept.sweep_id();
    if let Some(id) = sweep_id {
        println!(
            "sweep {id}: {} points (plumb history --sweep={id})",
            s.points.len()
        );
    }
    let progress = Progress::new(s.points.len() as u64 * s.plan.repeat as u64, started);
    let walked = walk::walk(&s, &progress, &mut kept, &stop);
    progress.finish();
    let mut cause = Cause::of(walked.ended, &stop);
    if let Some(Cause::Error { line, .. }) = &mut cause {
        // A step's error may echo its command line.
        *line = plumb_core::redact::text(line, &s.plan.command);
    }
    // The results are out before a stopped sweep's cleanup, which may take long and which
    // a further signal ends at once.
    let keys = s.keys();
    print!(
        "{}",
        results::summary(&s.points, &keys, &walked.done, s.cmd.unit())
    );
    if let Some(f) = &o.json {
        json::write(
            f,
            sweep_id,
            &s.plan.text,
            &s.points,
            &keys,
            &walked.done,
            cause.as_ref(),
        )?;
    }
    let _ = std::io::stdout().flush();
    let Some(cause) = cause else {
        kept.end(s.points.len(), "completed");
        return Ok(0);
    };
    let left = Stopped {
        cause,
        kept: walked.done.len(),
        planned: s.points.len() * s.plan.repeat as usize,
        steps: s.steps,
        prepare: s.plan.prepare,
    };
    // Kept before the cleanup, which a further signal may end at once.
    kept.end(s.points.len(), &left.headline());
    eprintln!(
        "{}",
        left.clean_up(s.cmd.as_ref(), walked.owed.clean, walked.owed.failed, &stop)
    );
    match left.cause {
        Cause::Signal(sig) => Ok(exit::for_signal(sig)),
        // A runtime failure (exit 1), even when what the run refused was an option value:
        // the parser passed every point's command line and the points before it are kept.
        Cause::Error { line, .. } => Err(anyhow::anyhow!(line)),
    }
}

/// Whether `--json`'s file can be written, found now rather than after hours of points,
/// without making it or touching what it holds: an existing file opened for appending, else
/// its directory checked.
fn writable(f: &std::path::Path) -> std::io::Result<()> {
    if f.exists() {
        return std::fs::OpenOptions::new().append(true).open(f).map(|_| ());
    }
    let dir = match f.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid C string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
