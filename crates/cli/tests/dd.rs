//! `plumb dd` against GNU dd 9.1 on the same operands: the read, write and flush calls on
//! the two ends (strace), the output file's bytes, dd's last lines with the time and rate
//! masked, and the error lines and exit codes of bad operands. Then the findings: a
//! buffered write without a flush is the page cache's work; direct I/O or a final
//! fdatasync is not. Never a speed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn plumb_bin() -> &'static str {
    env!("CARGO_BIN_EXE_plumb")
}

/// The calls on `ends` that a traced run made: (call, file, requested size, result).
fn calls(trace: &Path, ends: &[PathBuf]) -> Vec<String> {
    let text = common::strace::whole_calls(&std::fs::read_to_string(trace).expect("trace"));
    let names: Vec<String> = ends.iter().map(|p| p.display().to_string()).collect();
    let mut out = Vec::new();
    for line in text.lines() {
        // strace -f prefixes the pid; -y writes fd<path>.
        let line = line.split_once(' ').map_or(line, |(a, b)| {
            if a.chars().all(|c| c.is_ascii_digit()) {
                b.trim_start()
            } else {
                line
            }
        });
        let Some((call, rest)) = line.split_once('(') else {
            continue;
        };
        if !["read", "write", "fsync", "fdatasync", "ftruncate"].contains(&call) {
            continue;
        }
        let Some(path) = rest
            .split_once('<')
            .and_then(|(_, r)| r.split_once('>'))
            .map(|(p, _)| p.to_string())
        else {
            continue;
        };
        let Some(end) = names.iter().position(|n| *n == path) else {
            continue;
        };
        let result = line.rsplit_once("= ").map(|(_, r)| r.trim()).unwrap_or("");
        let size = line
            .rsplit_once(") ")
            .and_then(|(a, _)| a.rsplit_once(", "))
            .map(|(_, s)| s.to_string())
            .filter(|_| call == "read" || call == "write")
            .unwrap_or_default();
        out.push(format!("{call} end{end} {size} = {result}"));
    }
    out
}

struct Ran {
    code: i32,
    stderr: String,
    calls: Vec<String>,
    output: Vec<u8>,
}

/// Run GNU dd or plumb dd with `ops` (IN and OUT replaced by the two files) under strace.
fn run(plumb: bool, dir: &Path, ops: &[&str], prepare_out: Option<&[u8]>) -> Ran {
    let input = dir.join("in");
    let output = dir.join(if plumb { "out-plumb" } else { "out-gnu" });
    let _ = std::fs::remove_file(&output);
    if let Some(bytes) = prepare_out {
        std::fs::write(&output, bytes).unwrap();
    }
    let trace = dir.join(if plumb { "trace-plumb" } else { "trace-gnu" });
    let mut args: Vec<String> = vec![
        "-f".into(),
        "-y".into(),
        "-e".into(),
        "trace=read,write,fsync,fdatasync,ftruncate".into(),
        "-o".into(),
        trace.display().to_string(),
    ];
    if plumb {
        args.extend([plumb_bin().to_string(), "dd".into(), "--no-history".into()]);
    } else {
        args.push("dd".into());
    }
    for o in ops {
        args.push(
            o.replace("IN", &input.display().to_string())
                .replace("OUT", &output.display().to_string()),
        );
    }
    let out = Command::new("strace")
        .args(&args)
        .env("PLUMB_HOME", dir)
        .env("LC_ALL", "C")
        .output()
        .expect("strace runs");
    let ends = [
        input.clone(),
        output.clone(),
        PathBuf::from("/dev/zero"),
        PathBuf::from("/dev/null"),
        PathBuf::from("/dev/full"),
    ];
    Ran {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        calls: calls(&trace, &ends),
        output: std::fs::read(&output).unwrap_or_default(),
    }
}

fn differential(ops: &[&str], prepare_out: Option<&[u8]>) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.path().join("in"), &data).unwrap();
    let gnu = run(false, dir.path(), ops, prepare_out);
    let ours = run(true, dir.path(), ops, prepare_out);
    assert_eq!(ours.code, gnu.code, "{ops:?}: exit\n{}", ours.stderr);
    assert_eq!(
        common::dd_stats_masked(&ours.stderr),
        common::dd_stats_masked(&gnu.stderr),
        "{ops:?}: dd's lines"
    );
    assert_eq!(ours.calls, gnu.calls, "{ops:?}: calls on the two ends");
    assert_eq!(ours.output, gnu.output, "{ops:?}: output bytes");
    assert!(!gnu.calls.is_empty(), "{ops:?}: the trace saw the copy");
}

