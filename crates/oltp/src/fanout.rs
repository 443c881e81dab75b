//! sysbench's custom commands (prepare, prewarm) run over `--threads` threads: thread t takes
//! tables t+1, t+1+threads, ... on its own connection, and their progress lines reach the
//! output as they come. The first failure stops the others at their next table.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;

use crate::driver::{Connection, Driver};
use crate::error::OltpError;
use crate::prepare::tables_of_worker;

/// Where a worker writes its progress lines.
pub(crate) type Line<'a> = dyn FnMut(String) -> Result<(), OltpError> + 'a;

/// Run `work(t, connection, tables, stop, line)` for each worker that has tables; one thread
/// works inline, writing straight to `out`. Returns each worker's result.
pub(crate) fn per_worker<S, F>(
    driver: &dyn Driver,
    threads: usize,
    tables: u32,
    out: &mut dyn Write,
    work: F,
) -> Result<Vec<S>, OltpError>
where
    S: Send,
    F: Fn(
            usize,
            &mut dyn Connection,
            &mut dyn Iterator<Item = u32>,
            &AtomicBool,
            &mut Line<'_>,
        ) -> Result<S, OltpError>
        + Sync,
{
    let threads = threads.max(1);
    let stop = AtomicBool::new(false);
    if threads == 1 {
        let mut conn = driver.connect().map_err(OltpError::Connect)?;
        let mut line = |l: String| writeln!(out, "{l}").map_err(OltpError::from);
        let mut mine = tables_of_worker(0, 1, tables);
        return work(0, conn.as_mut(), &mut mine, &stop, &mut line).map(|s| vec![s]);
    }
    writeln!(out, "Initializing worker threads...\n")?;
    let (tx, rx) = mpsc::channel::<String>();
    let (results, write_err) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let tx = tx.clone();
                let (stop, work) = (&stop, &work);
                s.spawn(move || -> Result<Option<S>, OltpError> {
                    let mut mine = tables_of_worker(t, threads, tables).peekable();
                    if mine.peek().is_none() {
                        return Ok(None);
                    }
                    let mut conn = driver.connect().map_err(OltpError::Connect)?;
                    // The receiver lives until every sender is gone; a send cannot fail.
                    let mut line = |l: String| {
                        let _ = tx.send(l);
                        Ok(())
                    };
                    let r = work(t, conn.as_mut(), &mut mine, stop, &mut line);
                    if r.is_err() {
                        stop.store(true, Relaxed);
                    }
                    r.map(Some)
                })
            })
            .collect();
        drop(tx);
        let mut write_err = None;
        for l in rx {
            if write_err.is_none() {
                write_err = writeln!(out, "{l}").err();
            }
        }
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(OltpError::Panic)))
            .collect();
        (results, write_err)
    });
    let mut done = Vec::new();
    for r in results {
        done.extend(r?);
    }
    if let Some(e) = write_err {
        return Err(e.into());
    }
    Ok(done)
}
