//! Verified writes (fio's `verify`): every written chunk starts with a header that names
//! where it belongs and carries a checksum of the chunk; reads check it.
//!
//! Layout of one chunk (plumb's own; only plumb reads it back):
//! `magic (4) | offset in the file (8) | length (4) | seed (8) | digest (its checksum's
//! size) | data`. The digest covers the first 24 bytes and the data, so a chunk written
//! elsewhere, a short or stale chunk and flipped bits are all caught. A chunk is the whole
//! request, or each `verify_interval` bytes of it, as fio puts a header at each interval.
//! Its data is drawn from the seed and the chunk's offset, as fio draws a block's data
//! from the seed in its header: what a chunk should hold can be made again
//! ([`expected`]), for fio's `verify_dump`.
//!
//! - `meta`: the header alone, its digest a CRC32C of the first 16 bytes (fio's header
//!   CRC); with a pattern, the data is checked against it too (what fio does when
//!   `verify_pattern` is given without `verify`).
//! - `pattern`: no header; the data must be the pattern (fio 3.33's `verify=pattern`, its
//!   VERIFY_PATTERN_NO_HDR).
//! - `null`: nothing written in, nothing checked (fio's "pretend to verify").
//! - the checksums: fio's names and algorithms (crc64 is fio's Jones polynomial, crc16
//!   CRC-16/ARC, crc7 CRC-7/MMC, xxhash XXH32 seeded with 1).
//!
//! With a pattern (fio's `verify_pattern`), each request's data is the pattern repeated
//! from the request's start, the headers written over it.

use thiserror::Error;

/// The check a verified job makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Checksum {
    Meta,
    Pattern,
    Null,
    Crc7,
    Crc16,
    Crc32,
    Crc32c,
    Crc64,
    Md5,
    Sha1,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
}

impl Checksum {
    /// fio's `verify` value (`crc32c-intel` is crc32c).
    pub fn from_fio(name: &str) -> Option<Checksum> {
        Some(match name {
            "meta" => Checksum::Meta,
            "pattern" => Checksum::Pattern,
            "null" => Checksum::Null,
            "crc7" => Checksum::Crc7,
            "crc16" => Checksum::Crc16,
            "crc32" => Checksum::Crc32,
            "crc32c" | "crc32c-intel" => Checksum::Crc32c,
            "crc64" => Checksum::Crc64,
            "md5" => Checksum::Md5,
            "sha1" => Checksum::Sha1,
            "sha256" => Checksum::Sha256,
            "sha512" => Checksum::Sha512,
            "sha3-224" => Checksum::Sha3_224,
            "sha3-256" => Checksum::Sha3_256,
            "sha3-384" => Checksum::Sha3_384,
            "sha3-512" => Checksum::Sha3_512,
            "xxhash" => Checksum::Xxhash,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Checksum::Meta => "meta",
            Checksum::Pattern => "pattern",
            Checksum::Null => "null",
            Checksum::Crc7 => "crc7",
            Checksum::Crc16 => "crc16",
            Checksum::Crc32 => "crc32",
            Checksum::Crc32c => "crc32c",
            Checksum::Crc64 => "crc64",
            Checksum::Md5 => "md5",
            Checksum::Sha1 => "sha1",
            Checksum::Sha256 => "sha256",
            Checksum::Sha512 => "sha512",
            Checksum::Sha3_224 => "sha3-224",
            Checksum::Sha3_256 => "sha3-256",
            Checksum::Sha3_384 => "sha3-384",
            Checksum::Sha3_512 => "sha3-512",
            Checksum::Xxhash => "xxhash",
        }
    }

    fn digest_len(self) -> usize {
        match self {
            Checksum::Pattern | Checksum::Null => 0,
            Checksum::Crc7 => 1,
            Checksum::Crc16 => 2,
            Checksum::Meta | Checksum::Crc32 | Checksum::Crc32c | Checksum::Xxhash => 4,
            Checksum::Crc64 => 8,
            Checksum::Md5 => 16,
            Checksum::Sha1 => 20,
            Checksum::Sha3_224 => 28,
            Checksum::Sha256 | Checksum::Sha3_256 => 32,
            Checksum::Sha3_384 => 48,
            Checksum::Sha512 | Checksum::Sha3_512 => 64,
        }
    }

    /// Bytes before a chunk's data (none for `null` and `pattern`, which write no header).
    pub fn header_len(self) -> usize {
        match self {
            Checksum::Null | Checksum::Pattern => 0,
            _ => FIXED + self.digest_len(),
        }
    }
}

/// How a job's writes are sealed and its reads checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sealing {
    pub checksum: Checksum,
    /// Each this many bytes of a request carry a header of their own (fio's
    /// `verify_interval`); 0, or more than a request: one per request.
    #[serde(default)]
    pub interval: u32,
    /// The data written, repeated from each request's start (fio's `verify_pattern`);
    /// none: the filler's random bytes.
    #[serde(default)]
    pub pattern: Option<Vec<u8>>,
}

