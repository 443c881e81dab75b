//! What the sweep is about to do, printed before it starts (all that --dry-run prints):
//! the points in the order they run, with each data set's prepare and cleanup where they go.

use std::io::Write;
use std::path::Path;

use super::checked::Checked;
use super::front_end::{DataSteps, Phase};
use super::laid::{self, Laid};
use super::points;
use super::progress::clock;

pub(super) fn print(s: &Checked) {
    let (p, points) = (&s.plan, &s.points);
    let mut out = String::new();
    out.push_str(&format!(
        "sweep: {} points x {} run(s) each, {} data set(s)\n",
        points.len(),
        p.repeat,
        points::sets(points)
    ));
    match s.steps {
        DataSteps::Separate {
            added: true,
            cleanup: true,
            ..
        } => out.push_str(
            "sweep: the command has no prepare or cleanup: the sweep prepares each data set before its first point and cleans it up after its last (prepare = false turns this off)\n",
        ),
        DataSteps::Separate { added: true, .. } => out.push_str(
            "sweep: the command has no prepare or cleanup: the sweep prepares each data set before its first point; keep_data = true: it stays after its last (no cleanup)\n",
        ),
        DataSteps::ByTheRun { cleanup: true } => out.push_str(
            "sweep: fio lays out a job's missing files when it runs: the first point of each data set lays them out, the next ones use them; after its last point the sweep removes the files its runs laid out, never one that was there before (keep_data = true keeps them)\n",
        ),
        DataSteps::ByTheRun { cleanup: false } => out.push_str(
            "sweep: fio lays out a job's missing files when it runs: the first point of each data set lays them out, the next ones use them; keep_data = true: they stay after the sweep\n",
        ),
        _ => {}
    }
    if let Some(w) = p.warmup {
        out.push_str(&format!(
            "sweep: each point warms up for {}, excluded from its figures\n",
            if w.subsec_nanos() == 0 {
                clock(w)
            } else {
                format!("{} s", w.as_secs_f64())
            }
        ));
    }
    let mut set_start = 0;
    for (i, pt) in points.iter().enumerate() {
        let first = points::starts_set(points, i);
        let last = points::ends_set(points, i);
        if first {
            set_start = i;
        }
        if let (true, DataSteps::Separate { prepare: true, .. }) = (first, s.steps) {
            out.push_str(&format!(
                "  prepare   {}\n",
                s.cmd.typed(&s.args(pt, Phase::Prepare))
            ));
        }
        out.push_str(&format!("  point {:<3} {}\n", i + 1, s.label(pt)));
        if let (true, DataSteps::Separate { cleanup: true, .. }) = (last, s.steps) {
            out.push_str(&format!(
                "  cleanup   {}\n",
                s.cmd.typed(&s.args(pt, Phase::Cleanup))
            ));
        }
        if let (true, DataSteps::ByTheRun { cleanup: true }) = (last, s.steps) {
            // As things stand now: a file there already is kept.
            let l = Laid::before(&points::set_files(&points[set_start..=i]));
            if l.is_empty() {
                // The job opens no file (fio's null engine).
                continue;
            }
            let laid: Vec<&Path> = l.files().collect();
            let mut line = if laid.is_empty() {
                "remove nothing".to_string()
            } else {
                format!("remove {} (laid out by its runs)", laid::shown(&laid))
            };
            let kept = l.kept();
            if !kept.is_empty() {
                line.push_str(&format!("; keep {} (there already)", laid::shown(&kept)));
            }
            out.push_str(&format!("  cleanup   {line}\n"));
        }
    }
    print!("{out}");
    let _ = std::io::stdout().flush();
}