/// A write that fails (/dev/full: ENOSPC) is still followed by dd's flush: conv=fdatasync
/// then fsync (fdatasync failing sends dd on to fsync), each failure one more line. After
/// a whole obs-sized block's failure ("writing to", dd's quit()) a failed flush ends dd
/// before its statistics; after any other it prints them. A read error (a directory)
/// still flushes too.
#[test]
fn a_failed_write_is_still_followed_by_the_flush() {
    if !common::peer("strace") || !common::peer("dd") {
        eprintln!("skipped: strace or GNU dd missing");
        return;
    }
    let cases: &[&[&str]] = &[
        &[
            "if=/dev/zero",
            "of=/dev/full",
            "bs=512",
            "count=1",
            "conv=fdatasync",
        ],
        &[
            "if=/dev/zero",
            "of=/dev/full",
            "bs=512",
            "count=1",
            "conv=fsync",
        ],
        &["if=/dev/zero", "of=/dev/full", "count=3", "conv=fsync"],
        &["if=/dev/zero", "of=/dev/full", "count=3", "conv=fdatasync"],
        &["if=/dev/zero", "of=/dev/full", "count=3"],
        &[
            "if=IN",
            "of=/dev/full",
            "ibs=1000",
            "obs=4096",
            "conv=fdatasync",
        ],
        &["if=IN", "of=/dev/full", "ibs=1000", "obs=400", "conv=fsync"],
        &[
            "if=/dev/zero",
            "of=/dev/full",
            "bs=1k",
            "count=2",
            "status=noxfer",
            "conv=fsync",
        ],
        &["if=/", "of=OUT", "bs=1k", "conv=fsync"],
        &["if=/", "of=OUT", "ibs=1k", "obs=4k", "conv=fdatasync"],
    ];
    for ops in cases {
        differential(ops, None);
    }
}

#[test]
fn the_same_io_and_lines_as_gnu_dd() {
    if !common::peer("strace") || !common::peer("dd") {
        eprintln!("skipped: strace or GNU dd missing");
        return;
    }
    let cases: &[&[&str]] = &[
        &["if=/dev/zero", "of=OUT", "bs=64K", "count=3"],
        &[
            "if=/dev/zero",
            "of=OUT",
            "bs=4k",
            "count=5",
            "conv=fdatasync",
        ],
        &["if=/dev/zero", "of=OUT", "bs=2x2k", "count=2", "conv=fsync"],
        &["if=IN", "of=OUT"],
        &["if=IN", "of=OUT", "ibs=1000", "obs=4096"],
        &["if=IN", "of=OUT", "bs=4096", "conv=sync"],
        &["if=IN", "of=OUT", "bs=1k", "skip=2", "seek=3"],
        &[
            "if=IN",
            "of=OUT",
            "bs=1024",
            "iflag=count_bytes",
            "count=5000",
        ],
        &["if=IN", "of=OUT", "bs=4096", "iflag=direct", "oflag=dsync"],
        &["if=IN", "of=OUT", "bs=4096", "oflag=direct"],
        &["if=IN", "of=/dev/null", "bs=3000", "status=noxfer"],
        &["if=IN", "of=OUT", "bs=1000", "status=none"],
        // dd 9.1's numbers: a B after a plain number, leading blanks and +, a B in
        // skip=/count= meaning bytes; flags and conversions adding up; `--`.
        &["if=IN", "of=OUT", "bs=512B", "count=3"],
        &["if=IN", "of=OUT", "bs= +1k", "skip=1KB", "count=2KiB"],
        &[
            "if=IN",
            "of=OUT",
            "bs=k",
            "count=1000B",
            "iflag=skip_bytes",
            "skip=1",
        ],
        &[
            "if=IN",
            "of=OUT",
            "bs=4096",
            "iflag=direct",
            "iflag=fullblock",
        ],
        &[
            "--",
            "if=IN",
            "of=OUT",
            "bs=1k",
            "oflag=count_bytes",
            "iflag=seek_bytes",
        ],
        &[
            "if=IN",
            "--",
            "of=OUT",
            "ibs=1000",
            "obs=1000",
            "conv=sync",
            "conv=fsync",
        ],
    ];
    for ops in cases {
        differential(ops, None);
    }
    // An existing output: truncated, or kept with notrunc.
    let old = vec![0xAAu8; 20_000];
    differential(&["if=IN", "of=OUT", "bs=4k", "count=1"], Some(&old));
    differential(
        &["if=IN", "of=OUT", "bs=4k", "count=1", "conv=notrunc"],
        Some(&old),
    );
    differential(
        &["if=IN", "of=OUT", "bs=1k", "seek=2", "conv=notrunc"],
        Some(&old),
    );
    // A seek_bytes offset short of one obs record: dd opens with O_TRUNC and does not
    // ftruncate, so the bytes before the offset read back as zeros; a longer one keeps
    // them (ftruncate to the offset).
    for seek in ["seek=2", "seek=1500"] {
        differential(
            &["if=IN", "of=OUT", "bs=1k", seek, "oflag=seek_bytes"],
            Some(&old),
        );
    }
}

