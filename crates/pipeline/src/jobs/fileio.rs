//! File I/O: lays out and removes its file set, opens the engine, completes the files of a
//! run that writes them from scratch after the measurement.
//!
//! Errors come back as [`JobError::Failed`] holding the [`FileioError`] (a signal as
//! [`JobError::Interrupted`]): a front end downcasts it and words it in its own syntax.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use plumb_core::result::Status;
use plumb_core::{StopFlag, Workload};
use plumb_fileio::fileset::cleanup::cleanup;
use plumb_fileio::fileset::named::{lay_out, unlink_created};
use plumb_fileio::fileset::open::complete_seqwr;
use plumb_fileio::fileset::prepare::prepare;
use plumb_fileio::settings::FileioSettings;
use plumb_fileio::spec::FileioSpec;
use plumb_fileio::{FileioError, FileioWorkload};

use crate::plan::{Job, JobError, StepContext, Targets};
use crate::record::{JobRecord, Settings};

pub struct FileioJob {
    spec: FileioSpec,
    /// Why the engine differs from the one asked for (said before the run, kept in the
    /// settings).
    engine_note: Option<String>,
    /// Set on SIGINT/SIGTERM: prepare, cleanup and the completion of new files stop at the
    /// next file.
    stop: StopFlag,
    workload: RefCell<Option<Arc<FileioWorkload>>>,
    /// Named files this job created while laying them out (removed by cleanup when the job
    /// asks for it; never a file that was there before).
    created: RefCell<Vec<PathBuf>>,
}

impl FileioJob {
    pub fn new(spec: FileioSpec, engine_note: Option<String>, stop: StopFlag) -> Self {
        FileioJob {
            spec,
            engine_note,
            stop,
            workload: RefCell::new(None),
            created: RefCell::new(Vec::new()),
        }
    }

    pub fn spec(&self) -> &FileioSpec {
        &self.spec
    }

    /// The request log the run kept (jobs that asked for one), taken out of the job.
    pub fn take_logs(&self) -> plumb_fileio::iolog::Logged {
        self.workload
            .borrow()
            .as_ref()
            .map(|w| std::mem::take(&mut *w.logs.taken.lock().unwrap_or_else(|p| p.into_inner())))
            .unwrap_or_default()
    }

    /// The requests of the run that failed (see
    /// [`plumb_fileio::workload::Figures::failed_requests`]), taken out of the job.
    pub fn take_failed_requests(&self) -> Vec<plumb_fileio::error::FailedRequest> {
        self.take(|f| &f.failed_requests)
    }

    /// The directions the run found below their minimum rate (see
    /// [`plumb_fileio::workload::Figures::min_rate_misses`]), taken out of the job.
    pub fn take_min_rate_misses(&self) -> Vec<plumb_fileio::min_rate::Miss> {
        self.take(|f| &f.min_rate_misses)
    }

    /// The request that took longer than the job allows (see
    /// [`plumb_fileio::workload::Figures::max_latency_exceeded`]), taken out of the job.
    pub fn take_max_latency_exceeded(&self) -> Vec<plumb_fileio::max_latency::Exceeded> {
        self.take(|f| &f.max_latency_exceeded)
    }

    /// The run's errors as counted (see [`plumb_fileio::workload::Figures::errors`]): how
    /// many, and the first one's errno; (0, 0) before a run.
    pub fn errors(&self) -> (u64, i32) {
        self.workload
            .borrow()
            .as_ref()
            .map_or((0, 0), |w| w.figures.errors.get())
    }

    /// One of the run's lists in its figures, taken out of the job (empty before a run).
    fn take<T>(
        &self,
        list: impl Fn(&plumb_fileio::workload::Figures) -> &std::sync::Mutex<Vec<T>>,
    ) -> Vec<T> {
        self.workload
            .borrow()
            .as_ref()
            .map(|w| {
                std::mem::take(&mut *list(&w.figures).lock().unwrap_or_else(|p| p.into_inner()))
            })
            .unwrap_or_default()
    }

