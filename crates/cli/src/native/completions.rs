//! `plumb completions SHELL`: a completion script for plumb's own commands and the sysbench
//! tests with their commands and options.

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
    super::print_out(&String::from_utf8_lossy(&script));
    Ok(0)
}
