//! What each file-call engine hands back, driven one request at a time through the
//! `Engine` trait: data written reads back, a read past the end of the file is short by
//! exactly what is missing, a failed call names itself with its errno. psync is the
//! reference the newer engines must match; a short read inside a run is reported in the same
//! words whatever the engine.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use plumb_core::{run, RunConfig, StopFlag};
use plumb_fileio::access::Access;
use plumb_fileio::engine::falloc::FallocEngine;
use plumb_fileio::engine::posixaio::PosixAioEngine;
use plumb_fileio::engine::psync::PsyncEngine;
use plumb_fileio::engine::pvsync::PvsyncEngine;
use plumb_fileio::engine::pvsync2::Pvsync2Engine;
use plumb_fileio::engine::sync::{SeekingFiles, SyncEngine};
use plumb_fileio::engine::vsync::VsyncEngine;
use plumb_fileio::engine::{Buffers, Dir, Engine, Errno, Request, Submitted, ENGINES};
use plumb_fileio::fileset::prepare::{prepare, Quiet};
use plumb_fileio::fileset::{open_raw, FileTable};
use plumb_fileio::pattern::Io;
use plumb_fileio::spec::{FileioSpec, FsyncMode};
use plumb_fileio::FileioWorkload;

const BLOCK: usize = 4096;
/// The test file: 3 blocks and a half.
const FILE_LEN: usize = 3 * BLOCK + BLOCK / 2;
const SLOTS: usize = 2;

/// One request to completion: bytes, or (call, errno).
fn one<E: Engine>(e: &mut E, slot: usize, dir: Dir, offset: u64) -> Result<usize, Errno> {
    let req = Request {
        dir,
        io: Io {
            file: 0,
            offset,
            len: BLOCK as u32,
        },
    };
    match e.submit(slot, req)? {
        Submitted::Done(r) => r,
        Submitted::Queued => {
            let mut got = None;
            let n = e.reap(1, 1, None, |s, res| got = Some((s, res)))?;
            assert_eq!(n, 1);
            let (s, res) = got.unwrap();
            assert_eq!(s, slot);
            if res < 0 {
                Err(Errno {
                    call: e.request_call(),
                    errno: -res as i32,
                })
            } else {
                Ok(res as usize)
            }
        }
    }
}

fn table(path: &Path, flags: libc::c_int) -> Arc<FileTable> {
    let mut t = FileTable::new(path.parent().unwrap().to_path_buf());
    t.push(open_raw(path, flags).unwrap(), "f".into());
    Arc::new(t)
}

fn bufs() -> Buffers {
    Buffers::new(SLOTS, BLOCK, 4096).unwrap()
}

/// What one engine does with a file of FILE_LEN bytes: the bytes a write then a read of
/// block 1 moved and whether the read brought back what was written, the length of a
/// read of the last, half block, and the failure of a write to a read-only descriptor.
#[derive(Debug, PartialEq)]
struct Behaviour {
    written: usize,
    read: usize,
    same_data: bool,
    tail_read: usize,
    read_only_write: Errno,
}

fn behaviour<E: Engine>(mut rw: E, mut ro: E) -> Behaviour {
    let pattern: Vec<u8> = (0..BLOCK).map(|i| (i * 7 % 251) as u8).collect();
    rw.buffer(0)[..BLOCK].copy_from_slice(&pattern);
    let written = one(&mut rw, 0, Dir::Write, BLOCK as u64).unwrap();
    rw.buffer(1)[..BLOCK].fill(0);
    let read = one(&mut rw, 1, Dir::Read, BLOCK as u64).unwrap();
    let same_data = rw.buffer(1)[..BLOCK] == pattern[..];
    let tail_read = one(&mut rw, 1, Dir::Read, 3 * BLOCK as u64).unwrap();
    rw.sync(0).unwrap();
    let read_only_write = one(&mut ro, 0, Dir::Write, 0).unwrap_err();
    Behaviour {
        written,
        read,
        same_data,
        tail_read,
        read_only_write,
    }
}

#[test]
fn new_engines_move_data_and_report_short_reads_and_errors_as_psync_does() {
    let d = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = d.path().join("f");
    fs::write(&path, vec![0x5a; FILE_LEN]).unwrap();
    let rw = || table(&path, libc::O_RDWR);
    let ro = || table(&path, libc::O_RDONLY);
    let fs = FsyncMode::Fsync;
    let seeking = |t| SeekingFiles::new(t);
    let cases = [
        (
            "psync",
            behaviour(
                PsyncEngine::new(rw(), bufs(), fs),
                PsyncEngine::new(ro(), bufs(), fs),
            ),
            "pwrite",
        ),
        (
            "sync",
            behaviour(
                SyncEngine::new(seeking(rw()), bufs(), fs),
                SyncEngine::new(seeking(ro()), bufs(), fs),
            ),
            "write",
        ),
        (
            "vsync",
            behaviour(
                VsyncEngine::new(seeking(rw()), bufs(), fs),
                VsyncEngine::new(seeking(ro()), bufs(), fs),
            ),
            "writev",
        ),
        (
            "pvsync",
            behaviour(
                PvsyncEngine::new(rw(), bufs(), fs),
                PvsyncEngine::new(ro(), bufs(), fs),
            ),
            "pwritev",
        ),
        (
            "pvsync2",
            behaviour(
                Pvsync2Engine::new(rw(), bufs(), fs, 0),
                Pvsync2Engine::new(ro(), bufs(), fs, 0),
            ),
            "pwritev2",
        ),
        (
            "posixaio",
            behaviour(
                PosixAioEngine::new(rw(), bufs(), fs),
                PosixAioEngine::new(ro(), bufs(), fs),
            ),
            "posixaio request",
        ),
    ];
    for (name, got, call) in cases {
        assert_eq!(
            got,
            Behaviour {
                written: BLOCK,
                read: BLOCK,
                same_data: true,
                tail_read: BLOCK / 2,
                read_only_write: Errno {
                    call,
                    errno: libc::EBADF
                },
            },
            "{name}"
        );
    }
}

