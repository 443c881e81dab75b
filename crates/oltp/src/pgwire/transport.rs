//! The byte stream under the protocol: a TCP or Unix socket, or TLS over TCP.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

use super::error::Error;

pub enum Transport {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Transport {
    /// `{dir}/.s.PGSQL.{port}`, as libpq names a server's socket in a directory.
    pub fn unix(dir: &str, port: u16) -> Result<Transport, Error> {
        UnixStream::connect(format!("{dir}/.s.PGSQL.{port}"))
            .map(Transport::Unix)
            .map_err(Error::Connect)
    }

    /// Every address the host resolves to in turn, each given `timeout` (none when zero, as
    /// libpq's connect_timeout=0).
    pub fn tcp(host: &str, port: u16, timeout: Duration) -> Result<TcpStream, Error> {
        let mut last = None;
        for addr in (host, port).to_socket_addrs().map_err(Error::Connect)? {
            let s = if timeout.is_zero() {
                TcpStream::connect(addr)
            } else {
                TcpStream::connect_timeout(&addr, timeout)
            };
            match s {
                Ok(s) => {
                    // Each statement goes out in one write that must not wait for an ACK.
                    s.set_nodelay(true).map_err(Error::Connect)?;
                    return Ok(s);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(Error::Connect(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, "no address for the host")
        })))
    }

    /// The TLS session's server certificate, for SCRAM's channel binding.
    pub fn server_certificate(&self) -> Option<&[u8]> {
        match self {
            Transport::Tls(t) => t.conn.peer_certificates()?.first().map(|c| c.as_ref()),
            _ => None,
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.read(buf),
            Transport::Unix(s) => {
                readable(s)?;
                s.read(buf)
            }
            Transport::Tls(s) => s.read(buf),
        }
    }
}

/// Waits until `s` has data (or is closed). A reader asleep in a blocking recv on a Unix
/// socket is also woken when the server merely consumes the request (the kernel's
/// write-space wakeup carries no event filter), finds nothing and sleeps again: one
/// context switch more per statement. poll's wait entry filters that wakeup out, which is
/// how libpq and libmariadb wait; see docs/performance.md, session 5. TCP has no such
/// wakeup, so it reads directly.
fn readable(s: &UnixStream) -> io::Result<()> {
    let mut fd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, owned by this frame, for the duration of the call.
        let n = unsafe { libc::poll(&mut fd, 1, -1) };
        if n >= 0 {
            // Data, a hang-up or an error: the read that follows reports which.
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.write(buf),
            Transport::Unix(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Tcp(_) | Transport::Unix(_) => Ok(()),
            // rustls's write hides the socket's error until the next call: flush surfaces it.
            Transport::Tls(s) => s.flush(),
        }
    }
}
