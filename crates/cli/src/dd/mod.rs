//! `plumb dd OPERAND...` and the binary run as `dd`: GNU dd's operands, the same I/O
//! (plumb-fileio's dd copy) on the pipeline, dd's last lines on stderr, then, under the
//! name `plumb`, plumb's observations and findings (also on stderr: stdout may carry the
//! copied data). Exit status 1 for a bad operand or a failed copy, as dd; SIGINT prints
//! dd's statistics at once and kills plumb with it, as it kills dd.

mod operands;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use plumb_core::RunConfig;
use plumb_fileio::dd::{DdInterrupt, DdNote, DdTalk};
use plumb_pipeline::jobs::dd::DdJob;
use plumb_pipeline::{Group, JobError, JobSpec, PipelineError, Plan, PlanOptions, Step};
use plumb_report::dd::{Dd, DdLayoutOptions, StatusLevel};

use crate::keep::Keep;
use crate::{exit, signals};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// `plumb dd ...`: plumb's sections follow dd's lines.
    Plumb,
    /// Run as `dd`: dd's lines only; the run is kept in the history silently.
    DropIn,
}

const HELP: &str = "\
Usage: plumb dd [OPERAND]...
Copy a file as GNU dd does, then say what really happened underneath.

  bs=BYTES        read and write up to BYTES bytes at a time
  ibs=BYTES       read up to BYTES bytes at a time (default: 512)
  obs=BYTES       write BYTES bytes at a time (default: 512)
  count=N         copy only N input blocks
  skip=N, seek=N  skip N ibs-sized input blocks, N obs-sized output blocks
  if=FILE, of=FILE  read from / write to FILE instead of stdin / stdout
  iflag=FLAGS     direct, dsync, sync, fullblock, count_bytes, skip_bytes
  oflag=FLAGS     direct, dsync, sync, seek_bytes
  conv=CONVS      fdatasync, fsync, notrunc, sync, excl, nocreat
  status=LEVEL    none or noxfer

plumb's options: --json=FILE, --no-history, --tag=NAME, --allow-mounted-write\n(write a block device that holds data; see docs/dd.md).
";

/// The dd front end; returns the exit status.
pub fn main(args: &[String], mode: Mode) -> i32 {
    let mut keep = match mode {
        Mode::Plumb => Keep::plumb(false, Vec::new()),
        Mode::DropIn => Keep::silent(),
    };
    let mut json_file = None;
    let mut allow_write = false;
    let mut rest = Vec::new();
    let mut options_end = false;
    for a in args {
        let plumb = mode == Mode::Plumb;
        // getopt's rules, as dd's: options anywhere until `--`, long ones by any prefix.
        let long = a
            .strip_prefix("--")
            .filter(|n| !options_end && !n.is_empty());
        if options_end {
            rest.push(a.clone());
        } else if a == "--" {
            options_end = true;
        } else if long.is_some_and(|n| "help".starts_with(n)) {
            print!("{HELP}");
            return 0;
        } else if long.is_some_and(|n| "version".starts_with(n)) {
            // plumb's version in the form of dd's first line: scripts that read it see
            // what they run.
            println!("dd (plumb) {}", env!("CARGO_PKG_VERSION"));
            return 0;
        } else if plumb && a == "--allow-mounted-write" {
            allow_write = true;
        } else if plumb && a == "--no-history" {
            keep.store = false;
        } else if let Some(tag) = a.strip_prefix("--tag=").filter(|_| plumb) {
            if let Err(e) = crate::keep::check_tag(tag) {
                eprintln!("plumb: {e}");
                return exit::USAGE;
            }
            keep.tags.push(tag.to_string());
        } else if let Some(f) = a.strip_prefix("--json=").filter(|_| plumb) {
            json_file = Some(PathBuf::from(f));
        } else if long.is_some() {
            eprintln!("dd: unrecognized option '{a}'");
            eprintln!("Try 'dd --help' for more information.");
            return 1;
        } else if let Some(c) = a.strip_prefix('-').and_then(|o| o.chars().next()) {
            eprintln!("dd: invalid option -- '{c}'");
            eprintln!("Try 'dd --help' for more information.");
            return 1;
        } else {
            rest.push(a.clone());
        }
    }
    let ops = match operands::parse(&rest) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{}", e.message);
            if e.try_help {
                eprintln!("Try 'dd --help' for more information.");
            }
            return 1;
        }
    };
    // Writing a block device that holds data is refused before anything opens.
    if let Some(out) = ops.spec.output.as_ref().filter(|_| !allow_write) {
        if let Err(refusal) = plumb_observe::device_write::check_device_write(
            out,
            "plumb dd is given --allow-mounted-write",
        ) {
            eprintln!("plumb: {refusal}");
            return 1;
        }
    }
    run(ops, args, mode, keep, json_file)
}