impl Sealing {
    pub fn new(checksum: Checksum) -> Sealing {
        Sealing {
            checksum,
            interval: 0,
            pattern: None,
        }
    }

    fn chunk(&self, len: usize) -> usize {
        match self.interval as usize {
            0 => len.max(1),
            i if i > len => len.max(1),
            i => i,
        }
    }
}

const MAGIC: u32 = 0x706c_7666;
/// Magic, offset, length and seed: what every header starts with.
const FIXED: usize = 24;
const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);
const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_ARC);
const CRC7: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_7_MMC);

/// The checksum of `head` and `data` into `out` (its digest's length).
fn digest(kind: Checksum, head: &[u8], data: &[u8], out: &mut [u8]) {
    fn hash<D: sha2::Digest>(head: &[u8], data: &[u8], out: &mut [u8]) {
        let mut h = D::new();
        h.update(head);
        h.update(data);
        out.copy_from_slice(&h.finalize());
    }
    match kind {
        Checksum::Pattern | Checksum::Null => {}
        Checksum::Meta => out.copy_from_slice(&crc32c::crc32c(head).to_le_bytes()),
        Checksum::Crc32c => {
            let c = crc32c::crc32c_append(crc32c::crc32c(head), data);
            out.copy_from_slice(&c.to_le_bytes());
        }
        Checksum::Crc32 => {
            let mut h = crc32fast::Hasher::new();
            h.update(head);
            h.update(data);
            out.copy_from_slice(&h.finalize().to_le_bytes());
        }
        Checksum::Crc64 => {
            let mut d = CRC64.digest();
            d.update(head);
            d.update(data);
            out.copy_from_slice(&d.finalize().to_le_bytes());
        }
        Checksum::Crc16 => {
            let mut d = CRC16.digest();
            d.update(head);
            d.update(data);
            out.copy_from_slice(&d.finalize().to_le_bytes());
        }
        Checksum::Crc7 => {
            let mut d = CRC7.digest();
            d.update(head);
            d.update(data);
            out[0] = d.finalize();
        }
        Checksum::Xxhash => {
            let mut h = xxhash_rust::xxh32::Xxh32::new(1);
            h.update(head);
            h.update(data);
            out.copy_from_slice(&h.digest().to_le_bytes());
        }
        Checksum::Md5 => hash::<md5::Md5>(head, data, out),
        Checksum::Sha1 => hash::<sha1::Sha1>(head, data, out),
        Checksum::Sha256 => hash::<sha2::Sha256>(head, data, out),
        Checksum::Sha512 => hash::<sha2::Sha512>(head, data, out),
        Checksum::Sha3_224 => hash::<sha3::Sha3_224>(head, data, out),
        Checksum::Sha3_256 => hash::<sha3::Sha3_256>(head, data, out),
        Checksum::Sha3_384 => hash::<sha3::Sha3_384>(head, data, out),
        Checksum::Sha3_512 => hash::<sha3::Sha3_512>(head, data, out),
    }
}

/// Write `pattern` over `buf`, repeated from `phase` bytes into it.
fn fill_pattern(buf: &mut [u8], pattern: &[u8], mut phase: usize) {
    for b in buf {
        *b = pattern[phase];
        phase += 1;
        if phase == pattern.len() {
            phase = 0;
        }
    }
}

/// Fill `buf` as the request written at `offset` with `seed` (unique per write): its data
/// (the pattern, or bytes drawn from the seed and each chunk's offset) and each chunk's
/// header. `null` leaves the buffer as it is.
pub fn seal(s: &Sealing, buf: &mut [u8], offset: u64, seed: u64) {
    let kind = s.checksum;
    if kind == Checksum::Null {
        return;
    }
    let step = s.chunk(buf.len());
    for (i, c) in buf.chunks_mut(step).enumerate() {
        make(s, c, i * step, offset + (i * step) as u64, seed);
    }
}

