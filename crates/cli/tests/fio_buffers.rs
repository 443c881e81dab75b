//! Where a fio job's request buffers live: fio's `mem` (malloc, and anonymous `mmap` and
//! `mmaphuge`), and plumb's `--plumb-buffers=thp` (one 2 MiB-aligned mapping with
//! transparent huge pages asked for), checked on the system calls that make them.

mod common;
use common::peers::traced;
use common::strace::whole_calls;

use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;

fn plumb_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_plumb"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const MIB: u64 = 1 << 20;
const JOB: [&str; 8] = [
    "--name=b",
    "--filename=data",
    "--size=4m",
    "--bs=1m",
    "--rw=write",
    "--ioengine=libaio",
    "--iodepth=8",
    "--direct=1",
];

/// Run the job with `extra` under strace (mmap and madvise): exit code, stderr, the trace,
/// and the record's `workload.buffer_memory`.
fn run(dir: &Path, extra: &[&str]) -> (i32, String, String, Value) {
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let log = dir.with_file_name(format!(
        "{}.strace",
        dir.file_name().unwrap().to_string_lossy()
    ));
    let mut args: Vec<String> = ["fio".to_string()]
        .into_iter()
        .chain(JOB.iter().map(|s| s.to_string()))
        .chain(extra.iter().map(|s| s.to_string()))
        .collect();
    args.push(format!("--plumb-json={}", json.display()));
    let (out, trace) = traced(&plumb_bin(), dir, &log, "mmap,madvise", false, &args);
    let _ = std::fs::remove_file(&log);
    let memory = std::fs::read(&json)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .map(|v| {
            let w = &v["groups"][0]["jobs"][0]["workload"];
            // Huge-page buffers say how much of them the kernel backed with huge pages.
            if let Some(huge) = w.get("huge_page_bytes") {
                let bytes = w["buffer_bytes"].as_u64().unwrap();
                assert!(huge.as_u64().unwrap() <= bytes && bytes >= 8 * MIB, "{w}");
            }
            w["buffer_memory"].clone()
        })
        .unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stderr),
        trace,
        memory,
    )
}

/// (address, length, flags) of each anonymous read-write mmap in `trace`.
fn anonymous_maps(trace: &str) -> Vec<(u64, u64, String)> {
    trace
        .lines()
        .filter_map(|l| {
            let args = l.split_once("mmap(")?.1;
            let (args, ret) = args.split_once(") = ")?;
            let f: Vec<&str> = args.split(", ").collect();
            if f.len() != 6 || f[2] != "PROT_READ|PROT_WRITE" || !f[3].contains("MAP_ANONYMOUS") {
                return None;
            }
            let addr = u64::from_str_radix(ret.trim().trim_start_matches("0x"), 16).ok()?;
            Some((addr, f[1].parse().ok()?, f[3].to_string()))
        })
        .collect()
}

/// (address, length) of each madvise(MADV_HUGEPAGE) in `trace`.
fn huge_advice(trace: &str) -> Vec<(u64, u64)> {
    trace
        .lines()
        .filter_map(|l| {
            let args = l.split_once("madvise(")?.1;
            let f: Vec<&str> = args.split(", ").collect();
            if f.len() < 3 || !f[2].starts_with("MADV_HUGEPAGE") {
                return None;
            }
            let addr = u64::from_str_radix(f[0].trim_start_matches("0x"), 16).ok()?;
            Some((addr, f[1].parse().ok()?))
        })
        .collect()
}

/// The mapping that holds eight 1 MiB buffers: anonymous, private, a whole number of MiB.
fn buffer_maps(trace: &str) -> Vec<(u64, u64, String)> {
    anonymous_maps(trace)
        .into_iter()
        .filter(|(_, len, flags)| *len >= 8 * MIB && len % MIB == 0 && !flags.contains("MAP_STACK"))
        .collect()
}

