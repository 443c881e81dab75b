//! `plumb fio ...` and the binary run as `fio`: parse fio's command line and job files,
//! translate every job into plumb's job model, run them group after group on the pipeline,
//! and print fio's report (plus, under the name `plumb`, plumb's observations and findings).
//!
//! fio's exit status: 1 for a parse or option error (nothing runs), otherwise the number of
//! jobs that failed; a run cut short by a signal exits 128 under the name `fio`, as fio does,
//! and 128 + the signal under plumb's.

use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use plumb_core::{StopCause, Workload};
use plumb_fileio::FileioError;
use plumb_pipeline::jobs::fileio::FileioJob;
use plumb_pipeline::{
    Group, Job, JobError, JobRecord, JobSpec, PipelineError, Plan, PlanOptions, Settings, Step,
    StepContext, Targets,
};
use plumb_report::fio::job::{FioFailure, FioJobInfo, OutputOptions};
use plumb_report::fio::live::FioStatus;
use plumb_report::fio::{layout_line, prologue, Fio};

use super::failure;
use super::translate::{self, Context, JobClone, JobOptions};
use super::{parse, Eta, Host, Invocation, Parsed, ParsedJob};
use crate::{exit, signals};

/// Which name the binary answers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// `plumb fio ...`: plumb's sections follow fio's report.
    Plumb,
    /// Run as `fio`: fio's report only (plumb's evidence in the JSON document's `plumb` key).
    DropIn,
}

impl JobOptions for ParsedJob {
    fn name(&self) -> &str {
        self.fio_name()
    }
    fn file_stem(&self) -> &str {
        &self.name
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.raw(name).map(|v| v.unwrap_or(""))
    }
    fn kb_of(&self, name: &str) -> super::values::KbBase {
        ParsedJob::kb_of(self, name)
    }
    fn history(&self, name: &str) -> Vec<(&str, super::values::KbBase)> {
        self.options
            .iter()
            .filter(|s| s.name == name)
            .map(|s| (s.value.as_deref().unwrap_or(""), s.kb))
            .collect()
    }
    fn last_set<'a>(&self, names: &[&'a str]) -> Option<&'a str> {
        self.options
            .iter()
            .rev()
            .find_map(|s| names.iter().find(|n| **n == s.name).copied())
    }
}

/// plumb's own options, taken out before fio's parser sees the rest.
type PlumbOptions = crate::plumb_flags::PlumbFlags;

fn take_plumb_options(args: &[String], mode: Mode) -> Result<(PlumbOptions, Vec<String>), String> {
    let mut p = PlumbOptions::new(mode == Mode::Plumb).with_io_options();
    let mut rest = Vec::with_capacity(args.len());
    for a in args {
        match p.take(a) {
            Some(r) => r?,
            None => rest.push(a.clone()),
        }
    }
    Ok((p, rest))
}

/// The fio front end; returns the exit status.
pub fn main(args: &[String], mode: Mode) -> i32 {
    // fio names itself in its messages by argv[0] as typed (`/usr/bin/fio: unrecognized
    // option`), so the drop-in does too.
    let argv0 = std::env::args().next().unwrap_or_else(|| "fio".to_string());
    let prog = if mode == Mode::DropIn {
        argv0.as_str()
    } else {
        "plumb fio"
    };
    let (plumb, args) = match take_plumb_options(args, mode) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("plumb: {e}");
            return 1;
        }
    };
    let inv = match parse(prog, &args, &Host::real()) {
        Ok(inv) => inv,
        Err(e) => {
            if let Some(out) = e.stdout() {
                print!("{out}");
            }
            eprintln!("{e}");
            return 1;
        }
    };
    match inv {
        Invocation::Print(text) => {
            print!("{text}");
            0
        }
        Invocation::CmdHelp { stdout, stderr } => {
            print!("{stdout}");
            eprint!("{stderr}");
            0
        }
        Invocation::Run(run) => execute(run, &args, mode, &plumb),
    }
}

