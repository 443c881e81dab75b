//! fio's `wait_for=NAME`: the job starts once every job named NAME (its clones included) has
//! ended. Unlike `stonewall` it opens no reporting group, and the jobs after it do not wait.
//!
//! fio 3.33 checks it as it adds each job (init.c, after fixup_options), against the jobs
//! added before: `JOB: a job cannot wait for itself (wait_for=NAME).` when NAME is the job's
//! own section name, `JOB: waitee job NAME unknown.` when no earlier job has that name,
//! and `JOB: multiple waitees NAME found,` / `please avoid duplicates when using wait_for
//! option.` when several earlier jobs (clones aside) do. Each ends the parse with status 1,
//! after the header lines of the jobs added before. While running (backend.c,
//! waitee_running) it holds the job back while any job named NAME has not exited, earlier
//! or later in the file, except jobs that share the waiting job's own name.
//!
//! In plumb the waits are the pipeline's [`plumb_pipeline::JobSpec::after`], inside the
//! job's run group: a job named NAME in an earlier group has ended before this group
//! starts, and one in a later group cannot start before this group has ended (a stonewall
//! waits for every job before it).

use super::ParsedJob;

/// The job's `wait_for`, if it has one.
pub fn waitee(job: &ParsedJob) -> Option<&str> {
    job.raw("wait_for").flatten().filter(|w| !w.is_empty())
}

/// fio's check of `job`'s wait_for against the jobs added before it (`earlier`, each one
/// section or `--name`, numjobs not expanded): its lines when it fails.
pub fn check<'a>(
    job: &'a ParsedJob,
    earlier: impl IntoIterator<Item = &'a ParsedJob>,
) -> Result<(), String> {
    let Some(w) = waitee(job) else {
        return Ok(());
    };
    let me = &job.name;
    if me == w {
        return Err(format!(
            "{me}: a job cannot wait for itself (wait_for={w})."
        ));
    }
    // fio counts the job being added too; its name is not `w` once the check above passed,
    // unless `name=` renamed it.
    let found = earlier
        .into_iter()
        .chain(std::iter::once(job))
        .filter(|j| j.fio_name() == w)
        .count();
    match found {
        0 => Err(format!("{me}: waitee job {w} unknown.")),
        1 => Ok(()),
        _ => Err(format!(
            "{me}: multiple waitees {w} found,\nplease avoid duplicates when using wait_for option."
        )),
    }
}

/// The waits of each clone, as indices into its run group: `clones` holds each clone's run
/// group, its name as fio matches it and its wait_for, in run order. Jobs that wait for
/// each other (a later job of the waitee's name waiting for the waiting job) are refused:
/// fio 3.33 never starts them.
pub fn waits(clones: &[(u32, &str, Option<&str>)]) -> Result<Vec<Vec<usize>>, String> {
    let global: Vec<Vec<usize>> = clones
        .iter()
        .map(|&(group, me, waitee)| {
            let Some(w) = waitee else {
                return Vec::new();
            };
            clones
                .iter()
                .enumerate()
                .filter(|(_, c)| c.0 == group && c.1 == w && c.1 != me)
                .map(|(k, _)| k)
                .collect()
        })
        .collect();
    for (k, after) in global.iter().enumerate() {
        let mut seen = vec![false; clones.len()];
        let mut todo = after.clone();
        while let Some(a) = todo.pop() {
            if a == k {
                return Err(format!(
                    "plumb: fio option 'wait_for' (value '{}') is not supported yet: jobs that wait for each other (fio 3.33 never starts them)",
                    clones[k].2.unwrap_or_default()
                ));
            }
            if !std::mem::replace(&mut seen[a], true) {
                todo.extend(&global[a]);
            }
        }
    }
    Ok(global
        .into_iter()
        .zip(clones)
        .map(|(after, c)| {
            let first = clones.iter().position(|o| o.0 == c.0).unwrap_or(0);
            after.into_iter().map(|k| k - first).collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::{parse, Host, Invocation};

    fn jobs(file: &str) -> Vec<ParsedJob> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.fio");
        std::fs::write(&path, file).unwrap();
        let args = vec![path.display().to_string(), "--parse-only".to_string()];
        match parse("fio", &args, &Host::fixed(&[], 4096, 1000, 2)) {
            Ok(Invocation::Run(r)) => r.jobs,
            other => panic!("{other:?}"),
        }
    }

    fn checked(file: &str) -> Vec<Result<(), String>> {
        let js = jobs(file);
        js.iter()
            .enumerate()
            .map(|(k, j)| check(j, &js[..k]))
            .collect()
    }

    #[test]
    fn fio_s_words_for_a_wait_it_cannot_keep() {
        assert_eq!(checked("[a]\n[b]\nwait_for=a\n"), vec![Ok(()), Ok(())]);
        assert_eq!(
            checked("[a]\n[b]\nwait_for=x\n")[1],
            Err("b: waitee job x unknown.".into())
        );
        // Only earlier jobs count.
        assert_eq!(
            checked("[b]\nwait_for=a\n[a]\n")[0],
            Err("b: waitee job a unknown.".into())
        );
        assert_eq!(
            checked("[a]\n[b]\nwait_for=b\n")[1],
            Err("b: a job cannot wait for itself (wait_for=b).".into())
        );
        assert_eq!(
            checked("[a]\n[a]\n[b]\nwait_for=a\n")[2],
            Err(
                "b: multiple waitees a found,\nplease avoid duplicates when using wait_for option."
                    .into()
            )
        );
        // Clones are one job; `name=` is the name waits match.
        assert_eq!(checked("[a]\nnumjobs=3\n[b]\nwait_for=a\n")[1], Ok(()));
        assert_eq!(checked("[x]\nname=y\n[b]\nwait_for=y\n")[1], Ok(()));
        assert_eq!(
            checked("[x]\nname=y\n[b]\nwait_for=x\n")[1],
            Err("b: waitee job x unknown.".into())
        );
    }

    #[test]
    fn a_clone_waits_for_every_job_of_the_name_in_its_group_but_its_own() {
        let c = [
            (0, "a", None),
            (0, "b", Some("a")),
            (0, "a", None),
            (1, "c", None),
            (1, "a", None),
            (1, "d", Some("a")),
            (1, "d", Some("a")),
            (1, "a", Some("a")),
        ];
        assert_eq!(
            waits(&c).unwrap(),
            vec![
                vec![],
                vec![0, 2],
                vec![],
                vec![],
                vec![],
                vec![1, 4],
                vec![1, 4],
                vec![],
            ]
        );
        // A later job of the waitee's name that waits for the waiting job: neither starts.
        let c = [(0, "a", None), (0, "b", Some("a")), (0, "a", Some("b"))];
        assert_eq!(
            waits(&c),
            Err("plumb: fio option 'wait_for' (value 'a') is not supported yet: jobs that wait for each other (fio 3.33 never starts them)".into())
        );
    }
}
