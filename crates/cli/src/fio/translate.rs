//! One parsed fio job into plumb's job model: a [`FileioSpec`] with named files (one per
//! clone of `numjobs`), the harness settings, and the facts fio's layout prints
//! ([`FioJobInfo`]). fio's names, defaults and refusals live here; nothing downstream knows
//! them.
//!
//! What each option becomes is in docs/fio.md. An option plumb accepts but whose value it
//! cannot honour yet (a zoned random distribution, ...) is refused with one line naming it
//! and its value: never ignored.

use std::path::{Path, PathBuf};
use std::time::Duration;

use plumb_core::RunConfig;
use plumb_fileio::access::{Access, Mix, Order};
use plumb_fileio::buf::BufferMemory;
use plumb_fileio::engine::{self, EngineDef, EngineOptions};
use plumb_fileio::placement::{allowed_cpus, cpus_of_mask, parse_cpu_list, Placement};
use plumb_fileio::spec::{
    Allocation, BlockSizes, FileAdvice, FileioSpec, Fill, FsyncMode, JobIo, NamedFile, OpenFlags,
    SizeChoice, SyncPolicy,
};
use plumb_report::fio::job::{
    FioJobInfo, JobProgress, LatSeries, OutputOptions, DEFAULT_PERCENTILES,
};
use plumb_report::fio::JobHeader;

mod measure;

use super::values::{
    parse_bool, parse_bssplit, parse_enum, parse_float_list, parse_int, parse_runtime_ns,
    parse_rwt_ranges, parse_signed_time_ns, parse_size, KbBase, Size, TimeUnit,
};

/// What the translation needs from a parsed job: the value each option ends up with.
pub trait JobOptions {
    /// The job's name: in its reports, messages and log file names.
    fn name(&self) -> &str;
    /// The name its files are named after (fio's section name, which a job file's `name=`
    /// does not change).
    fn file_stem(&self) -> &str {
        self.name()
    }
    /// The value of canonical option `name` after globals and the job's own lines (`Some("")`
    /// when given bare), `None` when nobody set it.
    fn get(&self, name: &str) -> Option<&str>;
    /// Which of `names` was set last (for pairs where the last one wins).
    fn last_set<'a>(&self, names: &[&'a str]) -> Option<&'a str>;
    /// The kb_base `name`'s value is read with: fio parses a value with the kb_base in
    /// force as it applies the option, and its defaults with 1024. Without that history,
    /// the job's kb_base.
    fn kb_of(&self, name: &str) -> KbBase {
        match (self.get(name), self.get("kb_base")) {
            (Some(_), Some("1000")) => KbBase::K1000,
            _ => KbBase::K1024,
        }
    }
    /// Every value `name` was given, in the order fio applied them, each with the kb_base
    /// it is read with. Without that history, the last value alone.
    fn history(&self, name: &str) -> Vec<(&str, KbBase)> {
        self.get(name)
            .map(|v| vec![(v, self.kb_of(name))])
            .unwrap_or_default()
    }
}

/// An r,w,t number option (bs, ba, rate...) per direction after all its settings: fio
/// applies each on top of the one before, so a direction a setting leaves out, or whose
/// field fails (the read size of `bs=0,4k`), keeps what it had. None where no setting gave
/// the direction a value (the option's default then).
pub(super) fn rwt_option<J: JobOptions + ?Sized>(j: &J, name: &str) -> [Option<u64>; 3] {
    let mut out = [None; 3];
    let Some(opt) = super::options::find(name) else {
        return out;
    };
    for (v, kb) in j.history(name) {
        for (slot, n) in out.iter_mut().zip(opt.rwt_values(v, kb)) {
            if n.is_some() {
                *slot = n;
            }
        }
    }
    out
}

/// A refusal or a bad value, in fio's words where fio has words for it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TranslateError {
    /// `fio: failed parsing NAME=VALUE`
    #[error("fio: failed parsing {name}={value}")]
    Parse { name: String, value: String },
    /// An option (or value) fio has and plumb does not do yet.
    #[error("plumb: fio option '{name}' (value '{value}') is not supported yet{why}")]
    Unsupported {
        name: String,
        value: String,
        why: String,
    },
    /// fio's own complaint about the job (`you need to specify size=`), one line.
    #[error("{0}")]
    Job(String),
    /// fio's complaint as it adds the job (its fixup_options), after the header lines of the
    /// jobs added before it; one line or several.
    #[error("{0}")]
    Fixup(String),
    /// `opendir` names a directory that cannot be listed: fio's line on stdout
    /// ([`super::opendir::Unlisted::fio_line`]), this one on stderr.
    #[error("fio: failed parsing opendir={}", .0.dir)]
    Opendir(super::opendir::Unlisted),
}

/// The logs `read_iolog` names (`a:b`: one per clone, in turn), read; `None` without it,
/// and under `--parse-only`, which reads no log.
fn read_logs<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
    ctx: &Context<'_>,
) -> Result<Option<Vec<super::replay::Replay>>, TranslateError> {
    let Some(v) = g.raw("read_iolog") else {
        return Ok(None);
    };
    if ctx.parse_only {
        return Ok(None);
    }
    if v == "-" {
        return Err(unsupported(
            "read_iolog",
            v,
            "a log read from standard input",
        ));
    }
    let o = super::replay::ReplayOptions {
        redirect: g.raw("replay_redirect").map(str::to_string),
        scale: g.int("replay_scale", 1)?,
        align: match g.int("replay_align", 0)? {
            a if a == 0 || a.is_power_of_two() => a,
            _ => {
                return Err(parse_err(
                    "replay_align",
                    g.raw("replay_align").unwrap_or_default(),
                ))
            }
        },
        time_scale: g.int("replay_time_scale", 100)?.max(1),
        no_stall: g.flag("replay_no_stall", false)?,
    };
    split_names(v)
        .iter()
        .map(|name| super::replay::load(name, ctx.cwd, &o).map_err(|e| TranslateError::Job(e.0)))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// fio's `file_service_type`: `roundrobin`, `sequential` or `random`, with `:N` requests
/// per pick (fio's atoi of the rest; 1 without it).
fn file_service<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
) -> Result<plumb_fileio::spec::FileService, TranslateError> {
    use plumb_fileio::spec::FileService;
    let Some(v) = g.raw("file_service_type") else {
        return Ok(FileService::default());
    };
    let (word, nr) = match v.split_once(':') {
        Some((w, n)) => (w, Some(n)),
        None => (v, None),
    };
    let per = match nr {
        None => 1,
        Some(n) => match parse_int(n) {
            Ok(k) if k > 0 => k,
            _ => return Err(parse_err("file_service_type", v)),
        },
    };
    match word {
        "roundrobin" => Ok(FileService::RoundRobin(per)),
        "sequential" => Ok(FileService::Sequential),
        "random" => Ok(FileService::Random(per)),
        "zipf" | "pareto" | "normal" | "gauss" => Err(unsupported(
            "file_service_type",
            v,
            "files drawn by a skewed distribution (roundrobin, sequential and random are)",
        )),
        _ => Err(parse_err("file_service_type", v)),
    }
}

/// The mix of a replay: the directions its logs hold.
fn replay_mix(logs: &[super::replay::Replay], v: &str) -> Result<Mix, TranslateError> {
    let any = |f: fn(&super::replay::Replay) -> bool| logs.iter().any(f);
    Ok(
        match (any(|l| l.reads()), any(|l| l.writes()), any(|l| l.trims())) {
            (true, false, false) => Mix::Read,
            (false, true, false) => Mix::Write,
            (false, false, true) => Mix::Trim,
            (true, true, false) => Mix::Share { read_pct: 50 },
            (false, true, true) => Mix::TrimWrite,
            _ => {
                return Err(unsupported(
                    "read_iolog",
                    v,
                    "a log that both reads and trims",
                ))
            }
        },
    )
}

/// The sync call a replay makes: fsync for `sync` lines, fdatasync for `datasync` ones.
fn replay_sync_call(logs: &[super::replay::Replay], v: &str) -> Result<FsyncMode, TranslateError> {
    let syncs = logs.iter().any(|l| l.syncs);
    let datasyncs = logs.iter().any(|l| l.datasyncs);
    match (syncs, datasyncs) {
        (true, true) => Err(unsupported(
            "read_iolog",
            v,
            "a log with both sync and datasync lines",
        )),
        (false, true) => Ok(FsyncMode::Fdatasync),
        _ => Ok(FsyncMode::Fsync),
    }
}

pub(super) fn unsupported(name: &str, value: &str, why: &str) -> TranslateError {
    TranslateError::Unsupported {
        name: name.into(),
        value: value.into(),
        why: if why.is_empty() {
            String::new()
        } else {
            format!(": {why}")
        },
    }
}

pub(super) fn parse_err(name: &str, value: &str) -> TranslateError {
    TranslateError::Parse {
        name: name.into(),
        value: value.into(),
    }
}

/// fio's rw words, and what they mean.
const RW_WORDS: &[&str] = &[
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
];

