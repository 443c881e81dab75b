//! The fio front end in a sweep: one command-line job, its options by fio's names and
//! aliases, and (from `options::DATA_SET`) which of them change the files it lays out.

use plumb_core::StopFlag;
use plumb_pipeline::Finished;

use super::options;
use crate::sweep::front_end::{self, substitute, Command, DataSteps, FrontEnd, Phase, Swept};

pub struct Fio;
pub static FIO: Fio = Fio;

/// plumb's and fio's output and history options: the sweep's to set.
const SWEEP_OWNS: &[&str] = &[
    "plumb-json",
    "plumb-findings",
    "tag",
    "no-history",
    "output",
    "output-format",
];

impl FrontEnd for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }
    fn claims(&self, first_word: &str) -> bool {
        first_word == "fio"
    }
    fn command(&self, words: &[String]) -> Result<Box<dyn Command>, String> {
        let mut opts = Vec::new();
        for w in words {
            let Some(body) = w.strip_prefix("--") else {
                return Err(format!(
                    "command: '{w}': a sweep drives one job given on fio's command line (--name=... and its options), not job files"
                ));
            };
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            if SWEEP_OWNS.contains(&name) {
                return Err(format!(
                    "command: {w} is the sweep's to set (plumb sweep --json=FILE, tag = \"...\", --no-history)"
                ));
            }
            opts.push((canonical(name).unwrap_or(name).to_string(), w.clone()));
        }
        if opts.iter().filter(|(n, _)| n == "name").count() != 1 {
            return Err(
                "command: a fio sweep takes exactly one job: one --name=... and its options".into(),
            );
        }
        Ok(Box::new(Sweep { opts }))
    }
}

/// fio's own name of an option given by name or alias.
fn canonical(name: &str) -> Option<&'static str> {
    options::find(name)
        .or_else(|| options::find_any_engine_option(name))
        .map(|o| o.name)
}

struct Sweep {
    /// The command's options: fio's name of each, and the word as typed.
    opts: Vec<(String, String)>,
}

impl Command for Sweep {
    fn option(&self, key: &str) -> Result<Swept, String> {
        let typed = key.strip_prefix("--").unwrap_or(key);
        let name = canonical(typed).ok_or("not one of fio's options (plumb fio --cmdhelp=all)")?;
        if SWEEP_OWNS.contains(&name) || name == "name" {
            return Err(format!("{name} is not an option a sweep varies"));
        }
        Ok(Swept {
            name: name.to_string(),
            prefix: format!("--{typed}="),
            data_set: options::DATA_SET.contains(&name),
        })
    }

    fn warmup(&self, secs: f64) -> String {
        // In milliseconds: fio reads `0.5s` as 0 s and `1.5s` as 1 s (it drops a fraction
        // before the unit), and plumb reads it as fio does.
        format!("--ramp_time={}ms", (secs * 1000.0).round() as u64)
    }

    fn warmup_name(&self) -> &'static str {
        "ramp_time"
    }

    fn data_steps(&self, prepare: bool, keep_data: bool) -> Result<DataSteps, String> {
        if !prepare {
            return Err("prepare = false: fio lays out a job's missing files itself, and keeps those it finds; remove the key (keep_data = true keeps the files it lays out)".into());
        }
        Ok(DataSteps::ByTheRun {
            cleanup: !keep_data,
        })
    }

    fn args(&self, options: &[String], replaced: &[String], _phase: Phase) -> Vec<String> {
        substitute(&self.opts, options, replaced)
    }

    fn check(&self, args: &[String]) -> Result<Vec<std::path::PathBuf>, String> {
        super::run::check(args).map(|c| c.files)
    }

    fn run(&self, args: &[String], stop: &StopFlag) -> anyhow::Result<Finished> {
        let c = super::run::check(args).map_err(|e| anyhow::anyhow!(e))?;
        let finished = front_end::execute(&c.plan, &plumb_report::fio::Fio::LAYOUT, stop)
            .map_err(|e| anyhow::anyhow!(plumb_core::redact::text(&e.to_string(), args)))?;
        if let Some(e) = front_end::job_error(&finished) {
            anyhow::bail!("fio: {e}");
        }
        Ok(finished)
    }

    fn unit(&self) -> &'static str {
        "IOPS"
    }

    fn typed(&self, args: &[String]) -> String {
        format!("plumb fio {}", crate::sweep::front_end::shown(args))
    }
}
