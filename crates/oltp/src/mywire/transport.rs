//! The socket under a connection: Unix or TCP, plain or TLS. Every read waits in poll(2)
//! for POLLIN first: a thread asleep in poll() is not woken by the write-space wakeup the
//! server's read of our request causes on a Unix socket, one asleep in recv() is (and
//! then sleeps again at once, a second pair of context switches per query).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use rustls::{ClientConnection, StreamOwned};

/// An unencrypted socket.
pub enum Plain {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Read for Plain {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Plain::Unix(s) => s.read(buf),
            Plain::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Plain {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Plain::Unix(s) => s.write(buf),
            Plain::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsRawFd for Plain {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Plain::Unix(s) => s.as_raw_fd(),
            Plain::Tcp(s) => s.as_raw_fd(),
        }
    }
}

pub enum Transport {
    Plain(Plain),
    Tls(Box<StreamOwned<ClientConnection, Plain>>),
}

impl Transport {
    /// Read what is there (at least one byte, or 0 at the end of the stream), waiting for
    /// it in poll(2).
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => {
                wait_readable(s.as_raw_fd())?;
                retry(|| s.read(buf))
            }
            Transport::Tls(t) => loop {
                // Plain text rustls already holds needs no wait (poll would sleep on it).
                match t.conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    other => return other,
                }
                wait_readable(t.sock.as_raw_fd())?;
                let StreamOwned { conn, sock } = &mut **t;
                retry(|| conn.read_tls(sock))?;
                let state = conn.process_new_packets();
                // An alert for the server, or a key update's answer.
                flush_tls(conn, sock)?;
                state.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            },
        }
    }

    /// Write all of `buf`: one write(2) for a request of usual size.
    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.write_all(buf),
            Transport::Tls(t) => {
                let StreamOwned { conn, sock } = &mut **t;
                conn.writer().write_all(buf)?;
                flush_tls(conn, sock)
            }
        }
    }
}

fn flush_tls(conn: &mut ClientConnection, sock: &mut Plain) -> io::Result<()> {
    while conn.wants_write() {
        retry(|| conn.write_tls(sock))?;
    }
    Ok(())
}

/// `f` again for as long as a signal interrupts it.
fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Sleep until `fd` has something to read (or an error or hang-up, which the read then
/// reports).
fn wait_readable(fd: RawFd) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, -1) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
