//! fio's `continue_on_error` and `ignore_error`, read into the errors a job goes on after
//! ([`plumb_fileio::tolerate`]), and fio 3.33's words for the first error of a job that
//! went on.
//!
//! continue_on_error names the kinds that go on (read, write, verify; io is read and
//! write, all and 1 all three); each such kind goes on after EIO and EILSEQ, fio's
//! "non-fatal" errors, unless ignore_error lists its own. ignore_error is up to three lists,
//! `READ,WRITE,VERIFY`, each errno values joined by `:` (fio's names EPERM to ERANGE, or
//! numbers); a list given turns its kind on whatever continue_on_error says.

use plumb_fileio::error::errno_text;
use plumb_fileio::tolerate::Tolerate;

/// fio's non-fatal errors: what a kind goes on after when ignore_error lists nothing.
const NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// The names fio's ignore_error knows, in errno order from 1 (its str2error).
const NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// The errors the job goes on after, or `None` when it stops at every error (nothing
/// counted, no `errors` line). `Err` holds fio's lines for a list it cannot read.
pub fn of(
    continue_on_error: Option<&str>,
    ignore_error: Option<&str>,
) -> Result<Option<Tolerate>, String> {
    // [read, write, verify]; the values are checked against the option's table before.
    let mut on = match continue_on_error.unwrap_or("none") {
        "read" => [true, false, false],
        "write" => [false, true, false],
        "io" => [true, true, false],
        "verify" => [false, false, true],
        "all" | "1" => [true, true, true],
        _ => [false, false, false],
    };
    let mut lists: [Vec<i32>; 3] = Default::default();
    if let Some(v) = ignore_error {
        let failed = |why: String| format!("{why}\nfio: failed parsing ignore_error={v}");
        for (kind, part) in v.trim().split(',').enumerate() {
            if kind == 3 {
                return Err(failed("Illegal error type".into()));
            }
            // fio stops a list at its first empty name.
            for name in part.split(':').take_while(|n| !n.is_empty()) {
                let errno = match name.strip_prefix('E') {
                    Some(_) => NAMES
                        .iter()
                        .position(|&n| n == name)
                        .map_or(0, |i| i as i32 + 1),
                    None => super::values::atoi(name).wrapping_abs(),
                };
                if errno == 0 {
                    return Err(failed(format!(
                        "Unknown error {name}, please use number value"
                    )));
                }
                lists[kind].push(errno);
            }
            on[kind] |= !lists[kind].is_empty();
        }
    }
    if !on.iter().any(|&k| k) {
        return Ok(None);
    }
    let [read, write, verify] = std::array::from_fn(|k| match (on[k], lists[k].is_empty()) {
        (false, _) => Vec::new(),
        (true, true) => NON_FATAL.to_vec(),
        (true, false) => lists[k].clone(),
    });
    Ok(Some(Tolerate {
        read,
        write,
        verify,
    }))
}

/// fio's `td->verror` for a job that went on after its first error, `first` (its `err=`
/// text): the synchronous engines name the call that failed; the others say nothing, as
/// fio reports a tolerated error through no message of its own there, nor a verify
/// failure.
pub fn first_error_words(engine: &str, first: i32) -> String {
    if first == libc::EILSEQ {
        return String::new();
    }
    let at = match engine {
        "sync" | "psync" | "pvsync" | "pvsync2" => "file:engines/sync.c:126, func=xfer",
        "vsync" => "file:engines/sync.c:364, func=xfer vsync",
        _ => return String::new(),
    };
    format!("{at}, error={}", errno_text(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_on_error_alone_goes_on_after_fios_non_fatal_errors() {
        assert_eq!(of(None, None), Ok(None));
        assert_eq!(of(Some("none"), None), Ok(None));
        assert_eq!(of(Some("0"), None), Ok(None));
        let t = of(Some("io"), None).unwrap().unwrap();
        assert_eq!(t.read, [libc::EIO, libc::EILSEQ]);
        assert_eq!(t.write, [libc::EIO, libc::EILSEQ]);
        assert!(t.verify.is_empty());
        let all = of(Some("1"), None).unwrap().unwrap();
        assert_eq!(all.verify, [libc::EIO, libc::EILSEQ]);
    }

    #[test]
    fn ignore_error_lists_turn_their_kinds_on() {
        let t = of(None, Some("EAGAIN,ENOSPC:122")).unwrap().unwrap();
        assert_eq!(t.read, [libc::EAGAIN]);
        assert_eq!(t.write, [libc::ENOSPC, 122]);
        assert!(t.verify.is_empty());
        // An empty list leaves its kind as continue_on_error says.
        let t = of(Some("read"), Some(",-28")).unwrap().unwrap();
        assert_eq!(t.read, [libc::EIO, libc::EILSEQ]);
        assert_eq!(t.write, [28]);
        assert_eq!(of(None, Some(",,")), Ok(None));
    }

    #[test]
    fn lists_fio_cannot_read_fail_with_its_lines() {
        assert_eq!(
            of(None, Some("EFOO")),
            Err("Unknown error EFOO, please use number value\nfio: failed parsing ignore_error=EFOO".into())
        );
        // EILSEQ is not among fio's names.
        assert!(of(None, Some(",EILSEQ")).is_err());
        assert_eq!(
            of(None, Some(",,,EIO")),
            Err("Illegal error type\nfio: failed parsing ignore_error=,,,EIO".into())
        );
        assert!(of(None, Some("xyz")).is_err());
        assert_eq!(of(None, Some("84x")).unwrap().unwrap().read, [84]);
    }

    #[test]
    fn first_error_words_by_engine() {
        assert_eq!(
            first_error_words("psync", libc::ENOSPC),
            "file:engines/sync.c:126, func=xfer, error=No space left on device"
        );
        assert_eq!(
            first_error_words("vsync", libc::EIO),
            "file:engines/sync.c:364, func=xfer vsync, error=Input/output error"
        );
        assert_eq!(first_error_words("libaio", libc::ENOSPC), "");
        assert_eq!(first_error_words("psync", libc::EILSEQ), "");
    }
}
