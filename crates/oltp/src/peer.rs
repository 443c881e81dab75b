//! The local process at the other end of a TCP connection.
//!
//! The kernel names a Unix socket's peer (SO_PEERCRED) but not a TCP one's. For a server on
//! this host, though, the server's end of the connection is a socket in this network
//! namespace's `/proc/net/tcp` (or `tcp6`): its local address is our peer, its remote
//! address is our local address, and its inode names it among the processes' open files
//! (`/proc/PID/fd/N` → `socket:[INODE]`). One scan of `/proc/*/fd` finds it: done once per
//! plan, never per statement.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// TCP_LISTEN in the `st` column.
const LISTEN: u8 = 0x0A;

/// How far up its ancestors the listener of a served connection is looked for: a server
/// forks its connection's process directly (PostgreSQL) or not at all (MariaDB); a few
/// levels cover the rest, and a fixture with a loop of parents ends.
const MAX_ANCESTORS: usize = 8;

/// The process serving the TCP connection from `local` to `peer`, read from the proc file
/// system at `proc`: the one listening on `peer` when that is the serving process or one of
/// its ancestors (PostgreSQL's postmaster forks a backend for each connection, and the
/// baseline leaves out the server with its descendants), else the serving process itself.
/// This is what SO_PEERCRED reports over a Unix socket (the listener's process).
///
/// None when the peer is not on this host (no socket of this namespace matches), or when
/// `/proc` does not show which process holds the socket (another user's process, whose fds
/// only a privileged reader may see).
pub(crate) fn tcp_server(proc: &Path, local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local, peer) = (canonical(local), canonical(peer));
    let mut served = None;
    let mut listeners = HashSet::new();
    for table in ["net/tcp", "net/tcp6"] {
        // A host without IPv6 has no tcp6.
        let Ok(text) = std::fs::read_to_string(proc.join(table)) else {
            continue;
        };
        for e in text.lines().skip(1).filter_map(entry) {
            if e.inode == 0 {
                // A connection no process holds yet (in the accept queue) or any more
                // (TIME_WAIT).
                continue;
            }
            if e.local == peer && e.remote == local {
                served = Some(e.inode);
            } else if e.state == LISTEN
                && e.local.port() == peer.port()
                && (e.local.ip() == peer.ip() || e.local.ip().is_unspecified())
            {
                listeners.insert(e.inode);
            }
        }
    }
    let serving = holder(proc, served?)?;
    let mut p = serving;
    for _ in 0..MAX_ANCESTORS {
        if holds_any(proc, p, &listeners) {
            return Some(p);
        }
        match parent(proc, p) {
            // Never init: it holds the listeners of the services it starts per connection
            // (systemd's Accept=yes) and is every process's ancestor, so as "the server"
            // it would leave all the machine's load out of the baseline.
            Some(pp) if pp > 1 => p = pp,
            _ => break,
        }
    }
    Some(serving)
}

/// One socket of a `/proc/net/tcp` table.
#[derive(Debug, PartialEq)]
struct Entry {
    local: SocketAddr,
    remote: SocketAddr,
    state: u8,
    inode: u64,
}

/// A line of `/proc/net/tcp` or `tcp6`:
/// `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...`.
fn entry(line: &str) -> Option<Entry> {
    let f: Vec<&str> = line.split_whitespace().take(10).collect();
    if f.len() < 10 {
        return None;
    }
    Some(Entry {
        local: canonical(address(f[1])?),
        remote: canonical(address(f[2])?),
        state: u8::from_str_radix(f[3], 16).ok()?,
        inode: f[9].parse().ok()?,
    })
}

