//! The fio front end, parsing half: fio 3.33's command line, job files and value grammar,
//! turned into an ordered list of jobs for the translation into plumb's job model. Pure apart
//! from reading job files, stdin (`-`) and environment variables.
//!
//! Public API:
//! - [`parse`]`(prog, args, &Host) -> Result<Invocation, FioError>`: the whole command line.
//!   [`Invocation::Run`] holds a [`Parsed`]: `jobs: Vec<ParsedJob>` in creation order
//!   (command-line jobs first, numjobs NOT expanded), `global_options`, and fio's [`Flags`].
//!   `Print` / `CmdHelp` are `--help`, `--version`, `--showcmd`, `--cmdhelp` output.
//! - [`ParsedJob`]: `name`, `origin`, `group` (§2.1), `implicit_stonewall`, `options` (global
//!   settings first, then the job's own, in the order fio applies them), `job_options()` (JSON
//!   "job options"), and typed getters that fall back to fio's defaults: `size`, `int`,
//!   `rwt_sizes`, `time_ns`, `flag`, `enum_str`, `value`, `kb_base`, `stonewall`.
//! - [`FioError`]: fio's texts (`Display` = stderr lines, `stdout()` = what goes to stdout).
//! - [`options`]: the option table (`find`, `find_engine_option`, `Opt { supported, .. }`).
//! - [`values`]: the value grammar as pure functions; [`Host`]: env vars and `$ncpus` & co.

mod apply;
mod arith;
mod cmdline;
mod distribution;
mod error;
mod exec;
mod failure;
mod help;
mod host;
mod iosched;
mod job;
mod jobfile;
mod lockmem;
mod logs;
mod max_latency;
mod min_rate;
mod opendir;
pub mod options;
mod pacing;
mod replay;
pub mod run;
mod steady;
mod strided;
mod subst;
pub mod sweep;
mod tolerate;
mod translate;
pub mod values;
mod verify_pattern;
mod wait_for;
mod zoned;

pub use cmdline::{parse, Eta, Invocation, Parsed};
pub use host::Host;
pub use job::ParsedJob;
