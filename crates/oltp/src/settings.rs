//! What an OLTP job ran with, as results keep it: typed, so a saved result is read back by
//! field. The database's own settings travel beside the workload's, so a report can show
//! what the numbers depend on (journal mode, synchronous, ...).

use serde::{Deserialize, Serialize};

use crate::spec::{OltpSpec, Test};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OltpSettings {
    pub test: Test,
    pub tables: u32,
    pub table_size: u64,
    pub range_size: u64,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_points: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_ranges: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<u64>,
    pub rand_type: plumb_core::random::RandType,
    /// The distribution's tuning, when not sysbench's default.
    #[serde(default, skip_serializing_if = "plumb_core::random::Shape::is_default")]
    pub rand_shape: plumb_core::random::Shape,
    /// The database and its settings, once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseSettings>,
    /// What the server's own counters say it did during the run (server drivers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_activity: Option<crate::driver::ServerCounters>,
    /// Nothing was sent (sysbench's --mysql-dry-run): the figures are the client's alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Threads' end-of-run failures that did not fail the run
    /// ([`crate::OltpSpec::end_failures_counted`]), as the front end printed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end_failures: Vec<String>,
    /// The job ran sysbench 0.5's oltp.lua as sysbench 1.0's legacy copy does
    /// ([`OltpSpec::legacy_script`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub legacy_script: bool,
}

impl From<&OltpSpec> for OltpSettings {
    fn from(s: &OltpSpec) -> Self {
        OltpSettings {
            test: s.test,
            tables: s.tables,
            table_size: s.table_size,
            range_size: s.range_size,
            point_selects: s.effective_point_selects(),
            simple_ranges: s.simple_ranges,
            sum_ranges: s.sum_ranges,
            order_ranges: s.order_ranges,
            distinct_ranges: s.distinct_ranges,
            index_updates: s.index_updates,
            non_index_updates: s.non_index_updates,
            delete_inserts: s.delete_inserts,
            range_selects: s.range_selects,
            skip_trx: s.skip_trx,
            auto_inc: s.auto_inc,
            secondary: s.secondary,
            create_secondary: s.create_secondary,
            random_points: (s.test == Test::SelectRandomPoints).then_some(s.random_points),
            number_of_ranges: (s.test == Test::SelectRandomRanges).then_some(s.number_of_ranges),
            delta: (s.test == Test::SelectRandomRanges).then_some(s.delta),
            rand_type: s.rand_type,
            rand_shape: s.rand_shape,
            database: None,
            server_activity: None,
            dry_run: false,
            end_failures: Vec::new(),
            legacy_script: s.legacy_script,
        }
    }
}

/// The database a job ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "driver", rename_all = "lowercase")]
pub enum DatabaseSettings {
    Sqlite(SqliteSettings),
    Mysql(ServerSettings),
    Pgsql(ServerSettings),
}

impl DatabaseSettings {
    /// The server's settings; none for the embedded database.
    pub fn server(&self) -> Option<&ServerSettings> {
        match self {
            DatabaseSettings::Sqlite(_) => None,
            DatabaseSettings::Mysql(s) | DatabaseSettings::Pgsql(s) => Some(s),
        }
    }
}

/// A database server as a connection reads it back: what the numbers depend on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerSettings {
    /// How plumb reached it (`socket PATH` or `tcp HOST:PORT`), never with credentials.
    pub endpoint: String,
    /// The server runs on this host (a socket, or a loopback address), so its I/O is this
    /// host's.
    pub local: bool,
    pub database: String,
    pub version: String,
    /// The storage engine the tables use (MySQL), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_engine: Option<String>,
    /// innodb_buffer_pool_size / shared_buffers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_pool_bytes: Option<u64>,
    /// The settings that decide whether a commit is durable, by the server's own names
    /// (innodb_flush_log_at_trx_commit, sync_binlog, synchronous_commit, fsync, ...).
    pub durability: std::collections::BTreeMap<String, String>,
    /// Where the server keeps its data (local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// The TLS version of plumb's connection as the server reports it; none when plain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// The sbtest tables with their indexes, as the server counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_set_bytes: Option<u64>,
}

/// SQLite's settings as a connection reads them back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SqliteSettings {
    pub path: String,
    pub sqlite_version: String,
    pub journal_mode: String,
    pub synchronous: String,
    pub page_size_bytes: u64,
    /// SQLite's convention: pages when positive, KiB when negative.
    pub cache_size: i64,
    pub busy_timeout_ms: u64,
    /// The statement that opens a writing transaction.
    pub begin_for_writes: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_show_only_the_test_s_own_options() {
        let mut spec = OltpSpec::new(Test::OltpPointSelect);
        spec.point_selects = 10;
        let s = OltpSettings::from(&spec);
        assert_eq!(s.point_selects, 1, "oltp_point_select runs one select");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["test"], "oltp_point_select");
        assert_eq!(json["rand_type"], "special");
        assert!(json.get("random_points").is_none());
        let back: OltpSettings = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
        let r = OltpSettings::from(&OltpSpec::new(Test::SelectRandomRanges));
        assert_eq!((r.number_of_ranges, r.delta), (Some(10), Some(5)));
    }
}
