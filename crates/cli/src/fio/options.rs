//! The option table: every option fio 3.33 knows (main table and the options of the engines
//! Debian's build has), with fio's value type, help, default, range and valid values, and
//! whether plumb supports it. Unknown names and known-but-unsupported ones are told apart here.

mod profile;
mod table;

use super::values::{self, KbBase, TimeUnit, ValueError};

/// fio's option types (parse.h), which decide how a value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A word from `values` (or free text handled by a callback when `values` is empty).
    Str,
    StrUll,
    StrMulti,
    /// A size with a callback (randseed, filesize...).
    StrVal,
    /// A time with a unit suffix.
    StrValTime,
    /// Free text (filename, ioengine...).
    StrStore,
    /// `a-b` ranges, per direction.
    Range,
    /// An integer read like a size (so `iodepth=1k` is 1024).
    Int,
    Ull,
    /// `0` or `1` only.
    Bool,
    FloatList,
    /// May be given bare (= 1).
    StrSet,
    /// A size that may also be a zone count (`Nz`) or a percentage.
    StrValZone,
    Deprecated,
    SoftDeprecated,
}

/// One option as fio defines it, plus plumb's `supported` flag.
#[derive(Debug)]
pub struct Opt {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub kind: Kind,
    pub help: &'static str,
    /// The default as fio's `--cmdhelp` prints it; None = "no default".
    pub default: Option<&'static str>,
    /// The `range:` text of `--cmdhelp`, e.g. `min=1, max=-1`.
    pub range: Option<&'static str>,
    /// Valid words and their help, in fio's order.
    pub values: &'static [(&'static str, Option<&'static str>)],
    pub parent: Option<&'static str>,
    /// fio applies a section's options by descending priority (kb_base before sizes).
    pub prio: i8,
    /// A time whose bare number is seconds (else microseconds).
    pub seconds: bool,
    /// A time value (suffixes d h m s ms us).
    pub time: bool,
    /// For an engine option, the engines that define it; empty for main options.
    pub engines: &'static [&'static str],
    pub supported: bool,
}

/// Options that hold one value per direction (read, write, trim), fio's off2/off3 options.
const RWT: &[&str] = &[
    "bs",
    "ba",
    "bsrange",
    "bssplit",
    "rate",
    "rate_min",
    "rate_iops",
    "rate_iops_min",
    "percentage_random",
    "max_latency",
];

/// Size options that accept `N%` of the file or device.
const PERCENT: &[&str] = &["size", "offset", "offset_increment", "io_size"];

/// fio's FIO_IO_U_LIST_MAX_LEN, the longest float list.
const FLOAT_LIST_MAX: usize = 20;

impl Opt {
    /// Whether the option can be given without a value (`time_based`, or `write_bw_log` whose
    /// empty value means "use the job name").
    pub fn may_be_bare(&self) -> bool {
        matches!(self.kind, Kind::StrSet) || (self.kind == Kind::Str && self.values.is_empty())
    }

    /// Whether the option takes one value per direction.
    pub fn is_rwt(&self) -> bool {
        RWT.contains(&self.name)
    }

    /// The unit of a bare time number.
    pub fn time_unit(&self) -> TimeUnit {
        if self.seconds {
            TimeUnit::Seconds
        } else {
            TimeUnit::Micros
        }
    }

