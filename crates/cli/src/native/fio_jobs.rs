//! plumb's commands built on fio jobs (`disk`, `hdparm`): their fio arguments go through
//! the fio front end's `check` (the same parser and plan as `plumb fio`), then run with the
//! command's own layout and are kept in the history like any run.

use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::SeqCst;

use plumb_core::StopFlag;
use plumb_pipeline::Layout;

use crate::exit;
use crate::keep::{check_tag, keep, Keep};

/// The options every such command takes.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Also write the record as JSON (plumb report FILE shows it again)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Do not keep the run in plumb's history
    #[arg(long)]
    pub no_history: bool,
    /// Label the run in the history (repeatable)
    #[arg(long, value_name = "NAME")]
    pub tag: Vec<String>,
}

impl RunArgs {
    /// Refuse a bad tag before anything is printed or run.
    pub fn check(&self) -> anyhow::Result<()> {
        for t in &self.tag {
            check_tag(t).map_err(exit::UsageError)?;
        }
        Ok(())
    }
}

/// What a path names, for the commands' own checks before fio's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Block,
    /// A character device, socket or pipe: no size to read up to.
    Other,
}

/// What `p` is; the error is [`path_error`]'s.
pub fn kind(p: &Path) -> anyhow::Result<Kind> {
    let m = std::fs::metadata(p).map_err(|e| path_error(p, &e))?;
    let t = m.file_type();
    Ok(if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else if t.is_block_device() {
        Kind::Block
    } else {
        Kind::Other
    })
}

/// How many bytes a file or block device holds, found by opening it read-only (so a device
/// the user may not open says so here, in its own words, not as a missing size later).
pub fn data_len(p: &Path) -> anyhow::Result<u64> {
    use std::io::Seek;
    let mut f = std::fs::File::open(p).map_err(|e| path_error(p, &e))?;
    f.seek(io::SeekFrom::End(0)).map_err(|e| path_error(p, &e))
}

/// `PATH: the C library's text`, as hdparm and the shell tools put it. A name that does not
/// exist is bad input (exit 2, which is also hdparm's status for it); any other failure is
/// a runtime one.
pub fn path_error(p: &Path, e: &io::Error) -> anyhow::Error {
    let msg = format!("{}: {}", p.display(), plumb_fileio::dd::strerror(e));
    if e.kind() == io::ErrorKind::NotFound {
        exit::UsageError(msg).into()
    } else {
        anyhow::anyhow!(msg)
    }
}

/// stdout for the report: when its reader goes away (`plumb disk | head`), the run stops as
/// it stops for SIGINT, so the test file it made is still removed; what remains to print is
/// dropped. With SIGPIPE at its default the process would die with the file left behind.
struct Report<'a> {
    out: io::Stdout,
    stop: &'a StopFlag,
    closed: bool,
}

impl Report<'_> {
    fn check<T>(&mut self, r: io::Result<T>, ok: T) -> io::Result<T> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                let _ = self
                    .stop
                    .compare_exchange(0, libc::SIGPIPE as usize, SeqCst, SeqCst);
                Ok(ok)
            }
            r => r,
        }
    }
}

impl Write for Report<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.out.write(buf);
        self.check(r, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.out.flush();
        self.check(r, ())
    }
}

/// Run `fio_args` as the command `front_end` with `layout`, after printing `head` (the
/// command's banner); `choices` are the layout's rendering choices, kept in the record for
/// replays. With `read_only`, fio is told so (no job may write) and every file must exist
/// already, so nothing is created or laid out whatever the front end's own checks missed.
/// Returns the exit status.
pub fn run(
    mut fio_args: Vec<String>,
    front_end: &'static str,
    layout: &dyn Layout,
    choices: Option<serde_json::Value>,
    head: &str,
    read_only: bool,
    r: &RunArgs,
) -> anyhow::Result<i32> {
    if let Some(j) = &r.json {
        fio_args.push(format!("--plumb-json={}", j.display()));
    }
    if read_only {
        fio_args.insert(0, "--readonly".into());
    }
    let mut built = crate::fio::run::check(&fio_args).map_err(|e| anyhow::anyhow!("{e}"))?;
    if read_only {
        if let Some(f) = built.files.iter().find(|f| !f.exists()) {
            anyhow::bail!("{}: no such file: nothing to read", f.display());
        }
    }
    built.plan.front_end = front_end;
    let typed: Vec<String> = std::env::args().skip(1).collect();
    built.plan.command_line =
        plumb_core::redact::args(std::iter::once("plumb").chain(typed.iter().map(String::as_str)));
    built.plan.layout = choices;
    let stop = crate::signals::install();
    // A closed stdout is seen as EPIPE by `Report`, which stops the run (see there).
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let mut stdout = Report {
        out: io::stdout(),
        stop: &stop,
        closed: false,
    };
    let _ = stdout
        .write_all(head.as_bytes())
        .and_then(|_| stdout.flush());
    let mut stderr = io::stderr();
    let mut quiet = plumb_core::progress::Quiet;
    let mut out = plumb_pipeline::Output {
        report: &mut stdout,
        diagnostics: &mut stderr,
        progress: &mut quiet,
        live: None,
    };
    let finished = plumb_pipeline::execute(&built.plan, layout, &stop, &mut out)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    keep(&finished.record, &Keep::plumb(r.no_history, r.tag.clone()));
    Ok(exit::of_finished(&finished))
}
