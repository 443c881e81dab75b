//! The bytes plumb writes.
//!
//! - random (default): random bytes, and every 4 KiB of every write stamped with a value
//!   never written before, so compressing or deduplicating storage cannot shrink the work
//!   (zeros, sysbench's data, let such storage skip most of it). A buffer smaller than a
//!   compressor's window is scrambled whole before each write, so two writes of it side by
//!   side share no string; a larger one is only stamped, its window-sized stretches being
//!   distinct random bytes already (scrambling 1 MiB per write cost a fifth of the
//!   bandwidth of 1 MiB writes at queue depth 1).
//! - zero: sysbench's zero-filled blocks.
//! - compressible: random bytes with a share of every 512 zeroed, stamped as random data is.
//! - repeated: each buffer's first contents (random, or compressible), written unchanged
//!   every time: fio's data with `scramble_buffers=0`, which deduplicating storage stores
//!   once per buffer.
//! - validate: sysbench's `--validate` layout, one checksum per block: random bytes, then the
//!   CRC32 of those bytes and the block's offset in its file at the block's end; reads check
//!   both. plumb checks every block of a merged request (sysbench checks one CRC per request,
//!   which cannot match blocks written one by one at prepare).

use plumb_core::random::Rng;
use thiserror::Error;

use crate::spec::Fill;

/// Bytes at the end of a validated block: CRC32 (4) and offset (8), little endian as sysbench
/// stores them on x86.
pub const TRAILER: usize = 12;
/// Granularity of the uniqueness stamp in random data.
pub const STAMP_EVERY: usize = 4096;
/// The largest stretch compressing storage is taken to compress at once (64-128 KiB extents):
/// random buffers below it are scrambled whole at every write.
pub const COMPRESS_WINDOW: usize = 128 * 1024;

/// Fill `buf` with random bytes.
pub fn randomize(buf: &mut [u8], rng: &mut Rng) {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = rng.next_u64().to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&last[..n]);
}

/// `pattern` over and over from the start of `buf` (fio's cpy_pattern).
pub fn tile(buf: &mut [u8], pattern: &[u8]) {
    for c in buf.chunks_mut(pattern.len().max(1)) {
        c.copy_from_slice(&pattern[..c.len()]);
    }
}

/// Prepares write buffers for one writer (a worker thread or prepare).
pub struct Filler {
    fill: Fill,
    block: usize,
    stamp: u64,
    step: u64,
    /// Seal every request with a verify header (fio's verify).
    verify: Option<crate::verify::Sealing>,
    /// The bytes of [`Fill::Pattern`].
    pattern: Option<std::sync::Arc<[u8]>>,
}

impl Filler {
    /// `stream` distinguishes writers so their stamps never collide.
    pub fn new(fill: Fill, block: u64, stream: u64) -> Filler {
        let mut seed = Rng::new(0x0070_6c75_6d62, stream);
        Filler {
            fill,
            block: block as usize,
            stamp: seed.next_u64(),
            // Odd, so the sequence of stamps visits 2^64 values before repeating.
            step: seed.next_u64() | 1,
            verify: None,
            pattern: None,
        }
    }

    /// The same, with the bytes a [`Fill::Pattern`] repeats.
    pub fn patterned(mut self, pattern: Option<std::sync::Arc<[u8]>>) -> Filler {
        self.pattern = pattern;
        self
    }

    /// The same, sealing every request for verification.
    pub fn verified(mut self, seal: Option<crate::verify::Sealing>) -> Filler {
        self.verify = seal;
        self
    }

    pub fn fill(&self) -> Fill {
        self.fill
    }

    /// Initial contents of a fresh write buffer.
    pub fn init(&self, buf: &mut [u8], rng: &mut Rng) {
        if self.fill == Fill::Pattern {
            return tile(buf, self.pattern.as_deref().unwrap_or(&[0]));
        }
        if self.fill != Fill::Zero {
            randomize(buf, rng);
        }
        if let Fill::Compressible { pct } | Fill::Repeated { pct } = self.fill {
            compressible(buf, pct);
        }
    }

    /// Put the initial contents back into a buffer a read has overwritten: a write carries
    /// this filler's bytes, never the file data the read left there.
    pub fn reset(&self, buf: &mut [u8], rng: &mut Rng) {
        match self.fill {
            Fill::Zero => buf.fill(0),
            Fill::Pattern => tile(buf, self.pattern.as_deref().unwrap_or(&[0])),
            Fill::Random | Fill::Validate => randomize(buf, rng),
            Fill::Compressible { pct } | Fill::Repeated { pct } => {
                randomize(buf, rng);
                compressible(buf, pct);
            }
        }
    }

