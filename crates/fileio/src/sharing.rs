//! How many threads are in one file's write path at the same time.
//!
//! Buffered writes to one file serialise on its inode lock (seed 002), so what matters is
//! not `--file-num` against `--threads` but how the request stream spreads the threads'
//! writes over the files at one moment. The stream is [`crate::pattern`]'s (sysbench's):
//!
//! - Sequential modes: every thread takes the next request of one shared cursor. In a closed
//!   loop the T threads hold T consecutive requests at once; the cursor walks each file in
//!   order, so those requests pile up in one file unless they cross a file's end. The count
//!   is exact: the most crowded file of a window of T consecutive requests (the window that
//!   starts at a file's first request reaches it).
//! - Random modes: each thread draws its block uniformly over all files on its own. A write
//!   meets, in its file, each other thread with probability (that thread's share of writes)
//!   / (files): the count is the mean a write sees, itself included.
//!
//! fsync events are left out: they are not writes, and the default round (one fsync per file
//! every 100 requests) holds a thread only now and then.

use crate::access::Access;
use crate::pattern::Geometry;
use crate::spec::FileioSpec;

/// Threads writing one file at once, the writing thread included: 0 for read-only modes, 1
/// when every writer has its file to itself; sequential modes give the exact count in the
/// most crowded file, random modes the mean one write meets.
pub fn writers_per_file(spec: &FileioSpec, threads: usize) -> f64 {
    let Some(access) = spec.access.filter(Access::writes) else {
        return 0.0;
    };
    let threads = threads.max(1) as u64;
    if access.is_sequential() {
        let g = Geometry::from_spec(spec);
        let (per_file, pass) = (g.chunks_per_file(), g.seq_pass());
        // Whole passes put `per_file` requests in every file; the rest of the window is
        // consecutive requests, at most one file's worth in a single file.
        return ((threads / pass) * per_file + (threads % pass).min(per_file)) as f64;
    }
    let write_share = 1.0 - access.read_share();
    1.0 + (threads - 1) as f64 * write_share / spec.num_files.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(access: Access, files: u32) -> FileioSpec {
        FileioSpec {
            access: Some(access),
            num_files: files,
            total_size: 16 << 20,
            block_size: 16384,
            ..Default::default()
        }
    }

    fn w(mode: Access, files: u32, threads: usize) -> f64 {
        writers_per_file(&spec(mode, files), threads)
    }

    #[test]
    fn sequential_threads_share_the_cursor_file_whatever_the_file_count() {
        for mode in [Access::seq_create(), Access::seq_write()] {
            for files in [1, 16, 128] {
                assert_eq!(w(mode, files, 1), 1.0, "{mode:?} {files}");
                // 16 MiB in 128 files: 8 requests of 16 KiB per file, so 16 threads span
                // two files, 8 in each. With fewer files each file holds all 16.
                let expect = if files == 128 { 8.0 } else { 16.0 };
                assert_eq!(w(mode, files, 16), expect, "{mode:?} {files}");
            }
        }
    }

    #[test]
    fn sequential_window_longer_than_a_pass_wraps_onto_the_same_files() {
        // 4 files of 2 requests: 8 requests a pass. 20 threads: two passes (2 per file each)
        // and 4 more requests, 2 of them in one file.
        let s = FileioSpec {
            total_size: 4 * 2 * 16384,
            ..spec(Access::seq_write(), 4)
        };
        assert_eq!(writers_per_file(&s, 20), 6.0);
        assert_eq!(writers_per_file(&s, 8), 2.0);
        // Merged requests are longer: one per file, so two threads write two files.
        assert_eq!(writers_per_file(&s, 2), 2.0);
        let m = FileioSpec {
            merged_requests: 2,
            ..s
        };
        assert_eq!(writers_per_file(&m, 2), 1.0);
    }

    #[test]
    fn random_writes_spread_over_the_files() {
        for files in [1u32, 16, 128] {
            assert_eq!(w(Access::rand_write(), files, 1), 1.0);
            assert_eq!(w(Access::rand_mix(1.5), files, 1), 1.0);
            assert_eq!(
                w(Access::rand_write(), files, 16),
                1.0 + 15.0 / files as f64,
                "{files}"
            );
        }
        assert_eq!(w(Access::rand_write(), 1, 16), 16.0);
        // rndrw at the default ratio 1.5 writes 2 requests in 5.
        assert!((w(Access::rand_mix(1.5), 1, 16) - 7.0).abs() < 1e-9);
        assert!((w(Access::rand_mix(1.5), 16, 16) - (1.0 + 15.0 * 0.4 / 16.0)).abs() < 1e-9);
    }

    #[test]
    fn read_modes_have_no_writers() {
        for mode in [Access::seq_read(), Access::rand_read()] {
            for files in [1, 16, 128] {
                for threads in [1, 16] {
                    assert_eq!(w(mode, files, threads), 0.0);
                }
            }
        }
        assert_eq!(writers_per_file(&FileioSpec::default(), 4), 0.0);
    }
}
