//! `plumb mysqlslap ...` and the binary run as `mysqlslap`: mysqlslap's command line
//! (MariaDB 10.11's mariadb-slap: options, checks, messages and exit status), translated
//! into one group per engine, concurrency value and iteration, run on the pipeline, and
//! reported in mysqlslap's layout. Under the name `plumb`, what happened underneath
//! follows each Benchmark block.
//!
//! plumb's own options, taken out before mysqlslap's parser sees the rest:
//! `--plumb-db=mysql|sqlite[:FILE]|pgsql[:DATABASE]` (the database the workload runs on),
//! `--plumb-json=FILE` (the record), `--plumb-findings=on|off` (plumb's sections).

mod apply;
mod help;
mod options;
mod password;
mod target;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use plumb_core::harness::HarnessError;
use plumb_core::{RunConfig, StopCause};
use plumb_oltp::slap::{Console, LoadType, Main, SlapError, SlapSpec};
use plumb_pipeline::jobs::slap::{SlapJob, SlapPoint, SlapRun};
use plumb_pipeline::{
    Group, Job, JobError, JobRecord, JobSpec, PipelineError, Plan, PlanOptions, Settings, Step,
    StepContext,
};
use plumb_report::mysqlslap::{conclude, csv_line, Mysqlslap, SlapFacts};

use crate::exit;

pub use target::Target;

/// Which name the binary answers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// `plumb mysqlslap ...`: plumb's sections follow each block; usage errors exit 2.
    Plumb,
    /// Run as `mysqlslap`: mysqlslap's output and exit status only.
    DropIn,
}

/// plumb's own options: `--plumb-db` and the common ones.
struct PlumbOptions {
    db: Option<Target>,
    flags: crate::plumb_flags::PlumbFlags,
}

fn take_plumb_options(args: &[String], mode: Mode) -> Result<(PlumbOptions, Vec<String>), String> {
    let mut p = PlumbOptions {
        db: None,
        flags: crate::plumb_flags::PlumbFlags::new(mode == Mode::Plumb),
    };
    let mut rest = Vec::with_capacity(args.len());
    for a in args {
        if let Some(v) = a.strip_prefix("--plumb-db=") {
            p.db = Some(Target::parse(v)?);
        } else if let Some(r) = p.flags.take(a) {
            r?;
        } else if a.starts_with("--plumb-") {
            return Err(format!(
                "unknown plumb option '{}' (plumb's are --plumb-db, --plumb-json, --plumb-findings)",
                a.split('=').next().unwrap_or(a)
            ));
        } else {
            rest.push(a.clone());
        }
    }
    Ok((p, rest))
}

/// The command line with every password masked (`-pSECRET`, `--password=SECRET`, and
/// their prefixes such as `--pass=SECRET`).
pub fn redact(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        if let Some(body) = a.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or(body).replace('_', "-");
            let name = name.strip_prefix("loose-").unwrap_or(&name);
            let is_pw = !name.is_empty() && "password".starts_with(name) && name.len() >= 3;
            if is_pw && body.contains('=') {
                let head = a.split('=').next().unwrap_or(a);
                out.push(format!("{head}={}", plumb_core::redact::MASK));
                continue;
            }
            out.push(a.clone());
        } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            let mut shown = String::from("-");
            let mut masked = false;
            for (i, c) in flags.char_indices() {
                shown.push(c);
                let def = options::OPTIONS.iter().find(|d| d.short == Some(c));
                match def {
                    Some(d) if d.name == "password" => {
                        if i + 1 < flags.len() {
                            shown.push_str(plumb_core::redact::MASK);
                        }
                        masked = true;
                        break;
                    }
                    Some(d) if d.takes != options::Takes::Nothing => break,
                    _ => {}
                }
            }
            out.push(if masked { shown } else { a.clone() });
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// What went wrong before anything ran: lines for stderr and the exit status.
struct Refusal {
    lines: Vec<String>,
    code: i32,
}

