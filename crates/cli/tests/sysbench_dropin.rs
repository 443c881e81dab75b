//! The drop-in name: plumb run through a symlink named `sysbench` against Debian's sysbench
//! 1.0.20 (/usr/bin/sysbench) on the same command lines. stdout and stderr must match line
//! for line once figures are masked, and so must the exit status.
//!
//! Without /usr/bin/sysbench these tests are skipped with a message, except under CI
//! (`CI=true`), where a missing peer is a failure.

mod common;
use common::peers::{installed, run_named as run_in, DropIn, Printed as Output};

use std::path::Path;

use tempfile::TempDir;

const PEER: &str = "/usr/bin/sysbench";

/// The peer, or None (with a message) when it is not installed outside CI.
fn peer() -> Option<&'static str> {
    installed(
        &[PEER],
        "apt-get install sysbench",
        "the sysbench drop-in comparison",
    )
    .then_some(PEER)
}

/// What one command printed.
/// Figures differ from run to run; the layout must not. Each run of digits (with its
/// decimals) becomes `N`, together with the spaces before it and after it (one space
/// stays after): a right-aligned or padded figure is as wide as its digits. The version line says which program ran, so only its
/// shape is kept.
fn mask(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with("sysbench 1.0.20 (") && line.ends_with(')') {
            out.push_str("sysbench 1.0.20 (...)\n");
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        let mut masked = String::new();
        while i < chars.len() {
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            if j < chars.len() && chars[j].is_ascii_digit() {
                while j < chars.len()
                    && (chars[j].is_ascii_digit()
                        || (chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
                {
                    j += 1;
                }
                if i < j && chars[i] == ' ' {
                    masked.push(' ');
                }
                masked.push('N');
                i = j;
                // A left-aligned figure's padding after it ("%-6u") is as wide as the
                // figure is narrow: one space stands for it.
                if chars.get(i) == Some(&' ') {
                    while chars.get(i) == Some(&' ') {
                        i += 1;
                    }
                    masked.push(' ');
                }
            } else {
                masked.push(chars[i]);
                i += 1;
            }
        }
        out.push_str(&masked);
        out.push('\n');
    }
    out
}

/// Run sysbench and plumb as sysbench on `args`, each in its own fresh directory; None
/// when the peer is missing outside CI.
fn run_both(args: &[&str]) -> Option<(Output, Output)> {
    let peer = peer()?;
    let drop_in = DropIn::named("sysbench");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let theirs = run_in(Path::new(peer), a.path(), args);
    let ours = run_in(&drop_in.bin(), b.path(), args);
    Some((theirs, ours))
}

/// Compare the two tools on `args`.
fn same(args: &[&str]) {
    if let Some((theirs, ours)) = run_both(args) {
        assert_same(args, &theirs, &ours, |s| s.to_string());
    }
}

/// Like [`same`] where sysbench crashes after its last line: plumb prints the same lines
/// and fails with status 1, not the crash's 139.
fn same_until_the_crash(args: &[&str]) {
    if let Some((mut theirs, ours)) = run_both(args) {
        assert_eq!(
            theirs.code, 139,
            "sysbench {args:?} was expected to crash: {theirs:?}"
        );
        theirs.code = 1;
        assert_same(args, &theirs, &ours, |s| s.to_string());
    }
}

/// Like [`same`] for runs with --report-interval: how many interval lines fit in the run
/// depends on timing (sysbench often prints none for the last second), so they are compared
/// by shape: each tool prints at least one, and every one of plumb's looks like sysbench's.
fn same_with_intervals(args: &[&str]) {
    let Some((theirs, ours)) = run_both(args) else {
        return;
    };
    let intervals = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("[ "))
            .map(mask)
            .collect()
    };
    let (t, o) = (intervals(&theirs.stdout), intervals(&ours.stdout));
    assert!(
        !t.is_empty() && !o.is_empty(),
        "{}\n{}",
        theirs.stdout,
        ours.stdout
    );
    assert!(o.iter().all(|l| *l == t[0]), "{t:?} {o:?}");
    let without = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("[ "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert_same(args, &theirs, &ours, without);
}

fn assert_same(args: &[&str], theirs: &Output, ours: &Output, keep: impl Fn(&str) -> String) {
    let (t, o) = (mask(&keep(&theirs.stdout)), mask(&keep(&ours.stdout)));
    if let Some((i, (a, b))) = t
        .lines()
        .zip(o.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!(
            "stdout of sysbench {args:?}, line {}: {a:?} != {b:?}\n--- sysbench:\n{}\n--- plumb as sysbench:\n{}",
            i + 1,
            theirs.stdout,
            ours.stdout
        );
    }
    assert_eq!(t, o, "stdout of sysbench {args:?} (one is longer)");
    assert_eq!(
        mask(&theirs.stderr),
        mask(&ours.stderr),
        "stderr of sysbench {args:?}"
    );
    assert_eq!(theirs.code, ours.code, "exit status of sysbench {args:?}");
}

#[test]
fn mask_hides_figures_and_their_padding_only() {
    assert_eq!(
        mask("    events per second:  1710.85\n"),
        mask("    events per second:   710.8\n")
    );
    assert_eq!(mask("[ 1s ] thds: 2 eps: 19.31"), "[ Ns ] thds: N eps: N\n");
    assert_eq!(mask("test_file.12 3.5."), "test_file.N N.\n");
    assert_ne!(mask("total time: 1s"), mask("total time: 1ms"));
    assert_eq!(
        mask("    transactions: 102225 (51014.20 per sec.)"),
        mask("    transactions: 99931  (49914.20 per sec.)")
    );
    assert_ne!(mask("N 5 files"), mask("N 5files"));
    assert_eq!(
        mask("sysbench 1.0.20 (plumb 0.1.0)"),
        mask("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)")
    );
}

#[test]
fn version_and_help_texts() {
    same(&["--version"]);
    same(&["--help"]);
    same(&["cpu", "--help"]);
    // They win over any other option, however wrong.
    same(&["--threads=0", "--help"]);
    same(&["--threads=abc", "--version"]);
    same(&["--bogus", "--version"]);
    same(&["--rand-type=foo", "--help"]);
    for test in ["cpu", "fileio", "memory", "threads", "mutex"] {
        same(&[test, "help"]);
    }
    // The OLTP scripts list their own options, sorted; bulk_insert.lua has no help.
    for test in [
        "oltp_read_write",
        "oltp_point_select",
        "select_random_points",
        "select_random_ranges",
        "bulk_insert",
    ] {
        same(&[test, "help"]);
    }
}

#[test]
fn help_and_version_words_are_test_names_as_in_sysbench() {
    same(&["help"]);
    same(&["version"]);
}

#[test]
fn unknown_tests_commands_and_options() {
    same(&["foo", "run"]);
    same(&["cpu"]);
    same(&["cpu", "foo"]);
    same(&["cpu", "run", "cleanup"]);
    same(&["foo", "bar", "baz"]);
    // No test: sysbench reads a script from standard input (here empty: nothing to do).
    same(&[]);
    same(&["--threads=2"]);
    same(&["cpu", "prepare"]);
    same(&["mutex", "cleanup"]);
    // A command the test lacks is refused before its options' values are checked.
    same(&["--cpu-max-prime=-1", "cpu", "prepare"]);
    same(&["--mutex-num=abc", "mutex", "cleanup"]);
    same(&["--bogus=1", "cpu", "run"]);
    same(&["cpu", "run", "--bogus"]);
    same(&["--histogram=maybe", "cpu", "run"]);
    same(&["--memory-hugetlb=abc", "memory", "run"]);
    // Unknown options are refused before a test's help; values are checked after it.
    same(&["--bogus", "cpu", "help"]);
    same(&["--memory-hugetlb=abc", "memory", "help"]);
    same(&["--cpu-max-prime=-1", "cpu", "help"]);
    same(&["--cpu-max-prime=abc", "cpu", "help"]);
}

/// An OLTP script named without a command, or by a path: sysbench names a script by the
/// base name of what was typed (`oltp_read_only.lua options:`), runs bulk_insert and 0.5's
/// oltp.lua to no effect without a command, and stops every other 1.0 script in
/// oltp_common.lua, naming the file its module path found (LuaJIT shortens a long name).
#[test]
fn oltp_scripts_without_a_command_and_by_their_path() {
    let Some(peer) = peer() else { return };
    same(&["oltp_insert"]);
    same(&["select_random_points"]);
    same(&["bulk_insert"]);
    same(&["/usr/share/sysbench/bulk_insert.lua"]);
    same(&["/usr/share/sysbench/oltp_read_only.lua"]);
    same(&["/usr/share/sysbench/oltp_read_only.lua", "help"]);
    same(&["/usr/share/sysbench/select_random_ranges.lua", "help"]);
    same(&["/usr/share/sysbench/bulk_insert.lua", "help"]);
    same(&["--bogus", "/usr/share/sysbench/oltp_delete.lua"]);
    same(&["cpu", "prewarm"]);
    let drop_in = DropIn::named("sysbench");
    let both = |dir: &Path, lua_path: Option<&str>, args: &[&str]| {
        let run = |bin: &Path| {
            let mut c = std::process::Command::new(bin);
            c.args(args).current_dir(dir).env_remove("LUA_PATH");
            if let Some(p) = lua_path {
                c.env("LUA_PATH", p);
            }
            let o = c.output().unwrap();
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).replace("(plumb 0.1.0)", "(...)"),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        let theirs = run(Path::new(peer));
        let ours = run(&drop_in.bin());
        let banner = |s: &str| s.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            (theirs.0, banner(&theirs.1), &theirs.2),
            (ours.0, banner(&ours.1), &ours.2),
            "{args:?} in {} with LUA_PATH={lua_path:?}",
            dir.display()
        );
        ours
    };
    // sysbench's own oltp_common.lua, in the working directory and in a long directory.
    let d = TempDir::new().unwrap();
    std::fs::copy(
        "/usr/share/sysbench/oltp_common.lua",
        d.path().join("oltp_common.lua"),
    )
    .unwrap();
    let (_, out, _) = both(d.path(), None, &["/usr/share/sysbench/oltp_insert.lua"]);
    assert!(out.contains("FATAL: ./oltp_common.lua:28: "), "{out}");
    let long = d
        .path()
        .join("a_directory_name_long_enough/for_luajit_to_shorten_the_file_name");
    std::fs::create_dir_all(&long).unwrap();
    std::fs::copy(
        "/usr/share/sysbench/oltp_common.lua",
        long.join("oltp_common.lua"),
    )
    .unwrap();
    let elsewhere = TempDir::new().unwrap();
    let module_path = format!("{}/?.lua", long.display());
    let (_, out, _) = both(
        elsewhere.path(),
        Some(&module_path),
        &["/usr/share/sysbench/oltp_insert.lua"],
    );
    assert!(
        out.contains("FATAL: ...ough/for_luajit_to_shorten_the_file_name/oltp_common.lua:28: "),
        "{out}"
    );
    let fallback = format!("{}/?.lua;;", elsewhere.path().display());
    both(elsewhere.path(), Some(&fallback), &["oltp_point_select"]);
    // sysbench 0.5's oltp.lua (a script of that name: plumb runs its own) defines no help.
    std::fs::write(elsewhere.path().join("oltp.lua"), "").unwrap();
    both(elsewhere.path(), None, &["./oltp.lua"]);
    let (_, _, err) = both(elsewhere.path(), None, &["./oltp.lua", "help"]);
    assert_eq!(
        err,
        "'oltp.lua' test does not implement the 'help' command.\n"
    );
}

#[test]
fn bad_general_values() {
    for bad in [
        "--threads=abc",
        "--threads=0",
        "--threads",
        "--time=abc",
        "--events=abc",
        "--rate=abc",
        "--report-interval=abc",
        "--rand-seed=abc",
        "--percentile=101",
        "--rand-type=foo",
        "--forced-shutdown=abc",
    ] {
        same(&[bad, "cpu", "run"]);
    }
}

