//! How fio lays out a job's files, against Debian's fio 3.33 (/usr/bin/fio): the same job,
//! run by fio and by plumb through a symlink named `fio`, must make the same system calls
//! on the job's files while laying them out.
//!
//! What fio 3.33 does (filesetup.c: `setup_files` marks a regular file shorter than
//! `offset + size` for extension, `extend_file` lays it out, `fallocate_file` and
//! `native_fallocate` allocate it, then `__file_invalidate_cache` drops the new part), with
//! its defaults `fallocate=native` (Linux), `overwrite=0`, `create_fsync=1`:
//!
//! - A job that reads or writes first unlinks the file (`td_io_unlink_file`, ENOENT
//!   ignored): a short existing file is laid out anew from offset 0, not extended from its
//!   end. A job that only trims keeps it.
//! - The file is opened `O_WRONLY|O_CREAT` (mode 0644), with `O_TRUNC` when data follows.
//! - `fallocate(fd, 0, 0, size)` allocates it, for every job (`fallocate=native`); a
//!   failure is ignored, with no fallback to `ftruncate`.
//! - A job that reads (or writes with `overwrite=1`, or through an engine that cannot
//!   extend a file, such as mmap) then sizes it with `ftruncate(fd, size)` and writes it from offset 0 with
//!   `write` calls of the job's largest write size (the last one shorter), random data,
//!   and `fsync`s it. A job that only writes gets neither the `ftruncate` nor the data.
//! - `posix_fadvise(DONTNEED)` from the file's old size to the new one (only what the
//!   layout added, even when it rewrote the whole file), then `close`.
//!
//! Both programs run under `strace -f -y`; the calls between the layout's write-only open
//! of a file and its close (and the unlink before it) must be the same, in the same order.
//! Without fio or strace these tests are skipped with a message, except under CI.

mod common;
use common::peers::{DropIn, FIO as PEER};

use std::path::Path;

use tempfile::TempDir;

fn tools() -> bool {
    common::peers::fio_and_strace("the fio layout comparison")
}

/// strace, which even plumb's own expectations need.
fn strace() -> bool {
    common::peers::strace("the fio layout comparison")
}