/// Engines fio has that plumb does not (refused by name).
pub fn engine_for(name: &str) -> Result<&'static EngineDef, TranslateError> {
    engine::find(name).ok_or_else(|| {
        TranslateError::Job(format!(
            "plumb: fio engine '{name}' is not supported (plumb has: {})",
            engine::ENGINES
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// Run-wide facts a job's translation needs.
pub struct Context<'a> {
    /// 1-based number of the first clone among all jobs (fio's global job number).
    pub job_number: u32,
    pub groupid: u32,
    pub global_options: &'a [(String, String)],
    pub job_options: &'a [(String, String)],
    pub output: &'a OutputOptions,
    /// Where relative names are resolved (the current directory).
    pub cwd: &'a Path,
    /// `--parse-only`: fio checks the options but looks at no file or directory.
    pub parse_only: bool,
    /// plumb's `--plumb-buffers`: where every job's request buffers live.
    pub buffers: Option<BufferMemory>,
    /// The run's flows (fio's `flow_id`), which its jobs join; none where nothing runs.
    pub flows: Option<&'a plumb_fileio::flow::Flows>,
}

/// One clone, ready for the pipeline.
pub struct JobClone {
    pub name: String,
    pub spec: FileioSpec,
    pub config: RunConfig,
    pub info: FioJobInfo,
    /// Seed given explicitly (randseed), for the record.
    pub seed_given: bool,
    /// allow_mounted_write=1: write to a block device even if it holds data.
    pub allow_mounted_write: bool,
    /// write_bw_log / write_iops_log / write_lat_log.
    pub logs: Option<LogFiles>,
    /// exitall: when this job finishes, the other jobs of its group stop.
    pub exitall: bool,
    /// exitall_on_error: when this job fails, the other jobs of its group stop.
    pub exitall_on_error: bool,
    /// exit_what=stonewall: exitall stops every job of the stonewall group, not only those
    /// of the job's reporting group (fio's default, `group`).
    pub exit_stonewall: bool,
    /// Steady-state detection (ss, ss_dur, ss_ramp); none when off. The run's groups are
    /// made later ([`super::steady::join_groups`]), into `config.steady`.
    pub steady: Option<plumb_core::steady::SteadySpec>,
    /// startdelay, drawn for this clone when it is a range.
    pub start_delay: Duration,
    /// What fio says about the job on stderr before it runs (the job still runs).
    pub warnings: Vec<String>,
    /// fio's count of the files `opendir` added ("fio: opendir added N files", on the
    /// report's stream as the option is parsed), and whether the job set `opendir` itself
    /// (fio says it once for a `[global]` section that sets it).
    pub opendir_note: Option<(String, bool)>,
    /// The files this job would lay out, with the size each needs, as things stand before
    /// the run (see [`share_layouts`]).
    pub lays_out: Vec<(PathBuf, u64)>,
    /// The job's files as fio names them in its messages (`dir/job.0.0` as given, not
    /// resolved), in the order of the spec's files.
    pub file_names: Vec<String>,
    /// exec_prerun and exec_postrun ([`super::exec`]).
    pub prerun: Option<String>,
    pub postrun: Option<String>,
    /// lockmem: bytes pinned while the job runs ([`super::lockmem`]).
    pub lockmem: u64,
    /// ioscheduler, when the job's disks are switched to it ([`super::iosched`]): fio
    /// finds them through its disk statistics, so not under disk_util=0.
    pub ioscheduler: Option<String>,
}

/// A file an earlier job lays out at least as large as a later job needs is laid out once,
/// and only the earlier job says so, as in fio (the later job finds it ready). `clones` in
/// run order.
pub fn share_layouts<'a>(clones: impl Iterator<Item = &'a mut JobClone>) {
    let mut laid: std::collections::HashMap<PathBuf, u64> = Default::default();
    for c in clones {
        // fio sets every job's files up before any runs: a zoned job finds a file as
        // large as the jobs before it lay it out.
        if let Some(job) = c.spec.job.as_mut() {
            if let Some(z) = job.zones.as_mut() {
                for (end, f) in z.file_ends.iter_mut().zip(&job.files) {
                    if let Some(&have) = laid.get(&f.path) {
                        *end = (*end).max(have);
                    }
                }
            }
        }
        let mine: Vec<(PathBuf, u64)> = c
            .lays_out
            .iter()
            .filter(|(p, want)| laid.get(p).is_none_or(|have| have < want))
            .cloned()
            .collect();
        for (p, want) in &mine {
            laid.insert(p.clone(), *want);
        }
        if c.info.laid_out.is_some() {
            c.info.laid_out =
                (!mine.is_empty()).then(|| (mine.len() as u32, mine.iter().map(|f| f.1).sum()));
        }
        c.lays_out = mine;
    }
}

/// The log files a job asked for: each a file name prefix (fio: `<prefix>_bw.<n>.log`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFiles {
    pub bw: Option<PathBuf>,
    pub iops: Option<PathBuf>,
    pub lat: Option<PathBuf>,
    /// write_hist_log, and the buckets summed per line's value (2^coarseness).
    pub hist: Option<PathBuf>,
    pub hist_coarseness: u32,
    /// fio's global job number, 1-based.
    pub number: u32,
    /// log_avg_msec (0: a line per request).
    pub window_ms: u64,
    /// log_offset: each line says where its request went.
    pub offsets: bool,
    /// per_job_logs (fio's default): the job's number in the names; without it the jobs
    /// append to one file per name.
    pub per_job: bool,
}

/// The buffer options of a job, as given.
struct Buffers {
    /// buffer_compress_percentage, when set (0 included: fio then stops scrambling).
    compress: Option<u8>,
    zero: bool,
    /// refill_buffers, when set.
    refill: Option<bool>,
    scramble: bool,
    /// scramble_buffers as given, when set.
    scramble_set: Option<String>,
}

impl Buffers {
    /// What the job's writes carry, as fio 3.33 decides it (init.c, io_u.c get_io_u): a
    /// write buffer is refilled before every write (refill_buffers, which a compress
    /// percentage below 100 turns on unless refill_buffers is set), or else slightly
    /// scrambled (scramble_buffers, on unless zero_buffers is set; never with a compress
    /// percentage set, even 0), or else written as it was first filled. A refilled or
    /// scrambled buffer never repeats: plumb's own random data, unique per 4 KiB.
    fn fill(&self) -> Result<Fill, TranslateError> {
        if let Some(pct) = self.compress {
            // 100% is all zeros (fio zeroes the buffers once and stops compressing).
            if pct == 100 {
                return Ok(Fill::Zero);
            }
            // At 0% fio fills as without one: zeros with zero_buffers, random bytes else.
            return Ok(match (self.refill.unwrap_or(pct > 0), pct, self.zero) {
                (_, 0, true) => Fill::Zero,
                (true, 0, false) => Fill::Random,
                (true, _, _) => Fill::Compressible { pct },
                (false, _, _) => Fill::Repeated { pct },
            });
        }
        if self.refill == Some(true) {
            return Ok(if self.zero { Fill::Zero } else { Fill::Random });
        }
        let scramble = self.scramble && (self.scramble_set.is_some() || !self.zero);
        Ok(match (scramble, self.zero) {
            (true, true) => {
                return Err(unsupported(
                    "scramble_buffers",
                    self.scramble_set.as_deref().unwrap_or("1"),
                    "with zero_buffers fio stamps every 512 bytes of its zeroed buffers, which plumb does not (without scramble_buffers both write zeros)",
                ))
            }
            (true, false) => Fill::Random,
            (false, true) => Fill::Zero,
            (false, false) => Fill::Repeated { pct: 0 },
        })
    }
}

struct Get<'a, J: JobOptions + ?Sized> {
    j: &'a J,
}

impl<J: JobOptions + ?Sized> Get<'_, J> {
    fn raw(&self, n: &str) -> Option<&str> {
        self.j.get(n)
    }
    fn flag(&self, n: &str, default: bool) -> Result<bool, TranslateError> {
        match self.raw(n) {
            None => Ok(default),
            // A set option given bare.
            Some("") => Ok(true),
            Some(v) => parse_bool(v).map_err(|_| parse_err(n, v)),
        }
    }
    fn int(&self, n: &str, default: u64) -> Result<u64, TranslateError> {
        match self.raw(n) {
            None => Ok(default),
            // fio reads an integer option as it reads a size (check_str_bytes), so a unit
            // counts: `iodepth=1k` is 1024.
            Some(v)
                if v.trim_start()
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .starts_with(|c: char| c.is_ascii_alphabetic()) =>
            {
                super::values::parse_bytes(v, self.j.kb_of(n)).map_err(|_| parse_err(n, v))
            }
            Some(v) => parse_int(v).map_err(|_| parse_err(n, v)),
        }
    }
    fn size(&self, n: &str) -> Result<Option<Size>, TranslateError> {
        match self.raw(n) {
            None => Ok(None),
            Some(v) => parse_size(v, self.j.kb_of(n), true)
                .map(Some)
                .map_err(|_| parse_err(n, v)),
        }
    }
}

/// fio's `clocksource`, which like fio's is the whole run's (the last job to set it
/// decides): `clock_gettime` times with CLOCK_MONOTONIC, `cpu` with the TSC, which plumb
/// uses only where the kernel trusts it (else CLOCK_MONOTONIC, with fio's own note, which
/// fio prints before using the TSC anyway). `gettimeofday` is refused. The note, if any.
fn clocksource<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
) -> Result<Option<&'static str>, TranslateError> {
    use plumb_core::clock::{prefer, tsc_usable, Preference};
    let Some(v) = g.raw("clocksource") else {
        return Ok(None);
    };
    let words = ["gettimeofday", "clock_gettime", "cpu"];
    match parse_enum(v, &words).map_err(|_| parse_err("clocksource", v))?.word {
        "clock_gettime" => prefer(Preference::Monotonic),
        "cpu" => {
            prefer(Preference::Tsc);
            if !tsc_usable() {
                return Ok(Some("fio: clocksource=cpu may not be reliable"));
            }
        }
        _ => {
            return Err(unsupported(
                "clocksource",
                v,
                "plumb times requests with the TSC or CLOCK_MONOTONIC (clock_gettime); gettimeofday's wall clock moves with NTP",
            ))
        }
    }
    Ok(None)
}

/// The clock whose time dates a job's log lines (fio's log_unix_epoch and
/// log_alternate_epoch, both reading log_alternate_epoch_clock_id, CLOCK_REALTIME by
/// default); none: ms since the job's start.
fn log_epoch_clock<J: JobOptions + ?Sized>(g: &Get<'_, J>) -> Result<Option<i32>, TranslateError> {
    if !g.flag("log_unix_epoch", false)? && !g.flag("log_alternate_epoch", false)? {
        return Ok(None);
    }
    let name = "log_alternate_epoch_clock_id";
    let id = g.int(name, 0)?;
    match i32::try_from(id)
        .ok()
        .filter(|&c| plumb_fileio::iolog::clock_ms(c).is_some())
    {
        Some(c) => Ok(Some(c)),
        None => Err(unsupported(
            name,
            &id.to_string(),
            "clock_gettime knows no such clock here",
        )),
    }
}

/// How the files a job lays out are allocated (fio's `fallocate`; `0` and `1` are its old
/// boolean spellings of `none` and `posix`).
fn allocation<J: JobOptions + ?Sized>(g: &Get<'_, J>) -> Result<Allocation, TranslateError> {
    let v = g.raw("fallocate").unwrap_or("native");
    let words = ["none", "native", "posix", "keep", "truncate", "0", "1"];
    let word = parse_enum(v, &words)
        .map_err(|_| parse_err("fallocate", v))?
        .word;
    Ok(match word {
        "none" | "0" => Allocation::None,
        "native" => Allocation::Native,
        "posix" | "1" => Allocation::Posix,
        "keep" => Allocation::Keep,
        _ => Allocation::Truncate,
    })
}

/// Options plumb takes with the values listed only (fio's default, however spelled: `0x0`
/// is 0), so a job file that writes a default out runs: (option, the values taken, why
/// another is refused).
const AT_DEFAULT: &[(&str, &[&str], &str)] = &[
    (
        "io_submit_mode",
        &["inline"],
        "plumb submits from the job's own thread (fio's inline)",
    ),
    (
        "lockfile",
        &["none"],
        "plumb takes no file locks between jobs",
    ),
    (
        "rw_sequencer",
        &["sequential"],
        "plumb's random jobs with rw=...:N draw a new offset every N requests (fio's sequential)",
    ),
    (
        "file_append",
        &["0"],
        "plumb's I/O starts at the region's start",
    ),
    (
        "offset_align",
        &["0"],
        "plumb places offset_increment's regions unaligned",
    ),
    (
        "bs_is_seq_rand",
        &["0"],
        "plumb sizes requests by direction",
    ),
    ("softrandommap", &["0"], "plumb's random map is exact"),
    (
        "allrandrepeat",
        &["0"],
        "plumb seeds its streams by randrepeat and randseed",
    ),
    ("write_barrier", &["0"], "plumb issues no barrier writes"),
    ("atomic", &["0"], "plumb opens files without O_ATOMIC"),
    (
        "verify_async",
        &["0"],
        "plumb verifies in the job's own thread",
    ),
    ("trim_percentage", &["0"], "plumb trims only in trim modes"),
    ("trim_verify_zero", &["1"], "plumb trims only in trim modes"),
    (
        "read_iolog_chunked",
        &["0"],
        "plumb reads a replayed log whole",
    ),
    (
        "read_beyond_wp",
        &["0"],
        "plumb has no zoned block device support",
    ),
    (
        "max_open_zones",
        &["0"],
        "plumb has no zoned block device support",
    ),
    (
        "job_max_open_zones",
        &["0"],
        "plumb has no zoned block device support",
    ),
    (
        "ignore_zone_limits",
        &["0"],
        "plumb has no zoned block device support",
    ),
    ("latency_run", &["0"], "plumb has no latency_target mode"),
    (
        "latency_percentile",
        &["100"],
        "plumb has no latency_target mode",
    ),
    (
        "create_serialize",
        &["1"],
        "plumb lays out a group's files one job after another (fio's create_serialize=1)",
    ),
    ("create_only", &["0"], "plumb runs the jobs it lays out"),
    (
        "unlink_each_loop",
        &["0"],
        "plumb removes files only at the job's end (unlink)",
    ),
    (
        "log_max_value",
        &["0"],
        "windowed logs hold each window's mean",
    ),
    ("log_prio", &["0"], "log lines carry priority 0"),
    (
        "block_error_percentiles",
        &["0"],
        "plumb tracks no trim errors by block",
    ),
    (
        "buffer_compress_chunk",
        &["512"],
        "plumb zeroes its share of every 512 bytes",
    ),
    (
        "dedupe_percentage",
        &["0"],
        "plumb writes no deduplicable share of its own",
    ),
    (
        "dedupe_global",
        &["0"],
        "plumb writes no deduplicable share of its own",
    ),
    (
        "dedupe_mode",
        &["repeat"],
        "plumb writes no deduplicable share of its own",
    ),
    (
        "dedupe_working_set_percentage",
        &["5"],
        "plumb writes no deduplicable share of its own",
    ),
    (
        "error_dump",
        &["0"],
        "the errors a job goes on after are counted, not printed",
    ),
    ("cgroup_nodelete", &["0"], "plumb makes no cgroups"),
];