/// Chunk `c` as written, `within` bytes into its request and at `offset` of the file: its
/// data (the pattern, repeated from the request's start, or drawn from the seed and the
/// offset) and its header.
fn make(s: &Sealing, c: &mut [u8], within: usize, offset: u64, seed: u64) {
    match &s.pattern {
        Some(p) => fill_pattern(c, p, within % p.len()),
        None => draw(c, seed, offset),
    }
    let header = s.checksum.header_len();
    if header > 0 && c.len() >= header {
        stamp(s.checksum, c, offset, seed);
    }
}

/// A chunk's data drawn from the write's seed and the chunk's offset: four streams side by
/// side, each 32 bytes taking a word from each, so the four draws overlap in the CPU (one
/// stream filled 6.4 GiB/s, four 10.7, eight 9.7; docs/performance.md, session 22).
fn draw(c: &mut [u8], seed: u64, offset: u64) {
    use plumb_core::random::Rng;
    let base = offset.wrapping_mul(4);
    let mut lanes = [0, 1, 2, 3].map(|k| Rng::new(seed, base.wrapping_add(k)));
    let mut blocks = c.chunks_exact_mut(32);
    for b in &mut blocks {
        for (w, r) in b.chunks_exact_mut(8).zip(lanes.iter_mut()) {
            w.copy_from_slice(&r.next_u64().to_le_bytes());
        }
    }
    crate::fill::randomize(blocks.into_remainder(), &mut lanes[0]);
}

/// Chunk `c`'s header, its data in place (`c` holds at least the header).
fn stamp(kind: Checksum, c: &mut [u8], offset: u64, seed: u64) {
    let header = kind.header_len();
    c[..4].copy_from_slice(&MAGIC.to_le_bytes());
    c[4..12].copy_from_slice(&offset.to_le_bytes());
    let len = c.len() as u32;
    c[12..16].copy_from_slice(&len.to_le_bytes());
    c[16..24].copy_from_slice(&seed.to_le_bytes());
    let (head, data) = c.split_at_mut(header);
    let (fixed, out) = head.split_at_mut(FIXED);
    digest(kind, fixed, data, out);
}

/// What chunk `bad` of a request read at `offset` should have held (for `verify_dump`):
/// made again from the seed its header names, or the pattern. None when its header is
/// what failed (fio dumps the chunk as `hdr_fail` then, with nothing to compare).
pub fn expected(s: &Sealing, buf: &[u8], offset: u64, bad: &Bad) -> Option<Vec<u8>> {
    if bad.header_failed() {
        return None;
    }
    let seed = match s.checksum.header_len() {
        0 => 0,
        _ => u64::from_le_bytes(buf.get(bad.at + 16..bad.at + 24)?.try_into().ok()?),
    };
    let mut c = vec![0u8; bad.len];
    make(s, &mut c, bad.at, offset + bad.at as u64, seed);
    Some(c)
}

/// fio's `verify_dump`: chunk `bad` of the request read from `offset` of `path` as read,
/// and what it should have held, written to the current directory as fio names them
/// (`<file name>.<chunk offset>.received` and `.expected`; `.hdr_fail` alone when the
/// header failed). What was written, in fio's words, for the failure's message.
pub fn dump(s: &Sealing, path: &str, buf: &[u8], offset: u64, bad: &Bad) -> Vec<String> {
    let base = std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.into(), |n| n.to_string_lossy().into_owned());
    let at = offset + bad.at as u64;
    let chunk = &buf[bad.at..bad.at + bad.len];
    let mut files: Vec<(&str, std::borrow::Cow<'_, [u8]>)> = Vec::new();
    if bad.header_failed() {
        files.push(("hdr_fail", chunk.into()));
    } else {
        files.push(("received", chunk.into()));
        if let Some(e) = expected(s, buf, offset, bad) {
            files.push(("expected", e.into()));
        }
    }
    files
        .into_iter()
        .map(|(kind, data)| {
            let name = format!("{base}.{at}.{kind}");
            match std::fs::write(&name, &data) {
                Ok(()) => format!("{kind} data dumped as {name}"),
                Err(e) => format!("{kind} data not dumped as {name}: {e}"),
            }
        })
        .collect()
}

