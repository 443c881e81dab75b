//! Authentication after the startup message: trust, cleartext password, MD5, and
//! SCRAM-SHA-256 (with tls-server-end-point channel binding over TLS, as libpq's default
//! channel_binding=prefer does).

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::frontend;

use super::conn::Conn;
use super::error::Error;
use super::message::{self, tag};

const OK: i32 = 0;
const CLEARTEXT: i32 = 3;
const MD5: i32 = 5;
const SASL: i32 = 10;
const SASL_CONTINUE: i32 = 11;
const SASL_FINAL: i32 = 12;

/// Answers the server's requests until it accepts (AuthenticationOk) or refuses.
pub fn authenticate(c: &mut Conn, user: &str, password: &str) -> Result<(), Error> {
    loop {
        let (code, rest) = request(c)?;
        match code {
            OK => return Ok(()),
            CLEARTEXT => {
                let pw = needed(password)?;
                c.out().clear();
                frontend::password_message(pw.as_bytes(), c.out()).map_err(Error::Io)?;
                c.send()?;
            }
            MD5 => {
                let salt = message::take::<4>(&rest)
                    .ok_or(Error::Protocol("short AuthenticationMD5Password"))?;
                let hash = md5_hash(user.as_bytes(), needed(password)?.as_bytes(), salt);
                c.out().clear();
                frontend::password_message(hash.as_bytes(), c.out()).map_err(Error::Io)?;
                c.send()?;
            }
            SASL => scram(c, &rest, needed(password)?)?,
            2 => return Err(Error::Auth("Kerberos V5 is not supported".into())),
            7 | 8 => return Err(Error::Auth("GSSAPI is not supported".into())),
            9 => return Err(Error::Auth("SSPI is not supported".into())),
            n => return Err(Error::Auth(format!("unknown authentication request {n}"))),
        }
    }
}

fn needed(password: &str) -> Result<&str, Error> {
    if password.is_empty() {
        return Err(Error::Config("password missing"));
    }
    Ok(password)
}

/// The next Authentication request's code and data (copied: the exchange writes between
/// reads); an ErrorResponse is the server's refusal.
fn request(c: &mut Conn) -> Result<(i32, Vec<u8>), Error> {
    let (t, body) = c.next()?;
    match t {
        tag::AUTHENTICATION => {
            let code =
                message::take::<4>(body).ok_or(Error::Protocol("short Authentication message"))?;
            Ok((i32::from_be_bytes(code), body[4..].to_vec()))
        }
        tag::ERROR_RESPONSE => Err(Error::Db(message::db_error(body))),
        _ => Err(Error::Protocol("unexpected message during authentication")),
    }
}

/// The SCRAM exchange, after AuthenticationSASL listed `mechanisms`.
fn scram(c: &mut Conn, mechanisms: &[u8], password: &str) -> Result<(), Error> {
    let offered = |m: &str| {
        mechanisms
            .split(|&b| b == 0)
            .any(|name| name == m.as_bytes())
    };
    let binding = c.transport().server_certificate().and_then(end_point_hash);
    // A client that could bind says so ("y") when the server does not offer it, so that a
    // server stripped of SCRAM-SHA-256-PLUS by a man in the middle notices.
    let (binding, mechanism) = match binding {
        Some(h) if offered(sasl::SCRAM_SHA_256_PLUS) => (
            ChannelBinding::tls_server_end_point(h),
            sasl::SCRAM_SHA_256_PLUS,
        ),
        Some(_) if offered(sasl::SCRAM_SHA_256) => {
            (ChannelBinding::unrequested(), sasl::SCRAM_SHA_256)
        }
        None if offered(sasl::SCRAM_SHA_256) => {
            (ChannelBinding::unsupported(), sasl::SCRAM_SHA_256)
        }
        _ => return Err(Error::Auth("unsupported SASL mechanism".into())),
    };
    let failed = |e: std::io::Error| Error::Auth(e.to_string());
    let mut scram = ScramSha256::new(password.as_bytes(), binding);
    c.out().clear();
    frontend::sasl_initial_response(mechanism, scram.message(), c.out()).map_err(Error::Io)?;
    c.send()?;
    scram.update(&expect(c, SASL_CONTINUE)?).map_err(failed)?;
    c.out().clear();
    frontend::sasl_response(scram.message(), c.out()).map_err(Error::Io)?;
    c.send()?;
    scram.finish(&expect(c, SASL_FINAL)?).map_err(failed)
}