/// Refuse `n` set to anything but one of `ok` (numbers compared as numbers).
fn at_default<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
    n: &str,
    ok: &[&str],
    why: &str,
) -> Result<(), TranslateError> {
    let Some(v) = g.raw(n) else {
        return Ok(());
    };
    let same = |t: &&str| match (parse_int(v), parse_int(t)) {
        (Ok(a), Ok(b)) => a == b,
        _ => v == *t,
    };
    if ok.iter().any(same) {
        Ok(())
    } else {
        Err(unsupported(n, v, why))
    }
}

/// Where the job's request buffers live: fio's `mem` (malloc, and anonymous mmap and
/// mmaphuge), or plumb's `--plumb-buffers` for a job that does not set it.
fn buffer_memory<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
    plumb: Option<BufferMemory>,
) -> Result<BufferMemory, TranslateError> {
    let Some(v) = g.raw("mem") else {
        return Ok(plumb.unwrap_or_default());
    };
    if plumb.is_some() {
        return Err(unsupported(
            "mem",
            v,
            "the job sets its buffers' memory and --plumb-buffers does too; give one",
        ));
    }
    // fio's `mmap:FILE` / `mmaphuge:FILE` map a file instead of anonymous memory.
    let (kind, file) = v.split_once(':').unwrap_or((v, ""));
    if !file.is_empty() {
        return Err(unsupported(
            "mem",
            v,
            "plumb maps anonymous memory only (mem=mmap or mem=mmaphuge without a file)",
        ));
    }
    match kind {
        "malloc" => Ok(BufferMemory::Heap),
        "mmap" => Ok(BufferMemory::Mapped),
        "mmaphuge" => {
            let page = match g.size("hugepage-size")? {
                Some(Size::Bytes(b)) => b,
                Some(Size::Percent(_)) => {
                    return Err(parse_err("hugepage-size", g.raw("hugepage-size").unwrap_or("")))
                }
                None => 2 << 20,
            };
            if page == 0 || page % plumb_fileio::buf::page_size() as u64 != 0 {
                return Err(parse_err("hugepage-size", g.raw("hugepage-size").unwrap_or("")));
            }
            Ok(BufferMemory::HugeTlb { page })
        }
        _ => Err(unsupported(
            "mem",
            v,
            "plumb's I/O buffers come from the heap (malloc) or an anonymous mapping (mmap, mmaphuge)",
        )),
    }
}

/// Engine switches that change no request the device sees, only the kernel's work per
/// request: registered files and buffers (no file reference, no page pinning per request),
/// completions taken from libaio's ring without a system call. On by default in plumb (see
/// `translate`), where fio's are off.
const LEANER: &[&str] = &["registerfiles", "fixedbufs", "userspace_reap"];

/// fio's engine options plumb's parser knows; each must belong to the job's engine.
const ENGINE_OPTIONS: &[&str] = &[
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "nowait",
    "userspace_reap",
];

/// The size of the filesystem that will hold the first of `paths` (its nearest existing
/// ancestor's).
fn filesystem_size(paths: &[PathBuf]) -> Option<u64> {
    let first = paths.first()?;
    let dir = first
        .ancestors()
        .skip(1)
        .find(|a| a.as_os_str().is_empty() || a.exists())?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    plumb_observe::target::statvfs(dir).map(|(size, _, _)| size)
}

fn percent_of(s: Size, whole: u64) -> u64 {
    match s {
        Size::Bytes(b) => b,
        Size::Percent(p) => (whole as u128 * p as u128 / 100) as u64,
    }
}

/// fio's `filesize`: one size for every file, or a range each file's size is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileSize {
    Fixed(Size),
    Range { low: u64, high: u64 },
}

/// The stream of the file size draws (plumb's own: fio's sizes come from its generator).
const FILESIZE_STREAM: u64 = u64::MAX - 1;

/// `filesize`, read as fio reads a value with two ends: the text up to each separator
/// (`,`, else `:`, else `-`) in turn, the first value the low end, the last the high one.
fn file_size<J: JobOptions + ?Sized>(g: &Get<'_, J>) -> Result<Option<FileSize>, TranslateError> {
    let Some(v) = g.raw("filesize") else {
        return Ok(None);
    };
    let kb = g.j.kb_of("filesize");
    // fio drops one trailing comma before it looks for a second value.
    let text = v.strip_suffix(',').unwrap_or(v);
    let mut last = None;
    let mut rest = text;
    while let Some(p) = rest
        .find(',')
        .or_else(|| rest.find(':'))
        .or_else(|| rest.find('-'))
    {
        rest = &rest[p + 1..];
        last = Some(rest);
    }
    let low = parse_size(text, kb, true).map_err(|_| parse_err("filesize", v))?;
    let Some(high) = last else {
        return Ok(Some(FileSize::Fixed(low)));
    };
    // fio keeps a high end it cannot read as the low one's, and draws garbage from a range
    // whose high end is below its low end: plumb takes only a proper range.
    let refused = || {
        unsupported(
            "filesize",
            v,
            "a range needs two sizes in bytes, the low one first (filesize=100k-300k)",
        )
    };
    match (low, parse_size(high, kb, true)) {
        (Size::Bytes(low), Ok(Size::Bytes(high))) if low > 0 && high >= low => {
            Ok(Some(if low == high {
                FileSize::Fixed(Size::Bytes(low))
            } else {
                FileSize::Range { low, high }
            }))
        }
        _ => Err(refused()),
    }
}

/// Each file's size under `filesize` (fio's setup_files): a file already within the range
/// keeps its size; any other gets a size drawn uniformly from [low, high), rounded down to
/// the smallest block of any direction (fio's rw_min_bs), the draws in file order.
fn file_sizes(
    fs: FileSize,
    existing: &[Option<u64>],
    per_file_whole: u64,
    rw_min_bs: u64,
    rng: &mut plumb_core::random::Rng,
) -> Vec<u64> {
    let (low, high) = match fs {
        FileSize::Fixed(s) => {
            let n = percent_of(s, per_file_whole);
            (n, n)
        }
        FileSize::Range { low, high } => (low, high),
    };
    existing
        .iter()
        .map(|e| match e {
            Some(n) if (low..=high).contains(n) => *n,
            _ if low == high => low,
            _ => {
                let n = low + rng.below(high - low);
                n - n % rw_min_bs.max(1)
            }
        })
        .collect()
}

