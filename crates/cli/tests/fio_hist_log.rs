//! fio's `write_hist_log` with `log_hist_msec` and `log_hist_coarseness`, in plumb named
//! `fio` and, where installed, in Debian's fio 3.33 alike: `<prefix>_clat_hist.<n>.log`,
//! one line per direction each time a completion comes `log_hist_msec` or more after the
//! direction's last sample (`t, ddir, bs, ` then fio's 1856 latency buckets' gains since,
//! summed per 2^coarseness), created empty without `log_hist_msec`. Latencies differ from
//! run to run, so what is compared is the shape: the fields per line, the directions and
//! sizes, the spacing of the samples, and counts that add up to the requests they cover.
//!
//! Without /usr/bin/fio fio's side is skipped with a message, except under CI.

mod common;
use common::peers::{installed, run_named, DropIn, FIO};

use std::path::Path;

use tempfile::TempDir;

/// The lines of `bin`'s histogram log for `extra` (after a rated, time-based read or mix),
/// as numbers.
fn hist(bin: &Path, extra: &[&str]) -> Vec<Vec<u64>> {
    let d = TempDir::new().unwrap();
    let args = [
        &[
            "--name=h",
            "--size=4m",
            "--bs=4k",
            "--write_hist_log=h",
            "--time_based",
            "--output-format=terse",
        ][..],
        extra,
    ]
    .concat();
    let out = run_named(bin, d.path(), &args);
    assert_eq!(out.code, 0, "{} {extra:?}: {}", bin.display(), out.stderr);
    std::fs::read_to_string(d.path().join("h_clat_hist.1.log"))
        .unwrap_or_else(|e| panic!("{} {extra:?}: {e}", bin.display()))
        .lines()
        .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .collect()
}

fn check(bin: &Path, coarseness: u32, extra: &[&str], dirs: &[u64]) {
    let c = format!("--log_hist_coarseness={coarseness}");
    let lines = hist(bin, &[extra, &["--log_hist_msec=20", &c]].concat());
    let who = format!("{} {extra:?} c={coarseness}", bin.display());
    assert!(lines.len() >= 5, "{who}: {} lines", lines.len());
    let fields = 3 + 1856usize.div_ceil(1 << coarseness);
    for l in &lines {
        assert_eq!(l.len(), fields, "{who}");
        assert!(dirs.contains(&l[1]), "{who}: ddir {}", l[1]);
        assert_eq!(l[2], 4096, "{who}");
        assert!(l[3..].iter().sum::<u64>() > 0, "{who}: {l:?}");
    }
    for d in dirs {
        let times: Vec<u64> = lines.iter().filter(|l| l[1] == *d).map(|l| l[0]).collect();
        assert!(!times.is_empty(), "{who}: no ddir {d}");
        // In order, about 20 ms apart: a sample is due 20 ms after the last one's due
        // time (fio takes out the drift), so a late one brings the next closer, and a
        // loaded machine may hold one up.
        assert!(
            times.windows(2).all(|w| w[1] >= w[0] && w[1] - w[0] <= 200),
            "{who}: {times:?}"
        );
        let span = times[times.len() - 1] - times[0];
        assert!(
            span >= 20 * (times.len() as u64 - 1) / 2,
            "{who}: {times:?}"
        );
    }
    // Each completion is counted once: at 1000 requests a second over 300 ms, the
    // samples hold fewer than the requests made and most of them.
    let counted: u64 = lines.iter().map(|l| l[3..].iter().sum::<u64>()).sum();
    assert!((150..=320).contains(&counted), "{who}: {counted}");
}

#[test]
fn samples_have_fios_shape() {
    let drop_in = DropIn::named("fio");
    let fio = installed(
        &[FIO],
        "apt-get install fio",
        "the histogram log comparison",
    );
    let read = ["--rw=randread", "--runtime=300ms", "--rate_iops=1000"];
    let mix = ["--rw=randrw", "--runtime=300ms", "--rate_iops=500,500"];
    for (extra, dirs) in [(&read, &[0][..]), (&mix, &[0, 1][..])] {
        for coarseness in [0, 4, 6] {
            check(&drop_in.bin(), coarseness, extra, dirs);
            if fio {
                check(Path::new(FIO), coarseness, extra, dirs);
            }
        }
    }
}

#[test]
fn without_a_period_the_log_is_made_empty() {
    let drop_in = DropIn::named("fio");
    let args = ["--rw=read", "--runtime=50ms"];
    assert!(hist(&drop_in.bin(), &args).is_empty());
    if installed(
        &[FIO],
        "apt-get install fio",
        "the histogram log comparison",
    ) {
        assert!(hist(Path::new(FIO), &args).is_empty());
    }
}

#[test]
fn a_coarseness_past_fios_range_is_refused() {
    let d = TempDir::new().unwrap();
    let out = run_named(
        &DropIn::named("fio").bin(),
        d.path(),
        &[
            "--name=h",
            "--size=64k",
            "--write_hist_log=h",
            "--log_hist_msec=10",
            "--log_hist_coarseness=7",
        ],
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "plumb: fio option 'log_hist_coarseness' (value '7') is not supported yet: fio's range is 0 to 6 (it reads past its buckets above)\n"
    );
}