/// --report-checkpoints: its list refused as sysbench refuses it (the first item it cannot
/// read, or the 257th), and taken: the header names the times sorted, each checkpoint
/// prints sysbench's whole report over the time since the one before, stamped with the
/// time since the start, and the report after the run covers the time since the last.
#[test]
fn report_checkpoints_as_sysbench() {
    for bad in [
        "--report-checkpoints=a",
        "--report-checkpoints=1,x,2",
        "--report-checkpoints=1,-1",
        "--report-checkpoints=2147483648",
        "--report-checkpoints=1 ",
    ] {
        same(&[bad, "cpu", "run"]);
    }
    let many = (1..=257)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    same(&[&format!("--report-checkpoints={many}"), "cpu", "run"]);
    // 0 (past when the run starts) and 9 (after it ends) make no report.
    let args = [
        "--time=3",
        "--threads=2",
        "--report-checkpoints=2,0,9,1",
        "cpu",
        "run",
    ];
    if let Some((theirs, ours)) = run_both(&args) {
        assert_same(&args, &theirs, &ours, |s| s.to_string());
        assert!(
            ours.stdout
                .contains("Report checkpoint(s) at 0, 1, 2, 9 seconds\n"),
            "{}",
            ours.stdout
        );
        let stamps: Vec<&str> = ours
            .stdout
            .lines()
            .filter(|l| l.ends_with("Checkpoint report:"))
            .collect();
        assert_eq!(
            stamps,
            ["[ 1s ] Checkpoint report:", "[ 2s ] Checkpoint report:"],
            "{}",
            ours.stdout
        );
        // Each report's total time is the time since the start; its events are its own.
        let figures = |label: &str| -> Vec<f64> {
            ours.stdout
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix(label))
                .map(|v| v.trim().trim_end_matches('s').parse().unwrap())
                .collect()
        };
        let totals = figures("total time:");
        assert_eq!(totals.len(), 3, "{}", ours.stdout);
        for (t, want) in totals.iter().zip([1.0, 2.0, 3.0]) {
            assert!((t - want).abs() < 0.25, "{totals:?}");
        }
        let events = figures("total number of events:");
        let eps = figures("events per second:");
        for (e, r) in events.iter().zip(&eps) {
            // Each window is about a second long: its rate is about its count.
            assert!((e - r).abs() < 0.3 * e, "{events:?} {eps:?}");
        }
    }
}

/// A --db-driver that names no driver (sysbench's own drivers.t): sysbench 1.0's scripts
/// take it and fail where each connection of the command first initialises the driver:
/// the script's function and line, per thread for a run (then the threads' end), once for
/// cleanup and a one-thread prepare. Not the legacy 0.5 script, which plumb refuses.
#[test]
fn a_driver_that_does_not_exist_fails_where_the_script_initialises_it() {
    for test in [
        "oltp_read_write",
        "bulk_insert",
        "select_random_points",
        "select_random_ranges",
    ] {
        for command in ["prepare", "cleanup", "help"] {
            same(&["--db-driver=nonexisting", test, command]);
        }
        same(&["--db-driver=nonexisting", test, "run"]);
    }
    // Each thread fails on its own. (sysbench's logger folds a line that comes again at
    // once into "(last message repeated N times)" as its threads race: compared alone.)
    let drop_in = DropIn::named("sysbench");
    let d = TempDir::new().unwrap();
    let ours = run_in(
        &drop_in.bin(),
        d.path(),
        &[
            "--db-driver=nonexisting",
            "--threads=3",
            "oltp_read_write",
            "run",
        ],
    );
    assert_eq!(ours.code, 1, "{ours:?}");
    assert!(ours.stdout.ends_with(&format!(
        "Initializing worker threads...\n\n{}FATAL: Thread initialization failed!\n",
        "FATAL: invalid database driver name: 'nonexisting'\nFATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:348: failed to initialize the DB driver\n".repeat(3)
    )), "{}", ours.stdout);
    same(&[
        "--db-driver=nonexisting",
        "/usr/share/sysbench/oltp_point_select.lua",
        "prewarm",
    ]);
}

/// --mysql-dry-run: nothing is sent (no server at the socket named), every statement
/// succeeds with no result, so every query is "other"; the same counts as sysbench's for a
/// fixed number of events, with prepared statements and as text; prepare, prewarm and
/// cleanup print their lines. sysbench's own suite checks checkpoints this way
/// (opt_report_checkpoints.t).
#[test]
fn mysql_dry_run_as_sysbench() {
    let nowhere = "--mysql-socket=/nonexistent/mysqld.sock";
    for command in ["prepare", "prewarm", "cleanup"] {
        same(&[
            "oltp_read_write",
            "--db-driver=mysql",
            "--mysql-dry-run",
            nowhere,
            "--tables=2",
            "--table-size=100",
            command,
        ]);
    }
    for (test, ps) in [
        ("oltp_read_write", "auto"),
        ("oltp_read_write", "disable"),
        ("oltp_point_select", "auto"),
        ("oltp_insert", "auto"),
    ] {
        let ps = format!("--db-ps-mode={ps}");
        let args = [
            test,
            "--mysql-dry-run",
            nowhere,
            &ps,
            "--events=40",
            "--time=0",
            "run",
        ];
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        assert_same(&args, &theirs, &ours, |s| s.to_string());
        // The counts themselves, not only their layout.
        let counts = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| {
                    ["read:", "write:", "other:", "total:", "transactions:"]
                        .iter()
                        .any(|k| l.trim_start().starts_with(k))
                })
                .map(|l| l.split('(').next().unwrap().trim_end().to_string())
                .collect()
        };
        assert_eq!(counts(&ours.stdout), counts(&theirs.stdout), "{args:?}");
        assert!(
            ours.stdout
                .contains("        read:                            0\n"),
            "{}",
            ours.stdout
        );
    }
    let args = [
        "oltp_read_write",
        "--db-driver=mysql",
        "--mysql-dry-run",
        "--time=3",
        "--events=0",
        "--report-checkpoints=1,2",
        "run",
    ];
    if let Some((_, ours)) = run_both(&args) {
        let heads: Vec<&str> = ours
            .stdout
            .lines()
            .filter(|l| l.contains("Checkpoint report") || l.contains("SQL statistics"))
            .collect();
        assert_eq!(
            heads,
            [
                "[ 1s ] Checkpoint report:",
                "SQL statistics:",
                "[ 2s ] Checkpoint report:",
                "SQL statistics:",
                "SQL statistics:"
            ],
            "{}",
            ours.stdout
        );
    }
}

/// sysbench's distribution tuning options: taken, or refused by its integer parser, as
/// sysbench takes and refuses them (an empty value is 0).
#[test]
fn distribution_shape_options() {
    for value in [
        "--rand-spec-pct=5",
        "--rand-spec-res=50",
        "--rand-spec-iter=3",
        "--rand-spec-iter=abc",
        "--rand-spec-pct=",
        "--rand-spec-iter=1.5",
        "--rand-pareto-h=0.5",
    ] {
        same(&[value, "--events=1", "--cpu-max-prime=100", "cpu", "run"]);
    }
}

/// --memory-hugetlb: sysbench maps its HugeTLB buffers as the test starts, before its
/// header; a pool that cannot give them stops it there with two lines, the size in its own
/// rounding (1 KiB asks for 4 MiB + 1023 bytes). Whatever this machine's pool holds, both
/// tools do the same (without one, both stop; with one, both run).
#[test]
fn huge_pages_the_pool_cannot_give() {
    for more in [
        &[][..],
        &["--memory-block-size=4M", "--threads=2"],
        &["--memory-scope=local", "--threads=2"],
    ] {
        let mut args = vec!["--memory-hugetlb=on", "--memory-total-size=8M"];
        args.extend_from_slice(more);
        args.extend(["memory", "run"]);
        same(&args);
    }
}

/// A worker stuck in an event past --time plus the grace: sysbench's watchdog line, the
/// count of unfinished events in the report, exit status 2. The header's forced-shutdown
/// line stands on its last blank line.
#[test]
fn a_forced_shutdown_as_sysbench_s_watchdog() {
    same(&[
        "cpu",
        "--cpu-max-prime=20000000",
        "--time=1",
        "--forced-shutdown=0",
        "run",
    ]);
    // sysbench counts each thread's unfinished event and its time so far, around an average
    // of the completed ones: 1 event a thread, 0 s on average, 1 s from it.
    let args = [
        "cpu",
        "--cpu-max-prime=20000000",
        "--threads=2",
        "--time=1",
        "--forced-shutdown=0",
        "run",
    ];
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    // (events line, execution time's average and its stddev to a tenth of a second)
    let fairness = |s: &str| {
        let line = |p: &str| {
            s.lines()
                .find(|l| l.starts_with(p))
                .unwrap_or("")
                .to_string()
        };
        let time = line("    execution time (avg/stddev):");
        let (avg, sd) = time
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .split_once('/')
            .unwrap_or_default();
        let sd: f64 = sd.parse().unwrap_or(-1.0);
        (
            line("    events (avg/stddev):"),
            avg.to_string(),
            format!("{sd:.1}"),
        )
    };
    let expected = (
        "    events (avg/stddev):           1.0000/0.00".to_string(),
        "0.0000".to_string(),
        "1.0".to_string(),
    );
    assert_eq!(fairness(&theirs.stdout), expected, "{}", theirs.stdout);
    assert_eq!(fairness(&ours.stdout), expected, "{}", ours.stdout);
}

/// A grace given as a share of --time is the whole seconds sysbench's integer arithmetic
/// makes of it (50% of 3 s is 1 s; an empty value is 5%, of 30 s 1 s), in the header and for
/// the watchdog; without a time limit sysbench never reads the value, whatever it is.
#[test]
fn a_grace_in_percent_is_whole_seconds_as_sysbench_computes_it() {
    let forcing = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("Forcing shutdown in"))
            .map(String::from)
            .collect()
    };
    for (time, grace, line) in [
        (
            "--time=3",
            "--forced-shutdown=50%",
            "Forcing shutdown in 4 seconds",
        ),
        (
            "--time=30",
            "--forced-shutdown=",
            "Forcing shutdown in 31 seconds",
        ),
        (
            "--time=3",
            "--forced-shutdown=33%x",
            "Forcing shutdown in 3 seconds",
        ),
        (
            "--time=10",
            "--forced-shutdown=2",
            "Forcing shutdown in 12 seconds",
        ),
    ] {
        let args = [
            "--events=1",
            "--cpu-max-prime=100",
            time,
            grace,
            "cpu",
            "run",
        ];
        let Some((theirs, ours)) = run_both(&args) else {
            return;
        };
        assert_eq!(
            forcing(&theirs.stdout),
            [line],
            "{args:?}: {}",
            theirs.stdout
        );
        assert_eq!(forcing(&ours.stdout), [line], "{args:?}: {}", ours.stdout);
        assert_same(&args, &theirs, &ours, |s| s.to_string());
    }
    for grace in [
        "--forced-shutdown=5",
        "--forced-shutdown=abc",
        "--forced-shutdown=-1",
    ] {
        same(&["--time=0", "--events=10", grace, "cpu", "run"]);
    }
}