/// fio's trims: BLKDISCARD on every file-call engine (a regular file answers ENOTTY, as it
/// does fio's), a punched hole on falloc (the range reads back as zeros, its blocks freed).
#[test]
fn trims_are_blkdiscard_except_on_falloc_which_punches_a_hole() {
    let d = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = d.path().join("f");
    fs::write(&path, vec![0x5a; 4 * BLOCK]).unwrap();
    let rw = || table(&path, libc::O_RDWR);
    let fs = FsyncMode::Fsync;
    let enotty = Errno {
        call: "BLKDISCARD",
        errno: libc::ENOTTY,
    };
    let trims = [
        one(&mut PsyncEngine::new(rw(), bufs(), fs), 0, Dir::Trim, 0),
        one(
            &mut SyncEngine::new(SeekingFiles::new(rw()), bufs(), fs),
            0,
            Dir::Trim,
            0,
        ),
        one(&mut PvsyncEngine::new(rw(), bufs(), fs), 0, Dir::Trim, 0),
        one(
            &mut Pvsync2Engine::new(rw(), bufs(), fs, 0),
            0,
            Dir::Trim,
            0,
        ),
        one(&mut PosixAioEngine::new(rw(), bufs(), fs), 0, Dir::Trim, 0),
    ];
    for t in trims {
        assert_eq!(t, Err(enotty));
    }
    let blocks = || {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(&path).unwrap().blocks()
    };
    let before = blocks();
    let mut f = FallocEngine::new(rw(), bufs(), fs);
    assert_eq!(one(&mut f, 0, Dir::Trim, BLOCK as u64), Ok(BLOCK));
    let data = fs::read(&path).unwrap();
    assert_eq!(data.len(), 4 * BLOCK, "the size is kept");
    assert!(data[BLOCK..2 * BLOCK].iter().all(|&b| b == 0));
    assert!(data[..BLOCK].iter().all(|&b| b == 0x5a));
    let punched = blocks();
    assert!(punched < before, "{punched} blocks, {before} before");
    // A write allocates (fallocate mode 0), a read keeps the size: neither moves data.
    assert_eq!(one(&mut f, 0, Dir::Write, BLOCK as u64), Ok(BLOCK));
    assert!(blocks() > punched);
    assert_eq!(one(&mut f, 0, Dir::Read, 8 * BLOCK as u64), Ok(BLOCK));
    assert_eq!(fs::metadata(&path).unwrap().len(), 4 * BLOCK as u64);
}

#[test]
fn the_sync_engines_seek_only_when_the_position_is_elsewhere() {
    let d = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = d.path().join("f");
    fs::write(&path, vec![0x5a; FILE_LEN]).unwrap();
    let t = table(&path, libc::O_RDWR);
    let fd = t.fd(0);
    let mut e = SyncEngine::new(SeekingFiles::new(t), bufs(), FsyncMode::Fsync);
    let here = || unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    one(&mut e, 0, Dir::Read, BLOCK as u64).unwrap();
    assert_eq!(here(), 2 * BLOCK as i64);
    // Move the position behind the engine's back: a request continuing the last one must
    // not seek (it reads at 0 and ends at block 1), which shows the engine skipped lseek.
    unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
    one(&mut e, 0, Dir::Read, 2 * BLOCK as u64).unwrap();
    assert_eq!(here(), BLOCK as i64);
    // The engine believes the position is at block 3: a request at block 2 seeks there.
    one(&mut e, 0, Dir::Read, 2 * BLOCK as u64).unwrap();
    assert_eq!(here(), 3 * BLOCK as i64);
}

#[test]
fn a_short_read_in_a_run_reads_the_same_for_every_engine() {
    let d = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let base = FileioSpec {
        dir: d.path().to_path_buf(),
        num_files: 1,
        total_size: 64 * BLOCK as u64,
        block_size: BLOCK as u64,
        access: Some(Access::seq_read()),
        // One request in flight: queued engines then meet the short block first too (with
        // more, a later block's empty read can complete before it).
        queue_depth: 1,
        ..Default::default()
    };
    prepare(&base, &StopFlag::default(), &mut Vec::new(), &mut Quiet).unwrap();
    let path = d.path().join("test_file.0");
    // Mapped files fault on a truncated page instead of coming up short.
    for engine in ENGINES
        .iter()
        .filter(|e| e.caps.does_io && !e.caps.maps_files)
    {
        let spec = FileioSpec {
            engine,
            ..base.clone()
        };
        let w = Arc::new(FileioWorkload::open(spec).unwrap());
        // The file loses its last block and a half after the run checked it.
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(62 * BLOCK as u64 + BLOCK as u64 / 2)
            .unwrap();
        let cfg = RunConfig {
            time_limit: None,
            event_limit: 64,
            ..Default::default()
        };
        let e = run(w, &cfg, &StopFlag::default(), &mut |_| {})
            .err()
            .unwrap_or_else(|| panic!("{}: no error", engine.name))
            .to_string();
        let want = format!(
            "short read from {} at offset {}: {} of {BLOCK} bytes",
            path.display(),
            62 * BLOCK,
            BLOCK / 2
        );
        assert!(e.contains(&want), "{}: {e}", engine.name);
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(64 * BLOCK as u64)
            .unwrap();
    }
}
