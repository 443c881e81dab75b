//! `plumb manpage`: plumb(1) in roff, from the same definitions as parsing and completion.

use std::io::Write;

pub fn run() -> anyhow::Result<i32> {
    let mut page = Vec::new();
    clap_mangen::Man::new(super::help::full_command()).render(&mut page)?;
    let mut out = std::io::stdout().lock();
    // A closed pipe (plumb manpage | head) is not an error worth a message.
    let _ = out.write_all(&page).and_then(|_| out.flush());
    Ok(0)
}
