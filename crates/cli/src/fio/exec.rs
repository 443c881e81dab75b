//! fio's `exec_prerun` and `exec_postrun`: a shell command run in the job's thread before
//! its I/O (after its files are laid out) and after it (after its logs are written, before
//! `unlink`), neither timed. As fio 3.33's exec_string does: `sh -c "CMD > NAME.MODE.txt
//! 2>&1"` (so only the command's last part is redirected when it has several), after the
//! line `NAME : Saving output of MODE in NAME.MODE.txt` on the report's stream.
//!
//! Where fio quietly skips a job whose prerun fails (error 0, exit status 0), plumb fails
//! the job in one line with the command's status: a benchmark whose preparation failed
//! (the cache was not dropped) did not measure what it was meant to.

use std::process::Command;

/// The line fio prints before it runs the command.
pub fn saving_line(job: &str, mode: &str) -> String {
    format!("{job} : Saving output of {mode} in {job}.{mode}.txt")
}

/// Run `cmd` for `job` as fio's `mode` (`prerun`, `postrun`): Ok, or the failure in words.
pub fn run(job: &str, mode: &str, cmd: &str) -> Result<(), String> {
    let line = format!("{cmd} > {job}.{mode}.txt 2>&1");
    match Command::new("/bin/sh").arg("-c").arg(&line).status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!(
            "exec_{mode} '{cmd}' {}; the job does not run",
            match s.code() {
                Some(c) => format!("exited with status {c}"),
                None => "was killed by a signal".to_string(),
            }
        )),
        Err(e) => Err(format!("exec of cmd <{line}> failed: {e}")),
    }
}
