//! What one mysqlslap iteration ran with, as results keep it.

use serde::{Deserialize, Serialize};

use crate::driver::Dialect;
use crate::settings::DatabaseSettings;

use super::{AutoSql, SlapSpec};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlapSettings {
    pub dialect: Dialect,
    pub schema: String,
    /// The generated SQL's settings (`--auto-generate-sql`); none for given statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoSql>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<super::Engine>,
    pub concurrency: u32,
    /// 1-based, of `iterations`.
    pub iteration: u32,
    pub iterations: u32,
    /// Each client's query limit (0: one walk of the list).
    pub queries_per_client: u64,
    /// Statements in the list the clients walk.
    pub query_statements: u64,
    pub commit_every: u32,
    pub detach_every: u32,
    pub only_print: bool,
    /// The database as a connection reads its settings back, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseSettings>,
    /// What the server's own counters say it did during the clients' run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_activity: Option<crate::driver::ServerCounters>,
}

impl SlapSettings {
    pub fn new(
        spec: &SlapSpec,
        dialect: Dialect,
        engine: Option<&super::Engine>,
        concurrency: u32,
        iteration: u32,
        query_statements: u64,
    ) -> Self {
        SlapSettings {
            dialect,
            schema: spec.schema.clone(),
            auto: spec.auto.clone(),
            engine: engine.cloned(),
            concurrency,
            iteration,
            iterations: spec.iterations,
            queries_per_client: spec.client_limit(concurrency),
            query_statements,
            commit_every: spec.commit,
            detach_every: spec.detach,
            only_print: spec.only_print,
            database: None,
            server_activity: None,
        }
    }
}
