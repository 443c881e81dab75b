//! `plumb disk`: CrystalDiskMark's presets as fio jobs with O_DIRECT on a preconditioned
//! file, one table, the observations and findings; the record replays identically.

mod common;

use common::plumb;
use serde_json::Value;
use tempfile::TempDir;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_presets_run_on_a_preconditioned_file_with_o_direct() {
    let d = TempDir::new().unwrap();
    let json = d.path().join("disk.json");
    let o = plumb()
        .args([
            "disk",
            d.path().to_str().unwrap(),
            "--quick",
            "--size=8M",
            "--time=1",
        ])
        .arg(format!("--json={}", json.display()))
        .arg("--no-history")
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        out.contains("(made by plumb), 1 s per test, filled with incompressible data first"),
        "{out}"
    );
    assert!(out.contains("precondition: wrote 8MiB in "), "{out}");
    let header = out
        .lines()
        .find(|l| l.contains("Read MB/s"))
        .expect("the table");
    for col in ["Read MB/s", "Write MB/s", "Read IOPS", "Write IOPS"] {
        assert!(header.contains(col), "{header}");
    }
    for preset in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        let row = out
            .lines()
            .rev()
            .find(|l| l.starts_with(preset))
            .unwrap_or_else(|| panic!("{preset}: {out}"));
        // Four figures, none missing.
        assert_eq!(row.split_whitespace().count(), 6, "{row}");
        assert!(!row.contains(" - "), "{row}");
    }
    assert!(out.contains("Observed during the run:"), "{out}");
    // The file plumb made is gone.
    assert!(!d.path().join("plumb-disk.dat").exists());
    // The record: the precondition, then eight stonewalled jobs with their direction, block
    // size and queue depth, all O_DIRECT.
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["front_end"], "disk");
    let jobs: Vec<&Value> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["jobs"].as_array().unwrap())
        .collect();
    let names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "precondition",
            "SEQ1M-Q8T1-read",
            "SEQ1M-Q1T1-read",
            "RND4K-Q32T1-read",
            "RND4K-Q1T1-read",
            "SEQ1M-Q8T1-write",
            "SEQ1M-Q1T1-write",
            "RND4K-Q32T1-write",
            "RND4K-Q1T1-write"
        ]
    );
    for j in &jobs {
        let header = &j["layout"]["header"];
        assert_eq!(header["ioengine"], "libaio", "{j}");
        let name = j["name"].as_str().unwrap();
        let depth: u64 = match name {
            "precondition" | "SEQ1M-Q8T1-read" | "SEQ1M-Q8T1-write" => 8,
            n if n.contains("Q32") => 32,
            _ => 1,
        };
        assert_eq!(header["iodepth"], depth, "{name}");
        // Huge-page buffers: a 1 MiB request is not cut by where its pages happen to lie.
        assert_eq!(j["workload"]["buffer_memory"], "transparent", "{name}");
        assert!(
            j["layout"]["global_options"]
                .to_string()
                .contains("\"direct\",\"1\""),
            "{j}"
        );
    }
    // The saved record prints the same report.
    let r = plumb()
        .args(["report", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(text(&r.stdout), out);

    // What the kernel granted of the huge pages asked for, as the record says it.
    let (bytes, huge) = jobs.iter().fold((0, 0), |(b, h), j| {
        let w = &j["workload"];
        (
            b + w["buffer_bytes"].as_u64().unwrap(),
            h + w["huge_page_bytes"].as_u64().unwrap(),
        )
    });
    assert!(huge <= bytes && bytes > 0, "{huge} of {bytes}");
    let whole = "I/O buffers: in huge pages for every test";
    assert_eq!(out.contains(whole), huge == bytes, "{out}");
    // A record where the kernel gave fewer says so, and points at the finding.
    let mut less = doc.clone();
    for g in less["groups"].as_array_mut().unwrap() {
        for j in g["jobs"].as_array_mut().unwrap() {
            j["workload"]["huge_page_bytes"] = 0.into();
        }
    }
    let partial = d.path().join("partial.json");
    std::fs::write(&partial, serde_json::to_vec(&less).unwrap()).unwrap();
    let r = plumb()
        .args(["report", partial.to_str().unwrap()])
        .output()
        .unwrap();
    let replay = text(&r.stdout);
    assert!(
        replay.contains("I/O buffers: the kernel gave huge pages for 0B of ")
            && replay.contains("(requests-split)"),
        "{replay}"
    );
}

#[test]
fn read_only_reads_the_data_there_and_bad_targets_get_one_line() {
    let d = TempDir::new().unwrap();
    let f = d.path().join("data.bin");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let o = plumb()
        .args([
            "disk",
            f.to_str().unwrap(),
            "--read-only",
            "--size=4M",
            "--time=1",
            "--no-history",
        ])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!out.contains("precondition:"), "{out}");
    assert!(out.contains("read tests only, on the data there"), "{out}");
    // No write test ran: no per-test write line, and the table's write columns are empty.
    assert!(
        !out.lines()
            .any(|l| (l.starts_with("SEQ") || l.starts_with("RND")) && l.contains(" write ")),
        "{out}"
    );
    let row = out
        .lines()
        .rev()
        .find(|l| l.starts_with("RND4K Q1T1"))
        .unwrap();
    assert_eq!(
        row.split_whitespace().filter(|c| *c == "-").count(),
        2,
        "{row}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 4 << 20], "read-only");
    let o = plumb()
        .args(["disk", "/nonexistent/place", "--quick", "--no-history"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(err.starts_with("plumb: /nonexistent/place: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
