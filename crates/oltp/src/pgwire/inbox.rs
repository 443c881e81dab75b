//! The buffered reader of backend messages: one read usually brings a statement's whole
//! reply (BindComplete, DataRows, CommandComplete, ReadyForQuery), and each message is
//! handed out as a slice of the buffer, never copied.

use std::io::{ErrorKind, Read};
use std::ops::Range;

use super::error::Error;

/// Large enough for a point select's or a range's whole reply in one read.
const START: usize = 64 * 1024;
/// No message plumb asks for comes near this; a larger length means a desynchronised stream.
const MAX_MESSAGE: usize = 1 << 30;

pub struct Inbox {
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox {
            buf: vec![0; START],
            start: 0,
            end: 0,
        }
    }
}

impl Inbox {
    /// The next message: its type byte and its body (after the length). Messages that may
    /// come at any time and tell plumb nothing (NoticeResponse, ParameterStatus,
    /// NotificationResponse) are skipped.
    #[inline(always)]
    pub fn next<R: Read>(&mut self, io: &mut R) -> Result<(u8, &[u8]), Error> {
        loop {
            let (tag, body) = match self.buffered() {
                Some(m) => m,
                None => self.frame(io)?,
            };
            if !matches!(tag, b'N' | b'S' | b'A') {
                return Ok((tag, &self.buf[body]));
            }
        }
    }

    /// The next message when it is whole in the buffer, as a statement's reply mostly is:
    /// its type byte and where its body is.
    #[inline(always)]
    fn buffered(&mut self) -> Option<(u8, Range<usize>)> {
        if self.end - self.start < 5 {
            return None;
        }
        let head = &self.buf[self.start..self.start + 5];
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let end = self.start + 1 + len;
        if !(4..=MAX_MESSAGE).contains(&len) || end > self.end {
            return None;
        }
        let tag = head[0];
        let body = self.start + 5..end;
        self.start = end;
        Some((tag, body))
    }

    /// The next message's type byte and where its body is in the buffer, read as needed.
    #[inline(never)]
    fn frame<R: Read>(&mut self, io: &mut R) -> Result<(u8, Range<usize>), Error> {
        self.fill(io, 5)?;
        let head = &self.buf[self.start..self.start + 5];
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if !(4..=MAX_MESSAGE).contains(&len) {
            return Err(Error::Protocol("invalid message length"));
        }
        let tag = head[0];
        self.fill(io, 1 + len)?;
        let body = self.start + 5..self.start + 1 + len;
        self.start += 1 + len;
        Ok((tag, body))
    }

    /// Exactly `n` bytes, outside the message framing (the answer to an SSLRequest).
    pub fn raw<R: Read>(&mut self, io: &mut R, n: usize) -> Result<&[u8], Error> {
        self.fill(io, n)?;
        let at = self.start;
        self.start += n;
        Ok(&self.buf[at..at + n])
    }

    /// Whether bytes the server sent are still unread.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Reads until `need` unread bytes are buffered.
    fn fill<R: Read>(&mut self, io: &mut R, need: usize) -> Result<(), Error> {
        while self.end - self.start < need {
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            } else if self.start + need > self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if need > self.buf.len() {
                self.buf.resize(need.next_power_of_two(), 0);
            }
            match io.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(Error::Closed),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // rustls reports a peer that closed without close_notify this way.
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Err(Error::Closed),
                Err(e) => return Err(Error::Io(e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its bytes a few at a time, as a socket may.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0.drain(..n);
            Ok(n)
        }
    }

    fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn messages_split_across_reads_and_larger_than_the_buffer_come_whole() {
        let big = vec![7u8; START * 3 + 5];
        let mut wire = msg(b'D', b"abc");
        wire.extend(msg(b'N', b"SNOTICE\0\0"));
        wire.extend(msg(b'D', &big));
        wire.extend(msg(b'Z', b"I"));
        let mut io = Trickle(wire, 1000);
        let mut inbox = Inbox::default();
        assert_eq!(inbox.next(&mut io).unwrap(), (b'D', &b"abc"[..]));
        let (tag, body) = inbox.next(&mut io).unwrap();
        assert_eq!((tag, body.len()), (b'D', big.len()));
        assert!(body.iter().all(|&b| b == 7));
        assert_eq!(inbox.next(&mut io).unwrap(), (b'Z', &b"I"[..]));
        assert!(inbox.is_empty());
        assert!(matches!(inbox.next(&mut io), Err(Error::Closed)));
    }

    #[test]
    fn a_length_below_four_is_a_protocol_error() {
        let mut io = Trickle(vec![b'Z', 0, 0, 0, 2, 0], 100);
        assert!(matches!(
            Inbox::default().next(&mut io),
            Err(Error::Protocol(_))
        ));
    }
}
