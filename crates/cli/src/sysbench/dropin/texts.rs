//! sysbench 1.0.20's own texts: the version line, the general help and each test's option
//! listing, so that a script written against sysbench reads the same lines. The listings are
//! sysbench's (its option names, wording and defaults), not plumb's tables: plumb accepts more
//! options than it lists here (see `plumb help`).

use std::fmt::Write;

/// What sysbench prints for `--version`.
pub const VERSION: &str = "sysbench 1.0.20";

/// Where sysbench 1.0.20 would load oltp_common.lua from, as its Lua error names it: the
/// first file of the module path (`LUA_PATH`, its `;;` standing for sysbench's own list)
/// that exists, else the one Debian's package installs. LuaJIT shortens a name of 60
/// characters or more to "..." and its last 56.
pub fn oltp_common_path() -> String {
    const INSTALLED: &str = "/usr/share/sysbench/?.lua";
    let home = std::env::var("HOME").ok();
    let mut own = vec![
        "./?.lua".to_string(),
        "./?/init.lua".into(),
        "./src/lua/?.lua".into(),
    ];
    if let Some(h) = &home {
        for tail in ["5.1/?.lua", "5.1/?/init.lua", "?.lua", "?/init.lua"] {
            own.push(format!("{h}/.luarocks/share/lua/{tail}"));
        }
    }
    own.extend([
        "/usr/local/share/lua/5.1/?.lua".into(),
        "/usr/share/lua/5.1/?.lua".into(),
    ]);
    own.push(INSTALLED.into());
    let own = own.join(";") + ";";
    let path = match std::env::var("LUA_PATH") {
        Ok(p) => p.replace(";;", &format!(";{own};")),
        Err(_) => own,
    };
    let found = path
        .split(';')
        .filter(|t| !t.is_empty())
        .map(|t| t.replace('?', "oltp_common"))
        .find(|f| std::path::Path::new(f).is_file())
        .unwrap_or_else(|| INSTALLED.replace('?', "oltp_common"));
    match found.char_indices().rev().nth(55) {
        Some((at, _)) if found.chars().count() >= 60 => format!("...{}", &found[at..]),
        _ => found,
    }
}

/// The first line of every command: sysbench's shape, saying what actually runs.
pub fn banner() -> String {
    plumb_report::sysbench::drop_in_banner()
}

/// One option as sysbench lists it: the left column (name and value placeholder) and the
/// description with its default.
type Line = (&'static str, &'static str);

/// sysbench's option listing: two-space indent, the left column padded to the widest entry
/// plus one space.
fn table(out: &mut String, lines: &[Line]) {
    let w = lines.iter().map(|l| l.0.len()).max().unwrap_or(0);
    for (left, right) in lines {
        let _ = writeln!(out, "  {left:<w$} {right}");
    }
}

const GENERAL: &[Line] = &[
    ("--threads=N", "number of threads to use [1]"),
    ("--events=N", "limit for total number of events [0]"),
    ("--time=N", "limit for total execution time in seconds [10]"),
    ("--forced-shutdown=STRING", "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable [off]"),
    ("--thread-stack-size=SIZE", "size of stack per thread [64K]"),
    ("--rate=N", "average transactions rate. 0 for unlimited rate [0]"),
    ("--report-interval=N", "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports [0]"),
    ("--report-checkpoints=[LIST,...]", "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default. []"),
    ("--debug[=on|off]", "print more debugging info [off]"),
    ("--validate[=on|off]", "perform validation checks where possible [off]"),
    ("--help[=on|off]", "print help and exit [off]"),
    ("--version[=on|off]", "print version and exit [off]"),
    ("--config-file=FILENAME", "File containing command line options"),
    ("--tx-rate=N", "deprecated alias for --rate [0]"),
    ("--max-requests=N", "deprecated alias for --events [0]"),
    ("--max-time=N", "deprecated alias for --time [0]"),
    ("--num-threads=N", "deprecated alias for --threads [1]"),
];