    /// Make `buf` (already initialised with `init`) ready to be written at `offset` of a file.
    #[inline]
    pub fn prepare(&mut self, buf: &mut [u8], offset: u64) {
        if let Some(s) = self
            .verify
            .as_ref()
            .filter(|s| s.checksum != crate::verify::Checksum::Null)
        {
            // Sealed data is drawn from a seed of its own, unique per write (the stamp).
            self.stamp = self.stamp.wrapping_add(self.step);
            crate::verify::seal(s, buf, offset, self.stamp);
            return;
        }
        match self.fill {
            Fill::Zero | Fill::Repeated { .. } | Fill::Pattern => {}
            Fill::Random if buf.len() >= COMPRESS_WINDOW => self.stamp_chunks(buf),
            Fill::Random => {
                for c in buf.chunks_mut(STAMP_EVERY) {
                    if c.len() >= 8 {
                        self.stamp = self.stamp.wrapping_add(self.step);
                        // Every word of the chunk changes, not only its stamp: two writes
                        // of one buffer share no byte string a compressor could find
                        // (storage that compresses 64-128 KiB at a time would otherwise see
                        // the same 4 KiB again and again).
                        scramble(&mut c[8..], mix(self.stamp));
                        c[..8].copy_from_slice(&self.stamp.to_le_bytes());
                    }
                }
            }
            Fill::Compressible { .. } => self.stamp_chunks(buf),
            Fill::Validate => {
                for (i, b) in buf.chunks_mut(self.block).enumerate() {
                    if b.len() > TRAILER {
                        self.stamp = self.stamp.wrapping_add(self.step);
                        b[..8].copy_from_slice(&self.stamp.to_le_bytes());
                        seal(b, offset + (i * self.block) as u64);
                    }
                }
            }
        }
    }

    /// A new stamp at the start of every [`STAMP_EVERY`] bytes of `buf`.
    #[inline]
    fn stamp_chunks(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(STAMP_EVERY) {
            if c.len() >= 8 {
                self.stamp = self.stamp.wrapping_add(self.step);
                c[..8].copy_from_slice(&self.stamp.to_le_bytes());
            }
        }
    }
}

/// A 64-bit value with every bit depending on `x` (splitmix64's finaliser).
#[inline(always)]
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// XOR every whole 8 bytes of `b` with `key`.
#[inline(always)]
fn scramble(b: &mut [u8], key: u64) {
    for w in b.chunks_exact_mut(8) {
        let v = u64::from_ne_bytes(w.try_into().expect("8 bytes")) ^ key;
        w.copy_from_slice(&v.to_ne_bytes());
    }
}

/// The compressible part of every 512 bytes, zeroed (the start stays random: it carries
/// the uniqueness stamp).
pub const COMPRESS_CHUNK: usize = 512;

/// Zero `pct`% of each [`COMPRESS_CHUNK`] of `buf`, at the chunk's end.
pub fn compressible(buf: &mut [u8], pct: u8) {
    let zero = COMPRESS_CHUNK * pct.min(100) as usize / 100;
    // The first 8 bytes of each chunk stay random: the stamp lands there.
    let zero = zero.min(COMPRESS_CHUNK - 8);
    for c in buf.chunks_mut(COMPRESS_CHUNK) {
        let n = c.len();
        c[n.saturating_sub(zero)..].fill(0);
    }
}

/// Write the CRC and offset trailer of one block.
pub fn seal(block: &mut [u8], offset: u64) {
    let body = block.len() - TRAILER;
    let crc = crc32fast::hash(&block[..body]);
    block[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    block[body + 4..].copy_from_slice(&offset.to_le_bytes());
}

/// A block that failed validation.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ValidationError {
    #[error("checksum mismatch in the block at offset {offset}: computed 0x{computed:08x}, stored 0x{stored:08x}")]
    Checksum {
        offset: u64,
        computed: u32,
        stored: u32,
    },
    #[error(
        "offset mismatch in the block at offset {offset}: the block says it belongs at {stored}"
    )]
    Offset { offset: u64, stored: u64 },
}