/// The layout's calls on the files of `dir`, in order, as words: `unlink data`,
/// `open data O_WRONLY|O_CREAT|O_TRUNC 0644`, `fallocate data 0 0 65536`,
/// `ftruncate data 65536`, `write data 8192`, `fsync data`,
/// `fadvise data 10000 55536 POSIX_FADV_DONTNEED`, `close data`.
fn layout_calls(bin: &Path, dir: &Path, args: &[&str]) -> Vec<String> {
    let text = common::peers::traced_ok(
        bin,
        dir,
        "unlink,unlinkat,openat,fallocate,ftruncate,write,fsync,fadvise64,close",
        args,
    );
    let dir = dir.canonicalize().unwrap();
    let prefix = format!("{}/", dir.display());
    let mut calls = Vec::new();
    // Files between the layout's open and its close.
    let mut open: Vec<String> = Vec::new();
    for line in text.lines() {
        // `1234  fallocate(6</tmp/x/data>, 0, 0, 65536) = 0`
        let Some((_, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some((call, args)) = rest.split_once('(') else {
            continue;
        };
        // strace pads before the result: `unlink("a")      = -1 ENOENT (...)`.
        let Some((args, ret)) = args.rsplit_once(" = ") else {
            continue;
        };
        let Some(args) = args.trim_end().strip_suffix(')') else {
            continue;
        };
        // The file a call names: a path argument or a descriptor shown as `6</path>`.
        let name = |s: &str| -> Option<String> {
            let s = s.trim();
            let path = if let Some(q) = s.strip_prefix('"') {
                q.split('"').next()?.to_string()
            } else {
                let lt = s.find('<')?;
                s[lt + 1..s.find('>')?].to_string()
            };
            let rel = path.strip_prefix(&prefix).unwrap_or(&path);
            (!rel.contains('/') && !rel.is_empty() && rel != "trace").then(|| rel.to_string())
        };
        let list: Vec<&str> = args.split(", ").collect();
        match call {
            "unlink" | "unlinkat" => {
                let at = usize::from(call == "unlinkat");
                if let Some(f) = name(list[at]) {
                    calls.push(format!("unlink {f}"));
                }
            }
            "openat" => {
                let Some(f) = name(list[1]) else { continue };
                let flags: Vec<&str> = list[2]
                    .split('|')
                    .filter(|f| !matches!(*f, "O_CLOEXEC" | "O_LARGEFILE"))
                    .collect();
                if flags.first() == Some(&"O_WRONLY") {
                    assert!(!ret.starts_with('-'), "{line}");
                    calls.push(format!(
                        "open {f} {} {}",
                        flags.join("|"),
                        list.get(3).unwrap_or(&"")
                    ));
                    open.push(f);
                }
            }
            _ => {
                let Some(f) = name(list[0]) else { continue };
                if !open.contains(&f) {
                    continue;
                }
                let rest = |from: usize| list[from..].join(" ");
                calls.push(match call {
                    "write" => format!("write {f} {}", list[2]),
                    "fsync" => format!("fsync {f}"),
                    "close" => {
                        open.retain(|o| o != &f);
                        format!("close {f}")
                    }
                    _ => format!("{call} {f} {}", rest(1)),
                });
            }
        }
    }
    calls
}

/// A directory `d/job` for the job's files (the trace goes beside it).
fn job_dir() -> (TempDir, std::path::PathBuf) {
    let d = TempDir::new().unwrap();
    let job = d.path().join("job");
    std::fs::create_dir(&job).unwrap();
    (d, job)
}

/// Run the job under fio and under plumb, each on fresh files made by `setup`; both must
/// lay them out with the same calls, `want` when given (plumb's own, checked without fio).
fn compare(args: &[&str], setup: &dyn Fn(&Path), want: &[&str]) {
    let fio = DropIn::named("fio");
    let (_keep, dir) = job_dir();
    setup(&dir);
    let mine = layout_calls(&fio.bin(), &dir, args);
    assert_eq!(mine, want, "plumb's layout of {args:?}");
    if tools() {
        let (_keep, dir) = job_dir();
        setup(&dir);
        let theirs = layout_calls(Path::new(PEER), &dir, args);
        assert_eq!(mine, theirs, "layout of {args:?}: plumb, then fio");
    }
}

fn short_file(name: &'static str, len: usize) -> impl Fn(&Path) {
    move |d: &Path| std::fs::write(d.join(name), vec![7u8; len]).unwrap()
}

#[test]
fn a_reader_s_file_is_allocated_sized_and_written_from_its_start() {
    if !strace() {
        return;
    }
    let args = [
        "--name=j",
        "--filename=data",
        "--size=64k",
        "--bs=8k",
        "--rw=read",
    ];
    let mut want = vec![
        "unlink data",
        "open data O_WRONLY|O_CREAT|O_TRUNC 0644",
        "fallocate data 0 0 65536",
        "ftruncate data 65536",
    ];
    want.extend(["write data 8192"; 8]);
    want.extend([
        "fsync data",
        "fadvise64 data 0 65536 POSIX_FADV_DONTNEED",
        "close data",
    ]);
    compare(&args, &|_| {}, &want);
}

#[test]
fn a_short_file_is_unlinked_and_laid_out_anew_from_offset_zero() {
    if !strace() {
        return;
    }
    // 10000 bytes of a 40000-byte region: written again from 0 in writes of the largest
    // write size (12k, the last one 3136 bytes); only the new part is dropped.
    let args = [
        "--name=j",
        "--filename=data",
        "--size=40000",
        "--bs=4k,12k",
        "--rw=randread",
    ];
    let want = [
        "unlink data",
        "open data O_WRONLY|O_CREAT|O_TRUNC 0644",
        "fallocate data 0 0 40000",
        "ftruncate data 40000",
        "write data 12288",
        "write data 12288",
        "write data 12288",
        "write data 3136",
        "fsync data",
        "fadvise64 data 10000 30000 POSIX_FADV_DONTNEED",
        "close data",
    ];
    compare(&args, &short_file("data", 10000), &want);
    // The data is all new: none of the old bytes (7s) is left at the start.
    let fio = DropIn::named("fio");
    let (_keep, dir) = job_dir();
    short_file("data", 10000)(&dir);
    layout_calls(&fio.bin(), &dir, &args);
    let data = std::fs::read(dir.join("data")).unwrap();
    assert_eq!(data.len(), 40000);
    assert!(data[..10000].iter().filter(|&&b| b == 7).count() < 1000);
}

#[test]
fn a_writer_s_files_are_unlinked_and_allocated_not_sized_or_written() {
    if !strace() {
        return;
    }
    // One file missing, one short: both unlinked, opened without O_TRUNC, allocated.
    let args = [
        "--name=j",
        "--filename=a:b",
        "--size=128k",
        "--rw=randwrite",
        "--bs=4k",
    ];
    let want = [
        "unlink a",
        "open a O_WRONLY|O_CREAT 0644",
        "fallocate a 0 0 65536",
        "fadvise64 a 0 65536 POSIX_FADV_DONTNEED",
        "close a",
        "unlink b",
        "open b O_WRONLY|O_CREAT 0644",
        "fallocate b 0 0 65536",
        "fadvise64 b 5000 60536 POSIX_FADV_DONTNEED",
        "close b",
    ];
    compare(&args, &short_file("b", 5000), &want);
}

#[test]
fn a_trim_job_keeps_its_short_file_and_allocates_it() {
    if !strace() {
        return;
    }
    let args = [
        "--name=j",
        "--filename=data",
        "--size=64k",
        "--rw=trim",
        "--ioengine=falloc",
    ];
    let want = [
        "open data O_WRONLY|O_CREAT 0644",
        "fallocate data 0 0 65536",
        "fadvise64 data 4096 61440 POSIX_FADV_DONTNEED",
        "close data",
    ];
    compare(&args, &short_file("data", 4096), &want);
}

#[test]
fn an_mmap_writer_s_file_is_written_as_a_reader_s() {
    if !strace() {
        return;
    }
    // fio's mmap engine cannot extend a file (FIO_NOEXTEND), so its writers get data too.
    let args = [
        "--name=j",
        "--filename=data",
        "--size=32k",
        "--bs=16k",
        "--rw=write",
        "--ioengine=mmap",
    ];
    compare(&args, &|_| {}, &whole_32k());
}

#[test]
fn an_overwriting_writer_s_file_is_written_as_a_reader_s() {
    if !strace() {
        return;
    }
    // overwrite=1: the writes replace data already there, so fio lays the file out whole
    // first, as for a reader.
    let args = [
        "--name=j",
        "--filename=data",
        "--size=32k",
        "--bs=16k",
        "--rw=randwrite",
        "--overwrite=1",
    ];
    compare(&args, &|_| {}, &whole_32k());
}

/// A fresh 32 KiB file laid out whole, in 16 KiB writes (a writer's, when it must be).
fn whole_32k() -> Vec<&'static str> {
    reader_32k(&["fallocate data 0 0 32768"], false)
}

/// A 32 KiB file for a job that reads, in 16 KiB writes, allocated by `how` (its calls
/// between the open and the `ftruncate`), synced unless `unsynced`.
fn reader_32k(how: &[&'static str], unsynced: bool) -> Vec<&'static str> {
    let mut want = vec!["unlink data", "open data O_WRONLY|O_CREAT|O_TRUNC 0644"];
    want.extend(how);
    want.extend([
        "ftruncate data 32768",
        "write data 16384",
        "write data 16384",
    ]);
    if !unsynced {
        want.push("fsync data");
    }
    want.extend(["fadvise64 data 0 32768 POSIX_FADV_DONTNEED", "close data"]);
    want
}

#[test]
fn each_fallocate_mode_allocates_a_reader_s_file_as_fio_does() {
    if !strace() {
        return;
    }
    let cases: [(&str, &[&str]); 7] = [
        ("native", &["fallocate data 0 0 32768"]),
        // glibc's posix_fallocate is the same call where the filesystem can allocate.
        ("posix", &["fallocate data 0 0 32768"]),
        ("1", &["fallocate data 0 0 32768"]),
        ("keep", &["fallocate data FALLOC_FL_KEEP_SIZE 0 32768"]),
        // ftruncate to the size, then the layout's own ftruncate.
        ("truncate", &["ftruncate data 32768"]),
        ("none", &[]),
        ("0", &[]),
    ];
    for (mode, how) in cases {
        let opt = format!("--fallocate={mode}");
        let args = [
            "--name=j",
            "--filename=data",
            "--size=32k",
            "--bs=16k",
            "--rw=read",
            opt.as_str(),
        ];
        compare(&args, &|_| {}, &reader_32k(how, false));
    }
}

#[test]
fn a_writer_s_file_is_allocated_by_the_mode_asked_or_left_empty() {
    if !strace() {
        return;
    }
    let cases: [(&str, &[&str], u64); 4] = [
        ("native", &["fallocate data 0 0 65536"], 65536),
        ("keep", &["fallocate data FALLOC_FL_KEEP_SIZE 0 65536"], 0),
        ("truncate", &["ftruncate data 65536"], 65536),
        ("none", &[], 0),
    ];
    for (mode, how, len) in cases {
        let opt = format!("--fallocate={mode}");
        // One write at the start: the length the file ends with is the layout's, or what
        // the write gave it (4 KiB) when the layout gave none.
        let args = [
            "--name=j",
            "--filename=data",
            "--size=64k",
            "--io_size=4k",
            "--rw=write",
            opt.as_str(),
        ];
        let mut want = vec!["unlink data", "open data O_WRONLY|O_CREAT 0644"];
        want.extend(how);
        want.extend(["fadvise64 data 0 65536 POSIX_FADV_DONTNEED", "close data"]);
        compare(&args, &|_| {}, &want);
        let fio = DropIn::named("fio");
        let (_keep, dir) = job_dir();
        layout_calls(&fio.bin(), &dir, &args);
        let meta = std::fs::metadata(dir.join("data")).unwrap();
        assert_eq!(meta.len(), len.max(4096), "{mode}: the file's length");
        use std::os::unix::fs::MetadataExt;
        // keep allocates the blocks without the length.
        if mode == "keep" {
            assert!(
                meta.blocks() * 512 >= 65536,
                "{mode}: {} blocks",
                meta.blocks()
            );
        }
    }
}

#[test]
fn create_fsync_0_leaves_the_laid_out_data_unsynced() {
    if !strace() {
        return;
    }
    let args = [
        "--name=j",
        "--filename=data",
        "--size=32k",
        "--bs=16k",
        "--rw=read",
        "--create_fsync=0",
    ];
    compare(
        &args,
        &|_| {},
        &reader_32k(&["fallocate data 0 0 32768"], true),
    );
}

#[test]
fn allow_file_create_0_refuses_a_missing_file_as_fio_does() {
    let fio = DropIn::named("fio");
    for rw in ["read", "write"] {
        let (_keep, dir) = job_dir();
        let rw = format!("--rw={rw}");
        let args = [
            "--name=j",
            "--filename=data",
            "--size=64k",
            rw.as_str(),
            "--allow_file_create=0",
        ];
        let mine = common::peers::run_named(&fio.bin(), &dir, &args);
        assert_eq!(mine.code, 1, "{mine:?}");
        assert_eq!(
            mine.stderr,
            "fio: file creation disallowed by allow_file_create=0\n"
        );
        assert!(!dir.join("data").exists());
        if tools() {
            let (_keep, dir) = job_dir();
            let theirs = common::peers::run_named(Path::new(PEER), &dir, &args);
            assert_eq!(
                (theirs.code, theirs.stderr.as_str()),
                (mine.code, mine.stderr.as_str())
            );
        }
        // A file that is there is used as it is.
        std::fs::write(dir.join("data"), vec![1u8; 65536]).unwrap();
        let ok = common::peers::run_named(&fio.bin(), &dir, &args);
        assert_eq!(ok.code, 0, "{ok:?}");
    }
}
