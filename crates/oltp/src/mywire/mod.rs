//! plumb's own blocking MySQL/MariaDB client: the packets come from `mysql_common`, the
//! socket work is ours.
//!
//! Why not the `mysql` crate: it reads the socket with a blocking recv(). When the server
//! takes our request off a Unix socket after we went to sleep, the kernel's write-space
//! wakeup wakes every sleeper on the socket; a reader sleeping in recv() wakes, finds no
//! data and sleeps again, two context switches per query instead of one. Waiting in poll()
//! for POLLIN first (as libmariadb does) filters that wakeup out ([`crate::sock`]). See
//! docs/performance.md, "Why MariaDB over its socket misses".
//!
//! - the socket (Unix, TCP, TLS over either) is [`crate::sock`]'s, shared with pgwire.
//! - [`wire`]: packets over a transport with the codec (sequence ids, compression).
//! - [`tls`]: rustls client configurations.
//! - [`auth`]: the handshake and the authentication exchange.
//! - [`conn`]: commands: text queries, prepared statements, result sets counted.
//! - [`lenenc`]: the protocol's length-encoded integers and strings.
//! - [`rsa_key`]: the password encrypted with the server's RSA key (caching_sha2_password
//!   over plain TCP).

mod auth;
mod conn;
mod lenenc;
mod rsa_key;
mod tls;
mod wire;

#[cfg(test)]
mod scripted_tests;
#[cfg(test)]
mod tests;

pub use conn::{text_columns, Conn, ConnectOpts, Stmt, Target};

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The server's ERR packet.
    #[error("error {code} ({state}): {message}")]
    Server {
        code: u16,
        state: String,
        message: String,
    },
    /// The socket failed or the server closed it: the connection is gone.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The TLS layer refused (a certificate, a handshake).
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The server said something this client cannot follow: the connection is unusable.
    #[error("{0}")]
    Protocol(String),
    /// The client will not go on (a setting the server cannot meet, a misuse).
    #[error("{0}")]
    Refused(String),
}

impl WireError {
    /// Whether the connection can no longer be used after this error.
    pub fn is_connectivity(&self) -> bool {
        matches!(self, WireError::Io(_) | WireError::Protocol(_))
    }

    pub(crate) fn protocol(what: impl Into<String>) -> Self {
        WireError::Protocol(what.into())
    }
}

impl From<mysql_common::proto::codec::error::PacketCodecError> for WireError {
    fn from(e: mysql_common::proto::codec::error::PacketCodecError) -> Self {
        use mysql_common::proto::codec::error::PacketCodecError as E;
        match e {
            E::Io(io) => WireError::Io(io),
            other => WireError::Protocol(other.to_string()),
        }
    }
}
