//! `name=` inside a job file's section, against fio 3.33 on the same job files (fio
//! missing: skipped, a failure under CI).
//!
//! fio 3.33 measured: a section's own `name=` names the job in its header line, its job
//! block, the JSON `jobname` and its log files (`NAME_bw.1.log`), and is the name
//! `wait_for=` finds; its files keep the section's name (`SECTION.0.0`). In `[global]`,
//! `name=` is overridden by each section's name.

mod common;
use common::fio_text::mask_normal;
use common::peers::{fio_and_drop_in, installed, run_named, DropIn, FIO};

use std::path::Path;

use tempfile::TempDir;

fn fio_here() -> bool {
    installed(&[FIO], "apt-get install fio", "the name= comparison")
}

/// The masked report, each job block's first line up to its pid (the pid and date differ)
/// and no padding after `=` (a number's width pads it).
fn masked(stdout: &str) -> String {
    mask_normal(stdout)
        .lines()
        .map(|l| {
            let mut l = l.split(": pid=").next().unwrap_or(l).to_string();
            while l.contains("= ") {
                l = l.replace("= ", "=");
            }
            l
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn jobnames(stdout: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(stdout).expect("a JSON document");
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_sections_name_names_the_job_and_one_in_global_does_not() {
    if !fio_here() {
        return;
    }
    for (text, names) in [
        ("[sec]\nname=other\nsize=1m\nioengine=null\n", vec!["other"]),
        (
            "[global]\nname=glob\nsize=1m\nioengine=null\n[sec]\n[sec2]\nname=x\n",
            vec!["sec", "x"],
        ),
    ] {
        let files = [("j.fio", text)];
        let (theirs, ours) = fio_and_drop_in(&files, &["j.fio"]);
        assert_eq!(theirs.code, 0, "{}", theirs.stderr);
        assert_eq!(ours.code, theirs.code, "{text}: {}", ours.stderr);
        assert_eq!(masked(&ours.stdout), masked(&theirs.stdout), "{text}");
        assert!(ours.stdout.contains(&format!("{}: (g=0)", names[0])));
        let (theirs, ours) = fio_and_drop_in(&files, &["j.fio", "--output-format=json"]);
        assert_eq!(jobnames(&theirs.stdout), names, "{text}");
        assert_eq!(jobnames(&ours.stdout), names, "{text}");
    }
}

/// The files a run of `bin` leaves in a fresh directory holding the job file, besides it.
fn left_behind(bin: &Path, text: &str) -> Vec<String> {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("j.fio"), text).unwrap();
    let out = run_named(bin, dir.path(), &["j.fio"]);
    assert_eq!(out.code, 0, "{}: {}", bin.display(), out.stderr);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "j.fio")
        .collect();
    names.sort();
    names
}

#[test]
fn files_keep_the_section_name_and_logs_take_name() {
    if !fio_here() {
        return;
    }
    let text = "[sec]\nname=other\nsize=64k\nwrite_bw_log\n[sec2]\nname=two\nsize=64k\nfilename_format=$jobname.f\n";
    let drop_in = DropIn::named("fio");
    let ours = left_behind(&drop_in.bin(), text);
    assert_eq!(ours, ["other_bw.1.log", "sec.0.0", "sec2.f"]);
    assert_eq!(ours, left_behind(Path::new(FIO), text));
}

#[test]
fn wait_for_finds_a_sections_name_not_one_in_global() {
    if !fio_here() {
        return;
    }
    for (text, code) in [
        (
            "[global]\nsize=64k\nioengine=null\n[sec]\nname=other\n[b]\nwait_for=other\n",
            0,
        ),
        (
            "[global]\nsize=64k\nioengine=null\n[sec]\nname=other\n[b]\nwait_for=sec\n",
            1,
        ),
        (
            "[global]\nname=g\nsize=64k\nioengine=null\n[a]\n[b]\nwait_for=g\n",
            1,
        ),
    ] {
        let (theirs, ours) = fio_and_drop_in(&[("j.fio", text)], &["j.fio"]);
        assert_eq!(theirs.code, code, "{text}: {}", theirs.stderr);
        assert_eq!(ours.code, code, "{text}: {}", ours.stderr);
        assert_eq!(ours.stderr, theirs.stderr, "{text}");
        assert_eq!(masked(&ours.stdout), masked(&theirs.stdout), "{text}");
    }
}
