//! Verified writes (fio's `verify=crc32c|md5`): every written request starts with a header
//! that names where it belongs and carries a checksum of the request; reads check it.
//!
//! Layout of one request (plumb's own; only plumb reads it back):
//! `magic (4) | offset in the file (8) | length (4) | checksum (16, crc32c uses 4) | data`.
//! The checksum covers the offset, the length and the data, so a block written elsewhere, a
//! short or stale block and flipped bits are all caught.

use thiserror::Error;

/// The checksum a verified job uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    Crc32c,
    Md5,
}

impl Checksum {
    pub fn name(self) -> &'static str {
        match self {
            Checksum::Crc32c => "crc32c",
            Checksum::Md5 => "md5",
        }
    }
}

const MAGIC: u32 = 0x706c_7666;
/// Bytes before a verified request's data.
pub const HEADER: usize = 32;
const DIGEST: std::ops::Range<usize> = 16..32;

fn digest(kind: Checksum, head: &[u8], data: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    match kind {
        Checksum::Crc32c => {
            let c = crc32c::crc32c_append(crc32c::crc32c(head), data);
            out[..4].copy_from_slice(&c.to_le_bytes());
        }
        Checksum::Md5 => {
            use md5::Digest;
            let mut h = md5::Md5::new();
            h.update(head);
            h.update(data);
            out.copy_from_slice(&h.finalize());
        }
    }
    out
}

/// Stamp `buf` (its data already filled) as the request written at `offset`.
pub fn seal(kind: Checksum, buf: &mut [u8], offset: u64) {
    if buf.len() < HEADER {
        return;
    }
    buf[..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[4..12].copy_from_slice(&offset.to_le_bytes());
    let len = buf.len() as u32;
    buf[12..16].copy_from_slice(&len.to_le_bytes());
    let d = digest(kind, &buf[..16], &buf[HEADER..]);
    buf[DIGEST].copy_from_slice(&d);
}

/// A request that failed its check, in fio's words where fio has them.
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
}

/// Check `buf`, read from `offset`.
pub fn check(kind: Checksum, buf: &[u8], offset: u64) -> Result<(), VerifyError> {
    let len = buf.len();
    if len < HEADER {
        return Ok(());
    }
    let word = |r: std::ops::Range<usize>| -> [u8; 8] {
        let mut w = [0u8; 8];
        w[..r.len()].copy_from_slice(&buf[r]);
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
    if digest(kind, &buf[..16], &buf[HEADER..]) != buf[DIGEST] {
        return Err(VerifyError::Checksum {
            kind: kind.name(),
            offset,
            len,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_requests_check_and_damage_is_caught() {
        for kind in [Checksum::Crc32c, Checksum::Md5] {
            let mut b: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
            seal(kind, &mut b, 8192);
            assert_eq!(check(kind, &b, 8192), Ok(()));
            assert!(matches!(
                check(kind, &b, 4096),
                Err(VerifyError::Offset { .. })
            ));
            assert!(matches!(
                check(kind, &b[..2048], 8192),
                Err(VerifyError::Length { .. })
            ));
            let mut bad = b.clone();
            bad[1000] ^= 1;
            assert_eq!(
                check(kind, &bad, 8192),
                Err(VerifyError::Checksum {
                    kind: kind.name(),
                    offset: 8192,
                    len: 4096
                })
            );
            assert!(matches!(
                check(kind, &[0u8; 4096], 0),
                Err(VerifyError::Magic { got: 0, .. })
            ));
        }
        // A known crc32c value (RFC 3720's check: 32 bytes of zeros).
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a91_36aa);
    }
}
