//! Packets over a stream. Plain packets are framed here and read in place: the socket's
//! bytes land in one buffer, and a packet that lies whole in it is handed out as a slice of
//! it, never copied (one of 16 MiB or more, which the protocol splits into chunks, is
//! reassembled in a buffer of its own). The compressed protocol goes through `mysql_common`'s
//! codec. A request is built behind room for its header and sent in one write. The buffers
//! are kept for the connection's life, so a statement allocates nothing.

use bytes::BytesMut;
use mysql_common::proto::codec::{Compression, PacketCodec};

use super::WireError;
use crate::sock::Stream;

/// The read buffer's size to start with: a point select's or a range's whole reply.
const READ_CHUNK: usize = 64 * 1024;
/// Before a read, a partial packet is moved to the buffer's start when less than this is
/// free behind it, so that reads are not made into a sliver of the buffer.
const MIN_READ: usize = 4 * 1024;
/// A chunk of this length is continued by the next one.
const MAX_CHUNK: usize = 0xFF_FFFF;
const HEADER: usize = 4;

pub struct Wire {
    io: Stream,
    max_allowed_packet: usize,
    /// Bytes read from the socket; `buf[start..end]` are not handed out yet.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// A packet of several chunks, reassembled.
    big: Vec<u8>,
    /// The sequence id of the next chunk, either way (plain protocol).
    seq: u8,
    /// The compressed protocol, once it is on.
    comp: Option<Box<Compressed>>,
    /// The request being built: room for its header, then its payload.
    out: Vec<u8>,
}

/// The compressed protocol's state: `mysql_common`'s codec and its buffers.
struct Compressed {
    codec: PacketCodec,
    /// Bytes read and not decoded yet.
    inbuf: BytesMut,
    /// The packet decoded last.
    pkt: Vec<u8>,
    /// The request, encoded.
    enc: BytesMut,
}

fn closed() -> WireError {
    WireError::Io(std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "the server closed the connection",
    ))
}

fn too_large() -> WireError {
    WireError::protocol("packet too large")
}

impl Wire {
    /// The server process, when it runs on this host ([`Stream::peer_pid`]).
    pub fn peer_pid(&self) -> Option<u32> {
        self.io.peer_pid()
    }

    pub fn new(io: Stream, max_allowed_packet: usize) -> Self {
        Wire {
            io,
            max_allowed_packet,
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            big: Vec::new(),
            seq: 0,
            comp: None,
            out: Vec::with_capacity(4096),
        }
    }

    /// Switch to the compressed protocol (after the login's OK packet).
    pub fn compress(&mut self) {
        let mut codec = PacketCodec::default();
        codec.max_allowed_packet = self.max_allowed_packet;
        codec.compress(Compression::default());
        let mut inbuf = BytesMut::with_capacity(READ_CHUNK);
        // Nothing should follow the OK packet; were it there, it would be compressed.
        inbuf.extend_from_slice(&self.buf[self.start..self.end]);
        self.start = 0;
        self.end = 0;
        self.comp = Some(Box::new(Compressed {
            codec,
            inbuf,
            pkt: Vec::with_capacity(4096),
            enc: BytesMut::with_capacity(4096),
        }));
    }

    /// The same exchange over a new stream made of the old (TLS after the SSL request):
    /// the sequence goes on.
    pub fn upgrade(
        self,
        f: impl FnOnce(Stream) -> Result<Stream, WireError>,
    ) -> Result<Wire, WireError> {
        // Bytes the server sent before the handshake would be taken as protected.
        if self.start != self.end {
            return Err(WireError::protocol("data before the TLS handshake"));
        }
        let Wire {
            io,
            max_allowed_packet,
            buf,
            start,
            end,
            big,
            seq,
            comp,
            out,
        } = self;
        Ok(Wire {
            io: f(io)?,
            max_allowed_packet,
            buf,
            start,
            end,
            big,
            seq,
            comp,
            out,
        })
    }

    /// The next packet's payload: in place in the read buffer, or reassembled when it came
    /// in several chunks (16 MiB and more). It stays valid until the next read.
    #[inline]
    pub fn read_packet(&mut self) -> Result<&[u8], WireError> {
        // A whole packet already buffered, as a result set's rows mostly are.
        if self.comp.is_none() && self.end - self.start >= HEADER {
            let h = &self.buf[self.start..self.start + HEADER];
            let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
            let at = self.start + HEADER;
            if h[3] == self.seq
                && len < MAX_CHUNK
                && len <= self.max_allowed_packet
                && at + len <= self.end
            {
                self.seq = self.seq.wrapping_add(1);
                self.start = at + len;
                return Ok(&self.buf[at..at + len]);
            }
        }
        self.read_packet_slow()
    }

