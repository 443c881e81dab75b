//! What can go wrong in the OLTP library, and the settings its errors name.
//!
//! Like plumb-fileio, the library knows no front end's option names: an error about a setting
//! names the [`Setting`], and the front end spells it (`--table-size` for sysbench).

use thiserror::Error;

use crate::driver::DriverError;

/// One setting of an OLTP job, as errors name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    Tables,
    TableSize,
    RangeSize,
    RandomPoints,
    NumberOfRanges,
    Secondary,
    Threads,
    BusyTimeout,
    JournalMode,
    Synchronous,
    PageSize,
    /// Statements outside transactions (sysbench's skip_trx).
    SkipTrx,
}

impl Setting {
    /// The setting in plain words, for messages shown without a front end's spelling.
    pub fn plain(self) -> &'static str {
        match self {
            Setting::Tables => "number of tables",
            Setting::TableSize => "table size",
            Setting::RangeSize => "range size",
            Setting::RandomPoints => "random points",
            Setting::NumberOfRanges => "number of ranges",
            Setting::Secondary => "secondary id index",
            Setting::Threads => "threads",
            Setting::BusyTimeout => "busy timeout",
            Setting::JournalMode => "journal mode",
            Setting::Synchronous => "synchronous",
            Setting::PageSize => "page size",
            Setting::SkipTrx => "transactions skipped",
        }
    }
}

#[derive(Debug, Error)]
pub enum OltpError {
    /// A setting the job cannot run with.
    #[error("{}: {problem}", setting.plain())]
    Setting { setting: Setting, problem: String },
    /// A statement the database refused; `what` names the statement kind and table.
    // The message carries the driver's: no #[source], so a chain printer does not say it twice.
    #[error("{what}: {error}")]
    Statement {
        what: String,
        error: DriverError,
        /// The run's statement kind, for a statement of the workload itself.
        stmt: Option<crate::statements::Stmt>,
    },
    /// A prepare's multi-row INSERT into sbtest`table` the database refused: `last` when it
    /// was the table's final one (sysbench sends it from db_bulk_insert_done), else one sent
    /// because the statement was full (from db_bulk_insert_next).
    #[error("INSERT INTO sbtest{table}: {error}")]
    Load {
        table: u32,
        error: DriverError,
        last: bool,
    },
    /// A table the run reads cannot be read (it was not prepared): sbtest`tables` is the last
    /// table the run reads (the one checked), sbtest`first` the first one missing, and
    /// `error` what reading it said. `refused` holds the database's
    /// errors for the statements a client of the run prepares, in the order sysbench's
    /// scripts prepare them (each statement on every table in turn), for front ends that
    /// word the failure as such a client does; empty when preparing does not reach the
    /// database (`--db-ps-mode=disable`).
    #[error("{}: {}", Setting::Tables.plain(), unprepared(*.first, *.tables, .error))]
    Unprepared {
        tables: u32,
        first: u32,
        error: DriverError,
        refused: Vec<DriverError>,
    },
    /// Could not connect to the database.
    #[error("cannot connect: {0}")]
    Connect(DriverError),
    /// The progress lines could not be written.
    #[error("cannot write progress: {0}")]
    Output(#[from] std::io::Error),
    #[error("a prepare thread panicked")]
    Panic,
    /// A signal stopped a step between two statements (its number).
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
    /// A thread's end-of-run work failed (bulk_insert's last flush).
    #[error("at the end of the run: {0}")]
    AtEnd(Box<OltpError>),
    /// An INSERT found its id taken (`error`, the statement's failure): without a
    /// transaction around a DELETE and the INSERT that puts the row back, another of the
    /// `threads` threads deleted and re-inserted the same id in between. The database
    /// refused rightly; the cause is running without transactions.
    #[error("{error} ({})", unguarded(*.threads, Setting::SkipTrx.plain()))]
    Unguarded {
        error: Box<OltpError>,
        threads: usize,
    },
}

impl OltpError {
    /// The message with the setting spelled as the front end names it.
    pub fn describe(&self, spell: &dyn Fn(Setting) -> String) -> String {
        match self {
            OltpError::Setting { setting, problem } => format!("{}: {problem}", spell(*setting)),
            OltpError::Unprepared {
                tables,
                first,
                error,
                ..
            } => format!(
                "{}: {}",
                spell(Setting::Tables),
                unprepared(*first, *tables, error)
            ),
            OltpError::Unguarded { error, threads } => format!(
                "{} ({})",
                error.describe(spell),
                unguarded(*threads, &spell(Setting::SkipTrx))
            ),
            other => other.to_string(),
        }
    }

    pub(crate) fn setting(setting: Setting, problem: impl Into<String>) -> Self {
        OltpError::Setting {
            setting,
            problem: problem.into(),
        }
    }
}

/// Why an INSERT of a delete/insert pair found its id taken, and what to change.
fn unguarded(threads: usize, skip_trx: &str) -> String {
    format!(
        "with {skip_trx} each statement commits on its own, so another of the {threads} threads deleted and re-inserted the same id between this thread's DELETE and INSERT: run with transactions, or with one thread"
    )
}

/// What a table that cannot be read says about the set.
fn unprepared(first: u32, tables: u32, error: &DriverError) -> String {
    format!("sbtest{first} cannot be read ({error}): prepare {tables} tables first")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ErrorClass;

    /// A duplicate id under skipped transactions: the statement's own message first, then
    /// the cause, with the option spelled as the front end spells it.
    #[test]
    fn an_unguarded_insert_names_its_cause() {
        let refused = |code: &str| DriverError::new(ErrorClass::Fatal, Some(code.into()), "dup");
        for code in ["1062", "23505", "1555", "2067"] {
            assert!(refused(code).is_duplicate_key(), "{code}");
        }
        assert!(!refused("1213").is_duplicate_key());
        let e = OltpError::Unguarded {
            error: Box::new(OltpError::Statement {
                what: "insert on sbtest1".into(),
                error: refused("1062"),
                stmt: None,
            }),
            threads: 4,
        };
        let spelled = e.describe(&|s| match s {
            Setting::SkipTrx => "--skip-trx=on".to_string(),
            s => s.plain().to_string(),
        });
        assert_eq!(
            spelled,
            "insert on sbtest1: dup (with --skip-trx=on each statement commits on its own, so another of the 4 threads deleted and re-inserted the same id between this thread's DELETE and INSERT: run with transactions, or with one thread)"
        );
        assert!(e
            .to_string()
            .starts_with("insert on sbtest1: dup (with transactions skipped each"));
    }
}
