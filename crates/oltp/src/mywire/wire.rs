//! Packets over a transport: the `mysql_common` codec frames them (sequence ids, 16 MiB
//! chunks, compression), the buffers are kept for the connection's life so a statement
//! allocates nothing.

use std::io;

use bytes::BytesMut;
use mysql_common::proto::codec::{Compression, PacketCodec};

use super::WireError;
use crate::sock::Stream;

/// How much one read asks the socket for.
const READ_CHUNK: usize = 64 * 1024;

pub struct Wire {
    io: Stream,
    codec: PacketCodec,
    /// Bytes read and not yet decoded (a read may bring several packets).
    inbuf: BytesMut,
    scratch: Box<[u8]>,
    /// Encoded bytes of the request being sent.
    out: BytesMut,
}

impl Wire {
    pub fn new(io: Stream, max_allowed_packet: usize) -> Self {
        let mut codec = PacketCodec::default();
        codec.max_allowed_packet = max_allowed_packet;
        Wire {
            io,
            codec,
            inbuf: BytesMut::with_capacity(READ_CHUNK),
            scratch: vec![0u8; READ_CHUNK].into_boxed_slice(),
            out: BytesMut::with_capacity(4096),
        }
    }

    /// A command starts a new exchange: sequence ids from 0.
    pub fn reset_seq(&mut self) {
        self.codec.reset_seq_id();
    }

    pub fn compress(&mut self) {
        self.codec.compress(Compression::default());
    }

    /// The same exchange over a new transport made of the old (TLS after the SSL
    /// request): the sequence goes on.
    pub fn upgrade(
        self,
        f: impl FnOnce(Stream) -> Result<Stream, WireError>,
    ) -> Result<Wire, WireError> {
        let Wire {
            io,
            codec,
            inbuf,
            scratch,
            out,
        } = self;
        Ok(Wire {
            io: f(io)?,
            codec,
            inbuf,
            scratch,
            out,
        })
    }

    /// The next packet's payload into `dst`.
    pub fn read_packet(&mut self, dst: &mut Vec<u8>) -> Result<(), WireError> {
        dst.clear();
        loop {
            if self.codec.decode(&mut self.inbuf, dst)? {
                return Ok(());
            }
            let n = self.io.read(&mut self.scratch)?;
            if n == 0 {
                return Err(WireError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )));
            }
            self.inbuf.extend_from_slice(&self.scratch[..n]);
        }
    }

    /// Send one packet of `payload`, in one write.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), WireError> {
        self.out.clear();
        self.codec.encode(&mut &payload[..], &mut self.out)?;
        let r = self.io.write_all(&self.out);
        self.out.clear();
        Ok(r?)
    }
}
