//! A dd-style copy: opens both ends when the run opens its workload (dd opens them before
//! its clock starts), and says what the observers watch: the storage end of the copy.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use plumb_core::Workload;
use plumb_fileio::dd::{DdSettings, DdSpec, DdTalk, DdWorkload, EndKind};

use crate::plan::{Job, JobError, Targets};
use crate::record::Settings;

pub struct DdJob {
    spec: DdSpec,
    talk: Option<DdTalk>,
    opened: RefCell<Option<DdSettings>>,
}

impl DdJob {
    pub fn new(spec: DdSpec) -> Self {
        DdJob {
            spec,
            talk: None,
            opened: RefCell::new(None),
        }
    }

    /// Where the copy's statistics on an info signal and its warnings go while it runs.
    pub fn with_talk(mut self, talk: DdTalk) -> Self {
        self.talk = Some(talk);
        self
    }
}

/// The directory a file lives in (the device the observer samples), or a device itself.
fn watch_dir(path: &Path, kind: EndKind) -> PathBuf {
    if kind == EndKind::Block {
        return path.to_path_buf();
    }
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

impl Job for DdJob {
    fn kind(&self) -> &'static str {
        "dd"
    }

    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        let w = DdWorkload::open(self.spec.clone())
            .map_err(JobError::failed)?
            .with_talk(self.talk.clone());
        *self.opened.borrow_mut() = Some(w.settings.clone());
        Ok(Arc::new(w))
    }

    fn settings(&self) -> Settings {
        let s = self.opened.borrow().clone().unwrap_or(DdSettings {
            spec: self.spec.clone(),
            input_kind: None,
            output_kind: None,
            input_size_bytes: None,
        });
        Settings::Dd(Box::new(s))
    }

    /// The output when it is storage, else the input: the device sampled is the one the
    /// copy's storage side lives on; the residency is the input file's (what a read finds
    /// in the cache), or the output's when only the output is storage.
    fn targets(&self) -> Targets {
        let Some(s) = self.opened.borrow().clone() else {
            return Targets::default();
        };
        let input = s.spec.input.clone().zip(s.input_kind);
        let output = s.spec.output.clone().zip(s.output_kind);
        let storage = |e: &Option<(PathBuf, EndKind)>| e.clone().filter(|(_, k)| k.is_storage());
        let dir = storage(&output)
            .or_else(|| storage(&input))
            .map(|(p, k)| watch_dir(&p, k));
        let files = storage(&input)
            .or_else(|| storage(&output))
            .filter(|(_, k)| *k == EndKind::File)
            .map(|(p, _)| vec![p])
            .unwrap_or_default();
        Targets { dir, files }
    }
}