/// What dd prints while it copies: its statistics on SIGUSR1 (`info`: None under
/// POSIXLY_CORRECT, where dd leaves SIGUSR1 alone), its warnings; neither under
/// status=none, as dd. The copy stops on `interrupt`.
fn talk(info: Option<Arc<AtomicUsize>>, interrupt: DdInterrupt, status: StatusLevel) -> DdTalk {
    let say = move |note: &DdNote| {
        let text = plumb_report::dd::note(note, status);
        if !text.is_empty() {
            // One write: the lines stay together.
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    };
    DdTalk {
        info_signal: info.is_some().then_some(libc::SIGUSR1),
        info: info.unwrap_or_default(),
        interrupt: Some(interrupt),
        say: Arc::new(say),
    }
}

fn run(
    ops: operands::Operands,
    args: &[String],
    mode: Mode,
    keep: Keep,
    json_file: Option<PathBuf>,
) -> i32 {
    // dd's SIGINT (and, under plumb's name, SIGTERM: plumb's report follows what dd
    // prints); the drop-in leaves SIGTERM at its default action, as dd does.
    let (stop, copier) = signals::install_dd(mode == Mode::Plumb);
    // Before the pipeline starts any thread: they all inherit SIGUSR1 blocked.
    let info = signals::install_info();
    let interrupt = DdInterrupt {
        signal: stop.clone(),
        copier,
    };
    let talk = talk(info, interrupt, ops.status);
    let status = ops.status;
    let layout = DdLayoutOptions {
        status: ops.status,
        plumb_sections: mode == Mode::Plumb,
    };
    let config = RunConfig {
        threads: 1,
        time_limit: None,
        event_limit: 0,
        ..RunConfig::default()
    };
    let name = match mode {
        Mode::Plumb => "plumb dd",
        Mode::DropIn => "dd",
    };
    let plan = Plan {
        front_end: "dd",
        command_line: plumb_core::redact::args(
            std::iter::once(name).chain(args.iter().map(String::as_str)),
        ),
        layout: serde_json::to_value(layout).ok(),
        groups: vec![Group {
            steps: vec![Step::Run],
            jobs: vec![JobSpec {
                name: "dd".to_string(),
                config,
                seed_given: false,
                layout: None,
                start_delay: std::time::Duration::ZERO,
                after: Vec::new(),
                checkpoints: Vec::new(),
                job: Box::new(DdJob::new(ops.spec).with_talk(talk)),
            }],
        }],
        options: PlanOptions {
            percentiles: vec![95.0],
            histogram: false,
            text: true,
            json_file,
            strict: false,
            observe_interval: Some(std::time::Duration::from_millis(250)),
            status_interval: None,
            notes: false,
            keep_going: true,
            setup_server: None,
        },
    };
    // Everything dd prints goes to stderr: stdout may be the copy's output.
    let mut report = std::io::stderr();
    let mut diagnostics = std::io::stderr();
    let mut quiet = plumb_core::progress::Quiet;
    let mut out = plumb_pipeline::Output {
        report: &mut report,
        diagnostics: &mut diagnostics,
        progress: &mut quiet,
        live: None,
    };
    let result = plumb_pipeline::execute(&plan, &Dd::LAYOUT, &stop, &mut out);
    let interrupt = stop.load(SeqCst) as i32;
    let code = match result {
        Ok(f) => {
            crate::keep::keep(&f.record, &keep);
            exit::of_finished(&f)
        }
        // Interrupted while an end opens (a FIFO waits for its other side): dd's statistics
        // of nothing, its clock never started (so the time since boot, as dd's reads).
        Err(PipelineError::Job(JobError::Failed(_))) if interrupt != 0 => {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid timespec out-parameter.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
            let since_boot = t.tv_sec as f64 + t.tv_nsec as f64 / 1e9;
            eprint!("{}", plumb_report::dd::lines([0; 4], 0, since_boot, status));
            1
        }
        Err(PipelineError::Job(JobError::Interrupted(s))) => exit::for_signal(s),
        Err(PipelineError::Job(JobError::Failed(e))) => {
            eprintln!("dd: {e}");
            1
        }
        Err(e) => {
            eprintln!("plumb: {}", plumb_core::redact::text(&e.to_string(), args));
            1
        }
    };
    // dd prints what it has to and then dies of the interrupt: a shell sees the signal
    // (and stops a script, as for dd), and nothing written is undone.
    if interrupt != 0 {
        signals::die_of(interrupt);
    }
    code
}