const RANDOM: &[Line] = &[
    (
        "--rand-type=STRING",
        "random numbers distribution {uniform,gaussian,special,pareto} [special]",
    ),
    (
        "--rand-spec-iter=N",
        "number of iterations used for numbers generation [12]",
    ),
    (
        "--rand-spec-pct=N",
        "percentage of values to be treated as 'special' (for special distribution) [1]",
    ),
    (
        "--rand-spec-res=N",
        "percentage of 'special' values to use (for special distribution) [75]",
    ),
    (
        "--rand-seed=N",
        "seed for random number generator. When 0, the current time is used as a RNG seed. [0]",
    ),
    (
        "--rand-pareto-h=N",
        "parameter h for pareto distribution [0.2]",
    ),
];

const LOG: &[Line] = &[(
    "--verbosity=N",
    "verbosity level {5 - debug, 0 - only critical messages} [3]",
)];

const LATENCY: &[Line] = &[
    ("--percentile=N", "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations [95]"),
    ("--histogram[=on|off]", "print latency histogram in report [off]"),
];

const DATABASE: &[Line] = &[
    (
        "--db-driver=STRING",
        "specifies database driver to use ('help' to get list of available drivers) [mysql]",
    ),
    (
        "--db-ps-mode=STRING",
        "prepared statements usage mode {auto, disable} [auto]",
    ),
    (
        "--db-debug[=on|off]",
        "print database-specific debug information [off]",
    ),
];

const MYSQL: &[Line] = &[
    ("--mysql-host=[LIST,...]", "MySQL server host [localhost]"),
    ("--mysql-port=[LIST,...]", "MySQL server port [3306]"),
    ("--mysql-socket=[LIST,...]", "MySQL socket"),
    ("--mysql-user=STRING", "MySQL user [sbtest]"),
    ("--mysql-password=STRING", "MySQL password []"),
    ("--mysql-db=STRING", "MySQL database name [sbtest]"),
    ("--mysql-ssl[=on|off]", "use SSL connections, if available in the client library [off]"),
    ("--mysql-ssl-cipher=STRING", "use specific cipher for SSL connections []"),
    ("--mysql-compression[=on|off]", "use compression, if available in the client library [off]"),
    ("--mysql-debug[=on|off]", "trace all client library calls [off]"),
    ("--mysql-ignore-errors=[LIST,...]", "list of errors to ignore, or \"all\" [1213,1020,1205]"),
    ("--mysql-dry-run[=on|off]", "Dry run, pretend that all MySQL client API calls are successful without executing them [off]"),
];

const PGSQL: &[Line] = &[
    ("--pgsql-host=STRING", "PostgreSQL server host [localhost]"),
    ("--pgsql-port=N", "PostgreSQL server port [5432]"),
    ("--pgsql-user=STRING", "PostgreSQL user [sbtest]"),
    ("--pgsql-password=STRING", "PostgreSQL password []"),
    ("--pgsql-db=STRING", "PostgreSQL database name [sbtest]"),
];

/// sysbench's tests in the order its help lists them.
const TESTS: &[Line] = &[
    ("fileio", "File I/O test"),
    ("cpu", "CPU performance test"),
    ("memory", "Memory functions speed test"),
    ("threads", "Threads subsystem performance test"),
    ("mutex", "Mutex performance test"),
];

/// `sysbench --help`, line for line.
pub fn general_help() -> String {
    let mut s = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n\
         General options:\n",
    );
    table(&mut s, GENERAL);
    s.push_str("\nPseudo-Random Numbers Generator options:\n");
    table(&mut s, RANDOM);
    s.push_str("\nLog options:\n");
    table(&mut s, LOG);
    s.push('\n');
    table(&mut s, LATENCY);
    s.push_str("\nGeneral database options:\n\n");
    table(&mut s, DATABASE);
    s.push_str("\n\nCompiled-in database drivers:\n");
    s.push_str("  mysql - MySQL driver\n  pgsql - PostgreSQL driver\n");
    s.push_str("\nmysql options:\n");
    table(&mut s, MYSQL);
    s.push_str("\npgsql options:\n");
    table(&mut s, PGSQL);
    s.push_str("\nCompiled-in tests:\n");
    for (name, what) in TESTS {
        let _ = writeln!(s, "  {name} - {what}");
    }
    s.push_str("\nSee 'sysbench <testname> help' for a list of options for each test.\n\n");
    s
}

const CPU: &[Line] = &[(
    "--cpu-max-prime=N",
    "upper limit for primes generator [10000]",
)];