/// A fio job on plumb's file-I/O job: prints fio's layout line before laying out its files.
struct FioFileJob {
    job: FileioJob,
    name: String,
    /// Files to lay out, for fio's notice (printed with the normal format only).
    layout: Option<(u32, u64)>,
    logs: Option<super::translate::LogFiles>,
    /// iodepth > 1 on an engine that completes each request in its call: fio's note.
    depth_note: bool,
    /// The normal text format is on (fio's notices go with it).
    normal: bool,
    /// The job's files as fio names them.
    file_names: Vec<String>,
    /// The layout failed: fio's words for it and its stderr lines, for the record.
    layout_failure: RefCell<Option<(FioFailure, Vec<String>)>>,
    /// Its place in steady-state detection, whose outcome goes into the record.
    steady: Option<plumb_core::steady::SteadyMember>,
    /// exec_prerun and exec_postrun.
    prerun: Option<String>,
    postrun: Option<String>,
    /// lockmem's bytes, and the memory pinned from prepare to cleanup.
    lockmem: u64,
    pinned: RefCell<Option<super::lockmem::Pinned>>,
    /// The I/O scheduler its disks are switched to before its I/O.
    ioscheduler: Option<String>,
}

impl Job for FioFileJob {
    fn kind(&self) -> &'static str {
        "fio"
    }
    fn prepare(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        if let Some((files, bytes)) = self.layout {
            let _ = write!(ctx.log(), "{}", layout_line(&self.name, files, bytes));
        }
        if self.depth_note {
            let _ = writeln!(ctx.log(), "{}", plumb_report::fio::DEPTH_NOTE);
        }
        self.job
            .prepare(ctx)
            .map_err(|e| self.layout_failed(e, ctx))?;
        if self.lockmem > 0 {
            let (len, note) = super::lockmem::limited(self.lockmem);
            if let Some(n) = note.filter(|_| self.normal) {
                let _ = writeln!(ctx.log(), "{n}");
            }
            let pinned = super::lockmem::pin(len)
                .map_err(|e| JobError::Skipped(format!("lockmem: cannot lock {len} bytes: {e}")))?;
            *self.pinned.borrow_mut() = Some(pinned);
        }
        if let Some(name) = &self.ioscheduler {
            self.switch_scheduler(name)?;
        }
        if let Some(cmd) = &self.prerun {
            self.exec(ctx, "prerun", cmd).map_err(JobError::Skipped)?;
        }
        Ok(())
    }
    fn cleanup(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        // fio unpins before the postrun.
        self.pinned.borrow_mut().take();
        // After the run and its logs, before unlink; its status changes nothing, as in fio.
        if let Some(cmd) = &self.postrun {
            let _ = self.exec(ctx, "postrun", cmd);
        }
        self.job.cleanup(ctx).map_err(|e| self.fail(e))
    }
    fn workload(&self, notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        self.job
            .spec()
            .check_run()
            .map_err(|e| JobError::Usage(format!("fio: {}: {}", self.name, e.describe(&spell))))?;
        self.job.workload(notes).map_err(|e| self.fail(e))
    }
    fn settings(&self) -> Settings {
        self.job.settings()
    }
    fn targets(&self) -> Targets {
        self.job.targets()
    }
    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        if let Some((f, said)) = self.layout_failure.borrow().as_ref() {
            // It never ran: no figures, no logs.
            failure::record(job, Some(f), said.clone());
            return Ok(());
        }
        self.job.after_run(job)?;
        if let Some(m) = &self.steady {
            super::steady::record(job, &m.report());
        }
        let (failed, said) = failure::of_run(
            job.error.is_some(),
            &self.job.take_failed_requests(),
            &self.job.take_min_rate_misses(),
            &self.job.take_max_latency_exceeded(),
            &self.name,
            &self.file_names,
        );
        failure::record(job, failed.as_ref(), said);
        let spec = self.job.spec();
        if spec.job.as_ref().is_some_and(|j| j.tolerate.is_some()) {
            let (total, first) = self.job.errors();
            let words = super::tolerate::first_error_words(spec.engine.name, first);
            failure::record_errors(job, total, first, words);
        }
        if let Some(files) = &self.logs {
            super::logs::write(files, self.job.take_logs()).map_err(|e| {
                JobError::Failed(
                    format!("fio: {}: cannot write its log files: {e}", self.name).into(),
                )
            })?;
        }
        Ok(())
    }
}