    /// [`Wire::read_packet`] when the packet is not wholly buffered (or is compressed, out
    /// of sequence, or too large).
    #[inline(never)]
    fn read_packet_slow(&mut self) -> Result<&[u8], WireError> {
        if self.comp.is_some() {
            return self.read_compressed();
        }
        let mut len = self.header()?;
        if len < MAX_CHUNK {
            self.fill(len)?;
            let at = self.start;
            self.start += len;
            return Ok(&self.buf[at..at + len]);
        }
        self.big.clear();
        loop {
            if self.big.len() + len > self.max_allowed_packet {
                return Err(too_large());
            }
            self.chunk_into_big(len)?;
            if len < MAX_CHUNK {
                return Ok(&self.big);
            }
            len = self.header()?;
        }
    }

    /// The next chunk's header, its sequence id checked: the length of its payload.
    fn header(&mut self) -> Result<usize, WireError> {
        self.fill(HEADER)?;
        let h = &self.buf[self.start..self.start + HEADER];
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        if h[3] != self.seq {
            return Err(WireError::protocol(format!(
                "packets out of order: sequence id {} where {} was due",
                h[3], self.seq
            )));
        }
        if len > self.max_allowed_packet {
            return Err(too_large());
        }
        self.seq = self.seq.wrapping_add(1);
        self.start += HEADER;
        Ok(len)
    }

    /// Read until at least `need` bytes are buffered and not handed out.
    fn fill(&mut self, need: usize) -> Result<(), WireError> {
        while self.end - self.start < need {
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            } else if self.start > 0
                && (self.start + need > self.buf.len() || self.buf.len() - self.end < MIN_READ)
            {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if need > self.buf.len() {
                self.buf.resize(need.next_power_of_two(), 0);
            }
            match self.io.read(&mut self.buf[self.end..])? {
                0 => return Err(closed()),
                n => self.end += n,
            }
        }
        Ok(())
    }

    /// A chunk's `len` bytes of payload appended to `big`: what is buffered, then the rest
    /// read straight into place.
    fn chunk_into_big(&mut self, len: usize) -> Result<(), WireError> {
        let have = (self.end - self.start).min(len);
        self.big
            .extend_from_slice(&self.buf[self.start..self.start + have]);
        self.start += have;
        let mut at = self.big.len();
        let end = at + (len - have);
        self.big.resize(end, 0);
        while at < end {
            match self.io.read(&mut self.big[at..end])? {
                0 => return Err(closed()),
                n => at += n,
            }
        }
        Ok(())
    }

    fn read_compressed(&mut self) -> Result<&[u8], WireError> {
        let Wire { io, buf, comp, .. } = self;
        let Some(c) = comp.as_deref_mut() else {
            unreachable!("read_compressed is called with the compressed protocol on");
        };
        c.pkt.clear();
        while !c.codec.decode(&mut c.inbuf, &mut c.pkt)? {
            match io.read(buf)? {
                0 => return Err(closed()),
                n => c.inbuf.extend_from_slice(&buf[..n]),
            }
        }
        Ok(&c.pkt)
    }

    /// Start a command: the sequence starts again at 0, and its payload is built in the
    /// buffer returned (sent by [`Wire::send_built`]).
    pub fn command(&mut self) -> &mut Vec<u8> {
        self.seq = 0;
        if let Some(c) = &mut self.comp {
            c.codec.reset_seq_id();
        }
        self.start_packet()
    }

    /// The buffer to build the next packet of the exchange in.
    fn start_packet(&mut self) -> &mut Vec<u8> {
        self.out.clear();
        self.out.extend_from_slice(&[0; HEADER]);
        &mut self.out
    }

    /// Send `payload` as the exchange's next packet (the handshake's, authentication
    /// answers).
    pub fn send(&mut self, payload: &[u8]) -> Result<(), WireError> {
        self.start_packet().extend_from_slice(payload);
        self.send_built()
    }

    /// Send the packet built behind its header's room: one write, its header filled in
    /// place (a payload of 16 MiB or more goes as chunks).
    pub fn send_built(&mut self) -> Result<(), WireError> {
        let len = self.out.len() - HEADER;
        if len > self.max_allowed_packet {
            return Err(too_large());
        }
        if let Some(c) = &mut self.comp {
            c.enc.clear();
            c.codec.encode(&mut &self.out[HEADER..], &mut c.enc)?;
            return Ok(self.io.write_all(&c.enc)?);
        }
        if len < MAX_CHUNK {
            self.out[..HEADER].copy_from_slice(&header(len, self.seq));
            self.seq = self.seq.wrapping_add(1);
            return Ok(self.io.write_all(&self.out)?);
        }
        // Chunks of MAX_CHUNK; the last is shorter, empty when the payload is a multiple.
        let mut rest = &self.out[HEADER..];
        loop {
            let n = rest.len().min(MAX_CHUNK);
            self.io.write_all(&header(n, self.seq))?;
            self.seq = self.seq.wrapping_add(1);
            self.io.write_all(&rest[..n])?;
            rest = &rest[n..];
            if n < MAX_CHUNK {
                return Ok(());
            }
        }
    }
}

