//! Real engines on real files (a temporary directory on the work disk): every engine and
//! open-flag combination the filesystem takes, with data validation, and seqwr's completion.

use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use plumb_core::{run, RunConfig, RunOutcome, StopFlag};
use plumb_fileio::access::Access;
use plumb_fileio::engine::{mmap, uring, EngineDef, EngineOptions, ENGINES};
use plumb_fileio::fileset::cleanup::cleanup;
use plumb_fileio::fileset::manifest::Manifest;
use plumb_fileio::fileset::open::complete_seqwr;
use plumb_fileio::fileset::prepare::{prepare, Quiet};
use plumb_fileio::spec::{FileioSpec, OpenFlags, SyncPolicy};
use plumb_fileio::workload::{FileioWorkload, BYTES_READ, BYTES_WRITTEN, FSYNC, READ, WRITE};
use plumb_fileio::FileioError;

fn base(dir: &Path) -> FileioSpec {
    FileioSpec {
        dir: dir.to_path_buf(),
        num_files: 4,
        total_size: 4 << 20,
        block_size: 4096,
        sync: SyncPolicy {
            every_requests: 50,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn tmp() -> tempfile::TempDir {
    // /tmp and the target directory are on the work disk (ext4); /dev/shm is tmpfs.
    tempfile::tempdir_in(std::env::temp_dir()).unwrap()
}

fn go(s: FileioSpec, events: u64, threads: usize) -> Result<(RunOutcome, String), FileioError> {
    let s = FileioSpec { threads, ..s };
    let w = Arc::new(FileioWorkload::open(s)?);
    let name = w.engine_name().to_string();
    let cfg = RunConfig {
        threads,
        time_limit: None,
        event_limit: events,
        ..Default::default()
    };
    let out = run(w, &cfg, &StopFlag::default(), &mut |_| {})
        .map_err(|e| FileioError::Other(e.to_string()))?;
    Ok((out, name))
}

fn sum(out: &RunOutcome, kind: usize) -> u64 {
    out.threads.iter().map(|t| t.kinds[kind].count()).sum()
}
fn counter(out: &RunOutcome, i: usize) -> u64 {
    out.threads.iter().map(|t| t.counters[i]).sum()
}

fn prepared(validate: bool) -> (tempfile::TempDir, FileioSpec) {
    let d = tmp();
    let s = FileioSpec {
        validate,
        ..base(d.path())
    };
    prepare(&s, &StopFlag::default(), &mut Vec::new(), &mut Quiet).unwrap();
    (d, s)
}

/// Every registered engine that does I/O.
fn engines() -> Vec<&'static EngineDef> {
    ENGINES.iter().copied().filter(|d| d.caps.does_io).collect()
}

#[test]
fn every_engine_reads_and_writes_validated_data() {
    let (_d, s) = prepared(true);
    for engine in engines() {
        for threads in [1, 2] {
            let spec = FileioSpec {
                access: Some(Access::rand_mix(1.5)),
                engine,
                queue_depth: 8,
                ..s.clone()
            };
            let (out, name) =
                go(spec, 600, threads).unwrap_or_else(|e| panic!("{}: {e}", engine.name));
            let (r, w) = (sum(&out, READ), sum(&out, WRITE));
            assert!(r > 0 && w > 0, "{name}: {r} reads {w} writes");
            assert_eq!(counter(&out, BYTES_READ), r * 4096, "{name}");
            assert_eq!(counter(&out, BYTES_WRITTEN), w * 4096, "{name}");
            assert_eq!(r + w + sum(&out, FSYNC), 600, "{name}");
            assert_eq!(name, engine.name);
        }
    }
    // Everything written above is still valid when read back sequentially.
    let spec = FileioSpec {
        access: Some(Access::seq_read()),
        merged_requests: 4,
        ..s.clone()
    };
    let (out, _) = go(spec, 256, 1).unwrap();
    assert_eq!(counter(&out, BYTES_READ), 4 << 20);
}

#[test]
fn io_uring_registers_what_its_options_say() {
    let (_d, s) = prepared(false);
    let registered = |opts: EngineOptions| {
        let spec = FileioSpec {
            access: Some(Access::rand_read()),
            engine: &uring::DEF,
            engine_options: opts,
            queue_depth: 4,
            ..s.clone()
        };
        let w = Arc::new(FileioWorkload::open(spec).unwrap());
        let cfg = RunConfig {
            time_limit: None,
            event_limit: 50,
            ..Default::default()
        };
        run(w.clone(), &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
        let f = &w.figures;
        (
            f.registered_files.load(Relaxed),
            f.registered_bufs.load(Relaxed),
        )
    };
    assert_eq!(registered(EngineOptions::default()), (1, 1));
    let mut off = EngineOptions::default();
    off.set(uring::REGISTER_FILES, false);
    off.set(uring::FIXED_BUFS, false);
    assert_eq!(registered(off), (0, 0));
    let mut files_only = EngineOptions::default();
    files_only.set(uring::FIXED_BUFS, false);
    assert_eq!(registered(files_only), (1, 0));
}

#[test]
fn validation_catches_a_damaged_block() {
    let (d, s) = prepared(true);
    let p = d.path().join("test_file.2");
    let mut data = fs::read(&p).unwrap();
    data[5000] ^= 0xff;
    fs::write(&p, &data).unwrap();
    let spec = FileioSpec {
        access: Some(Access::seq_read()),
        ..s
    };
    // Rewriting by hand changed the inode's data, not the inode: still plumb's file.
    let e = go(spec, 1024, 1).unwrap_err().to_string();
    assert!(
        e.contains("validation failed") && e.contains("test_file.2"),
        "{e}"
    );
    assert!(e.contains("offset 4096"), "{e}");
}

#[test]
fn open_flags_work_with_each_engine() {
    let (_d, s) = prepared(false);
    let flag_sets = [
        OpenFlags {
            direct: true,
            ..Default::default()
        },
        OpenFlags {
            dsync: true,
            ..Default::default()
        },
        OpenFlags {
            sync: true,
            direct: true,
            ..Default::default()
        },
    ];
    for flags in flag_sets {
        for engine in engines() {
            if !engine.caps.open_flags {
                continue;
            }
            let spec = FileioSpec {
                access: Some(Access::rand_mix(1.5)),
                engine,
                queue_depth: 4,
                flags,
                ..s.clone()
            };
            let (out, name) =
                go(spec, 200, 1).unwrap_or_else(|e| panic!("{flags:?} {}: {e}", engine.name));
            assert_eq!(
                sum(&out, READ) + sum(&out, WRITE) + sum(&out, FSYNC),
                200,
                "{name}"
            );
        }
    }
}

#[test]
fn direct_io_checks_alignment() {
    let d = tmp();
    let s = FileioSpec {
        block_size: 1000,
        total_size: 4 * 1000 * 64,
        ..base(d.path())
    };
    prepare(&s, &StopFlag::default(), &mut Vec::new(), &mut Quiet).unwrap();
    let spec = FileioSpec {
        access: Some(Access::rand_read()),
        flags: OpenFlags {
            direct: true,
            ..Default::default()
        },
        ..s
    };
    let e = go(spec, 10, 1).unwrap_err().to_string();
    assert!(
        e.contains("block size is 1000 bytes, not a multiple of"),
        "{e}"
    );
}

#[test]
fn direct_on_tmpfs_works_or_says_why() {
    let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
        return;
    };
    let s = base(d.path());
    prepare(&s, &StopFlag::default(), &mut Vec::new(), &mut Quiet).unwrap();
    let spec = FileioSpec {
        access: Some(Access::rand_read()),
        flags: OpenFlags {
            direct: true,
            ..Default::default()
        },
        ..s
    };
    // Linux 6.6+ tmpfs takes O_DIRECT; older kernels refuse it, and plumb must say so.
    let probe = d.path().join("probe");
    let supported = fs::OpenOptions::new()
        .create(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    match go(spec, 50, 1) {
        Ok((out, _)) => {
            assert!(supported, "plumb ran direct I/O where open(O_DIRECT) fails");
            assert_eq!(sum(&out, READ), 50);
        }
        Err(e) => {
            assert!(!supported, "O_DIRECT works here but plumb refused: {e}");
            assert!(e.to_string().contains("refuses O_DIRECT"), "{e}");
        }
    }
}

use std::os::unix::fs::OpenOptionsExt;

#[test]
fn seqwr_leaves_a_complete_file_set() {
    let d = tmp();
    let s = FileioSpec {
        access: Some(Access::seq_create()),
        ..base(d.path())
    };
    // No prepare: seqwr creates its files, as in sysbench.
    let w = Arc::new(FileioWorkload::open(s.clone()).unwrap());
    let cfg = RunConfig {
        time_limit: None,
        event_limit: 300,
        ..Default::default()
    };
    run(w.clone(), &cfg, &StopFlag::default(), &mut |_| {}).unwrap();
    // 300 slots with fsync-freq 50 and 4 files: 6 periods of 54 would be 324; 5 full
    // periods (270) + 30 writes = 280 writes of 4 KiB, all in file 1 or before.
    assert_eq!(w.requests_issued(), 280);
    assert!(fs::metadata(d.path().join("test_file.3")).unwrap().len() == 0);
    let written = complete_seqwr(&s, w.requests_issued(), &StopFlag::default()).unwrap();
    assert_eq!(written, (4 << 20) - 280 * 4096);
    for i in 0..4 {
        assert_eq!(
            fs::metadata(d.path().join(format!("test_file.{i}")))
                .unwrap()
                .len(),
            1 << 20
        );
    }
    let m = Manifest::load(d.path()).unwrap().unwrap();
    assert!(m.files.iter().all(|e| e.valid_bytes == 1 << 20));
    // The next read run works (sysbench's would fail: #385).
    let rd = FileioSpec {
        access: Some(Access::rand_read()),
        ..s.clone()
    };
    go(rd, 100, 1).unwrap();
    let o = cleanup(&s, &StopFlag::default(), &mut Vec::new(), &mut Vec::new()).unwrap();
    assert_eq!(o.removed, 4);
}

#[test]
fn seqwr_with_mmap_sizes_files_first() {
    let d = tmp();
    let s = FileioSpec {
        access: Some(Access::seq_create()),
        engine: &mmap::DEF,
        ..base(d.path())
    };
    let (out, _) = go(s, 100, 1).unwrap();
    assert!(sum(&out, WRITE) > 0);
}

#[test]
fn run_refuses_missing_or_changed_files() {
    let d = tmp();
    let s = FileioSpec {
        access: Some(Access::rand_read()),
        ..base(d.path())
    };
    let e = go(s.clone(), 10, 1).unwrap_err().to_string();
    assert!(
        e.contains("no prepared file set") && e.contains("prepare"),
        "{e}"
    );
    prepare(&s, &StopFlag::default(), &mut Vec::new(), &mut Quiet).unwrap();
    // Someone truncates a file after prepare.
    fs::OpenOptions::new()
        .write(true)
        .open(d.path().join("test_file.1"))
        .unwrap()
        .set_len(1000)
        .unwrap();
    let e = go(s.clone(), 10, 1).unwrap_err().to_string();
    assert!(e.contains("test_file.1") && e.contains("truncated"), "{e}");
    // A larger file set than prepared.
    let big = FileioSpec {
        total_size: 8 << 20,
        ..s
    };
    let e = go(big, 10, 1).unwrap_err().to_string();
    assert!(e.contains("this run needs 2MiB per file"), "{e}");
}

#[test]
fn validate_needs_a_validated_set() {
    let (_d, s) = prepared(false);
    let spec = FileioSpec {
        access: Some(Access::rand_read()),
        validate: true,
        ..s
    };
    let e = go(spec, 10, 1).unwrap_err().to_string();
    assert!(
        e.contains("validation needs files prepared with validation"),
        "{e}"
    );
}
