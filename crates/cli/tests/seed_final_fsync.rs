//! seed 002's end-of-run fsync, in a test binary of its own: the finding compares the speed
//! of cached writes with the disk's flush, so it runs without other tests competing for the
//! CPU (cargo runs test binaries one after another).

mod common;
use common::*;

use serde_json::Value;

#[test]
fn seed_002_final_fsync_inflates_total_time() {
    // --file-fsync-freq=0 with --file-fsync-end on (the default): the run's writes are
    // cached, then the end-of-run fsync flushes them inside the total time. Each block is
    // written once (a fixed event count), so the flush holds all of it whatever the speed;
    // zeros as in sysbench, so filling buffers costs nothing in a debug build.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = plumb()
        .current_dir(dir.path())
        .args([
            "fileio",
            "--file-num=1",
            "--file-total-size=512M",
            "--file-block-size=1M",
        ])
        .args([
            "--file-test-mode=seqrewr",
            "--events=512",
            "--time=0",
            "--file-fsync-freq=0",
        ])
        .args([
            "--file-fill=zero",
            "--format=json",
            "prepare",
            "run",
            "cleanup",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"final-fsync-skew"), "{ids:?}");
}
