//! Options every sysbench test takes, with sysbench 1.0's names and defaults, plus plumb's
//! output options.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use plumb_core::random::RandType;
use plumb_core::RunConfig;

use super::options::{opt, Kind, Opt, Values};
use crate::exit::UsageError;
use crate::keep::Keep;

/// sysbench's event queue (`MAX_QUEUE_LEN`): with --rate, a run that falls this many events
/// behind fails, as sysbench's does.
pub const SYSBENCH_QUEUE: u64 = 131_072;

pub const OPTIONS: &[Opt] = &[
    opt("threads", Kind::Int { min: 1, max: 100_000 }, "1", "number of threads to use"),
    opt("events", Kind::Int { min: 0, max: u64::MAX }, "0", "limit for total number of events (0: no limit)"),
    opt("time", Kind::Float { min: 0.0, max: 1e9 }, "10", "limit for total execution time in seconds (0: no limit)"),
    opt("warmup-time", Kind::Float { min: 0.0, max: 1e9 }, "0", "run events for this many seconds before measuring; excluded from the results"),
    opt("forced-shutdown", Kind::Grace, "off", "seconds (or N% of --time) to wait after --time before reporting without the workers, or 'off'"),
    opt("rate", Kind::Float { min: 0.0, max: 1e12 }, "0", "open-loop target rate in events per second, Poisson arrivals (0: closed loop)"),
    opt("report-interval", Kind::Float { min: 0.0, max: 1e9 }, "0", "print intermediate statistics every N seconds (0: off)"),
    opt("report-checkpoints", Kind::Seconds, "", "print a full report at these seconds since the start, each over the time since the one before; the report after the run then covers the time since the last one (the JSON result keeps the whole run)"),
    opt("percentile", Kind::Percentiles, "95", "latency percentiles to report, comma-separated, fractions allowed (0: off)"),
    opt("histogram", Kind::Bool, "off", "print the latency histogram in the report"),
    opt("rand-type", Kind::Choice(&["uniform", "gaussian", "special", "pareto", "zipfian"]), "special", "random numbers distribution"),
    opt("rand-spec-iter", Kind::Int { min: 1, max: 1_000_000 }, "12", "number of iterations used for numbers generation (gaussian and special distributions)"),
    opt("rand-spec-pct", Kind::Int { min: 0, max: 100 }, "1", "percentage of values to be treated as 'special' (for special distribution)"),
    opt("rand-spec-res", Kind::Int { min: 0, max: 100 }, "75", "percentage of 'special' values to use (for special distribution)"),
    opt("rand-pareto-h", Kind::Float { min: 0.0, max: 1.0 }, "0.2", "parameter h for pareto distribution, between 0 and 1"),
    opt("rand-seed", Kind::Int { min: 0, max: u64::MAX }, "0", "seed for the random number generator (0: current time)"),
    opt("verbosity", Kind::Int { min: 0, max: 5 }, "3", "sysbench's verbosity: 0-2 only errors and warnings (no report), 3 the report, 4 sysbench's info lines too, 5 its debug lines too"),
    opt("debug", Kind::Bool, "off", "sysbench's debug mode: verbosity 5, and each thread's figures after the report"),
    opt("format", Kind::Choice(&["text", "json"]), "text", "report format on stdout"),
    opt("json", Kind::Text, "", "also write the JSON result to this file"),
    opt("strict", Kind::Bool, "off", "exit 3 when a finding marks the result invalid"),
    opt("plumb-findings", Kind::Bool, "on", "print plumb's sections (observations, findings) after the report; under the name sysbench they are off unless this is given"),
    opt("observe-interval", Kind::Float { min: 0.0, max: 3600.0 }, "1", "sample device, system and process counters every N seconds during the run (0: start and end only)"),
];

