//! The system calls of the hot loops (file data, database sockets), made directly.
//!
//! glibc's `read`, `write`, `pread` and friends are thread cancellation points: in a process
//! with more than one thread each call brackets the system call with two atomic updates of
//! the thread's cancellation state. plumb never cancels a thread, so its workers skip them
//! (single-threaded GNU dd and fio's job processes never pay them either). On x86-64 the
//! `syscall` instruction is issued inline: glibc's variadic `syscall(2)` is a function call
//! that shuffles all six argument registers and was 2.4% of a psync read of a cached 4 KiB
//! block (perf, docs/performance.md); elsewhere `syscall(2)` does it.

use std::os::fd::RawFd;

/// The raw kernel return (`-errno` on failure) as libc returns it: -1 with errno set.
#[inline(always)]
fn libc_style(r: isize) -> isize {
    if (-4095..0).contains(&r) {
        // SAFETY: errno is this thread's own int.
        unsafe { *libc::__errno_location() = -r as i32 };
        -1
    } else {
        r
    }
}

/// A system call with up to six arguments, as the kernel returns it.
///
/// # Safety
/// The arguments must be what the call `nr` expects (pointers valid for what it touches).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sys6(nr: libc::c_long, a: [usize; 6]) -> isize {
    let r: isize;
    // SAFETY: the x86-64 Linux system call convention: rax holds the number and the result,
    // rdi rsi rdx r10 r8 r9 the arguments; the kernel clobbers rcx and r11 only.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => r,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    r
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn sys6(nr: libc::c_long, a: [usize; 6]) -> isize {
    // SAFETY: as the caller promises; syscall(2) returns -1 with errno set, turned back
    // into the kernel's form so both paths share `libc_style`.
    let r = unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) as isize };
    if r == -1 {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as isize)
    } else {
        r
    }
}

/// `nr` with its arguments (unused ones 0): the result, or -1 with errno set.
///
/// # Safety
/// As [`sys6`].
#[inline(always)]
unsafe fn call(nr: libc::c_long, a: [usize; 6]) -> isize {
    libc_style(unsafe { sys6(nr, a) })
}

/// read(2): bytes read, or -1 with errno set.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn read(fd: RawFd, buf: *mut u8, len: usize) -> isize {
    unsafe { call(libc::SYS_read, [fd as usize, buf as usize, len, 0, 0, 0]) }
}

/// write(2): bytes written, or -1 with errno set.
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn write(fd: RawFd, buf: *const u8, len: usize) -> isize {
    unsafe { call(libc::SYS_write, [fd as usize, buf as usize, len, 0, 0, 0]) }
}

/// pread64(2).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn pread(fd: RawFd, buf: *mut u8, len: usize, offset: i64) -> isize {
    unsafe {
        call(
            libc::SYS_pread64,
            [fd as usize, buf as usize, len, offset as usize, 0, 0],
        )
    }
}

/// pwrite64(2).
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn pwrite(fd: RawFd, buf: *const u8, len: usize, offset: i64) -> isize {
    unsafe {
        call(
            libc::SYS_pwrite64,
            [fd as usize, buf as usize, len, offset as usize, 0, 0],
        )
    }
}

/// readv(2).
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for writes.
#[inline]
pub unsafe fn readv(fd: RawFd, iov: *const libc::iovec, cnt: i32) -> isize {
    unsafe {
        call(
            libc::SYS_readv,
            [fd as usize, iov as usize, cnt as usize, 0, 0, 0],
        )
    }
}

/// writev(2).
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for reads.
#[inline]
pub unsafe fn writev(fd: RawFd, iov: *const libc::iovec, cnt: i32) -> isize {
    unsafe {
        call(
            libc::SYS_writev,
            [fd as usize, iov as usize, cnt as usize, 0, 0, 0],
        )
    }
}

/// preadv(2); on a 64-bit kernel the offset's high half is the second argument and 0.
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for writes.
#[inline]
pub unsafe fn preadv(fd: RawFd, iov: *const libc::iovec, cnt: i32, offset: i64) -> isize {
    unsafe {
        call(
            libc::SYS_preadv,
            [
                fd as usize,
                iov as usize,
                cnt as usize,
                offset as usize,
                0,
                0,
            ],
        )
    }
}

