//! The recipes from the seed articles, run as a new user would (scaled down in size and
//! time): plumb must reach by itself the conclusions their authors reached by hand.

mod common;
use common::*;

use serde_json::Value;

/// A directory on the project's disk (not /tmp, which may be tmpfs elsewhere), and the
/// disk to this test alone while the guard lives: the device observations are the whole
/// device's, so another recipe writing at the same time would land in this one's figures
/// (seed 001's "the device wrote far less than the test" most of all).
fn disk_dir() -> (tempfile::TempDir, std::sync::MutexGuard<'static, ()>) {
    static DISK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = DISK.lock().unwrap_or_else(|p| p.into_inner());
    (
        tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        guard,
    )
}

fn findings(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn seed_000_default_recipe_is_made_of_fsyncs_and_file_switching() {
    // sysbench fileio --file-total-size=15G --file-test-mode=rndrw --time=300 --max-requests=0
    let (dir, _disk) = disk_dir();
    let v = json_run_in(
        dir.path(),
        &[
            "fileio",
            "--file-total-size=32M",
            "--file-test-mode=rndrw",
            "--time=1",
            "--max-requests=0",
            "prepare",
            "run",
            "cleanup",
        ],
    );
    let ids = findings(&v);
    assert!(ids.contains(&"fsync-dominated".to_string()), "{ids:?}");
    assert!(ids.contains(&"many-files".to_string()), "{ids:?}");
    // 32 MiB of buffered reads on a machine with gigabytes of memory.
    assert!(ids.contains(&"page-cache-reads".to_string()), "{ids:?}");
    // The advice names the settings in the syntax the user typed.
    let advice = |id: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .map(|f| f["advice"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(
        advice("fsync-dominated")
            .contains("--file-num multiplies the fsyncs: use --file-fsync-freq=0"),
        "{}",
        advice("fsync-dominated")
    );
    assert!(advice("many-files").contains("--file-num=1 (same --file-total-size)"));
    assert!(advice("page-cache-reads").starts_with("Use --file-extra-flags=direct,"));
}

#[test]
fn seed_000_tuned_recipe_has_none_of_those_findings() {
    // The author's fix: one file, no fsync, direct I/O, async.
    let (dir, _disk) = disk_dir();
    let v = json_run_in(
        dir.path(),
        &[
            "fileio",
            "--file-total-size=32M",
            "--file-test-mode=rndrw",
            "--time=1",
            "--max-requests=0",
            "--file-io-mode=async",
            "--file-extra-flags=direct",
            "--file-num=1",
            "--file-rw-ratio=1",
            "--file-fsync-freq=0",
            "prepare",
            "run",
            "cleanup",
        ],
    );
    let ids = findings(&v);
    for id in [
        "fsync-dominated",
        "many-files",
        "page-cache-reads",
        "page-cache-writes",
    ] {
        assert!(!ids.contains(&id.to_string()), "{id} in {ids:?}");
    }
}

#[test]
fn seed_001_buffered_writes_without_sync_measure_the_page_cache() {
    // dd if=/dev/zero of=disk.test without oflag=direct,sync: writes land in memory.
    let (dir, _disk) = disk_dir();
    // Earlier tests' dirty pages written back during this run would count as its writes.
    assert!(std::process::Command::new("sync")
        .status()
        .unwrap()
        .success());
    let v = json_run_in(
        dir.path(),
        &[
            "fileio",
            "--file-num=1",
            "--file-total-size=64M",
            "--file-test-mode=rndwr",
            "--time=1",
            "--file-fsync-freq=0",
            "--file-fsync-end=off",
            "prepare",
            "run",
            "cleanup",
        ],
    );
    let ids = findings(&v);
    assert!(ids.contains(&"page-cache-writes".to_string()), "{ids:?}");
}

#[test]
fn seed_002_strace_attached_makes_the_result_invalid() {
    if !peer("strace") {
        return;
    }
    let out = scenario(&[
        "cpu",
        "--cpu-max-prime=300",
        "--time=0.5",
        "--format=json",
        "--strict",
        "run",
    ])
    .under(&["strace", "-f", "-o", "/dev/null"])
    .output();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = job_json(&out.stdout);
    assert!(findings(&v).contains(&"tracer-attached".to_string()));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--strict"));
}

fn seed_002_writes(mode: &str) -> Vec<String> {
    // The article's shape: 16 threads, 16 files, buffered, --file-fsync-end=no.
    let (dir, _disk) = disk_dir();
    let v = json_run_in(
        dir.path(),
        &[
            "fileio",
            "--threads=16",
            "--file-num=16",
            "--file-total-size=16M",
            "--file-block-size=4096",
            &format!("--file-test-mode={mode}"),
            "--file-fsync-end=no",
            "--time=1",
            "prepare",
            "run",
            "cleanup",
        ],
    );
    findings(&v)
}

#[test]
fn seed_002_sequential_rewrite_shares_one_file_whatever_the_file_count() {
    let ids = seed_002_writes("seqrewr");
    assert!(ids.contains(&"shared-file-writers".to_string()), "{ids:?}");
}

#[test]
fn seed_002_random_writes_over_as_many_files_as_threads_do_not_share() {
    let ids = seed_002_writes("rndwr");
    assert!(!ids.contains(&"shared-file-writers".to_string()), "{ids:?}");
}

#[test]
fn files_on_tmpfs_are_not_a_disk_and_strict_refuses_them() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let out = scenario(&[
        "fileio",
        "--file-num=1",
        "--file-total-size=8M",
        "--file-test-mode=rndrd",
        "--time=0.5",
    ])
    .args(&["--strict", "--format=json", "prepare", "run", "cleanup"])
    .in_dir(dir.path())
    .output();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = job_json(&out.stdout);
    assert!(findings(&v).contains(&"target-not-a-disk".to_string()));
    // The run still reports in full and cleans up after itself.
    assert!(v["events"].as_u64().unwrap() > 0);
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
