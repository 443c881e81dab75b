//! mysqlslap's layout: one "Benchmark" block per engine and concurrency value, after its
//! last iteration, with the average, minimum and maximum wall time of the iterations in
//! milliseconds shown as seconds; `--csv` lines; `-vv`'s "Generating stats". Under the name
//! `plumb`, what happened underneath follows each block: the queries' own figures, the
//! database's settings, the observations and the findings.
//!
//! The front end's facts about each iteration travel in the job's `layout` value
//! ([`SlapFacts`]), so a saved record prints the same blocks again.

use std::fmt::Write as _;

use plumb_pipeline::record::{GroupRecord, JobRecord, Record};
use plumb_pipeline::{Layout, Settings};
use serde::{Deserialize, Serialize};

/// What the front end tells the layout about one iteration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlapFacts {
    /// The block (engine and concurrency value) the iteration belongs to, from 0.
    pub block: u32,
    /// The block's last iteration: its report follows.
    pub last_of_block: bool,
    /// No Benchmark block (`--silent`, `--csv`, `--only-print`).
    pub silent: bool,
    /// CSV lines on stdout (`--csv` without a file).
    pub csv_stdout: bool,
    /// The load type CSV lines name (mysqlslap prints its option's value, default "mixed").
    pub load_type: String,
    pub verbose: u32,
    /// plumb's sections after each block (under the name `plumb`).
    pub plumb_sections: bool,
}

pub struct Mysqlslap;

impl Mysqlslap {
    pub const LAYOUT: Mysqlslap = Mysqlslap;
}

/// One block's figures, as mysqlslap computes them: times in whole milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conclusion {
    pub engine: Option<String>,
    pub avg_ms: u64,
    pub min_ms: u64,
    pub max_ms: u64,
    pub clients: u32,
    pub queries_per_client: u64,
}

