//! The socket under both database clients ([`crate::mywire`], [`crate::pgwire`]): a Unix or
//! TCP stream socket, in plain text or under rustls.
//!
//! Its system calls are `plumb_core::rawsys`'s: glibc's `recv`, `send` and `poll` are thread
//! cancellation points, each wrapped in two atomic updates of the thread's cancellation
//! state in a multi-threaded process, and a statement makes two or three of them.
//!
//! **When a read polls first.** A reader asleep in a blocking recv() on a Unix socket is also
//! woken when the server merely takes our request off the socket: the kernel's write-space
//! wakeup (`unix_write_space`) wakes every sleeper on the socket, and a blocking reader's
//! wait entry has no event filter, so it wakes, finds nothing and sleeps again, a second
//! pair of context switches per statement. A thread asleep in poll(2) for POLLIN is not
//! woken by it (poll's wait entry filters on the event), so a read of a Unix socket polls
//! first, as libpq and libmariadb wait (docs/performance.md, "Why MariaDB over its socket
//! misses"). TCP has no such wakeup: its write-space callback runs only for a writer that
//! ran out of send buffer (`SOCK_NOSPACE`), so a TCP read goes straight to recv() and the
//! poll's system call is saved. Measured with both clients: one voluntary context switch per
//! statement either way over TCP (`/usr/bin/time`'s count over 18 000 point selects).

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use plumb_core::rawsys;
use rustls::{ClientConnection, StreamOwned};

/// A TCP connection that could not be opened: every address of the name tried, in order,
/// with what the system said of each (never empty). It shows as the last one's error alone.
#[derive(Debug)]
pub struct TcpFailed {
    pub tried: Vec<(std::net::SocketAddr, io::Error)>,
}

impl std::fmt::Display for TcpFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.tried.last() {
            Some((_, e)) => e.fmt(f),
            None => f.write_str("no address tried"),
        }
    }
}

impl std::error::Error for TcpFailed {}

/// A host name the resolver could not turn into an address: its message as the standard
/// library words it.
#[derive(Debug)]
pub struct Unresolved(pub String);

impl Unresolved {
    /// The resolver's own words (glibc's gai_strerror), without the standard library's
    /// preamble.
    pub fn resolver_words(&self) -> &str {
        self.0
            .strip_prefix("failed to lookup address information: ")
            .unwrap_or(&self.0)
    }
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unresolved {}

/// A connected stream socket, in plain text.
pub enum Socket {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Socket {
    /// The server's Unix socket at `path`.
    pub fn unix(path: impl AsRef<Path>) -> io::Result<Socket> {
        UnixStream::connect(path).map(Socket::Unix)
    }

    /// A TCP connection to the first address of `host` that answers, each given `timeout`
    /// (the system's own when none). Nagle's algorithm is off: a statement goes out in one
    /// write that must not wait for the previous one's ACK.
    /// A failure lists the addresses tried ([`TcpFailed`]), or says that the name did not
    /// resolve ([`Unresolved`]), for messages worded as a client library's.
    pub fn tcp(host: &str, port: u16, timeout: Option<Duration>) -> io::Result<Socket> {
        let mut tried = Vec::new();
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| io::Error::new(e.kind(), Unresolved(e.to_string())))?;
        for addr in addrs {
            let s = match timeout {
                Some(t) => TcpStream::connect_timeout(&addr, t),
                None => TcpStream::connect(addr),
            };
            match s {
                Ok(s) => {
                    s.set_nodelay(true)?;
                    return Ok(Socket::Tcp(s));
                }
                Err(error) => tried.push((addr, error)),
            }
        }
        Err(match tried.last() {
            Some((_, e)) => io::Error::new(e.kind(), TcpFailed { tried }),
            None => io::Error::new(io::ErrorKind::NotFound, format!("no address for {host}")),
        })
    }

