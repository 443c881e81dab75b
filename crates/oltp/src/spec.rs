//! What an OLTP job runs: the test, sysbench 1.0's options with their defaults, and the check
//! that refuses settings a run cannot use.

use plumb_core::random::RandType;

use crate::driver::Dialect;
use crate::error::{OltpError, Setting};

/// sysbench 1.0's OLTP tests, by script name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    OltpReadWrite,
    OltpReadOnly,
    OltpWriteOnly,
    OltpPointSelect,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpDelete,
    OltpInsert,
    BulkInsert,
    SelectRandomPoints,
    SelectRandomRanges,
}

impl Test {
    pub const ALL: [Test; 11] = [
        Test::OltpReadWrite,
        Test::OltpReadOnly,
        Test::OltpWriteOnly,
        Test::OltpPointSelect,
        Test::OltpUpdateIndex,
        Test::OltpUpdateNonIndex,
        Test::OltpDelete,
        Test::OltpInsert,
        Test::BulkInsert,
        Test::SelectRandomPoints,
        Test::SelectRandomRanges,
    ];

    /// The script name sysbench knows the test by.
    pub const fn name(self) -> &'static str {
        match self {
            Test::OltpReadWrite => "oltp_read_write",
            Test::OltpReadOnly => "oltp_read_only",
            Test::OltpWriteOnly => "oltp_write_only",
            Test::OltpPointSelect => "oltp_point_select",
            Test::OltpUpdateIndex => "oltp_update_index",
            Test::OltpUpdateNonIndex => "oltp_update_non_index",
            Test::OltpDelete => "oltp_delete",
            Test::OltpInsert => "oltp_insert",
            Test::BulkInsert => "bulk_insert",
            Test::SelectRandomPoints => "select_random_points",
            Test::SelectRandomRanges => "select_random_ranges",
        }
    }

    pub fn from_name(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Tests built on oltp_common.lua: the sbtest tables with k, c and pad.
    pub fn uses_common_schema(self) -> bool {
        self != Test::BulkInsert
    }

    /// Tests that read from the first table only, each thread in its own slice of k.
    pub fn is_select_random(self) -> bool {
        matches!(self, Test::SelectRandomPoints | Test::SelectRandomRanges)
    }
}

/// An OLTP job's settings, sysbench 1.0's defaults from [`OltpSpec::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OltpSpec {
    pub test: Test,
    pub tables: u32,
    pub table_size: u64,
    /// Width of a BETWEEN range: `[x, x + range_size - 1]`.
    pub range_size: u64,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    /// Off removes (and does not prepare) the four range kinds.
    pub range_selects: bool,
    /// On: no BEGIN/COMMIT, every statement commits on its own.
    pub skip_trx: bool,
    pub auto_inc: bool,
    /// A plain key instead of the primary key on id (MySQL only).
    pub secondary: bool,
    /// The k_<i> index, built after the data.
    pub create_secondary: bool,
    /// MySQL's storage engine for CREATE TABLE.
    pub mysql_storage_engine: String,
    /// select_random_points: values in `IN (...)`.
    pub random_points: u32,
    /// select_random_ranges: ranges OR-ed together, and their width.
    pub number_of_ranges: u32,
    pub delta: u64,
    /// The distribution of ids and k (sysbench 1.0's `--rand-type`, special by default).
    pub rand_type: RandType,
    /// Its tuning (sysbench's `--rand-spec-*`, `--rand-pareto-h`).
    pub rand_shape: plumb_core::random::Shape,
    /// When nothing reaches the database before the run (`--db-ps-mode=disable`: no
    /// statement is prepared), a table that is not there fails the run at its first
    /// statement, as sysbench's does, instead of being refused before the run. The
    /// sysbench drop-in sets it; plumb's own name refuses with its own line.
    pub missing_tables_fail_in_run: bool,
    /// A thread whose end-of-run work fails (bulk_insert's last flush: sysbench's
    /// thread_done) does not fail the run: the failure is counted as an ignored error and
    /// kept ([`crate::Oltp::end_failures`]), and the report stands, as in sysbench; as in
    /// sysbench it is tried once, even when the database's refusal is one the run ignores.
    /// The sysbench drop-in sets it; plumb's own name retries (not a taken id, which no
    /// retry frees) and fails the run, saying it was the end-of-run flush.
    pub end_failures_counted: bool,
    /// The test runs as sysbench 0.5's oltp.lua, as sysbench 1.0.20 runs its
    /// `oltp_legacy/oltp.lua` copy: 0.5's schema and prepare (one connection, its index
    /// message), and a run of plain-text statements on one table per event (with LOCK
    /// TABLES for MySQL's MyISAM). Only the three transactional tests have such a script.
    pub legacy_script: bool,
}