    /// The valid words of an enum option.
    pub fn words(&self) -> Vec<&'static str> {
        self.values.iter().map(|(w, _)| *w).collect()
    }

    fn bounds(&self) -> (Option<i128>, Option<i128>) {
        let Some(r) = self.range else {
            return (None, None);
        };
        let mut min = None;
        let mut max = None;
        for part in r.split(", ") {
            if let Some(v) = part.strip_prefix("min=") {
                min = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("max=") {
                // fio prints an unsigned "no limit" as -1.
                max = v.parse().ok().filter(|m: &i128| *m >= 0);
            }
        }
        (min, max)
    }

    fn float_bounds(&self) -> (f64, f64) {
        let mut lo = f64::MIN;
        let mut hi = f64::MAX;
        for part in self.range.unwrap_or_default().split(", ") {
            if let Some(v) = part.strip_prefix("min=") {
                lo = v.parse().unwrap_or(lo);
            } else if let Some(v) = part.strip_prefix("max=") {
                hi = v.parse().unwrap_or(hi);
            }
        }
        (lo, hi)
    }

    /// Checks a value as fio does when it parses the option (not the cross-option checks that
    /// come later). `None` is a bare option.
    pub fn check(&self, value: Option<&str>, kb: KbBase) -> Result<(), ValueError> {
        let Some(v) = value else {
            return if self.may_be_bare() {
                Ok(())
            } else {
                Err(ValueError::Empty)
            };
        };
        match self.kind {
            Kind::Str if self.name == "steadystate" => super::steady::criterion(v, kb).map(drop),
            Kind::Str | Kind::StrUll | Kind::StrMulti if self.name == "bssplit" => {
                values::parse_bssplit(v, kb).map(drop)
            }
            Kind::Str | Kind::StrUll | Kind::StrMulti => {
                // fio splits a multi-word option at its commas before it matches each word.
                let v = if self.kind == Kind::StrMulti {
                    values::first_field(v)
                } else {
                    v
                };
                if self.values.is_empty() {
                    Ok(())
                } else {
                    values::parse_enum(v, &self.words()).map(drop)
                }
            }
            // fio keeps any text for these; a wrong engine name fails when it is loaded.
            Kind::StrStore => {
                if v.is_empty() {
                    Err(ValueError::Empty)
                } else {
                    Ok(())
                }
            }
            Kind::Range => values::parse_rwt_ranges(v, kb).map(drop),
            Kind::FloatList => {
                let (lo, hi) = self.float_bounds();
                values::parse_float_list(v, FLOAT_LIST_MAX, lo, hi).map(drop)
            }
            Kind::Bool => values::parse_bool(values::first_field(v)).map(drop),
            Kind::StrSet => values::parse_set(Some(values::first_field(v))).map(drop),
            Kind::StrValTime if self.name == "runtime" => {
                values::parse_runtime_ns(values::first_field(v)).map(drop)
            }
            Kind::StrValTime => {
                values::parse_signed_time_ns(values::first_field(v), self.time_unit()).map(drop)
            }
            Kind::Int | Kind::Ull | Kind::StrVal | Kind::StrValZone => self.check_number(v, kb),
            Kind::Deprecated => Err(ValueError::OutOfRange(format!(
                "option {} is deprecated",
                self.name
            ))),
            Kind::SoftDeprecated => Ok(()),
        }
    }

    /// The line fio prints before `failed parsing` when a number is outside the option's
    /// range (parse.c: `NAME: max value out of range: N (MAX max)`, or `min`), if that is
    /// why `value` fails.
    pub fn range_note(&self, value: &str, kb: KbBase) -> Option<String> {
        // fio checks the range of every number type alike (parse.c: INT, ULL, STR_VAL).
        if !matches!(
            self.kind,
            Kind::Int | Kind::Ull | Kind::StrVal | Kind::StrValZone
        ) || self.time
        {
            return None;
        }
        // fio looks at a trailing `z` (a count of zones) before anything else.
        if let (Some(count), false) = (value.strip_suffix('z'), self.is_rwt()) {
            let digits = !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit());
            return match self.kind {
                Kind::StrValZone if digits => None,
                Kind::StrValZone => Some(format!("{}: unexpected zone value '{value}'", self.name)),
                _ => Some(format!("{}: 'z' suffix isn't applicable", self.name)),
            };
        }
        // fio reads each field of an r,w,t list on its own and complains about each.
        let fields: Vec<&str> = if self.is_rwt() {
            values::rwt_fields(value, true)
                .into_iter()
                .map(|(_, f, _)| f)
                .collect()
        } else {
            vec![values::first_field(value)]
        };
        let (min, max) = self.bounds();
        let notes: Vec<String> = fields
            .into_iter()
            .filter_map(|f| {
                let values::Size::Bytes(n) = values::parse_size(f, kb, false).ok()? else {
                    return None;
                };
                let n = i128::from(n);
                match (min, max) {
                    (_, Some(m)) if n > m => Some(format!(
                        "{}: max value out of range: {n} ({m} max)",
                        self.name
                    )),
                    // fio checks no minimum of 0.
                    (Some(m), _) if m != 0 && n < m => Some(format!(
                        "{}: min value out of range: {n} ({m} min)",
                        self.name
                    )),
                    _ => None,
                }
            })
            .collect();
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    fn check_number(&self, v: &str, kb: KbBase) -> Result<(), ValueError> {
        if !self.is_rwt() {
            return self.number_field(values::first_field(v), kb).map(drop);
        }
        // fio (parse.c handle_option) fails an r,w,t option only when every field fails:
        // `bs=0,4k` is taken, its read size left as it was.
        let mut first_error = None;
        for (_, f, _) in values::rwt_fields(v, true) {
            match self.number_field(f, kb) {
                Ok(_) => return Ok(()),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or(ValueError::Empty))
    }

    /// One number as fio's parser checks it: its grammar, then the option's range and
    /// valid values. `None` for a percentage (of a size fio learns later).
    fn number_field(&self, f: &str, kb: KbBase) -> Result<Option<u64>, ValueError> {
        if let Some(count) = f.strip_suffix('z') {
            // fio's strtoul up to the `z`: zoneskip counts strided zones (the job's
            // translation reads it); other zone counts need the zoned-device support
            // plumb does not have.
            if self.name == "zoneskip"
                && !count.is_empty()
                && count.bytes().all(|b| b.is_ascii_digit())
            {
                return Ok(None);
            }
            return Err(ValueError::OutOfRange(format!("zone value {f}")));
        }
        let n = if self.time {
            // A negative time is taken and kept unsigned, as fio stores it.
            let us = values::parse_signed_time_ns(f, self.time_unit())? / 1000;
            match self.kind {
                Kind::Int => us as i64 as u32 as u64,
                _ => us as i64 as u64,
            }
        } else {
            let percent = PERCENT.contains(&self.name) || self.name == "filesize";
            match values::parse_size(f, kb, percent)? {
                values::Size::Bytes(b) => b,
                // fio 3.33 takes any filesize=N% (it reads it as 2^64 - 1 - N bytes); the
                // job setup refuses it.
                values::Size::Percent(_) if self.name == "filesize" => return Ok(None),
                values::Size::Percent(p) => {
                    if p == 0 || (p > 100 && self.name != "io_size") {
                        return Err(ValueError::PercentRange(f.to_string()));
                    }
                    return Ok(None);
                }
            }
        };
        let (min, max) = self.bounds();
        let wide = i128::from(n);
        if min.is_some_and(|m| wide < m) || max.is_some_and(|m| wide > m) {
            return Err(ValueError::OutOfRange(f.to_string()));
        }
        if !self.values.is_empty() && !self.values.iter().any(|(w, _)| w.parse() == Ok(wide)) {
            return Err(ValueError::NotAValidValue(f.to_string()));
        }
        Ok(Some(n))
    }

    /// An r,w,t number option's value per direction as fio applies it: each field that
    /// passes [`Self::check`]'s reading sets its direction, the last one also the later
    /// directions; None where the value leaves the direction as it was (left out, or a
    /// field that fails, as the read size of `bs=0,4k`).
    pub fn rwt_values(&self, v: &str, kb: KbBase) -> [Option<u64>; 3] {
        let mut out = [None; 3];
        for (idx, f, last) in values::rwt_fields(v, true) {
            let Ok(Some(n)) = self.number_field(f, kb) else {
                continue;
            };
            let upto = if last { 3 } else { idx + 1 };
            for slot in out.iter_mut().take(upto).skip(idx) {
                *slot = Some(n);
            }
        }
        out
    }
}

/// All main options, in fio's table order.
pub fn main_options() -> &'static [Opt] {
    table::MAIN
}

