//! Edges of fio's option grammar where fio 3.33 does something unexpected, each against fio
//! itself on the same input (fio missing: skipped, a failure under CI). Every run is bounded:
//! files of at most 8 MiB, or a tmpfs that small, and a time_based run is stopped by a
//! signal after 1.5 s.
//!
//! fio 3.33 measured:
//! - `runtime=-1` parses (parse.c keeps the time unsigned: some 2^64 - 10^6 µs), so it is a
//!   runtime no job reaches: a size-based job ends with its size; a time_based one loops
//!   over its file until a signal stops it.
//! - A section header without its `]` loses its last character all the same (init.c drops
//!   it unread): `[a` is a job named "" (files `.0.0`), `[ab` the job "a"; a lone `[` is
//!   `fio: option <[> outside of [] job section`, status 1.
//! - `bs=0,4k` is taken: each field of an r,w,t list is parsed on its own, a field that
//!   fails says so (`bs: min value out of range: 0 (1 min)` on stderr) and leaves its
//!   direction as it was (read: 4 KiB, fio's default, or an earlier `bs`), and the option
//!   fails only when every field does (`bs=0,0`, `bs=0`). So are ba, percentage_random,
//!   rate, rate_iops, rate_min and max_latency.
//! - `filesize=N%` parses, but the percentage's encoding (2^64 - 1 - N) stays the size in
//!   bytes: a write lays out a file of some 16 EiB until the filesystem is full (ENOSPC,
//!   status 1), a read fails at ftruncate (EINVAL, status 1). plumb refuses it instead.

mod common;
use common::peers::{installed, run_named, DropIn, Printed, FIO};
use common::small_fs::SmallFs;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

fn fio_here(purpose: &str) -> bool {
    installed(&[FIO], "apt-get install fio", purpose)
}

