//! A connection's commands: text queries (COM_QUERY), prepared statements
//! (COM_STMT_PREPARE, COM_STMT_EXECUTE in the binary protocol, COM_STMT_CLOSE). A result
//! set's rows are counted where they lie in the read buffer; a statement's request is built
//! in the wire's buffer kept for the connection and sent in one write.

use std::path::Path;
use std::time::Duration;

use mysql_common::constants::MariadbCapabilities;
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::StmtPacket;

use super::auth::{self, server_error, Login};
use super::lenenc;
use super::wire::Wire;
use super::{tls, WireError};
use crate::driver::{Outcome, Value};
use crate::sock::{Socket, Stream};

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;

/// The binary protocol's parameter types plumb binds (sysbench's BIGINT and VARCHAR).
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xFD;

/// Where the server listens.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    Socket(&'a Path),
    Tcp(&'a str, u16),
}

pub struct ConnectOpts<'a> {
    pub target: Target<'a>,
    pub user: &'a str,
    pub password: &'a str,
    pub database: Option<&'a str>,
    pub ssl: bool,
    pub ssl_ca: Option<&'a Path>,
    /// With `ssl`, a server without TLS is used in plain text (MariaDB's client library does
    /// this with sysbench's `--mysql-ssl=on` and mysqlslap's `--ssl`).
    pub ssl_optional: bool,
    pub compression: bool,
    pub connect_timeout: Duration,
    pub max_allowed_packet: usize,
}

/// A statement prepared on one connection.
#[derive(Clone, Copy, Debug)]
pub struct Stmt {
    id: u32,
    params: u16,
    /// The columns of its result set, as the server last described them.
    pub(super) columns: u16,
    /// The parameter types the server holds for it: bit i set for a text parameter, bound
    /// by an execute that succeeded. None before the first one, and for statements of more
    /// than 64 parameters, whose types go with every execute.
    bound: Option<u64>,
}

/// What the binary protocol's parameter types are for `values` (see [`Stmt::bound`]).
fn signature(values: &[Value<'_>]) -> Option<u64> {
    if values.len() > 64 {
        return None;
    }
    Some(values.iter().enumerate().fold(0, |sig, (i, v)| match v {
        Value::Int(_) => sig,
        Value::Text(_) => sig | 1 << i,
    }))
}

pub struct Conn {
    wire: Wire,
    caps: CapabilityFlags,
    /// MariaDB's metadata caching is on: a result set's column count is followed by a byte
    /// that says whether its column definitions follow.
    cache_metadata: bool,
}

/// A result set's end, not a row: an EOF packet (a text row cannot start with 0xFE below
/// 16 MiB, a binary one never does).
fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 9
}

/// Whether the server's status flags (an OK or EOF packet's) say another result follows.
fn more_results(status: u16) -> bool {
    StatusFlags::from_bits_truncate(status).contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS)
}

/// An OK packet's changed rows and status flags (0x00, changed rows and last insert id as
/// length-encoded integers, the status, the warnings; the protocol 4.1 layout, which the
/// handshake requires).
fn ok_packet(p: &[u8]) -> Result<(u64, u16), WireError> {
    let parsed = (|| {
        let (changed, rest) = lenenc::int(p.get(1..)?)?;
        let (_insert_id, rest) = lenenc::int(rest)?;
        Some((changed, u16::from_le_bytes(rest.get(..2)?.try_into().ok()?)))
    })();
    parsed.ok_or_else(|| WireError::protocol("OK packet: too short"))
}

/// An EOF packet's status flags (0xFE, the warnings, the status).
fn eof_status(p: &[u8]) -> Result<u16, WireError> {
    p.get(3..5)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| WireError::protocol("EOF packet: too short"))
}

impl Conn {
    /// The server process, when it runs on this host (over its Unix socket or TCP).
    pub fn server_pid(&self) -> Option<u32> {
        self.wire.peer_pid()
    }

