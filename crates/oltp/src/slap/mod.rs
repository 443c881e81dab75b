//! mysqlslap's workload: the statements it generates or is given, the stages it runs them
//! in, and its clients, on any [`Driver`](crate::Driver).
//!
//! A run goes, for each storage engine (or once), for each concurrency value, for each
//! iteration: drop and create the schema, create and populate on one connection (the main
//! one), read the primary keys back when there are any, run the pre-statements, then
//! release N clients that each connect and walk the query list until their per-client
//! limit, timed by the wall clock from their release to the last client's exit, then the
//! post-statements. The schema is dropped after each engine unless `no_drop` (or nothing was
//! created).
//!
//! - [`crandom`]: the C library's `random()`, whose unseeded sequence fills the generated SQL.
//! - [`autosql`]: the generated table, inserts and queries; [`script`]: statements given as
//!   text (delimiter splitting, files).
//! - [`dialect`]: the schema statements and the generated SQL per database.
//! - [`session`]: the main connection's stages; [`client`]: the clients as a workload.
//! - [`console`]: what mysqlslap prints of its statements (`--only-print`, `-vvv`).
//! - [`keys`]: the primary keys keyed queries pick from.

pub mod autosql;
pub mod client;
pub mod console;
pub mod crandom;
pub mod dialect;
pub mod keys;
pub mod script;
pub mod session;
pub mod settings;

use serde::{Deserialize, Serialize};

pub use client::SlapClients;
pub use console::Console;
pub use session::{Main, SlapError};
pub use settings::SlapSettings;

/// `--auto-generate-sql-load-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadType {
    Mixed,
    Read,
    Write,
    Key,
    Update,
}

impl LoadType {
    pub const ALL: [LoadType; 5] = [
        LoadType::Mixed,
        LoadType::Read,
        LoadType::Write,
        LoadType::Key,
        LoadType::Update,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LoadType::Mixed => "mixed",
            LoadType::Read => "read",
            LoadType::Write => "write",
            LoadType::Key => "key",
            LoadType::Update => "update",
        }
    }

    pub fn from_name(s: &str) -> Option<LoadType> {
        LoadType::ALL.into_iter().find(|l| l.name() == s)
    }
}

/// How the table and its statements are generated (`--auto-generate-sql`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoSql {
    pub load: LoadType,
    pub int_cols: u32,
    pub char_cols: u32,
    /// `id serial` first, NULL inserted: keyed queries use its values.
    pub autoincrement: bool,
    /// `id varchar(36) primary key`, uuid() inserted.
    pub guid_primary: bool,
    /// `id0 .. idN-1 varchar(36) unique key` columns, uuid() inserted.
    pub secondary_indexes: u32,
    /// Queries in the list beyond the first.
    pub unique_query_number: u64,
    /// Distinct INSERTs the population cycles through.
    pub unique_write_number: u64,
    /// Statements of the population, the CREATE TABLE included (rows = this - 1).
    pub write_number: u64,
}

impl Default for AutoSql {
    fn default() -> Self {
        AutoSql {
            load: LoadType::Mixed,
            int_cols: 1,
            char_cols: 1,
            autoincrement: false,
            guid_primary: false,
            secondary_indexes: 0,
            unique_query_number: 10,
            unique_write_number: 10,
            write_number: 100,
        }
    }
}

impl AutoSql {
    /// Whether the table has a primary key that keyed queries look rows up by.
    pub fn keyed(&self) -> bool {
        self.autoincrement || self.guid_primary
    }
}

/// One storage engine of `--engine`: `name[:table options]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Engine {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<String>,
}

/// Everything a mysqlslap run does, as the front end validated it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlapSpec {
    pub auto: Option<AutoSql>,
    /// `--create`: statements as split by the delimiter (empty ones kept: a walk stops there).
    pub create: Vec<String>,
    /// `--query`.
    pub query: Vec<String>,
    pub pre_query: Vec<String>,
    pub post_query: Vec<String>,
    pub pre_system: Option<String>,
    pub post_system: Option<String>,
    pub schema: String,
    /// Empty: no engine given (no `Engine =` clause, no "Running for engine" line).
    pub engines: Vec<Engine>,
    pub concurrency: Vec<u32>,
    pub iterations: u32,
    /// `--number-of-queries`: over all clients, each client runs this / concurrency.
    pub number_of_queries: u64,
    /// `--auto-generate-sql-execute-number`: per client.
    pub execute_number: u64,
    /// COMMIT every this many statements (0: autocommit).
    pub commit: u32,
    /// Reconnect every this many statements (0: never).
    pub detach: u32,
    pub no_drop: bool,
    pub only_print: bool,
    /// Run on every connection right after it connects.
    pub init_command: Option<String>,
}

impl Default for SlapSpec {
    fn default() -> Self {
        SlapSpec {
            auto: None,
            create: Vec::new(),
            query: Vec::new(),
            pre_query: Vec::new(),
            post_query: Vec::new(),
            pre_system: None,
            post_system: None,
            schema: "mysqlslap".into(),
            engines: Vec::new(),
            concurrency: vec![1],
            iterations: 1,
            number_of_queries: 0,
            execute_number: 0,
            commit: 0,
            detach: 0,
            no_drop: false,
            only_print: false,
            init_command: None,
        }
    }
}

impl SlapSpec {
    /// The schema is dropped and created each iteration, and dropped after each engine,
    /// only when something is created in it.
    pub fn drops_schema(&self) -> bool {
        !self.no_drop && (self.auto.is_some() || !self.create.is_empty())
    }

    /// The statements each client runs before its limit (or the list's end) stops it:
    /// mysqlslap's `client_limit`, also the report's "queries per client".
    pub fn client_limit(&self, concurrency: u32) -> u64 {
        if self.execute_number > 0 {
            self.execute_number
        } else if self.number_of_queries > 0 {
            self.number_of_queries / u64::from(concurrency.max(1))
        } else if self.auto.is_some() {
            0
        } else {
            self.query.len() as u64
        }
    }
}