/// The options fio's built-in profiles add ([`profile`]): taken on the command line and in
/// job files, never listed by the help.
pub fn profile_options() -> &'static [Opt] {
    profile::PROFILE
}

/// All engine options (one entry per name; `engines` lists who defines it).
pub fn engine_options() -> &'static [Opt] {
    table::ENGINE
}

/// The options whose values change the files a job lays out: points of a sweep that agree
/// on them use the same files. `numjobs` names them (`jobname.jobnum.filenum`: another
/// count, another set of files), and `offset` and `offset_increment` set how long they are
/// laid out (a file shorter than offset + size is laid out anew): without them a point
/// would lay out files of its own inside its run, beside files earlier points used.
pub const DATA_SET: &[&str] = &[
    "size",
    "filesize",
    "filename",
    "directory",
    "nrfiles",
    "numjobs",
    "filename_format",
    "opendir",
    "file_append",
    "fill_device",
    "offset",
    "offset_increment",
];

/// A main option by name or alias.
pub fn find(name: &str) -> Option<&'static Opt> {
    table::MAIN
        .iter()
        .chain(profile::PROFILE)
        .find(|o| o.name == name || o.alias == Some(name))
}

/// An option of `engine` by name or alias.
pub fn find_engine_option(name: &str, engine: &str) -> Option<&'static Opt> {
    table::ENGINE
        .iter()
        .find(|o| (o.name == name || o.alias == Some(name)) && o.engines.contains(&engine))
}

