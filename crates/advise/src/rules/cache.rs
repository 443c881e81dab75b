//! The page cache answering instead of the disk.

use plumb_core::size::format_coarse;

use super::pct;
use crate::Knob;
use crate::{Facts, Finding, Severity};

/// Buffered reads served from memory: the device read far less than the test asked for, or the
/// data set was resident, or small enough to be.
pub fn page_cache_reads(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    // An engine that moves no data (null) reads nothing through the cache.
    if io.direct || io.direct_reads || !io.engine_does_io || !io.reads_data() || io.bytes_read == 0
    {
        return None;
    }
    let device_share = f
        .device
        .as_ref()
        .map(|d| d.read_bytes as f64 / io.bytes_read as f64);
    // What was cached before the run decides; the end only says what the reads brought in.
    let resident = f
        .cache
        .as_ref()
        .and_then(|c| c.resident_start.or(c.resident_end));
    let mem = f
        .host
        .as_ref()
        .map(|h| h.mem_total_bytes)
        .filter(|m| *m > 0);
    let fits = mem.map(|m| io.total_size_bytes <= m / 2);
    let (severity, message) = match (device_share, resident, fits) {
        (Some(s), _, _) if s < 0.1 => (
            Severity::Invalid,
            "Reads were served from the page cache: the disk did almost none of the reading, so the read figures measure memory.",
        ),
        (s, Some(r), _) if r >= 0.5 && s.is_none_or(|s| s < 0.9) => (
            Severity::Caution,
            "Most of the data set was in the page cache, so many reads were memory copies rather than disk reads.",
        ),
        (_, _, Some(true)) => (
            Severity::Caution,
            "Buffered reads on a data set that fits in memory: the page cache serves more of them the longer the test runs.",
        ),
        _ => return None,
    };
    let mut x = Finding::new("page-cache-reads", severity, message)
        .evidence("requested read", format_coarse(io.bytes_read));
    if let (Some(d), Some(s)) = (&f.device, device_share) {
        x = x.evidence(
            &format!("read by device {}", d.name),
            format!("{} ({})", format_coarse(d.read_bytes), pct(s)),
        );
    }
    if let Some(r) = resident {
        x = x.evidence("data set resident in page cache", pct(r));
    }
    if let Some(m) = mem {
        x = x
            .evidence("data set", format_coarse(io.total_size_bytes))
            .evidence("memory", format_coarse(m));
    }
    Some(x.advice(format!(
        "Use {}, or a data set several times larger than memory, and drop caches before the run (sync; echo 3 > /proc/sys/vm/drop_caches).",
        f.knob(Knob::Direct)
    )))
}

