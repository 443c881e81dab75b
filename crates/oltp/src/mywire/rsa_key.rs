//! caching_sha2_password's full exchange where the channel is not private (plain TCP): the
//! password, NUL-terminated and XORed with the nonce, encrypted with the server's RSA public
//! key (OAEP, as MySQL 8.0.5 and later expect).
//!
//! `mysql_common`'s own helper panics on a key it cannot read; here the key is read with
//! bounds checks first, and only a key that fits reaches its RSA arithmetic.

use mysql_common::crypto::rsa::{GetRandom, Pkcs1OaepPadding, PublicKey};
use mysql_common::num_bigint::BigUint;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::SubjectPublicKeyInfoDer;

use super::WireError;

/// OAEP with SHA-1 leaves a message the key's size less this.
const OAEP_OVERHEAD: usize = 2 * 20 + 2;

/// The password to send, encrypted with `pem` (the server's key, as it sent it).
pub fn encrypt_password(password: &str, nonce: &[u8], pem: &[u8]) -> Result<Vec<u8>, WireError> {
    let bad = || WireError::protocol("the server's RSA public key cannot be read");
    let (n, e) = rsa_public_key(pem).ok_or_else(bad)?;
    let key = PublicKey::new(n, e);
    if nonce.is_empty() {
        return Err(WireError::protocol("caching_sha2_password: an empty nonce"));
    }
    let mut block: Vec<u8> = password.bytes().chain([0]).collect();
    for (i, b) in block.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
    if block.len() + OAEP_OVERHEAD > key.num_octets() {
        return Err(WireError::Refused(
            "the password is too long for the server's RSA key".into(),
        ));
    }
    Ok(key.encrypt_block(&block, Pkcs1OaepPadding::new(GetRandom)))
}

/// The modulus and exponent of a PEM "PUBLIC KEY" (SubjectPublicKeyInfo) holding an RSA key.
fn rsa_public_key(pem: &[u8]) -> Option<(BigUint, BigUint)> {
    let spki = SubjectPublicKeyInfoDer::from_pem_slice(pem).ok()?;
    let (info, _) = element(spki.as_ref(), SEQUENCE)?;
    let (_algorithm, rest) = element(info, SEQUENCE)?;
    let (bits, _) = element(rest, BIT_STRING)?;
    let (&unused, key) = bits.split_first()?;
    if unused != 0 {
        return None;
    }
    let (key, _) = element(key, SEQUENCE)?;
    let (n, rest) = element(key, INTEGER)?;
    let (e, _) = element(rest, INTEGER)?;
    Some((BigUint::from_bytes_be(n), BigUint::from_bytes_be(e)))
}

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;
const INTEGER: u8 = 0x02;

/// One DER element of `tag` at the start of `buf`: its content and what follows.
fn element(buf: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = buf.split_first()?;
    if t != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let width = usize::from(first & 0x7F);
        if width == 0 || width > 4 {
            return None;
        }
        let bytes = rest.get(..width)?;
        let len = bytes
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[width..])
    };
    let content = rest.get(..len)?;
    Some((content, &rest[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::process::Command;

    /// Encrypted for a key openssl made, decrypted by openssl: the nonce-masked password.
    #[test]
    fn openssl_decrypts_what_is_encrypted_for_its_key() {
        let dir = tempfile::TempDir::new().unwrap();
        let d = dir.path();
        let openssl = |args: &[&str]| {
            Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .ok()
                .filter(|o| o.status.success())
        };
        if openssl(&[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            "k.pem",
        ])
        .is_none()
        {
            eprintln!("skipped: no openssl to make an RSA key");
            return;
        }
        openssl(&["pkey", "-in", "k.pem", "-pubout", "-out", "pub.pem"]).unwrap();
        let pem = std::fs::read(d.join("pub.pem")).unwrap();
        let nonce = b"0123456789abcdefghij";
        let sealed = encrypt_password("pass word", nonce, &pem).unwrap();
        assert_eq!(sealed.len(), 256);
        std::fs::write(d.join("c.bin"), &sealed).unwrap();
        let o = openssl(&[
            "pkeyutl",
            "-decrypt",
            "-inkey",
            "k.pem",
            "-pkeyopt",
            "rsa_padding_mode:oaep",
            "-in",
            "c.bin",
        ])
        .unwrap();
        let clear: Vec<u8> = o
            .stdout
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ nonce[i % nonce.len()])
            .collect();
        assert_eq!(clear, b"pass word\0");
        // A key that is no key, or too short for the password: errors, not panics.
        assert!(encrypt_password(
            "pw",
            nonce,
            b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
        )
        .is_err());
        assert!(encrypt_password("pw", nonce, b"garbage").is_err());
        let long = "x".repeat(300);
        assert_eq!(
            encrypt_password(&long, nonce, &pem)
                .unwrap_err()
                .to_string(),
            "the password is too long for the server's RSA key"
        );
    }

    #[test]
    fn der_elements_are_read_within_bounds() {
        assert_eq!(
            element(&[0x02, 1, 7, 9], INTEGER),
            Some((&[7u8][..], &[9u8][..]))
        );
        assert_eq!(
            element(&[0x02, 0x81, 2, 7, 8], INTEGER),
            Some((&[7u8, 8][..], &[][..]))
        );
        assert_eq!(element(&[0x02, 5, 7], INTEGER), None);
        assert_eq!(element(&[0x02, 0x85, 1, 1, 1, 1, 1], INTEGER), None);
        assert_eq!(element(&[0x30, 0], INTEGER), None);
        assert_eq!(element(&[], INTEGER), None);
    }
}
