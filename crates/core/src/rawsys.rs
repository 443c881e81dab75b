//! The system calls of the hot loops (file data, database sockets), made with `syscall(2)`
//! directly.
//!
//! glibc's `read`, `write`, `pread` and friends are thread cancellation points: in a process
//! with more than one thread each call brackets the system call with two atomic updates of
//! the thread's cancellation state. plumb never cancels a thread, so its workers skip them
//! (single-threaded GNU dd and fio's job processes never pay them either).

use std::os::fd::RawFd;

/// read(2): bytes read, or -1 with errno set.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn read(fd: RawFd, buf: *mut u8, len: usize) -> isize {
    unsafe { libc::syscall(libc::SYS_read, fd, buf, len) as isize }
}

/// write(2): bytes written, or -1 with errno set.
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn write(fd: RawFd, buf: *const u8, len: usize) -> isize {
    unsafe { libc::syscall(libc::SYS_write, fd, buf, len) as isize }
}

/// pread64(2).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn pread(fd: RawFd, buf: *mut u8, len: usize, offset: i64) -> isize {
    unsafe { libc::syscall(libc::SYS_pread64, fd, buf, len, offset) as isize }
}

/// pwrite64(2).
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn pwrite(fd: RawFd, buf: *const u8, len: usize, offset: i64) -> isize {
    unsafe { libc::syscall(libc::SYS_pwrite64, fd, buf, len, offset) as isize }
}

/// readv(2).
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for writes.
#[inline]
pub unsafe fn readv(fd: RawFd, iov: *const libc::iovec, cnt: i32) -> isize {
    unsafe { libc::syscall(libc::SYS_readv, fd, iov, cnt) as isize }
}

/// writev(2).
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for reads.
#[inline]
pub unsafe fn writev(fd: RawFd, iov: *const libc::iovec, cnt: i32) -> isize {
    unsafe { libc::syscall(libc::SYS_writev, fd, iov, cnt) as isize }
}

/// preadv(2); on a 64-bit kernel the offset's high half is the second argument and 0.
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for writes.
#[inline]
pub unsafe fn preadv(fd: RawFd, iov: *const libc::iovec, cnt: i32, offset: i64) -> isize {
    unsafe { libc::syscall(libc::SYS_preadv, fd, iov, cnt, offset, 0) as isize }
}

/// pwritev(2), as [`preadv`].
///
/// # Safety
/// `iov` must point to `cnt` iovecs over buffers valid for reads.
#[inline]
pub unsafe fn pwritev(fd: RawFd, iov: *const libc::iovec, cnt: i32, offset: i64) -> isize {
    unsafe { libc::syscall(libc::SYS_pwritev, fd, iov, cnt, offset, 0) as isize }
}

/// send(2) as `sendto` without an address (what glibc's `send` makes).
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn send(fd: RawFd, buf: *const u8, len: usize, flags: i32) -> isize {
    unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd,
            buf,
            len,
            flags,
            std::ptr::null::<libc::sockaddr>(),
            0usize,
        ) as isize
    }
}

/// recv(2) as `recvfrom` without an address (what glibc's `recv` makes).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn recv(fd: RawFd, buf: *mut u8, len: usize, flags: i32) -> isize {
    unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd,
            buf,
            len,
            flags,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        ) as isize
    }
}

/// poll(2): ready descriptors, 0 on timeout, or -1 with errno set.
///
/// # Safety
/// `fds` must point to `n` pollfds.
#[inline]
pub unsafe fn poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout_ms: i32) -> i32 {
    unsafe { libc::syscall(libc::SYS_poll, fds, n, timeout_ms) as i32 }
}