#[test]
fn calls_another_thread_interrupted_are_read_whole() {
    let trace = "15965 mmap(NULL, 8388608, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0 <unfinished ...>\n\
                 15968 mmap(NULL, 16048, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK, -1, 0 <unfinished ...>\n\
                 15965 <... mmap resumed>)               = 0x7f600ea00000\n\
                 15968 <... mmap resumed>)               = 0x7f600fa41000\n";
    assert_eq!(
        buffer_maps(&whole_calls(trace)),
        [(
            0x7f600ea00000,
            8 * MIB,
            "MAP_PRIVATE|MAP_ANONYMOUS".to_string()
        )]
    );
}

#[test]
fn split_calls_are_joined_where_they_started_and_unpadded() {
    let trace = "15965 mmap(NULL, 8388608, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0 <unfinished ...>\n\
                 15968 pread64(4</tmp/st/f>,  <unfinished ...>\n\
                 15970 close(3)                                = 0\n\
                 15965 <... mmap resumed>)               = 0x7f600ea00000\n\
                 15968 <... pread64 resumed>\"a = b\"..., 4096, 290816) = 4096\n";
    assert_eq!(
        whole_calls(trace),
        "15965 mmap(NULL, 8388608, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f600ea00000\n\
         15968 pread64(4</tmp/st/f>, \"a = b\"..., 4096, 290816) = 4096\n\
         15970 close(3)                                = 0\n"
    );
}

