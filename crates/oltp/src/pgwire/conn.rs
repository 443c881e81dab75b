//! One connection: startup (TLS negotiation and authentication), prepared statements on the
//! extended protocol, and simple queries.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use super::error::Error;
use super::inbox::Inbox;
use super::message::{self, tag, Row};
use crate::driver::Value;
use crate::sock::{Socket, Stream};

/// Type OIDs the client sends integers to in binary.
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const FLOAT8: u32 = 701;

/// Where and as whom to connect.
#[derive(Clone, Copy, Debug)]
pub struct ConnectParams<'a> {
    /// A host name or address, or a socket directory (a path starting with '/').
    pub host: &'a str,
    pub port: u16,
    pub user: &'a str,
    /// Empty for none.
    pub password: &'a str,
    pub database: &'a str,
    pub application_name: &'a str,
    pub connect_timeout: Duration,
}

/// Whether a TCP connection asks for TLS (a socket never does).
#[derive(Clone)]
pub enum Tls {
    Off,
    /// TLS when the server accepts the SSLRequest, plain text when it declines.
    Prefer(Arc<ClientConfig>),
    /// TLS or an error.
    Require(Arc<ClientConfig>),
}

/// A statement parsed on one connection, with what the server described of it.
#[derive(Debug)]
pub struct Prepared {
    name: String,
    /// The types the server inferred for the parameters.
    params: Vec<u32>,
    returns_rows: bool,
}

impl Prepared {
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// Whether it returns a result set (a row description), however many rows.
    pub fn returns_rows(&self) -> bool {
        self.returns_rows
    }
}

/// What a simple query returned, over all its statements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimpleOutcome {
    pub rows: u64,
    /// Whether any statement described a result set.
    pub described: bool,
    /// The last command tag's row count.
    pub changed: u64,
}

pub struct Conn {
    io: Stream,
    inbox: Inbox,
    /// Every request is encoded here and sent in one write.
    out: BytesMut,
    broken: bool,
    /// Names for the statements prepared so far.
    named: usize,
}

impl Conn {
    /// The server process that listens on the Unix socket or TCP port (the postmaster:
    /// the backend serving this connection is its child), when it runs on this host.
    pub fn server_pid(&self) -> Option<u32> {
        self.io.peer_pid()
    }

    pub fn connect(p: &ConnectParams<'_>, tls: &Tls) -> Result<Conn, Error> {
        let io = if p.host.starts_with('/') {
            // `{dir}/.s.PGSQL.{port}`, as libpq names a server's socket in a directory.
            let path = format!("{}/.s.PGSQL.{}", p.host, p.port);
            Stream::Plain(Socket::unix(path).map_err(Error::Connect)?)
        } else {
            // No timeout when zero, as libpq's connect_timeout=0.
            let timeout = Some(p.connect_timeout).filter(|t| !t.is_zero());
            let sock = Socket::tcp(p.host, p.port, timeout).map_err(Error::Connect)?;
            match tls {
                Tls::Off => Stream::Plain(sock),
                Tls::Prefer(cfg) => negotiate(sock, p.host, cfg, false)?,
                Tls::Require(cfg) => negotiate(sock, p.host, cfg, true)?,
            }
        };
        let mut c = Conn {
            io,
            inbox: Inbox::default(),
            out: BytesMut::with_capacity(4096),
            broken: false,
            named: 0,
        };
        c.out.clear();
        let mut params = vec![
            ("user", p.user),
            ("database", p.database),
            ("application_name", p.application_name),
            ("client_encoding", "UTF8"),
        ];
        params.retain(|(_, v)| !v.is_empty());
        frontend::startup_message(params, &mut c.out).map_err(Error::Io)?;
        c.send()?;
        super::auth::authenticate(&mut c, p.user, p.password)?;
        // Then the server's settings and key, up to its first ReadyForQuery.
        c.finish(false, |_, _| Ok(()))?;
        Ok(c)
    }

    /// Whether the connection failed or the server ended it.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Parse and describe `sql` as the statement `name` ("" for the unnamed statement,
    /// which the next unnamed one replaces).
    pub fn prepare_as(&mut self, name: String, sql: &str) -> Result<Prepared, Error> {
        self.out.clear();
        frontend::parse(&name, sql, None, &mut self.out).map_err(Error::Io)?;
        frontend::describe(b'S', &name, &mut self.out).map_err(Error::Io)?;
        frontend::sync(&mut self.out);
        self.send()?;
        let mut params = Vec::new();
        let mut returns_rows = false;
        self.finish(true, |t, body| {
            match t {
                tag::PARAMETER_DESCRIPTION => params = message::parameter_types(body)?,
                tag::ROW_DESCRIPTION => returns_rows = true,
                _ => {}
            }
            Ok(())
        })?;
        Ok(Prepared {
            name,
            params,
            returns_rows,
        })
    }

