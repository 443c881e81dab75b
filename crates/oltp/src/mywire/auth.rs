//! The handshake: the server's greeting, TLS when asked for, the login and whatever
//! authentication exchange the account's plugin wants (an auth switch to
//! mysql_native_password, caching_sha2_password, or mysql_clear_password where the
//! password cannot be overheard).

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, ErrPacket, HandshakePacket, HandshakeResponse, SslRequest,
};
use mysql_common::proto::MySerialize;

use super::wire::Wire;
use super::{rsa_key, tls, WireError};
use crate::sock::Stream;

/// utf8mb4_general_ci, what the client's session speaks.
const COLLATION: u8 = 45;

/// What plumb asks of every server (each only if the server offers it): the mysql crate's
/// set, which libmysqlclient's is too for what plumb does.
fn wanted() -> CapabilityFlags {
    CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
}

pub struct Login<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub database: Option<&'a str>,
    /// TLS: the client's configuration and the name the certificate must carry.
    pub tls: Option<(std::sync::Arc<rustls::ClientConfig>, String)>,
    /// A server that offers no TLS is logged into in plain text instead of refused.
    pub tls_optional: bool,
    pub compression: bool,
    /// Whether the channel itself is private (a Unix socket): a clear password may cross it.
    pub socket: bool,
    pub max_allowed_packet: usize,
}

/// What plumb asks of a MariaDB server's extended capabilities (when it offers them):
/// metadata caching, as libmariadb asks. The server then sends a prepared statement's
/// column definitions with its prepare only, and again only when they change: an execute's
/// result set says, after its column count, whether they follow. (Progress reports and
/// extended metadata, which libmariadb also asks for, would change what plumb reads.)
fn wanted_mariadb() -> MariadbCapabilities {
    MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA
}

/// The capabilities in force on a connection.
#[derive(Clone, Copy, Debug)]
pub struct Agreed {
    pub caps: CapabilityFlags,
    /// MariaDB's extended capabilities (none with MySQL).
    pub mariadb: MariadbCapabilities,
}

