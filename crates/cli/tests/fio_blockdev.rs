//! fio jobs on a block device: a loop device over a file in a temporary directory (root
//! only; skipped elsewhere, a failure under CI). Reads work; writing to (or trimming) a
//! device that holds a filesystem is refused unless allow_mounted_write=1.

mod common;

use std::path::Path;
use std::process::Command;

use common::loop_dev::LoopDev;
use common::plumb;

fn fio(dev: &Path, args: &[&str]) -> std::process::Output {
    let d = tempfile::TempDir::new().unwrap();
    plumb()
        .arg("fio")
        .arg(format!("--filename={}", dev.display()))
        .args(["--plumb-findings=off", "--size=8m"])
        .args(args)
        .current_dir(d.path())
        .output()
        .unwrap()
}

#[test]
fn reads_a_device_and_refuses_to_write_over_a_filesystem() {
    let Some(lo) = LoopDev::new(64) else {
        return;
    };
    let out = fio(&lo.dev, &["--name=r", "--rw=randread", "--direct=1"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("issued rwts: total=2048,0,0,0"), "{report}");
    assert!(!report.contains("Laying out"), "a device is never laid out");
    let name = lo.dev.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        report.contains(&format!("Disk stats (read/write):\n  {name}: ios=2048/0,")),
        "the device itself is observed: {report}"
    );

    // An empty device takes writes.
    let out = fio(&lo.dev, &["--name=w", "--rw=write"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Trims discard: an empty device takes them too (BLKDISCARD, one per block).
    let out = fio(&lo.dev, &["--name=t", "--rw=randtrim"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("issued rwts: total=0,0,2048,0"), "{report}");

    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&lo.dev)
        .status();
    assert!(mkfs.is_ok_and(|s| s.success()), "mkfs.ext4");
    let out = fio(&lo.dev, &["--name=w", "--rw=write"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "fio: {} holds an ext4 filesystem (signature at byte 1080); plumb will not write to it unless allow_mounted_write=1\n",
            lo.dev.display()
        )
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    // A trim destroys data as a write does: refused the same way.
    for rw in ["trim", "randtrimwrite"] {
        let out = fio(&lo.dev, &["--name=t", &format!("--rw={rw}")]);
        assert_eq!(out.status.code(), Some(1), "{rw}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("holds an ext4 filesystem"),
            "{rw}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "nothing ran");
    }
    // Reading it is fine, and the override writes.
    assert!(fio(&lo.dev, &["--name=r", "--rw=read"]).status.success());
    let out = fio(
        &lo.dev,
        &["--name=w", "--rw=write", "--allow_mounted_write=1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