/// fio's `filename=a:b` list; `\:` is a literal colon.
fn split_names(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().unwrap().push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn format_name(fmt: &str, job: &str, jobnum: u32, filenum: u32) -> String {
    fmt.replace("$jobname", job)
        .replace("$jobnum", &jobnum.to_string())
        .replace("$filenum", &filenum.to_string())
        .replace("$clientuid", "0")
}

/// bwavgtime / iopsavgtime: the window of the bandwidth and IOPS samples. plumb takes
/// both kinds of sample from one series of windows, so the two must agree.
fn sample_window<J: JobOptions + ?Sized>(g: &Get<'_, J>) -> Result<Duration, TranslateError> {
    let ms = |n: &str| -> Result<u64, TranslateError> {
        let v = g.int(n, 500)?;
        if v == 0 {
            return Err(unsupported(
                n,
                "0",
                "fio then samples at its helper thread's every tick",
            ));
        }
        Ok(v)
    };
    let (bw, iops) = (ms("bwavgtime")?, ms("iopsavgtime")?);
    if bw != iops {
        let (name, value) = if g.raw("bwavgtime").is_some() {
            ("bwavgtime", bw)
        } else {
            ("iopsavgtime", iops)
        };
        return Err(unsupported(
            name,
            &value.to_string(),
            "bwavgtime and iopsavgtime must be equal (plumb samples both from the same windows)",
        ));
    }
    Ok(Duration::from_millis(bw))
}

/// cpus_allowed_policy=split: job number `n` (fio's, 1-based, over all jobs) runs on the
/// ((n-1) mod count)th CPU of its set, counted upwards; without a set, nothing changes.
fn split_cpus(p: &Placement, split: bool, number: u32) -> Placement {
    let mut p = p.clone();
    if let (true, Some(cpus)) = (split, p.cpus.as_mut()) {
        cpus.sort_unstable();
        cpus.dedup();
        *cpus = vec![cpus[(number as usize - 1) % cpus.len()]];
    }
    p
}

/// cpus_allowed / cpumask, nice, prio / prioclass.
fn placement<J: JobOptions + ?Sized>(g: &Get<'_, J>) -> Result<Placement, TranslateError> {
    let cpus = match (g.raw("cpus_allowed"), g.raw("cpumask")) {
        (Some(v), _) => Some(parse_cpu_list(v).ok_or_else(|| parse_err("cpus_allowed", v))?),
        (None, Some(v)) => {
            let mask = parse_int(v).map_err(|_| parse_err("cpumask", v))?;
            Some(cpus_of_mask(mask)).filter(|c| !c.is_empty())
        }
        (None, None) => None,
    };
    if let Some(c) = &cpus {
        let allowed = allowed_cpus();
        if let Some(bad) = c.iter().find(|c| !allowed.contains(c)) {
            return Err(TranslateError::Job(format!(
                "fio: CPU {bad} too large (max={})",
                allowed.iter().max().copied().unwrap_or(0)
            )));
        }
    }
    let nice = match g.raw("nice") {
        None => None,
        Some(v) => {
            let n: i32 = v.trim().parse().map_err(|_| parse_err("nice", v))?;
            if !(-20..=19).contains(&n) {
                return Err(parse_err("nice", v));
            }
            (n != 0).then_some(n)
        }
    };
    let io_priority = match (g.raw("prio"), g.raw("prioclass")) {
        (None, None) => None,
        (p, c) => {
            let level = match p {
                Some(v) => v
                    .trim()
                    .parse::<u8>()
                    .ok()
                    .filter(|l| *l <= 7)
                    .ok_or_else(|| parse_err("prio", v))?,
                None => 4,
            };
            let class = match c {
                Some(v) => v
                    .trim()
                    .parse::<u8>()
                    .ok()
                    .filter(|c| (1..=3).contains(c))
                    .ok_or_else(|| parse_err("prioclass", v))?,
                None => 2,
            };
            Some((class, level))
        }
    };
    Ok(Placement {
        cpus,
        nice,
        io_priority,
    })
}

/// fio 3.33 engines whose trims are not trims: vsync queues a trim as an iovec and writes
/// it (writev) at commit. A trim job on them is refused rather than run differently.
const FIO_ENGINES_WITHOUT_TRIM: &[&str] = &["vsync"];

/// What fio 3.33's falloc engine cannot do: it turns every sync into fallocate of 0 bytes,
/// which fails (EINVAL), and its reads bring in no data to verify.
fn falloc_checks<J: JobOptions + ?Sized>(g: &Get<'_, J>) -> Result<(), TranslateError> {
    let why = "with ioengine=falloc: fio 3.33 fails its syncs";
    for n in ["fsync", "fdatasync"] {
        if let Some(v) = g.raw(n).filter(|v| parse_int(v).is_ok_and(|n| n > 0)) {
            return Err(unsupported(n, v, why));
        }
    }
    for n in ["end_fsync", "fsync_on_close"] {
        if g.flag(n, false)? {
            return Err(unsupported(n, g.raw(n).unwrap_or("1"), why));
        }
    }
    if let Some(v) = g.raw("verify").filter(|v| !matches!(*v, "0" | "none")) {
        return Err(unsupported(
            "verify",
            v,
            "with ioengine=falloc: fallocate moves no data",
        ));
    }
    Ok(())
}

/// Translate one parsed job into its clones.
/// fio's `verify_interval` after its fix-ups (init.c fixup_options): with no value, the
/// smallest write when write sizes vary (else each request whole); never more than the
/// smallest write, nor the smallest read in a job that reads; a value that does not divide
/// the smallest and the largest write becomes their greatest common divisor.
fn verify_interval<J: JobOptions + ?Sized>(
    g: &Get<'_, J>,
    j: &J,
    sizes: &plumb_fileio::spec::BlockSizes,
    mix: Mix,
) -> Result<u32, TranslateError> {
    let given = match g.raw("verify_interval") {
        None => 0,
        Some(v) => super::values::parse_bytes(v, j.kb_of("verify_interval"))
            .map_err(|_| parse_err("verify_interval", v))?,
    };
    let (wmin, wmax) = (sizes.write.min(), sizes.write.max());
    let mut iv = if given == 0 && wmin != wmax {
        wmin
    } else {
        given
    };
    let reads = !matches!(mix, Mix::Write | Mix::Trim | Mix::TrimWrite);
    if iv > wmin {
        iv = wmin;
    } else if reads && iv > sizes.read.min() {
        iv = sizes.read.min();
    }
    if iv == 0 || wmin % iv != 0 || wmax % iv != 0 {
        let (mut a, mut b) = (wmin, wmax);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        iv = a;
    }
    u32::try_from(iv).map_err(|_| parse_err("verify_interval", &iv.to_string()))
}

pub fn translate<J: JobOptions + ?Sized>(
    j: &J,
    ctx: &Context<'_>,
) -> Result<Vec<JobClone>, TranslateError> {
    let kb = match j.get("kb_base") {
        None | Some("1024") => KbBase::K1024,
        Some("1000") => KbBase::K1000,
        Some(v) => return Err(parse_err("kb_base", v)),
    };
    let g = Get { j };
    for (n, ok, why) in AT_DEFAULT {
        at_default(&g, n, ok, why)?;
    }
    let name = j.name().to_string();
    let stem = j.file_stem().to_string();

    // rw and the mix.
    let rw_text = g.raw("rw").unwrap_or("read");
    let rw = parse_enum(rw_text, RW_WORDS).map_err(|_| parse_err("rw", rw_text))?;

    let word = rw.word;
    let read_pct = match j.last_set(&["rwmixread", "rwmixwrite"]) {
        Some("rwmixwrite") => 100 - g.int("rwmixwrite", 50)?.min(100),
        _ => g.int("rwmixread", 50)?.min(100),
    } as u8;
    // read_iolog: the logs are read first, as their directions make the job's mix.
    let replays = read_logs(&g, ctx)?;
    let logs_named = g.raw("read_iolog").unwrap_or_default();
    let (mix, random) = match (&replays, word) {
        (Some(logs), _) => (replay_mix(logs, logs_named)?, false),
        (None, word) => match word {
            "read" => (Mix::Read, false),
            "write" => (Mix::Write, false),
            "trim" => (Mix::Trim, false),
            "randread" => (Mix::Read, true),
            "randwrite" => (Mix::Write, true),
            "randtrim" => (Mix::Trim, true),
            "rw" | "readwrite" => (Mix::Share { read_pct }, false),
            "randrw" => (Mix::Share { read_pct }, true),
            "trimwrite" => (Mix::TrimWrite, false),
            "randtrimwrite" => (Mix::TrimWrite, true),
            other => return Err(parse_err("rw", other)),
        },
    };
    let trims = matches!(mix, Mix::Trim | Mix::TrimWrite);
    if mix == Mix::TrimWrite && !random && rw.suffix.is_some() {
        return Err(unsupported(
            "rw",
            rw_text,
            "holes between the requests of a sequential trimwrite",
        ));
    }
    // rw=...:N: sequential modes skip N bytes after each request (fio's str_rw_cb reads a
    // signed size with str_to_decimal, blanks around it stripped: a negative N steps back);
    // random modes draw a new offset every N requests.
    let stride = match rw.suffix {
        _ if replays.is_some() => None,
        None => None,
        // fio's atoi into an unsigned count: anything goes, `-8` being 2^32-8 requests.
        Some(n) if random => Some(i64::from(super::values::atoi(n) as u32)),
        Some(n) => Some(
            super::values::fio_decimal(n.trim(), j.kb_of("rw"))
                .ok_or_else(|| parse_err("rw", rw_text))?,
        ),
    };
    // A random mode that draws every 0 requests (`randread:0`, or a suffix atoi reads as
    // 0) never draws: fio walks its file sequentially from the start.
    let (random, stride) = match stride {
        Some(0) if random => (false, None),
        s => (random, s),
    };
    let norandommap = g.flag("norandommap", false)?;
    // fio's tausworthe draws 32-bit numbers and tausworthe64 64-bit ones, for files of more
    // than 2^32 blocks; plumb draws 64-bit numbers for both. lfsr walks the blocks in an
    // order instead, each once per pass, with no map.
    let lfsr = g.raw("random_generator") == Some("lfsr");
    let skew =
        super::distribution::skew(g.raw("random_distribution"), j.kb_of("random_distribution"))?;
    let think = super::pacing::think(j)?;
    let order = if random {
        Order::Random {
            dist: plumb_core::random::RandType::Uniform,
        }
    } else {
        Order::Sequential
    };
    let mut access = Access::new(mix, order);
    // Only a random order has draws for fio's percentage_random to share out.
    if random {
        access.random_pct = super::distribution::random_pct(
            g.raw("percentage_random"),
            j.kb_of("percentage_random"),
        )?;
    }

    // Block sizes.
    // fio's default is 4k read as kb_base=1024 (fio parses defaults before any kb_base).
    let bs_text = g.raw("bs").unwrap_or("4k");
    // Read, write and trim: a value carries forward to the later directions unless a
    // trailing comma ends the list (values::rwt_fields), so a direction left out is 4 KiB.
    let bs = rwt_option(j, "bs");
    let mut sizes = bs.map(|b| SizeChoice::Fixed(b.unwrap_or(4096)));
    if let Some(v) = g.raw("bsrange") {
        let r = parse_rwt_ranges(v, j.kb_of("bsrange")).map_err(|_| parse_err("bsrange", v))?;
        for d in 0..3 {
            if let Some((a, b)) = r[d] {
                sizes[d] = if a == b {
                    SizeChoice::Fixed(a)
                } else {
                    SizeChoice::Range { min: a, max: b }
                };
            }
        }
    }
    if let Some(v) = g.raw("bssplit") {
        let s = parse_bssplit(v, j.kb_of("bssplit")).map_err(|_| parse_err("bssplit", v))?;
        for d in 0..3 {
            if let Some(entries) = &s[d] {
                sizes[d] = SizeChoice::Split(entries.iter().map(|e| (e.bs, e.percent)).collect());
            }
        }
    }
    // The header shows the sizes as the options give them, before a replay's log is read.
    let header_bs = [0, 1, 2].map(|d: usize| (sizes[d].min(), sizes[d].max()));
    // A replay's buffers hold its largest request of each direction (fio raises max_bs).
    if let Some(logs) = &replays {
        for (d, size) in sizes.iter_mut().enumerate() {
            let most = logs.iter().map(|l| l.max_len[d]).max().unwrap_or(0);
            if most > 0 {
                *size = SizeChoice::Fixed(most);
            }
        }
    }
    let [rsz, wsz, tsz] = sizes;
    let sizes = BlockSizes {
        read: rsz,
        write: wsz,
        trim: tsz,
    };
    let min_bs = match mix {
        Mix::Read => sizes.read.min(),
        Mix::Write => sizes.write.min(),
        Mix::Trim => sizes.trim.min(),
        Mix::TrimWrite => sizes.write.min().min(sizes.trim.min()),
        _ => sizes.read.min().min(sizes.write.min()),
    };
    // Random offsets are drawn by reads (and mixes) on the read alignment, by trims (also
    // the trims of randtrimwrite, whose writes follow them) on the trim one.
    let align_dir = if trims { 2 } else { 0 };
    let ba = g.raw("ba").map(|_| rwt_option(j, "ba"));
    let align = match ba {
        None if trims => sizes.trim.min(),
        None => min_bs,
        Some(b) => b[align_dir].unwrap_or(min_bs),
    };
    // fio (init.c): a random job whose blockalign differs from a direction's smallest block
    // keeps no random map, and says so.
    let blockalign_unmaps = random
        && ba.is_some_and(|b| {
            [sizes.read.min(), sizes.write.min(), sizes.trim.min()]
                .iter()
                .zip(b)
                .any(|(min, ba)| ba.is_some_and(|ba| ba != 0 && ba != *min))
        });
    if min_bs == 0 {
        return Err(parse_err("bs", bs_text));
    }

    // Engine.
    let engine_name = g.raw("ioengine").unwrap_or("psync");
    let engine = engine_for(engine_name)?;
    if trims && FIO_ENGINES_WITHOUT_TRIM.contains(&engine_name) {
        return Err(unsupported(
            "ioengine",
            engine_name,
            &format!(
                "with a trim mode: fio 3.33's {engine_name} writes the blocks it is asked to trim"
            ),
        ));
    }
    if engine_name == "falloc" {
        falloc_checks(&g)?;
    }
    let mut engine_options = EngineOptions::default();
    for name in ENGINE_OPTIONS {
        if let (Some(v), None) = (g.raw(name), engine.options.iter().find(|o| o.name == *name)) {
            return Err(unsupported(
                name,
                v,
                &format!("plumb's {} engine does not have it", engine.name),
            ));
        }
    }
    // Engine switches start off, as fio's do, except the leaner ones, which change no
    // request the device sees: plumb uses them unless the job says 0.
    for o in engine.options {
        let on = match g.raw(o.name) {
            Some(v) => v.is_empty() || parse_bool(v).map_err(|_| parse_err(o.name, v))?,
            None => LEANER.contains(&o.name) && o.default,
        };
        engine_options.set(o.name, on);
    }
    let iodepth = g.int("iodepth", 1)?.max(1) as u32;
    let direct = match (g.raw("direct"), g.raw("buffered")) {
        (Some(_), _) => g.flag("direct", false)?,
        (None, Some(_)) => !g.flag("buffered", true)?,
        (None, None) => false,
    };
    let (osync, odsync) = match g.raw("sync").unwrap_or("none") {
        "none" | "0" => (false, false),
        "sync" | "1" => (true, false),
        "dsync" => (false, true),
        v => return Err(parse_err("sync", v)),
    };
    // fio opens the files of a job that trims (trimwrite too) without O_DIRECT or O_SYNC
    // (filesetup.c skips them for trim jobs).
    let flags = if trims {
        OpenFlags::default()
    } else {
        OpenFlags {
            sync: osync,
            dsync: odsync,
            direct,
        }
    };
    let fsync_n = g.int("fsync", 0)?;
    let fdatasync_n = g.int("fdatasync", 0)?;
    let (every, call) = match &replays {
        // A replay syncs where its log does, with the log's call.
        Some(logs) => (0, replay_sync_call(logs, logs_named)?),
        None if fdatasync_n > 0 => (fdatasync_n, FsyncMode::Fdatasync),
        None => (fsync_n, FsyncMode::Fsync),
    };
    let sync = SyncPolicy {
        every_requests: 0,
        each_write: false,
        // end_fsync syncs when the job's writing ends; fsync_on_close when each file is
        // closed, which for plumb's jobs is the same moment: both count as end syncs.
        at_end: g.flag("end_fsync", false)? || g.flag("fsync_on_close", false)?,
        call,
    };

    // Rate: one direction's requests per second, as the harness's open-loop schedule.
    // The status line shows the limit as given: (bytes/s, requests/s) over the job's
    // directions.
    let mut rate_limit = (0u64, 0u64);
    // fio's fixup_options says all it finds wrong, the zone options first; it runs no
    // fixups under --parse-only.
    let mut fixups = if ctx.parse_only {
        Vec::new()
    } else {
        super::strided::fixup_lines(j)?
    };
    match super::min_rate::fixup(j) {
        Err(TranslateError::Fixup(rate)) => fixups.push(rate),
        other => other?,
    }
    if !fixups.is_empty() {
        return Err(TranslateError::Fixup(fixups.join("\n")));
    }
    // A replay's requests are the log's: fio walks no zones for them.
    let zoning = match replays {
        Some(_) => None,
        None => super::strided::zoning(j)?,
    };
    let rate = match super::min_rate::limit(j)? {
        None => None,
        Some(name) => {
            let per_dir = rwt_option(j, name);
            // Requests a second in one direction: fio's rate is bytes (by that direction's
            // smallest block), rate_iops requests. A direction left out (after a trailing
            // comma) is not limited.
            let per_s = |dir: usize| {
                let value = per_dir[dir].unwrap_or(0) as f64;
                let size = sizes.by_dir()[dir];
                if name == "rate" {
                    value / size.min().max(1) as f64
                } else {
                    value
                }
            };
            let given = |dir: usize| per_dir[dir].unwrap_or(0);
            let limit = match mix {
                Mix::Read => given(0),
                Mix::Write => given(1),
                Mix::Trim => given(2),
                Mix::TrimWrite => given(1) + given(2),
                _ => given(0) + given(1),
            };
            rate_limit = if name == "rate" {
                (limit, 0)
            } else {
                (0, limit)
            };
            let total = match mix {
                Mix::Read => per_s(0),
                Mix::Write => per_s(1),
                Mix::Trim => per_s(2),
                // Trims and writes alternate, one of each per block: the schedule carries
                // both (a direction left unlimited leaves the job unlimited).
                Mix::TrimWrite => {
                    let (w, t) = (per_s(1), per_s(2));
                    if w > 0.0 && t > 0.0 {
                        2.0 / (1.0 / w + 1.0 / t)
                    } else {
                        0.0
                    }
                }
                _ => {
                    // fio limits each direction on its own, whatever rwmixread says: the
                    // schedule carries both, and the read share follows the two rates.
                    let (r, w) = (per_s(0), per_s(1));
                    if r + w > 0.0 {
                        let read_pct = (100.0 * r / (r + w)).round() as u8;
                        access = Access::new(Mix::Share { read_pct }, order);
                    }
                    r + w
                }
            };
            (total > 0.0).then_some(total)
        }
    };

    // fio moves back the schedule of the direction whose request found the stall due; plumb
    // keeps one schedule for every direction, so only a job rated in one direction can have
    // it moved as fio moves it.
    if think.is_some_and(|t| t.rate_ignores)
        && rate.is_some()
        && !matches!(mix, Mix::Read | Mix::Write | Mix::Trim)
    {
        return Err(unsupported(
            "rate_ignore_thinktime",
            g.raw("rate_ignore_thinktime").unwrap_or("1"),
            "plumb keeps one rate schedule for all directions; fio moves back one direction's",
        ));
    }
    let min_rate = super::min_rate::spec(j)?;
    let max_latency = super::max_latency::spec(j)?;
    // fio's flow: a weight of 0 (the default) keeps the job out of any flow.
    let small = |name: &str| -> Result<u32, TranslateError> {
        u32::try_from(g.int(name, 0)?).map_err(|_| parse_err(name, g.raw(name).unwrap_or_default()))
    };
    let flow = match small("flow")? {
        0 => None,
        weight => Some((small("flow_id")?, weight, g.int("flow_sleep", 0)?)),
    };
    let sample_window = sample_window(&g)?;
    let steady = super::steady::spec(j)?;
    let placement = placement(&g)?;
    let split = match g.raw("cpus_allowed_policy") {
        None | Some("shared") => false,
        Some("split") => true,
        Some(v) => return Err(parse_err("cpus_allowed_policy", v)),
    };
    let log_prefix = |n: &str| -> Option<PathBuf> {
        g.raw(n).map(|v| {
            let v = if v.is_empty() { j.name() } else { v };
            ctx.cwd.join(v)
        })
    };
    let (bw_log, iops_log, lat_log) = (
        log_prefix("write_bw_log"),
        log_prefix("write_iops_log"),
        log_prefix("write_lat_log"),
    );
    let hist_log = log_prefix("write_hist_log");
    let hist_ms = match g.raw("log_hist_msec") {
        None => 0,
        Some(v) => parse_int(v).map_err(|_| parse_err("log_hist_msec", v))?,
    };
    let hist_coarseness = g.int("log_hist_coarseness", 0)?;
    if !(0..=6).contains(&hist_coarseness) {
        return Err(unsupported(
            "log_hist_coarseness",
            &hist_coarseness.to_string(),
            "fio's range is 0 to 6 (it reads past its buckets above)",
        ));
    }
    let window_ms = match g.raw("log_avg_msec") {
        None => 0,
        Some(v) => parse_int(v).map_err(|_| parse_err("log_avg_msec", v))?,
    };
    let pattern = match g.raw("verify_pattern") {
        None => None,
        Some(p) => Some(super::verify_pattern::parse(p).map_err(|r| match r {
            super::verify_pattern::Refused::Malformed => parse_err("verify_pattern", p),
            super::verify_pattern::Refused::Unsupported(why) => {
                unsupported("verify_pattern", p, why)
            }
        })?),
    };
    let checksum = match (g.raw("verify"), &pattern) {
        // fio: a pattern alone turns verify on, with a header and the pattern checked.
        (None, Some(_)) => Some(plumb_fileio::verify::Checksum::Meta),
        (None | Some("0" | "none"), None) => None,
        (Some("0" | "none"), Some(_)) => {
            return Err(unsupported(
                "verify_pattern",
                g.raw("verify_pattern").unwrap_or_default(),
                "a pattern as plain write data with verify=0",
            ))
        }
        (Some(v), _) => Some(plumb_fileio::verify::Checksum::from_fio(v).ok_or_else(|| {
            unsupported(
                "verify",
                v,
                "plumb verifies with fio's checksums, meta, pattern and null",
            )
        })?),
    };
    let verify = match checksum {
        None => None,
        Some(kind) => {
            let v = g.raw("verify").unwrap_or("pattern");
            if kind == plumb_fileio::verify::Checksum::Pattern && pattern.is_none() {
                return Err(unsupported(
                    "verify",
                    v,
                    "verify=pattern without a verify_pattern",
                ));
            }
            if trims {
                return Err(unsupported("verify", v, "verification of a job that trims"));
            }
            if replays.is_some() {
                return Err(unsupported(
                    "verify",
                    v,
                    "verification of a replay (read_iolog)",
                ));
            }
            Some(plumb_fileio::spec::VerifySpec {
                seal: plumb_fileio::verify::Sealing {
                    checksum: kind,
                    interval: verify_interval(&g, j, &sizes, mix)?,
                    pattern,
                },
                after_writes: g.flag("do_verify", true)?,
                fatal: g.flag("verify_fatal", false)?,
                // fio reads back while writing only as part of do_verify.
                backlog: match g.raw("verify_backlog") {
                    None => 0,
                    Some(b) => super::values::parse_bytes(b, j.kb_of("verify_backlog"))
                        .map_err(|_| parse_err("verify_backlog", b))?,
                },
                batch: g.int("verify_backlog_batch", 0)?,
                dump: g.flag("verify_dump", false)?,
                in_write_order: g.flag("experimental_verify", false)?,
            })
        }
    };
    let compress = match g.raw("buffer_compress_percentage") {
        None => None,
        Some(v) => {
            let pct = parse_int(v)
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| parse_err("buffer_compress_percentage", v))?;
            Some(pct as u8)
        }
    };
    // iodepth_low: fio's default is iodepth itself (keep the queue full).
    let queue_low = match g.raw("iodepth_low") {
        None => None,
        Some(v) => {
            let low = parse_int(v).map_err(|_| parse_err("iodepth_low", v))?;
            (low < iodepth as u64).then_some(low as u32)
        }
    };
    // The batch options as fio's fixup resolves them (the worker clamps them to the
    // depth): a completion maximum below the minimum is the minimum, and with both 0 fio
    // polls after every request.
    let batch = {
        let submit = g.int("iodepth_batch", 1)?;
        let reap_min = g.int("iodepth_batch_complete_min", 1)?;
        let reap_max = g.int("iodepth_batch_complete_max", 0)?;
        let small = |n: &str, v: u64| u32::try_from(v).map_err(|_| parse_err(n, &v.to_string()));
        plumb_fileio::spec::QueueBatch {
            submit: small("iodepth_batch", submit)?,
            reap_min: small("iodepth_batch_complete_min", reap_min)?,
            reap_max: small("iodepth_batch_complete_max", reap_max.max(reap_min))?,
            poll_each: reap_min == 0 && reap_max == 0,
        }
    };
    // fill_device: write until the filesystem is full. fio lays out a reading job's file by
    // filling the filesystem first; plumb does not yet.
    let fill_device = g.flag("fill_device", false)?;
    if fill_device && access.reads() {
        return Err(unsupported(
            "fill_device",
            "1",
            "on a job that reads (fio fills the filesystem with its layout first)",
        ));
    }
    let create_at_open = g.flag("create_on_open", false)?;
    let overwrite = g.flag("overwrite", false)?;
    let service = file_service(&g)?;
    let zone_walk = |files: usize| super::strided::Walk {
        access,
        rw: rw_text,
        holes: stride.is_some(),
        verify: verify.is_some(),
        skewed: !skew.is_uniform(),
        lfsr,
        sizes: &sizes,
        align: align.max(1),
        own_align: blockalign_unmaps,
        files,
        service,
    };
    if create_at_open && access.reads() {
        return Err(unsupported(
            "create_on_open",
            "1",
            "on a job that reads (its files are laid out before the run)",
        ));
    }
    let wants_main_log = bw_log.is_some() || iops_log.is_some() || lat_log.is_some();
    let wants_log = wants_main_log || hist_log.is_some();
    let arrivals = match g.raw("rate_process").unwrap_or("linear") {
        "linear" => plumb_core::Arrivals::Even,
        "poisson" => plumb_core::Arrivals::Poisson,
        v => return Err(parse_err("rate_process", v)),
    };

    // Time.
    // A negative runtime is set but never reached (values::parse_runtime_ns): a size-based
    // job ends with its size, a time_based one runs until a signal, as in fio.
    let (runtime_set, mut runtime) = match g.raw("runtime") {
        None => (false, None),
        Some(v) => match parse_runtime_ns(v).map_err(|_| parse_err("runtime", v))? {
            Some(0) => (false, None),
            Some(ns) => (true, Some(Duration::from_nanos(ns))),
            None => (true, None),
        },
    };
    let mut time_based = g.flag("time_based", false)?;
    let mut warnings = Vec::new();
    if time_based && !runtime_set {
        // fio warns and runs size-based.
        warnings.push("fio: time_based requires a runtime/timeout setting".to_string());
        time_based = false;
    }
    if blockalign_unmaps && !norandommap {
        warnings.push("fio: Any use of blockalign= turns off randommap".to_string());
    }
    let clock_note = clocksource(&g)?;
    // fio keeps ramp_time unsigned: a negative one is a ramp that never ends, so nothing
    // measured is ever discarded and the runtime, counted from the ramp's end, is never
    // reached (a time_based job runs until a signal).
    let ramp = match g.raw("ramp_time") {
        None => Duration::ZERO,
        Some(v) => match parse_signed_time_ns(v, TimeUnit::Seconds) {
            Ok(ns) if ns < 0 => {
                runtime = None;
                Duration::ZERO
            }
            Ok(ns) => Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)),
            Err(_) => return Err(parse_err("ramp_time", v)),
        },
    };
    let loops = g.int("loops", 1)?.max(1);

    // Files.
    let numjobs = g.int("numjobs", 1)?;
    // fio 3.33 takes numjobs=0 and then fails to set the job up (`error: maximum number of
    // jobs reached.`), or, with a job after it, starts thousands of processes and crashes.
    if numjobs == 0 && !ctx.parse_only {
        return Err(TranslateError::Job(
            "plumb: fio option numjobs=0 is refused: a job needs at least one clone (fio 3.33 fails on it)"
                .to_string(),
        ));
    }
    let numjobs = numjobs.max(1) as u32;
    let nrfiles = g.int("nrfiles", 1)?.max(1) as u32;
    let dirs: Vec<String> = g.raw("directory").map(split_names).unwrap_or_default();
    let mut user_files: Vec<String> = g.raw("filename").map(split_names).unwrap_or_default();
    let mut opendir_note = None;
    if let (Some(dir), false) = (g.raw("opendir"), ctx.parse_only) {
        if let Some(f) = g.raw("filename") {
            // fio adds both sets, in the order its option callbacks run.
            return Err(unsupported(
                "opendir",
                dir,
                &format!("together with filename ('{f}')"),
            ));
        }
        // fio adds a directory's files as it parses the option: a job that sets opendir
        // adds its own to those a [global] one added (and counts them all).
        let last = |opts: &[(String, String)]| {
            opts.iter()
                .rev()
                .find(|(n, _)| n == "opendir")
                .map(|(_, v)| v.clone())
        };
        let own = last(ctx.job_options);
        for d in last(ctx.global_options).iter().chain(&own) {
            let found = super::opendir::files_below(d, ctx.cwd).map_err(TranslateError::Opendir)?;
            user_files.extend(found);
        }
        opendir_note = Some((
            format!("fio: opendir added {} files", user_files.len()),
            own.is_some(),
        ));
    }
    let fmt = g
        .raw("filename_format")
        .unwrap_or("$jobname.$jobnum.$filenum")
        .to_string();
    // The name as fio spells it in its messages: `directory/name`, not resolved.
    let spell = |name: &str, clone: u32| -> String {
        match dirs.get(clone as usize % dirs.len().max(1)) {
            Some(d) if !Path::new(name).is_absolute() => format!("{d}/{name}"),
            _ => name.to_string(),
        }
    };
    let resolve = |name: &str, clone: u32| -> PathBuf {
        let p = Path::new(name);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let base = if dirs.is_empty() {
            ctx.cwd.to_path_buf()
        } else {
            ctx.cwd.join(&dirs[clone as usize % dirs.len()])
        };
        base.join(p)
    };
    let size_opt = g.size("size")?;
    let filesize = match file_size(&g)? {
        // fio 3.33 parses filesize=N% but never takes it as a share of anything: the
        // percentage's encoding (2^64 - 1 - N) stays the size in bytes, so each file is some
        // 16 EiB: a write lays it out until the filesystem is full (ENOSPC) unless size caps
        // it, a read fails at ftruncate (EINVAL), a random job cannot allocate its map.
        Some(FileSize::Fixed(Size::Percent(_))) if ctx.parse_only => None,
        Some(FileSize::Fixed(Size::Percent(_))) => {
            return Err(unsupported(
                "filesize",
                g.raw("filesize").unwrap_or_default(),
                "fio 3.33 reads N% as 2^64-1-N bytes, a file that fills the filesystem; give the size in bytes",
            ))
        }
        fs => fs,
    };
    let io_size = g.size("io_size")?;
    let offset = g.size("offset")?;
    let offset_inc = g.size("offset_increment")?;
    let unlink = g.flag("unlink", false)?;
    // fio drops a file's cached pages at every open, direct or not, and when a time-based
    // job wraps a file in place unless the I/O is direct; never for an engine without
    // files (null).
    // pre_read: each file read once before the job, into the page cache, which fio then
    // keeps (it turns invalidate off). Through O_DIRECT there is no cache to fill, and
    // fio's pre-read fails there.
    let pre_read = g.flag("pre_read", false)? && engine.caps.needs_files;
    // fio turns it off where nothing in flight can collide (init.c): a job that changes no
    // data, or a queue of one, unless it replays a log.
    let serialize_overlap = g.flag("serialize_overlap", false)?
        && (replays.is_some() || (mix != Mix::Read && iodepth > 1));
    if pre_read && direct {
        return Err(unsupported(
            "pre_read",
            "1",
            "with direct=1 (no page cache to fill; fio's pre-read fails there)",
        ));
    }
    let invalidate = g.flag("invalidate", true)? && engine.caps.needs_files && !pre_read;
    let invalidate_on_wrap = invalidate && !direct;
    // fadvise_hint=1 (the default) tells the kernel the job's own pattern at each open.
    let advice = match g.raw("fadvise_hint").unwrap_or("1") {
        _ if !engine.caps.needs_files => None,
        "0" => None,
        "1" => Some(if random {
            FileAdvice::Random
        } else {
            FileAdvice::Sequential
        }),
        "random" => Some(FileAdvice::Random),
        "sequential" => Some(FileAdvice::Sequential),
        v => return Err(parse_err("fadvise_hint", v)),
    };
    let buffers = Buffers {
        compress,
        zero: g.flag("zero_buffers", false)?,
        refill: match g.raw("refill_buffers") {
            None => None,
            Some(_) => Some(g.flag("refill_buffers", false)?),
        },
        scramble: g.flag("scramble_buffers", true)?,
        scramble_set: g.raw("scramble_buffers").map(str::to_string),
    };
    let memory = buffer_memory(&g, ctx.buffers)?;
    // fio's buffer_pattern takes verify_pattern's pieces but no formats (%o fails to parse).
    let buffer_pattern: Option<std::sync::Arc<[u8]>> = match g.raw("buffer_pattern") {
        None => None,
        Some(p) if p.contains('%') => return Err(parse_err("buffer_pattern", p)),
        Some(p) => Some(
            super::verify_pattern::parse(p)
                .map_err(|r| match r {
                    super::verify_pattern::Refused::Malformed => parse_err("buffer_pattern", p),
                    super::verify_pattern::Refused::Unsupported(why) => {
                        unsupported("buffer_pattern", p, why)
                    }
                })?
                .into(),
        ),
    };
    if buffer_pattern.is_some() && compress.is_some_and(|c| c > 0) {
        return Err(unsupported(
            "buffer_pattern",
            g.raw("buffer_pattern").unwrap_or_default(),
            "with buffer_compress_percentage (fio puts the pattern in the compressible part)",
        ));
    }
    let fill = match verify {
        // Verified writes carry random data, as fio turns refill_buffers on for verify.
        Some(_) => Fill::Random,
        // The pattern wins over zero_buffers, refill and scrambling (fio's fill_io_buffer).
        None if buffer_pattern.is_some() => Fill::Pattern,
        None => buffers.fill()?,
    };

    // Seeds: repeatable per job number unless randrepeat=0 without a randseed.
    let randseed = match g.raw("randseed") {
        Some(v) => Some(parse_int(v).map_err(|_| parse_err("randseed", v))?),
        None => None,
    };
    let randrepeat = g.flag("randrepeat", true)?;

    // Percentiles.
    let list_text = g.raw("percentile_list").map(str::to_string);
    let percentiles = match &list_text {
        Some(v) => {
            parse_float_list(v, 20, 0.0, 100.0)
                .map_err(|_| parse_err("percentile_list", v))?
                .0
        }
        None => DEFAULT_PERCENTILES.to_vec(),
    };
    let measured = measure::measured(
        &g,
        measure::Logs {
            bw: bw_log.is_some(),
            iops: iops_log.is_some(),
            lat: lat_log.is_some(),
            window_ms,
        },
    )?;

    let mut clones = Vec::with_capacity(numjobs as usize);
    // Clone numbers as fio makes them: the job is 0, then numjobs-1 down to 1.
    let subjobs: Vec<u32> = std::iter::once(0).chain((1..numjobs).rev()).collect();
    for (k, &sub) in subjobs.iter().enumerate() {
        // A replay's files are its log's (fio drops the job's own for them).
        let replay = replays
            .as_ref()
            .map(|logs| &logs[sub as usize % logs.len()]);
        let names: Vec<String> = if let Some(r) = replay {
            r.names.clone()
        } else if user_files.is_empty() {
            (0..nrfiles)
                .map(|f| format_name(&fmt, &stem, sub, f))
                .collect()
        } else {
            user_files.clone()
        };
        let paths: Vec<PathBuf> = names.iter().map(|f| resolve(f, sub)).collect();
        let file_names: Vec<String> = names.iter().map(|f| spell(f, sub)).collect();
        let nfiles = paths.len() as u64;
        // Each file's size: filesize, else size / files, else what the files already hold.
        let existing: Vec<Option<u64>> = paths
            .iter()
            .map(|p| plumb_fileio::fileset::named::size_of(p))
            .collect();
        let whole = existing.iter().flatten().sum::<u64>();
        // Without a size, each file is worked on whole (fio's io_size is then each file's
        // real size less the offset), however the sizes differ.
        let from_files = size_opt.is_none()
            && filesize.is_none()
            && existing.iter().all(|e| e.is_some_and(|n| n > 0));
        let number = ctx.job_number + k as u32;
        let seed = match (randseed, randrepeat) {
            (Some(s), _) => s.wrapping_add(number as u64),
            (None, true) => 0x89u64.wrapping_add(number as u64),
            (None, false) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
                .wrapping_add(number as u64),
        };
        let per_file_whole = whole / nfiles.max(1);
        let rw_min_bs = [&sizes.read, &sizes.write, &sizes.trim]
            .iter()
            .map(|s| s.min())
            .min()
            .unwrap_or(min_bs);
        let fixed_sizes = filesize.map(|fs| {
            let mut rng = plumb_core::random::Rng::new(seed, FILESIZE_STREAM);
            file_sizes(fs, &existing, per_file_whole, rw_min_bs, &mut rng)
        });
        let total = match (size_opt, &fixed_sizes) {
            _ if replay.is_some() => replay.map(|r| r.bytes),
            (Some(s), _) => Some(percent_of(s, whole)),
            (None, Some(each)) => Some(each.iter().sum()),
            (None, None) if from_files => Some(whole),
            // More than the filesystem holds (fio: no size at all), so ENOSPC ends the job
            // even where every byte of it can be written (tmpfs); finite, for the random map.
            (None, None) if fill_device => {
                filesystem_size(&paths).map(|s| s.saturating_mul(2) / nfiles * nfiles)
            }
            _ => None,
        };
        // fio's --parse-only looks at no file: it never finds the size missing.
        if total.is_none() && ctx.parse_only {
            return Ok(Vec::new());
        }
        let Some(total) = total else {
            // fio opens a block device to learn its size: one it cannot open fails there,
            // with the open's error, before any complaint about the size.
            for (p, spelled) in paths.iter().zip(&file_names) {
                let block = std::fs::metadata(p)
                    .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
                if let (true, Err(e)) = (block, std::fs::File::open(p)) {
                    return Err(TranslateError::Job(format!(
                        "fio: failed opening blockdev {spelled} for size check\n\
                         file:filesetup.c:805, func=open({spelled}), error={}",
                        plumb_fileio::dd::strerror(&e)
                    )));
                }
            }
            return Err(TranslateError::Job(format!(
                "{name}: you need to specify size="
            )));
        };
        let per_file = total / nfiles;
        let base_off = offset.map_or(0, |o| percent_of(o, per_file_whole));
        let inc = offset_inc.map_or(0, |o| percent_of(o, per_file_whole));
        let start = if replay.is_some() {
            0
        } else {
            base_off + inc * sub as u64
        };
        let lengths: Vec<u64> = if let Some(r) = replay {
            // A replay's offsets are the log's: each file's region reaches its furthest.
            r.extents.clone()
        } else if let Some(each) = &fixed_sizes {
            // A file's size under filesize includes the offset, which must lie within it.
            if each.iter().any(|&n| start > n) {
                return Err(TranslateError::Job(format!(
                    "{name}: you need to specify valid offset="
                )));
            }
            each.iter().map(|&n| n - start).collect()
        } else if from_files {
            // The job works on the existing files from its offset to their end.
            existing
                .iter()
                .map(|e| e.unwrap_or(0).saturating_sub(start))
                .collect()
        } else if size_opt.is_none() && filesize.is_none() {
            vec![per_file.saturating_sub(start); paths.len()]
        } else {
            vec![per_file; paths.len()]
        };
        let length = lengths.iter().copied().min().unwrap_or(0);
        if length < min_bs && replay.is_none() {
            return Err(TranslateError::Job(format!(
                "fio: size too small, must not be less than minimum block size: {length} < {min_bs}"
            )));
        }
        if random {
            let v = g.raw("random_distribution").unwrap_or_default();
            super::zoned::check_fit(&skew, v, length, align.max(1))?;
        }
        if let Some(z) = &zoning {
            super::strided::check(z, &zone_walk(paths.len()))?;
            super::strided::check_region(j, z, random, length)?;
        }
        let files: Vec<NamedFile> = paths
            .iter()
            .zip(&lengths)
            .map(|(p, &length)| NamedFile {
                path: p.clone(),
                offset: start,
                length,
            })
            .collect();
        let region: u64 = lengths.iter().sum();
        let pass_bytes = match (io_size, &fixed_sizes) {
            _ if replay.is_some() => total,
            (Some(s), _) => percent_of(s, region).max(min_bs),
            // With filesize, size caps the bytes a pass moves (fio lowers size to the sum
            // of the files' sizes, never raises it).
            (None, Some(_)) => total.min(region),
            (None, None) => region,
        };
        // fio's do_io stops a round at its total_bytes: the size, or io_size when larger
        // for a job that writes at random without a map, plus io_size × loops for
        // trimwrite (whose trims count too). It counts those bytes only for requests an
        // engine queues, and a time-based job stops there only to verify.
        let random_map = !norandommap && !blockalign_unmaps && skew.is_uniform();
        if verify.as_ref().is_some_and(|v| v.in_write_order) && random && !random_map && !lfsr {
            return Err(unsupported(
                "experimental_verify",
                g.raw("experimental_verify").unwrap_or("1"),
                "a random job without a map (fio 3.33 fails its own check where a block was written twice)",
            ));
        }
        let round_bytes = (engine.caps.queued
            && replay.is_none()
            && (!time_based || verify.is_some()))
        .then(|| {
            let mut total = region;
            if random && access.issues_writes() && !random_map {
                total = total.max(pass_bytes);
            }
            if mix == Mix::TrimWrite {
                total = total.saturating_add(pass_bytes.saturating_mul(loops));
            }
            total
        });
        // fio's real_file_size: what the file holds already, or the region's end once laid
        // out (share_layouts adds what earlier jobs lay out).
        let zones = zoning.map(|z| {
            z.spec(
                existing
                    .iter()
                    .zip(&lengths)
                    .map(|(e, &l)| e.unwrap_or(0).max(start + l))
                    .collect(),
            )
        });
        if let (Some(z), "mmap") = (&zones, engine_name) {
            super::strided::check_mapped(z, &files)?;
        }
        let job = JobIo {
            files,
            sizes: sizes.clone(),
            align: align.max(1),
            // fio keeps no random map under a skewed distribution, nor under lfsr.
            random_map: random_map && !lfsr,
            // A skewed distribution draws its own blocks (fio's lfsr then goes unused).
            lfsr: lfsr && skew.is_uniform(),
            skew: skew.clone(),
            think,
            pass_bytes,
            passes: (!time_based).then_some(loops),
            round_bytes,
            repeat_each_round: randrepeat,
            sync_every_writes: every,
            // fio writes the data of a job that reads, and of one that writes through an
            // engine that cannot extend a file (mmap: FIO_NOEXTEND).
            // A replay lays nothing out (fio creates a missing file empty at its open).
            // (and of one that overwrites: overwrite=1 writes over data already there).
            lay_out_data: replay.is_none()
                && (access.reads()
                    || (access.issues_writes() && (overwrite || engine_name == "mmap"))),
            // fio's fallocate (native by default on Linux), for every file it lays out.
            allocate: match replay {
                Some(_) => Allocation::None,
                None => allocation(&g)?,
            },
            layout_unsynced: !g.flag("create_fsync", true)?,
            no_create: !g.flag("allow_file_create", true)?,
            tolerate: super::tolerate::of(g.raw("continue_on_error"), g.raw("ignore_error"))
                .map_err(TranslateError::Job)?,
            unlink,
            invalidate,
            invalidate_on_wrap,
            advice,
            // A file that fills the filesystem grows as it is written: neither sized nor
            // preallocated first (fio skips both under fill_device).
            create_at_open: create_at_open
                || replay.is_some()
                || (fill_device
                    && !paths
                        .iter()
                        .any(|p| plumb_fileio::fileset::named::is_device(p))),
            fill_device,
            queue_low,
            batch: Some(batch),
            stride,
            zones,
            log: wants_log.then_some(plumb_fileio::iolog::LogSpec {
                window_ms,
                offsets: g.flag("log_offset", false)?,
                epoch_clock: log_epoch_clock(&g)?,
                // fio samples its histogram as it counts completion latencies (none under
                // disable_clat), its buckets filled with clat percentiles on.
                hist_ms: if hist_log.is_some() && measured.clat {
                    hist_ms
                } else {
                    0
                },
                hist_uncounted: !measured.clat_percentiles,
                hist_only: !wants_main_log,
            }),
            trace: g
                .raw("write_iolog")
                .map(|p| plumb_fileio::io_trace::TraceSpec {
                    path: ctx.cwd.join(p),
                    names: file_names.clone(),
                }),
            replay: replay.map(|r| r.script.clone()),
            pre_read,
            serialize_overlap,
            // A value with fio's units (1k: 1024 requests).
            number_ios: match g.raw("number_ios") {
                None => None,
                Some(v) => Some(
                    super::values::parse_bytes(v, j.kb_of("number_ios"))
                        .map_err(|_| parse_err("number_ios", v))?,
                )
                .filter(|&n| n > 0),
            },
            service,
            verify: verify.clone(),
            min_rate,
            max_latency,
            // Each clone joins its flow with the job's weight (fio adds every job).
            flow: flow.map(|(id, weight, sleep_us)| plumb_fileio::flow::FlowSpec {
                id,
                weight,
                sleep_us,
                flow: ctx.flows.map(|f| f.join(id, weight)),
            }),
        };
        // An engine that opens no files (null) lays none out.
        let layout_files: Vec<(PathBuf, u64)> = if engine.caps.needs_files && !job.create_at_open {
            plumb_fileio::fileset::named::needs_layout(&job)
                .into_iter()
                .map(|(f, want)| (f.path.clone(), want))
                .collect()
        } else {
            Vec::new()
        };
        let spec = FileioSpec {
            dir: ctx.cwd.to_path_buf(),
            num_files: nfiles as u32,
            block_size: min_bs,
            total_size: region,
            access: Some(access),
            // fio's distributions are its own (random_distribution); sysbench's shape is unused.
            rand_shape: Default::default(),
            engine,
            engine_options: engine_options.clone(),
            queue_depth: iodepth,
            flags,
            sync,
            merged_requests: 0,
            validate: false,
            fill,
            pattern: buffer_pattern.clone(),
            buffers: memory,
            threads: 1,
            job: Some(job),
            placement: split_cpus(&placement, split, ctx.job_number + k as u32),
        };
        // A delay no run outlives: the job waits for a signal (execute's wait_for_start).
        let start_delay =
            super::pacing::start_delay(g.raw("startdelay"), seed)?.unwrap_or(Duration::MAX);
        let config = RunConfig {
            threads: 1,
            time_limit: runtime,
            event_limit: 0,
            warmup: ramp,
            // fio's bandwidth and IOPS samples: one per window, never printed.
            report_interval: None,
            sample_interval: Some(sample_window),
            rate,
            arrivals,
            // fio falls behind its rate without failing.
            queue_limit: None,
            forced_shutdown: None,
            seed,
            rand_type: None,
            rand_shape: Default::default(),
            interval_percentiles: Vec::new(),
            together: None,
            steady: None,
        };
        let laid: u64 = layout_files.iter().map(|f| f.1).sum();
        // fio reads the word before any `:` or `,` (`both:1` is `both`).
        let unified = match g.raw("unified_rw_reporting") {
            None => None,
            Some(v) => Some(
                parse_enum(v, &["none", "mixed", "both", "0", "1", "2"])
                    .map_err(|_| parse_err("unified_rw_reporting", v))?
                    .word,
            ),
        };
        let info = FioJobInfo {
            header: JobHeader {
                name: name.clone(),
                groupid: ctx.groupid,
                rw: if word == "readwrite" {
                    "rw".into()
                } else {
                    word.to_string()
                },
                bs: header_bs,
                bs_is_seq_rand: false,
                ioengine: engine_name.to_string(),
                iodepth,
                numjobs,
                kb_base: if kb == KbBase::K1000 { 1000 } else { 1024 },
                sig_figs: measured.sig_figs,
            },
            subjob: sub,
            group_reporting: g.flag("group_reporting", false)?,
            description: g.raw("description").map(str::to_string),
            job_options: ctx.job_options.to_vec(),
            global_options: ctx.global_options.to_vec(),
            percentiles: percentiles.clone(),
            percentile_list_text: list_text.clone(),
            clat_percentiles: measured.clat_percentiles,
            lat_percentiles: measured.lat_percentiles,
            slat_percentiles: measured.slat_percentiles,
            series: LatSeries {
                slat: measured.slat,
                clat: measured.clat,
                lat: measured.lat,
            },
            stats_off: !measured.stats,
            unit_bits: measured.unit_bits,
            no_disk_util: !g.flag("disk_util", true)?,
            thread: g.flag("thread", false)?,
            pid: std::process::id(),
            laid_out: (!layout_files.is_empty()).then_some((layout_files.len() as u32, laid)),
            output: ctx.output.clone(),
            unified_mixed: matches!(unified, Some("mixed" | "1")),
            unified_both: matches!(unified, Some("both" | "2")),
            failure: None,
            errors: None,
            stderr: Vec::new(),
            steady: None,
            parse_lines: clock_note.iter().map(|s| s.to_string()).collect(),
            progress: JobProgress {
                io_bytes: pass_bytes.saturating_mul(loops),
                time_based,
                runtime_s: runtime.map(|d| d.as_secs_f64()),
                ramp_s: ramp.as_secs_f64(),
                start_delay_s: start_delay.as_secs_f64(),
                files: nfiles as u32,
                rate_bytes: rate_limit.0,
                rate_iops: rate_limit.1,
            },
        };
        let (log_offset, per_job_logs) =
            (g.flag("log_offset", false)?, g.flag("per_job_logs", true)?);
        let ioscheduler = g
            .raw("ioscheduler")
            .filter(|_| !info.no_disk_util)
            .map(str::to_string);
        clones.push(JobClone {
            name: name.clone(),
            spec,
            config,
            info,
            seed_given: randseed.is_some(),
            allow_mounted_write: g.flag("allow_mounted_write", false)?,
            logs: wants_log.then(|| LogFiles {
                bw: bw_log.clone(),
                iops: iops_log.clone(),
                lat: lat_log.clone(),
                hist: hist_log.clone(),
                hist_coarseness: hist_coarseness as u32,
                number,
                window_ms,
                offsets: log_offset,
                per_job: per_job_logs,
            }),
            exitall: g.flag("exitall", false)?,
            exitall_on_error: g.flag("exitall_on_error", false)?,
            exit_stonewall: match g.raw("exit_what") {
                None => false,
                Some(v) => match parse_enum(v, &["group", "stonewall", "all"])
                    .map_err(|_| parse_err("exit_what", v))?
                    .word
                {
                    "group" => false,
                    "stonewall" => true,
                    _ => {
                        return Err(unsupported(
                            "exit_what",
                            v,
                            "exitall stops the jobs of its reporting group (group) or of its stonewall group (stonewall), not later groups",
                        ))
                    }
                },
            },
            steady: steady.clone(),
            warnings: if k == 0 { warnings.clone() } else { Vec::new() },
            opendir_note: if k == 0 { opendir_note.clone() } else { None },
            lays_out: layout_files,
            start_delay,
            file_names,
            prerun: g.raw("exec_prerun").map(str::to_string),
            postrun: g.raw("exec_postrun").map(str::to_string),
            lockmem: match g.raw("lockmem") {
                None => 0,
                Some(v) => super::values::parse_bytes(v, j.kb_of("lockmem"))
                    .map_err(|_| parse_err("lockmem", v))?,
            },
            ioscheduler,
        });
    }
    Ok(clones)
}