    pub fn connect(o: &ConnectOpts<'_>) -> Result<Conn, WireError> {
        let (plain, name, socket) = match o.target {
            Target::Socket(path) => (Socket::unix(path)?, "localhost".to_string(), true),
            Target::Tcp(host, port) => (
                Socket::tcp(host, port, Some(o.connect_timeout))?,
                host.to_string(),
                false,
            ),
        };
        let tls = if o.ssl {
            Some((tls::config(o.ssl_ca)?, name))
        } else {
            None
        };
        let wire = Wire::new(Stream::Plain(plain), o.max_allowed_packet);
        let login = Login {
            user: o.user,
            password: o.password,
            database: o.database,
            tls,
            tls_optional: o.ssl_optional,
            compression: o.compression,
            socket,
            max_allowed_packet: o.max_allowed_packet,
        };
        let (wire, agreed) = auth::login(wire, &login)?;
        Ok(Conn {
            wire,
            caps: agreed.caps,
            cache_metadata: agreed
                .mariadb
                .contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA),
        })
    }

    /// Whether the server sends a prepared statement's column definitions only when they
    /// change (MariaDB's metadata caching was agreed).
    #[cfg(test)]
    pub fn caches_metadata(&self) -> bool {
        self.cache_metadata
    }

    fn command(&mut self, code: u8, arg: &[u8]) -> Result<(), WireError> {
        let c = self.wire.command();
        c.push(code);
        c.extend_from_slice(arg);
        self.wire.send_built()
    }

    /// Run `sql` as text: the first result's rows or changed rows (later results of a
    /// multi-statement text are read and dropped; their errors are errors).
    pub fn query(&mut self, sql: &str) -> Result<Outcome, WireError> {
        self.query_each(sql, &mut |_| {})
    }

    /// Run `sql` as text, handing each row of the first result set to `each` as the
    /// row's packet (read its columns with [`text_columns`]).
    pub fn query_each(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<Outcome, WireError> {
        self.command(COM_QUERY, sql.as_bytes())?;
        let (out, mut more) = self.read_result(None, each)?;
        while more {
            more = self.read_result(None, &mut |_: &[u8]| {})?.1;
        }
        Ok(out)
    }

    pub fn prepare(&mut self, sql: &str) -> Result<Stmt, WireError> {
        self.command(COM_STMT_PREPARE, sql.as_bytes())?;
        let p = self.wire.read_packet()?;
        if p.first() == Some(&0xFF) {
            return Err(server_error(p, self.caps));
        }
        let st: StmtPacket = ParseBuf(p)
            .parse(())
            .map_err(|e| WireError::protocol(format!("prepare response: {e}")))?;
        let stmt = Stmt {
            id: st.statement_id(),
            params: st.num_params(),
            columns: st.num_columns(),
            bound: None,
        };
        // Parameter and column definitions, each list ended by an EOF packet.
        for n in [st.num_params(), st.num_columns()] {
            if n > 0 {
                for _ in 0..n {
                    self.wire.read_packet()?;
                }
                if !is_eof(self.wire.read_packet()?) {
                    return Err(WireError::protocol(
                        "prepare response: no EOF after definitions",
                    ));
                }
            }
        }
        Ok(stmt)
    }

    /// Run `st` with `values` bound in order. The parameter types go with the first
    /// execute and whenever they change, as libmariadb and libmysqlclient send them: the
    /// server keeps a statement's types from one execute to the next.
    pub fn execute(&mut self, st: &mut Stmt, values: &[Value<'_>]) -> Result<Outcome, WireError> {
        if values.len() != usize::from(st.params) {
            return Err(WireError::Refused(format!(
                "the statement takes {} parameters, {} given",
                st.params,
                values.len()
            )));
        }
        let types = signature(values);
        let send_types = types.is_none() || types != st.bound;
        let c = self.wire.command();
        // The statement, no cursor, one iteration.
        let id = st.id.to_le_bytes();
        c.extend_from_slice(&[COM_STMT_EXECUTE, id[0], id[1], id[2], id[3], 0, 1, 0, 0, 0]);
        if !values.is_empty() {
            // No NULLs: a zero bitmap; then whether types follow, and the types.
            c.resize(c.len() + values.len().div_ceil(8), 0);
            c.push(u8::from(send_types));
            if send_types {
                for v in values {
                    c.push(match v {
                        Value::Int(_) => TYPE_LONGLONG,
                        Value::Text(_) => TYPE_VAR_STRING,
                    });
                    c.push(0);
                }
            }
            for v in values {
                match v {
                    Value::Int(i) => c.extend_from_slice(&i.to_le_bytes()),
                    Value::Text(s) => {
                        lenenc::put_int(c, s.len() as u64);
                        c.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        self.wire.send_built()?;
        let (out, mut more) = self.read_result(Some(&mut st.columns), &mut |_: &[u8]| {})?;
        // Bound: the server has them now (an execute that failed has them sent again).
        st.bound = types;
        while more {
            more = self.read_result(None, &mut |_: &[u8]| {})?.1;
        }
        Ok(out)
    }

    /// Free `st` on the server (no answer comes).
    pub fn close(&mut self, st: Stmt) -> Result<(), WireError> {
        self.command(COM_STMT_CLOSE, &st.id.to_le_bytes())
    }

    /// One result: an OK packet's changed rows, or a result set's rows counted (each
    /// handed to `each`); and whether another result follows. `columns`: a prepared
    /// statement's column count, checked against a result set that comes without its
    /// column definitions, and updated by one that comes with them.
    fn read_result<F: FnMut(&[u8]) + ?Sized>(
        &mut self,
        columns: Option<&mut u16>,
        each: &mut F,
    ) -> Result<(Outcome, bool), WireError> {
        let p = self.wire.read_packet()?;
        let (count, rest) = match p.first() {
            Some(0x00) => {
                let (changed, status) = ok_packet(p)?;
                return Ok((Outcome::Changed(changed), more_results(status)));
            }
            Some(0xFF) => return Err(server_error(p, self.caps)),
            Some(0xFB) => {
                return Err(WireError::protocol(
                    "the server asks for a local file, which plumb never sends",
                ))
            }
            _ => lenenc::int(p).ok_or_else(|| WireError::protocol("result set header"))?,
        };
        // With metadata caching, whether the column definitions follow (for a prepared
        // statement whose columns have not changed since they were last sent, they do not).
        let definitions = match (self.cache_metadata, rest.first()) {
            (false, _) | (true, Some(1)) => true,
            (true, Some(0)) => false,
            (true, _) => {
                return Err(WireError::protocol(
                    "result set header: no metadata indicator",
                ))
            }
        };
        match columns {
            Some(known) if !definitions && u64::from(*known) != count => {
                return Err(WireError::protocol(format!(
                    "a result set of {count} columns without their definitions, for a \
                     statement of {known}"
                )))
            }
            Some(known) if definitions => *known = u16::try_from(count).unwrap_or(u16::MAX),
            _ => {}
        }
        if definitions {
            for _ in 0..count {
                self.wire.read_packet()?;
            }
        }
        // The definitions' EOF packet comes either way (CLIENT_DEPRECATE_EOF is not asked
        // for).
        if !is_eof(self.wire.read_packet()?) {
            return Err(WireError::protocol("result set: no EOF after the columns"));
        }
        let mut rows = 0u64;
        loop {
            let p = self.wire.read_packet()?;
            match p.first() {
                Some(0xFF) => return Err(server_error(p, self.caps)),
                _ if is_eof(p) => {
                    return Ok((Outcome::Rows(rows), more_results(eof_status(p)?)));
                }
                _ => {
                    rows += 1;
                    each(p);
                }
            }
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // As libmysqlclient's mysql_close: the server ends the session at once.
        let _ = self.command(COM_QUIT, &[]);
    }
}

/// The columns of a text row in order (none for NULL); none if the row is malformed.
pub fn text_columns(mut row: &[u8], mut each: impl FnMut(Option<&[u8]>)) -> Option<()> {
    while !row.is_empty() {
        let (v, rest) = lenenc::text_column(row)?;
        each(v);
        row = rest;
    }
    Some(())
}
