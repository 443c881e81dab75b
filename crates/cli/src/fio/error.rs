//! The errors of fio parsing, with fio 3.33's exact texts. `Display` gives the stderr lines
//! (several lines where fio prints several); `stdout()` what fio prints on stdout with it
//! (the valid values of an enum, the usage text). All of them mean exit status 1.

use super::help;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FioError {
    /// An unknown `--option` (getopt prints the first line, fio the second).
    #[error(
        "{prog}: unrecognized option '{arg}'\n{prog}: unrecognized option '{arg}'{}",
        did_you_mean(suggestion)
    )]
    Unrecognized {
        prog: String,
        arg: String,
        suggestion: Option<String>,
    },
    /// A prefix of several options (`--r=1`).
    #[error("{prog}: option '{arg}' is ambiguous; possibilities:{}\n{prog}: unrecognized option '{arg}'{}",
        candidates.iter().map(|c| format!(" '--{c}'")).collect::<String>(), did_you_mean(suggestion))]
    Ambiguous {
        prog: String,
        arg: String,
        candidates: Vec<String>,
        suggestion: Option<String>,
    },
    /// `--direct` as the last argument: nothing left to take as its value.
    #[error(
        "{prog}: option '{arg}' requires an argument\n{prog}: unrecognized option '{arg}'{}",
        did_you_mean(suggestion)
    )]
    MissingArgument {
        prog: String,
        arg: String,
        suggestion: Option<String>,
    },
    /// A job option given an empty value on the command line (`--bs=`): fio refuses it
    /// before parsing, and stops reading the command line.
    #[error("fio: option {0} requires an argument")]
    EmptyArgument(String),
    /// An unknown option line in a job file.
    #[error(
        "Bad option <{line}>{}\nfio: job {job} dropped",
        did_you_mean(suggestion)
    )]
    BadOption {
        line: String,
        suggestion: Option<String>,
        job: String,
    },
    /// A value fio cannot parse. `text` is `name=value` as typed; `job` is set for job files.
    #[error("{}fio: failed parsing {text}{}", before(note), dropped(job))]
    FailedParsing {
        text: String,
        /// A line fio prints first (`Option direct requires an argument`).
        note: Option<String>,
        /// What fio prints on stdout with it: the valid values, or a dropped job's error.
        values: Option<String>,
        job: Option<String>,
    },
    #[error("fio: unable to open '{0}' job file")]
    UnableToOpen(String),
    /// A missing include file. fio 3.33 still adds the job; plumb stops.
    #[error("fio: unable to open '{0}' job file\nError 1 while parsing include file {0}")]
    IncludeOpen(String),
    #[error("No new sections in included files")]
    SectionInInclude,
    #[error("fio: option <{0}> outside of [] job section")]
    OutsideSection(String),
    #[error("No job(s) defined\n")]
    NoJobs,
    #[error("fio: can't use global as only section")]
    GlobalSection,
    #[error("fio: invalid output format {0}\nfio: failed parsing output-format")]
    OutputFormat(String),
    #[error("fio: bad terse version format")]
    TerseVersion,
    #[error("fio: failed parsing eta time {0}")]
    EtaNewlineParse(String),
    #[error("fio: eta new line time too short")]
    EtaNewlineShort,
    #[error("fio: failed parsing eta interval {0}")]
    EtaIntervalParse(String),
    #[error("fio: eta interval time too short (250msec min)")]
    EtaIntervalShort,
    #[error("fio: failed parsing time {0}")]
    StatusIntervalParse(String),
    #[error("fio: status interval too small")]
    StatusIntervalShort,
    #[error("plumb: fio option '{name}' (value {value}) is not supported yet")]
    NotSupported { name: String, value: String },
    #[error("plumb: fio flag '--{0}' is not supported yet")]
    FlagNotSupported(String),
    /// fio reads `size= 64k` as 64 bytes (the blank hides the unit); plumb refuses it.
    #[error("plumb: fio option line '{0}': remove the blank after '=' (fio would read the value without its unit)")]
    BlankValue(String),
    #[error("plumb: cannot read fio job file '{path}': {reason}")]
    Read { path: String, reason: String },
}

fn did_you_mean(s: &Option<String>) -> String {
    s.as_ref()
        .map(|s| format!("\nDid you mean {s}?"))
        .unwrap_or_default()
}

fn before(s: &Option<String>) -> String {
    s.as_ref().map(|s| format!("{s}\n")).unwrap_or_default()
}

fn dropped(job: &Option<String>) -> String {
    job.as_ref()
        .map(|j| format!("\nfio: job {j} dropped"))
        .unwrap_or_default()
}

impl FioError {
    /// What fio prints on stdout alongside the error, if anything.
    pub fn stdout(&self) -> Option<String> {
        match self {
            FioError::FailedParsing { values, .. } => values.clone(),
            FioError::NoJobs => Some(help::usage("fio")),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        let e = FioError::Unrecognized {
            prog: "fio".into(),
            arg: "--foo=1".into(),
            suggestion: Some("loops".into()),
        };
        assert_eq!(
            e.to_string(),
            "fio: unrecognized option '--foo=1'\nfio: unrecognized option '--foo=1'\nDid you mean loops?"
        );
        let e = FioError::BadOption {
            line: "foo=1".into(),
            suggestion: Some("flow".into()),
            job: "x".into(),
        };
        assert_eq!(
            e.to_string(),
            "Bad option <foo=1>\nDid you mean flow?\nfio: job x dropped"
        );
        let e = FioError::FailedParsing {
            text: "direct".into(),
            note: Some("Option direct requires an argument".into()),
            values: None,
            job: Some("a".into()),
        };
        assert_eq!(
            e.to_string(),
            "Option direct requires an argument\nfio: failed parsing direct\nfio: job a dropped"
        );
        let e = FioError::FailedParsing {
            text: "rw=readx".into(),
            note: None,
            values: Some("v".into()),
            job: None,
        };
        assert_eq!(e.to_string(), "fio: failed parsing rw=readx");
        assert_eq!(e.stdout().as_deref(), Some("v"));
        assert_eq!(
            FioError::OutsideSection("size=1M".into()).to_string(),
            "fio: option <size=1M> outside of [] job section"
        );
        assert!(FioError::NoJobs.stdout().unwrap().contains("--parse-only"));
        let e = FioError::Ambiguous {
            prog: "fio".into(),
            arg: "--siz=4k".into(),
            candidates: vec!["size".into(), "size".into()],
            suggestion: Some("size".into()),
        };
        assert!(e.to_string().starts_with(
            "fio: option '--siz=4k' is ambiguous; possibilities: '--size' '--size'\n"
        ));
    }
}
