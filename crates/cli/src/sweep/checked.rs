//! A plan made ready to run: its front end's command, where prepare and cleanup go, and
//! every point with its command line passed by the front end's own parser, so that a
//! mistake in any point stops the sweep before the first one runs.

use std::path::Path;

use super::front_end::{self, Command, DataSteps, Phase, Swept};
use super::plan::{self, Plan};
use super::points::{self, Point};
use crate::exit::UsageError;

pub(super) struct Checked {
    pub plan: Plan,
    pub cmd: Box<dyn Command>,
    pub steps: DataSteps,
    /// The names of the command's options a point's own take the place of (the swept
    /// ones, the warm-up's).
    pub replaced: Vec<String>,
    pub points: Vec<Point>,
}

impl Checked {
    /// The matrix keys, in the plan's order.
    pub fn keys(&self) -> Vec<&str> {
        self.plan
            .matrix
            .iter()
            .map(|(k, _, _)| k.as_str())
            .collect()
    }

    /// A point as its lines name it: `threads=2 table-size=100`.
    pub fn label(&self, pt: &Point) -> String {
        self.keys()
            .iter()
            .zip(&pt.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The argument vector of `phase` for `pt`.
    pub fn args(&self, pt: &Point, phase: Phase) -> Vec<String> {
        self.cmd.args(&pt.options, &self.replaced, phase)
    }
}

/// Read and check the plan at `path`: a usage error names its line and key.
pub(super) fn check(path: &Path) -> anyhow::Result<Checked> {
    let p = plan::read(path).map_err(UsageError)?;
    let fe = front_end::find(p.front_end.as_deref(), &p.command[0]).map_err(|e| {
        UsageError(plan::at(
            path,
            plan::line_of(&p.text, None, "front_end").or(plan::line_of(&p.text, None, "command")),
            e,
        ))
    })?;
    let words = if fe.claims(&p.command[0]) && fe.name() == "fio" {
        &p.command[1..]
    } else {
        &p.command[..]
    };
    let cmd_line = plan::line_of(&p.text, None, "command");
    let cmd = fe
        .command(words)
        .map_err(|e| UsageError(plan::at(path, cmd_line, e)))?;
    let mut swept: Vec<Swept> = Vec::new();
    for (key, _, line) in &p.matrix {
        let s = cmd
            .option(key)
            .map_err(|e| UsageError(plan::at(path, Some(*line), format!("matrix.{key}: {e}"))))?;
        if let Some(other) = swept.iter().find(|o| o.name == s.name) {
            return Err(UsageError(plan::at(
                path,
                Some(*line),
                format!(
                    "matrix.{key}: the same option as {}",
                    other.prefix.trim_end_matches('=')
                ),
            ))
            .into());
        }
        if p.warmup.is_some() && s.name == cmd.warmup_name() {
            return Err(UsageError(plan::at(
                path,
                Some(*line),
                format!("matrix.{key}: the plan's warmup sets it already"),
            ))
            .into());
        }
        swept.push(s);
    }
    let steps = cmd.data_steps(p.prepare, p.keep_data).map_err(|e| {
        let key = if e.starts_with("keep_data") {
            plan::line_of(&p.text, None, "keep_data").or(plan::line_of(&p.text, None, "keep-data"))
        } else {
            plan::line_of(&p.text, None, "prepare")
        };
        UsageError(plan::at(path, key.or(cmd_line), e))
    })?;
    let mut replaced: Vec<String> = swept.iter().map(|s| s.name.clone()).collect();
    let mut extra = Vec::new();
    if let Some(w) = p.warmup {
        extra.push(cmd.warmup(w.as_secs_f64()));
        replaced.push(cmd.warmup_name().to_string());
    }
    let mut points = points::expand(&p.matrix, &swept, &extra);
    for (i, pt) in points.iter_mut().enumerate() {
        let args = cmd.args(&pt.options, &replaced, Phase::Run);
        pt.files = cmd.check(&args).map_err(|e| {
            UsageError(plan::at(
                path,
                None,
                format!(
                    "point {} ({}): {}",
                    i + 1,
                    pt.values.join(" "),
                    e.lines().next().unwrap_or("")
                ),
            ))
        })?;
    }
    Ok(Checked {
        plan: p,
        cmd,
        steps,
        replaced,
        points,
    })
}
