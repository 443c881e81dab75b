//! `plumb manpage`: plumb(1) in roff, from the same definitions as parsing and completion.

pub fn run() -> anyhow::Result<i32> {
    let mut page = Vec::new();
    clap_mangen::Man::new(super::help::full_command()).render(&mut page)?;
    super::print_out(&String::from_utf8_lossy(&page));
    Ok(0)
}