/// A chunk that failed its check, in fio's words where fio has them.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("verify: bad magic header {got:x}, wanted {MAGIC:x} at offset {offset}, length {len}")]
    Magic { got: u32, offset: u64, len: usize },
    #[error(
        "verify: bad header offset {stored}, wanted {offset} at offset {offset}, length {len}"
    )]
    Offset {
        stored: u64,
        offset: u64,
        len: usize,
    },
    #[error("verify: bad header length {stored}, wanted {len} at offset {offset}")]
    Length {
        stored: u32,
        offset: u64,
        len: usize,
    },
    #[error("{kind}: verify failed at offset {offset}, length {len}")]
    Checksum {
        kind: &'static str,
        offset: u64,
        len: usize,
    },
    #[error(
        "pattern: verify failed at offset {offset}, length {len}: got {got:02x}, wanted {wanted:02x} at byte {at}"
    )]
    Pattern {
        offset: u64,
        len: usize,
        at: usize,
        got: u8,
        wanted: u8,
    },
}

/// A chunk that failed its check: where it lies in the request read, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Bad {
    pub error: VerifyError,
    /// The chunk's start in the request, and its length.
    pub at: usize,
    pub len: usize,
}

impl Bad {
    /// The header itself was wrong (magic, offset or length): fio's `hdr_fail`.
    pub fn header_failed(&self) -> bool {
        matches!(
            self.error,
            VerifyError::Magic { .. } | VerifyError::Offset { .. } | VerifyError::Length { .. }
        )
    }
}

/// Check `buf`, read from `offset`.
pub fn check(s: &Sealing, buf: &[u8], offset: u64) -> Result<(), VerifyError> {
    check_chunks(s, buf, offset).map_err(|b| b.error)
}

/// [`check`], saying which chunk failed.
pub fn check_chunks(s: &Sealing, buf: &[u8], offset: u64) -> Result<(), Bad> {
    let kind = s.checksum;
    if kind == Checksum::Null {
        return Ok(());
    }
    let step = s.chunk(buf.len());
    let header = kind.header_len();
    for (i, c) in buf.chunks(step).enumerate() {
        if c.len() < header {
            continue;
        }
        let bad = |error| Bad {
            error,
            at: i * step,
            len: c.len(),
        };
        let at = offset + (i * step) as u64;
        let (head, data) = c.split_at(header);
        if header > 0 {
            check_header(c, at).map_err(bad)?;
            let (fixed, stored) = head.split_at(FIXED);
            let mut want = [0u8; 64];
            let want = &mut want[..stored.len()];
            digest(kind, fixed, data, want);
            if want != stored {
                return Err(bad(VerifyError::Checksum {
                    kind: kind.name(),
                    offset: at,
                    len: c.len(),
                }));
            }
        }
        if let (Checksum::Meta | Checksum::Pattern, Some(p)) = (kind, &s.pattern) {
            let phase = (i * step + header) % p.len();
            let wanted = p.iter().cycle().skip(phase);
            if let Some((k, (&got, &wanted))) = data
                .iter()
                .zip(wanted)
                .enumerate()
                .find(|(_, (g, w))| g != w)
            {
                return Err(bad(VerifyError::Pattern {
                    offset: at,
                    len: c.len(),
                    at: header + k,
                    got,
                    wanted,
                }));
            }
        }
    }
    Ok(())
}

