//! What the client reports: the server's own errors, and the ways the conversation fails.

use std::fmt;
use std::io;

/// An ErrorResponse: the server refused a statement or the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbError {
    pub severity: String,
    /// The SQLSTATE.
    pub code: String,
    pub message: String,
    /// Where in the statement the error is (1-based, in characters), when the server says.
    pub position: Option<u32>,
}

impl DbError {
    /// A FATAL or PANIC error ends the session: the server closes the connection after it.
    pub fn ends_session(&self) -> bool {
        matches!(self.severity.as_str(), "FATAL" | "PANIC")
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} (SQLSTATE {})",
            self.severity, self.message, self.code
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Db(DbError),
    /// The socket could not be opened.
    #[error("error connecting to server: {0}")]
    Connect(io::Error),
    #[error("error performing TLS handshake: {0}")]
    Tls(String),
    #[error("authentication error: {0}")]
    Auth(String),
    #[error("invalid configuration: {0}")]
    Config(&'static str),
    /// Reading or writing an open connection failed.
    #[error("error communicating with the server: {0}")]
    Io(io::Error),
    /// The server closed the connection.
    #[error("connection closed")]
    Closed,
    /// The server said something the protocol does not allow here.
    #[error("protocol error: {0}")]
    Protocol(&'static str),
    /// A parameter cannot be converted to the type the server inferred for it.
    #[error("error serializing parameter {index}: {why}")]
    Param { index: usize, why: &'static str },
}

impl Error {
    /// Whether the connection can no longer be used after this error.
    pub fn is_lost(&self) -> bool {
        match self {
            Error::Io(_) | Error::Closed | Error::Protocol(_) => true,
            Error::Db(d) => d.ends_session(),
            _ => false,
        }
    }
}
