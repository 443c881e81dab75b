//! plumb-oltp: sysbench 1.0's OLTP workloads (oltp_read_write and the rest) behind a small SQL
//! driver interface: the embedded SQLite driver, MySQL/MariaDB and PostgreSQL.
//!
//! - [`driver`]: the interface a database driver implements, and its error classes.
//! - [`sqlite`]: SQLite through rusqlite (bundled SQLite), WAL by default; [`mysql`] and
//!   [`pgsql`]: the servers, through plumb's own pure-Rust clients (`mywire` on
//!   `mysql_common`, `pgwire` on `postgres-protocol`).
//! - [`spec`]: the tests and their options with sysbench's defaults; [`settings`] as results
//!   keep them.
//! - [`schema`], [`prepare`], [`cleanup`]: the sbtest tables, their loading and removal.
//! - [`statements`], [`workload`]: the per-event statement sequences under the core harness.
//! - [`dry_run`]: sysbench's `--mysql-dry-run`, a MySQL driver that sends nothing.
//! - [`slap`]: mysqlslap's generated SQL, stages and clients.

pub mod cleanup;
pub mod driver;
pub mod dry_run;
pub mod error;
mod fanout;
pub mod mysql;
mod mywire;
mod peer;
pub mod pgsql;
pub mod pgsql_tls;
mod pgwire;
pub mod prepare;
pub mod prewarm;
pub mod schema;
pub mod settings;
pub mod slap;
mod sock;
pub mod spec;
pub mod sqlite;
pub mod statements;
pub mod text_only;
pub mod unique;
pub mod workload;

#[cfg(test)]
mod testdriver;

pub use driver::{
    Connection, Dialect, Driver, DriverError, ErrorClass, IgnoreErrors, Outcome, ServerCounters,
    TxIntent, Value,
};
pub use error::{OltpError, Setting};
pub use spec::{OltpSpec, Test};
pub use workload::Oltp;
#[cfg(test)]
mod alloc_count;
#[cfg(test)]
mod pgsql_tests;
#[cfg(test)]
mod sqlite_tests;
#[cfg(test)]
mod workload_tests;