/// The fixed part of chunk `c`'s header, read at `offset`.
fn check_header(c: &[u8], offset: u64) -> Result<(), VerifyError> {
    let len = c.len();
    let word = |r: std::ops::Range<usize>| -> [u8; 8] {
        let mut w = [0u8; 8];
        w[..r.len()].copy_from_slice(&c[r]);
        w
    };
    let magic = u32::from_le_bytes(word(0..4)[..4].try_into().expect("4 bytes"));
    if magic != MAGIC {
        return Err(VerifyError::Magic {
            got: magic,
            offset,
            len,
        });
    }
    let stored = u64::from_le_bytes(word(4..12));
    if stored != offset {
        return Err(VerifyError::Offset {
            stored,
            offset,
            len,
        });
    }
    let stored_len = u32::from_le_bytes(word(12..16)[..4].try_into().expect("4 bytes"));
    if stored_len as usize != len {
        return Err(VerifyError::Length {
            stored: stored_len,
            offset,
            len,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Checksum; 16] = [
        Checksum::Meta,
        Checksum::Pattern,
        Checksum::Crc7,
        Checksum::Crc16,
        Checksum::Crc32,
        Checksum::Crc32c,
        Checksum::Crc64,
        Checksum::Md5,
        Checksum::Sha1,
        Checksum::Sha256,
        Checksum::Sha512,
        Checksum::Sha3_224,
        Checksum::Sha3_256,
        Checksum::Sha3_384,
        Checksum::Sha3_512,
        Checksum::Xxhash,
    ];

    fn data() -> Vec<u8> {
        (0..4096u32).map(|i| (i * 7) as u8).collect()
    }

    #[test]
    fn sealed_requests_check_and_damage_is_caught() {
        for kind in ALL {
            let mut s = Sealing::new(kind);
            if kind == Checksum::Pattern {
                s.pattern = Some(vec![0xde, 0xad, 0xbe]);
            }
            assert_eq!(Checksum::from_fio(kind.name()), Some(kind));
            let mut b = data();
            seal(&s, &mut b, 8192, 7);
            assert_eq!(check(&s, &b, 8192), Ok(()), "{kind:?}");
            if kind == Checksum::Pattern {
                // No header: any offset, any length, but not other data.
                assert_eq!(check(&s, &b[..2048], 4096), Ok(()));
                assert!(matches!(
                    check(&s, &[0u8; 4096], 0),
                    Err(VerifyError::Pattern { at: 0, .. })
                ));
            } else {
                assert!(matches!(
                    check(&s, &b, 4096),
                    Err(VerifyError::Offset { .. })
                ));
                assert!(matches!(
                    check(&s, &b[..2048], 8192),
                    Err(VerifyError::Length { .. })
                ));
                assert!(matches!(
                    check(&s, &[0u8; 4096], 0),
                    Err(VerifyError::Magic { got: 0, .. })
                ));
            }
            // A flipped bit in the data: every kind but meta (the header alone) finds it.
            let mut bad = b.clone();
            bad[1000] ^= 1;
            let r = check(&s, &bad, 8192);
            match kind {
                Checksum::Meta => assert_eq!(r, Ok(())),
                Checksum::Pattern => assert!(
                    matches!(
                        r,
                        Err(VerifyError::Pattern {
                            at: 1000,
                            offset: 8192,
                            ..
                        })
                    ),
                    "{r:?}"
                ),
                _ => assert_eq!(
                    r,
                    Err(VerifyError::Checksum {
                        kind: kind.name(),
                        offset: 8192,
                        len: 4096
                    }),
                    "{kind:?}"
                ),
            }
            // A flipped bit in the digest (or the header's CRC for meta).
            if kind.digest_len() > 0 {
                let mut bad = b.clone();
                bad[FIXED] ^= 1;
                assert!(check(&s, &bad, 8192).is_err(), "{kind:?}");
            }
        }
        assert_eq!(Checksum::from_fio("crc32c-intel"), Some(Checksum::Crc32c));
        assert_eq!(Checksum::from_fio("sha384"), None);
    }

    #[test]
    fn the_checksums_are_fio_s_algorithms() {
        // Check values of the catalogued algorithms, over "123456789".
        let check = b"123456789";
        let mut out = [0u8; 8];
        digest(Checksum::Crc32c, &[], check, &mut out[..4]);
        assert_eq!(
            u32::from_le_bytes(out[..4].try_into().unwrap()),
            0xe306_9283
        );
        digest(Checksum::Crc32, &[], check, &mut out[..4]);
        assert_eq!(
            u32::from_le_bytes(out[..4].try_into().unwrap()),
            0xcbf4_3926
        );
        digest(Checksum::Crc16, &[], check, &mut out[..2]);
        assert_eq!(u16::from_le_bytes(out[..2].try_into().unwrap()), 0xbb3d);
        digest(Checksum::Crc7, &[], check, &mut out[..1]);
        assert_eq!(out[0], 0x75);
        // fio's crc64 (crc/crc64.c): the reflected Jones polynomial, initial value 0, no
        // final xor, computed bit by bit here.
        let mut fio = 0u64;
        for &b in check {
            fio ^= u64::from(b);
            for _ in 0..8 {
                fio = if fio & 1 == 1 {
                    (fio >> 1) ^ 0x95ac_9329_ac4b_c9b5
                } else {
                    fio >> 1
                };
            }
        }
        digest(Checksum::Crc64, &[], check, &mut out);
        assert_eq!(u64::from_le_bytes(out), fio);
        // XXH32 with fio's seed of 1.
        digest(Checksum::Xxhash, &[], b"", &mut out[..4]);
        assert_eq!(
            u32::from_le_bytes(out[..4].try_into().unwrap()),
            xxhash_rust::xxh32::xxh32(b"", 1)
        );
    }

    #[test]
    fn each_interval_carries_its_own_header() {
        let mut s = Sealing::new(Checksum::Crc32c);
        s.interval = 512;
        let mut b = data();
        seal(&s, &mut b, 1 << 20, 7);
        for i in 0..8 {
            let c = &b[i * 512..];
            assert_eq!(&c[..4], &MAGIC.to_le_bytes());
            assert_eq!(
                u64::from_le_bytes(c[4..12].try_into().unwrap()),
                (1 << 20) + i as u64 * 512
            );
            assert_eq!(u32::from_le_bytes(c[12..16].try_into().unwrap()), 512);
        }
        assert_eq!(check(&s, &b, 1 << 20), Ok(()));
        // Damage in the third interval names it.
        b[2 * 512 + 100] ^= 0x80;
        assert_eq!(
            check(&s, &b, 1 << 20),
            Err(VerifyError::Checksum {
                kind: "crc32c",
                offset: (1 << 20) + 1024,
                len: 512
            })
        );
        // An interval larger than the request: one header.
        s.interval = 8192;
        let mut b = data();
        seal(&s, &mut b, 0, 7);
        assert_ne!(&b[512..516], &MAGIC.to_le_bytes());
        assert_eq!(check(&s, &b, 0), Ok(()));
    }

    #[test]
    fn what_a_bad_chunk_should_hold_is_made_again() {
        for (pattern, interval) in [(None, 0), (None, 1024), (Some(vec![1, 2, 3]), 1024)] {
            let s = Sealing {
                checksum: Checksum::Sha256,
                interval,
                pattern,
            };
            let mut b = data();
            seal(&s, &mut b, 65536, 99);
            let good = b.clone();
            b[3000] ^= 0x10;
            let bad = check_chunks(&s, &b, 65536).unwrap_err();
            let want = if interval == 0 {
                (0, 4096)
            } else {
                (2048, 1024)
            };
            assert_eq!((bad.at, bad.len), want);
            assert_eq!(
                expected(&s, &b, 65536, &bad).unwrap(),
                good[bad.at..bad.at + bad.len]
            );
        }
        // A header that fails has nothing to compare with.
        let s = Sealing::new(Checksum::Crc32c);
        let bad = check_chunks(&s, &[0u8; 4096], 0).unwrap_err();
        assert!(bad.header_failed());
        assert_eq!(expected(&s, &[0u8; 4096], 0, &bad), None);
    }

    #[test]
    fn a_pattern_is_the_data_written() {
        let mut s = Sealing::new(Checksum::Meta);
        s.pattern = Some(vec![0x0a, 0xaa]);
        s.interval = 1024;
        let mut b = data();
        seal(&s, &mut b, 0, 7);
        let header = Checksum::Meta.header_len();
        // The pattern runs from the request's start; each header is written over it.
        for (k, &v) in b.iter().enumerate() {
            if k % 1024 >= header {
                assert_eq!(v, [0x0a, 0xaa][k % 2], "byte {k}");
            }
        }
        assert_eq!(check(&s, &b, 0), Ok(()));
        b[3000] = 0;
        assert!(matches!(
            check(&s, &b, 0),
            Err(VerifyError::Pattern {
                offset: 2048,
                at: 952,
                ..
            })
        ));
        // With a checksum, the pattern is the data the checksum covers.
        let mut s = Sealing::new(Checksum::Md5);
        s.pattern = Some(b"abc".to_vec());
        let mut b = data();
        seal(&s, &mut b, 0, 7);
        assert!((4000..4096).all(|k| b[k] == b"abc"[k % 3]));
        assert_eq!(check(&s, &b, 0), Ok(()));
        // null writes nothing in and checks nothing.
        let s = Sealing::new(Checksum::Null);
        let mut b = data();
        seal(&s, &mut b, 0, 7);
        assert_eq!(b, data());
        assert_eq!(check(&s, &[0u8; 4096], 0), Ok(()));
    }
}