/// sysbench's integer options go through strtol() over the whole value: a fraction, an
/// exponent or a value past a C int is refused (plumb's own name takes fractions of a
/// second); a sign and leading spaces are taken. --forced-shutdown is whole seconds or a
/// percentage.
#[test]
fn fractions_where_sysbench_wants_integers() {
    for value in [
        "--time=1.5",
        "--time=1e1",
        "--max-time=1.5",
        "--rate=2.5",
        "--tx-rate=2.5",
        "--report-interval=0.5",
        "--percentile=95.5",
        "--verbosity=1.5",
        "--time=3000000000",
        "--forced-shutdown=1.5",
        "--forced-shutdown=5%x",
        "--forced-shutdown=OFF",
        "--forced-shutdown=",
        "--time=+1",
        "--time= 1",
    ] {
        same(&["--events=1", "--cpu-max-prime=100", value, "cpu", "run"]);
    }
    let (code, _, err) = common::run(&["cpu", "--time=0.5", "--cpu-max-prime=100", "run"]);
    assert_eq!(code, 0, "{err}");
    // sysbench adds a negative grace to --time unsigned: its watchdog fires early (9 s for
    // -1 and --time=10). plumb refuses it, in one line.
    let Some((_, ours)) = run_both(&["--events=1", "--forced-shutdown=-1", "cpu", "run"]) else {
        return;
    };
    // sysbench saturates a grace it cannot hold and wraps the sum; plumb refuses it.
    let Some((_, huge)) = run_both(&[
        "--events=1",
        "--forced-shutdown=99999999999999999999",
        "cpu",
        "run",
    ]) else {
        return;
    };
    assert_eq!(huge.code, 1, "{}{}", huge.stdout, huge.stderr);
    assert!(
        huge.stdout
            .ends_with("FATAL: Invalid value for --forced-shutdown: '99999999999999999999'\n"),
        "{}",
        huge.stdout
    );
    assert_eq!(ours.code, 1);
    assert!(
        ours.stdout
            .ends_with("plumb takes 0 or more seconds, or a percentage\n"),
        "{}",
        ours.stdout
    );
}

#[test]
fn bad_test_values() {
    same(&["--cpu-max-prime=-1", "cpu", "run"]);
    same(&["--cpu-max-prime=abc", "cpu", "run"]);
    for bad in [
        "--memory-block-size=3K",
        "--memory-block-size=abc",
        "--memory-oper=foo",
        "--memory-scope=foo",
        "--memory-access-mode=foo",
    ] {
        same(&[bad, "memory", "run"]);
    }
    same(&["--thread-yields=abc", "threads", "run"]);
    same(&["--mutex-locks=abc", "mutex", "run"]);
    same(&["fileio", "run"]);
    // sysbench checks the test mode for run only (prepare ignores it).
    same(&["--file-test-mode=foo", "fileio", "run"]);
    // Each of these stops sysbench's prepare before it writes a file.
    for bad in [
        "--file-num=0",
        "--file-num=abc",
        "--file-block-size=abc",
        "--file-total-size=abc",
        "--file-extra-flags=foo",
        "--file-fsync-mode=foo",
        "--file-fsync-all=abc",
    ] {
        same(&[bad, "fileio", "prepare"]);
    }
    same(&[
        "--file-io-mode=foo",
        "--file-test-mode=rndrd",
        "fileio",
        "run",
    ]);
}

#[test]
fn old_option_names_warn_as_sysbench_does() {
    same(&["--max-time=0", "--events=3", "cpu", "run"]);
    same(&["--max-requests=3", "--time=0", "cpu", "run"]);
    same(&["--num-threads=2", "--events=4", "--time=0", "cpu", "run"]);
    same(&[
        "--num-threads=1",
        "--tx-rate=0",
        "--events=4",
        "--time=0",
        "cpu",
        "run",
    ]);
    same(&["--test=cpu", "--events=3", "--time=0", "run"]);
}

#[test]
fn cpu_runs() {
    same(&[
        "--events=20",
        "--time=0",
        "--cpu-max-prime=2000",
        "cpu",
        "run",
    ]);
    same(&[
        "--threads=2",
        "--time=1",
        "--cpu-max-prime=2000",
        "cpu",
        "run",
    ]);
    same(&["--events=20", "--time=0", "--percentile=99", "cpu", "run"]);
    same(&["--events=20", "--time=0", "--percentile=0", "cpu", "run"]);
    same_with_intervals(&[
        "--time=2",
        "--report-interval=1",
        "--cpu-max-prime=2000",
        "cpu",
        "run",
    ]);
}

