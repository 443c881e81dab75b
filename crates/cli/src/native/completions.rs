//! `plumb completions SHELL`: a completion script for plumb's own commands and the sysbench
//! tests with their commands and options.

use std::io::Write;

use clap_complete::Shell;

/// Write a shell completion script to stdout.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shell to complete for, e.g. plumb completions bash > /etc/bash_completion.d/plumb
    #[arg(value_enum)]
    shell: Shell,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let mut cmd = super::help::full_command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "plumb", &mut script);
    let mut out = std::io::stdout().lock();
    // A closed pipe (plumb completions bash | head) is not an error worth a message.
    let _ = out.write_all(&script).and_then(|_| out.flush());
    Ok(0)
}
