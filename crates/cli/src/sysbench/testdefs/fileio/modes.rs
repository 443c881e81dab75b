//! sysbench's fileio modes (`--file-test-mode`, `--file-io-mode`, `--file-async-engine`)
//! and what each means in plumb-fileio's job model.

use plumb_fileio::access::Access;
use plumb_fileio::engine::{libaio, mmap, null, psync, uring, EngineDef};

/// sysbench's `--file-test-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TestMode {
    SeqWr,
    SeqRewr,
    SeqRd,
    RndRd,
    RndWr,
    RndRw,
}

pub(crate) const TEST_MODES: &[&str] = &["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"];

impl TestMode {
    pub(super) fn parse(s: &str) -> Option<TestMode> {
        Some(match s {
            "seqwr" => TestMode::SeqWr,
            "seqrewr" => TestMode::SeqRewr,
            "seqrd" => TestMode::SeqRd,
            "rndrd" => TestMode::RndRd,
            "rndwr" => TestMode::RndWr,
            "rndrw" => TestMode::RndRw,
            _ => return None,
        })
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            TestMode::SeqWr => "seqwr",
            TestMode::SeqRewr => "seqrewr",
            TestMode::SeqRd => "seqrd",
            TestMode::RndRd => "rndrd",
            TestMode::RndWr => "rndwr",
            TestMode::RndRw => "rndrw",
        }
    }
    /// The job model's access pattern: seqwr creates its files, rndrw interleaves by
    /// `--file-rw-ratio`.
    pub(super) fn access(self, rw_ratio: f64) -> Access {
        match self {
            TestMode::SeqWr => Access::seq_create(),
            TestMode::SeqRewr => Access::seq_write(),
            TestMode::SeqRd => Access::seq_read(),
            TestMode::RndRd => Access::rand_read(),
            TestMode::RndWr => Access::rand_write(),
            TestMode::RndRw => Access::rand_mix(rw_ratio),
        }
    }
    pub(super) fn is_sequential(self) -> bool {
        self.access(1.0).is_sequential()
    }
    pub(super) fn writes(self) -> bool {
        self.access(1.0).writes()
    }
}

/// sysbench's `--file-io-mode`, plus `null` (no I/O at all: plumb's own overhead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IoMode {
    Sync,
    Async,
    Mmap,
    Null,
}

impl IoMode {
    pub(super) fn parse(s: &str) -> Option<IoMode> {
        Some(match s {
            "sync" => IoMode::Sync,
            "async" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            "null" => IoMode::Null,
            _ => return None,
        })
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            IoMode::Sync => "sync",
            IoMode::Async => "async",
            IoMode::Mmap => "mmap",
            IoMode::Null => "null",
        }
    }
}

/// Which kernel interface `--file-io-mode=async` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AsyncEngine {
    /// io_uring, or libaio when io_uring is unavailable.
    Auto,
    IoUring,
    Libaio,
}

impl AsyncEngine {
    pub(super) fn parse(s: &str) -> Option<AsyncEngine> {
        Some(match s {
            "auto" => AsyncEngine::Auto,
            "io_uring" => AsyncEngine::IoUring,
            "libaio" => AsyncEngine::Libaio,
            _ => return None,
        })
    }
}

/// The registry's engine for a `--file-io-mode` (async: the one asked for; `auto` is
/// settled when the run starts, by [`choose_async`]).
pub(super) fn engine_for(io_mode: IoMode, pref: AsyncEngine) -> &'static EngineDef {
    match (io_mode, pref) {
        (IoMode::Sync, _) => &psync::DEF,
        (IoMode::Mmap, _) => &mmap::DEF,
        (IoMode::Null, _) => &null::DEF,
        (IoMode::Async, AsyncEngine::Libaio) => &libaio::DEF,
        (IoMode::Async, _) => &uring::DEF,
    }
}

/// The engine for --file-io-mode=async: io_uring when it works here (`probe`), libaio when
/// it does not and the user left the choice to plumb (with the reason, for the report).
pub(super) fn choose_async(
    pref: AsyncEngine,
    probe: impl FnOnce() -> std::io::Result<()>,
) -> anyhow::Result<(&'static EngineDef, Option<String>)> {
    Ok(match pref {
        AsyncEngine::Libaio => (&libaio::DEF, None),
        AsyncEngine::IoUring => match probe() {
            Ok(()) => (&uring::DEF, None),
            Err(e) => anyhow::bail!(
                "io_uring is not available here ({e}); use --file-async-engine=libaio"
            ),
        },
        AsyncEngine::Auto => match probe() {
            Ok(()) => (&uring::DEF, None),
            Err(e) => (
                &libaio::DEF,
                Some(format!(
                    "io_uring is not available here ({e}); using libaio"
                )),
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> std::io::Result<()> {
        Err(std::io::Error::from_raw_os_error(libc::EPERM))
    }

    #[test]
    fn async_falls_back_to_libaio_only_when_allowed() {
        let (e, note) = choose_async(AsyncEngine::Auto, refused).unwrap();
        assert_eq!(e, &libaio::DEF);
        assert!(note.unwrap().contains("io_uring is not available"));
        let (e, note) = choose_async(AsyncEngine::Auto, || Ok(())).unwrap();
        assert_eq!((e, note), (&uring::DEF, None));
        let err = choose_async(AsyncEngine::IoUring, refused).err().unwrap();
        assert!(err.to_string().contains("--file-async-engine=libaio"));
        assert_eq!(
            choose_async(AsyncEngine::Libaio, refused).unwrap().0,
            &libaio::DEF
        );
    }
}