    /// The directory holding the files (none for an engine that opens none).
    fn target_dir(&self) -> Option<PathBuf> {
        if let Some(j) = &self.spec.job {
            let first = j.files.first()?;
            use std::os::unix::fs::FileTypeExt;
            // A block device is the target itself (the observer finds its device).
            if std::fs::metadata(&first.path).is_ok_and(|m| m.file_type().is_block_device()) {
                return Some(first.path.clone());
            }
            let parent = first
                .path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            return self
                .spec
                .engine
                .caps
                .needs_files
                .then(|| parent.to_path_buf());
        }
        self.spec
            .engine
            .caps
            .needs_files
            .then(|| self.spec.dir.clone())
    }
}

fn job_error(e: FileioError) -> JobError {
    match e {
        FileioError::Interrupted(sig) => JobError::Interrupted(sig),
        other => JobError::failed(other),
    }
}

/// A directory as the report names it: absolute when it can be resolved.
fn display(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

impl Job for FileioJob {
    fn kind(&self) -> &'static str {
        "fileio"
    }

    fn workload(&self, notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        let w = Arc::new(FileioWorkload::open(self.spec.clone()).map_err(job_error)?);
        notes.extend(self.engine_note.clone());
        *self.workload.borrow_mut() = Some(w.clone());
        Ok(w)
    }

    fn settings(&self) -> Settings {
        let w = self.workload.borrow();
        Settings::Fileio(Box::new(FileioSettings::new(
            &self.spec,
            Some(display(&self.spec.dir)),
            self.engine_note.clone(),
            w.as_deref(),
        )))
    }

    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        let Some(w) = self.workload.borrow().clone() else {
            return Ok(());
        };
        let creates = self.spec.access.is_some_and(|a| a.creates_files);
        if !creates || !self.spec.engine.caps.does_io {
            return Ok(());
        }
        if job.status != Status::Completed {
            // Interrupted: leave the files as they are; the manifest says how far they go.
            return Ok(());
        }
        let bytes =
            complete_seqwr(&self.spec, w.requests_issued(), &self.stop).map_err(job_error)?;
        if let Settings::Fileio(s) = &mut job.workload {
            s.seqwr_completed_bytes = Some(bytes);
        }
        Ok(())
    }

    fn targets(&self) -> Targets {
        if let Some(j) = &self.spec.job {
            return Targets {
                dir: self.target_dir(),
                files: if self.spec.engine.caps.needs_files {
                    j.files.iter().map(|f| f.path.clone()).collect()
                } else {
                    Vec::new()
                },
            };
        }
        match self.target_dir() {
            Some(dir) => Targets {
                files: (0..self.spec.num_files)
                    .map(|i| dir.join(plumb_fileio::fileset::file_name(i)))
                    .collect(),
                dir: Some(dir),
            },
            None => Targets::default(),
        }
    }

    fn data_set(&self) -> Option<String> {
        if self.spec.job.is_some() || !self.spec.engine.caps.needs_files {
            return None;
        }
        let n = self.spec.num_files;
        let names = match n {
            0 => return None,
            1 => plumb_fileio::fileset::file_name(0),
            _ => format!("{}..{}", plumb_fileio::fileset::file_name(0), n - 1),
        };
        Some(format!(
            "{n} file(s) {names}, {} in all, in {}",
            plumb_core::size::format_size(self.spec.total_size),
            display(&self.spec.dir)
        ))
    }

    fn prepare(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        if self.spec.job.is_some() {
            if !self.spec.engine.caps.needs_files {
                return Ok(());
            }
            let out = lay_out(&self.spec, &self.stop).map_err(job_error)?;
            for w in &out.warnings {
                let _ = writeln!(ctx.warnings(), "{w}");
            }
            self.created.borrow_mut().extend(out.created);
            return Ok(());
        }
        prepare(&self.spec, &self.stop, &mut ctx.log, &mut *ctx.progress)
            .map(|_| ())
            .map_err(job_error)
    }

    fn cleanup(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        if let Some(j) = &self.spec.job {
            if j.unlink {
                unlink_created(&self.created.borrow()).map_err(|e| {
                    JobError::failed(FileioError::io("cannot remove a job file", e))
                })?;
            }
            return Ok(());
        }
        // Warnings (a file that is not plumb's) go to stderr, after the log lines.
        let mut warnings = Vec::new();
        let r = cleanup(&self.spec, &self.stop, ctx.log(), &mut warnings);
        let _ = ctx.warnings().write_all(&warnings);
        r.map(|_| ()).map_err(job_error)
    }
}
