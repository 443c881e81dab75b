//! `cleanup`: drop the tables, one connection, in order, as sysbench does.

use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;

use plumb_core::StopFlag;

use crate::driver::Driver;
use crate::error::OltpError;
use crate::schema;
use crate::spec::{OltpSpec, Test};

/// How many tables cleanup drops: the *current* table count (sysbench does not remember what
/// prepare made), or one per thread for bulk_insert.
pub fn tables_to_drop(spec: &OltpSpec, threads: usize) -> u32 {
    if spec.test == Test::BulkInsert {
        threads.max(1) as u32
    } else {
        spec.tables
    }
}

/// Drop sbtest1..N (`DROP TABLE IF EXISTS`), writing sysbench's lines to `out`. Returns the
/// number of DROP statements sent. A signal in `stop` ends it before the next table (a
/// DROP under way finishes: the tables are each there or gone).
pub fn cleanup(
    driver: &dyn Driver,
    spec: &OltpSpec,
    threads: usize,
    stop: Option<&StopFlag>,
    out: &mut dyn Write,
) -> Result<u32, OltpError> {
    spec.check_cleanup(driver.dialect())?;
    let n = tables_to_drop(spec, threads);
    // The legacy script connects at its first query: its first line comes before that.
    let said_first = spec.legacy_script && n > 0;
    if said_first {
        writeln!(out, "Dropping table 'sbtest1'...")?;
    }
    // SQLite's observer refuses a database file that is not there, where connecting would
    // create an empty one only to drop nothing from it.
    let mut conn = if driver.dialect() == crate::driver::Dialect::Sqlite {
        driver.observer()
    } else {
        driver.connect()
    }
    .map_err(OltpError::Connect)?;
    for i in 1..=n {
        if let Some(sig) = stop.map(|s| s.load(Relaxed)).filter(|&s| s != 0) {
            return Err(OltpError::Interrupted(sig as i32));
        }
        if !(said_first && i == 1) {
            writeln!(out, "Dropping table 'sbtest{i}'...")?;
        }
        conn.execute_plain(&schema::drop_table(i), &[])
            .map_err(|error| OltpError::Statement {
                what: format!("DROP TABLE sbtest{i}"),
                error,
                stmt: None,
            })?;
    }
    if driver.dialect() == crate::driver::Dialect::Sqlite && n > 0 {
        // A dropped table's pages stay in the file as free pages: without VACUUM a cleaned
        // up database keeps its full size (hundreds of MB after a sweep over table sizes).
        conn.execute_plain("VACUUM", &[])
            .map_err(|error| OltpError::Statement {
                what: "VACUUM".to_string(),
                error,
                stmt: None,
            })?;
    }
    Ok(n)
}