#[test]
fn cpu_histogram_layout() {
    let args = [
        "--events=50",
        "--time=0",
        "--histogram",
        "--cpu-max-prime=2000",
        "cpu",
        "run",
    ];
    let Some((theirs, ours)) = run_both(&args) else {
        return;
    };
    // The histogram's rows follow the measured latencies, so how many rows and how long
    // their bars are differs from run to run; its frame must match.
    let frame = |s: &str| {
        s.lines()
            .filter(|l| !l.contains(" |"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert_same(&args, &theirs, &ours, frame);
    assert!(ours.stdout.contains(" |*"), "{}", ours.stdout);
}

#[test]
fn memory_runs() {
    same(&["--memory-total-size=1M", "memory", "run"]);
    same(&[
        "--memory-total-size=1M",
        "--memory-oper=none",
        "memory",
        "run",
    ]);
    same(&[
        "--memory-total-size=2M",
        "--memory-oper=read",
        "--memory-access-mode=rnd",
        "--memory-block-size=4K",
        "--threads=2",
        "memory",
        "run",
    ]);
    same_with_intervals(&[
        "--time=2",
        "--report-interval=1",
        "--memory-total-size=0",
        "memory",
        "run",
    ]);
}

#[test]
fn threads_and_mutex_runs() {
    same(&["--events=10", "--time=0", "threads", "run"]);
    same(&[
        "--threads=2",
        "--time=1",
        "--thread-yields=100",
        "threads",
        "run",
    ]);
    same(&["--mutex-locks=100", "--mutex-loops=10", "mutex", "run"]);
    same(&[
        "--threads=2",
        "--mutex-locks=100",
        "--mutex-loops=10",
        "mutex",
        "run",
    ]);
}

/// prepare, run and cleanup in one directory per tool.
fn fileio_sequence(mode: &str) {
    fileio_sequence_with(mode, &[]);
}

fn fileio_sequence_with(mode: &str, extra: &[&str]) {
    let Some(peer) = peer() else { return };
    let drop_in = DropIn::named("sysbench");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let test_mode = format!("--file-test-mode={mode}");
    for command in ["prepare", "run", "cleanup"] {
        let mut args = vec![
            "--file-num=2",
            "--file-total-size=128K",
            test_mode.as_str(),
            "--time=0",
            "--events=50",
        ];
        args.extend_from_slice(extra);
        args.extend(["fileio", command]);
        let theirs = run_in(Path::new(peer), a.path(), &args);
        let ours = run_in(&drop_in.bin(), b.path(), &args);
        // prepare: plumb deliberately writes random (incompressible) data with large
        // O_DIRECT writes, not sysbench's zeros through its --file-extra-flags (see
        // docs/fileio.md), and says so on the line where sysbench names the open flags.
        let prepare_flags = |s: &str| {
            s.lines()
                .filter(|l| {
                    command != "prepare"
                        || !(l.starts_with("Extra file open flags:") || l.starts_with("Data: "))
                })
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        };
        assert_same(&args, &theirs, &ours, prepare_flags);
    }
    assert_eq!(
        std::fs::read_dir(b.path()).unwrap().count(),
        0,
        "cleanup leaves nothing"
    );
}

#[test]
fn fileio_random_modes() {
    for mode in ["rndrw", "rndrd", "rndwr"] {
        fileio_sequence(mode);
    }
}

#[test]
fn fileio_sequential_modes() {
    for mode in ["seqwr", "seqrewr", "seqrd"] {
        fileio_sequence(mode);
    }
}

#[test]
fn fileio_io_modes_and_fsync_options() {
    fileio_sequence_with("rndrd", &["--file-io-mode=async"]);
    fileio_sequence_with("rndwr", &["--file-io-mode=mmap"]);
    if direct_io_works() {
        fileio_sequence_with("rndrw", &["--file-extra-flags=direct"]);
    } else {
        eprintln!("skipped --file-extra-flags=direct: the temporary directory refuses O_DIRECT");
    }
    fileio_sequence_with("seqwr", &["--file-fsync-all"]);
    fileio_sequence_with("seqrd", &["--file-merged-requests=4"]);
    fileio_sequence_with(
        "rndwr",
        &["--file-fsync-freq=0", "--file-fsync-end=off", "--threads=2"],
    );
    fileio_sequence_with("rndwr", &["--file-fsync-mode=fdatasync"]);
}

/// Whether files in a temporary directory open with O_DIRECT (tmpfs refuses it, and the
/// two tools then fail in their own words).
fn direct_io_works() -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = TempDir::new().unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_DIRECT)
        .open(dir.path().join("probe"))
        .is_ok()
}

#[test]
fn fileio_prepare_ignores_the_test_mode() {
    // sysbench checks --file-test-mode for run only: prepare and cleanup go ahead.
    fileio_sequence("foo");
}

#[test]
fn json_format_keeps_stdout_for_the_document() {
    let drop_in = DropIn::named("sysbench");
    let dir = TempDir::new().unwrap();
    let out = run_in(
        &drop_in.bin(),
        dir.path(),
        &[
            "--format=json",
            "--events=3",
            "--time=0",
            "--cpu-max-prime=500",
            "cpu",
            "run",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["groups"][0]["jobs"][0]["events"], 3);
    assert_eq!(out.stderr, "");
    // A refusal goes to stderr then, with sysbench's words and status.
    let out = run_in(
        &drop_in.bin(),
        dir.path(),
        &["--format=json", "--cpu-max-prime=-1", "cpu", "run"],
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "FATAL: Invalid value of cpu-max-prime: -1.\n");
}

#[test]
fn plumb_sections_only_when_asked() {
    let drop_in = DropIn::named("sysbench");
    let dir = TempDir::new().unwrap();
    let json = dir.path().join("r.json");
    let json_arg = format!("--json={}", json.display());
    let base = [
        "--events=5",
        "--time=0",
        "--cpu-max-prime=500",
        json_arg.as_str(),
    ];

    let quiet = run_in(
        &drop_in.bin(),
        dir.path(),
        &[&base[..], &["cpu", "run"]].concat(),
    );
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert!(quiet.stdout.starts_with(&format!(
        "sysbench 1.0.20 (plumb {})\n\n",
        env!("CARGO_PKG_VERSION")
    )));
    let last = quiet.stdout.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("    execution time (avg/stddev):"),
        "{}",
        quiet.stdout
    );
    assert!(!quiet.stdout.contains("Findings:"));
    assert!(!quiet.stdout.contains("Observed during the run:"));
    assert_eq!(quiet.stderr, "");
    // The JSON result carries them regardless.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(doc["groups"][0]["jobs"][0]["findings"].is_array());
    assert!(doc["groups"][0]["observations"].is_object());
    assert_eq!(doc["command_line"][0], "sysbench");

    let asked = run_in(
        &drop_in.bin(),
        dir.path(),
        &[&base[..], &["--plumb-findings=on", "cpu", "run"]].concat(),
    );
    assert_eq!(asked.code, 0, "{}", asked.stderr);
    assert!(
        asked.stdout.contains("Observed during the run:"),
        "{}",
        asked.stdout
    );
    // The findings of this run, which wrote the same JSON file again.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let any_finding = !doc["groups"][0]["jobs"][0]["findings"]
        .as_array()
        .unwrap()
        .is_empty();
    assert_eq!(
        asked.stdout.contains("Findings:"),
        any_finding,
        "{}",
        asked.stdout
    );
}

#[test]
fn the_name_plumb_keeps_plumb_texts() {
    let (code, out, _) = common::run(&["--events=3", "--time=0", "cpu", "run"]);
    assert_eq!(code, 0);
    assert!(out.starts_with(&format!(
        "plumb {} (sysbench 1.0 compatible)\n\n",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(out.contains("Observed during the run:"), "{out}");
    let (code, out, _) = common::run(&["--version"]);
    assert_eq!(
        (code, out.trim()),
        (0, format!("plumb {}", env!("CARGO_PKG_VERSION")).as_str())
    );
    let (code, _, err) = common::run(&["--threads=abc", "cpu", "run"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("plumb: "), "{err}");
    // Off by request under the name plumb too.
    let (code, out, _) = common::run(&[
        "--events=3",
        "--time=0",
        "--plumb-findings=off",
        "cpu",
        "run",
    ]);
    assert_eq!(code, 0);
    assert!(
        !out.contains("Findings:") && !out.contains("Observed during the run:"),
        "{out}"
    );
}

#[test]
fn a_lua_script_on_stdin_is_refused_in_one_line() {
    let drop_in = DropIn::named("sysbench");
    let out = assert_cmd::Command::new(drop_in.bin())
        .write_stdin("print('test')\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("sysbench 1.0.20 (plumb "), "{stdout}");
    assert!(
        lines[2].starts_with("FATAL: ") && lines[2].contains("not Lua scripts"),
        "{stdout}"
    );
}

/// The first line starting with `prefix` of a fileio run with `option` on a small file set
/// each tool prepares in its own directory: sysbench's, then plumb's as sysbench.
fn fileio_run_line(option: &str, prefix: &str) -> Option<(Option<String>, Option<String>)> {
    let peer = peer()?;
    let args = [
        "--file-num=1",
        "--file-total-size=64K",
        "--file-test-mode=rndrd",
        option,
        "--time=0",
        "--events=10",
        "fileio",
    ];
    let line = |bin: &Path| {
        let dir = TempDir::new().unwrap();
        let mut prep = args.to_vec();
        prep.push("prepare");
        run_in(bin, dir.path(), &prep);
        let mut r = args.to_vec();
        r.push("run");
        let out = run_in(bin, dir.path(), &r);
        out.stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .map(str::to_string)
    };
    Some((
        line(Path::new(peer)),
        line(&DropIn::named("sysbench").bin()),
    ))
}

#[test]
fn the_rw_ratio_line_shows_the_option_in_every_random_mode() {
    let Some((theirs, ours)) = fileio_run_line("--file-rw-ratio=2", "Read/Write ratio") else {
        return;
    };
    assert_eq!(
        theirs.as_deref(),
        Some("Read/Write ratio for combined random IO test: 2.00")
    );
    assert_eq!(ours, theirs);
}

/// The open flags line: sysbench writes "sync " and "dsync " with a trailing space and
/// "directio" without one.
#[test]
fn the_open_flags_line_as_sysbench_spells_it() {
    for flags in [
        "sync",
        "dsync",
        "sync,dsync",
        "direct",
        "dsync,direct",
        "sync,dsync,direct",
    ] {
        let option = format!("--file-extra-flags={flags}");
        let Some((theirs, ours)) = fileio_run_line(&option, "Extra file open flags") else {
            return;
        };
        assert!(theirs.is_some(), "{flags}");
        assert_eq!(ours, theirs, "{flags}");
    }
}

/// fileio's --validate: "Validation checks: on." stands in sysbench's general header, after
/// the thread count and before the random generator's line, not in fileio's own lines.
#[test]
fn validation_line_in_the_general_header() {
    let Some(peer) = peer() else { return };
    let drop_in = DropIn::named("sysbench");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let args = [
        "--validate",
        "--file-num=2",
        "--file-total-size=1M",
        "--file-test-mode=rndrw",
        "--rand-seed=5",
        "--time=0",
        "--events=50",
        "fileio",
    ];
    let header = |dir: &Path, bin: &Path| {
        let mut prep = args.to_vec();
        prep.push("prepare");
        run_in(bin, dir, &prep);
        let mut r = args.to_vec();
        r.push("run");
        let out = run_in(bin, dir, &r);
        out.stdout
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with("Block size"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    let theirs = header(a.path(), Path::new(peer));
    assert!(
        theirs.contains("Number of threads: 1\nValidation checks: on.\n\nInitializing"),
        "{theirs}"
    );
    assert_eq!(header(b.path(), &drop_in.bin()), theirs);
}

/// sysbench's general --validate for the tests that check nothing with it (cpu, memory,
/// threads, mutex, the OLTP scripts): "Validation checks: on." in the general header, and
/// nothing else changes; off prints nothing; a bad value is refused as sysbench refuses it.
#[test]
fn validate_for_a_test_that_checks_nothing_is_sysbench_s_header_line() {
    for v in [
        "--validate",
        "--validate=on",
        "--validate=off",
        "--validate=maybe",
    ] {
        // memory's events are its blocks: its size bounds the run.
        for test in ["cpu", "--memory-total-size=1M memory", "threads", "mutex"] {
            let mut args = vec![v, "--events=20", "--time=0"];
            args.extend(test.split(' '));
            args.push("run");
            same(&args);
        }
    }
    if let Some((theirs, ours)) = run_both(&["--validate", "--events=5", "--time=0", "cpu", "run"])
    {
        for out in [&theirs, &ours] {
            assert!(
                out.stdout
                    .contains("Number of threads: 1\nValidation checks: on.\n\nInitializing"),
                "{out:?}"
            );
        }
    }
    // The record keeps the line for a replay.
    let d = TempDir::new().unwrap();
    let run = [
        "--validate",
        "--events=5",
        "--time=0",
        "--json=r.json",
        "cpu",
        "run",
    ];
    let printed = run_in(&DropIn::named("sysbench").bin(), d.path(), &run);
    let plumb = assert_cmd::cargo::cargo_bin("plumb");
    let replayed = run_in(&plumb, d.path(), &["report", "r.json"]);
    assert_eq!(replayed.code, 0, "{replayed:?}");
    for out in [&printed, &replayed] {
        assert!(out.stdout.contains("Validation checks: on."), "{out:?}");
    }
    let Some(db) = empty_database("mysql", "plumb_dropin_validate") else {
        return;
    };
    let db_opt = format!("--mysql-db={db}");
    let base = [
        "--mysql-user=root",
        &db_opt,
        "oltp_point_select",
        "--table-size=100",
    ];
    let mut prepare = base.to_vec();
    prepare.push("prepare");
    let o = run_in(Path::new(PEER), Path::new("."), &prepare);
    assert_eq!(o.code, 0, "{o:?}");
    let mut run = base.to_vec();
    run.extend(["--validate", "--events=20", "--time=0", "run"]);
    same(&run);
    drop_database("mysql", db);
}

/// --verbosity below 3 prints no banner and no report, only errors (and warnings from 2 up);
/// out-of-range and non-numeric values are refused as sysbench refuses them.
#[test]
fn verbosity_levels_as_sysbench_prints_them() {
    for v in ["--verbosity=0", "--verbosity=1", "--verbosity=2"] {
        same(&[v, "--events=20", "--time=0", "cpu", "run"]);
        same(&[v, "--events=20", "--time=0", "--threads=2", "mutex", "run"]);
        // sysbench's own suite: no file set prepared.
        same(&[
            v,
            "--file-num=2",
            "--file-total-size=1M",
            "--file-test-mode=rndrw",
            "fileio",
            "run",
        ]);
    }
    for bad in ["--verbosity=9", "--verbosity=x", "--verbosity"] {
        same(&[bad, "cpu", "run"]);
    }
    same(&["--verbosity=3", "--events=20", "--time=0", "cpu", "run"]);
}

/// Runs of `DEBUG:` lines in order: sysbench's threads log them as they get to it, so
/// their order varies from run to run (figures masked first, so the per-thread figures
/// sort the same in both tools).
fn debug_runs_sorted(out: &str) -> String {
    let masked = mask(out);
    let mut lines: Vec<&str> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for l in masked.lines() {
        if l.starts_with("DEBUG: ") {
            run.push(l);
            continue;
        }
        run.sort_unstable();
        lines.append(&mut run);
        lines.push(l);
    }
    run.sort_unstable();
    lines.append(&mut run);
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// sysbench's info level (4) and debug level (5), and --debug (debug level, a header line
/// and each thread's figures after the report): the test's "Doing ..." lines, each helper
/// and worker thread as it starts, each file fileio opens, how the workers ended (a time or
/// event limit, said by each thread and folded by sysbench's logger, or nothing when the
/// work ran out), then "Done.".
#[test]
fn info_and_debug_levels_as_sysbench_prints_them() {
    let cases: &[&[&str]] = &[
        &["--verbosity=4", "--threads=2", "--time=1", "cpu", "run"],
        &[
            "--verbosity=5",
            "--threads=2",
            "--events=50",
            "--time=0",
            "cpu",
            "run",
        ],
        &["--verbosity=4", "--threads=3", "--time=1", "threads", "run"],
        &["--verbosity=5", "--threads=2", "mutex", "run"],
        &[
            "--verbosity=4",
            "--threads=2",
            "--memory-total-size=1M",
            "memory",
            "run",
        ],
        &["--verbosity=5", "--threads=2", "--time=1", "memory", "run"],
        &["--debug", "--threads=2", "--time=1", "cpu", "run"],
        // Threads that ran no event: all their figures 0.
        &[
            "--debug=on",
            "--threads=3",
            "--events=1",
            "--time=0",
            "cpu",
            "run",
        ],
        &[
            "--verbosity=2",
            "--debug",
            "--events=10",
            "--time=0",
            "threads",
            "run",
        ],
    ];
    for args in cases {
        if let Some((theirs, ours)) = run_both(args) {
            assert_same(args, &theirs, &ours, debug_runs_sorted);
        }
    }
    // The reporting and --rate's scheduling threads; the interval lines' place among the
    // ending lines is timing, so they are left out.
    let args = &[
        "--verbosity=5",
        "--rate=100",
        "--report-interval=1",
        "--time=1",
        "cpu",
        "run",
    ];
    if let Some((theirs, ours)) = run_both(args) {
        let helpers = [
            "DEBUG: Reporting thread started",
            "DEBUG: Event generating thread started",
        ];
        for out in [&theirs.stdout, &ours.stdout] {
            for h in helpers {
                assert_eq!(out.lines().filter(|l| *l == h).count(), 1, "{h}: {out}");
            }
        }
        let without = |s: &str| {
            let kept: String = s
                .lines()
                .filter(|l| !l.starts_with("[ ") && !helpers.contains(l))
                .map(|l| format!("{l}\n"))
                .collect();
            debug_runs_sorted(&kept)
        };
        assert_same(args, &theirs, &ours, without);
    }
    let files = ["--file-num=3", "--file-total-size=3M", "fileio"];
    for run in [
        &[
            "--verbosity=5",
            "--threads=2",
            "--time=1",
            "--file-test-mode=rndrw",
        ][..],
        &["--verbosity=4", "--file-test-mode=seqwr"],
        &[
            "--verbosity=4",
            "--events=20",
            "--time=0",
            "--file-test-mode=rndrd",
        ],
    ] {
        let run = [run, &files[..], &["run"]].concat();
        same_after_prepare_with(
            &[&files[..], &["prepare"]].concat(),
            &run,
            debug_runs_sorted,
        );
    }
}

/// An OLTP run at the info level: its threads' ending lines and "Done." as sysbench's, and
/// after an error that stopped the run once its threads had started (a user who may read
/// the table but not update it, statements sent as text), the error's lines, then "Done.".
#[test]
fn an_oltp_run_at_the_info_level_says_done_even_after_an_error() {
    let Some(db) = empty_database("mysql", "plumb_dropin_info") else {
        return;
    };
    common::mysql(&format!(
        "CREATE USER IF NOT EXISTS plumb_readonly@localhost; \
         GRANT SELECT ON {db}.* TO plumb_readonly@localhost"
    ));
    let db_opt = format!("--mysql-db={db}");
    let table = ["oltp_update_index", "--table-size=10", &db_opt];
    let d = TempDir::new().unwrap();
    let o = run_in(
        Path::new(PEER),
        d.path(),
        &[&table[..], &["--mysql-user=root", "prepare"]].concat(),
    );
    assert_eq!(o.code, 0, "{o:?}");
    same(
        &[
            &table[..],
            &["--mysql-user=root", "--verbosity=4", "--time=1", "run"],
        ]
        .concat(),
    );
    let refused = [
        &table[..],
        &[
            "--mysql-user=plumb_readonly",
            "--db-ps-mode=disable",
            "--verbosity=4",
            "run",
        ],
    ]
    .concat();
    if let Some((theirs, ours)) = run_both(&refused) {
        assert!(theirs.stdout.ends_with("Done.\n\n"), "{}", theirs.stdout);
        assert_same(&refused, &theirs, &ours, |s| s.to_string());
    }
    drop_database("mysql", db);
    common::mysql("DROP USER IF EXISTS plumb_readonly@localhost");
}

/// The debug lines plumb does not print yet are refused for the runs that would print them,
/// in one line on stderr, and nothing runs: the OLTP scripts' (one for each ignored error
/// and reconnect) and fileio's under --debug (one for each request). Their other commands
/// print no debug lines in sysbench and run.
#[test]
fn debug_lines_plumb_cannot_print_are_refused() {
    let drop_in = DropIn::named("sysbench");
    let d = TempDir::new().unwrap();
    for (args, words) in [
        (
            &["--verbosity=5", "oltp_read_write", "run"][..],
            "--verbosity=5 is not supported yet for the OLTP scripts' run",
        ),
        (
            &["--debug", "--db-driver=pgsql", "oltp_point_select", "run"],
            "--debug is not supported yet for the OLTP scripts' run",
        ),
        (
            &["--debug", "--file-test-mode=rndrd", "fileio", "run"],
            "--debug is not supported yet for fileio's run",
        ),
    ] {
        let ours = run_in(&drop_in.bin(), d.path(), args);
        assert_eq!(ours.code, 1, "{args:?} {ours:?}");
        assert!(ours.stderr.starts_with(words), "{args:?} {ours:?}");
        assert_eq!(ours.stderr.lines().count(), 1, "{ours:?}");
        assert!(!ours.stdout.contains("Threads started"), "{ours:?}");
    }
    let files = ["--file-num=2", "--file-total-size=1M", "fileio"];
    for command in ["prepare", "cleanup"] {
        let ours = run_in(
            &drop_in.bin(),
            d.path(),
            &[&["--debug"], &files[..], &[command]].concat(),
        );
        assert_eq!(ours.code, 0, "{command}: {ours:?}");
    }
    assert!(!d.path().join("test_file.0").exists());
}

/// An option sysbench has and plumb does not take is named as unsupported, one line on
/// stderr, exit 1, nothing run; a name sysbench does not know stays sysbench's "invalid
/// option".
#[test]
fn sysbench_options_plumb_lacks_are_unsupported_not_invalid() {
    let drop_in = DropIn::named("sysbench");
    let d = TempDir::new().unwrap();
    for (args, name) in [
        (&["--db-debug", "oltp_point_select", "run"][..], "db-debug"),
        (
            &["--thread-stack-size=64K", "threads", "run"][..],
            "thread-stack-size",
        ),
    ] {
        let ours = run_in(&drop_in.bin(), d.path(), args);
        assert_eq!(ours.code, 1, "{ours:?}");
        assert_eq!(
            ours.stderr,
            format!("--{name} is a sysbench option plumb does not support yet\n")
        );
        assert!(!ours.stdout.contains("Threads started"), "{ours:?}");
    }
    let ours = run_in(
        &drop_in.bin(),
        d.path(),
        &["--cpu-max-prime=5", "memory", "run"],
    );
    assert_eq!(ours.stderr, "invalid option: --cpu-max-prime=5\n");
}

/// --config-file: the file's options stand where the option does (a later one wins), in
/// sysbench's format (comments, lists, quotes); the run is sysbench's.
#[test]
fn config_file_options_as_sysbench_reads_them() {
    let d = TempDir::new().unwrap();
    let f = d.path().join("sb.conf");
    std::fs::write(
        &f,
        "# cpu test\nthreads=2\nevents=40 # a comment\ntime='0'\ncpu-max-prime=500\n",
    )
    .unwrap();
    let opt = format!("--config-file={}", f.display());
    same(&[&opt, "cpu", "run"]);
    same(&["--events=10", &opt, "--threads=1", "cpu", "run"]);
    // A file that cannot be read: one line, nothing runs (sysbench prints perror's line and
    // runs without the options).
    let drop_in = DropIn::named("sysbench");
    let ours = run_in(
        &drop_in.bin(),
        d.path(),
        &["--config-file=missing.conf", "cpu", "run"],
    );
    assert_eq!(ours.code, 1);
    assert_eq!(ours.stdout, "");
    assert!(
        ours.stderr
            .starts_with("--config-file: cannot read missing.conf: No such file"),
        "{ours:?}"
    );
}

/// Run `prepare` in each tool's own directory, then compare the two tools on `run`.
fn same_after_prepare(prepare: &[&str], run: &[&str]) {
    same_after_prepare_with(prepare, run, |s| s.to_string());
}

/// [`same_after_prepare`], comparing what `keep` keeps of each output.
fn same_after_prepare_with(prepare: &[&str], run: &[&str], keep: impl Fn(&str) -> String) {
    let Some(peer) = peer() else { return };
    let drop_in = DropIn::named("sysbench");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    for (bin, dir) in [(Path::new(peer), a.path()), (&*drop_in.bin(), b.path())] {
        let out = run_in(bin, dir, prepare);
        assert_eq!(out.code, 0, "{prepare:?}: {out:?}");
    }
    let theirs = run_in(Path::new(peer), a.path(), run);
    let ours = run_in(&drop_in.bin(), b.path(), run);
    assert_same(run, &theirs, &ours, keep);
}

/// A run on a file set that is missing, or smaller than the run needs: sysbench prints the
/// run's header, then finds out when it opens the files, and says which file and why (its
/// warning from verbosity 2 up, the header at 3, each file it opened at 5).
#[test]
fn fileio_run_on_a_missing_or_short_file_set_prints_the_header_first() {
    for mode in ["--file-test-mode=rndrw", "--file-test-mode=seqrd"] {
        same(&[
            "--file-num=2",
            "--file-total-size=1M",
            mode,
            "fileio",
            "run",
        ]);
    }
    let prepare = ["--file-num=1", "--file-total-size=1M", "fileio", "prepare"];
    for v in ["--verbosity=3", "--verbosity=2", "--verbosity=1"] {
        // Each file smaller than the set needs.
        same_after_prepare(
            &prepare,
            &[
                v,
                "--file-num=1",
                "--file-total-size=2M",
                "--file-test-mode=rndrd",
                "fileio",
                "run",
            ],
        );
    }
    // The first file large enough, the second one missing; at the debug level each file
    // opened says so before the refusal.
    for v in ["--verbosity=3", "--verbosity=5"] {
        same_after_prepare(
            &prepare,
            &[
                v,
                "--file-num=2",
                "--file-total-size=2M",
                "--file-test-mode=seqrd",
                "fileio",
                "run",
            ],
        );
    }
}

/// A new empty database on `server` ("mysql": MariaDB, "pgsql": PostgreSQL) for a test
/// that compares with the peer, or None (with the peer's or the server's absence said) when
/// either is missing outside CI.
fn empty_database(server: &str, db: &'static str) -> Option<&'static str> {
    if peer().is_none() || !common::available(server) {
        return None;
    }
    drop_database(server, db);
    match server {
        "mysql" => common::mysql(&format!("CREATE DATABASE {db}")),
        _ => common::psql("postgres", &format!("CREATE DATABASE {db}")),
    };
    Some(db)
}

/// A PostgreSQL role that may log in, with no other right, unless it exists already.
fn pg_login_role(name: &str) {
    common::psql(
        "postgres",
        &format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{name}') \
             THEN CREATE ROLE {name} LOGIN; END IF; END $$"
        ),
    );
}

fn drop_database(server: &str, db: &str) {
    match server {
        "mysql" => common::mysql(&format!("DROP DATABASE IF EXISTS {db}")),
        _ => common::psql("postgres", &format!("DROP DATABASE IF EXISTS {db}")),
    };
}

/// A prepare's multi-row INSERT the server refuses (a user who may create tables but not
/// insert into them): the driver's line quoting the statement, cut where sysbench's log
/// buffer cuts it, then the Lua error of the bulk-insert call that sent it:
/// db_bulk_insert_next when the statement filled up (10 000 rows), db_bulk_insert_done for
/// the table's last rows (100). MariaDB and PostgreSQL.
#[test]
fn a_refused_bulk_insert_prints_sysbench_s_lines() {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut cases: Vec<(&str, &str, Vec<String>)> = Vec::new();
    if let Some(db) = empty_database("mysql", "plumb_dropin_noinsert") {
        common::mysql(&format!(
            "CREATE USER IF NOT EXISTS plumb_noinsert@localhost; \
             GRANT CREATE, DROP, SELECT, INDEX ON {db}.* TO plumb_noinsert@localhost"
        ));
        let args = own(&["--mysql-user=plumb_noinsert", &format!("--mysql-db={db}")]);
        cases.push(("mysql", db, args));
    }
    if let Some(db) = empty_database("pgsql", "plumb_dropin_noinsert") {
        pg_login_role("plumb_noinsert");
        // The owner of the tables it creates, without the right to insert into them.
        common::psql(
            db,
            "GRANT CREATE ON SCHEMA public TO plumb_noinsert; \
             ALTER DEFAULT PRIVILEGES FOR ROLE plumb_noinsert REVOKE INSERT ON TABLES FROM plumb_noinsert",
        );
        let args = own(&[
            "--db-driver=pgsql",
            "--pgsql-user=plumb_noinsert",
            "--pgsql-host=/var/run/postgresql",
            &format!("--pgsql-db={db}"),
        ]);
        cases.push(("pgsql", db, args));
    }
    let drop_table = |server: &str, db: &str| match server {
        "mysql" => common::mysql(&format!("DROP TABLE IF EXISTS {db}.sbtest1")),
        _ => common::psql(db, "DROP TABLE IF EXISTS sbtest1"),
    };
    // What precedes the statement's rows, how far its cut line runs, and what follows.
    let parts = |out: &str| -> (String, usize, String) {
        let body = out.split_once('\n').map_or(out, |(_, rest)| rest);
        let rows = body.find("VALUES(").expect(out);
        let lua = body
            .find("FATAL: `sysbench.cmdline.call_command'")
            .expect(out);
        (
            body[..rows].to_string(),
            lua - rows,
            body[lua..].to_string(),
        )
    };
    let d = TempDir::new().unwrap();
    for (server, db, base) in &cases {
        for (rows, call) in [("100", "done"), ("10000", "next")] {
            let mut args = base.clone();
            args.extend(own(&[
                "oltp_read_write",
                &format!("--table-size={rows}"),
                "prepare",
            ]));
            let theirs = run_in(Path::new(PEER), d.path(), &args);
            drop_table(server, db);
            let ours = run_in(&DropIn::named("sysbench").bin(), d.path(), &args);
            drop_table(server, db);
            let line = if rows == "100" { 233 } else { 230 };
            assert!(
                theirs.stdout.ends_with(&format!(
                    "oltp_common.lua:{line}: db_bulk_insert_{call}() failed\n"
                )),
                "{args:?}: {}",
                theirs.stdout
            );
            assert_eq!(parts(&theirs.stdout), parts(&ours.stdout), "{args:?}");
            assert_eq!(theirs.stderr, ours.stderr, "{args:?}");
            assert_eq!((theirs.code, ours.code), (1, 1), "{args:?}");
        }
        drop_database(server, db);
        match *server {
            "mysql" => common::mysql("DROP USER IF EXISTS plumb_noinsert@localhost"),
            _ => common::psql("postgres", "DROP ROLE IF EXISTS plumb_noinsert"),
        };
    }
}

/// bulk_insert's prepare refused its CREATE TABLE IF NOT EXISTS (a user who may only read):
/// the driver's lines quoting bulk_insert.lua's indented text, then its line 23, exit 1.
#[test]
fn bulk_insert_s_refused_create_table_prints_sysbench_s_lines() {
    if let Some(db) = empty_database("mysql", "plumb_dropin_nocreate") {
        common::mysql(&format!(
            "CREATE USER IF NOT EXISTS plumb_nocreate@localhost; \
             GRANT SELECT ON {db}.* TO plumb_nocreate@localhost"
        ));
        same(&[
            "--mysql-user=plumb_nocreate",
            &format!("--mysql-db={db}"),
            "bulk_insert",
            "--threads=2",
            "prepare",
        ]);
        drop_database("mysql", db);
        common::mysql("DROP USER IF EXISTS plumb_nocreate@localhost");
    }
    if let Some(db) = empty_database("pgsql", "plumb_dropin_nocreate") {
        // PostgreSQL 15 grants no CREATE on the public schema to other roles.
        pg_login_role("plumb_nocreate");
        same(&[
            "--db-driver=pgsql",
            "--pgsql-user=plumb_nocreate",
            "--pgsql-host=/var/run/postgresql",
            &format!("--pgsql-db={db}"),
            "bulk_insert",
            "--threads=2",
            "prepare",
        ]);
        drop_database("pgsql", db);
        common::psql("postgres", "DROP ROLE IF EXISTS plumb_nocreate");
    }
}

/// An OLTP run whose tables are not there (MariaDB): sysbench prints the header and
/// "Initializing worker threads...", then each thread's thread_init fails to prepare its
/// first statement and the run gives up. One thread: two threads' lines may interleave.
#[test]
fn oltp_run_without_its_tables_prints_the_header_first() {
    let Some(db) = empty_database("mysql", "plumb_dropin_unprepared") else {
        return;
    };
    let db_opt = format!("--mysql-db={db}");
    for (script, tables) in [
        ("oltp_point_select", "--tables=1"),
        ("oltp_read_write", "--tables=2"),
        ("oltp_delete", "--tables=1"),
        ("select_random_ranges", "--tables=1"),
        ("select_random_points", "--tables=1"),
    ] {
        same(&[script, "--mysql-user=root", &db_opt, tables, "run"]);
    }
    drop_database("mysql", db);
}

/// oltp_insert and bulk_insert prepare no statement: without their tables (MariaDB) the
/// threads start, and the first INSERT fails: the driver's line with the query (bulk
/// insert's cut by sysbench's logger), the Lua error, no report.
#[test]
fn inserts_without_their_tables_fail_in_their_first_event() {
    let Some(db) = empty_database("mysql", "plumb_dropin_inserts") else {
        return;
    };
    let db_opt = format!("--mysql-db={db}");
    for script in ["oltp_insert", "bulk_insert"] {
        same(&[script, "--mysql-user=root", &db_opt, "--time=1", "run"]);
    }
    drop_database("mysql", db);
}

/// `--db-ps-mode=disable` without the tables: nothing is prepared, so sysbench's threads
/// start and the first statement fails, sent as text with its parameters written in: the
/// driver's line with the query, and the Lua line that executed it (oltp_common.lua's, or
/// the script's own), exit 1. plumb runs to the same statement rather than refusing first.
/// For MariaDB and PostgreSQL in turn: a new empty database named `dbs` (mysql's, pgsql's),
/// the drop-in's options that reach it handed to `check`, then the database dropped. A
/// server (or the peer) that is missing outside CI is skipped, as [`empty_database`] says.
fn on_each_empty_server(dbs: [&'static str; 2], mut check: impl FnMut(&[&str])) {
    for (driver, db) in [("mysql", dbs[0]), ("pgsql", dbs[1])] {
        let Some(db) = empty_database(driver, db) else {
            continue;
        };
        let server: Vec<String> = if driver == "mysql" {
            vec!["--mysql-user=root".into(), format!("--mysql-db={db}")]
        } else {
            vec![
                "--db-driver=pgsql".into(),
                "--pgsql-user=postgres".into(),
                "--pgsql-host=127.0.0.1".into(),
                format!("--pgsql-db={db}"),
            ]
        };
        check(&server.iter().map(String::as_str).collect::<Vec<_>>());
        drop_database(driver, db);
    }
}

#[test]
fn runs_without_prepared_statements_fail_at_their_first_statement() {
    on_each_empty_server(["plumb_dropin_text_my", "plumb_dropin_text_pg"], |server| {
        for script in [
            &["oltp_point_select"][..],
            &["oltp_read_only", "--tables=2"],
            &["oltp_write_only"],
            &["oltp_update_non_index"],
            &["oltp_delete"],
            &["select_random_points"],
            &["select_random_ranges"],
        ] {
            same(&[server, script, &["--db-ps-mode=disable", "--time=1", "run"]].concat());
        }
    });
}

/// bulk_insert with fewer rows than one packet sends them all from its thread_done: without
/// the table that last flush fails, and sysbench logs it, counts the failed query as an
/// ignored error, and still prints its report (status 0). One thread: with several, which
/// of them got rows to flush (and so failed) is a race in sysbench. At the info level the
/// thread's event limit line comes before what its thread_done said, then "Done.".
#[test]
fn a_bulk_insert_whose_last_flush_fails_still_reports() {
    on_each_empty_server(
        ["plumb_dropin_bulk_end_my", "plumb_dropin_bulk_end_pg"],
        |server| {
            for verbosity in ["--verbosity=3", "--verbosity=4"] {
                let args = [server, &["bulk_insert", "--events=10", verbosity, "run"]].concat();
                if let Some((theirs, ours)) = run_both(&args) {
                    assert_eq!(theirs.code, 0, "{theirs:?}");
                    assert!(
                        theirs.stdout.contains("`thread_done' function failed"),
                        "{}",
                        theirs.stdout
                    );
                    assert_same(&args, &theirs, &ours, |s| s.to_string());
                }
            }
        },
    );
}

/// Every script on PostgreSQL without its tables. The prepared ones: each thread's
/// thread_init logs libpq's message for every statement the server refuses (where in the
/// statement, shown as libpq shows it; a second thread's same message is counted, not
/// repeated), the threads start, and sysbench dies of SIGSEGV running a statement that was
/// never prepared (139; plumb fails with 1). The inserts: the first one fails, exit 1. One
/// thread where several would interleave their lines.
#[test]
fn postgresql_runs_without_their_tables_end_as_sysbench_s() {
    let Some(db) = empty_database("pgsql", "plumb_dropin_pg_unprepared") else {
        return;
    };
    let db_opt = format!("--pgsql-db={db}");
    let pg = [
        "--db-driver=pgsql",
        "--pgsql-user=postgres",
        "--pgsql-host=127.0.0.1",
        &db_opt,
        "--time=1",
    ];
    for script in [
        &["oltp_read_write", "--tables=2"][..],
        &["oltp_point_select", "--threads=2"],
        &["oltp_write_only"],
        &["oltp_delete"],
        &["select_random_points"],
        &["select_random_ranges"],
    ] {
        same_until_the_crash(&[&pg[..], script, &["run"]].concat());
    }
    for script in ["oltp_insert", "bulk_insert"] {
        same(&[&pg[..], &[script], &["run"]].concat());
    }
    drop_database("pgsql", db);
}

/// select_random_points and select_random_ranges read sbtest1 alone, whatever --tables
/// says: with only sbtest1 prepared, a run with --tables=4 works, as sysbench's does.
#[test]
fn select_random_runs_read_sbtest1_whatever_the_table_count() {
    if !common::available("mysql") {
        return;
    }
    let db = "plumb_dropin_random_tables";
    drop_database("mysql", db);
    common::mysql(&format!("CREATE DATABASE {db}"));
    let db_opt = format!("--mysql-db={db}");
    let base = ["--mysql-user=root", &db_opt, "--table-size=100"];
    let plumb = assert_cmd::cargo::cargo_bin("plumb");
    let d = TempDir::new().unwrap();
    let prepare = [
        &["select_random_points"],
        &base[..],
        &["--tables=1", "prepare"],
    ]
    .concat();
    let out = run_in(&plumb, d.path(), &prepare);
    assert_eq!(out.code, 0, "{out:?}");
    for script in ["select_random_points", "select_random_ranges"] {
        let run = [
            &[script],
            &base[..],
            &["--tables=4", "--events=20", "--time=0", "run"],
        ]
        .concat();
        let out = run_in(&plumb, d.path(), &run);
        assert_eq!(out.code, 0, "{out:?}");
        let events = out
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("total number of events:"));
        assert_eq!(events.map(str::trim), Some("20"), "{out:?}");
        same(&run);
    }
    drop_database("mysql", db);
    // sysbench's prepare command lays out every table (it runs oltp_common's prepare, not
    // the script's asserting one); the script's cleanup refuses more than one.
    common::mysql(&format!("CREATE DATABASE {db}"));
    let two = [&["select_random_points"], &base[..], &["--tables=2"]].concat();
    let out = run_in(&plumb, d.path(), &[&two[..], &["prepare"]].concat());
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        common::mysql(&format!("SHOW TABLES FROM {db}")),
        "sbtest1\nsbtest2\n"
    );
    same(&[&two[..], &["cleanup"]].concat());
    drop_database("mysql", db);
}

/// Below verbosity 3 an OLTP script's prepare and cleanup messages still print (they are
/// the Lua script's print()s) while the run prints nothing; fileio's are log lines and go
/// too (sysbench's own suite, script_oltp_common.sh and test_fileio.t).
#[test]
fn low_verbosity_keeps_the_oltp_scripts_own_messages() {
    let Some(db) = empty_database("mysql", "plumb_dropin_verbosity") else {
        return;
    };
    let db_opt = format!("--mysql-db={db}");
    // Each tool prepares, runs and cleans up in turn (they share the database).
    let drop_in = DropIn::named("sysbench");
    let d = TempDir::new().unwrap();
    let mut printed = Vec::new();
    for bin in [Path::new(PEER).to_path_buf(), drop_in.bin()] {
        for command in ["prepare", "run", "cleanup"] {
            let args = [
                "oltp_point_select",
                "--mysql-user=root",
                &db_opt,
                "--tables=1",
                "--table-size=100",
                "--events=20",
                "--time=0",
                "--verbosity=1",
                command,
            ];
            printed.push((args.map(str::to_string), run_in(&bin, d.path(), &args)));
        }
    }
    drop_database("mysql", db);
    let (theirs, ours) = printed.split_at(3);
    for ((args, t), (_, o)) in theirs.iter().zip(ours) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_same(&args, t, o, |s| s.to_string());
    }
    assert!(theirs[0]
        .1
        .stdout
        .contains("Inserting 100 records into 'sbtest1'"));
    same(&[
        "fileio",
        "--file-num=1",
        "--file-total-size=1M",
        "--verbosity=2",
        "prepare",
    ]);
}

/// Neither --events nor --time: sysbench's warning on stdout before its banner, whatever the
/// command and verbosity. A deprecated alias at its default (--max-time=0) is not taken, so
/// --time keeps its 10 s and there is no warning.
#[test]
fn an_endless_test_is_warned_about() {
    same(&["--events=0", "--time=0", "cpu", "help"]);
    same(&["--time=0", "--verbosity=0", "threads", "help"]);
    same(&["--max-time=0", "--events=0", "cpu", "help"]);
    same(&[
        "--num-threads=0",
        "--max-requests=0",
        "--events=3",
        "cpu",
        "run",
    ]);
    same(&[
        "--max-time=1",
        "--num-threads=2",
        "--max-requests=5",
        "--time=0",
        "cpu",
        "run",
    ]);
}

/// The interval lines of a run, masked, without repeats: their shapes.
fn interval_shapes(out: &str) -> std::collections::BTreeSet<String> {
    out.lines()
        .filter(|l| l.starts_with("[ "))
        .map(mask)
        .collect()
}

/// Like [`same_with_intervals`] where a run prints more than one kind of interval line
/// (--rate adds the queue's): each tool prints the same kinds.
fn same_interval_kinds(args: &[&str]) {
    let Some((theirs, ours)) = run_both(args) else {
        return;
    };
    let (t, o) = (
        interval_shapes(&theirs.stdout),
        interval_shapes(&ours.stdout),
    );
    assert!(!t.is_empty(), "{}", theirs.stdout);
    assert_eq!(t, o, "{args:?}\n{}\n{}", theirs.stdout, ours.stdout);
    let without = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("[ "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert_same(args, &theirs, &ours, without);
}

/// --rate's second interval line: `queue length: N concurrency: N` for the tests on
/// sysbench's common report, none for fileio and memory, which have their own.
/// --percentile=0 keeps the latency field, with 0% and an empty histogram's value.
#[test]
fn rate_and_percentile_0_interval_lines() {
    for test in ["cpu", "threads"] {
        same_interval_kinds(&[test, "--rate=200", "--report-interval=1", "--time=2", "run"]);
        same_interval_kinds(&[
            test,
            "--percentile=0",
            "--report-interval=1",
            "--time=2",
            "run",
        ]);
    }
    same_interval_kinds(&[
        "memory",
        "--rate=200",
        "--report-interval=1",
        "--time=2",
        "run",
    ]);
    // The queue's length depends on how the host keeps pace (CI saw 2 where an idle host
    // sees 0), so only the line's words and their order are checked, in both tools.
    if let Some((theirs, ours)) = run_both(&[
        "cpu",
        "--rate=200",
        "--report-interval=1",
        "--time=2",
        "run",
    ]) {
        for out in [&theirs.stdout, &ours.stdout] {
            let queue_line = |l: &&str| {
                let Some(rest) = l.split("] queue length: ").nth(1) else {
                    return false;
                };
                let mut words = rest.split(' ');
                let number = |w: Option<&str>| w.is_some_and(|w| w.parse::<u64>().is_ok());
                number(words.next()) && words.next() == Some("concurrency:") && number(words.next())
            };
            assert!(out.lines().any(|l| queue_line(&l)), "{out}");
        }
    }
    let d = TempDir::new().unwrap();
    let files = ["fileio", "--file-num=1", "--file-total-size=1M"];
    if let Some(peer) = peer() {
        let drop_in = DropIn::named("sysbench");
        let mut kinds = Vec::new();
        for bin in [Path::new(peer).to_path_buf(), drop_in.bin()] {
            let o = run_in(&bin, d.path(), &[&files[..], &["prepare"]].concat());
            assert_eq!(o.code, 0, "{o:?}");
            let mut shapes = std::collections::BTreeSet::new();
            for extra in [&["--rate=200"][..], &["--percentile=0"]] {
                let args = [
                    &files[..],
                    extra,
                    &[
                        "--file-test-mode=rndrd",
                        "--report-interval=1",
                        "--time=2",
                        "run",
                    ],
                ]
                .concat();
                let o = run_in(&bin, d.path(), &args);
                assert_eq!(o.code, 0, "{o:?}");
                shapes.extend(interval_shapes(&o.stdout));
            }
            kinds.push(shapes);
            run_in(&bin, d.path(), &[&files[..], &["cleanup"]].concat());
        }
        assert_eq!(kinds[0], kinds[1]);
    }
}

/// A --rate the workers fall 131 072 events behind (sysbench's event queue) fails the run:
/// sysbench's FATAL line, no report, status 1 (sysbench's own suite, opt_rate.t, runs the
/// first line). Under plumb's name, one line on stderr that says how far behind.
#[test]
fn a_rate_the_workers_cannot_keep_up_with_fails_the_run() {
    same(&["--rate=2000000000", "cpu", "run", "--verbosity=1"]);
    same(&["cpu", "--rate=2000000000", "--threads=2", "--time=5", "run"]);
    let d = TempDir::new().unwrap();
    let o = run_in(
        Path::new(env!("CARGO_BIN_EXE_plumb")),
        d.path(),
        &[
            "cpu",
            "--rate=2000000000",
            "--time=5",
            "--no-history",
            "run",
        ],
    );
    assert_eq!(o.code, 1, "{o:?}");
    let last = o.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("plumb: the workers cannot keep up with the rate asked for: ")
            && last.ends_with(" events were due and not started, over the limit of 131072"),
        "{o:?}"
    );
    assert!(!o.stdout.contains("General statistics"), "{}", o.stdout);
}

/// An OLTP run with --rate (`queue length: N, concurrency: N`, with a comma), with
/// --percentile=0 (`lat (ms,0%): 0.00`), and with --mysql-ignore-errors items that name no
/// error, which sysbench reads with atoi() and runs with.
#[test]
fn oltp_interval_lines_and_ignore_lists_as_sysbench_s() {
    let Some(db) = empty_database("mysql", "qa_fix_dropin_oltp_lines") else {
        return;
    };
    let db_opt = format!("--mysql-db={db}");
    let base = [
        "oltp_point_select",
        "--mysql-user=root",
        &db_opt,
        "--table-size=1000",
    ];
    let d = TempDir::new().unwrap();
    let o = run_in(
        Path::new(PEER),
        d.path(),
        &[&base[..], &["prepare"]].concat(),
    );
    assert_eq!(o.code, 0, "{o:?}");
    for extra in [&["--rate=100"][..], &["--percentile=0"]] {
        same_interval_kinds(
            &[
                &base[..],
                extra,
                &["--report-interval=1", "--time=2", "run"],
            ]
            .concat(),
        );
    }
    same(
        &[
            &base[..],
            &[
                "--mysql-ignore-errors=abc,12x",
                "--events=5",
                "--time=0",
                "run",
            ],
        ]
        .concat(),
    );
    drop_database("mysql", db);
}

/// The lines of a report that say what a run took from its command line: its threads, its
/// rate and its event count, unmasked.
fn took(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| {
            l.starts_with("Number of threads:")
                || l.starts_with("Target transaction rate:")
                || l.trim_start().starts_with("total number of events:")
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// A deprecated alias with its new name, in either order: sysbench reads the alias first
/// and takes it when it is above its default (1 thread, else 0), without reading the new
/// name at all (a bad value there goes unnoticed); otherwise it reads the new name. Each
/// value is checked when read, under the name it was typed as, so which bad value is
/// reported, and which warnings come before it, follow sysbench's order of reading.
#[test]
fn an_alias_and_its_new_name_as_sysbench_reads_them() {
    let base = ["cpu", "--cpu-max-prime=500", "run"];
    for opts in [
        &["--num-threads=2", "--threads=3", "--events=40"][..],
        &["--threads=3", "--num-threads=2", "--events=40"],
        &["--num-threads=1", "--threads=3", "--events=40"],
        &["--max-requests=5", "--events=7"],
        &["--events=7", "--max-requests=5"],
        &["--max-requests=0", "--events=7"],
        &["--tx-rate=400", "--rate=300", "--events=5"],
        &["--rate=300", "--tx-rate=400", "--events=5"],
        &["--tx-rate=0", "--rate=300", "--events=5"],
        &["--max-requests=3", "--events=abc"],
        &["--max-time=1", "--time=abc", "--events=3"],
    ] {
        let args: Vec<&str> = opts.iter().chain(&base).copied().collect();
        if let Some((theirs, ours)) = run_both(&args) {
            assert_same(&args, &theirs, &ours, |s| s.to_string());
            assert_eq!(took(&theirs.stdout), took(&ours.stdout), "{args:?}");
        }
    }
    // Time limits, by the run's length (its figures are masked).
    for opts in [
        ["--max-time=1", "--time=2"],
        ["--time=2", "--max-time=1"],
        ["--time=1", "--max-time=0"],
    ] {
        let args: Vec<&str> = opts.iter().chain(&base).copied().collect();
        if let Some((theirs, ours)) = run_both(&args) {
            assert_same(&args, &theirs, &ours, |s| s.to_string());
            let secs = |o: &Output| {
                o.stdout
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("total time:"))
                    .map(|t| {
                        t.trim()
                            .trim_end_matches('s')
                            .parse::<f64>()
                            .unwrap()
                            .round()
                    })
            };
            assert_eq!(secs(&theirs), Some(1.0), "{}", theirs.stdout);
            assert_eq!(secs(&ours), Some(1.0), "{}", ours.stdout);
        }
    }
    // Bad values: the first one sysbench reads, under the name typed, after the warnings
    // of what it read before.
    for opts in [
        &["--max-time=abc", "--time=1"][..],
        &["--threads=abc", "--max-time=abc"],
        &["--max-time=abc", "--threads=abc"],
        &["--num-threads=abc", "--threads=2"],
        &["--max-time=1", "--tx-rate=abc"],
        &["--max-time=1", "--verbosity=abc"],
        &["--max-time=1", "--report-interval=abc"],
        &["--rand-type=foo", "--rand-seed=abc"],
        &["--threads=1.5"],
        &["--num-threads=2.5"],
        &["--test=cpu", "--max-time=abc"],
    ] {
        let args: Vec<&str> = opts
            .iter()
            .copied()
            .chain(["--events=3", "cpu", "run"])
            .collect();
        same(&args);
    }
    // --help and --version come before any of it: no warning.
    same(&["--max-time=5", "--version"]);
}

/// A free TCP port on this host: nothing listens there once the probe is closed.
fn closed_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port().to_string()
}

/// A connection that cannot be opened, for each command of each kind of script, on MariaDB
/// and PostgreSQL: a socket that is not there, a port nobody listens on, a database or a
/// user the server does not know, a host name that does not resolve. sysbench prints its
/// driver's lines (libmariadb's or libpq's error), then the Lua error of the function that
/// connected (once per thread for a run), exit 1; plumb as sysbench the same. A password
/// given never shows. A parallel prepare's or prewarm's threads print the same lines, but
/// sysbench exits 0 after them (its threads' failures are not its command's): plumb fails.
#[test]
fn connection_failures_print_sysbench_s_fatal_lines() {
    if peer().is_none() {
        return;
    }
    let port = closed_port();
    let mut failures: Vec<Vec<String>> = Vec::new();
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if common::available("mysql") {
        failures.extend([
            own(&[
                "--mysql-user=root",
                "--mysql-socket=/nonexistent/mysqld.sock",
            ]),
            own(&[
                "--mysql-user=root",
                "--mysql-host=127.0.0.1",
                &format!("--mysql-port={port}"),
            ]),
            own(&["--mysql-user=root", "--mysql-db=plumb_no_such_db"]),
            own(&[
                "--mysql-user=plumb_no_such_user",
                "--mysql-password=s3cr3t-pw",
            ]),
            own(&["--mysql-host=nonexistent.invalid"]),
            // libmariadb reaches localhost through its socket, whatever the port.
            own(&[
                "--mysql-user=root",
                "--mysql-db=plumb_no_such_db",
                &format!("--mysql-port={port}"),
            ]),
        ]);
    }
    if common::available("pgsql") {
        let pg = |v: &[&str]| {
            let mut o = own(&["--db-driver=pgsql"]);
            o.extend(own(v));
            o
        };
        failures.extend([
            pg(&["--pgsql-user=postgres", "--pgsql-host=/nonexistent"]),
            pg(&[
                "--pgsql-user=postgres",
                "--pgsql-host=localhost",
                &format!("--pgsql-port={port}"),
            ]),
            // libpq's host list: each host in turn, every failure in its message; an empty
            // item is the default socket directory; a server's refusal ends the list.
            pg(&[
                "--pgsql-user=postgres",
                "--pgsql-host=/nonexistent,nonexistent.invalid,,127.0.0.2,localhost",
                &format!("--pgsql-port={port}"),
            ]),
            pg(&[
                "--pgsql-user=postgres",
                "--pgsql-host=127.0.0.2,127.0.0.1,/nonexistent",
                "--pgsql-db=plumb_no_such_db",
            ]),
            pg(&[
                "--pgsql-user=postgres",
                "--pgsql-host=127.0.0.1",
                "--pgsql-db=plumb_no_such_db",
            ]),
            pg(&[
                "--pgsql-user=postgres",
                "--pgsql-host=/var/run/postgresql",
                "--pgsql-db=plumb_no_such_db",
            ]),
            pg(&[
                "--pgsql-user=plumb_no_such_user",
                "--pgsql-password=s3cr3t-pw",
                "--pgsql-host=127.0.0.1",
            ]),
            pg(&["--pgsql-host=nonexistent.invalid"]),
        ]);
    }
    for failure in &failures {
        for script in ["oltp_read_write", "bulk_insert", "select_random_points"] {
            for command in ["prepare", "run", "cleanup", "prewarm"] {
                let mut args: Vec<&str> = failure.iter().map(String::as_str).collect();
                args.extend([script, "--time=1", command]);
                if let Some((theirs, ours)) = run_both(&args) {
                    assert_same(&args, &theirs, &ours, |s| s.to_string());
                    assert!(!ours.stdout.contains("s3cr3t"), "{}", ours.stdout);
                    assert!(!ours.stderr.contains("s3cr3t"), "{}", ours.stderr);
                }
            }
        }
        // Several threads: sysbench's threads print their lines as they fail, interleaved,
        // and its logger counts a message that repeats the one before instead of printing
        // it; which lines meet so is a race. The same lines, then, whatever their number
        // and order.
        let lines = |s: &str| -> std::collections::BTreeSet<String> {
            mask(s)
                .lines()
                .filter(|l| !l.starts_with("(last message repeated"))
                .map(String::from)
                .collect()
        };
        for (script, command, sysbench_code) in [
            ("oltp_point_select", "run", 1),
            ("oltp_read_write", "prepare", 0),
            ("oltp_read_write", "prewarm", 0),
        ] {
            let mut args: Vec<&str> = failure.iter().map(String::as_str).collect();
            args.extend([script, "--threads=3", "--tables=2", "--time=1", command]);
            if let Some((theirs, ours)) = run_both(&args) {
                assert_eq!(lines(&theirs.stdout), lines(&ours.stdout), "{args:?}");
                assert_eq!(theirs.stderr, ours.stderr, "{args:?}");
                assert_eq!(theirs.code, sysbench_code, "{args:?}: {theirs:?}");
                assert_eq!(ours.code, 1, "{args:?}");
            }
        }
    }
}

/// --mysql-host lists: sysbench's MySQL driver deals its connections over the hosts in
/// turn, so of two threads only the second meets the host that does not answer, and the
/// driver's lines are printed once.
#[test]
fn a_host_list_fails_only_the_connections_dealt_to_the_dead_host() {
    let Some(db) = empty_database("mysql", "plumb_dropin_hosts") else {
        return;
    };
    let db_opt = format!("--mysql-db={db}");
    let base = [
        "--mysql-user=root",
        &db_opt,
        "--mysql-host=127.0.0.1,127.0.0.2",
        "oltp_point_select",
        "--table-size=100",
    ];
    let mut prepare = base.to_vec();
    prepare.extend(["--mysql-host=127.0.0.1", "prepare"]);
    let o = run_in(Path::new(PEER), Path::new("."), &prepare);
    assert_eq!(o.code, 0, "{o:?}");
    let mut run = base.to_vec();
    run.extend(["--threads=2", "--time=1", "run"]);
    same(&run);
    drop_database("mysql", db);
}

/// A prepared statement the server refuses to execute (MariaDB: c is too short for the
/// value written to it): sysbench's driver line names mysql_stmt_execute() and the
/// statement as prepared, then the Lua line that executed it, exit 1.
#[test]
fn a_refused_prepared_statement_prints_sysbench_s_lines() {
    let Some(db) = empty_database("mysql", "plumb_dropin_stmt_execute") else {
        return;
    };
    common::mysql(&format!(
        "USE {db}; CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         k INTEGER NOT NULL DEFAULT 0, c CHAR(10) NOT NULL DEFAULT '', \
         pad CHAR(60) NOT NULL DEFAULT ''); \
         INSERT INTO sbtest1 (k) SELECT seq FROM seq_1_to_100"
    ));
    let db_opt = format!("--mysql-db={db}");
    for script in ["oltp_update_non_index", "oltp_write_only"] {
        same(&[
            "--mysql-user=root",
            &db_opt,
            script,
            "--table-size=100",
            "--time=1",
            "run",
        ]);
    }
    drop_database("mysql", db);
}

/// A statement of prepare or cleanup that the server refuses: the driver's line quoting
/// the statement as sent (sysbench's CREATE TABLE text to the byte), then the Lua error of
/// the function that sent it, as sysbench prints them. A table already there stops
/// prepare (MariaDB and PostgreSQL, from oltp_common.lua's create_table whichever script);
/// a user who may not drop the tables stops cleanup.
#[test]
fn a_refused_prepare_or_cleanup_statement_prints_sysbench_s_lines() {
    for (server, user) in [
        ("mysql", "--mysql-user=root"),
        ("pgsql", "--pgsql-user=postgres"),
    ] {
        let Some(db) = empty_database(server, "plumb_dropin_setup_refused") else {
            continue;
        };
        let (driver, db_opt) = (
            format!("--db-driver={server}"),
            format!("--{server}-db={db}"),
        );
        // sbtest1 only: a failure at a later table would leave the earlier ones behind
        // for the second tool.
        let table = "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY)";
        match server {
            "mysql" => common::mysql(&format!("USE {db}; {table}")),
            _ => common::psql(db, table),
        };
        for script in ["oltp_read_write", "select_random_points"] {
            same(&[&driver, user, &db_opt, script, "prepare"]);
        }
        drop_database(server, db);
    }
    let Some(db) = empty_database("mysql", "plumb_dropin_cleanup_refused") else {
        return;
    };
    common::mysql(&format!(
        "USE {db}; CREATE TABLE sbtest1 (id INTEGER); \
         CREATE USER IF NOT EXISTS plumb_nodrop@localhost; \
         GRANT SELECT ON {db}.* TO plumb_nodrop@localhost"
    ));
    let db_opt = format!("--mysql-db={db}");
    for script in ["oltp_read_write", "bulk_insert"] {
        same(&["--mysql-user=plumb_nodrop", &db_opt, script, "cleanup"]);
    }
    common::mysql("DROP USER plumb_nodrop@localhost");
    drop_database("mysql", db);
}

/// A prepared statement the server refuses when executed (a CHECK constraint the index
/// update breaks): MySQL's driver quotes the statement as prepared, libpq's
/// PQexecPrepared() only the message; then the Lua line that executed it.
#[test]
fn a_prepared_statement_refused_on_execution_prints_sysbench_s_lines() {
    for (server, user) in [
        ("mysql", "--mysql-user=root"),
        ("pgsql", "--pgsql-user=postgres"),
    ] {
        let Some(db) = empty_database(server, "plumb_dropin_exec_refused") else {
            continue;
        };
        let (driver, db_opt) = (
            format!("--db-driver={server}"),
            format!("--{server}-db={db}"),
        );
        let base = [
            driver.as_str(),
            user,
            &db_opt,
            "oltp_update_index",
            "--table-size=100",
        ];
        let (code, _, err) = common::run(&[&base[..], &["prepare"]].concat());
        assert_eq!(code, 0, "{err}");
        // Rows already there break it too: the constraint is not checked when added.
        match server {
            "mysql" => common::mysql(&format!(
                "SET check_constraint_checks=0; \
                 ALTER TABLE {db}.sbtest1 ADD CONSTRAINT neg CHECK (k < 0)"
            )),
            _ => common::psql(
                db,
                "ALTER TABLE sbtest1 ADD CONSTRAINT neg CHECK (k < 0) NOT VALID",
            ),
        };
        same(&[&base[..], &["--time=1", "run"]].concat());
        drop_database(server, db);
    }
}

/// Tables that are there but lack the script's columns (MariaDB): each thread's
/// thread_init has its first statement refused while preparing it, and sysbench prints the
/// header up to "Initializing worker threads...", the driver's lines and the Lua error,
/// then gives up, exit 1 (no "Threads started!"). One thread: two threads' lines may
/// interleave. Under its own name plumb says so in one line after the same header.
#[test]
fn a_statement_refused_while_a_thread_prepares_it_prints_sysbench_s_lines() {
    let Some(db) = empty_database("mysql", "plumb_dropin_wrong_columns") else {
        return;
    };
    // Ids up to the default --table-size were given (the auto-increment says so), so the
    // run's check that the tables hold its ids passes and the threads start setting up.
    common::mysql(&format!(
        "USE {db}; CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         x INTEGER) AUTO_INCREMENT=10001"
    ));
    let db_opt = format!("--mysql-db={db}");
    for script in [
        "oltp_read_write",
        "oltp_point_select",
        "oltp_update_index",
        "select_random_points",
        "select_random_ranges",
    ] {
        same(&["--mysql-user=root", &db_opt, script, "--time=1", "run"]);
    }
    let (code, out, err) = common::run(&[
        "--mysql-user=root",
        &db_opt,
        "oltp_point_select",
        "--time=1",
        "run",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.ends_with("Initializing worker threads...\n\n"), "{out}");
    assert_eq!(
        err,
        "plumb: point select on sbtest1: error 1054 (42S22): Unknown column 'c' in 'SELECT'\n"
    );
    drop_database("mysql", db);
}

/// bulk_insert run twice on the same tables without cleanup: the second run's last flush
/// (its only one) finds the ids taken. PostgreSQL's 23505 is an error sysbench's driver
/// ignores: it says nothing of it, counts one ignored error, and thread_done's failure is
/// the only line; MariaDB's 1062 is not, and its driver's lines come first. The report
/// follows, exit 0.
#[test]
fn a_bulk_insert_whose_ids_are_taken_ends_as_sysbench_s() {
    on_each_empty_server(
        ["plumb_dropin_bulk_dup_my", "plumb_dropin_bulk_dup_pg"],
        |server| {
            let drop_in = DropIn::named("sysbench");
            let dir = TempDir::new().unwrap();
            let mut last = Vec::new();
            for bin in [Path::new(PEER).to_path_buf(), drop_in.bin()] {
                let with = |cmd: &'static str| -> Vec<&str> {
                    server
                        .iter()
                        .copied()
                        .chain(["bulk_insert", "--events=1", "--time=0", cmd])
                        .collect()
                };
                for cmd in ["prepare", "run"] {
                    let out = run_in(&bin, dir.path(), &with(cmd));
                    assert_eq!(out.code, 0, "{bin:?} {cmd}: {out:?}");
                }
                last.push(run_in(&bin, dir.path(), &with("run")));
                run_in(&bin, dir.path(), &with("cleanup"));
            }
            let (theirs, ours) = (&last[0], &last[1]);
            assert_eq!(theirs.code, 0, "{theirs:?}");
            assert!(
                theirs
                    .stdout
                    .contains("ignored errors:                      1 "),
                "{}",
                theirs.stdout
            );
            let args = [server, &["bulk_insert", "run"]].concat();
            assert_same(&args, theirs, ours, |s| s.to_string());
        },
    );
}
