//! A connection's commands: text queries (COM_QUERY), prepared statements
//! (COM_STMT_PREPARE, COM_STMT_EXECUTE in the binary protocol, COM_STMT_CLOSE). A result
//! set's rows are counted where they lie in the packet buffer; a statement's request is
//! built in a buffer kept for the connection and sent in one write.

use std::path::Path;
use std::time::Duration;

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{CommonOkPacket, OkPacketDeserializer, OldEofPacket, StmtPacket};

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
    pub compression: bool,
    pub connect_timeout: Duration,
    pub max_allowed_packet: usize,
}

/// A statement prepared on one connection.
#[derive(Clone, Copy, Debug)]
pub struct Stmt {
    id: u32,
    params: u16,
}

pub struct Conn {
    wire: Wire,
    caps: CapabilityFlags,
    /// The packet being read.
    pkt: Vec<u8>,
    /// The request being built.
    cmd: Vec<u8>,
}

/// A result set's end, not a row: an EOF packet (a text row cannot start with 0xFE below
/// 16 MiB, a binary one never does).
fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 9
}

impl Conn {
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
            compression: o.compression,
            socket,
            max_allowed_packet: o.max_allowed_packet,
        };
        let (wire, caps) = auth::login(wire, &login)?;
        Ok(Conn {
            wire,
            caps,
            pkt: Vec::with_capacity(4096),
            cmd: Vec::with_capacity(4096),
        })
    }

    /// Send the request built in `cmd`.
    fn send_cmd(&mut self) -> Result<(), WireError> {
        self.wire.reset_seq();
        self.wire.send(&self.cmd)
    }

    fn command(&mut self, code: u8, arg: &[u8]) -> Result<(), WireError> {
        self.cmd.clear();
        self.cmd.push(code);
        self.cmd.extend_from_slice(arg);
        self.send_cmd()
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
        let (out, mut more) = self.read_result(each)?;
        while more {
            more = self.read_result(&mut |_| {})?.1;
        }
        Ok(out)
    }

    pub fn prepare(&mut self, sql: &str) -> Result<Stmt, WireError> {
        self.command(COM_STMT_PREPARE, sql.as_bytes())?;
        self.wire.read_packet(&mut self.pkt)?;
        if self.pkt.first() == Some(&0xFF) {
            return Err(server_error(&self.pkt, self.caps));
        }
        let st: StmtPacket = ParseBuf(&self.pkt)
            .parse(())
            .map_err(|e| WireError::protocol(format!("prepare response: {e}")))?;
        let stmt = Stmt {
            id: st.statement_id(),
            params: st.num_params(),
        };
        // Parameter and column definitions, each list ended by an EOF packet.
        for n in [st.num_params(), st.num_columns()] {
            if n > 0 {
                for _ in 0..n {
                    self.wire.read_packet(&mut self.pkt)?;
                }
                self.wire.read_packet(&mut self.pkt)?;
                if !is_eof(&self.pkt) {
                    return Err(WireError::protocol(
                        "prepare response: no EOF after definitions",
                    ));
                }
            }
        }
        Ok(stmt)
    }

    /// Run `st` with `values` bound in order.
    pub fn execute(&mut self, st: &Stmt, values: &[Value<'_>]) -> Result<Outcome, WireError> {
        if values.len() != usize::from(st.params) {
            return Err(WireError::Refused(format!(
                "the statement takes {} parameters, {} given",
                st.params,
                values.len()
            )));
        }
        let c = &mut self.cmd;
        c.clear();
        c.push(COM_STMT_EXECUTE);
        c.extend_from_slice(&st.id.to_le_bytes());
        // No cursor; one iteration.
        c.push(0);
        c.extend_from_slice(&1u32.to_le_bytes());
        if !values.is_empty() {
            // No NULLs: a zero bitmap; then the types, bound anew each time (the server
            // keeps none without it).
            c.resize(c.len() + values.len().div_ceil(8), 0);
            c.push(1);
            for v in values {
                c.push(match v {
                    Value::Int(_) => TYPE_LONGLONG,
                    Value::Text(_) => TYPE_VAR_STRING,
                });
                c.push(0);
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
        self.send_cmd()?;
        let (out, mut more) = self.read_result(&mut |_| {})?;
        while more {
            more = self.read_result(&mut |_| {})?.1;
        }
        Ok(out)
    }

    /// Free `st` on the server (no answer comes).
    pub fn close(&mut self, st: Stmt) -> Result<(), WireError> {
        self.command(COM_STMT_CLOSE, &st.id.to_le_bytes())
    }

    /// One result: an OK packet's changed rows, or a result set's rows counted (each
    /// handed to `each`); and whether another result follows.
    fn read_result(&mut self, each: &mut dyn FnMut(&[u8])) -> Result<(Outcome, bool), WireError> {
        self.wire.read_packet(&mut self.pkt)?;
        match self.pkt.first() {
            Some(0x00) => {
                let ok = ParseBuf(&self.pkt)
                    .parse::<OkPacketDeserializer<'_, CommonOkPacket>>(self.caps)
                    .map_err(|e| WireError::protocol(format!("OK packet: {e}")))?
                    .into_inner();
                let more = ok
                    .status_flags()
                    .contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS);
                return Ok((Outcome::Changed(ok.affected_rows()), more));
            }
            Some(0xFF) => return Err(server_error(&self.pkt, self.caps)),
            Some(0xFB) => {
                return Err(WireError::protocol(
                    "the server asks for a local file, which plumb never sends",
                ))
            }
            _ => {}
        }
        let columns = lenenc::int(&self.pkt)
            .ok_or_else(|| WireError::protocol("result set header"))?
            .0;
        for _ in 0..columns {
            self.wire.read_packet(&mut self.pkt)?;
        }
        self.wire.read_packet(&mut self.pkt)?;
        if !is_eof(&self.pkt) {
            return Err(WireError::protocol("result set: no EOF after the columns"));
        }
        let mut rows = 0u64;
        loop {
            self.wire.read_packet(&mut self.pkt)?;
            match self.pkt.first() {
                Some(0xFF) => return Err(server_error(&self.pkt, self.caps)),
                _ if is_eof(&self.pkt) => break,
                _ => {
                    rows += 1;
                    each(&self.pkt);
                }
            }
        }
        let eof = ParseBuf(&self.pkt)
            .parse::<OkPacketDeserializer<'_, OldEofPacket>>(self.caps)
            .map_err(|e| WireError::protocol(format!("EOF packet: {e}")))?
            .into_inner();
        let more = eof
            .status_flags()
            .contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS);
        Ok((Outcome::Rows(rows), more))
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