/// pwritev(2), as [`preadv`].
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for reads.
#[inline]
pub unsafe fn pwritev(fd: RawFd, iov: *const libc::iovec, cnt: i32, offset: i64) -> isize {
    unsafe {
        call(
            libc::SYS_pwritev,
            [
                fd as usize,
                iov as usize,
                cnt as usize,
                offset as usize,
                0,
                0,
            ],
        )
    }
}

/// send(2) as `sendto` without an address (what glibc's `send` makes).
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn send(fd: RawFd, buf: *const u8, len: usize, flags: i32) -> isize {
    unsafe {
        call(
            libc::SYS_sendto,
            [fd as usize, buf as usize, len, flags as usize, 0, 0],
        )
    }
}

/// recv(2) as `recvfrom` without an address (what glibc's `recv` makes).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn recv(fd: RawFd, buf: *mut u8, len: usize, flags: i32) -> isize {
    unsafe {
        call(
            libc::SYS_recvfrom,
            [fd as usize, buf as usize, len, flags as usize, 0, 0],
        )
    }
}

/// poll(2): ready descriptors, 0 on timeout, or -1 with errno set.
///
/// # Safety
/// `fds` must point to `n` pollfds.
#[inline]
pub unsafe fn poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout_ms: i32) -> i32 {
    unsafe {
        call(
            libc::SYS_poll,
            [fds as usize, n as usize, timeout_ms as usize, 0, 0, 0],
        ) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap()
    }

    #[test]
    fn positional_calls_move_the_bytes_asked_at_the_offset_asked() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"0123456789").unwrap();
        let fd = f.as_raw_fd();
        let mut buf = [0u8; 4];
        assert_eq!(unsafe { pread(fd, buf.as_mut_ptr(), 4, 3) }, 4);
        assert_eq!(&buf, b"3456");
        assert_eq!(unsafe { pwrite(fd, b"ab".as_ptr(), 2, 8) }, 2);
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: 4,
        };
        assert_eq!(unsafe { preadv(fd, &iov, 1, 6) }, 4);
        assert_eq!(&buf, b"67ab");
        // A large offset keeps its high bits.
        assert_eq!(unsafe { pread(fd, buf.as_mut_ptr(), 4, 1 << 40) }, 0);
    }

    #[test]
    fn a_failed_call_returns_minus_one_with_errno_set() {
        let mut buf = [0u8; 4];
        assert_eq!(unsafe { read(-1, buf.as_mut_ptr(), 4) }, -1);
        assert_eq!(errno(), libc::EBADF);
        let f = tempfile::tempfile().unwrap();
        assert_eq!(unsafe { pread(f.as_raw_fd(), buf.as_mut_ptr(), 4, -1) }, -1);
        assert_eq!(errno(), libc::EINVAL);
        let mut p = libc::pollfd {
            fd: -1,
            events: libc::POLLIN,
            revents: 0,
        };
        // A negative descriptor is ignored by poll: nothing ready within 0 ms.
        assert_eq!(unsafe { poll(&mut p, 1, 0) }, 0);
    }

    #[test]
    fn sockets_send_and_receive() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(unsafe { send(a.as_raw_fd(), b"ping".as_ptr(), 4, 0) }, 4);
        let mut p = libc::pollfd {
            fd: b.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        assert_eq!(unsafe { poll(&mut p, 1, 1000) }, 1);
        let mut buf = [0u8; 8];
        assert_eq!(unsafe { recv(b.as_raw_fd(), buf.as_mut_ptr(), 8, 0) }, 4);
        assert_eq!(&buf[..4], b"ping");
        assert_eq!(
            unsafe { recv(b.as_raw_fd(), buf.as_mut_ptr(), 8, libc::MSG_DONTWAIT) },
            -1
        );
        assert_eq!(errno(), libc::EAGAIN);
    }
}
