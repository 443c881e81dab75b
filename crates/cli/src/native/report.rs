//! `plumb report FILE.json`: a saved result, shown again. The text is what the live run
//! printed, in the layout of the front end that ran it, and the findings are evaluated
//! again from the document alone (observations included), so a result saved by an older
//! plumb gets today's rules.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::ValueEnum;
use plumb_pipeline::{facts, Record};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The saved JSON result (--json=FILE or --format=json output)
    #[arg(value_name = "FILE.json")]
    file: PathBuf,
    /// text: the report as the run printed it; json: the document, findings re-evaluated
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("cannot read {}", a.file.display()))?;
    let record = Record::from_json(&text).with_context(|| format!("{}", a.file.display()))?;
    let out = render(record, a.format).with_context(|| format!("{}", a.file.display()))?;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(0)
}

/// A saved record as `format` asks: the report as the run printed it, or the document,
/// findings evaluated again (a note on stderr when they changed) either way.
pub fn render(mut record: Record, format: Format) -> anyhow::Result<String> {
    refresh(&mut record);
    let layout = plumb_report::layout(&record.front_end);
    Ok(match format {
        Format::Json => record.to_json(),
        Format::Text => {
            let layout = layout
                .ok_or_else(|| anyhow::anyhow!("no layout for front end '{}'", record.front_end))?;
            layout.replay(&record)
        }
    })
}

/// A saved record made current: its command line masked again (a document written by hand
/// or by an older plumb may carry a credential) and its findings evaluated again by today's
/// rules, with a note on stderr for each job whose findings changed.
pub fn refresh(record: &mut Record) {
    record.command_line = plumb_core::redact::args(record.command_line.iter().map(String::as_str));
    let spelling = plumb_report::layout(&record.front_end).and_then(|l| l.spelling());
    for g in &mut record.groups {
        for j in &mut g.jobs {
            let now =
                plumb_advise::evaluate(&facts::from_job(j, g.observations.as_ref(), spelling));
            if now != j.findings {
                eprintln!(
                    "plumb: note: the findings of job '{}' differ from the ones saved with it (evaluated again by plumb {})",
                    j.name,
                    env!("CARGO_PKG_VERSION")
                );
            }
            j.findings = now;
        }
    }
}
