//! Direct I/O that reached the device cut into several requests.

use crate::{Facts, Finding, Knob, Severity};
use plumb_core::size::{format_coarse, format_size};

/// The smallest block the rule looks at: below it a request fits any device's limits.
const LARGE_BLOCK: u64 = 64 << 10;
/// Device requests per requested I/O from which the I/O counts as cut (a whole one is 1.0;
/// a cut one 2 or more; other traffic on the disk adds a little).
const CUT: f64 = 1.4;
const PAGE: u64 = 4096;
/// Enough I/Os that a few requests of other programs on the disk cannot make a cut.
const MIN_IOS: u64 = 16;
/// The most device traffic, against the bytes the timed run requested, that still counts as
/// the test's own (a ramp of half the timed part's length adds half).
const MAX_TRAFFIC: f64 = 3.0;

/// Large O_DIRECT reads or writes arrived at the device as several requests each: the
/// kernel cut them at the device's limits. When the cut comes from max_segments it depends
/// on where the buffer's pages lie in physical memory, so it changes from run to run (1 MiB
/// blocks on a virtio disk with 254 segments: a fifth of the throughput on this project's
/// test host, either way, for dd and fio alike).
pub fn requests_split(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    let dev = f.device.as_ref()?;
    let block = io.block_size_bytes;
    if block < LARGE_BLOCK || !io.engine_does_io {
        return None;
    }
    // One direction: its name, whether it was direct, the I/Os and bytes the timed run
    // asked for, and the device's requests and bytes.
    let sides = [
        (
            "read",
            io.direct || io.direct_reads,
            io.reads,
            io.bytes_read,
            dev.read_ios,
            dev.read_bytes,
        ),
        (
            "write",
            io.direct || io.direct_writes,
            io.writes,
            io.bytes_written,
            dev.write_ios,
            dev.write_bytes,
        ),
    ];
    // Requests per I/O from the device's average request size, not from counting I/Os: the
    // device also carried the run's untimed part (fio's ramp_time), the same kind of I/O.
    let per_io = |dev_ios: u64, dev_bytes: u64| block as f64 * dev_ios as f64 / dev_bytes as f64;
    let (what, dev_ios, dev_bytes, per) = sides
        .into_iter()
        // The device's traffic is mostly the test's: at least most of the bytes requested,
        // at most what a ramp before the timed part adds.
        .filter(|&(_, direct, ops, asked, _, seen)| {
            direct
                && ops >= MIN_IOS
                && seen > 0
                && seen as f64 >= 0.8 * asked as f64
                && seen as f64 <= MAX_TRAFFIC * asked as f64
        })
        .map(|(what, _, _, _, ios, bytes)| (what, ios, bytes, per_io(ios, bytes)))
        .max_by(|a, b| a.3.total_cmp(&b.3))?;
    if per < CUT {
        return None;
    }
    let t = f.target.as_ref();
    let max_request = t.and_then(|t| t.max_request_bytes);
    let max_segments = t.and_then(|t| t.max_segments);
    let device = &dev.name;
    let size_cut = max_request
        .filter(|&m| block > m)
        .map(|m| block.div_ceil(m));
    let segments = max_segments.filter(|&s| block / PAGE > s);
    let size_words = |m: u64| {
        format!(
            "each is larger than the largest request {device} takes (max_sectors_kb {})",
            m >> 10
        )
    };
    let segment_words = |s: u64| {
        format!(
            "a buffer of {} pages that are not physically contiguous needs more memory segments than {device} takes in one request ({s}): whether a request is cut depends on where the buffer's pages happen to lie, so it can change from one run to the next",
            block / PAGE
        )
    };
    let why = match (size_cut, segments) {
        (Some(n), Some(s)) if per >= n as f64 + 0.5 => format!(
            "{}, which makes {n}, and {}",
            size_words(max_request.unwrap_or(0)),
            segment_words(s)
        ),
        (Some(_), _) => size_words(max_request.unwrap_or(0)),
        (None, Some(s)) => segment_words(s),
        (None, None) => {
            format!("the device's queue limits cut them (see /sys/block/{device}/queue)")
        }
    };
    let mut x = Finding::new(
        "requests-split",
        Severity::Info,
        format!(
            "Each {} direct {what} reached {device} as {per:.1} requests: {why}. An extra request per I/O costs time the block size alone does not explain.",
            format_size(block)
        ),
    )
    .evidence("block size", format_size(block))
    .evidence("device requests per I/O", format!("{per:.2}"))
    .evidence(
        "average device request",
        format_coarse(dev_bytes / dev_ios.max(1)),
    );
    if let Some(m) = max_request {
        x = x.evidence("largest device request", format_size(m));
    }
    if let Some(s) = max_segments {
        x = x.evidence("segments per request", s);
    }
    // The largest power-of-two block no limit can cut, whatever the buffer's pages.
    let safe = [max_request, max_segments.map(|s| s * PAGE)]
        .into_iter()
        .flatten()
        .min()
        .filter(|&m| m >= PAGE)
        .map(|m| 1u64 << (63 - m.leading_zeros()));
    let mut advice =
        "Compare runs only when their device requests per I/O agree (shown here).".to_string();
    if let Some(b) = safe {
        advice.push_str(&format!(
            " For a figure that does not depend on where the buffer's memory lies, use blocks of at most {} on {device}.",
            format_size(b)
        ));
    }
    if segments.is_some() {
        advice.push_str(&format!(
            " Or keep the blocks and use {}: a buffer inside one huge page is physically contiguous, one segment per huge page.",
            f.knob(Knob::HugePageBuffers)
        ));
    }
    Some(x.advice(advice))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scenario;

    /// 1 MiB direct sequential writes, `per` device requests each.
    fn mib_writes(per: f64) -> Facts {
        let mut f = scenario::fileio("seqwr");
        let io = f.io.as_mut().unwrap();
        io.block_size_bytes = 1 << 20;
        io.writes = 2048;
        io.bytes_written = 2048 << 20;
        let d = f.device.as_mut().unwrap();
        d.write_ios = (2048.0 * per) as u64;
        d.write_bytes = 2048 << 20;
        let t = f.target.as_mut().unwrap();
        t.max_request_bytes = Some(4 << 20);
        t.max_segments = Some(254);
        f
    }

    #[test]
    fn one_mib_writes_cut_in_two_by_segments() {
        let x = requests_split(&mib_writes(2.0)).unwrap();
        assert_eq!(x.id, "requests-split");
        assert!(x
            .message
            .starts_with("Each 1MiB direct write reached vdb as 2.0 requests"));
        assert!(x.message.contains("256 pages"), "{}", x.message);
        assert!(x.message.contains("(254)"), "{}", x.message);
        let ev: Vec<_> = x
            .evidence
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert!(ev.contains(&("device requests per I/O", "2.00")), "{ev:?}");
        assert!(
            ev.contains(&("average device request", "512.0 KiB")),
            "{ev:?}"
        );
        // Cut by segments: huge-page buffers keep the block whole.
        assert!(
            x.advice.contains("use I/O buffers in huge pages"),
            "{}",
            x.advice
        );
    }

    #[test]
    fn whole_requests_are_clean() {
        assert!(requests_split(&mib_writes(1.0)).is_none());
        // A little other traffic on the disk is not a cut.
        assert!(requests_split(&mib_writes(1.2)).is_none());
    }

    #[test]
    fn a_block_above_the_largest_request_names_that_limit() {
        let mut f = mib_writes(2.0);
        f.target.as_mut().unwrap().max_request_bytes = Some(512 << 10);
        let x = requests_split(&f).unwrap();
        assert!(x.message.contains("max_sectors_kb 512"), "{}", x.message);
        // With segments to spare only the size cut it: huge pages would not help.
        f.target.as_mut().unwrap().max_segments = Some(1024);
        let x = requests_split(&f).unwrap();
        assert!(!x.advice.contains("huge pages"), "{}", x.advice);
    }

    #[test]
    fn buffered_or_small_or_foreign_traffic_is_clean() {
        let mut f = mib_writes(2.0);
        f.io.as_mut().unwrap().direct = false;
        assert!(
            requests_split(&f).is_none(),
            "buffered: writeback makes its own requests"
        );
        let mut f = mib_writes(2.0);
        f.io.as_mut().unwrap().block_size_bytes = 16 << 10;
        assert!(requests_split(&f).is_none());
        let mut f = mib_writes(2.0);
        f.device.as_mut().unwrap().write_bytes = 8192 << 20;
        assert!(
            requests_split(&f).is_none(),
            "the disk carried others' traffic"
        );
    }

    #[test]
    fn a_ramp_before_the_timed_part_is_not_a_cut() {
        // A 1 s ramp before 2 timed seconds: the device saw half as much again, whole.
        let mut f = mib_writes(1.0);
        let d = f.device.as_mut().unwrap();
        d.write_ios = 3072;
        d.write_bytes = 3072 << 20;
        assert!(requests_split(&f).is_none());
        // The same, cut in two.
        f.device.as_mut().unwrap().write_ios = 6144;
        let x = requests_split(&f).unwrap();
        assert!(x.message.contains("as 2.0 requests"), "{}", x.message);
    }

    #[test]
    fn dd_s_direct_reads_count_on_their_own_flag() {
        let mut f = scenario::fileio("seqrd");
        let io = f.io.as_mut().unwrap();
        io.direct = false;
        io.direct_reads = true;
        io.block_size_bytes = 8 << 20;
        io.reads = 256;
        io.bytes_read = 256 << 23;
        let d = f.device.as_mut().unwrap();
        d.read_ios = 512;
        d.read_bytes = 256 << 23;
        let t = f.target.as_mut().unwrap();
        t.max_request_bytes = Some(4 << 20);
        let x = requests_split(&f).unwrap();
        assert!(x.message.contains("direct read"), "{}", x.message);
        assert!(x.message.contains("max_sectors_kb 4096)"), "{}", x.message);
        assert!(!x.message.contains("segments"), "{}", x.message);
        // Cut further than the size limit alone makes: the pages too.
        f.device.as_mut().unwrap().read_ios = 256 * 9;
        let x = requests_split(&f).unwrap();
        assert!(
            x.message
                .contains("which makes 2, and a buffer of 2048 pages"),
            "{}",
            x.message
        );
    }
}