/// The mysqlslap front end; returns the exit status.
pub fn main(args: &[String], mode: Mode) -> i32 {
    // mysqlslap names itself by argv[0] as typed (`/usr/bin/mysqlslap: unknown option`).
    let prog = match mode {
        Mode::DropIn => std::env::args()
            .next()
            .unwrap_or_else(|| "mysqlslap".into()),
        Mode::Plumb => "plumb mysqlslap".to_string(),
    };
    // Usage errors: mysqlslap's status under its name, plumb's 2 under plumb's.
    let usage = |code: i32| {
        if mode == Mode::Plumb {
            exit::USAGE
        } else {
            code
        }
    };
    let (plumb, args) = match take_plumb_options(args, mode) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("plumb: {e}");
            return usage(1);
        }
    };
    let cmd = match apply::command(&prog, &args, &plumb) {
        Ok(apply::Outcome::Run(cmd)) => *cmd,
        Ok(apply::Outcome::Print(text)) => {
            print!("{text}");
            return 0;
        }
        Err(r) => {
            for l in &r.lines {
                eprintln!("{l}");
            }
            return usage(r.code);
        }
    };
    let debug_info = cmd.debug_info;
    let code = run(&prog, cmd, &args, mode, &plumb);
    if debug_info && code == 0 {
        eprint!("{}", rusage_report());
    }
    code
}

/// A block's CSV line goes to the file as the block ends (mysqlslap appends it then).
struct CsvFile {
    file: Mutex<std::fs::File>,
    load_type: String,
    jobs: Mutex<Vec<JobRecord>>,
}

/// The pipeline's job, plus mysqlslap's CSV file.
struct FrontJob {
    job: SlapJob,
    last_of_block: bool,
    csv: Option<Arc<CsvFile>>,
}

impl Job for FrontJob {
    fn kind(&self) -> &'static str {
        self.job.kind()
    }
    fn prepare(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        self.job.prepare(ctx)
    }
    fn cleanup(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        self.job.cleanup(ctx)
    }
    fn workload(&self, notes: &mut Vec<String>) -> Result<Arc<dyn plumb_core::Workload>, JobError> {
        self.job.workload(notes)
    }
    fn settings(&self) -> Settings {
        self.job.settings()
    }
    fn targets(&self) -> plumb_pipeline::Targets {
        self.job.targets()
    }
    fn after_run(&self, record: &mut JobRecord) -> Result<(), JobError> {
        self.job.after_run(record)?;
        if let Some(csv) = &self.csv {
            let mut jobs = csv.jobs.lock().unwrap_or_else(|p| p.into_inner());
            jobs.push(record.clone());
            if self.last_of_block {
                let refs: Vec<&JobRecord> = jobs.iter().collect();
                if let Some(c) = conclude(&refs) {
                    let mut f = csv.file.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = f.write_all(csv_line(&c, &csv.load_type).as_bytes());
                }
                jobs.clear();
            }
        }
        Ok(())
    }
}

/// Writes into the console's sink, so the report and the statements printed keep their
/// order.
struct SinkWriter(plumb_oltp::slap::console::Sink);

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).flush()
    }
}