impl OltpSpec {
    pub fn new(test: Test) -> Self {
        OltpSpec {
            test,
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            mysql_storage_engine: "innodb".to_string(),
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand_type: RandType::Special,
            rand_shape: Default::default(),
            missing_tables_fail_in_run: false,
            end_failures_counted: false,
            legacy_script: false,
        }
    }

    /// Point selects per event: oltp_point_select forces one, whatever was given.
    pub fn effective_point_selects(&self) -> u32 {
        if self.test == Test::OltpPointSelect {
            1
        } else {
            self.point_selects
        }
    }

    /// Whether events run as the legacy oltp.lua's (see [`OltpSpec::legacy_script`]).
    pub fn legacy_event(&self) -> bool {
        self.legacy_script
            && matches!(
                self.test,
                Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly
            )
    }

    /// Refuse settings no step (prepare, run, cleanup) can work with on `dialect`.
    pub fn check(&self, dialect: Dialect) -> Result<(), OltpError> {
        if self.tables == 0 {
            return Err(OltpError::setting(Setting::Tables, "must be at least 1"));
        }
        if i64::try_from(self.table_size).is_err() {
            return Err(OltpError::setting(
                Setting::TableSize,
                format!("{} does not fit a 64-bit id", self.table_size),
            ));
        }
        if self.secondary && dialect != Dialect::Mysql {
            return Err(OltpError::setting(
                Setting::Secondary,
                "a non-primary key on id is MySQL syntax; this database needs the primary key",
            ));
        }
        if self.test == Test::SelectRandomPoints && self.random_points == 0 {
            return Err(OltpError::setting(
                Setting::RandomPoints,
                "must be at least 1 (an empty IN list is not SQL)",
            ));
        }
        if self.test == Test::SelectRandomRanges && self.number_of_ranges == 0 {
            return Err(OltpError::setting(
                Setting::NumberOfRanges,
                "must be at least 1 (an empty WHERE is not SQL)",
            ));
        }
        if self
            .table_size
            .checked_add(self.range_size.max(self.delta))
            .is_none_or(|v| i64::try_from(v).is_err())
        {
            return Err(OltpError::setting(
                Setting::RangeSize,
                "the range end does not fit a 64-bit id",
            ));
        }
        Ok(())
    }

    /// [`OltpSpec::check`], plus what cleanup needs: the select_random_* scripts' cleanup
    /// asserts `--tables=1`, as sysbench 1.0.20's does. Their prepare asserts it too, but
    /// sysbench never calls it (its `prepare` command runs oltp_common's, which lays out
    /// every table), so prepare takes any count, and their run reads sbtest1 alone.
    pub fn check_cleanup(&self, dialect: Dialect) -> Result<(), OltpError> {
        self.check(dialect)?;
        if self.test.is_select_random() && self.tables != 1 {
            return Err(OltpError::setting(
                Setting::Tables,
                format!("{} drops the first table only: must be 1", self.test.name()),
            ));
        }
        Ok(())
    }

