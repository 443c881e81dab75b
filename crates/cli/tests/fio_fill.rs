//! fio's `fill_device` (alias `fill_fs`): a writing job goes on until the filesystem is
//! full, and ENOSPC ends it cleanly (err= 0, exit 0), with the write that failed counted as
//! issued but not as bytes, as fio 3.33 counts it. Checked on a 4 MiB tmpfs mounted for the
//! test (root only: skipped elsewhere, a failure under CI), against Debian's fio when it is
//! installed.

mod common;
use common::peers::installed;
use common::small_fs::SmallFs;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

const PEER: &str = "/usr/bin/fio";

fn run(bin: &Path, dir: &Path, args: &[String]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn plumb_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_plumb"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The `issued rwts` total of writes and the `io=` of the WRITE group line.
fn figures(report: &str) -> (String, String) {
    let issued = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("issued rwts: total="))
        .map(|t| t.split(' ').next().unwrap().to_string())
        .unwrap_or_default();
    let io = report
        .lines()
        .find(|l| l.trim_start().starts_with("WRITE:"))
        .and_then(|l| l.split("io=").nth(1))
        .map(|t| t.split(',').next().unwrap().to_string())
        .unwrap_or_default();
    (issued, io)
}

#[test]
fn a_writing_job_fills_the_filesystem_and_ends_cleanly_at_enospc() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let peer = installed(&[PEER], "apt-get install fio", "the fill_device comparison");
    for (engine, depth, issued) in [("psync", "1", "0,65,0,0"), ("libaio", "4", "0,68,0,0")] {
        let args: Vec<String> = [
            "fio",
            "--name=f",
            "--rw=write",
            "--bs=64k",
            "--fill_device=1",
            &format!("--ioengine={engine}"),
            &format!("--iodepth={depth}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut with_dir = args.clone();
        with_dir.push(format!("--directory={}", fs.path().display()));
        let out = run(&plumb_bin(), fs.path(), &with_dir);
        let report = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{engine}: {}",
            text(&out.stderr)
        );
        assert!(report.contains("err= 0"), "{report}");
        // 64 writes of 64 KiB fill 4 MiB; the next (and those in flight) find ENOSPC.
        assert_eq!(
            figures(&report),
            (issued.to_string(), "4096KiB (4194kB)".to_string()),
            "{engine}: {report}"
        );
        let file = fs.path().join("f.0.0");
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 4 << 20);
        fs.clear();
        if peer {
            let out = run(Path::new(PEER), fs.path(), &with_dir[1..]);
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(
                figures(&text(&out.stdout)),
                figures(&report),
                "{engine}: fio and plumb"
            );
            fs.clear();
        }
    }
    // The alias, and a size smaller than the filesystem: the size ends it, as usual.
    let out = run(
        &plumb_bin(),
        fs.path(),
        &[
            "fio".into(),
            "--name=g".into(),
            "--rw=write".into(),
            "--fill_fs=1".into(),
            "--size=1m".into(),
            format!("--directory={}", fs.path().display()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        figures(&text(&out.stdout)),
        ("0,256,0,0".to_string(), "1024KiB (1049kB)".to_string())
    );
}

#[test]
fn fill_device_on_a_job_that_reads_is_refused_in_one_line() {
    let d = TempDir::new().unwrap();
    let out = run(
        &plumb_bin(),
        d.path(),
        &[
            "fio".into(),
            "--name=r".into(),
            "--rw=randrw".into(),
            "--fill_device=1".into(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("plumb: fio option 'fill_device' (value '1') is not supported yet"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing ran"
    );
}

/// Under the name `fio`, stderr is fio's: one `io_u error` line for every write that found
/// the filesystem full (one for psync, the four in flight for libaio at iodepth=4), though
/// the job ends cleanly.
#[test]
fn under_the_name_fio_each_write_that_found_it_full_is_named() {
    let Some(fs) = SmallFs::mount(4) else { return };
    let peer = installed(&[PEER], "apt-get install fio", "the fill_device comparison");
    let drop_in = common::peers::DropIn::named("fio");
    for (engine, lines) in [("psync", 1), ("libaio", 4)] {
        let args: Vec<String> = vec![
            "--name=f".into(),
            "--rw=write".into(),
            "--bs=64k".into(),
            "--fill_device=1".into(),
            format!("--ioengine={engine}"),
            "--iodepth=4".into(),
            format!("--directory={}", fs.path().display()),
        ];
        let out = run(&drop_in.bin(), fs.path(), &args);
        assert_eq!(out.status.code(), Some(0));
        let ours = text(&out.stderr);
        let want: String = (0..lines)
            .map(|k| {
                format!(
                    "fio: io_u error on file {}/f.0.0: No space left on device: write offset={}, buflen=65536\n",
                    fs.path().display(),
                    (4 << 20) + k * 65536
                )
            })
            .collect();
        assert_eq!(ours, want, "{engine}");
        fs.clear();
        if peer {
            let out = run(Path::new(PEER), fs.path(), &args);
            assert_eq!(text(&out.stderr), ours, "{engine}: fio and plumb");
            fs.clear();
        }
    }
}