fn run(
    prog: &str,
    mut cmd: apply::Command,
    args: &[String],
    mode: Mode,
    plumb: &PlumbOptions,
) -> i32 {
    cmd.connect.ssl_optional = mode == Mode::DropIn;
    let spec = Arc::new(cmd.spec.clone());
    let drivers = match target::drivers(&cmd.target, &cmd.connect, &spec.schema) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return if mode == Mode::Plumb { exit::USAGE } else { 1 };
        }
    };
    let out: plumb_oltp::slap::console::Sink = Arc::new(Mutex::new(std::io::stdout()));
    let err: plumb_oltp::slap::console::Sink = Arc::new(Mutex::new(std::io::stderr()));
    let console = Console::new(out.clone(), err, prog, cmd.verbose, spec.only_print);
    if let Some(a) = &spec.auto {
        console.note(2, "Building Create Statements for Auto");
        console.note(2, "Building Query Statements for Auto");
        match a.load {
            LoadType::Read => console.note(2, "Generating SELECT Statements for Auto"),
            LoadType::Key => console.note(2, "Generating SELECT for keys Statements for Auto"),
            LoadType::Write => console.note(2, "Generating INSERT Statements for Auto"),
            LoadType::Mixed | LoadType::Update => {}
        }
    }
    console.note(2, "Parsing engines to use.");
    let csv_file = match &cmd.csv {
        Some(apply::Csv::File(p)) => match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            Ok(f) => Some(Arc::new(CsvFile {
                file: Mutex::new(f),
                load_type: cmd.load_type_label.clone(),
                jobs: Mutex::new(Vec::new()),
            })),
            Err(_) => {
                eprintln!("{prog}: Could not open csv file: {}n", p.display());
                return 1;
            }
        },
        _ => None,
    };
    let stop = crate::signals::install();
    let mut main = match Main::connect(
        spec.clone(),
        drivers.main.as_ref(),
        drivers.clients.clone(),
        console.clone(),
    ) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return 1;
        }
    };
    main.stop_on(stop.clone());
    // The local server behind the main connection (over its socket or TCP): the setup
    // (schema, population) is its work for plumb, so the load baseline is taken while the
    // setup runs.
    let setup_server = main.server_pid();
    let shared = Arc::new(SlapRun {
        main: Mutex::new(main),
        clients: drivers.clients.clone(),
        database: Mutex::new(None),
    });
    // mysqlslap's "no output" (--silent, --csv, --only-print) silences plumb's sections
    // too, unless they are asked for.
    let plumb_sections = plumb
        .flags
        .findings
        .unwrap_or(mode == Mode::Plumb && !cmd.silent);
    let groups = plan_groups(&spec, &cmd, &shared, csv_file.as_ref(), plumb_sections);
    let mut argv = vec![if mode == Mode::DropIn {
        "mysqlslap".to_string()
    } else {
        "plumb mysqlslap".to_string()
    }];
    argv.extend(redact(args));
    let plan = Plan {
        front_end: "mysqlslap",
        command_line: plumb_core::redact::args(argv),
        layout: None,
        groups,
        options: PlanOptions {
            percentiles: vec![95.0],
            histogram: false,
            text: true,
            json_file: plumb.flags.json_file.clone(),
            strict: false,
            observe_interval: Some(Duration::from_millis(250)),
            status_interval: None,
            notes: mode == Mode::Plumb,
            keep_going: false,
            setup_server,
        },
    };
    let mut report = SinkWriter(out);
    let mut stderr = std::io::stderr();
    let mut quiet = plumb_core::progress::Quiet;
    let mut output = plumb_pipeline::Output {
        report: &mut report,
        diagnostics: &mut stderr,
        progress: &mut quiet,
        live: None,
    };
    let result = plumb_pipeline::execute(&plan, &Mysqlslap::LAYOUT, &stop, &mut output);
    let _ = report.flush();
    let failed = |e: &(dyn std::error::Error + 'static)| -> Option<SlapError> {
        e.downcast_ref::<SlapError>().cloned()
    };
    match result {
        Ok(f) => {
            // A run that only printed its statements measured nothing worth keeping.
            if !spec.only_print {
                crate::keep::keep(&f.record, &plumb.flags.keep);
            }
            match f.stopped_by {
                Some(StopCause::Signal(s)) => exit::for_signal(s),
                Some(_) => 1,
                None => 0,
            }
        }
        Err(PipelineError::Job(JobError::Interrupted(s))) => exit::for_signal(s),
        Err(PipelineError::Job(JobError::Failed(e))) => {
            match failed(e.as_ref()) {
                Some(se) => eprintln!("{prog}: {se}"),
                None => eprintln!("{prog}: {}", plumb_core::redact::text(&e.to_string(), args)),
            }
            1
        }
        Err(PipelineError::Harness(HarnessError::Failed { error, .. }))
        | Err(PipelineError::Harness(HarnessError::Workload(error))) => {
            match failed(error.0.as_ref()) {
                // mysqlslap exits at once, with status 0, when a client's query fails.
                Some(se @ SlapError::ClientQuery { .. }) => {
                    eprintln!("{prog}: {se}");
                    if mode == Mode::DropIn {
                        0
                    } else {
                        1
                    }
                }
                Some(se) => {
                    eprintln!("{prog}: {se}");
                    1
                }
                None => {
                    eprintln!(
                        "{prog}: {}",
                        plumb_core::redact::text(&error.to_string(), args)
                    );
                    1
                }
            }
        }
        Err(e) => {
            eprintln!("{prog}: {}", plumb_core::redact::text(&e.to_string(), args));
            1
        }
    }
}