/// The copying thread reads and writes through a descriptor table of its own (a shared one
/// costs a file reference per call, which single-threaded GNU dd never pays), and both
/// tables' copies of the two ends are closed before plumb exits.
#[test]
fn the_copy_has_its_own_descriptor_table_and_closes_both() {
    if !common::peer("strace") {
        eprintln!("skipped: strace missing");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let input = dir.path().join("in");
    std::fs::write(&input, vec![7u8; 8192]).unwrap();
    let output = dir.path().join("out");
    let trace = dir.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-y", "-e", "trace=unshare,read,write,close", "-o"])
        .arg(&trace)
        .arg(plumb_bin())
        .args(["dd", "--no-history", "bs=1k"])
        .arg(format!("if={}", input.display()))
        .arg(format!("of={}", output.display()))
        .env("PLUMB_HOME", dir.path())
        .output()
        .expect("strace runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&output).unwrap(), vec![7u8; 8192]);
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(pid, rest)| (pid, rest.trim_start()))
        .collect();
    let copier = lines
        .iter()
        .find(|(_, c)| c.starts_with("unshare(CLONE_FILES)") && c.ends_with("= 0"))
        .map(|(pid, _)| *pid)
        .expect("the copying thread unshares its descriptor table");
    let in_name = format!("<{}>", input.display());
    let out_name = format!("<{}>", output.display());
    let on = |call: &str, name: &str| -> Vec<&str> {
        lines
            .iter()
            .filter(|(_, c)| c.starts_with(&format!("{call}(")) && c.contains(name))
            .map(|(pid, _)| *pid)
            .collect()
    };
    let reads = on("read", &in_name);
    assert_eq!(reads.len(), 9, "8 records and the end: {reads:?}");
    assert!(reads.iter().all(|p| *p == copier), "{reads:?}");
    let writes = on("write", &out_name);
    assert_eq!(writes.len(), 8);
    assert!(writes.iter().all(|p| *p == copier), "{writes:?}");
    for name in [&in_name, &out_name] {
        let mut closes = on("close", name);
        closes.sort();
        closes.dedup();
        assert_eq!(
            closes.len(),
            2,
            "{name} closed in both tables (the copier's and the process's): {closes:?}"
        );
        assert!(closes.contains(&copier));
    }
}

#[test]
fn bad_operands_fail_with_dd_lines() {
    if !common::peer("dd") {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let unwritable = dir.path().join("no/such/dir/out");
    let unwritable = format!("of={}", unwritable.display());
    let cases: Vec<Vec<&str>> = vec![
        vec!["foo=1"],
        vec!["bogus"],
        vec!["bs=0"],
        vec!["bs=1Q"],
        vec!["count=abc"],
        vec!["iflag=bogus"],
        vec!["oflag=fullblock"],
        vec!["conv=bogus"],
        vec!["status=bogus"],
        vec!["if=/nonexistent/file"],
        vec!["if=/dev/zero", &unwritable, "count=1"],
        // dd 9.1's numbers and options.
        vec!["bs=9223372036854775807"],
        vec!["bs=9223372036854775808"],
        vec!["count=8E"],
        vec!["skip=99999999999999999999x2"],
        vec!["bs=1x2x3"],
        vec!["bs=5 "],
        vec!["bs=1R"],
        vec!["bs=0x5"],
        vec!["bs=-1"],
        vec!["conv=excl", "conv=nocreat"],
        vec!["-x"],
        vec!["--bogus"],
        vec!["-"],
        vec!["--", "--help"],
        // Buffers no memory holds: dd's line, no statistics.
        vec!["if=/dev/null", "of=/dev/null", "bs=1E"],
        vec!["if=/dev/null", "of=/dev/null", "ibs=1", "obs=1E"],
    ];
    for locale in ["C", "C.UTF-8"] {
        for ops in &cases {
            let gnu = Command::new("dd")
                .args(ops)
                .env("LC_ALL", locale)
                .output()
                .unwrap();
            let ours = Command::new(plumb_bin())
                .arg("dd")
                .arg("--no-history")
                .args(ops)
                .env("LC_ALL", locale)
                .env("PLUMB_HOME", dir.path())
                .output()
                .unwrap();
            assert_eq!(ours.status.code(), gnu.status.code(), "{ops:?}");
            assert_eq!(
                String::from_utf8_lossy(&ours.stderr),
                String::from_utf8_lossy(&gnu.stderr),
                "{ops:?} ({locale})"
            );
        }
    }
    // dd's flags plumb does not carry out are refused, not ignored.
    let out = Command::new(plumb_bin())
        .args([
            "dd",
            "--no-history",
            "if=/dev/zero",
            "of=/dev/null",
            "iflag=nocache",
        ])
        .env("PLUMB_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "plumb: dd input flag 'nocache' is not supported\n"
    );
}

fn findings(dir: &Path, ops: &[&str]) -> Vec<String> {
    let json = dir.join("r.json");
    let out = Command::new(plumb_bin())
        .arg("dd")
        .arg("--no-history")
        .arg(format!("--json={}", json.display()))
        .args(ops)
        .env("PLUMB_HOME", dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{ops:?}: {stderr}");
    assert!(stderr.contains(" records out\n"), "{stderr}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["front_end"], "dd");
    let ids: Vec<String> = v["groups"][0]["jobs"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    // What the JSON holds, the text shows.
    for id in &ids {
        assert!(stderr.contains(&format!("({id})")), "{id} in {stderr}");
    }
    ids
}

#[test]
fn the_page_cache_findings_follow_what_dd_did() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path();
    let of = format!("of={}", d.join("data").display());
    let iff = format!("if={}", d.join("data").display());
    let has = |ids: &[String], id: &str| ids.iter().any(|i| i == id);

    let ids = findings(d, &["if=/dev/zero", &of, "bs=1M", "count=16"]);
    assert!(
        has(&ids, "page-cache-writes"),
        "buffered, no flush: {ids:?}"
    );
    let ids = findings(
        d,
        &["if=/dev/zero", &of, "bs=1M", "count=16", "oflag=direct"],
    );
    assert!(!has(&ids, "page-cache-writes"), "oflag=direct: {ids:?}");
    let ids = findings(
        d,
        &["if=/dev/zero", &of, "bs=1M", "count=16", "conv=fdatasync"],
    );
    assert!(!has(&ids, "page-cache-writes"), "conv=fdatasync: {ids:?}");

    // The file was just written: a buffered read is served by the cache, a direct one is not.
    let ids = findings(d, &[&iff, "of=/dev/null", "bs=1M"]);
    assert!(has(&ids, "page-cache-reads"), "buffered read: {ids:?}");
    let ids = findings(d, &[&iff, "of=/dev/null", "bs=1M", "iflag=direct"]);
    assert!(!has(&ids, "page-cache-reads"), "iflag=direct: {ids:?}");
    assert!(!has(&ids, "page-cache-writes"), "/dev/null: {ids:?}");
}

/// The largest request (queue/max_sectors_kb, bytes) of the disk holding `dir`, as plumb's
/// own target resolution sees it, when it is on a block device sysfs shows.
fn largest_request(dir: &Path) -> Option<u64> {
    let t = plumb_observe::target::resolve_with(&plumb_observe::Roots::default(), dir).ok()?;
    t.disks.first()?.max_request_bytes
}

#[test]
fn direct_blocks_larger_than_the_device_takes_are_reported_cut() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path();
    let of = format!("of={}", d.join("data").display());
    let has = |ids: &[String]| ids.iter().any(|i| i == "requests-split");

    // 64 pages, below any disk's limits: each write reaches the disk whole.
    let ids = findings(
        d,
        &["if=/dev/zero", &of, "bs=256K", "count=64", "oflag=direct"],
    );
    assert!(!has(&ids), "256 KiB direct writes: {ids:?}");

    let Some(largest) = largest_request(d) else {
        // Not on a disk sysfs shows (a container's overlay): no device figures, no finding.
        let ids = findings(
            d,
            &["if=/dev/zero", &of, "bs=8M", "count=16", "oflag=direct"],
        );
        assert!(!has(&ids), "no disk: {ids:?}");
        return;
    };
    // Twice the largest request: every write is cut at least in two.
    let bs = format!("bs={}K", 2 * largest / 1024);
    let ids = findings(d, &["if=/dev/zero", &of, &bs, "count=16", "oflag=direct"]);
    assert!(
        has(&ids),
        "{bs} direct writes, largest request {largest}: {ids:?}"
    );
    // The same blocks through the page cache: writeback makes its own requests.
    let ids = findings(d, &["if=/dev/zero", &of, &bs, "count=16", "conv=fdatasync"]);
    assert!(!has(&ids), "{bs} buffered: {ids:?}");
}

#[test]
fn a_saved_dd_run_replays_its_lines() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let json = dir.path().join("r.json");
    let out = Command::new(plumb_bin())
        .args([
            "dd",
            "--no-history",
            "if=/dev/zero",
            "of=/dev/null",
            "bs=4k",
            "count=3",
        ])
        .arg(format!("--json={}", json.display()))
        .env("PLUMB_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let replay = Command::new(plumb_bin())
        .args(["report", &json.display().to_string()])
        .env("PLUMB_HOME", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&replay.stdout);
    assert!(
        stderr.starts_with("3+0 records in\n3+0 records out\n12288 bytes (12 kB, 12 KiB) copied, ")
    );
    assert_eq!(text, stderr, "plumb report prints what the run printed");
}