    /// A named statement of this connection's own.
    pub fn prepare(&mut self, sql: &str) -> Result<Prepared, Error> {
        self.named += 1;
        self.prepare_as(format!("p{}", self.named), sql)
    }

    /// Run `st` with `values` bound: Bind, Execute and Sync in one write. Returns the rows
    /// it returned and the rows its command tag reports.
    pub fn execute(&mut self, st: &Prepared, values: &[Value<'_>]) -> Result<(u64, u64), Error> {
        self.out.clear();
        for (index, (v, &ty)) in values.iter().zip(&st.params).enumerate() {
            if let Value::Int(i) = *v {
                let fits = match ty {
                    INT2 => i16::try_from(i).is_ok(),
                    INT4 => i32::try_from(i).is_ok(),
                    _ => true,
                };
                if !fits {
                    return Err(Error::Param {
                        index,
                        why: "out of range integral type conversion attempted",
                    });
                }
            }
        }
        let n = i16::try_from(values.len()).map_err(|_| Error::Protocol("too many parameters"))?;
        // Bind, written here rather than through postgres-protocol's generic encoder (its
        // iterators and closures cost a statement more than the bytes): the unnamed portal,
        // the statement, a format per parameter (binary for the integer types, text
        // otherwise), the values with their lengths, and no result format (all text).
        let out = &mut self.out;
        out.put_u8(b'B');
        let start = out.len();
        out.put_i32(0);
        out.put_u8(0);
        out.put_slice(st.name.as_bytes());
        out.put_u8(0);
        out.put_i16(n);
        for (v, &ty) in values.iter().zip(&st.params) {
            out.put_i16(i16::from(binary(v, ty)));
        }
        out.put_i16(n);
        for (v, &ty) in values.iter().zip(&st.params) {
            let at = out.len();
            out.put_i32(0);
            encode(v, ty, out);
            let len = (out.len() - at - 4) as i32;
            out[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        out.put_i16(0);
        let len = i32::try_from(out.len() - start).map_err(|_| Error::Protocol("Bind too long"))?;
        out[start..start + 4].copy_from_slice(&len.to_be_bytes());
        // Execute the unnamed portal, all its rows; then Sync.
        out.put_slice(b"E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04");
        self.send()?;
        let (mut rows, mut changed) = (0, 0);
        self.finish(true, |t, body| {
            match t {
                tag::DATA_ROW => rows += 1,
                tag::COMMAND_COMPLETE => changed = message::rows_affected(body),
                _ => {}
            }
            Ok(())
        })?;
        Ok((rows, changed))
    }

    /// Run `sql` on the simple-query protocol, handing each row to `each`.
    pub fn simple(
        &mut self,
        sql: &str,
        mut each: impl FnMut(Row<'_>),
    ) -> Result<SimpleOutcome, Error> {
        self.out.clear();
        frontend::query(sql, &mut self.out).map_err(Error::Io)?;
        self.send()?;
        let mut o = SimpleOutcome::default();
        self.finish(false, |t, body| {
            match t {
                tag::DATA_ROW => {
                    o.rows += 1;
                    each(Row::new(body)?);
                }
                tag::ROW_DESCRIPTION => o.described = true,
                tag::COMMAND_COMPLETE => o.changed = message::rows_affected(body),
                _ => {}
            }
            Ok(())
        })?;
        Ok(o)
    }

    /// Sends what `out` holds.
    pub(super) fn send(&mut self) -> Result<(), Error> {
        self.io.write_all(&self.out).map_err(|e| {
            self.broken = true;
            Error::Io(e)
        })
    }

    /// The next message (see [`Inbox::next`]); a failure marks the connection broken.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Result<(u8, &[u8]), Error> {
        match self.inbox.next(&mut self.io) {
            Ok(m) => Ok(m),
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    /// Reads to ReadyForQuery, handing every other message to `each`; an ErrorResponse is
    /// kept and returned once the server is ready again (or has closed the connection after
    /// it, when that error is the one that says why). `extended`: the request was on the
    /// extended protocol (ended by a Sync).
    pub(super) fn finish(
        &mut self,
        extended: bool,
        mut each: impl FnMut(u8, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut failed = None;
        loop {
            let (t, body) = match self.next() {
                Ok(m) => m,
                Err(e) => return Err(failed.map(Error::Db).unwrap_or(e)),
            };
            match t {
                tag::READY_FOR_QUERY => break,
                // COPY FROM STDIN: plumb has nothing to send, and the server would wait. In
                // copy mode the server ignores the Sync already sent, so an extended-protocol
                // request needs another.
                tag::COPY_IN_RESPONSE => {
                    self.out.clear();
                    frontend::copy_fail("plumb does not send COPY data", &mut self.out)
                        .map_err(Error::Io)?;
                    if extended {
                        frontend::sync(&mut self.out);
                    }
                    self.send()?;
                }
                tag::ERROR_RESPONSE => {
                    let e = message::db_error(body);
                    if e.ends_session() {
                        self.broken = true;
                    }
                    failed.get_or_insert(e);
                }
                _ if failed.is_some() => {}
                _ => {
                    let r = each(t, body);
                    if let Err(e) = r {
                        self.broken = true;
                        return Err(e);
                    }
                }
            }
        }
        match failed {
            Some(e) => Err(Error::Db(e)),
            None => Ok(()),
        }
    }

    pub(super) fn out(&mut self) -> &mut BytesMut {
        &mut self.out
    }

    pub(super) fn transport(&self) -> &Stream {
        &self.io
    }
}

impl Drop for Conn {
    /// Terminate, so the server logs a client that left rather than one that vanished.
    fn drop(&mut self) {
        if !self.broken {
            self.out.clear();
            frontend::terminate(&mut self.out);
            let _ = self.send();
        }
    }
}

/// Whether an integer goes in binary: the server inferred an integer or float8 type for it.
fn binary(v: &Value<'_>, ty: u32) -> bool {
    matches!(v, Value::Int(_)) && matches!(ty, INT2 | INT4 | INT8 | FLOAT8)
}

/// One parameter's bytes: binary for [`binary`]'s types (range checked beforehand), the
/// decimal or the string in text format otherwise, which the server converts to the type
/// it inferred.
fn encode(v: &Value<'_>, ty: u32, buf: &mut BytesMut) {
    match (*v, ty) {
        (Value::Int(i), INT2) => buf.put_i16(i as i16),
        (Value::Int(i), INT4) => buf.put_i32(i as i32),
        (Value::Int(i), INT8) => buf.put_i64(i),
        (Value::Int(i), FLOAT8) => buf.put_f64(i as f64),
        // Writing to a BytesMut cannot fail.
        (Value::Int(i), _) => {
            let _ = write!(buf, "{i}");
        }
        (Value::Text(s), _) => buf.put_slice(s.as_bytes()),
    }
}

/// The SSLRequest, and the TLS handshake when the server accepts it.
fn negotiate(
    mut sock: Socket,
    host: &str,
    cfg: &Arc<ClientConfig>,
    required: bool,
) -> Result<Stream, Error> {
    let mut req = BytesMut::with_capacity(8);
    frontend::ssl_request(&mut req);
    sock.send_all(&req).map_err(Error::Io)?;
    let mut inbox = Inbox::default();
    let answer = inbox.raw(&mut sock, 1)?[0];
    // Bytes after the answer were sent before the handshake, outside its protection.
    if !inbox.is_empty() {
        return Err(Error::Protocol("data after the SSLRequest's answer"));
    }
    match answer {
        b'S' => {}
        b'N' if !required => return Ok(Stream::Plain(sock)),
        b'N' => return Err(Error::Tls("server does not support TLS".into())),
        _ => return Err(Error::Protocol("unexpected answer to SSLRequest")),
    }
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| Error::Tls(format!("invalid server name {host:?}")))?;
    let mut conn =
        ClientConnection::new(cfg.clone(), name).map_err(|e| Error::Tls(e.to_string()))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)
            .map_err(|e| Error::Tls(e.to_string()))?;
    }
    Ok(Stream::Tls(Box::new(StreamOwned::new(conn, sock))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(v: Value<'_>, ty: u32) -> (bool, Vec<u8>) {
        let mut b = BytesMut::new();
        encode(&v, ty, &mut b);
        (binary(&v, ty), b.to_vec())
    }

    #[test]
    fn integers_go_in_the_inferred_type() {
        assert_eq!(encoded(Value::Int(7), INT4), (true, vec![0, 0, 0, 7]));
        assert_eq!(encoded(Value::Int(-2), INT2), (true, vec![0xff, 0xfe]));
        assert_eq!(
            encoded(Value::Int(1), INT8),
            (true, 1i64.to_be_bytes().to_vec())
        );
        assert_eq!(
            encoded(Value::Int(3), FLOAT8),
            (true, 3f64.to_be_bytes().to_vec())
        );
        // text, varchar, numeric, unknown: the decimal, in text format.
        assert_eq!(encoded(Value::Int(-42), 25), (false, b"-42".to_vec()));
        assert_eq!(encoded(Value::Int(5), 1700), (false, b"5".to_vec()));
        assert_eq!(encoded(Value::Text("ab"), INT4), (false, b"ab".to_vec()));
        assert_eq!(encoded(Value::Text("ab"), 1043), (false, b"ab".to_vec()));
    }
}
