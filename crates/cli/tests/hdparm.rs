//! `plumb hdparm -T -t`: hdparm's lines on a loop device (root only; skipped elsewhere, a
//! failure under CI), what each measures, the findings, and the replay.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{plumb, shape};

struct Loop {
    dev: PathBuf,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new() -> Option<Loop> {
        let dir = tempfile::TempDir::new().unwrap();
        let img = dir.path().join("disk.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(32 << 20)
            .unwrap();
        // Tests set loop devices up at the same time: a lost race for a free one is retried.
        let mut out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .ok()?;
        for _ in 0..5 {
            if out.status.success() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
            out = Command::new("losetup")
                .args(["-f", "--show"])
                .arg(&img)
                .output()
                .ok()?;
        }
        if !out.status.success() {
            assert!(
                std::env::var("CI").is_err(),
                "no loop device: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(Loop {
            dev: PathBuf::from(dev),
            _dir: dir,
        })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// "N MB in S seconds = R MB/sec" after `label`, as hdparm prints it.
fn timing(line: &str, label: &str) -> (u64, f64, f64) {
    let rest = line
        .strip_prefix(label)
        .unwrap_or_else(|| panic!("{line:?} does not start with {label:?}"));
    let (mb, rest) = rest.split_once(" MB in ").unwrap();
    let (secs, rest) = rest.split_once(" seconds = ").unwrap();
    let rate = rest.strip_suffix(" MB/sec").unwrap();
    (
        mb.parse().unwrap(),
        secs.trim().parse().unwrap(),
        rate.trim().parse().unwrap(),
    )
}

#[test]
fn cached_and_buffered_timings_print_hdparm_s_lines_and_what_they_measure() {
    let Some(l) = Loop::new() else { return };
    let d = tempfile::TempDir::new().unwrap();
    let json = d.path().join("h.json");
    let dev = l.dev.display().to_string();
    let o = plumb()
        .args(["hdparm", "-T", "-t", &dev, "--no-history"])
        .arg(format!("--json={}", json.display()))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "");
    assert_eq!(lines[1], format!("{dev}:"));
    let (_, secs, rate) = timing(lines[2], " Timing cached reads:   ");
    assert!(secs > 1.0 && rate > 0.0, "{}", lines[2]);
    // The whole 32 MiB device is read, well within 3 s.
    let (mb, _, _) = timing(lines[3], " Timing buffered disk reads: ");
    assert_eq!(mb, 32, "{}", lines[3]);
    assert!(out.contains("cached reads: the same 2 MiB read again and again"));
    assert!(out.contains("buffered disk reads: one sequential read from the start"));
    // Cached reads come from memory, and plumb says so.
    assert!(out.contains("(page-cache-reads)"), "{out}");
    let r = plumb()
        .args(["report", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&r.stdout), out);
    // hdparm's order whatever the flags' order, and one flag alone.
    let o = plumb()
        .args(["hdparm", "-t", &dev, "--no-history"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains(" Timing buffered disk reads: 32 MB in "),
        "{out}"
    );
    assert!(!out.contains("Timing cached reads"), "{out}");
}

#[test]
fn a_missing_device_is_one_line() {
    let o = plumb()
        .args(["hdparm", "-t", "/dev/plumb-no-such-disk", "--no-history"])
        .output()
        .unwrap();
    // hdparm's status for a name that does not exist (its errno, ENOENT), and its words.
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err, "plumb: /dev/plumb-no-such-disk: No such file or directory\n",
        "{err}"
    );
}

/// stderr of a refused `plumb hdparm ARGS`: exit 1, one line, nothing on stdout.
fn refused(args: &[&str]) -> String {
    let o = plumb()
        .arg("hdparm")
        .args(args)
        .arg("--no-history")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Neither fio's wording nor a size to specify: the front end's own terms.
    assert!(!err.contains("size=") && !err.contains("fio"), "{err}");
    err
}

#[test]
fn a_file_too_short_to_time_is_refused_and_left_as_it_was() {
    let d = tempfile::TempDir::new().unwrap();
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "precious data\n").unwrap();
    let before = std::fs::metadata(&notes).unwrap().modified().unwrap();
    let name = notes.to_str().unwrap();
    for flag in ["-T", "-t"] {
        let err = refused(&[flag, name]);
        assert_eq!(
            err,
            format!(
                "plumb: {name}: read(2097152) returned 14 bytes: too small to time (2 MiB reads)\n"
            )
        );
        assert_eq!(std::fs::read(&notes).unwrap(), b"precious data\n");
        assert_eq!(
            std::fs::metadata(&notes).unwrap().modified().unwrap(),
            before
        );
    }
    let empty = d.path().join("empty");
    std::fs::write(&empty, "").unwrap();
    let err = refused(&["-T", empty.to_str().unwrap()]);
    assert!(
        err.ends_with(": read() hit EOF - device too small\n"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // Only what exists is timed: nothing made under a missing name either.
    let o = plumb()
        .args(["hdparm", "-T", d.path().join("new").to_str().unwrap()])
        .arg("--no-history")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.path().join("new").exists());
}

#[test]
fn a_file_long_enough_is_only_read() {
    let d = tempfile::TempDir::new().unwrap();
    let f = d.path().join("data.bin");
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let before = std::fs::metadata(&f).unwrap().modified().unwrap();
    let o = plumb()
        .args(["hdparm", "-T", "-t", f.to_str().unwrap(), "--no-history"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(" Timing cached reads:   "), "{out}");
    assert!(out.contains(" Timing buffered disk reads: "), "{out}");
    assert_eq!(std::fs::read(&f).unwrap(), data);
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), before);
}

#[test]
fn what_cannot_be_read_is_said_in_hdparm_s_words() {
    let d = tempfile::TempDir::new().unwrap();
    let dir = d.path().to_str().unwrap();
    assert_eq!(
        refused(&["-t", dir]),
        format!("plumb: {dir}: read() failed: Is a directory\n")
    );
    // A character device has no end to read up to.
    let err = refused(&["-t", "/dev/null"]);
    assert!(err.starts_with("plumb: /dev/null: "), "{err}");
    // A block device that cannot be opened (here: no driver behind its number) gives the
    // open's error, in plumb hdparm and in plumb fio alike (root only: mknod).
    let node = d.path().join("blk");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["b", "251", "7"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        return;
    }
    let dev = node.to_str().unwrap();
    // ENXIO; EACCES where the temporary directory is mounted nodev.
    let err = refused(&["-t", dev]);
    assert!(
        err == format!("plumb: {dev}: No such device or address\n")
            || err == format!("plumb: {dev}: Permission denied\n"),
        "{err}"
    );
    let o = plumb()
        .args(["fio", "--name=x", "--rw=read"])
        .arg(format!("--filename={dev}"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "fio: failed opening blockdev {dev} for size check\n"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("func=open({dev}), error=")), "{err}");
    assert!(!err.contains("size="), "{err}");
}

#[test]
fn the_usage_line_is_the_command_s_not_the_arguments_typed() {
    let o = plumb().args(["hdparm", "--no-history"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err,
        "plumb: hdparm needs a device (usage: plumb hdparm [OPTIONS] <DEVICE>...)\n"
    );
}

#[test]
fn the_lines_have_hdparm_s_shape() {
    let Some(l) = Loop::new() else { return };
    let have = Command::new("hdparm").arg("-V").output().is_ok();
    if !have {
        assert!(std::env::var("CI").is_err(), "hdparm is not installed");
        return;
    }
    let dev = l.dev.display().to_string();
    let theirs = Command::new("hdparm")
        .args(["-T", "-t", &dev])
        .output()
        .unwrap();
    assert!(
        theirs.status.success(),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let ours = plumb()
        .args(["hdparm", "-t", "-T", &dev, "--no-history"])
        .output()
        .unwrap();
    let theirs = String::from_utf8_lossy(&theirs.stdout).to_string();
    let ours = String::from_utf8_lossy(&ours.stdout).to_string();
    // hdparm's whole output is the device line and the two timings: plumb's starts the same.
    let n = theirs.lines().count();
    let a: Vec<String> = theirs.lines().map(shape).collect();
    let b: Vec<String> = ours.lines().take(n).map(shape).collect();
    assert_eq!(a, b, "hdparm:\n{theirs}\nplumb:\n{ours}");
}