    /// The local process at the other end: the process that listens on the server's Unix
    /// socket (SO_PEERCRED), or the one that serves a TCP connection to this host, or its
    /// listening ancestor ([`crate::peer::tcp_server`]: a scan of /proc, for once per
    /// plan, not per statement). None for a server on another host, or one whose process
    /// /proc does not show to this user.
    pub fn peer_pid(&self) -> Option<u32> {
        let s = match self {
            Socket::Unix(s) => s,
            Socket::Tcp(t) => {
                let (local, peer) = (t.local_addr().ok()?, t.peer_addr().ok()?);
                return crate::peer::tcp_server(Path::new("/proc"), local, peer);
            }
        };
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` and `len` are valid out-parameters of the size passed.
        let r = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        (r == 0 && cred.pid > 0).then_some(cred.pid as u32)
    }

    fn fd(&self) -> RawFd {
        match self {
            Socket::Unix(s) => s.as_raw_fd(),
            Socket::Tcp(s) => s.as_raw_fd(),
        }
    }

    /// What has arrived (at least one byte, or 0 at the end of the stream), waiting for it:
    /// in poll(2) first on a Unix socket, in recv(2) on TCP.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.fd();
        if matches!(self, Socket::Unix(_)) {
            wait_readable(fd)?;
        }
        loop {
            // SAFETY: `buf` is valid for writes of its length for the duration of the call.
            let n = unsafe { rawsys::recv(fd, buf.as_mut_ptr(), buf.len(), 0) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// One send(2) of what the socket takes of `buf` (MSG_NOSIGNAL: a closed peer is an
    /// error, not a SIGPIPE).
    pub fn send(&mut self, buf: &[u8]) -> io::Result<usize> {
        let fd = self.fd();
        loop {
            // SAFETY: `buf` is valid for reads of its length for the duration of the call.
            let n = unsafe { rawsys::send(fd, buf.as_ptr(), buf.len(), libc::MSG_NOSIGNAL) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// All of `buf`: one send(2) for a request of usual size.
    pub fn send_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.send(buf)? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }
}

/// For rustls (`read_tls`, `write_tls`, the handshake's `complete_io`).
impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv(buf)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sleep until `fd` has something to read, or an error or hang-up (which the read that
/// follows reports).
fn wait_readable(fd: RawFd) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, owned by this frame, for the duration of the call.
        let r = unsafe { rawsys::poll(&mut p, 1, -1) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A connection's byte stream: the socket itself, or TLS over it.
pub enum Stream {
    Plain(Socket),
    Tls(Box<StreamOwned<ClientConnection, Socket>>),
}

impl Stream {
    /// What has arrived (at least one byte, or 0 at the end of the stream), waiting for it.
    /// Under TLS, plain text rustls already holds is handed out without a system call.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.recv(buf),
            Stream::Tls(t) => {
                let StreamOwned { conn, sock } = &mut **t;
                loop {
                    match conn.reader().read(buf) {
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        // Data, the peer's close_notify (Ok(0)), or its end without one
                        // (UnexpectedEof).
                        other => return other,
                    }
                    conn.read_tls(sock)?;
                    let state = conn.process_new_packets();
                    // An alert for the server, or a key update's answer.
                    flush_tls(conn, sock)?;
                    state.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
            }
        }
    }

    /// All of `buf`, sent before this returns: one send(2) for a request of usual size.
    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.send_all(buf),
            Stream::Tls(t) => {
                let StreamOwned { conn, sock } = &mut **t;
                // rustls takes plain text up to its buffer limit (64 KiB) at a time: a
                // larger request (prepare's 512 KiB inserts) goes out in turns.
                let mut rest = buf;
                loop {
                    let n = conn.writer().write(rest)?;
                    rest = &rest[n..];
                    flush_tls(conn, sock)?;
                    if rest.is_empty() {
                        return Ok(());
                    }
                    if n == 0 {
                        return Err(io::ErrorKind::WriteZero.into());
                    }
                }
            }
        }
    }

    /// The local process at the other end ([`Socket::peer_pid`]).
    pub fn peer_pid(&self) -> Option<u32> {
        match self {
            Stream::Plain(s) => s.peer_pid(),
            Stream::Tls(t) => t.sock.peer_pid(),
        }
    }

    /// The TLS session's server certificate (for SCRAM's channel binding).
    pub fn server_certificate(&self) -> Option<&[u8]> {
        match self {
            Stream::Tls(t) => t.conn.peer_certificates()?.first().map(|c| c.as_ref()),
            Stream::Plain(_) => None,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Stream::read(self, buf)
    }
}

fn flush_tls(conn: &mut ClientConnection, sock: &mut Socket) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(sock)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unix_pair_carries_bytes_both_ways_and_reports_the_end() {
        let (a, b) = UnixStream::pair().unwrap();
        let (mut a, mut b) = (Socket::Unix(a), Stream::Plain(Socket::Unix(b)));
        a.send_all(b"hello").unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(b.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        b.write_all(b"back").unwrap();
        assert_eq!(a.recv(&mut buf).unwrap(), 4);
        drop(a);
        assert_eq!(b.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn a_unix_or_local_tcp_peer_is_a_process() {
        let (a, _b) = UnixStream::pair().unwrap();
        // Both ends are this process.
        assert_eq!(Socket::Unix(a).peer_pid(), Some(std::process::id()));
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = Socket::tcp("127.0.0.1", port, None).unwrap();
        let t = Stream::Plain(t);
        // Not accepted yet: no process holds the server's end.
        assert_eq!(t.peer_pid(), None);
        let (_served, _) = l.accept().unwrap();
        assert_eq!(t.peer_pid(), Some(std::process::id()));
    }

    #[test]
    fn a_send_to_a_closed_peer_is_an_error_not_a_signal() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let e = Socket::Unix(a).send_all(b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}