/// Greet, encrypt, log in: the wire ready for commands, and the capabilities in force.
pub fn login(mut wire: Wire, l: &Login<'_>) -> Result<(Wire, Agreed), WireError> {
    // Copied out of the wire: the exchange writes between reads.
    let mut pkt = wire.read_packet()?.to_vec();
    if pkt.first() == Some(&0xFF) {
        return Err(server_error(&pkt, CapabilityFlags::empty()));
    }
    let hs: HandshakePacket<'_> = ParseBuf(&pkt)
        .parse(())
        .map_err(|e| WireError::protocol(format!("the server's greeting: {e}")))?;
    let offered = hs.capabilities();
    let mut caps = wanted() & offered;
    // MariaDB (10.2 and later) leaves out the CLIENT_MYSQL bit (CLIENT_LONG_PASSWORD's) and
    // puts its extended capabilities in the greeting's last 4 reserved bytes; a client that
    // leaves the bit out too gets them read from the same place of its answer. MySQL sets
    // the bit, and its reserved bytes mean nothing.
    let mariadb = if offered.contains(CapabilityFlags::CLIENT_LONG_PASSWORD) {
        MariadbCapabilities::empty()
    } else {
        caps.remove(CapabilityFlags::CLIENT_LONG_PASSWORD);
        wanted_mariadb() & hs.mariadb_ext_capabilities()
    };
    if l.compression && offered.contains(CapabilityFlags::CLIENT_COMPRESS) {
        caps |= CapabilityFlags::CLIENT_COMPRESS;
    }
    let db = l.database.filter(|d| !d.is_empty());
    // Set before the SSL request: the server takes the database flag from it.
    if db.is_some() {
        caps |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
    }
    let max_packet = u32::try_from(l.max_allowed_packet).unwrap_or(u32::MAX);
    let mut private = l.socket;
    let tls = l
        .tls
        .as_ref()
        .filter(|_| !l.tls_optional || offered.contains(CapabilityFlags::CLIENT_SSL));
    if let Some((config, name)) = tls {
        if !offered.contains(CapabilityFlags::CLIENT_SSL) {
            return Err(WireError::Refused(
                "Client requires secure connection but server does not have this capability".into(),
            ));
        }
        caps |= CapabilityFlags::CLIENT_SSL;
        let mut buf = Vec::new();
        SslRequest::new(caps, max_packet, COLLATION)
            .with_mariadb_capabilities(mariadb)
            .serialize(&mut buf);
        wire.send(&buf)?;
        wire = wire.upgrade(|t| match t {
            Stream::Plain(p) => tls::upgrade(config.clone(), name, p),
            encrypted => Ok(encrypted),
        })?;
        private = true;
    }
    let mut nonce = hs.nonce();
    // caching_sha2_password asked for its RSA key: the next data is the key.
    let mut awaiting_key = false;
    let mut plugin = hs
        .auth_plugin()
        .map(AuthPlugin::into_owned)
        .unwrap_or(AuthPlugin::MysqlNativePassword);
    // A plugin this client cannot answer first: a native scramble, and the server asks
    // for what it wants with an auth switch.
    let first = match answer(&plugin, l.password, &nonce, private) {
        Ok(data) => data,
        Err(_) => {
            plugin = AuthPlugin::MysqlNativePassword;
            answer(&plugin, l.password, &nonce, private)?
        }
    };
    let version = server_version(hs.server_version_ref()).unwrap_or((5, 5, 5));
    let mut buf = Vec::new();
    HandshakeResponse::new(
        Some(first),
        version,
        Some(l.user.as_bytes()),
        db.map(str::as_bytes),
        Some(plugin.clone()),
        caps,
        None,
        max_packet,
    )
    .with_mariadb_ext_capabilities(mariadb)
    .serialize(&mut buf);
    drop(hs);
    wire.send(&buf)?;
    loop {
        pkt.clear();
        pkt.extend_from_slice(wire.read_packet()?);
        match pkt.first() {
            Some(0x00) => break,
            Some(0xFF) => return Err(server_error(&pkt, caps)),
            Some(0xFE) if pkt.len() == 1 => {
                return Err(WireError::Refused(
                    "the server asks for the pre-4.1 password scramble, which plumb does not send"
                        .into(),
                ))
            }
            Some(0xFE) => {
                let switch: AuthSwitchRequest<'_> = ParseBuf(&pkt)
                    .parse(())
                    .map_err(|e| WireError::protocol(format!("auth switch request: {e}")))?;
                let next = switch.auth_plugin().into_owned();
                let data = answer(&next, l.password, switch.plugin_data(), private)?;
                nonce = switch.plugin_data().to_vec();
                plugin = next;
                wire.send(&data)?;
            }
            Some(0x01) if plugin == AuthPlugin::CachingSha2Password => match pkt.get(1) {
                // The key asked for (PEM text).
                Some(_) if awaiting_key => {
                    let sealed = rsa_key::encrypt_password(l.password, &nonce, &pkt[1..])?;
                    awaiting_key = false;
                    wire.send(&sealed)?;
                }
                // Fast authentication succeeded: the OK follows.
                Some(0x03) => {}
                Some(0x04) if private => {
                    let mut clear = l.password.as_bytes().to_vec();
                    clear.push(0);
                    wire.send(&clear)?;
                }
                // Not private: ask for the server's RSA key to encrypt the password with.
                Some(0x04) => {
                    wire.send(&[0x02])?;
                    awaiting_key = true;
                }
                _ => return Err(WireError::protocol("unexpected caching_sha2_password data")),
            },
            _ => {
                return Err(WireError::protocol(
                    "unexpected packet during authentication",
                ))
            }
        }
    }
    if caps.contains(CapabilityFlags::CLIENT_COMPRESS) {
        wire.compress();
    }
    Ok((wire, Agreed { caps, mariadb }))
}