fn facts(j: &JobRecord) -> Option<SlapFacts> {
    j.layout
        .as_ref()
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// An iteration's time as mysqlslap takes it: wall milliseconds, truncated.
fn millis(j: &JobRecord) -> u64 {
    (j.total_time_s * 1000.0).floor().max(0.0) as u64
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The conclusion of `block` from its iterations' jobs.
pub fn conclude(jobs: &[&JobRecord]) -> Option<Conclusion> {
    let first = jobs.first()?;
    let Settings::Slap(s) = &first.workload else {
        return None;
    };
    let times: Vec<u64> = jobs.iter().map(|j| millis(j)).collect();
    Some(Conclusion {
        engine: s.engine.as_ref().map(|e| e.name.clone()),
        avg_ms: times.iter().sum::<u64>() / times.len() as u64,
        min_ms: *times.iter().min()?,
        max_ms: *times.iter().max()?,
        clients: s.concurrency,
        queries_per_client: s.queries_per_client,
    })
}

/// mysqlslap's Benchmark block, blank line included.
pub fn benchmark_block(c: &Conclusion) -> String {
    let mut out = String::from("Benchmark\n");
    if let Some(e) = &c.engine {
        let _ = writeln!(out, "\tRunning for engine {e}");
    }
    for (what, ms) in [
        ("Average", c.avg_ms),
        ("Minimum", c.min_ms),
        ("Maximum", c.max_ms),
    ] {
        let _ = writeln!(
            out,
            "\t{what} number of seconds to run all queries: {} seconds",
            seconds(ms)
        );
    }
    let _ = writeln!(out, "\tNumber of clients running queries: {}", c.clients);
    let _ = writeln!(
        out,
        "\tAverage number of queries per client: {}",
        c.queries_per_client
    );
    out.push('\n');
    out
}

/// One `--csv` line: engine, load type, average, minimum, maximum, clients, queries.
pub fn csv_line(c: &Conclusion, load_type: &str) -> String {
    format!(
        "{},{load_type},{},{},{},{},{}\n",
        c.engine.as_deref().unwrap_or(""),
        seconds(c.avg_ms),
        seconds(c.min_ms),
        seconds(c.max_ms),
        c.clients,
        c.queries_per_client
    )
}

/// The jobs of `block`: those of the groups before `group` in the record, then `group`'s.
pub fn block_jobs<'a>(
    record: &'a Record,
    group: &'a GroupRecord,
    block: u32,
) -> Vec<&'a JobRecord> {
    let mut out: Vec<&JobRecord> = Vec::new();
    for g in &record.groups {
        if std::ptr::eq(g, group) {
            break;
        }
        out.extend(
            g.jobs
                .iter()
                .filter(|j| facts(j).is_some_and(|f| f.block == block)),
        );
    }
    out.extend(group.jobs.iter());
    out
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

/// What the clients did in each iteration of the block, and the database they did it on.
fn underneath(out: &mut String, jobs: &[&JobRecord]) {
    let _ = writeln!(out, "What happened underneath (plumb):");
    for j in jobs {
        let Settings::Slap(s) = &j.workload else {
            continue;
        };
        let q = j.operation("query");
        let n = q.map_or(0, |q| q.count);
        let _ = write!(
            out,
            "    iteration {}: {n} queries in {:.3} s",
            s.iteration, j.total_time_s
        );
        if let Some(q) = q.filter(|q| q.count > 0) {
            let p95 = q
                .latency
                .percentiles
                .iter()
                .find(|p| p.percentile == 95.0)
                .map(|p| format!(", 95th percentile {}", ms(p.value_ns as f64)))
                .unwrap_or_default();
            let _ = write!(
                out,
                " ({:.1} queries/s), latency avg {}{p95}, max {}",
                q.per_s,
                ms(q.latency.mean_ns),
                ms(q.latency.max_ns as f64)
            );
        }
        out.push('\n');
        let c = j.operation("connect").map_or(0, |c| c.count);
        let commits = j.operation("commit").map_or(0, |c| c.count);
        let _ = writeln!(
            out,
            "        {c} connects ({} reconnects, {} clients could not connect), {commits} commits, {} queries that changed rows, {} rows returned",
            j.counter("reconnects"),
            j.counter("failed_connects"),
            j.counter("writes"),
            j.counter("rows")
        );
    }
    out.push('\n');
    if let Some(Settings::Slap(s)) = jobs.last().map(|j| &j.workload) {
        crate::sysbench::oltp::database_block(out, s.database.as_ref(), s.server_activity.as_ref());
    }
}

impl Layout for Mysqlslap {
    fn report(&self, record: &Record, group: &GroupRecord) -> String {
        let Some(job) = group.jobs.first() else {
            return String::new();
        };
        let Some(f) = facts(job) else {
            return String::new();
        };
        if !f.last_of_block {
            return String::new();
        }
        let mut out = String::new();
        if f.verbose >= 2 {
            out.push_str("Generating stats\n");
        }
        let jobs = block_jobs(record, group, f.block);
        let Some(c) = conclude(&jobs) else {
            return out;
        };
        if !f.silent {
            out.push_str(&benchmark_block(&c));
        }
        if f.csv_stdout {
            out.push_str(&csv_line(&c, &f.load_type));
        }
        if f.plumb_sections {
            underneath(&mut out, &jobs);
            if let Some(o) = &group.observations {
                out.push_str(&crate::observations::section(job, o));
            }
            out.push_str(&crate::findings::section(&job.findings));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_csv_as_mysqlslap_prints_them() {
        let c = Conclusion {
            engine: Some("innodb".into()),
            avg_ms: 24,
            min_ms: 3,
            max_ms: 1139,
            clients: 2,
            queries_per_client: 50,
        };
        assert_eq!(
            benchmark_block(&c),
            "Benchmark\n\tRunning for engine innodb\n\
             \tAverage number of seconds to run all queries: 0.024 seconds\n\
             \tMinimum number of seconds to run all queries: 0.003 seconds\n\
             \tMaximum number of seconds to run all queries: 1.139 seconds\n\
             \tNumber of clients running queries: 2\n\
             \tAverage number of queries per client: 50\n\n"
        );
        assert_eq!(
            csv_line(&c, "mixed"),
            "innodb,mixed,0.024,0.003,1.139,2,50\n"
        );
        let none = Conclusion { engine: None, ..c };
        assert!(!benchmark_block(&none).contains("Running for engine"));
        assert!(csv_line(&none, "read").starts_with(",read,"));
    }
}