/// A job's options as (canonical name, value) pairs, the last one winning: the unit
/// tests' jobs.
#[cfg(test)]
pub(crate) struct TestOpts(pub Vec<(&'static str, &'static str)>);

#[cfg(test)]
impl JobOptions for TestOpts {
    fn name(&self) -> &str {
        "j"
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
    fn last_set<'a>(&self, _names: &[&'a str]) -> Option<&'a str> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Opts(String, Vec<(String, String)>);
    impl JobOptions for Opts {
        fn name(&self) -> &str {
            &self.0
        }
        fn get(&self, name: &str) -> Option<&str> {
            self.1
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        }
        fn last_set<'a>(&self, names: &[&'a str]) -> Option<&'a str> {
            self.1
                .iter()
                .rev()
                .find_map(|(n, _)| names.iter().find(|m| **m == n).copied())
        }
    }

    fn job(name: &str, opts: &[(&str, &str)]) -> Opts {
        Opts(
            name.into(),
            opts.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        )
    }

    fn run(o: &Opts, dir: &Path) -> Result<Vec<JobClone>, TranslateError> {
        let out = OutputOptions::default();
        translate(
            o,
            &Context {
                job_number: 1,
                groupid: 0,
                global_options: &[],
                job_options: &[],
                output: &out,
                cwd: dir,
                parse_only: false,
                buffers: None,
                flows: None,
            },
        )
    }

    /// Each combination of the buffer options, against what fio 3.33 writes (checked by
    /// reading back fio's files: one distinct block per buffer, or every block distinct).
    #[test]
    fn buffer_options_pick_fio_s_data() {
        let d = tempfile::tempdir().unwrap();
        let fill = |opts: &[(&str, &str)]| {
            let mut all = vec![("rw", "write"), ("size", "1m")];
            all.extend_from_slice(opts);
            run(&job("b", &all), d.path()).map(|c| c[0].spec.fill)
        };
        let repeated = Fill::Repeated { pct: 0 };
        for (opts, want) in [
            (&[][..], Fill::Random),
            (&[("scramble_buffers", "0")][..], repeated),
            (
                &[("scramble_buffers", "0"), ("refill_buffers", "1")],
                Fill::Random,
            ),
            (
                &[("scramble_buffers", "0"), ("zero_buffers", "1")],
                Fill::Zero,
            ),
            (
                &[("scramble_buffers", "0"), ("verify", "md5")],
                Fill::Random,
            ),
            (&[("zero_buffers", "1")], Fill::Zero),
            (
                &[("zero_buffers", "1"), ("refill_buffers", "1")],
                Fill::Zero,
            ),
            (
                &[
                    ("zero_buffers", "1"),
                    ("refill_buffers", "1"),
                    ("scramble_buffers", "1"),
                ],
                Fill::Zero,
            ),
            // A compress percentage stops the scrambling, even at 0...
            (&[("buffer_compress_percentage", "0")], repeated),
            (
                &[("buffer_compress_percentage", "0"), ("refill_buffers", "1")],
                Fill::Random,
            ),
            (
                &[("buffer_compress_percentage", "0"), ("zero_buffers", "1")],
                Fill::Zero,
            ),
            // ... and above 0 turns refill_buffers on unless it is set.
            (
                &[("buffer_compress_percentage", "30")],
                Fill::Compressible { pct: 30 },
            ),
            (
                &[
                    ("buffer_compress_percentage", "30"),
                    ("scramble_buffers", "0"),
                ],
                Fill::Compressible { pct: 30 },
            ),
            (
                &[
                    ("buffer_compress_percentage", "30"),
                    ("refill_buffers", "0"),
                ],
                Fill::Repeated { pct: 30 },
            ),
            (&[("buffer_compress_percentage", "100")], Fill::Zero),
        ] {
            assert_eq!(fill(opts).unwrap(), want, "{opts:?}");
        }
        let e = fill(&[("zero_buffers", "1"), ("scramble_buffers", "1")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "plumb: fio option 'scramble_buffers' (value '1') is not supported yet: with zero_buffers fio stamps every 512 bytes of its zeroed buffers, which plumb does not (without scramble_buffers both write zeros)"
        );
    }

    #[test]
    fn trim_modes_take_the_third_size_and_drop_open_flags() {
        let d = tempfile::tempdir().unwrap();
        let c = run(
            &job(
                "t",
                &[
                    ("rw", "randtrimwrite"),
                    ("size", "1m"),
                    ("bs", "4k,16k,8k"),
                    ("direct", "1"),
                    ("sync", "1"),
                ],
            ),
            d.path(),
        )
        .unwrap();
        let s = &c[0].spec;
        assert_eq!(s.access.unwrap().mix, Mix::TrimWrite);
        assert!(!s.access.unwrap().is_sequential());
        // fio opens a trim job's files without O_DIRECT or O_SYNC.
        assert_eq!(s.flags, OpenFlags::default());
        let j = s.job.as_ref().unwrap();
        assert_eq!(j.sizes.trim, SizeChoice::Fixed(8192));
        assert_eq!(j.align, 8192, "random trims are aligned on the trim size");
        assert!(j.allocate == Allocation::Native && !j.lay_out_data);
        assert_eq!(c[0].info.header.bs[2], (8192, 8192));
        // A trailing comma leaves the later directions at fio's default.
        let c = run(
            &job("t", &[("rw", "trim"), ("size", "1m"), ("bs", "8k,16k,")]),
            d.path(),
        )
        .unwrap();
        assert_eq!(
            c[0].info.header.bs,
            [(8192, 8192), (16384, 16384), (4096, 4096)]
        );
        let e = run(
            &job(
                "t",
                &[("rw", "trim"), ("size", "1m"), ("ioengine", "vsync")],
            ),
            d.path(),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("vsync writes the blocks"), "{e}");
        let e = run(
            &job(
                "t",
                &[
                    ("rw", "read"),
                    ("size", "1m"),
                    ("ioengine", "falloc"),
                    ("end_fsync", "1"),
                ],
            ),
            d.path(),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("'end_fsync'"), "{e}");
    }

    #[test]
    fn clones_get_fio_s_file_names_and_offsets() {
        let d = tempfile::tempdir().unwrap();
        let c = run(
            &job(
                "j",
                &[
                    ("numjobs", "3"),
                    ("nrfiles", "2"),
                    ("size", "1m"),
                    ("rw", "randwrite"),
                ],
            ),
            d.path(),
        )
        .unwrap();
        let names: Vec<String> = c
            .iter()
            .flat_map(|c| c.spec.job.as_ref().unwrap().files.iter())
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["j.0.0", "j.0.1", "j.2.0", "j.2.1", "j.1.0", "j.1.1"]
        );
        let j = c[0].spec.job.as_ref().unwrap();
        assert_eq!(j.files[0].length, 512 << 10);
        assert_eq!(j.pass_bytes, 1 << 20);
        assert!(
            j.allocate == Allocation::Native && !j.lay_out_data,
            "a pure writer gets allocated files"
        );
        let mut seeds = HashMap::new();
        for c in &c {
            seeds.insert(c.config.seed, ());
        }
        assert_eq!(seeds.len(), 3, "each clone its own stream");
    }

    #[test]
    fn offset_increment_moves_each_clone_and_a_user_file_is_shared() {
        let d = tempfile::tempdir().unwrap();
        let c = run(
            &job(
                "j",
                &[
                    ("filename", "data"),
                    ("numjobs", "2"),
                    ("size", "64k"),
                    ("offset", "4k"),
                    ("offset_increment", "64k"),
                ],
            ),
            d.path(),
        )
        .unwrap();
        let f0 = &c[0].spec.job.as_ref().unwrap().files[0];
        let f1 = &c[1].spec.job.as_ref().unwrap().files[0];
        assert_eq!(f0.path, f1.path);
        assert_eq!((f0.offset, f1.offset), (4096, 4096 + 65536));
    }

    #[test]
    fn mixes_sizes_and_refusals() {
        let d = tempfile::tempdir().unwrap();
        let c = run(
            &job(
                "m",
                &[
                    ("rw", "randrw"),
                    ("rwmixread", "70"),
                    ("bs", "8k,32k"),
                    ("size", "1m"),
                ],
            ),
            d.path(),
        )
        .unwrap();
        let s = &c[0].spec;
        assert_eq!(s.access.unwrap().mix, Mix::Share { read_pct: 70 });
        let j = s.job.as_ref().unwrap();
        assert_eq!(j.sizes.read, SizeChoice::Fixed(8192));
        assert_eq!(j.sizes.write, SizeChoice::Fixed(32768));
        assert_eq!(c[0].info.header.bs[2], (32768, 32768));

        // rw=...:N: a count for random orders, bytes (with units) for sequential ones.
        let c = run(&job("x", &[("rw", "randread:8"), ("size", "1m")]), d.path()).unwrap();
        assert_eq!(c[0].spec.job.as_ref().unwrap().stride, Some(8));
        let c = run(&job("x", &[("rw", "write:4k"), ("size", "1m")]), d.path()).unwrap();
        assert_eq!(c[0].spec.job.as_ref().unwrap().stride, Some(4096));
        // A negative hole steps back (fio's signed ddir_seq_add).
        let c = run(&job("x", &[("rw", "read:-8k"), ("size", "1m")]), d.path()).unwrap();
        assert_eq!(c[0].spec.job.as_ref().unwrap().stride, Some(-8192));
        let e = run(
            &job("x", &[("rw", "trimwrite:4k"), ("size", "1m")]),
            d.path(),
        )
        .err()
        .unwrap();
        assert!(
            e.to_string()
                .starts_with("plumb: fio option 'rw' (value 'trimwrite:4k') is not supported yet"),
            "{e}"
        );
        let e = run(&job("x", &[("fill_device", "1")]), d.path())
            .err()
            .unwrap();
        assert!(e.to_string().contains("'fill_device'"), "{e}");
        let e = run(&job("x", &[]), d.path()).err().unwrap();
        assert_eq!(e.to_string(), "x: you need to specify size=");
        let e = run(&job("x", &[("size", "1k")]), d.path()).err().unwrap();
        assert_eq!(
            e.to_string(),
            "fio: size too small, must not be less than minimum block size: 1024 < 4096"
        );
        let e = run(&job("x", &[("ioengine", "rbd"), ("size", "1m")]), d.path())
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("fio engine 'rbd' is not supported"),
            "{e}"
        );
    }

    #[test]
    fn existing_files_give_the_size() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), vec![0u8; 16384]).unwrap();
        let c = run(&job("e", &[("filename", "f")]), d.path()).unwrap();
        let j = c[0].spec.job.as_ref().unwrap();
        assert_eq!(j.files[0].length, 16384);
        assert!(c[0].info.laid_out.is_none());
        let c = run(&job("e", &[("filename", "f"), ("size", "50%")]), d.path()).unwrap();
        assert_eq!(c[0].spec.job.as_ref().unwrap().files[0].length, 8192);
    }

    #[test]
    fn time_and_loops() {
        let d = tempfile::tempdir().unwrap();
        let c = run(
            &job(
                "t",
                &[
                    ("size", "1m"),
                    ("runtime", "2"),
                    ("time_based", ""),
                    ("ramp_time", "500ms"),
                ],
            ),
            d.path(),
        )
        .unwrap();
        assert_eq!(c[0].config.time_limit, Some(Duration::from_secs(2)));
        assert_eq!(c[0].config.warmup, Duration::from_millis(500));
        assert_eq!(c[0].spec.job.as_ref().unwrap().passes, None);
        let c = run(&job("t", &[("size", "1m"), ("loops", "3")]), d.path()).unwrap();
        assert_eq!(c[0].spec.job.as_ref().unwrap().passes, Some(3));
        assert_eq!(c[0].config.time_limit, None);
    }

    #[test]
    fn distribution_think_time_and_start_delay_reach_the_model() {
        let d = tempfile::tempdir().unwrap();
        let c = run(
            &job(
                "p",
                &[
                    ("rw", "randread"),
                    ("size", "1m"),
                    ("numjobs", "4"),
                    ("random_distribution", "zipf:1.2"),
                    ("thinktime", "100"),
                    ("thinktime_blocks", "4"),
                    ("startdelay", "1-2"),
                ],
            ),
            d.path(),
        )
        .unwrap();
        let j = c[0].spec.job.as_ref().unwrap();
        assert_eq!(
            j.skew,
            plumb_core::random::Skew::Zipf {
                theta: 1.2,
                center: None
            }
        );
        assert!(!j.random_map, "a skew keeps no random map");
        let think = j.think.unwrap();
        assert_eq!((think.stall_ns, think.every), (100_000, 4));
        let delays: Vec<Duration> = c.iter().map(|c| c.start_delay).collect();
        assert!(delays
            .iter()
            .all(|d| (Duration::from_secs(1)..=Duration::from_secs(2)).contains(d)));
        assert!(delays.iter().any(|d| *d != delays[0]), "{delays:?}");
        let plain = run(&job("p", &[("rw", "randread"), ("size", "1m")]), d.path()).unwrap();
        let j = plain[0].spec.job.as_ref().unwrap();
        assert!(j.random_map && j.skew.is_uniform() && j.think.is_none());
        assert_eq!(plain[0].start_delay, Duration::ZERO);
    }
}