/// A chunk's header: its length (3 bytes, little-endian) and sequence id.
fn header(len: usize, seq: u8) -> [u8; HEADER] {
    let l = (len as u32).to_le_bytes();
    [l[0], l[1], l[2], seq]
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    use super::*;
    use crate::sock::Socket;

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = header(payload.len(), seq).to_vec();
        p.extend_from_slice(payload);
        p
    }

    /// A wire whose server end writes `parts` in turn, pausing between them so that each
    /// arrives on its own.
    fn served(parts: Vec<Vec<u8>>) -> (Wire, std::thread::JoinHandle<UnixStream>) {
        let (a, mut b) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            for p in parts {
                b.write_all(&p).unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
            b
        });
        (Wire::new(Stream::Plain(Socket::Unix(a)), 1 << 30), server)
    }

    #[test]
    fn packets_split_across_reads_and_larger_than_the_buffer_come_whole() {
        let row = vec![7u8; READ_CHUNK * 2 + 3];
        let mut wire = packet(0, b"abc");
        wire.extend(packet(1, &row));
        wire.extend(packet(2, b""));
        wire.extend(packet(3, b"last"));
        // Cut inside a header and inside a payload.
        let parts = vec![
            wire[..2].to_vec(),
            wire[2..100].to_vec(),
            wire[100..].to_vec(),
        ];
        let (mut w, server) = served(parts);
        assert_eq!(w.read_packet().unwrap(), b"abc");
        assert_eq!(w.read_packet().unwrap(), &row[..]);
        assert_eq!(w.read_packet().unwrap(), b"");
        assert_eq!(w.read_packet().unwrap(), b"last");
        drop(server.join().unwrap());
        match w.read_packet() {
            Err(WireError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn packets_of_16_mib_and_more_are_reassembled_from_their_chunks() {
        let long: Vec<u8> = (0..MAX_CHUNK + 10).map(|i| (i % 251) as u8).collect();
        let exact: Vec<u8> = (0..MAX_CHUNK).map(|i| (i % 13) as u8).collect();
        let mut wire = packet(0, &long[..MAX_CHUNK]);
        wire.extend(packet(1, &long[MAX_CHUNK..]));
        wire.extend(packet(2, &exact));
        wire.extend(packet(3, b""));
        wire.extend(packet(4, b"after"));
        let parts = wire.chunks(1 << 20).map(<[u8]>::to_vec).collect();
        let (mut w, server) = served(parts);
        assert_eq!(w.read_packet().unwrap(), &long[..]);
        assert_eq!(w.read_packet().unwrap(), &exact[..]);
        assert_eq!(w.read_packet().unwrap(), b"after");
        server.join().unwrap();
    }

    #[test]
    fn a_packet_out_of_sequence_or_over_the_limit_is_refused() {
        let (mut w, server) = served(vec![packet(5, b"x")]);
        let e = w.read_packet().unwrap_err();
        assert!(e.is_connectivity());
        assert_eq!(
            e.to_string(),
            "packets out of order: sequence id 5 where 0 was due"
        );
        server.join().unwrap();
        let (a, _b) = UnixStream::pair().unwrap();
        let mut w = Wire::new(Stream::Plain(Socket::Unix(a)), 10);
        w.command().extend_from_slice(&[1; 11]);
        assert_eq!(w.send_built().unwrap_err().to_string(), "packet too large");
    }

    #[test]
    fn a_request_of_16_mib_and_more_goes_in_chunks() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let payload: Vec<u8> = (0..2 * MAX_CHUNK).map(|i| (i % 7) as u8).collect();
        let expected = {
            let mut e = packet(0, &payload[..MAX_CHUNK]);
            e.extend(packet(1, &payload[MAX_CHUNK..]));
            e.extend(packet(2, b""));
            e.extend(packet(0, b"\x0e"));
            e
        };
        let reader = std::thread::spawn(move || {
            let mut got = vec![0u8; expected.len()];
            b.read_exact(&mut got).unwrap();
            assert!(got == expected, "the chunks differ");
        });
        let mut w = Wire::new(Stream::Plain(Socket::Unix(a)), 1 << 30);
        w.command().extend_from_slice(&payload);
        w.send_built().unwrap();
        w.command().push(0x0e);
        w.send_built().unwrap();
        reader.join().unwrap();
    }
}