#[test]
fn heap_buffers_are_the_default_and_mmap_maps_them() {
    let d = TempDir::new().unwrap();
    let (code, err, trace, memory) = run(d.path(), &[]);
    assert_eq!(code, 0, "{err}");
    // Heap buffers: the record leaves the default out, and no mapping holds them all.
    assert_eq!(memory, Value::Null);
    assert!(buffer_maps(&trace).is_empty(), "{trace}");
    assert!(huge_advice(&trace).is_empty(), "{trace}");

    let (code, err, trace, memory) = run(d.path(), &["--mem=mmap"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(memory, "mapped");
    let maps = buffer_maps(&trace);
    assert_eq!(maps.len(), 1, "{trace}");
    assert_eq!(maps[0].2, "MAP_PRIVATE|MAP_ANONYMOUS");
    assert!(huge_advice(&trace).is_empty(), "{trace}");
}

#[test]
fn plumb_buffers_thp_asks_for_huge_pages_on_a_2mib_boundary() {
    let d = TempDir::new().unwrap();
    let (code, err, trace, memory) = run(d.path(), &["--plumb-buffers=thp"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(memory, "transparent");
    let maps = buffer_maps(&trace);
    assert_eq!(maps.len(), 1, "{trace}");
    let (start, len, _) = maps[0];
    let advice = huge_advice(&trace);
    assert_eq!(advice.len(), 1, "{trace}");
    let (at, advised) = advice[0];
    // The advised range starts on a huge page inside the mapping, holds every buffer, and
    // is whole huge pages.
    assert_eq!(at % (2 * MIB), 0);
    assert!(at >= start && at + advised <= start + len, "{trace}");
    assert!(advised >= 8 * MIB && advised % (2 * MIB) == 0, "{advised}");
}

#[test]
fn mmaphuge_maps_reserved_huge_pages_or_says_to_reserve_them() {
    let d = TempDir::new().unwrap();
    let (code, err, trace, memory) = run(d.path(), &["--mem=mmaphuge"]);
    let maps: Vec<_> = anonymous_maps(&trace)
        .into_iter()
        .filter(|m| m.2.contains("MAP_HUGETLB"))
        .collect();
    // The request, rounded up to whole 2 MiB pages, is asked for whatever the machine has.
    assert!(!maps.is_empty() || trace.contains("MAP_HUGETLB"), "{trace}");
    let reserved: u64 = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if reserved == 0 {
        // fio 3.33 crashes here (signal 11, then a double free); plumb says what to do.
        assert_eq!(code, 1, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("fio: cannot map ") && err.contains("sysctl vm.nr_hugepages"),
            "{err}"
        );
    } else if code == 0 {
        assert_eq!(memory["huge_tlb"]["page"], 2 * MIB, "{memory}");
        assert_eq!(maps[0].1 % (2 * MIB), 0);
    }
}

#[test]
fn conflicting_or_unknown_buffer_choices_are_refused() {
    let d = TempDir::new().unwrap();
    for (extra, line) in [
        (
            &["--mem=mmap", "--plumb-buffers=thp"][..],
            "plumb: fio option 'mem' (value 'mmap') is not supported yet: the job sets its buffers' memory and --plumb-buffers does too; give one\n",
        ),
        (
            &["--plumb-buffers=huge"][..],
            "plumb: --plumb-buffers takes thp or heap, not 'huge'\n",
        ),
        (
            &["--mem=mmaphuge", "--hugepage-size=1000"][..],
            // Huge pages are whole small pages.
            "fio: failed parsing hugepage-size=1000\nfio: job b dropped\n",
        ),
    ] {
        let o = std::process::Command::new(plumb_bin())
            .arg("fio")
            .args(JOB)
            .args(extra)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(
            (o.status.code(), text(&o.stderr).as_str()),
            (Some(1), line),
            "{extra:?}"
        );
        assert!(!d.path().join("data").exists(), "{extra:?}");
    }
}

/// plumb's section of the job in fio's normal output: where the buffers were, and what the
/// kernel gave of the huge pages asked for; a saved record edited to say none replays so.
#[test]
fn the_report_says_where_the_buffers_were_and_what_was_in_huge_pages() {
    let d = TempDir::new().unwrap();
    let report = |extra: &[&str]| {
        let json = d.path().join("r.json");
        let o = std::process::Command::new(plumb_bin())
            .arg("fio")
            .args(JOB)
            .args(extra)
            .arg(format!("--plumb-json={}", json.display()))
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (text(&o.stdout), doc)
    };
    let block = |out: &str| -> Option<String> {
        let at = out.find("\nI/O buffers:\n")?;
        let rest = &out[at + 1..];
        Some(rest[..rest.find("\n\n").unwrap()].to_string())
    };

    let (out, _) = report(&[]);
    assert_eq!(block(&out), None, "{out}");
    let (out, _) = report(&["--mem=mmap"]);
    assert_eq!(
        block(&out).unwrap(),
        "I/O buffers:\n    memory:                       one anonymous mapping (mem=mmap)"
    );

    let (out, doc) = report(&["--plumb-buffers=thp"]);
    let w = &doc["groups"][0]["jobs"][0]["workload"];
    let (bytes, huge) = (
        w["buffer_bytes"].as_u64().unwrap(),
        w["huge_page_bytes"].as_u64().unwrap(),
    );
    // Eight 1 MiB buffers, on whole huge pages.
    assert_eq!(bytes, 8 * MIB, "{w}");
    let granted = if huge == bytes {
        "all of it in huge pages".to_string()
    } else {
        format!("{}MiB of it in huge pages", huge / MIB)
    };
    let b = block(&out).unwrap();
    assert!(
        b.starts_with(
            "I/O buffers:\n    memory:                       one mapping with transparent huge pages asked for (--plumb-buffers=thp)\n    size:                         8MiB, "
        ) && b.contains(&granted),
        "{b}"
    );

    let mut none = doc.clone();
    none["groups"][0]["jobs"][0]["workload"]["huge_page_bytes"] = 0.into();
    let edited = d.path().join("none.json");
    std::fs::write(&edited, serde_json::to_vec(&none).unwrap()).unwrap();
    let r = std::process::Command::new(plumb_bin())
        .args(["report", edited.to_str().unwrap()])
        .output()
        .unwrap();
    let replay = text(&r.stdout);
    assert!(
        block(&replay).unwrap().ends_with(
            "size:                         8MiB, 0B of it in huge pages: the rest may reach the disk cut (requests-split)"
        ),
        "{replay}"
    );
}
