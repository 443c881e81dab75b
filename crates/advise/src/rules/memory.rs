//! The memory test measuring a CPU cache.

use crate::Knob;
use crate::{Facts, Finding, Severity};
use plumb_core::size::format_coarse;

/// The block fits in a CPU cache: sysbench memory's 1K default measures L1, not RAM.
pub fn block_in_cache(f: &Facts) -> Option<Finding> {
    let m = f.memory_test.as_ref()?;
    let host = f.host.as_ref();
    let l2 = host.and_then(|h| h.l2_bytes).unwrap_or(256 << 10);
    let l3 = host.and_then(|h| h.l3_bytes);
    let level = if host
        .and_then(|h| h.l1d_bytes)
        .is_some_and(|l1| m.block_size_bytes <= l1)
    {
        "L1"
    } else if m.block_size_bytes <= l2 {
        "L2"
    } else if l3.is_some_and(|l3| m.block_size_bytes <= l3) {
        "L3"
    } else {
        return None;
    };
    let mut x = Finding::new(
        "memory-block-in-cache",
        Severity::Caution,
        format!("The memory block fits in the CPU's {level} cache: the figures measure that cache, not RAM."),
    )
    .evidence("block size", format_coarse(m.block_size_bytes))
    .evidence("L2 cache", format_coarse(l2));
    if let Some(l3) = l3 {
        x = x.evidence("L3 cache", format_coarse(l3));
    }
    Some(x.advice(format!(
        "For RAM bandwidth use a block several times larger than the last-level cache, e.g. {}.",
        f.knob(Knob::LargeMemoryBlock)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostFacts, MemoryTestFacts};

    fn mem(block: u64) -> Facts {
        Facts {
            test: "memory".into(),
            host: Some(HostFacts {
                l1d_bytes: Some(32 << 10),
                l2_bytes: Some(512 << 10),
                l3_bytes: Some(32 << 20),
                ..Default::default()
            }),
            memory_test: Some(MemoryTestFacts {
                block_size_bytes: block,
                scope_global: true,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn default_1k_block_is_l1() {
        assert!(block_in_cache(&mem(1024)).unwrap().message.contains("L1"));
    }

    #[test]
    fn block_beyond_l3_is_clean() {
        assert!(block_in_cache(&mem(1 << 30)).is_none());
    }
}
