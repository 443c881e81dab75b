//! Reading a `strace -f` log whole. When another thread's call comes in while one is in the
//! kernel, strace splits the first across two lines, `PID call(args <unfinished ...>` and
//! later `PID <... call resumed>rest) = result`; a test that reads calls line by line then
//! misses it (CI did, once, for a buffer's mmap). [`whole_calls`] joins each split call back
//! into one line, at the place it started, so the order a thread issued its calls is kept.

/// `trace` with every split call joined into one line as strace writes an unsplit one.
pub fn whole_calls(trace: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut pending: std::collections::HashMap<&str, usize> = Default::default();
    for line in trace.lines() {
        let pid = line.split_whitespace().next().unwrap_or("");
        if let Some(head) = line.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, lines.len());
            lines.push(head.to_string());
        } else if let Some((_, rest)) = line.split_once(" resumed>") {
            let rest = unpadded(rest);
            match pending.remove(pid) {
                Some(at) => lines[at].push_str(&rest),
                None => lines.push(format!("{pid} {rest}")),
            }
        } else {
            lines.push(line.to_string());
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A resumed part pads its short line before the result (`)          = 0x7f...`), which the
/// joined line, long already, would not have.
fn unpadded(rest: &str) -> String {
    match rest.rsplit_once(" = ") {
        Some((call, result)) => format!("{} = {result}", call.trim_end()),
        None => rest.to_string(),
    }
}

/// One control block of an `io_submit` call in a `strace -y` log.
pub struct Iocb<'a> {
    /// `IOCB_CMD_PREAD`, `IOCB_CMD_PWRITE`, ...
    pub op: &'a str,
    /// The descriptor with its path (`7</dir/f>`).
    pub fd: &'a str,
    pub nbytes: u64,
    pub offset: u64,
}

/// The control blocks of the `io_submit` call whose arguments are `args` (`line`, for the
/// message when one cannot be read).
pub fn iocbs<'a>(args: &'a str, line: &str) -> Vec<Iocb<'a>> {
    use super::fio_text::field;
    args.split("{aio_data=")
        .skip(1)
        .map(|cb| {
            let (Some(op), Some(fd), Some(n), Some(off)) = (
                field(cb, "aio_lio_opcode="),
                field(cb, "aio_fildes="),
                field(cb, "aio_nbytes="),
                field(cb, "aio_offset="),
            ) else {
                panic!("unparsed io_submit: {line}")
            };
            Iocb {
                op,
                fd,
                nbytes: n.parse().unwrap(),
                offset: off.parse().unwrap(),
            }
        })
        .collect()
}

/// One request: file name (relative to the run's directory), `r` or `w`, offset and length
/// in KiB.
pub type Req = (String, char, u64, u64);

/// Each thread's reads and writes on the files of `dir` (`pread64` and `pwrite64`, and the
/// iocbs of `io_submit` in the order submitted), from a `strace -f -y` log made whole; the
/// threads sorted (fio's jobs are processes, plumb's threads, started in no fixed order).
pub fn requests(trace: &str, dir: &std::path::Path) -> Vec<Vec<Req>> {
    use super::fio_text::fd_path;
    let dir = dir.canonicalize().unwrap();
    let name_of = |fd_and_path: &str| {
        fd_path(fd_and_path).and_then(|(_, path, _)| {
            std::path::Path::new(path)
                .strip_prefix(&dir)
                .ok()
                .map(|p| p.display().to_string())
        })
    };
    let mut by_thread: Vec<(String, Vec<Req>)> = Vec::new();
    for line in trace.lines() {
        let (pid, call) = line.split_once(' ').unwrap_or(("", line));
        let mut reqs = Vec::new();
        match call.trim_start().split_once('(') {
            Some(("io_submit", args)) => {
                for cb in iocbs(args, line) {
                    let Some(name) = name_of(cb.fd) else { continue };
                    let op = if cb.op.contains("READ") { 'r' } else { 'w' };
                    reqs.push((name, op, cb.offset / 1024, cb.nbytes / 1024));
                }
            }
            Some((c @ ("pread64" | "pwrite64"), args)) => {
                let Some(name) = name_of(args) else { continue };
                // The count and the offset come last; the buffer before them may hold
                // anything.
                let args = args.rsplit_once(" = ").unwrap().0.trim_end();
                let mut last = args.strip_suffix(')').unwrap().rsplit(", ");
                let offset: u64 = last.next().unwrap().trim().parse().unwrap();
                let len: u64 = last.next().unwrap().trim().parse().unwrap();
                let op = if c == "pread64" { 'r' } else { 'w' };
                reqs.push((name, op, offset / 1024, len / 1024));
            }
            _ => continue,
        }
        if reqs.is_empty() {
            continue;
        }
        match by_thread.iter_mut().find(|t| t.0 == pid) {
            Some(t) => t.1.extend(reqs),
            None => by_thread.push((pid.to_string(), reqs)),
        }
    }
    let mut v: Vec<Vec<Req>> = by_thread.into_iter().map(|t| t.1).collect();
    v.sort();
    v
}