const FILEIO: &[Line] = &[
    ("--file-num=N", "number of files to create [128]"),
    (
        "--file-block-size=N",
        "block size to use in all IO operations [16384]",
    ),
    (
        "--file-total-size=SIZE",
        "total size of files to create [2G]",
    ),
    (
        "--file-test-mode=STRING",
        "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}",
    ),
    (
        "--file-io-mode=STRING",
        "file operations mode {sync,async,mmap} [sync]",
    ),
    (
        "--file-async-backlog=N",
        "number of asynchronous operatons to queue per thread [128]",
    ),
    (
        "--file-extra-flags=[LIST,...]",
        "list of additional flags to use to open files {sync,dsync,direct} []",
    ),
    (
        "--file-fsync-freq=N",
        "do fsync() after this number of requests (0 - don't use fsync()) [100]",
    ),
    (
        "--file-fsync-all[=on|off]",
        "do fsync() after each write operation [off]",
    ),
    (
        "--file-fsync-end[=on|off]",
        "do fsync() at the end of test [on]",
    ),
    (
        "--file-fsync-mode=STRING",
        "which method to use for synchronization {fsync, fdatasync} [fsync]",
    ),
    (
        "--file-merged-requests=N",
        "merge at most this number of IO requests if possible (0 - don't merge) [0]",
    ),
    (
        "--file-rw-ratio=N",
        "reads/writes ratio for combined test [1.5]",
    ),
];

const MEMORY: &[Line] = &[
    (
        "--memory-block-size=SIZE",
        "size of memory block for test [1K]",
    ),
    (
        "--memory-total-size=SIZE",
        "total size of data to transfer [100G]",
    ),
    (
        "--memory-scope=STRING",
        "memory access scope {global,local} [global]",
    ),
    (
        "--memory-hugetlb[=on|off]",
        "allocate memory from HugeTLB pool [off]",
    ),
    (
        "--memory-oper=STRING",
        "type of memory operations {read, write, none} [write]",
    ),
    (
        "--memory-access-mode=STRING",
        "memory access mode {seq,rnd} [seq]",
    ),
];

const THREADS: &[Line] = &[
    (
        "--thread-yields=N",
        "number of yields to do per request [1000]",
    ),
    ("--thread-locks=N", "number of locks per thread [8]"),
];

const MUTEX: &[Line] = &[
    ("--mutex-num=N", "total size of mutex array [4096]"),
    (
        "--mutex-locks=N",
        "number of mutex locks to do per thread [50000]",
    ),
    (
        "--mutex-loops=N",
        "number of empty loops to do outside mutex lock [10000]",
    ),
];