/// plumb's history, under plumb's own name only (under the name `sysbench` a run is kept
/// silently and these are sysbench's unknown options).
pub const HISTORY: &[Opt] = &[
    opt(
        "no-history",
        Kind::Bool,
        "off",
        "do not keep this run in plumb's history (plumb history)",
    ),
    opt(
        "tag",
        Kind::Text,
        "",
        "label the run in the history, repeatable (plumb show NAME, plumb compare NAME ...)",
    ),
];

/// sysbench 0.4/0.5 names still printed by most tutorials, and what they mean now.
pub const DEPRECATED: &[(&str, &str)] = &[
    ("num-threads", "threads"),
    ("max-requests", "events"),
    ("max-time", "time"),
    ("tx-rate", "rate"),
];

/// Whether sysbench 1.0 copies a deprecated alias to its new name: only a value above the
/// alias's default (1 thread, else 0); a word is copied, for the option check to refuse.
pub fn alias_applies(alias: &str, value: Option<&str>) -> bool {
    let default = if alias == "num-threads" { 1.0 } else { 0.0 };
    match value.map(str::trim) {
        None | Some("") => false,
        Some(v) => v.parse::<f64>().map_or(true, |v| v > default),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// The common options, checked.
#[derive(Clone, Debug)]
pub struct Common {
    pub run: RunConfig,
    /// --report-checkpoints, sorted.
    pub checkpoints: Vec<Duration>,
    pub seed_given: bool,
    pub percentiles: Vec<f64>,
    pub histogram: bool,
    pub format: Format,
    pub json_file: Option<PathBuf>,
    pub strict: bool,
    /// Sampling interval of the observers; None: start and end facts only.
    pub observe_interval: Option<Duration>,
    /// Run under the name `sysbench`: only sysbench's layout on stdout and stderr.
    pub dropin: bool,
    /// Print plumb's own sections after the report (and plumb's notes on stderr).
    pub plumb_sections: bool,
    /// Whether and how the run is kept in the history.
    pub keep: Keep,
    /// sysbench's --verbosity (5 under --debug): below 3 only errors and warnings are
    /// printed, no banner and no report (the JSON result and the history still get the
    /// run); below 2 no warnings either; 4 and 5 add sysbench's info and debug lines.
    pub verbosity: u64,
    /// sysbench's --debug: its header line and each thread's figures after the report.
    pub debug: bool,
    /// The test is sysbench 0.5's oltp.lua, whose prepare words its index line its own way.
    pub legacy_script: bool,
    /// The drop-in's one command, whose failures sysbench words after the Lua function
    /// that ran it; None under plumb's name.
    pub dropin_command: Option<super::testdefs::Command>,
    /// The drop-in's --db-driver names no driver: sysbench 1.0's scripts fail where they
    /// first initialise one (each connection of the command), and so does the run.
    pub unknown_driver: Option<String>,
    /// The drop-in's legacy oltp.lua as its command line named it, which sysbench's errors
    /// quote (its own path, and the common.lua beside it).
    pub legacy_path: Option<String>,
    /// The drop-in's general --validate for a test that checks nothing with it: sysbench's
    /// header line only.
    pub validation_line: bool,
}

impl Common {
    /// The common options; `dropin` when run under the name `sysbench`, where plumb's own
    /// sections and notes are off unless --plumb-findings is given.
    pub fn from_values(v: &Values, dropin: bool) -> Result<Common, UsageError> {
        let time = v.float("time");
        let time_limit = (time > 0.0).then(|| Duration::from_secs_f64(time));
        let forced_shutdown = match v.grace("forced-shutdown") {
            None => None,
            Some((g, pct)) => {
                let secs = if pct { time * g / 100.0 } else { g };
                if time_limit.is_none() {
                    return Err(UsageError(
                        "--forced-shutdown needs a time limit: set --time to a number of seconds"
                            .into(),
                    ));
                }
                Some(Duration::from_secs_f64(secs))
            }
        };
        let seed_given = v.int("rand-seed") != 0;
        let seed = if seed_given {
            v.int("rand-seed")
        } else {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                // Kept below 2^53 so the seed survives JSON readers that use doubles.
                & ((1 << 53) - 1)
                | 1
        };
        let percentiles = v.percentiles("percentile").to_vec();
        let rand_type: RandType = v
            .word("rand-type")
            .parse()
            .map_err(|e| UsageError(format!("{e}")))?;
        let rand_shape = plumb_core::random::Shape {
            iter: v.int("rand-spec-iter") as u32,
            spec_pct: v.int("rand-spec-pct") as u32,
            spec_res: v.int("rand-spec-res") as u32,
            pareto_h: v.float("rand-pareto-h"),
        };
        rand_shape.check().map_err(UsageError)?;
        let rate = v.float("rate");
        let interval = v.float("report-interval");
        let json = v.word("json");
        // sysbench sets its verbosity to debug under --debug, whatever --verbosity says.
        let debug = v.flag("debug");
        let verbosity = if debug { 5 } else { v.int("verbosity") };
        let keep = if dropin {
            Keep::silent()
        } else {
            let tags = v.all_words("tag");
            for t in &tags {
                crate::keep::check_tag(t).map_err(UsageError)?;
            }
            Keep::plumb(
                v.flag("no-history"),
                tags.into_iter().map(str::to_string).collect(),
            )
        };
        Ok(Common {
            run: RunConfig {
                threads: v.int("threads") as usize,
                time_limit,
                event_limit: v.int("events"),
                warmup: Duration::from_secs_f64(v.float("warmup-time")),
                report_interval: (interval > 0.0).then(|| Duration::from_secs_f64(interval)),
                // Without interval lines the record still keeps one sample a second.
                sample_interval: Some(Duration::from_secs(1)),
                rate: (rate > 0.0).then_some(rate),
                // sysbench spaces --rate arrivals exponentially.
                arrivals: plumb_core::Arrivals::Poisson,
                queue_limit: Some(SYSBENCH_QUEUE),
                forced_shutdown,
                seed,
                rand_type: v.given("rand-type").then_some(rand_type),
                rand_shape,
                interval_percentiles: percentiles.clone(),
                together: None,
                steady: None,
            },
            checkpoints: v
                .seconds("report-checkpoints")
                .iter()
                .map(|&s| Duration::from_secs(s))
                .collect(),
            seed_given,
            percentiles,
            histogram: v.flag("histogram"),
            format: if v.word("format") == "json" {
                Format::Json
            } else {
                Format::Text
            },
            json_file: (!json.is_empty()).then(|| PathBuf::from(json)),
            strict: v.flag("strict"),
            observe_interval: observe_interval(v.float("observe-interval"))?,
            dropin,
            plumb_sections: if v.given("plumb-findings") {
                v.flag("plumb-findings")
            } else {
                !dropin
            },
            keep,
            verbosity,
            debug,
            legacy_script: false,
            dropin_command: None,
            unknown_driver: None,
            legacy_path: None,
            validation_line: false,
        })
    }

    /// No banner and no text report (--verbosity below 3).
    pub fn quiet(&self) -> bool {
        self.verbosity < 3
    }

    /// Whether plumb's notes and warnings may go to stderr: under the drop-in name a
    /// script reads sysbench's stderr, so they wait for --plumb-findings=on.
    pub fn plumb_notes(&self) -> bool {
        !self.dropin || self.plumb_sections
    }
}

/// --observe-interval: 0 turns sampling off; below 10 ms the samples would be mostly noise
/// (the kernel's counters move in milliseconds and clock ticks).
fn observe_interval(secs: f64) -> Result<Option<Duration>, UsageError> {
    if secs == 0.0 {
        Ok(None)
    } else if secs < 0.01 {
        Err(UsageError(format!(
            "invalid value for --observe-interval: '{secs}' (allowed: 0 for off, or 0.01 to 3600 seconds)"
        )))
    } else {
        Ok(Some(Duration::from_secs_f64(secs)))
    }
}