/// One group per engine, concurrency value and iteration, in mysqlslap's order.
fn plan_groups(
    spec: &Arc<SlapSpec>,
    cmd: &apply::Command,
    shared: &Arc<SlapRun>,
    csv: Option<&Arc<CsvFile>>,
    plumb_sections: bool,
) -> Vec<Group> {
    let engines: Vec<Option<plumb_oltp::slap::Engine>> = if spec.engines.is_empty() {
        vec![None]
    } else {
        spec.engines.iter().cloned().map(Some).collect()
    };
    let mut groups = Vec::new();
    let mut block = 0u32;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    for engine in &engines {
        for (ci, &c) in spec.concurrency.iter().enumerate() {
            for it in 1..=spec.iterations {
                let last_of_engine = ci + 1 == spec.concurrency.len() && it == spec.iterations;
                let point = SlapPoint {
                    engine: engine.clone(),
                    concurrency: c,
                    iteration: it,
                    first_of_engine: ci == 0 && it == 1,
                    last_of_engine,
                };
                let last_of_block = it == spec.iterations;
                let facts = SlapFacts {
                    block,
                    last_of_block,
                    silent: cmd.silent,
                    csv_stdout: matches!(cmd.csv, Some(apply::Csv::Stdout)),
                    load_type: cmd.load_type_label.clone(),
                    verbose: cmd.verbose,
                    plumb_sections,
                };
                let mut steps = vec![Step::Prepare, Step::Run];
                if last_of_engine {
                    steps.push(Step::Cleanup);
                }
                let config = RunConfig {
                    threads: c as usize,
                    time_limit: None,
                    event_limit: 0,
                    seed: seed.wrapping_add(groups.len() as u64),
                    interval_percentiles: vec![95.0],
                    ..RunConfig::default()
                };
                groups.push(Group {
                    steps,
                    jobs: vec![JobSpec {
                        name: format!("mysqlslap-c{c}-i{it}"),
                        config,
                        seed_given: false,
                        layout: serde_json::to_value(&facts).ok(),
                        start_delay: Duration::ZERO,
                        after: Vec::new(),
                        checkpoints: Vec::new(),
                        job: Box::new(FrontJob {
                            job: SlapJob::new(shared.clone(), point),
                            last_of_block,
                            csv: csv.cloned(),
                        }),
                    }],
                });
            }
            block += 1;
        }
    }
    groups
}

/// What `--debug-info` prints at exit: the process's resource use (getrusage), in the C
/// client library's words.
fn rusage_report() -> String {
    // SAFETY: rusage is plain data that getrusage fills.
    let r = unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut r);
        r
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    format!(
        "\nUser time {:.2}, System time {:.2}\n\
         Maximum resident set size {}, Integral resident set size {}\n\
         Non-physical pagefaults {}, Physical pagefaults {}, Swaps {}\n\
         Blocks in {} out {}, Messages in {} out {}, Signals {}\n\
         Voluntary context switches {}, Involuntary context switches {}\n",
        secs(r.ru_utime),
        secs(r.ru_stime),
        r.ru_maxrss,
        r.ru_idrss + r.ru_isrss + r.ru_ixrss,
        r.ru_minflt,
        r.ru_majflt,
        r.ru_nswap,
        r.ru_inblock,
        r.ru_oublock,
        r.ru_msgsnd,
        r.ru_msgrcv,
        r.ru_nsignals,
        r.ru_nvcsw,
        r.ru_nivcsw
    )
}
