//! A blocking PostgreSQL client of plumb's own, on the `postgres-protocol` crate's message
//! encoders and SCRAM/MD5 code, over a plain socket or rustls.
//!
//! It exists for the client's CPU per statement: a prepared statement runs as Bind, Execute
//! and Sync encoded into a reused buffer and sent in one write, and its replies are read
//! through one buffer and walked in place (rows counted, never decoded), so a steady run
//! allocates nothing per statement and makes about one write and one read per statement,
//! as libpq does. The socket (and TLS over it) is [`crate::sock`]'s.

mod auth;
mod conn;
mod error;
mod inbox;
mod message;

pub use conn::{Conn, ConnectParams, Prepared, Tls};
pub use error::Error;
