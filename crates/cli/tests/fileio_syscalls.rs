//! What plumb fileio asks of the kernel, against sysbench 1.0 on the same recipe, seen with
//! strace: the same calls, on the same files, of the same sizes, in the same order
//! (docs/fileio.md, "Where rndrw time goes (against sysbench)").

mod common;
use common::*;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// One I/O call of the worker: (call, file number, length, offset is block-aligned).
type Call = (String, u32, u64, bool);

/// The calls as words: `R16384` / `W16384` for block-aligned reads and writes of that
/// length (which file is each tool's own random draw), `F3` for an fsync of test_file.3.
fn words(calls: &[Call]) -> Vec<String> {
    calls
        .iter()
        .map(|(c, file, len, aligned)| match c.as_str() {
            "pread64" | "pwrite64" => format!(
                "{}{len}{}",
                if c == "pread64" { 'R' } else { 'W' },
                if *aligned { "" } else { "-unaligned" }
            ),
            _ => format!("{}{file}", if c == "fsync" { 'F' } else { 'D' }),
        })
        .collect()
}

/// Run `cmd` under strace with `options` in `dir`; it must succeed.
fn traced(dir: &Path, options: &[&str], cmd: &Command) {
    let out = Command::new("strace")
        .current_dir(dir)
        .args(options)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run `cmd` under `strace -ff` in `dir`; return the I/O calls of the thread that made most
/// of them, with descriptors mapped to test file numbers.
fn io_calls(dir: &Path, cmd: &Command, block: u64) -> Vec<Call> {
    let calls = "trace=openat,pread64,pwrite64,fsync,fdatasync";
    traced(dir, &["-ff", "-e", calls, "-o", "strace.out"], cmd);
    let mut files: HashMap<u32, u32> = HashMap::new();
    let mut threads: Vec<Vec<Call>> = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if !e.file_name().to_string_lossy().starts_with("strace.out.") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let mut calls = Vec::new();
        for line in text.lines() {
            let Some((call, rest)) = line.split_once('(') else {
                continue;
            };
            let ret = line.rsplit_once(" = ").map(|(_, r)| r.trim());
            match call {
                "openat" if line.contains("test_file.") && line.contains("O_RDWR") => {
                    let n = line.split("test_file.").nth(1).unwrap();
                    let n: u32 = n[..n.find('"').unwrap()].parse().unwrap();
                    files.insert(ret.unwrap().parse().unwrap(), n);
                }
                "pread64" | "pwrite64" | "fsync" | "fdatasync" => {
                    let fd: u32 = rest[..rest.find([',', ')']).unwrap()].parse().unwrap();
                    let (len, off) = if call == "fsync" || call == "fdatasync" {
                        (0, 0)
                    } else {
                        // "..., LEN, OFFSET) = N": the last two arguments.
                        let args = line.rsplit_once(") = ").unwrap().0;
                        let mut it = args.rsplit(", ");
                        let off: u64 = it.next().unwrap().parse().unwrap();
                        (it.next().unwrap().parse().unwrap(), off)
                    };
                    calls.push((call.to_string(), fd, len, off % block == 0));
                }
                _ => {}
            }
        }
        threads.push(calls);
    }
    let worker = threads.into_iter().max_by_key(Vec::len).unwrap();
    worker
        .into_iter()
        .filter_map(|(c, fd, len, aligned)| Some((c, *files.get(&fd)?, len, aligned)))
        .collect()
}

#[test]
fn rndrw_makes_the_same_calls_as_sysbench() {
    if !peer("sysbench") || !peer("strace") {
        return;
    }
    let recipe = [
        "--file-total-size=16M",
        "--file-num=16",
        "--file-test-mode=rndrw",
        "--events=700",
        "--time=0",
    ];
    let (sb, pl) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let prepared = Command::new("sysbench")
        .current_dir(sb.path())
        .args(["fileio", recipe[0], recipe[1], "prepare"])
        .output()
        .unwrap();
    assert!(prepared.status.success());
    plumb()
        .current_dir(pl.path())
        .args(["fileio", recipe[0], recipe[1], "prepare"])
        .assert()
        .success();
    let mut sysbench = Command::new("sysbench");
    sysbench.arg("fileio").args(recipe).arg("run");
    let mut ours = Command::new(assert_cmd::cargo::cargo_bin("plumb"));
    // The history's database calls (after the run, on plumb's main thread) are not I/O
    // sysbench makes.
    ours.arg("fileio")
        .args(recipe)
        .args(["--no-history", "run"]);
    let theirs = io_calls(sb.path(), &sysbench, 16384);
    let mine = io_calls(pl.path(), &ours, 16384);
    // 700 events: 6 periods of 100 requests and 16 fsyncs (one per file), 4 requests more;
    // then the end-of-run fsync of every file.
    assert_eq!(theirs.len(), 700 + 16, "{theirs:?}");
    let counts = |v: &[Call]| {
        ["pread64", "pwrite64", "fsync"].map(|c| v.iter().filter(|x| x.0 == c).count())
    };
    assert_eq!(counts(&theirs)[2], 6 * 16 + 16);
    assert_eq!(counts(&mine), counts(&theirs));
    // Same order, same files fsynced, same sizes, block-aligned offsets (the offsets
    // themselves come from each tool's own random stream).
    let (mine, theirs) = (words(&mine), words(&theirs));
    if let Some(i) = (0..mine.len().max(theirs.len())).find(|&i| mine.get(i) != theirs.get(i)) {
        panic!(
            "call {i} differs: plumb {:?}, sysbench {:?}",
            &mine[i.saturating_sub(3)..(i + 3).min(mine.len())],
            &theirs[i.saturating_sub(3)..(i + 3).min(theirs.len())]
        );
    }
}

#[test]
fn rndrw_zero_fill_writes_zeros_after_reading_random_data() {
    if !peer("strace") {
        return;
    }
    // The set holds random data (plumb's default prepare); every write of a zero-fill run
    // must still send zeros, not the block a read just brought in.
    let dir = tempfile::tempdir().unwrap();
    let set = ["--file-total-size=4M", "--file-num=4"];
    plumb()
        .current_dir(dir.path())
        .args(["fileio", set[0], set[1], "prepare"])
        .assert()
        .success();
    let mut run = Command::new(assert_cmd::cargo::cargo_bin("plumb"));
    run.args(["fileio", set[0], set[1], "--file-test-mode=rndrw"])
        .args(["--file-fill=zero", "--events=300", "--time=0"])
        // Only the workload's writes: the history's database writes hold other bytes.
        .args(["--no-history", "run"]);
    let options = ["-f", "-s", "64", "-e", "trace=pwrite64", "-o", "strace.out"];
    traced(dir.path(), &options, &run);
    let trace = common::strace::whole_calls(
        &std::fs::read_to_string(dir.path().join("strace.out")).unwrap(),
    );
    let writes: Vec<&str> = trace.lines().filter(|l| l.contains("pwrite64(")).collect();
    assert!(writes.len() > 50, "{trace}");
    let zeros = format!("\"{}\"...", "\\0".repeat(64));
    for w in writes {
        assert!(w.contains(&zeros), "{w}");
    }
}