/// `ADDR:PORT` in the kernel's hex: the port in host order, the address as the 32-bit words
/// of its network-order bytes, each printed as the host reads it (`0100007F` is 127.0.0.1
/// on a little-endian machine).
fn address(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for (i, chunk) in b.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// An IPv4 client of a dual-stack listener shows as `::ffff:a.b.c.d` in `tcp6`, and a
/// socket address may carry a v6 scope: compare the plain address and port.
fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

/// The first process found holding socket `inode` open.
fn holder(proc: &Path, inode: u64) -> Option<u32> {
    let wanted = HashSet::from([inode]);
    std::fs::read_dir(proc)
        .ok()?
        .filter_map(|d| d.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|&pid| holds_any(proc, pid, &wanted))
}

/// Whether process `pid` holds one of the sockets `inodes` open. Its fds are unreadable to
/// another user without privilege: then it holds none that we can see.
fn holds_any(proc: &Path, pid: u32, inodes: &HashSet<u64>) -> bool {
    if inodes.is_empty() {
        return false;
    }
    let Ok(fds) = std::fs::read_dir(proc.join(format!("{pid}/fd"))) else {
        return false;
    };
    fds.filter_map(|d| std::fs::read_link(d.ok()?.path()).ok())
        .filter_map(|target| {
            let t = target.to_str()?;
            t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .any(|inode: u64| inodes.contains(&inode))
}

/// The parent process of `pid` (`PPid:` of its status).
fn parent(proc: &Path, pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(proc.join(format!("{pid}/status"))).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    fn real() -> &'static Path {
        Path::new("/proc")
    }

    #[test]
    fn a_connection_to_a_listener_of_this_process_is_served_by_this_process() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        // Accepted: until then no process holds the server's end.
        let (_served, _) = l.accept().unwrap();
        let (local, peer) = (c.local_addr().unwrap(), c.peer_addr().unwrap());
        assert_eq!(tcp_server(real(), local, peer), Some(std::process::id()));
        // The kernel's own table names the server's end with our addresses reversed.
        let text = std::fs::read_to_string("/proc/net/tcp").unwrap();
        assert!(text
            .lines()
            .filter_map(entry)
            .any(|e| e.local == peer && e.remote == local && e.inode != 0));
    }

    #[test]
    fn a_peer_not_on_this_host_or_not_accepted_has_no_process() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let local = c.local_addr().unwrap();
        // Still in the accept queue: connected, but no process holds the server's end.
        assert_eq!(tcp_server(real(), local, c.peer_addr().unwrap()), None);
        // TEST-NET-1: no socket of this host has that address.
        let remote: SocketAddr = "192.0.2.1:3306".parse().unwrap();
        assert_eq!(tcp_server(real(), local, remote), None);
        // No proc file system there at all.
        let none = tempfile::tempdir().unwrap();
        let (_s, _) = l.accept().unwrap();
        assert_eq!(tcp_server(none.path(), local, c.peer_addr().unwrap()), None);
    }

    /// The kernel's hex for a socket address on this machine.
    fn hex(a: SocketAddr) -> String {
        let words: Vec<String> = match a.ip() {
            IpAddr::V4(v4) => vec![v4.octets()],
            IpAddr::V6(v6) => v6
                .octets()
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
        }
        .into_iter()
        .map(|w| format!("{:08X}", u32::from_ne_bytes(w)))
        .collect();
        format!("{}:{:04X}", words.concat(), a.port())
    }

    fn line(local: &str, remote: &str, state: u8, inode: u64) -> String {
        let (l, r) = (local.parse().unwrap(), remote.parse().unwrap());
        format!(
            "   0: {} {} {state:02X} 00000000:00000000 00:00000000 00000000   106        0 {inode} 1 0000000000000000 100 0 0 10 0\n",
            hex(l),
            hex(r)
        )
    }

    /// A proc file system with these tables and processes: (pid, parent, socket inodes).
    fn fixture(tcp: &[String], tcp6: &[String], procs: &[(u32, u32, &[u64])]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
        std::fs::create_dir(d.path().join("net")).unwrap();
        std::fs::write(d.path().join("net/tcp"), head.to_string() + &tcp.concat()).unwrap();
        std::fs::write(d.path().join("net/tcp6"), head.to_string() + &tcp6.concat()).unwrap();
        for &(pid, ppid, inodes) in procs {
            let fd: PathBuf = d.path().join(format!("{pid}/fd"));
            std::fs::create_dir_all(&fd).unwrap();
            std::fs::write(
                d.path().join(format!("{pid}/status")),
                format!("Name:\tx\nPid:\t{pid}\nPPid:\t{ppid}\n"),
            )
            .unwrap();
            symlink("/dev/null", fd.join("0")).unwrap();
            for (n, i) in inodes.iter().enumerate() {
                symlink(format!("socket:[{i}]"), fd.join((n + 3).to_string())).unwrap();
            }
        }
        d
    }

    fn client() -> SocketAddr {
        "127.0.0.1:40000".parse().unwrap()
    }

    fn server() -> SocketAddr {
        "127.0.0.1:5432".parse().unwrap()
    }

    #[test]
    fn a_backend_forked_by_the_listener_is_served_for_by_the_listener() {
        // The postmaster (100) listens; its child 200 serves the connection.
        let tcp = [
            line("0.0.0.0:5432", "0.0.0.0:0", LISTEN, 5000),
            line("127.0.0.1:5432", "127.0.0.1:40000", 1, 6000),
            line("127.0.0.1:40000", "127.0.0.1:5432", 1, 7000),
        ];
        let d = fixture(&tcp, &[], &[(100, 1, &[5000]), (200, 100, &[6000])]);
        assert_eq!(tcp_server(d.path(), client(), server()), Some(100));
        // A listener on another port is no ancestor's: the serving process is the answer.
        let tcp = [
            line("0.0.0.0:5433", "0.0.0.0:0", LISTEN, 5000),
            tcp[1].clone(),
        ];
        let d = fixture(&tcp, &[], &[(100, 1, &[5000]), (200, 100, &[6000])]);
        assert_eq!(tcp_server(d.path(), client(), server()), Some(200));
    }

    #[test]
    fn init_holding_the_listener_is_never_the_server() {
        // Started per connection by init, which holds the listener.
        let tcp = [
            line("0.0.0.0:5432", "0.0.0.0:0", LISTEN, 5000),
            line("127.0.0.1:5432", "127.0.0.1:40000", 1, 6000),
        ];
        let d = fixture(&tcp, &[], &[(1, 0, &[5000]), (300, 1, &[6000])]);
        assert_eq!(tcp_server(d.path(), client(), server()), Some(300));
    }

    #[test]
    fn an_ipv4_client_of_a_dual_stack_listener_is_found_in_tcp6() {
        let tcp6 = [
            line("[::]:3306", "[::]:0", LISTEN, 5000),
            line(
                "[::ffff:127.0.0.1]:3306",
                "[::ffff:127.0.0.1]:40000",
                1,
                6000,
            ),
        ];
        let d = fixture(&[], &tcp6, &[(50, 1, &[5000, 6000])]);
        let server = "127.0.0.1:3306".parse().unwrap();
        assert_eq!(tcp_server(d.path(), client(), server), Some(50));
    }

    #[test]
    fn a_socket_no_readable_process_holds_is_no_server() {
        // The server's end exists, but no process shows it (another user's fds).
        let tcp = [line("127.0.0.1:5432", "127.0.0.1:40000", 1, 6000)];
        let d = fixture(&tcp, &[], &[(100, 1, &[5000])]);
        assert_eq!(tcp_server(d.path(), client(), server()), None);
        // TIME_WAIT: no inode, whoever held it.
        let tcp = [line("127.0.0.1:5432", "127.0.0.1:40000", 6, 0)];
        let d = fixture(&tcp, &[], &[(100, 1, &[0])]);
        assert_eq!(tcp_server(d.path(), client(), server()), None);
    }

    #[test]
    fn table_lines_that_are_not_sockets_are_skipped() {
        assert_eq!(entry("  sl  local_address rem_address   st"), None);
        assert_eq!(entry(""), None);
        assert_eq!(
            entry("0: 0100007F:ZZZZ 00000000:0000 0A 0:0 0:0 0 0 0 1"),
            None
        );
        assert_eq!(address("0100007:0CEA"), None);
        assert_eq!(address("0100007F"), None);
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn the_kernels_hex_reads_as_the_address_it_prints() {
        assert_eq!(
            address("0100007F:0CEA"),
            Some("127.0.0.1:3306".parse().unwrap())
        );
        assert_eq!(
            address("00000000000000000000000001000000:1538"),
            Some("[::1]:5432".parse().unwrap())
        );
    }
}