/// Any engine's option by name, for telling "needs --ioengine first" from "unknown".
pub fn find_any_engine_option(name: &str) -> Option<&'static Opt> {
    table::ENGINE
        .iter()
        .find(|o| o.name == name || o.alias == Some(name))
}

/// fio's edit distance between two option names (Levenshtein, unit costs).
pub fn string_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = (prev[j + 1] + 1).min(cur[j] + 1).min(sub);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// fio's rule for printing a guess: the distance is at most half the typed name's length.
pub fn distance_ok(typed: &str, distance: usize) -> bool {
    distance <= typed.len().div_ceil(2)
}

/// The closest of `names` to `typed` (the first of equals), if close enough to suggest.
pub fn closest<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(&str, usize)> = None;
    for n in names {
        let d = string_distance(typed, n);
        if best.is_none_or(|(_, bd)| d < bd) {
            best = Some((n, d));
        }
    }
    best.filter(|(_, d)| distance_ok(typed, *d)).map(|(n, _)| n)
}

/// The suggestion for an unknown job-file option: only main option names count, as in fio.
pub fn suggest_for_jobfile(line: &str) -> Option<&'static str> {
    let typed = line.split('=').next().unwrap_or(line);
    if typed.is_empty() {
        return None;
    }
    closest(typed, table::MAIN.iter().map(|o| o.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases() {
        assert_eq!(find("readwrite").unwrap().name, "rw");
        assert_eq!(find("blocksize").unwrap().name, "bs");
        assert_eq!(find("iodepth_batch_submit").unwrap().name, "iodepth_batch");
        assert_eq!(find("timeout").unwrap().name, "runtime");
        assert_eq!(find("wait_for_previous").unwrap().name, "stonewall");
        assert_eq!(find("fill_fs").unwrap().name, "fill_device");
        assert!(find("nosuch").is_none());
        assert!(find("hipri").is_none());
        assert_eq!(
            find_engine_option("hipri", "io_uring").unwrap().name,
            "hipri"
        );
        assert!(find_engine_option("hipri", "libaio").is_none());
        assert!(find_engine_option("userspace_reap", "libaio").is_some());
    }

    #[test]
    fn known_unsupported_is_not_unknown() {
        let o = find("cgroup").unwrap();
        assert!(!o.supported);
        assert!(find("size").unwrap().supported);
        assert!(find_any_engine_option("sqthread_poll").unwrap().supported);
        assert!(find_any_engine_option("userspace_reap").unwrap().supported);
        assert!(!find_any_engine_option("force_async").unwrap().supported);
    }

    #[test]
    fn every_supported_name_is_in_the_table() {
        let n = table::MAIN
            .iter()
            .chain(table::ENGINE)
            .filter(|o| o.supported)
            .count();
        // plumb's first set: 76 main options and 5 engine options; then thinktime_spin,
        // thinktime_blocks and thinktime_blocks_type; then unified_rw_reporting; then
        // fadvise_hint; then the measurement switches (gtod_reduce, disable_lat/clat/slat,
        // disable_bw_measurement, stats) and the number formats (significant_figures,
        // unit_base); then cpus_allowed_policy, bwavgtime and iopsavgtime; then
        // exitall_on_error; then mem (malloc, mmap, mmaphuge), io_submit_mode and
        // continue_on_error (at their defaults then); then percentage_random;
        // then steadystate, steadystate_duration and steadystate_ramp_time; then wait_for,
        // rate_min, rate_iops_min and rate_cycle; then max_latency; then libaio's
        // userspace_reap; then opendir; then thinktime_iotime; then rate_ignore_thinktime;
        // then hugepage-size (mem=mmaphuge); then log_offset and per_job_logs; then
        // random_generator; then write_iolog; then read_iolog, replay_no_stall,
        // replay_redirect, replay_scale, replay_align and replay_time_scale; then
        // verify_backlog and verify_backlog_batch; then overwrite; then pre_read; then
        // file_service_type; then verify_interval, verify_pattern, verify_dump and
        // experimental_verify; then flow_id, flow and flow_sleep; then serialize_overlap; then number_ios; then
        // fallocate, create_fsync, allow_file_create and disk_util; then buffer_pattern; then
        // clocksource; then exec_prerun and exec_postrun; then lockmem; then 35 options at
        // their defaults only (translate.rs AT_DEFAULT), exit_what, unique_filename and
        // log_entries; then ignore_error (continue_on_error with all its values); then
        // log_unix_epoch, log_alternate_epoch and log_alternate_epoch_clock_id; then
        // ioscheduler; then write_hist_log; then zonesize, zonerange and zoneskip
        // (zonemode=strided).
        assert_eq!(n, 195);
    }

    #[test]
    fn defaults_and_kinds() {
        let bs = find("bs").unwrap();
        assert_eq!(bs.default, Some("4096"));
        assert!(bs.is_rwt());
        assert_eq!(find("rw").unwrap().default, Some("read"));
        assert_eq!(find("kb_base").unwrap().prio, 1);
        assert!(find("runtime").unwrap().seconds);
        assert!(find("thinktime").unwrap().time);
        assert!(!find("thinktime").unwrap().seconds);
        assert_eq!(find("time_based").unwrap().kind, Kind::StrSet);
    }

    #[test]
    fn rwt_values_keep_a_failed_field_s_direction() {
        let k = KbBase::K1024;
        let bs = find("bs").unwrap();
        assert_eq!(bs.rwt_values("0,4k", k), [None, Some(4096), Some(4096)]);
        assert_eq!(bs.rwt_values("8k,0", k), [Some(8192), None, None]);
        assert_eq!(bs.rwt_values("8k,", k), [Some(8192), None, None]);
        assert_eq!(bs.rwt_values("8k", k), [Some(8192); 3]);
        assert_eq!(bs.rwt_values("0:8k", k), [None, Some(8192), Some(8192)]);
        assert_eq!(
            bs.rwt_values("1k,2k,3k,4k", k),
            [Some(1024), Some(2048), Some(3072)]
        );
        assert_eq!(
            bs.range_note("0,0", k).as_deref(),
            Some("bs: min value out of range: 0 (1 min)\nbs: min value out of range: 0 (1 min)")
        );
        assert_eq!(
            bs.range_note("0,4k", k).as_deref(),
            Some("bs: min value out of range: 0 (1 min)")
        );
    }

    #[test]
    fn range_notes_in_fio_s_words() {
        let k = KbBase::K1024;
        let pr = find("percentage_random").unwrap();
        assert_eq!(
            pr.range_note("101", k).as_deref(),
            Some("percentage_random: max value out of range: 101 (100 max)")
        );
        assert_eq!(
            pr.range_note("1k", k).as_deref(),
            Some("percentage_random: max value out of range: 1024 (100 max)")
        );
        assert_eq!(
            pr.range_note("50,150", k).as_deref(),
            Some("percentage_random: max value out of range: 150 (100 max)")
        );
        assert_eq!(pr.range_note("50", k), None);
        assert_eq!(pr.range_note("abc", k), None);
        assert_eq!(
            find("rwmixread").unwrap().range_note("101", k).as_deref(),
            Some("rwmixread: max value out of range: 101 (100 max)")
        );
    }

    #[test]
    fn value_checks() {
        let k = KbBase::K1024;
        assert!(find("direct").unwrap().check(Some("1"), k).is_ok());
        assert!(find("direct").unwrap().check(Some("true"), k).is_err());
        assert!(find("direct").unwrap().check(None, k).is_err());
        assert!(find("time_based").unwrap().check(None, k).is_ok());
        assert!(find("write_bw_log").unwrap().check(None, k).is_ok());
        assert!(find("rw").unwrap().check(Some("randread:8"), k).is_ok());
        assert!(find("rw").unwrap().check(Some("readx"), k).is_err());
        assert!(find("rw").unwrap().check(None, k).is_err());
        assert!(find("size").unwrap().check(Some("20%"), k).is_ok());
        assert!(find("bs").unwrap().check(Some("20%"), k).is_err());
        assert!(find("bs").unwrap().check(Some("4k,8k"), k).is_ok());
        assert!(find("bs").unwrap().check(Some("0"), k).is_err());
        // One good field is enough for fio; all bad is not.
        assert!(find("bs").unwrap().check(Some("0,4k"), k).is_ok());
        assert!(find("bs").unwrap().check(Some("abc,4k"), k).is_ok());
        assert!(find("bs").unwrap().check(Some("0,0"), k).is_err());
        assert!(find("filesize").unwrap().check(Some("10%"), k).is_ok());
        assert!(find("filesize").unwrap().check(Some("0%"), k).is_ok());
        assert!(find("iodepth").unwrap().check(Some("1k"), k).is_ok());
        assert!(find("runtime").unwrap().check(Some("10m"), k).is_ok());
        // fio takes a negative time for any time option (stored unsigned).
        assert!(find("runtime").unwrap().check(Some("-1"), k).is_ok());
        assert!(find("ramp_time").unwrap().check(Some("-1"), k).is_ok());
        assert!(find("ramp_time").unwrap().check(Some("-x"), k).is_err());
        assert!(find("kb_base").unwrap().check(Some("1000"), k).is_ok());
        assert!(find("kb_base").unwrap().check(Some("1001"), k).is_err());
        assert!(find("bssplit")
            .unwrap()
            .check(Some("4k/60:8k/50"), k)
            .is_err());
        assert!(find("percentile_list")
            .unwrap()
            .check(Some("99.5:99.9"), k)
            .is_ok());
        assert!(find("percentile_list")
            .unwrap()
            .check(Some("101"), k)
            .is_err());
        assert!(find("ioengine").unwrap().check(Some("nosuch"), k).is_ok());
        assert!(find("rwmixcycle").unwrap().check(Some("1"), k).is_err());
        assert!(find("size").unwrap().check(Some("2z"), k).is_err());
    }

    #[test]
    fn distance_and_suggestions() {
        assert_eq!(string_distance("kitten", "sitting"), 3);
        assert_eq!(string_distance("", "abc"), 3);
        assert_eq!(suggest_for_jobfile("foo=1"), Some("flow"));
        assert_eq!(suggest_for_jobfile("drect=1"), Some("direct"));
        assert_eq!(suggest_for_jobfile("qqqqqqqqqqqq=1"), None);
    }
}
