//! plumb-fileio names settings, not options: the sysbench front end must spell each one
//! as sysbench's option in every error, through the real binary.

mod common;
use common::*;

use std::path::Path;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(std::env::temp_dir()).unwrap()
}

fn fileio(d: &Path, args: &[&str]) -> (i32, String) {
    let dir = format!("--file-dir={}", d.display());
    let mut v = vec![
        "fileio",
        dir.as_str(),
        "--file-num=2",
        "--file-total-size=2M",
    ];
    v.extend_from_slice(args);
    let (code, _, err) = run(&v);
    if code != 0 {
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    (code, err)
}

#[test]
fn usage_errors_name_sysbench_options() {
    assert_usage_error(
        &["fileio", "--file-total-size=1", "--file-num=2", "prepare"],
        &["--file-total-size (1) is smaller than --file-num (2): every file would be empty"],
    );
    assert_usage_error(
        &[
            "fileio",
            "--validate",
            "--file-block-size=12",
            "--file-test-mode=rndrd",
            "run",
        ],
        &["--validate needs --file-block-size larger than 12 bytes"],
    );
    assert_usage_error(
        &[
            "fileio",
            "--file-io-mode=null",
            "--file-extra-flags=direct",
            "--file-test-mode=rndrd",
            "run",
        ],
        &["--file-extra-flags=direct cannot apply to --file-io-mode=null: the null engine does no I/O"],
    );
    assert_usage_error(
        &["fileio", "run"],
        &["missing required option --file-test-mode for 'run' (allowed: seqwr, "],
    );
}

#[test]
fn runtime_errors_name_sysbench_options() {
    let d = tmp();
    let (code, err) = fileio(d.path(), &["--file-test-mode=rndrd", "run"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "no prepared file set in {}: run 'plumb fileio --file-num=2 --file-total-size=2097152 prepare' --file-dir={} first",
            d.path().display(),
            d.path().display()
        )),
        "{err}"
    );

    let (code, err) = fileio(d.path(), &["--file-block-size=4096", "prepare"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = fileio(
        d.path(),
        &[
            "--file-block-size=4096",
            "--validate",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("--validate needs files prepared with --validate and --file-block-size=4096, but test_file.0 holds 'random' data: run prepare again with --validate"),
        "{err}"
    );

    let (code, err) = fileio(
        d.path(),
        &[
            "--file-block-size=1000",
            "--file-extra-flags=direct",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert_eq!(code, 1);
    // The alignment check where the filesystem does direct I/O, the refusal where it does not.
    assert!(
        err.contains("--file-block-size is 1000 bytes, not a multiple of")
            || err.contains("refuses O_DIRECT (--file-extra-flags=direct)")
            || err.contains("cannot do direct I/O (--file-extra-flags=direct)"),
        "{err}"
    );
    assert!(err.contains("--file-extra-flags=direct"), "{err}");
}

/// sysbench's own suite runs `--validate` with a writing mode on files prepared without it:
/// writes check nothing, so plumb runs it (checksummed blocks written), and the set is then
/// mixed, so a validating read is refused rather than failing on the plain blocks.
#[test]
fn validate_with_a_writing_mode_runs_on_plain_files() {
    let d = tempfile::tempdir().unwrap();
    let (code, err) = fileio(d.path(), &["prepare"]);
    assert_eq!(code, 0, "{err}");
    let dir = format!("--file-dir={}", d.path().display());
    let args = [
        "fileio",
        dir.as_str(),
        "--file-num=2",
        "--file-total-size=2M",
        "--file-test-mode=rndwr",
        "--validate",
        "--events=150",
        "--time=0",
        "run",
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Validation checks: on.\n"), "{out}");
    assert!(out.contains("writes/s:"), "{out}");
    let (code, err) = fileio(d.path(), &["--validate", "--file-test-mode=rndrd", "run"]);
    assert_eq!(code, 1);
    assert!(err.contains("holds 'mixed' data"), "{err}");
}
