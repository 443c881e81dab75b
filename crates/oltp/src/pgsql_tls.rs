//! TLS to PostgreSQL negotiated as libpq negotiates it, so that plumb and a libpq client
//! (sysbench, pgbench, psql) given the same server do the same work: libpq's default
//! `sslmode=prefer` encrypts every TCP connection to a server that has `ssl = on` (Debian's
//! default, with its snakeoil certificate), and never a Unix-socket one.
//!
//! The modes that do not verify the server (`allow`, `prefer`, `require`) accept any
//! certificate, as libpq does without a root certificate; the handshake signatures are still
//! checked, so the session key belongs to whoever holds the certificate's key.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct};

use crate::pgwire::{Conn, ConnectParams, Error, Tls};

/// libpq's `sslmode` values plumb implements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SslMode {
    /// Never encrypt.
    Disable,
    /// Plain first; encrypted only if the server refuses the plain connection.
    Allow,
    /// Encrypted when the server offers it, plain otherwise (libpq's default).
    #[default]
    Prefer,
    /// Encrypted or fail (without verifying the server's certificate, as libpq).
    Require,
}

impl SslMode {
    pub const NAMES: &'static [&'static str] = &["disable", "allow", "prefer", "require"];
}

/// A `sslmode` value that is not one of [`SslMode::NAMES`].
#[derive(Debug, thiserror::Error)]
pub enum SslModeError {
    #[error(
        "sslmode={0}: plumb does not verify PostgreSQL server certificates yet; use require (encrypted, unverified) or prefer"
    )]
    Verify(String),
    #[error("sslmode={0}: expected one of disable, allow, prefer, require")]
    Unknown(String),
}

impl FromStr for SslMode {
    type Err = SslModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" | "verify-full" => return Err(SslModeError::Verify(s.into())),
            _ => return Err(SslModeError::Unknown(s.into())),
        })
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
        })
    }
}

/// Connects with `params` under `mode`. A socket connection is never encrypted, whatever the
/// mode, as with libpq.
pub(crate) fn connect(
    params: &ConnectParams<'_>,
    mode: SslMode,
    socket: bool,
) -> Result<Conn, Error> {
    match mode {
        _ if socket => Conn::connect(params, &Tls::Off),
        SslMode::Disable => Conn::connect(params, &Tls::Off),
        SslMode::Allow => match Conn::connect(params, &Tls::Off) {
            // Only the server's refusal (pg_hba has no plain entry) is worth an encrypted
            // retry; an unreachable server is as unreachable with TLS.
            Err(Error::Db(_)) => Conn::connect(params, &Tls::Require(tls())),
            other => other,
        },
        SslMode::Prefer => Conn::connect(params, &Tls::Prefer(tls())),
        SslMode::Require => Conn::connect(params, &Tls::Require(tls())),
    }
}

/// A configuration per connection, as libpq has: no session is resumed, so every
/// connection does a full handshake as sysbench's do.
fn tls() -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports rustls's default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    Arc::new(config)
}

/// libpq's unverified modes: any certificate names the server, but the handshake must be
/// signed by its key.
#[derive(Debug)]
pub(crate) struct AnyCertificate(pub(crate) Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_libpq_names_them() {
        for n in SslMode::NAMES {
            assert_eq!(n.parse::<SslMode>().unwrap().to_string(), *n);
        }
        assert_eq!(SslMode::default(), SslMode::Prefer);
        let e = "verify-full".parse::<SslMode>().unwrap_err().to_string();
        assert!(e.contains("does not verify"), "{e}");
        let e = "on".parse::<SslMode>().unwrap_err().to_string();
        assert_eq!(
            e,
            "sslmode=on: expected one of disable, allow, prefer, require"
        );
    }
}