/// The options every OLTP script takes (oltp_common.lua), sorted as sysbench lists them.
#[rustfmt::skip]
const OLTP_COMMON: &[Line] = &[
    ("--auto_inc[=on|off]", "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs [on]"),
    ("--create_secondary[=on|off]", "Create a secondary index in addition to the PRIMARY KEY [on]"),
    ("--delete_inserts=N", "Number of DELETE/INSERT combinations per transaction [1]"),
    ("--distinct_ranges=N", "Number of SELECT DISTINCT queries per transaction [1]"),
    ("--index_updates=N", "Number of UPDATE index queries per transaction [1]"),
    ("--mysql_storage_engine=STRING", "Storage engine, if MySQL is used [innodb]"),
    ("--non_index_updates=N", "Number of UPDATE non-index queries per transaction [1]"),
    ("--order_ranges=N", "Number of SELECT ORDER BY queries per transaction [1]"),
    ("--pgsql_variant=STRING", "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0"),
    ("--point_selects=N", "Number of point SELECT queries per transaction [10]"),
    ("--range_selects[=on|off]", "Enable/disable all range SELECT queries [on]"),
    ("--range_size=N", "Range size for range SELECT queries [100]"),
    ("--secondary[=on|off]", "Use a secondary index in place of the PRIMARY KEY [off]"),
    ("--simple_ranges=N", "Number of simple range SELECT queries per transaction [1]"),
    ("--skip_trx[=on|off]", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode [off]"),
    ("--sum_ranges=N", "Number of SELECT SUM() queries per transaction [1]"),
    ("--table_size=N", "Number of rows per table [10000]"),
    ("--tables=N", "Number of tables [1]"),
];

/// A Lua script's `help`: its options sorted by name (the select_random_* scripts add their
/// own), the widest setting the column, under the script's name as given (`shown`).
fn script_help(test: &str, shown: &str) -> String {
    let mut lines: Vec<Line> = OLTP_COMMON.to_vec();
    match test {
        "select_random_points" => lines.push((
            "--random_points=N",
            "Number of random points in the IN() clause in generated SELECTs [10]",
        )),
        "select_random_ranges" => {
            lines.push(("--delta=N", "Size of BETWEEN ranges [5]"));
            lines.push((
                "--number_of_ranges=N",
                "Number of random BETWEEN ranges per SELECT [10]",
            ));
        }
        _ => {}
    }
    lines.sort_by_key(|l| l.0);
    let mut s = format!("{shown} options:\n");
    table(&mut s, &lines);
    s.push('\n');
    s
}

/// `sysbench TEST help`: "TEST options:", the listing, a blank line. `shown` is the test
/// as the command line named it: sysbench heads a script's options with the base name of
/// the path given (`oltp_read_write.lua options:`).
pub fn test_help(test: &str, shown: &str) -> String {
    if test.starts_with("oltp_") || test.starts_with("select_random_") {
        return script_help(test, shown);
    }
    let lines = match test {
        "cpu" => CPU,
        "fileio" => FILEIO,
        "memory" => MEMORY,
        "threads" => THREADS,
        "mutex" => MUTEX,
        _ => &[],
    };
    let mut s = format!("{test} options:\n");
    table(&mut s, lines);
    s.push('\n');
    s
}

/// Whether sysbench 1.0.20 has the option `name` (general, database and driver options,
/// and `test`'s own): one plumb does not take is then refused as unsupported, not unknown.
pub fn sysbench_knows(name: &str, test: &str) -> bool {
    let own: &[Line] = match test {
        "cpu" => CPU,
        "fileio" => FILEIO,
        "memory" => MEMORY,
        "threads" => THREADS,
        "mutex" => MUTEX,
        t if t.starts_with("oltp_") || t.starts_with("select_random_") || t == "bulk_insert" => {
            OLTP_COMMON
        }
        _ => &[],
    };
    [GENERAL, RANDOM, LOG, LATENCY, DATABASE, MYSQL, PGSQL, own]
        .iter()
        .flat_map(|t| t.iter())
        .filter_map(|(flag, _)| flag.strip_prefix("--"))
        .map(|f| f.split(['=', '[']).next().unwrap_or(f))
        .any(|f| f == name || f.replace('_', "-") == name)
}

/// sysbench's message for a test option whose value is out of range, or None when it reports
/// none of its own (plumb's wording then follows "FATAL: ").
pub fn invalid_test_value(option: &str, raw: &str) -> Option<String> {
    Some(match option {
        "cpu-max-prime" => format!("Invalid value of cpu-max-prime: {raw}."),
        "memory-block-size" | "memory-oper" | "memory-scope" | "memory-access-mode"
        | "file-num" | "file-extra-flags" => format!("Invalid value for {option}: {raw}"),
        "file-io-mode" => format!("unknown I/O mode: {raw}"),
        "file-fsync-mode" => format!("Invalid fsync mode: {raw}."),
        "file-test-mode" => format!("Invalid IO operations mode: {raw}."),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_align_on_the_widest_option() {
        let h = test_help("threads", "threads");
        assert_eq!(
            h,
            "threads options:\n  --thread-yields=N number of yields to do per request [1000]\n  --thread-locks=N  number of locks per thread [8]\n\n"
        );
    }

    #[test]
    fn every_plumb_test_has_a_listing() {
        // sysbench's OLTP tests are Lua scripts: their listing is the script's, not here.
        let lua = crate::sysbench::testdefs::oltp::ALL;
        for t in crate::sysbench::testdefs::TESTS
            .iter()
            .filter(|t| !lua.iter().any(|l| l.name == t.name))
        {
            assert!(test_help(t.name, t.name).lines().count() > 2, "{}", t.name);
            assert!(TESTS.iter().any(|(n, _)| *n == t.name), "{}", t.name);
        }
    }
}