/// Buffered writes that the page cache absorbed: nothing forced them out and the device wrote
/// far less than the test did.
pub fn page_cache_writes(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    if io.direct
        || io.direct_writes
        || !io.engine_does_io
        || !io.writes_data()
        || io.bytes_written == 0
    {
        return None;
    }
    let device_share = f
        .device
        .as_ref()
        .map(|d| d.write_bytes as f64 / io.bytes_written as f64);
    let dirty_growth = f
        .cache
        .as_ref()
        .and_then(|c| Some(c.dirty_max_bytes?.saturating_sub(c.dirty_start_bytes?)));
    // The device's counters are the whole disk's: another writer on it can make the share
    // look written through. Without any flush, dirty pages that grew by at least half of what
    // was written say the data sat in memory whatever the disk was doing.
    let never_flushed = !io.syncs_during_run() && !io.fsync_end;
    let held_dirty = dirty_growth.is_some_and(|g| g as f64 >= 0.5 * io.bytes_written as f64);
    let absorbed = match device_share {
        Some(s) => s < 0.5 || (never_flushed && held_dirty),
        None => !io.syncs_during_run(),
    };
    if !absorbed {
        return None;
    }
    // A flush during the run, or at its end inside the total time, puts at least part of
    // the device's work in the figures; with neither, they are memory copies only.
    let severity = if io.syncs_during_run() || io.fsync_end {
        Severity::Caution
    } else {
        Severity::Invalid
    };
    let mut x = Finding::new(
        "page-cache-writes",
        severity,
        "Writes were absorbed by the page cache: the figures measure copying into memory, not writing to the disk.",
    )
    .evidence("requested write", format_coarse(io.bytes_written));
    if let (Some(d), Some(s)) = (&f.device, device_share) {
        x = x.evidence(
            &format!("written by device {}", d.name),
            format!("{} ({})", format_coarse(d.write_bytes), pct(s)),
        );
    }
    if let Some(g) = dirty_growth {
        x = x.evidence("dirty page growth", format_coarse(g));
    }
    x = x.evidence(
        "fsync during run",
        if io.syncs_during_run() { "yes" } else { "no" },
    );
    Some(x.advice(format!(
        "Use {}, or make durability part of the test ({}, {}), and run long enough for writeback to show.",
        f.knob(Knob::Direct),
        f.knob(Knob::FsyncEvery),
        f.knob(Knob::DataSync)
    )))
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_engine_that_moves_no_data_touches_no_cache() {
        for mode in ["rndrd", "rndwr"] {
            let mut f = fileio(mode);
            let io = f.io.as_mut().unwrap();
            io.direct = false;
            io.engine = "null".into();
            io.engine_does_io = false;
            assert!(page_cache_reads(&f).is_none(), "{mode}");
            assert!(page_cache_writes(&f).is_none(), "{mode}");
        }
    }
    use super::*;
    use crate::rules::scenario::fileio;

    #[test]
    fn cached_reads_trigger() {
        let mut f = fileio("rndrd");
        f.io.as_mut().unwrap().direct = false;
        f.device.as_mut().unwrap().read_bytes = 1 << 20;
        let x = page_cache_reads(&f).expect("finding");
        assert_eq!(x.severity, Severity::Invalid);
        assert!(x.evidence.iter().any(|(k, _)| k.contains("device")));
    }

    #[test]
    fn resident_data_set_triggers_caution() {
        let mut f = fileio("rndrd");
        f.io.as_mut().unwrap().direct = false;
        f.cache.as_mut().unwrap().resident_start = Some(0.9);
        let read = f.io.as_ref().unwrap().bytes_read;
        f.device.as_mut().unwrap().read_bytes = read * 4 / 10;
        assert_eq!(page_cache_reads(&f).unwrap().severity, Severity::Caution);
    }

    #[test]
    fn pages_the_reads_brought_in_are_not_a_cached_data_set() {
        // Cold at the start, fully cached at the end, every byte read from the device.
        let mut f = fileio("rndrd");
        f.io.as_mut().unwrap().direct = false;
        let c = f.cache.as_mut().unwrap();
        c.resident_start = Some(0.0);
        c.resident_end = Some(1.0);
        let read = f.io.as_ref().unwrap().bytes_read;
        f.device.as_mut().unwrap().read_bytes = read;
        assert!(page_cache_reads(&f).is_none_or(|x| !x.message.contains("Most of the data set")));
    }

    #[test]
    fn direct_or_disk_reads_are_clean() {
        assert!(page_cache_reads(&fileio("rndrd")).is_none());
        let mut f = fileio("rndrd");
        f.io.as_mut().unwrap().direct = false;
        assert!(page_cache_reads(&f).is_none(), "device read everything");
    }

    #[test]
    fn absorbed_writes_trigger() {
        let mut f = fileio("rndwr");
        f.io.as_mut().unwrap().direct = false;
        f.device.as_mut().unwrap().write_bytes = 0;
        f.cache.as_mut().unwrap().dirty_max_bytes = Some(900 << 20);
        let x = page_cache_writes(&f).unwrap();
        assert_eq!(x.severity, Severity::Invalid);
        f.io.as_mut().unwrap().fsync_end = true;
        assert_eq!(page_cache_writes(&f).unwrap().severity, Severity::Caution);
        assert!(x.evidence.iter().any(|(k, _)| k == "dirty page growth"));
    }

    #[test]
    fn another_writer_on_the_disk_does_not_hide_absorbed_writes() {
        let mut f = fileio("rndwr");
        let written = {
            let io = f.io.as_mut().unwrap();
            io.direct = false;
            io.bytes_written
        };
        // The disk wrote as much as the test, but dirty pages grew by all of it.
        f.cache.as_mut().unwrap().dirty_max_bytes = Some((1 << 20) + written);
        assert_eq!(page_cache_writes(&f).unwrap().severity, Severity::Invalid);
        // A flush at the end wrote the dirty pages out: the disk's figure decides.
        f.io.as_mut().unwrap().fsync_end = true;
        assert!(page_cache_writes(&f).is_none());
    }

    #[test]
    fn a_writer_held_at_the_dirty_limit_is_written_through() {
        let mut f = fileio("rndwr");
        f.io.as_mut().unwrap().direct = false;
        let written = f.io.as_ref().unwrap().bytes_written;
        // Dirty pages capped far below what was written: writeback kept pace with the test.
        f.cache.as_mut().unwrap().dirty_max_bytes = Some((1 << 20) + written / 10);
        assert!(page_cache_writes(&f).is_none());
    }

    #[test]
    fn written_through_writes_are_clean() {
        let mut f = fileio("rndwr");
        f.io.as_mut().unwrap().direct = false;
        assert!(page_cache_writes(&f).is_none());
        assert!(page_cache_writes(&fileio("rndwr")).is_none());
    }
}
