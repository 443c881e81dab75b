//! TLS for a MySQL connection through rustls: verified against a CA when one is given,
//! otherwise any certificate is taken as the server's (libmysqlclient's `--ssl` without a
//! CA), the handshake signatures still checked.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use super::WireError;
use crate::pgsql_tls::AnyCertificate;
use crate::sock::{Socket, Stream};

/// The client's configuration: `ca` verifies the server, none accepts any certificate.
pub fn config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, WireError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(WireError::Tls)?;
    let config = match ca {
        Some(path) => {
            let unreadable = |e: &dyn std::fmt::Display| {
                WireError::Refused(format!("TLS: CA certificate {}: {e}", path.display()))
            };
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| unreadable(&e))? {
                roots
                    .add(cert.map_err(|e| unreadable(&e))?)
                    .map_err(|e| unreadable(&e))?;
            }
            if roots.is_empty() {
                return Err(unreadable(&"no certificate in the file"));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// Encrypt `sock` (the server has read our SSL request): the whole handshake, blocking.
pub fn upgrade(
    config: Arc<ClientConfig>,
    name: &str,
    mut sock: Socket,
) -> Result<Stream, WireError> {
    let name = ServerName::try_from(name.to_string())
        .map_err(|e| WireError::Refused(format!("TLS: server name {name:?}: {e}")))?;
    let mut conn = ClientConnection::new(config, name)?;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(&mut sock) {
            return Err(tls_failure(e));
        }
    }
    Ok(Stream::Tls(Box::new(StreamOwned::new(conn, sock))))
}

/// rustls reports its refusals inside an I/O error: the refusal is what to say.
fn tls_failure(e: io::Error) -> WireError {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(tls) => WireError::Tls(tls.clone()),
        None => WireError::Io(e),
    }
}