fn expect(c: &mut Conn, code: i32) -> Result<Vec<u8>, Error> {
    match request(c)? {
        (n, data) if n == code => Ok(data),
        _ => Err(Error::Protocol(
            "unexpected authentication request during SCRAM",
        )),
    }
}

/// RFC 5929's tls-server-end-point: the certificate hashed with its signature's hash (SHA-256
/// for MD5 and SHA-1); none for a signature without one plumb knows (RSA-PSS, Ed25519).
fn end_point_hash(cert: &[u8]) -> Option<Vec<u8>> {
    use ring::digest::{digest, SHA256, SHA384, SHA512};
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
    let oid = signature_algorithm(cert)?;
    let (arc, last) = oid.split_at(oid.len().checked_sub(1)?);
    let alg = match (arc, last[0]) {
        (RSA, 4 | 5 | 11) | (ECDSA, 2) => &SHA256,
        (RSA, 12) | (ECDSA, 3) => &SHA384,
        (RSA, 13) | (ECDSA, 4) => &SHA512,
        _ => return None,
    };
    Some(digest(alg, cert).as_ref().to_vec())
}

/// The OID of a DER certificate's signatureAlgorithm: Certificate is a SEQUENCE of
/// tbsCertificate, signatureAlgorithm (a SEQUENCE starting with the OID), signature.
fn signature_algorithm(cert: &[u8]) -> Option<&[u8]> {
    let (certificate, _) = der(cert, 0x30)?;
    let (_tbs, rest) = der(certificate, 0x30)?;
    let (algorithm, _) = der(rest, 0x30)?;
    der(algorithm, 0x06).map(|(oid, _)| oid)
}

/// One DER element of type `tag` at the start of `b`: its content and what follows it.
fn der(b: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, b) = b.split_first()?;
    let (&first, mut b) = b.split_first()?;
    if t != tag {
        return None;
    }
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || b.len() < n {
            return None;
        }
        let len = b[..n].iter().fold(0usize, |l, &d| l << 8 | usize::from(d));
        b = &b[n..];
        len
    };
    (b.len() >= len).then(|| b.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outline of a certificate signed with `oid`: the hash follows the signature.
    fn cert(oid: &[u8]) -> Vec<u8> {
        let tbs = [0x30, 0x03, 0x02, 0x01, 0x05];
        let mut alg = vec![0x30, (oid.len() + 4) as u8, 0x06, oid.len() as u8];
        alg.extend_from_slice(oid);
        alg.extend_from_slice(&[0x05, 0x00]);
        let sig = [0x03, 0x02, 0x00, 0xaa];
        let mut body = tbs.to_vec();
        body.extend(alg);
        body.extend(sig);
        let mut c = vec![0x30, 0x81, body.len() as u8];
        c.extend(body);
        c
    }

    #[test]
    fn channel_binding_hashes_with_the_signature_s_hash() {
        let sha256_rsa = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
        let sha384_ecdsa = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
        let rsa_pss = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a];
        let c = cert(&sha256_rsa);
        assert_eq!(signature_algorithm(&c), Some(&sha256_rsa[..]));
        assert_eq!(end_point_hash(&c).map(|h| h.len()), Some(32));
        assert_eq!(
            end_point_hash(&cert(&sha384_ecdsa)).map(|h| h.len()),
            Some(48)
        );
        assert_eq!(end_point_hash(&cert(&rsa_pss)), None);
        assert_eq!(end_point_hash(b"\x30\x05garbage"), None);
    }
}