/// The first three numbers of the server's version ("5.5.5-10.11.19-MariaDB", "8.0.36"),
/// which pick the handshake's collation. mysql_common's `server_version_parsed` does it
/// with a regex compiled at the first call (1.6 million instructions, a tenth of a short
/// run's start-up).
fn server_version(v: &[u8]) -> Option<(u16, u16, u16)> {
    let v = std::str::from_utf8(v).ok()?;
    let mut parts = v.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    Some((major, minor, rest[..digits].parse().ok()?))
}

/// What `plugin` answers to `nonce` with the password.
fn answer(
    plugin: &AuthPlugin<'_>,
    password: &str,
    nonce: &[u8],
    private: bool,
) -> Result<Vec<u8>, WireError> {
    let mut out = Vec::new();
    match plugin {
        AuthPlugin::MysqlNativePassword | AuthPlugin::CachingSha2Password => {
            if let Some(data) = plugin.gen_data(Some(password), nonce) {
                data.serialize(&mut out);
            }
        }
        AuthPlugin::MysqlClearPassword if private => {
            out.extend_from_slice(password.as_bytes());
            out.push(0);
        }
        AuthPlugin::MysqlClearPassword => {
            return Err(WireError::Refused(
                "the server asks for the password in clear text (mysql_clear_password), which \
                 plumb sends only over TLS or the socket"
                    .into(),
            ))
        }
        other => {
            return Err(WireError::Refused(format!(
                "authentication plugin {} is not supported",
                String::from_utf8_lossy(other.as_bytes())
            )))
        }
    }
    Ok(out)
}

/// The server's ERR packet as an error.
pub fn server_error(pkt: &[u8], caps: CapabilityFlags) -> WireError {
    match ParseBuf(pkt).parse::<ErrPacket<'_>>(caps) {
        Ok(ErrPacket::Error(e)) => WireError::Server {
            code: e.error_code(),
            state: e
                .sql_state_ref()
                .map_or_else(|| "HY000".to_string(), |s| s.as_str().into_owned()),
            message: e.message_str().into_owned(),
        },
        Ok(ErrPacket::Progress(_)) => WireError::protocol("unexpected progress report"),
        Err(e) => WireError::protocol(format!("error packet: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: &[u8] = b"0123456789abcdefghij";

    #[test]
    fn scrambles_are_the_plugins_and_an_empty_password_sends_nothing() {
        let native = answer(&AuthPlugin::MysqlNativePassword, "pw", NONCE, false).unwrap();
        assert_eq!(native.len(), 20);
        assert_ne!(native, b"pw");
        let sha2 = answer(&AuthPlugin::CachingSha2Password, "pw", NONCE, false).unwrap();
        assert_eq!(sha2.len(), 32);
        for p in [
            AuthPlugin::MysqlNativePassword,
            AuthPlugin::CachingSha2Password,
        ] {
            assert!(answer(&p, "", NONCE, false).unwrap().is_empty());
        }
    }

    #[test]
    fn server_versions_are_read_from_the_greeting() {
        assert_eq!(
            server_version(b"5.5.5-10.11.19-MariaDB-0+deb12u1"),
            Some((5, 5, 5))
        );
        assert_eq!(server_version(b"8.0.36"), Some((8, 0, 36)));
        assert_eq!(server_version(b"8.4.0-commercial"), Some((8, 4, 0)));
        assert_eq!(server_version(b"5.7"), None);
        assert_eq!(server_version(b"x.y.z"), None);
    }

    #[test]
    fn a_clear_password_crosses_only_a_private_channel() {
        let clear = AuthPlugin::MysqlClearPassword;
        assert_eq!(answer(&clear, "pw", NONCE, true).unwrap(), b"pw\0");
        let e = answer(&clear, "pw", NONCE, false).unwrap_err().to_string();
        assert!(e.contains("only over TLS or the socket"), "{e}");
        assert!(!e.contains("pw\0"));
        let e = answer(&AuthPlugin::from_bytes(b"dialog"), "pw", NONCE, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "authentication plugin dialog is not supported"
        );
        // Known to mysql_common but not built in: refused, not a panic.
        let e = answer(&AuthPlugin::Ed25519, "pw", NONCE, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "authentication plugin client_ed25519 is not supported"
        );
    }
}