/// fio, then plumb named `fio`, each in a fresh directory, with `args`.
fn both(args: &[&str]) -> (Printed, Printed) {
    let drop_in = DropIn::named("fio");
    let (a, b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    (
        run_named(Path::new(FIO), a.path(), args),
        run_named(&drop_in.bin(), b.path(), args),
    )
}

/// The JSON document of a run's stdout (after any line fio prints before it).
fn doc(out: &Printed) -> Value {
    let start = out
        .stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {} / {}", out.stdout, out.stderr));
    serde_json::from_str(&out.stdout[start..]).expect("a JSON document")
}

/// (bytes, requests) of one direction of the first job.
fn io(out: &Printed, dir: &str) -> (u64, u64) {
    let j = &doc(out)["jobs"][0][dir];
    (
        j["io_bytes"].as_u64().unwrap(),
        j["total_ios"].as_u64().unwrap(),
    )
}

/// The first line of a normal report: the job's name, group, mode and block sizes.
fn header(out: &Printed) -> &str {
    out.stdout.lines().next().unwrap_or_default()
}

/// fio 3.33 takes --max-jobs with any value and does nothing with it: two jobs run under
/// --max-jobs=1 and one under --max-jobs=abc (fio's own test scripts pass --max-jobs=16).
#[test]
fn max_jobs_is_taken_and_changes_nothing() {
    if !fio_here("--max-jobs against fio") {
        return;
    }
    let job = |name| [name, "--ioengine=null", "--size=64k"];
    for (limit, jobs) in [("--max-jobs=1", 2), ("--max-jobs=abc", 1)] {
        let mut args = vec![limit, "--output-format=json"];
        for name in ["--name=a", "--name=b"].into_iter().take(jobs) {
            args.extend(job(name));
        }
        let (theirs, ours) = both(&args);
        for out in [&theirs, &ours] {
            assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
            assert_eq!(doc(out)["jobs"].as_array().map(Vec::len), Some(jobs));
            assert_eq!(io(out, "read"), (65536, 16));
        }
    }
}

#[test]
fn a_negative_runtime_is_no_limit() {
    if !fio_here("the runtime=-1 comparison") {
        return;
    }
    // Size-based: the size ends the job, as without a runtime.
    let args = [
        "--name=a",
        "--filename=f",
        "--size=4m",
        "--rw=write",
        "--runtime=-1",
        "--output-format=json",
    ];
    let (theirs, ours) = both(&args);
    assert_eq!(theirs.code, 0, "{}", theirs.stderr);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(ours.stderr, theirs.stderr);
    assert_eq!(io(&theirs, "write"), (4 << 20, 1024));
    assert_eq!(io(&ours, "write"), io(&theirs, "write"));
    assert_eq!(doc(&ours)["jobs"][0]["job options"]["runtime"], "-1");

    // Parsed as fio parses it, with time_based too: nothing to say.
    for extra in [&[][..], &["--time_based"][..]] {
        let mut args = vec!["--name=a", "--size=4m", "--runtime=-1", "--parse-only"];
        args.extend_from_slice(extra);
        let (theirs, ours) = both(&args);
        assert_eq!(
            theirs,
            Printed {
                code: 0,
                stdout: String::new(),
                stderr: String::new()
            }
        );
        assert_eq!(ours, theirs, "{args:?}");
    }
}

/// Start `bin` on a time_based job with runtime=-1 over a 4 MiB file, let it run 1.5 s,
/// then stop it with SIGTERM: whether it was still running, and what it printed.
fn stopped_time_based(bin: &Path) -> (bool, Printed) {
    stopped_time_based_with(bin, &["--runtime=-1"])
}

/// [`stopped_time_based`] with `times` (the runtime and what goes with it) instead.
fn stopped_time_based_with(bin: &Path, times: &[&str]) -> (bool, Printed) {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let dir = TempDir::new().unwrap();
    let mut cmd = Command::new(bin);
    cmd.arg0("fio");
    let child = cmd
        .args([
            "--name=a",
            "--filename=f",
            "--size=4m",
            "--rw=write",
            "--time_based",
            "--output-format=json",
        ])
        .args(times)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let mut child = child;
    let running = child.try_wait().unwrap().is_none();
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let code = out
        .status
        .code()
        .or_else(|| out.status.signal().map(|s| 128 + s))
        .unwrap_or(-1);
    (
        running,
        Printed {
            code,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
    )
}

#[test]
fn a_negative_runtime_keeps_a_time_based_job_looping_until_a_signal() {
    if !fio_here("the runtime=-1 time_based comparison") {
        return;
    }
    let drop_in = DropIn::named("fio");
    for bin in [Path::new(FIO), drop_in.bin().as_path()] {
        let (running, out) = stopped_time_based(bin);
        // Still running after 1.5 s: past its 4 MiB (time_based was kept, no limit set).
        assert!(
            running,
            "{}: {} / {}",
            bin.display(),
            out.stdout,
            out.stderr
        );
        assert_eq!(out.code, 128, "{}: {}", bin.display(), out.stderr);
        let (bytes, _) = io(&out, "write");
        assert!(bytes > 4 << 20, "{}: {bytes} bytes", bin.display());
        assert!(
            !out.stderr.contains("time_based requires a runtime"),
            "{}",
            out.stderr
        );
    }
}

/// fio, then plumb named `fio`, on a job file holding `text`, each in a fresh directory;
/// with the names of the files each run left beside the job file.
fn on_job_file(text: &str, args: &[&str]) -> [(Printed, Vec<String>); 2] {
    let drop_in = DropIn::named("fio");
    let bins = [Path::new(FIO).to_path_buf(), drop_in.bin()];
    bins.map(|bin| {
        let dir = TempDir::new().unwrap();
        std::fs::write(dir.path().join("j.fio"), text).unwrap();
        let mut all = vec!["j.fio"];
        all.extend_from_slice(args);
        let out = run_named(&bin, dir.path(), &all);
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "j.fio")
            .collect();
        names.sort();
        (out, names)
    })
}

/// Each job's JSON `jobname`: fio leaves the key out for an empty name.
fn jobnames(out: &Printed) -> Vec<Option<String>> {
    doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.get("jobname").map(|n| n.as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn an_unclosed_section_header_loses_its_last_character() {
    if !fio_here("the unclosed section header comparison") {
        return;
    }
    let text = "[a\nsize=1m\nrw=write\n";
    let [(theirs, their_files), (ours, our_files)] = on_job_file(text, &[]);
    assert_eq!(theirs.code, 0, "{}", theirs.stderr);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert!(
        header(&theirs).starts_with(": (g=0): rw=write"),
        "{}",
        theirs.stdout
    );
    assert_eq!(header(&ours), header(&theirs));
    assert_eq!(their_files, [".0.0"]);
    assert_eq!(our_files, their_files);

    let text = "[ab\nsize=1m\nrw=write\n[c\nsize=1m\nrw=write\n";
    let [(theirs, _), (ours, _)] = on_job_file(text, &["--output-format=json"]);
    assert_eq!(jobnames(&theirs), [Some("a".to_string()), None]);
    assert_eq!(jobnames(&ours), jobnames(&theirs));

    let [(theirs, _), (ours, _)] = on_job_file("[ab\nsize=1m\n[global\nbs=8k\n", &["--showcmd"]);
    assert_eq!(
        theirs.stdout,
        "fio --name=a --size=1m --name=globa --bs=8k \n"
    );
    assert_eq!(ours, theirs);

    // A lone `[` names nothing: an option outside any section.
    let [(theirs, their_files), (ours, our_files)] = on_job_file("[\nsize=1m\n", &[]);
    assert_eq!(theirs.code, 1);
    assert_eq!(theirs.stderr, "fio: option <[> outside of [] job section\n");
    assert_eq!(ours, theirs);
    assert!(their_files.is_empty() && our_files.is_empty());
}

const MIN_BS: &str = "bs: min value out of range: 0 (1 min)\n";

#[test]
fn a_failed_bs_field_leaves_its_direction_as_it_was() {
    if !fio_here("the bs=0,4k comparison") {
        return;
    }
    let bs_line = "bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B";
    for rw in ["write", "read", "rw"] {
        let rw_arg = format!("--rw={rw}");
        let mut outs = Vec::new();
        for format in ["normal", "json"] {
            let fmt = format!("--output-format={format}");
            let args = [
                "--name=a",
                "--filename=f",
                "--size=1m",
                "--bs=0,4k",
                rw_arg.as_str(),
                fmt.as_str(),
            ];
            let (theirs, ours) = both(&args);
            assert_eq!(theirs.code, 0, "{args:?}: {}", theirs.stderr);
            assert_eq!(theirs.stderr, MIN_BS, "{args:?}");
            assert_eq!(ours.code, 0, "{args:?}: {}", ours.stderr);
            assert_eq!(ours.stderr, theirs.stderr, "{args:?}");
            outs.push((theirs, ours));
        }
        let (theirs, ours) = &outs[0];
        assert!(header(theirs).contains(bs_line), "{}", theirs.stdout);
        assert_eq!(header(ours), header(theirs));
        let (theirs, ours) = &outs[1];
        let (tr, tw) = (io(theirs, "read"), io(theirs, "write"));
        let (or, ow) = (io(ours, "read"), io(ours, "write"));
        // 1 MiB in 4 KiB requests, however a mix draws its directions.
        assert_eq!(tr.0 + tw.0, 1 << 20, "{rw}");
        assert_eq!(tr.1 + tw.1, 256, "{rw}");
        assert_eq!(or.0 + ow.0, 1 << 20, "{rw}");
        assert_eq!(or.1 + ow.1, 256, "{rw}");
        match rw {
            "write" => assert_eq!((tr, or), ((0, 0), (0, 0))),
            "read" => assert_eq!((tw, ow), ((0, 0), (0, 0))),
            _ => assert!(or.1 > 0 && ow.1 > 0, "{rw}: {or:?} {ow:?}"),
        }
    }

    // The direction keeps an earlier bs, and a field that fails last carries nothing.
    for (bs, rw, want) in [
        (
            &["--bs=16k", "--bs=0,8k"][..],
            "read",
            "bs=(R) 16.0KiB-16.0KiB, (W) 8192B-8192B, (T) 8192B-8192B",
        ),
        (
            &["--bs=8k,0"][..],
            "read",
            "bs=(R) 8192B-8192B, (W) 4096B-4096B, (T) 4096B-4096B",
        ),
        (
            &["--bs=0:8k"][..],
            "write",
            "bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 8192B-8192B",
        ),
    ] {
        let rw_arg = format!("--rw={rw}");
        let mut args = vec!["--name=a", "--filename=f", "--size=1m", rw_arg.as_str()];
        args.extend_from_slice(bs);
        let (theirs, ours) = both(&args);
        assert_eq!(theirs.code, 0, "{args:?}: {}", theirs.stderr);
        assert!(
            header(&theirs).contains(want),
            "{args:?}: {}",
            theirs.stdout
        );
        assert_eq!(ours.code, 0, "{args:?}: {}", ours.stderr);
        assert_eq!(header(&ours), header(&theirs), "{args:?}");
        assert_eq!(ours.stderr, theirs.stderr, "{args:?}");
    }

    // Every field failing fails the option, as before.
    for bs in ["--bs=0", "--bs=0,0"] {
        let args = ["--name=a", "--filename=f", "--size=1m", bs];
        let (theirs, ours) = both(&args);
        assert_eq!(theirs.code, 1, "{bs}");
        assert!(theirs
            .stderr
            .ends_with(&format!("fio: failed parsing {}\n", &bs[2..])));
        assert_eq!(ours, theirs, "{bs}");
    }
}

#[test]
fn the_other_lists_take_a_failed_field_too() {
    if !fio_here("the r,w,t list comparison") {
        return;
    }
    for opts in [
        &["--rw=randread", "--ba=0,4k"][..],
        &["--rw=randread", "--percentage_random=abc,50"][..],
        &["--rw=randread", "--percentage_random=101,50"][..],
        &["--rw=write", "--rate=abc,4m"][..],
        &["--rw=write", "--rate_iops=0:abc"][..],
        &["--rw=read", "--rate_min=abc,1k"][..],
        &["--rw=read", "--max_latency=abc,1s"][..],
    ] {
        let mut args = vec![
            "--name=a",
            "--filename=f",
            "--size=1m",
            "--output-format=json",
        ];
        args.extend_from_slice(opts);
        let (theirs, ours) = both(&args);
        assert_eq!(theirs.code, 0, "{opts:?}: {}", theirs.stderr);
        assert_eq!(ours.code, 0, "{opts:?}: {}", ours.stderr);
        assert_eq!(ours.stderr, theirs.stderr, "{opts:?}");
        for dir in ["read", "write"] {
            assert_eq!(io(&ours, dir), io(&theirs, dir), "{opts:?} {dir}");
        }
    }
}

#[test]
fn filesize_percent_parses_and_plumb_refuses_to_run_it() {
    if !fio_here("the filesize=N% comparison") {
        return;
    }
    for pct in ["10%", "0%", "150%"] {
        let arg = format!("--filesize={pct}");
        let args = ["--name=a", "--size=1m", arg.as_str(), "--parse-only"];
        let (theirs, ours) = both(&args);
        assert_eq!(
            theirs,
            Printed {
                code: 0,
                stdout: String::new(),
                stderr: String::new()
            }
        );
        assert_eq!(ours, theirs, "{pct}");
    }

    // What fio does with it, on a tmpfs small enough to fill.
    let Some(fs) = SmallFs::mount(8) else { return };
    let dir = format!("--directory={}", fs.path().display());
    let fio_in_fs = |extra: &[&str]| {
        let mut args = vec!["--name=a", dir.as_str(), "--filesize=10%", "--bs=64k"];
        args.extend_from_slice(extra);
        let out = run_named(Path::new(FIO), fs.path(), &args);
        let size = std::fs::metadata(fs.path().join("a.0.0")).map_or(0, |m| m.len());
        fs.clear();
        (out.code, out.stdout + &out.stderr, size)
    };
    // A write lays out "17592186044415MiB" and fills the filesystem.
    let (code, said, size) = fio_in_fs(&["--rw=write"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("(1 file / 17592186044415MiB)"), "{said}");
    assert!(said.contains("error=No space left on device"), "{said}");
    assert_eq!(size, 8 << 20);
    // A read cannot even size its file.
    let (code, said, size) = fio_in_fs(&["--rw=read"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("func=ftruncate, error=Invalid argument"),
        "{said}"
    );
    assert_eq!(size, 0);

    // plumb says why in one line, and touches nothing.
    let drop_in = DropIn::named("fio");
    for rw in ["--rw=write", "--rw=read"] {
        let args = ["--name=a", dir.as_str(), "--filesize=10%", "--size=1m", rw];
        let ours = run_named(&drop_in.bin(), fs.path(), &args);
        assert_eq!(ours.code, 1, "{rw}: {}", ours.stdout);
        assert_eq!(ours.stdout, "");
        assert_eq!(
            ours.stderr,
            "plumb: fio option 'filesize' (value '10%') is not supported yet: fio 3.33 reads N% \
             as 2^64-1-N bytes, a file that fills the filesystem; give the size in bytes\n"
        );
        assert_eq!(std::fs::read_dir(fs.path()).unwrap().count(), 0, "{rw}");
    }
}

/// Every time option plumb takes, given a negative value: fio 3.33 parses them all (none
/// has a minimum; it keeps them unsigned), with nothing to say.
#[test]
fn every_time_option_parses_a_negative_value_as_fio_does() {
    if !fio_here("the negative time comparison") {
        return;
    }
    for option in [
        "runtime",
        "timeout",
        "startdelay",
        "ramp_time",
        "thinktime",
        "thinktime_spin",
        "thinktime_iotime",
        "max_latency",
        "ss_dur",
        "ss_ramp",
    ] {
        for value in ["-1", "-5ms", "-0"] {
            let arg = format!("--{option}={value}");
            let args = [
                "--name=a",
                "--size=4m",
                "--thinktime=10",
                &arg,
                "--parse-only",
            ];
            let (theirs, ours) = both(&args);
            assert_eq!(
                theirs,
                Printed {
                    code: 0,
                    stdout: String::new(),
                    stderr: String::new()
                },
                "{args:?}"
            );
            assert_eq!(ours, theirs, "{args:?}");
        }
    }
}

/// Negative times in size-based runs, as fio 3.33 runs them: ramp_time's ramp never ends,
/// so nothing measured is discarded (and the runtime, counted from its end, never comes);
/// startdelay=-0 is no delay; a negative steady-state window or ramp is never filled or
/// ended (the job runs to its size); thinktime_iotime=-1 is a span no run reaches. Each job moves its whole 4 MiB.
#[test]
fn negative_times_in_a_size_based_run_as_fio_runs_them() {
    if !fio_here("the negative time run comparison") {
        return;
    }
    for extra in [
        &["--ramp_time=-1"][..],
        &["--ramp_time=-5ms", "--runtime=1"],
        &["--startdelay=-0"],
        &["--ss_dur=2", "--ss_ramp=-1"],
        // thinktime_spin is left out: fio 3.33 subtracts the time it spun from the think
        // time unsigned, so a spin that overshoots (any spin, a few blocks in) sleeps for
        // ~2^64 us; it hangs here with thinktime_spin=5 as with -1 (cut to the think time
        // as plumb does; pacing.rs's unit test).
        &["--thinktime=10", "--thinktime_iotime=-1", "--runtime=3"],
    ] {
        let mut args = vec![
            "--name=a",
            "--filename=f",
            "--size=4m",
            "--rw=write",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        let (theirs, ours) = both(&args);
        assert_eq!(theirs.code, 0, "{args:?}: {}", theirs.stderr);
        assert_eq!(ours.code, 0, "{args:?}: {}", ours.stderr);
        assert_eq!(ours.stderr, theirs.stderr, "{args:?}");
        assert_eq!(io(&theirs, "write"), (4 << 20, 1024), "{args:?}");
        assert_eq!(io(&ours, "write"), io(&theirs, "write"), "{args:?}");
    }
    // fio 3.33's JSON report crashes on a negative window (SIGSEGV, status 139), a bug
    // plumb does not imitate; its terse report shows the job ran to its size.
    let json = [
        "--name=a",
        "--size=4m",
        "--rw=read",
        "--ss_dur=-1",
        "--output-format=json",
    ];
    let (theirs, ours) = both(&json);
    assert_eq!((theirs.code, ours.code), (139, 0), "{}", ours.stderr);
    assert_eq!(io(&ours, "read"), (4 << 20, 1024));
    let terse = [
        "--name=a",
        "--size=4m",
        "--rw=read",
        "--ss_dur=-1",
        "--output-format=terse",
    ];
    let (theirs, ours) = both(&terse);
    let head = |p: &Printed| p.stdout.split(';').take(6).collect::<Vec<_>>().join(";");
    assert_eq!((theirs.code, ours.code), (0, 0), "{}", ours.stderr);
    assert_eq!(head(&theirs), "3;fio-3.33;a;0;0;4096");
    assert_eq!(head(&ours), head(&theirs));
}

/// A negative ramp_time never ends, so a time_based job's runtime (counted from the ramp's
/// end) never comes: runtime=1 still runs at 1.5 s, until a signal stops it, in both.
#[test]
fn a_negative_ramp_time_keeps_a_time_based_job_running_until_a_signal() {
    if !fio_here("the ramp_time=-1 time_based comparison") {
        return;
    }
    let drop_in = DropIn::named("fio");
    for bin in [Path::new(FIO), drop_in.bin().as_path()] {
        let (running, out) = stopped_time_based_with(bin, &["--runtime=1", "--ramp_time=-1"]);
        assert!(
            running,
            "{}: {} / {}",
            bin.display(),
            out.stdout,
            out.stderr
        );
        assert_eq!(out.code, 128, "{}: {}", bin.display(), out.stderr);
        let (bytes, _) = io(&out, "write");
        assert!(bytes > 4 << 20, "{}: {bytes} bytes", bin.display());
    }
}

#[test]
fn an_integer_option_takes_fio_s_units() {
    if !fio_here("the integer units comparison") {
        return;
    }
    // fio reads integer options as sizes (check_str_bytes): `iodepth=1k` is 1024, and so
    // is what the job header says; a plain number stays what it is.
    for (depth, want) in [("1k", "iodepth=1024"), ("16", "iodepth=16")] {
        let d = format!("--iodepth={depth}");
        let (theirs, ours) = both(&["--name=x", "--ioengine=null", "--size=1m", &d]);
        for (who, out) in [("fio", &theirs), ("plumb", &ours)] {
            assert_eq!(out.code, 0, "{who}: {}", out.stderr);
            let header = out.stdout.lines().next().unwrap_or_default();
            assert!(header.ends_with(want), "{who} {depth}: {header}");
        }
    }
}

/// disk_util=0 leaves the disks out of the report: no `Disk stats` section, no `disk_util`
/// in JSON, as in fio; a job that keeps it on lists the disk under its file whenever fio
/// does (a file on tmpfs has none).
#[test]
fn disk_util_0_drops_the_disk_stats() {
    let base = ["--name=j", "--filename=data", "--size=256k", "--rw=read"];
    for (off, fmt) in [
        (true, "normal"),
        (false, "normal"),
        (true, "json"),
        (false, "json"),
    ] {
        let mut args = base.to_vec();
        let f = format!("--output-format={fmt}");
        args.push(&f);
        if off {
            args.push("--disk_util=0");
        }
        let drop_in = DropIn::named("fio");
        let d = TempDir::new().unwrap();
        let mine = run_named(&drop_in.bin(), d.path(), &args);
        assert_eq!(mine.code, 0, "{mine:?}");
        let shown = |p: &Printed| match fmt {
            "json" => doc(p).get("disk_util").is_some(),
            _ => p.stdout.contains("\nDisk stats (read/write):\n"),
        };
        if off {
            assert!(!shown(&mine), "{args:?}: {}", mine.stdout);
        }
        if fio_here("the disk_util comparison") {
            let (theirs, _) = both(&args);
            assert_eq!(shown(&mine), shown(&theirs), "{args:?}");
        }
    }
}

/// The options fio's profiles register (tiobench's `threads`, `dir`, `block`, `numruns`;
/// act's) parse anywhere, as in fio, and change nothing without `profile=`: two of fio's own
/// example job files say `threads=1`. Their values are checked by type, and they join
/// getopt's prefix matching (`--thr` is ambiguous in both programs, with fio's guess).
#[test]
fn profile_options_parse_and_change_nothing() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("p.fio");
    let job = "[x]\nrw=read\nsize=64k\nioengine=null\nthreads=1\nload=2\nprep\n";
    std::fs::write(&file, job).unwrap();
    let drop_in = DropIn::named("fio");
    let f = file.to_str().unwrap();
    let ok = run_named(&drop_in.bin(), dir.path(), &[f, "--output-format=json"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(io(&ok, "read"), (65536, 16));
    std::fs::write(&file, job.replace("threads=1", "threads=abc")).unwrap();
    let bad = run_named(&drop_in.bin(), dir.path(), &[f]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("failed parsing threads=abc"),
        "{}",
        bad.stderr
    );
    let cases: [&[&str]; 4] = [
        &["--name=x", "--ioengine=null", "--size=64k", "--threads=2"],
        &["--name=x", "--thr=1"],
        &["--name=x", "--thr"],
        &["--name=x", "--r=1"],
    ];
    for args in cases {
        let mine = run_named(&drop_in.bin(), dir.path(), args);
        if args.contains(&"--threads=2") {
            assert_eq!(mine.code, 0, "{args:?}: {}", mine.stderr);
        }
        if fio_here("the profile options comparison") {
            let theirs = run_named(Path::new(FIO), dir.path(), args);
            assert_eq!(mine.code, theirs.code, "{args:?}");
            if mine.code != 0 {
                assert_eq!(mine.stderr, theirs.stderr, "{args:?}");
            }
        }
    }
}

/// clocksource: `clock_gettime` times the run with CLOCK_MONOTONIC, `cpu` (and no choice)
/// with the TSC where the kernel trusts it, as the record says; `gettimeofday` is refused by
/// name. fio runs all three.
#[test]
fn clocksource_picks_the_clock_the_record_names() {
    let trusted = {
        let cs = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default();
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
        cfg!(target_arch = "x86_64")
            && cs.trim() == "tsc"
            && ["constant_tsc", "nonstop_tsc"]
                .iter()
                .all(|f| flags.split_whitespace().any(|x| x == *f))
    };
    let tsc = if trusted { "tsc" } else { "monotonic" };
    let drop_in = DropIn::named("fio");
    for (opt, want) in [
        (None, tsc),
        (Some("cpu"), tsc),
        (Some("clock_gettime"), "monotonic"),
    ] {
        let d = TempDir::new().unwrap();
        let mut args = vec![
            "--name=c".to_string(),
            "--ioengine=null".into(),
            "--size=1m".into(),
            "--plumb-json=r.json".into(),
        ];
        if let Some(o) = opt {
            args.push(format!("--clocksource={o}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_named(&drop_in.bin(), d.path(), &args);
        assert_eq!(out.code, 0, "{opt:?}: {}", out.stderr);
        let rec: Value =
            serde_json::from_slice(&std::fs::read(d.path().join("r.json")).unwrap()).unwrap();
        assert_eq!(
            rec["groups"][0]["jobs"][0]["settings"]["clock"], want,
            "{opt:?}"
        );
        // fio's note when the TSC is not to be trusted, on the report's stream.
        assert_eq!(
            out.stdout
                .contains("fio: clocksource=cpu may not be reliable"),
            opt == Some("cpu") && !trusted
        );
    }
    let d = TempDir::new().unwrap();
    let args = [
        "--name=c",
        "--ioengine=null",
        "--size=1m",
        "--clocksource=gettimeofday",
    ];
    let out = run_named(&drop_in.bin(), d.path(), &args);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("'clocksource'") && out.stderr.contains("gettimeofday"),
        "{}",
        out.stderr
    );
    if fio_here("the clocksource comparison") {
        for o in ["cpu", "clock_gettime", "gettimeofday"] {
            let c = format!("--clocksource={o}");
            let theirs = run_named(
                Path::new(FIO),
                d.path(),
                &["--name=c", "--ioengine=null", "--size=1m", &c],
            );
            assert_eq!(theirs.code, 0, "fio takes {o}");
        }
    }
}

/// Options plumb takes at fio's default only: a job that spells every one of them out at
/// its default runs as the job without them (fio too), and another value is refused by
/// name. unique_filename and log_entries change nothing outside fio's client mode and log
/// allocation, in either program.
#[test]
fn options_spelled_out_at_their_defaults_run() {
    let defaults = [
        "lockfile=none",
        "rw_sequencer=sequential",
        "file_append=0",
        "offset_align=0",
        "bs_is_seq_rand=0",
        "softrandommap=0",
        "allrandrepeat=0",
        "write_barrier=0",
        "atomic=0",
        "verify_async=0",
        "trim_percentage=0",
        "trim_verify_zero=1",
        "read_iolog_chunked=0",
        "zonemode=none",
        "read_beyond_wp=0",
        "max_open_zones=0",
        "job_max_open_zones=0",
        "ignore_zone_limits=0",
        "latency_run=0",
        "latency_percentile=100",
        "create_serialize=1",
        "create_only=0",
        "unlink_each_loop=0",
        "exit_what=group",
        "log_max_value=0",
        "log_prio=0",
        "log_hist_msec=0",
        "log_hist_coarseness=0",
        "block_error_percentiles=0",
        "buffer_compress_chunk=512",
        "dedupe_percentage=0",
        "dedupe_global=0",
        "dedupe_mode=repeat",
        "dedupe_working_set_percentage=5",
        "error_dump=0",
        "cgroup_nodelete=0",
        "unique_filename=0",
        "log_entries=4096",
    ];
    let mut job = "[x]\nrw=randrw\nbs=4k\nsize=256k\nfilename=data\n".to_string();
    for d in defaults {
        job.push_str(d);
        job.push('\n');
    }
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("d.fio");
    std::fs::write(&file, &job).unwrap();
    let f = file.to_str().unwrap();
    let drop_in = DropIn::named("fio");
    let out = run_named(&drop_in.bin(), dir.path(), &[f, "--output-format=json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (r, w) = (io(&out, "read"), io(&out, "write"));
    assert_eq!(r.0 + w.0, 256 << 10);
    if fio_here("the options-at-default comparison") {
        let theirs = run_named(Path::new(FIO), dir.path(), &[f, "--output-format=json"]);
        assert_eq!(theirs.code, 0, "{}", theirs.stderr);
    }
    for other in [
        "create_serialize=0",
        "lockfile=exclusive",
        "zonemode=zbd",
        "offset_align=4096",
    ] {
        std::fs::write(&file, format!("{job}{other}\n")).unwrap();
        let out = run_named(&drop_in.bin(), dir.path(), &[f]);
        assert_eq!(out.code, 1, "{other}");
        let name = other.split('=').next().unwrap();
        assert!(
            out.stderr.contains(&format!("fio option '{name}'")),
            "{other}: {}",
            out.stderr
        );
    }
}

/// A character device has no size fio can read on Linux (no FIO_HAVE_CHARDEV_SIZE): a job
/// reads `size=` bytes of /dev/zero as of any file, where plumb once refused it as
/// shorter than the job's region.
#[test]
fn a_character_device_is_read_for_the_size_given() {
    let args = [
        "--name=z",
        "--filename=/dev/zero",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--output-format=json",
    ];
    let ours = run_named(
        &DropIn::named("fio").bin(),
        TempDir::new().unwrap().path(),
        &args,
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(io(&ours, "read"), (65536, 16));
    if fio_here("reading a character device") {
        let (theirs, _) = both(&args);
        assert_eq!(io(&theirs, "read"), io(&ours, "read"));
    }
}

/// ioengine=mmap on a job that only reads: its files are opened read-only and mapped for
/// reading, as fio maps them (plumb once asked for a writable mapping and was refused).
#[test]
fn an_mmap_job_that_only_reads_maps_its_file_for_reading() {
    let args = [
        "--name=m",
        "--ioengine=mmap",
        "--rw=read",
        "--size=1m",
        "--output-format=json",
    ];
    let ours = run_named(
        &DropIn::named("fio").bin(),
        TempDir::new().unwrap().path(),
        &args,
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(io(&ours, "read"), (1 << 20, 256));
    if fio_here("an mmap read") {
        let (theirs, _) = both(&args);
        assert_eq!(io(&theirs, "read"), io(&ours, "read"));
    }
}