impl FioFileJob {
    /// fio's exec_prerun or exec_postrun, its line on the report's stream first (normal
    /// format only: plumb keeps a JSON or terse document clean).
    fn exec(&self, ctx: &mut StepContext<'_>, mode: &str, cmd: &str) -> Result<(), String> {
        if self.normal {
            let _ = writeln!(ctx.log(), "{}", super::exec::saving_line(&self.name, mode));
            let _ = ctx.log().flush();
        }
        super::exec::run(&self.name, mode, cmd)
    }

    /// fio's ioscheduler, on the disks under the job's files (an engine with no files has
    /// none). A switch that does not take fails the job as in fio: its line on stderr,
    /// error EINVAL, no I/O.
    fn switch_scheduler(&self, name: &str) -> Result<(), JobError> {
        let spec = self.job.spec();
        if !spec.engine.caps.needs_files {
            return Ok(());
        }
        let files: Vec<_> = spec
            .job
            .iter()
            .flat_map(|j| j.files.iter().map(|f| f.path.clone()))
            .collect();
        match super::iosched::switch(&files, name) {
            Ok(notes) => {
                for n in notes {
                    eprintln!("{n}");
                }
                Ok(())
            }
            Err(super::iosched::Refused(line)) => {
                let f = FioFailure {
                    errno: libc::EINVAL,
                    verror: "file:backend.c:1450, func=iosched_switch, error=Invalid argument"
                        .into(),
                    in_layout: false,
                };
                *self.layout_failure.borrow_mut() = Some((f, vec![line]));
                Err(JobError::Skipped(format!(
                    "ioscheduler: the disk under its files would not take the {name} scheduler"
                )))
            }
        }
    }

    /// A write of the layout failed: the job fails alone, as in fio, which says so on
    /// stdout when the disk is full (normal format only: plumb keeps a JSON or terse
    /// document clean, fio would print it before the document).
    fn layout_failed(&self, e: JobError, ctx: &mut StepContext<'_>) -> JobError {
        let JobError::Failed(inner) = e else {
            return self.fail(e);
        };
        match inner.downcast::<FileioError>() {
            Ok(fe) => {
                let why = fe.to_string();
                let (f, said) = match *fe {
                    FileioError::LayoutWrite { errno, .. } => {
                        let f = failure::in_layout(errno);
                        if let Some(notice) = f.layout_notice().filter(|_| self.normal) {
                            let _ = writeln!(ctx.log(), "{notice}");
                        }
                        let said = vec![f.pid_line(0)];
                        (f, said)
                    }
                    FileioError::LayoutCall { call, errno, .. } => {
                        let f = failure::in_layout_call(call, errno);
                        let said = vec![f.pid_line(0)];
                        (f, said)
                    }
                    // fio's one line; the job ends with no error number of its own.
                    FileioError::CreateDisallowed { .. } => {
                        let (f, said) = failure::create_disallowed();
                        (f, vec![said])
                    }
                    other => return self.fail(JobError::failed(other)),
                };
                *self.layout_failure.borrow_mut() = Some((f, said));
                JobError::Skipped(why)
            }
            Err(other) => JobError::Failed(other),
        }
    }

    fn fail(&self, e: JobError) -> JobError {
        match e {
            JobError::Failed(inner) => match inner.downcast::<FileioError>() {
                Ok(fe) => JobError::Usage(format!("fio: {}: {}", self.name, fe.describe(&spell))),
                Err(other) => JobError::Failed(other),
            },
            other => other,
        }
    }
}

/// The settings plumb's errors name, in fio's options.
fn spell(s: plumb_fileio::setting::Setting) -> String {
    use plumb_fileio::setting::Setting as S;
    match s {
        S::FileCount => "nrfiles",
        S::TotalSize => "size",
        S::BlockSize => "bs",
        S::Engine => "ioengine",
        S::QueueDepth => "iodepth",
        S::Direct => "direct",
        S::OpenFlags => "direct/sync",
        S::Threads => "numjobs",
        S::Dir => "directory",
        S::Validate => "verify",
        other => return other.plain().to_string(),
    }
    .to_string()
}

/// The exit status of a run cut short by a signal: fio's 128 under its name, plumb's
/// 128 + the signal under plumb's.
fn interrupted(signal: i32, mode: Mode) -> i32 {
    eprintln!("fio: terminating on signal {signal}");
    match mode {
        Mode::DropIn => 128,
        Mode::Plumb => exit::for_signal(signal),
    }
}

