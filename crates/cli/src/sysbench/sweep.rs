//! The sysbench front end in a sweep: its option names (aliases and the scripts' `-`/`_`
//! spellings resolved as on the command line) and, from each test's `data_set`, which
//! options change what prepare lays out.

use plumb_core::StopFlag;
use plumb_pipeline::Finished;

use super::testdefs::{self, Command as Word, TestDef};
use super::{common, Words};
use crate::sweep::front_end::{self, substitute, Command, DataSteps, FrontEnd, Phase, Swept};

pub struct Sysbench;
pub static SYSBENCH: Sysbench = Sysbench;

/// Options the sweep sets itself (--json, --tag, --no-history) or that would change what
/// it reads (--format): refused in the command and the matrix.
const SWEEP_OWNS: &[&str] = &["json", "format", "tag", "no-history"];

impl FrontEnd for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn claims(&self, first_word: &str) -> bool {
        super::find_test(first_word).is_ok()
    }
    fn command(&self, words: &[String]) -> Result<Box<dyn Command>, String> {
        let w = super::words(words).map_err(|e| e.0)?;
        if let Some((_, typed)) = w
            .options
            .iter()
            .find(|(n, _)| SWEEP_OWNS.contains(&n.as_str()))
        {
            return Err(format!(
                "command: {typed} is the sweep's to set (plumb sweep --json=FILE, tag = \"...\", --no-history)"
            ));
        }
        if w.commands.contains(&Word::Help) {
            return Err("command: 'help' prints, it does not run".into());
        }
        if !w.commands.contains(&Word::Run) {
            return Err(format!(
                "command: the sweep runs points: add 'run' (e.g. {} ... run)",
                w.test.name
            ));
        }
        Ok(Box::new(Sweep { w }))
    }
}

struct Sweep {
    w: Words,
}

impl Sweep {
    fn test(&self) -> &'static TestDef {
        self.w.test
    }
}

impl Command for Sweep {
    fn option(&self, key: &str) -> Result<Swept, String> {
        let typed = key.strip_prefix("--").unwrap_or(key);
        let name = common::DEPRECATED
            .iter()
            .find(|(old, _)| *old == typed)
            .map_or(typed, |(_, new)| new);
        let raw = [(name.to_string(), None)];
        let name = testdefs::script_option_names(self.test(), &raw)[0]
            .0
            .clone();
        if SWEEP_OWNS.contains(&name.as_str()) {
            return Err(format!("--{name} is the sweep's to set, not a matrix key"));
        }
        let known = common::OPTIONS
            .iter()
            .chain(self.test().options)
            .any(|o| o.name == name);
        if !known {
            return Err(format!(
                "not an option of the '{}' test (see 'plumb {} help' and 'plumb --help')",
                self.test().name,
                self.test().name
            ));
        }
        Ok(Swept {
            data_set: self.test().data_set.contains(&name.as_str()),
            prefix: format!("--{typed}="),
            name,
        })
    }

    fn warmup(&self, secs: f64) -> String {
        format!("--warmup-time={secs}")
    }

    fn warmup_name(&self) -> &'static str {
        "warmup-time"
    }

    fn data_steps(&self, prepare: bool, keep_data: bool) -> Result<DataSteps, String> {
        let has = |c| self.w.commands.contains(&c);
        let (p, c) = (has(Word::Prepare), has(Word::Cleanup));
        if self.test().data_set.is_empty() {
            return Ok(DataSteps::None);
        }
        if !prepare && (p || c) {
            return Err("prepare = false, but the command has prepare or cleanup: keep one".into());
        }
        if keep_data && c {
            return Err("keep_data = true, but the command names cleanup: keep one".into());
        }
        Ok(match (prepare, p || c) {
            (false, _) => DataSteps::None,
            (true, true) => DataSteps::Separate {
                prepare: p,
                cleanup: c,
                added: false,
            },
            (true, false) => DataSteps::Separate {
                prepare: true,
                cleanup: !keep_data,
                added: true,
            },
        })
    }

    fn args(&self, options: &[String], replaced: &[String], phase: Phase) -> Vec<String> {
        let mut v = vec![self.test().name.to_string()];
        v.extend(substitute(&self.w.options, options, replaced));
        match phase {
            Phase::Prepare => v.push("prepare".into()),
            Phase::Cleanup => v.push("cleanup".into()),
            Phase::Run => v.extend(
                self.w
                    .commands
                    .iter()
                    .filter(|c| matches!(c, Word::Prewarm | Word::Run))
                    .map(|c| c.name().to_string()),
            ),
        }
        v
    }

    fn check(&self, args: &[String]) -> Result<Vec<std::path::PathBuf>, String> {
        super::check(args).map(|_| Vec::new()).map_err(|e| e.0)
    }

    fn run(&self, args: &[String], stop: &StopFlag) -> anyhow::Result<Finished> {
        let c = super::check(args)?;
        let finished = front_end::execute(&c.plan, &c.layout, stop).map_err(super::cli_error)?;
        if let Some(e) = front_end::job_error(&finished) {
            anyhow::bail!(e);
        }
        Ok(finished)
    }

    fn unit(&self) -> &'static str {
        if testdefs::oltp::ALL
            .iter()
            .any(|t| t.name == self.test().name)
        {
            "tps"
        } else {
            "events/s"
        }
    }

    fn typed(&self, args: &[String]) -> String {
        format!("plumb {}", crate::sweep::front_end::shown(args))
    }

    fn data_set(&self, args: &[String]) -> Option<String> {
        let c = super::check(args).ok()?;
        let job = c.plan.groups.first()?.jobs.first()?;
        job.job.data_set()
    }
}
