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
