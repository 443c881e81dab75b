//! fio's exec_prerun and exec_postrun against Debian's fio 3.33: the command runs through
//! the shell with its output in `NAME.prerun.txt` / `NAME.postrun.txt` (fio redirects only
//! the command's last part), the prerun after the job's files are laid out, the postrun
//! after its I/O and before `unlink`, each announced on the report's stream. A failed
//! prerun fails the job in plumb (fio skips it quietly with exit status 0). Without fio the
//! comparison is skipped with a message, except under CI=true.

mod common;
use common::peers::{installed, run_named, DropIn, Printed, FIO};

use std::path::Path;

use tempfile::TempDir;

/// A reader's file laid out, then deleted by unlink=1 once the job is done.
const JOB: [&str; 6] = [
    "--name=e",
    "--filename=data",
    "--size=64k",
    "--rw=read",
    "--unlink=1",
    "--exec_prerun=echo out; stat -c %s data",
];

fn run(bin: &Path, dir: &Path) -> Printed {
    let mut args = JOB.to_vec();
    args.push("--exec_postrun=stat -c post%s data");
    run_named(bin, dir, &args)
}

#[test]
fn prerun_and_postrun_run_around_the_job_as_in_fio() {
    let drop_in = DropIn::named("fio");
    let d = TempDir::new().unwrap();
    let mine = run(&drop_in.bin(), d.path());
    assert_eq!(mine.code, 0, "{}", mine.stderr);
    let read = |n: &str| std::fs::read_to_string(d.path().join(n)).unwrap();
    // The laid-out file is there for the prerun and still there for the postrun.
    assert_eq!(read("e.prerun.txt"), "65536\n");
    assert_eq!(read("e.postrun.txt"), "post65536\n");
    assert!(
        !d.path().join("data").exists(),
        "unlink=1 after the postrun"
    );
    // Only the last part of the command goes to the file.
    let lines: Vec<&str> = mine.stdout.lines().collect();
    let at = |l: &str| {
        lines
            .iter()
            .position(|x| *x == l)
            .unwrap_or_else(|| panic!("{l}: {}", mine.stdout))
    };
    let pre = at("e : Saving output of prerun in e.prerun.txt");
    let post = at("e : Saving output of postrun in e.postrun.txt");
    assert!(at("Starting 1 process") < pre && pre < at("out") && at("out") < post);
    assert!(
        post < lines
            .iter()
            .position(|l| l.starts_with("e: (groupid=0"))
            .unwrap()
    );
    if installed(&[FIO], "apt-get install fio", "the exec_prerun comparison") {
        let f = TempDir::new().unwrap();
        let theirs = run(Path::new(FIO), f.path());
        assert_eq!(theirs.code, 0);
        for n in ["e.prerun.txt", "e.postrun.txt"] {
            let t = std::fs::read_to_string(f.path().join(n)).unwrap();
            assert_eq!(read(n), t, "{n}");
        }
        let said = |p: &Printed| -> Vec<String> {
            p.stdout
                .lines()
                .filter(|l| l.contains("Saving output") || *l == "out")
                .map(str::to_string)
                .collect()
        };
        assert_eq!(said(&mine), said(&theirs));
    }
}

#[test]
fn a_failed_prerun_fails_the_job_in_one_line() {
    let drop_in = DropIn::named("fio");
    let d = TempDir::new().unwrap();
    let args = [
        "--name=e",
        "--ioengine=null",
        "--size=64k",
        "--exec_prerun=exit 3",
    ];
    let out = run_named(&drop_in.bin(), d.path(), &args);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "fio: job e: exec_prerun 'exit 3' exited with status 3; the job does not run\n"
    );
    assert!(!out.stdout.contains("e: (groupid=0"), "{}", out.stdout);
}

/// lockmem pins its memory in the process running the job from before the I/O to the
/// end (the prerun sees it locked, the postrun no more), as in fio.
#[test]
fn lockmem_is_locked_for_the_prerun_and_released_before_the_postrun() {
    let args = [
        "--name=m",
        "--ioengine=null",
        "--size=1m",
        "--lockmem=64m",
        "--exec_prerun=grep VmLck /proc/$PPID/status",
        "--exec_postrun=grep VmLck /proc/$PPID/status",
    ];
    let locked = |bin: &Path| {
        let d = TempDir::new().unwrap();
        let out = run_named(bin, d.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let kb = |n: &str| -> u64 {
            let t = std::fs::read_to_string(d.path().join(n)).unwrap();
            t.split_whitespace().nth(1).unwrap().parse().unwrap()
        };
        (kb("m.prerun.txt"), kb("m.postrun.txt"))
    };
    let drop_in = DropIn::named("fio");
    let mine = locked(&drop_in.bin());
    assert_eq!(mine, (65536, 0));
    if installed(&[FIO], "apt-get install fio", "the lockmem comparison") {
        assert_eq!(locked(Path::new(FIO)), mine);
    }
}