/// Check every block of `buf`, read from `offset`.
pub fn check(buf: &[u8], offset: u64, block: u64) -> Result<(), ValidationError> {
    for (i, b) in buf.chunks(block as usize).enumerate() {
        let at = offset + i as u64 * block;
        if b.len() <= TRAILER {
            continue;
        }
        let body = b.len() - TRAILER;
        let computed = crc32fast::hash(&b[..body]);
        let stored = u32::from_le_bytes(b[body..body + 4].try_into().expect("4 bytes"));
        if computed != stored {
            return Err(ValidationError::Checksum {
                offset: at,
                computed,
                stored,
            });
        }
        let off = u64::from_le_bytes(b[body + 4..].try_into().expect("8 bytes"));
        if off != at {
            return Err(ValidationError::Offset {
                offset: at,
                stored: off,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_round_trip_and_detects_damage() {
        let mut rng = Rng::new(1, 1);
        let mut f = Filler::new(Fill::Validate, 512, 0);
        let mut buf = vec![0u8; 2048];
        f.init(&mut buf, &mut rng);
        f.prepare(&mut buf, 8192);
        assert_eq!(check(&buf, 8192, 512), Ok(()));
        assert!(matches!(
            check(&buf, 4096, 512),
            Err(ValidationError::Offset {
                offset: 4096,
                stored: 8192
            })
        ));
        buf[600] ^= 1;
        assert!(matches!(
            check(&buf, 8192, 512),
            Err(ValidationError::Checksum { offset: 8704, .. })
        ));
    }

    #[test]
    fn verified_writes_check_whatever_the_fill() {
        for fill in [Fill::Random, Fill::Compressible { pct: 40 }] {
            let mut rng = Rng::new(5, 1);
            let md5 = crate::verify::Sealing::new(crate::verify::Checksum::Md5);
            let mut f = Filler::new(fill, 4096, 0).verified(Some(md5.clone()));
            let mut buf = vec![0u8; 8192];
            f.init(&mut buf, &mut rng);
            for offset in [0, 8192, 16384] {
                f.prepare(&mut buf, offset);
                assert_eq!(crate::verify::check(&md5, &buf, offset), Ok(()), "{fill:?}");
            }
        }
    }

    #[test]
    fn two_writes_of_one_buffer_share_no_word() {
        // A compressor that sees both writes (a 128 KiB extent) finds nothing to reuse.
        let mut rng = Rng::new(3, 1);
        let mut f = Filler::new(Fill::Random, 4096, 0);
        let mut buf = vec![0u8; 8192];
        f.init(&mut buf, &mut rng);
        f.prepare(&mut buf, 0);
        let first = buf.clone();
        f.prepare(&mut buf, 8192);
        let same = first
            .chunks_exact(8)
            .zip(buf.chunks_exact(8))
            .filter(|(a, b)| a == b)
            .count();
        assert_eq!(same, 0);
    }

    #[test]
    fn a_buffer_as_large_as_a_compressor_s_window_is_stamped_not_scrambled() {
        let mut rng = Rng::new(5, 1);
        let mut f = Filler::new(Fill::Random, 4096, 0);
        let mut buf = vec![0u8; COMPRESS_WINDOW * 2];
        f.init(&mut buf, &mut rng);
        let mut seen = std::collections::HashSet::new();
        let mut before = buf.clone();
        for _ in 0..4 {
            f.prepare(&mut buf, 0);
            for (new, old) in buf.chunks(STAMP_EVERY).zip(before.chunks(STAMP_EVERY)) {
                // Only the stamp changes, and no 4 KiB block is written twice.
                assert_ne!(new[..8], old[..8]);
                assert_eq!(new[8..], old[8..]);
                assert!(seen.insert(new.to_vec()), "a 4 KiB block repeated");
            }
            // A compressor's window of it holds no 4 KiB twice: the random bytes differ.
            let window: std::collections::HashSet<&[u8]> = buf[..COMPRESS_WINDOW]
                .chunks(STAMP_EVERY)
                .map(|c| &c[8..])
                .collect();
            assert_eq!(window.len(), COMPRESS_WINDOW / STAMP_EVERY);
            before = buf.clone();
        }
    }

    #[test]
    fn compressible_fill_zeroes_its_share_of_each_chunk() {
        let mut rng = Rng::new(3, 1);
        let mut f = Filler::new(Fill::Compressible { pct: 50 }, 4096, 0);
        let mut buf = vec![0u8; 4096];
        f.init(&mut buf, &mut rng);
        f.prepare(&mut buf, 0);
        for c in buf.chunks(COMPRESS_CHUNK) {
            assert!(c[256..].iter().all(|&b| b == 0));
            assert!(c[..256].iter().filter(|&&b| b == 0).count() < 16);
        }
    }

    #[test]
    fn random_writes_never_repeat_a_4k_block() {
        let mut rng = Rng::new(1, 1);
        let mut f = Filler::new(Fill::Random, 16384, 3);
        let mut buf = vec![0u8; 16384];
        f.init(&mut buf, &mut rng);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            f.prepare(&mut buf, 0);
            for c in buf.chunks(STAMP_EVERY) {
                assert!(seen.insert(c.to_vec()), "a 4 KiB block repeated");
            }
        }
        let zeros = buf.iter().filter(|&&b| b == 0).count();
        assert!(zeros < buf.len() / 64, "random data should hold few zeros");
    }

    #[test]
    fn repeated_fill_writes_its_first_contents_every_time() {
        for pct in [0, 40] {
            let mut rng = Rng::new(1, 1);
            let mut f = Filler::new(Fill::Repeated { pct }, 4096, 0);
            let mut buf = vec![0u8; 8192];
            f.init(&mut buf, &mut rng);
            let first = buf.clone();
            for offset in [0, 8192, 1 << 30] {
                f.prepare(&mut buf, offset);
                assert_eq!(buf, first, "pct {pct}");
            }
            // The two halves of one buffer differ: the data is random, not a pattern.
            assert_ne!(buf[..4096], buf[4096..]);
            let zeros = buf.iter().filter(|&&b| b == 0).count() * 100 / buf.len();
            assert!(
                (pct as usize..pct as usize + 2).contains(&zeros),
                "{zeros}%"
            );
        }
    }

    #[test]
    fn zero_fill_stays_zero() {
        let mut rng = Rng::new(1, 1);
        let mut f = Filler::new(Fill::Zero, 4096, 0);
        let mut buf = vec![0u8; 4096];
        f.init(&mut buf, &mut rng);
        f.prepare(&mut buf, 0);
        assert!(buf.iter().all(|&b| b == 0));
    }
}