    /// [`OltpSpec::check`], plus what a run needs: ids are drawn from [1, table_size], so
    /// the tables cannot be empty (bulk_insert draws nothing).
    pub fn check_run(&self, dialect: Dialect) -> Result<(), OltpError> {
        self.check(dialect)?;
        if self.table_size == 0 && self.test != Test::BulkInsert {
            return Err(OltpError::setting(
                Setting::TableSize,
                "must be at least 1 to run (ids are drawn from 1 to the table size)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_sysbench_1_0_s() {
        let s = OltpSpec::new(Test::OltpReadWrite);
        assert_eq!((s.tables, s.table_size, s.range_size), (1, 10_000, 100));
        assert_eq!(
            (
                s.point_selects,
                s.simple_ranges,
                s.sum_ranges,
                s.order_ranges,
                s.distinct_ranges
            ),
            (10, 1, 1, 1, 1)
        );
        assert_eq!(
            (s.index_updates, s.non_index_updates, s.delete_inserts),
            (1, 1, 1)
        );
        assert!(s.range_selects && !s.skip_trx && s.auto_inc && !s.secondary && s.create_secondary);
        assert_eq!((s.random_points, s.number_of_ranges, s.delta), (10, 10, 5));
        assert_eq!(s.rand_type, RandType::Special);
        assert_eq!(s.mysql_storage_engine, "innodb");
    }

    #[test]
    fn names_round_trip() {
        for t in Test::ALL {
            assert_eq!(Test::from_name(t.name()), Some(t));
        }
        assert_eq!(Test::from_name("oltp"), None);
    }

    #[test]
    fn check_names_the_bad_setting() {
        let bad = |f: &dyn Fn(&mut OltpSpec), test: Test, dialect: Dialect| {
            let mut s = OltpSpec::new(test);
            f(&mut s);
            match s.check_run(dialect) {
                Err(OltpError::Setting { setting, .. }) => setting,
                other => panic!("expected a setting error, got {other:?}"),
            }
        };
        let sq = Dialect::Sqlite;
        assert_eq!(
            bad(&|s| s.tables = 0, Test::OltpReadWrite, sq),
            Setting::Tables
        );
        assert_eq!(
            bad(&|s| s.secondary = true, Test::OltpReadWrite, sq),
            Setting::Secondary
        );
        assert_eq!(
            bad(&|s| s.random_points = 0, Test::SelectRandomPoints, sq),
            Setting::RandomPoints
        );
        assert_eq!(
            bad(&|s| s.number_of_ranges = 0, Test::SelectRandomRanges, sq),
            Setting::NumberOfRanges
        );
        assert_eq!(
            bad(&|s| s.table_size = 0, Test::OltpReadOnly, sq),
            Setting::TableSize
        );
        assert_eq!(
            bad(&|s| s.range_size = u64::MAX, Test::OltpReadOnly, sq),
            Setting::RangeSize
        );
        let mut ok = OltpSpec::new(Test::OltpReadWrite);
        ok.secondary = true;
        assert!(ok.check_run(Dialect::Mysql).is_ok());
        let mut empty = OltpSpec::new(Test::OltpReadWrite);
        empty.table_size = 0;
        assert!(empty.check(sq).is_ok(), "an empty prepare is allowed");
        let mut bulk = OltpSpec::new(Test::BulkInsert);
        bulk.table_size = 0;
        assert!(bulk.check_run(sq).is_ok());
        // select_random_* run on sbtest1 whatever --tables says, and drop one table only.
        let mut random = OltpSpec::new(Test::SelectRandomPoints);
        random.tables = 2;
        assert!(random.check_run(sq).is_ok());
        assert!(random.check(sq).is_ok(), "prepare lays out every table");
        assert!(matches!(
            random.check_cleanup(sq),
            Err(OltpError::Setting {
                setting: Setting::Tables,
                ..
            })
        ));
        random.tables = 1;
        assert!(random.check_cleanup(sq).is_ok());
    }
}
