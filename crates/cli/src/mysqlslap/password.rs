//! `-p` without a value: mysqlslap asks for the password on the terminal. plumb does the
//! same when there is a terminal to ask on (stdin is one); without one it refuses, since a
//! password read from a pipe is one nobody typed.

use std::io::{BufRead, IsTerminal, Write};
use std::os::fd::AsRawFd;

/// Ask on the terminal, echo off; `None` when stdin is not a terminal.
pub fn prompt() -> Option<std::io::Result<String>> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    Some(read_without_echo())
}

fn read_without_echo() -> std::io::Result<String> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data filled by tcgetattr before use; fd is open for the
    // lifetime of `tty`.
    let saved = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(fd, &mut t) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let saved = t;
        t.c_lflag &= !libc::ECHO;
        libc::tcsetattr(fd, libc::TCSANOW, &t);
        saved
    };
    let mut err = std::io::stderr();
    let _ = write!(err, "Enter password: ");
    let _ = err.flush();
    let mut line = String::new();
    let r = std::io::BufReader::new(&tty).read_line(&mut line);
    // SAFETY: restores the settings read above on the same open fd.
    unsafe {
        libc::tcsetattr(fd, libc::TCSANOW, &saved);
    }
    let _ = writeln!(err);
    r?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}