/// A fio command line checked and turned into its plan, ready to run.
pub struct Checked {
    pub plan: Plan,
    infos: Vec<FioJobInfo>,
    normal: bool,
    output: Option<String>,
    /// The status line: shown, and whether the first job to end stops the others.
    eta: Option<FioStatus>,
    /// The files the jobs open, each once, in the jobs' order (`directory/jobname.jobnum.
    /// filenum`, or `filename=`): what a run lays out when they are missing; none for an
    /// engine that opens no file.
    pub files: Vec<PathBuf>,
}

/// Check a fio command line (the words after `fio`) under plumb's name and build its plan,
/// for callers that run it themselves (a sweep). `Err` holds fio's message lines.
pub fn check(args: &[String]) -> Result<Checked, String> {
    let (plumb, args) = take_plumb_options(args, Mode::Plumb)?;
    match parse("plumb fio", &args, &Host::real()) {
        Ok(Invocation::Run(run)) => build(run, &args, Mode::Plumb, &plumb).map_err(|r| {
            // A caller that runs it itself has one message: fio's own lines, not its
            // job headers.
            if r.stderr.is_empty() {
                r.stdout.lines().last().unwrap_or_default().to_string()
            } else {
                r.stderr
            }
        }),
        Ok(_) => Err("this fio command line prints help or a version, it runs nothing".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Why a command line runs nothing: what fio prints on stdout, then on stderr (both empty:
/// nothing to say, fio's --parse-only).
struct Refused {
    stdout: String,
    stderr: String,
}

impl From<String> for Refused {
    fn from(stderr: String) -> Self {
        Refused {
            stdout: String::new(),
            stderr,
        }
    }
}

fn execute(run: Parsed, args: &[String], mode: Mode, plumb: &PlumbOptions) -> i32 {
    let parse_only = run.flags.parse_only;
    match build(run, args, mode, plumb) {
        Ok(checked) => run_checked(checked, args, mode, plumb),
        Err(r) if r.stdout.is_empty() && r.stderr.is_empty() && parse_only => 0,
        Err(r) => {
            print!("{}", r.stdout);
            if !r.stderr.is_empty() || r.stdout.is_empty() {
                eprintln!("{}", r.stderr);
            }
            1
        }
    }
}

/// The lines fio printed as it added `clones`: what it said as it parsed each, then (normal
/// format only) its header line; the last one's clones cut to one when `cut_last` (fio
/// refused it before adding them: no `...` line).
fn headers(clones: &[(u32, JobClone)], normal: bool, cut_last: bool) -> String {
    let mut stdout = String::new();
    for (i, (_, c)) in clones.iter().enumerate() {
        if c.info.subjob != 0 {
            continue;
        }
        // What fio printed as it parsed the job comes in every format.
        for l in &c.info.parse_lines {
            stdout.push_str(l);
            stdout.push('\n');
        }
        if normal {
            let mut h = c.info.header.clone();
            if cut_last && i + 1 == clones.len() {
                h.numjobs = 1;
            }
            stdout.push_str(&plumb_report::fio::job_header_line(&h));
        }
    }
    stdout
}

/// fio's refusal of a job whose steady-state settings differ from its reporting group's
/// (`clones[k]`): on stdout, after the header lines fio printed as it added the jobs up to
/// that one.
fn inconsistent_steady(clones: &[(u32, JobClone)], k: usize, normal: bool) -> Refused {
    let mut stdout = headers(&clones[..=k], normal, true);
    stdout.push_str(super::steady::INCONSISTENT);
    stdout.push('\n');
    Refused {
        stdout,
        stderr: String::new(),
    }
}

/// fio's refusal of a job as it adds it (its fixup, its wait_for): `stderr`, after the
/// header lines of the jobs added before it.
fn refused_when_added(clones: &[(u32, JobClone)], normal: bool, stderr: String) -> Refused {
    Refused {
        stdout: headers(clones, normal, false),
        stderr,
    }
}

/// The plan of a parsed command line, or fio's refusal.
fn build(
    run: Parsed,
    args: &[String],
    mode: Mode,
    plumb: &PlumbOptions,
) -> Result<Checked, Refused> {
    let flags = &run.flags;
    let f = flags.formats;
    let output = OutputOptions {
        formats: plumb_report::fio::job::Formats {
            terse: f.terse,
            json: f.json,
            json_plus: f.json_plus,
            normal: f.normal,
        },
        terse_version: flags.terse_version as u32,
        drop_in: mode == Mode::DropIn,
        plumb_sections: plumb.findings.unwrap_or(mode == Mode::Plumb),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    // Clones by the group they run in: a stonewall (or a later job file) waits for every
    // job before it; new_group only starts a new report group, its jobs run with the others.
    let mut clones: Vec<(u32, JobClone)> = Vec::new();
    let mut run_group = 0u32;
    let mut number = 1u32;
    let global_options: Vec<(String, String)> = run
        .global_options_json()
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    // Each clone's name as wait_for matches it, and its wait_for.
    let mut waiting: Vec<(String, Option<String>)> = Vec::new();
    // opendir counts of [global] sections said so far.
    let mut announced: Vec<String> = Vec::new();
    let flows = plumb_fileio::flow::Flows::default();
    for (k, job) in run.jobs.iter().enumerate() {
        let job_options: Vec<(String, String)> = job
            .job_options()
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let ctx = Context {
            job_number: number,
            groupid: job.group,
            global_options: &global_options,
            job_options: &job_options,
            output: &output,
            cwd: &cwd,
            parse_only: flags.parse_only,
            buffers: plumb.io_buffers,
            flows: (!flags.parse_only).then_some(&flows),
        };
        let waits = match job.stonewall() {
            Ok(w) => w,
            Err(e) => return Err(e.to_string().into()),
        };
        if waits && !clones.is_empty() {
            run_group += 1;
        }
        match translate::translate(job, &ctx) {
            Ok(mut cs) => {
                // fio says what opendir added as it parses the option: once for each job
                // that sets it, once for a [global] section that does.
                if let Some((line, own)) = cs.first().and_then(|c| c.opendir_note.clone()) {
                    if own || !announced.contains(&line) {
                        if !own {
                            announced.push(line.clone());
                        }
                        cs[0].info.parse_lines.push(line);
                    }
                }
                for w in cs.iter().flat_map(|c| c.warnings.iter()) {
                    eprintln!("{w}");
                }
                if let Err(e) = super::wait_for::check(job, &run.jobs[..k]) {
                    return Err(refused_when_added(&clones, f.normal, e));
                }
                let me = job.fio_name().to_string();
                let waitee = super::wait_for::waitee(job).map(str::to_string);
                waiting.extend(cs.iter().map(|_| (me.clone(), waitee.clone())));
                number += cs.len() as u32;
                clones.extend(cs.into_iter().map(|c| (run_group, c)));
                // fio checks each job against its reporting group as it adds it.
                if let Err(k) = super::steady::check_groups(clones.iter().map(|(_, c)| c)) {
                    return Err(inconsistent_steady(&clones, k, f.normal));
                }
            }
            Err(translate::TranslateError::Fixup(e)) => {
                return Err(refused_when_added(&clones, f.normal, e));
            }
            Err(translate::TranslateError::Opendir(u)) => {
                let mut stdout = headers(&clones, f.normal, false);
                stdout.push_str(&u.fio_line());
                stdout.push('\n');
                let mut stderr = format!("fio: failed parsing opendir={}", u.dir);
                if job.origin != super::job::Origin::CommandLine {
                    stderr.push_str(&format!("\nfio: job {} dropped", job.name));
                }
                return Err(Refused { stdout, stderr });
            }
            Err(e) => {
                if matches!(e, translate::TranslateError::Parse { .. }) {
                    return Err(format!("{e}\nfio: job {} dropped", job.name).into());
                }
                return Err(e.to_string().into());
            }
        }
    }
    translate::share_layouts(clones.iter_mut().map(|(_, c)| c));
    super::steady::join_groups(clones.iter_mut().map(|(_, c)| c));
    if flags.parse_only {
        return Err(String::new().into());
    }
    if flags.readonly {
        if let Some((_, c)) = clones
            .iter()
            .find(|(_, c)| c.spec.access.is_some_and(|a| a.writes()))
        {
            return Err(format!(
                "fio: job <{}> has write or trim bit set, but fio is in read-only mode",
                c.name
            )
            .into());
        }
    }
    // Writing to (or trimming) a block device that holds data is refused before anything
    // runs: access.writes() covers trims.
    for (_, c) in &clones {
        let writes = c.spec.access.is_some_and(|a| a.writes());
        let allow = c.allow_mounted_write;
        if let (true, false, Some(j)) = (writes, allow, c.spec.job.as_ref()) {
            for f in &j.files {
                if let Err(refusal) = plumb_observe::device_write::check_device_write(
                    &f.path,
                    "allow_mounted_write=1",
                ) {
                    return Err(format!("fio: {refusal}").into());
                }
            }
        }
    }

    let infos: Vec<FioJobInfo> = clones.iter().map(|(_, c)| c.info.clone()).collect();
    let mut files: Vec<PathBuf> = Vec::new();
    for (_, c) in &clones {
        let Some(j) = c
            .spec
            .job
            .as_ref()
            .filter(|_| c.spec.engine.caps.needs_files)
        else {
            continue;
        };
        for f in &j.files {
            if !files.contains(&f.path) {
                files.push(f.path.clone());
            }
        }
    }
    // fio draws its status line on a terminal (or always, when told), never where it would
    // mix with a JSON or terse report on stdout.
    let shown = match flags.eta {
        Eta::Never => false,
        Eta::Always => true,
        Eta::Auto => std::io::stdout().is_terminal(),
    } && (f.normal || flags.output.is_some());
    let eta = shown.then(|| {
        FioStatus::new(
            std::time::Duration::from_millis(flags.eta_interval_ms),
            clones.iter().any(|(_, c)| c.exitall),
            flags.eta_newline_ms.map(std::time::Duration::from_millis),
        )
    });
    let stop = signals::install();
    let mut groups: Vec<Group> = Vec::new();
    let mut current: Option<u32> = None;
    // exitall: one flag per reporting group (fio's exit_what=group), or per stonewall
    // group where a job of it says exit_what=stonewall, shared by the jobs it stops.
    let stonewall_wide: std::collections::HashSet<u32> = clones
        .iter()
        .filter(|(_, c)| (c.exitall || c.exitall_on_error) && c.exit_stonewall)
        .map(|(gid, _)| *gid)
        .collect();
    if let Some((_, c)) = clones.iter().find(|(gid, c)| {
        stonewall_wide.contains(gid) && (c.exitall || c.exitall_on_error) && !c.exit_stonewall
    }) {
        return Err(format!(
            "plumb: fio job {}: exit_what=group beside exit_what=stonewall in one stonewall group is not supported yet",
            c.name
        )
        .into());
    }
    let scope = |gid: u32, c: &JobClone| -> (u32, Option<u32>) {
        if stonewall_wide.contains(&gid) {
            (gid, None)
        } else {
            (gid, Some(c.info.header.groupid))
        }
    };
    let mut together: std::collections::HashMap<
        (u32, Option<u32>),
        Arc<std::sync::atomic::AtomicBool>,
    > = Default::default();
    for (gid, c) in &clones {
        if c.exitall || c.exitall_on_error {
            together.entry(scope(*gid, c)).or_default();
        }
    }
    let keys: Vec<(u32, &str, Option<&str>)> = clones
        .iter()
        .zip(&waiting)
        .map(|((gid, _), (me, w))| (*gid, me.as_str(), w.as_deref()))
        .collect();
    let mut after = super::wait_for::waits(&keys)?.into_iter();
    for (gid, mut c) in clones {
        if let Some(flag) = together.get(&scope(gid, &c)) {
            c.config.together = Some(plumb_core::Together {
                ended: flag.clone(),
                ends_others: c.exitall,
                ends_others_on_error: c.exitall_on_error,
            });
        }
        if current != Some(gid) {
            groups.push(Group {
                steps: vec![Step::Prepare, Step::Run, Step::Cleanup],
                jobs: Vec::new(),
            });
            current = Some(gid);
        }
        let layout = serde_json::to_value(&c.info).ok();
        let depth_note =
            plumb_report::fio::depth_note_applies(c.info.header.iodepth, c.spec.engine.caps);
        let job = FioFileJob {
            steady: c.config.steady.clone(),
            job: FileioJob::new(c.spec, None, stop.clone()),
            name: c.name.clone(),
            layout: c.info.laid_out.filter(|_| f.normal),
            logs: c.logs.clone(),
            depth_note,
            normal: f.normal,
            file_names: c.file_names.clone(),
            layout_failure: RefCell::new(None),
            prerun: c.prerun.clone(),
            postrun: c.postrun.clone(),
            lockmem: c.lockmem,
            ioscheduler: c.ioscheduler.clone(),
            pinned: RefCell::new(None),
        };
        groups.last_mut().expect("a group").jobs.push(JobSpec {
            name: c.name,
            config: c.config,
            seed_given: c.seed_given,
            layout,
            start_delay: c.start_delay,
            after: after.next().unwrap_or_default(),
            checkpoints: Vec::new(),
            job: Box::new(job),
        });
    }
    let plan = Plan {
        front_end: "fio",
        layout: None,
        command_line: plumb_core::redact::args(
            std::iter::once(if mode == Mode::DropIn {
                "fio"
            } else {
                "plumb fio"
            })
            .chain(args.iter().map(String::as_str)),
        ),
        groups,
        options: PlanOptions {
            percentiles: infos
                .first()
                .map(|i| i.percentiles.clone())
                .unwrap_or_default(),
            histogram: false,
            text: true,
            json_file: plumb.json_file.clone(),
            strict: false,
            observe_interval: Some(std::time::Duration::from_millis(250)),
            status_interval: flags
                .status_interval_ms
                .map(std::time::Duration::from_millis),
            notes: mode == Mode::Plumb,
            keep_going: true,
            setup_server: None,
        },
    };

    Ok(Checked {
        plan,
        infos,
        normal: f.normal,
        output: flags.output.clone(),
        eta,
        files,
    })
}

/// Run a checked command line; returns fio's exit status.
fn run_checked(c: Checked, args: &[String], mode: Mode, plumb: &PlumbOptions) -> i32 {
    let Checked {
        plan,
        infos,
        normal,
        output,
        eta,
        files: _,
    } = c;
    let stop = signals::install();
    // Where the report goes: --output=FILE, or stdout.
    let mut report: Box<dyn Write + Send> = match &output {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("fio: unable to open '{p}' for output: {e}");
                return 1;
            }
        },
        None => Box::new(std::io::stdout()),
    };
    if normal {
        let _ = write!(report, "{}", prologue(&infos));
    } else {
        let _ = write!(report, "{}", plumb_report::fio::parse_lines(&infos));
    }
    let mut stderr = std::io::stderr();
    let mut quiet = plumb_core::progress::Quiet;
    let mut out = plumb_pipeline::Output {
        report: &mut report,
        diagnostics: &mut stderr,
        progress: &mut quiet,
        live: eta
            .as_ref()
            .map(|s| s as &dyn plumb_pipeline::live::LiveStatus),
    };
    let result = plumb_pipeline::execute(&plan, &Fio::LAYOUT, &stop, &mut out);
    super::iosched::restore_all();
    let _ = report.flush();
    match result {
        Ok(f) => {
            crate::keep::keep(&f.record, &plumb.keep);
            // fio exits with the number of jobs that failed.
            let mut failed = 0;
            for j in f.record.groups.iter().flat_map(|g| g.jobs.iter()) {
                let (words, said) = failure::info(j)
                    .map(|i| (i.failure, i.stderr))
                    .unwrap_or_default();
                // The drop-in says what fio says; plumb one line per failed job: fio's own
                // first line where it names what failed (a full disk's file, a minimum
                // rate), plumb's for any other failed request (it may say more).
                if mode == Mode::DropIn {
                    for l in &said {
                        eprintln!("{l}");
                    }
                }
                let Some(e) = &j.error else { continue };
                failed += 1;
                match (words, mode) {
                    (Some(_), Mode::DropIn) => {}
                    (Some(w), Mode::Plumb)
                        if !w.in_layout && !said.is_empty() && !failure::plumb_says_more(&w) =>
                    {
                        eprintln!("{}", said[0])
                    }
                    _ => eprintln!("fio: job {}: {e}", j.name),
                }
            }
            match f.stopped_by {
                Some(StopCause::Signal(s)) => interrupted(s, mode),
                Some(_) => 1,
                None => failed,
            }
        }
        Err(PipelineError::Job(JobError::Interrupted(s))) => interrupted(s, mode),
        Err(e) => {
            // fio's own lines all start with its name.
            let line = plumb_core::redact::text(&e.to_string(), args);
            if line.starts_with("fio: ") {
                eprintln!("{line}");
            } else {
                eprintln!("fio: {line}");
            }
            1
        }
    }
}
