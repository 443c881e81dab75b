//! /proc/meminfo: free memory, page cache, dirty pages and pages under writeback.

use serde::{Deserialize, Serialize};

use crate::roots::Roots;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemSnapshot {
    pub total_bytes: u64,
    pub free_bytes: u64,
    /// The kernel's estimate of memory available without swapping.
    pub available_bytes: u64,
    pub buffers_bytes: u64,
    /// Page cache (includes tmpfs/shmem pages).
    pub cached_bytes: u64,
    pub shmem_bytes: u64,
    /// Written by programs, not yet on the device.
    pub dirty_bytes: u64,
    /// Being written to the device now.
    pub writeback_bytes: u64,
}

/// The text of /proc/meminfo under `roots`, None when it cannot be read.
pub fn read(roots: &Roots) -> Option<String> {
    std::fs::read_to_string(roots.proc("meminfo")).ok()
}

/// Every `Key: value` line of /proc/meminfo text: the value in bytes where the kernel gives
/// kB, and as printed otherwise (the HugePages_ counts).
pub fn fields(text: &str) -> impl Iterator<Item = (&str, u64)> {
    text.lines().filter_map(|line| {
        let (key, rest) = line.split_once(':')?;
        let mut it = rest.split_whitespace();
        let v = it.next()?.parse::<u64>().ok()?;
        Some((key, if it.next() == Some("kB") { v * 1024 } else { v }))
    })
}

/// One field of /proc/meminfo text, as [`fields`] gives it.
pub fn field(text: &str, key: &str) -> Option<u64> {
    fields(text).find(|(k, _)| *k == key).map(|(_, v)| v)
}

pub fn parse(text: &str) -> Option<MemSnapshot> {
    let mut m = MemSnapshot::default();
    let mut seen = false;
    for (key, bytes) in fields(text) {
        let slot = match key {
            "MemTotal" => {
                seen = true;
                &mut m.total_bytes
            }
            "MemFree" => &mut m.free_bytes,
            "MemAvailable" => &mut m.available_bytes,
            "Buffers" => &mut m.buffers_bytes,
            "Cached" => &mut m.cached_bytes,
            "Shmem" => &mut m.shmem_bytes,
            "Dirty" => &mut m.dirty_bytes,
            "Writeback" => &mut m.writeback_bytes,
            _ => continue,
        };
        *slot = bytes;
    }
    seen.then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kb_lines() {
        let t = "MemTotal:       24684092 kB
MemFree:        20000000 kB
MemAvailable:   22000000 kB
Buffers:           12345 kB
Cached:          1500000 kB
SwapCached:            0 kB
Shmem:              1000 kB
Dirty:               512 kB
Writeback:            16 kB
HugePages_Total:       0
";
        let m = parse(t).unwrap();
        assert_eq!(m.total_bytes, 24684092 * 1024);
        assert_eq!(m.cached_bytes, 1500000 * 1024);
        assert_eq!(m.dirty_bytes, 512 * 1024);
        assert_eq!(m.writeback_bytes, 16 * 1024);
        assert_eq!(m.shmem_bytes, 1000 * 1024);
        assert!(parse("Foo: 1 kB\n").is_none());
        assert_eq!(field(t, "HugePages_Total"), Some(0));
        assert_eq!(field(t, "SwapCached"), Some(0));
        assert_eq!(field(t, "Swap"), None);
    }
}
