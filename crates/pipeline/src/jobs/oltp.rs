//! An OLTP test (sysbench's oltp_* scripts) on a database driver: prepare loads the sbtest
//! tables, cleanup drops them, the run is the transaction workload.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use plumb_core::{StopFlag, Workload};
use plumb_oltp::settings::{DatabaseSettings, OltpSettings};
use plumb_oltp::{Connection, Dialect, Driver, DriverError, OltpError, OltpSpec, Setting};

use crate::plan::{Job, JobError, StepContext, Targets};
use crate::record::{JobRecord, Settings};
use crate::setup::SetupServer;

/// The directory a database writes to, for the observers: the SQLite file's, or a local
/// server's data directory.
pub(crate) fn database_dir(db: Option<&DatabaseSettings>) -> Option<std::path::PathBuf> {
    match db {
        Some(DatabaseSettings::Sqlite(s)) => std::path::Path::new(&s.path).parent().map(|p| {
            if p.as_os_str().is_empty() {
                ".".into()
            } else {
                p.to_path_buf()
            }
        }),
        Some(d) => d.server().and_then(|s| s.data_dir.as_ref()).map(Into::into),
        None => None,
    }
}

pub struct OltpJob {
    spec: OltpSpec,
    driver: Arc<dyn Driver>,
    /// Threads that load the tables at prepare (sysbench's --threads).
    threads: usize,
    seed: u64,
    /// What the driver reports of the database's settings, read when the run opens.
    database: std::cell::RefCell<Option<plumb_oltp::settings::DatabaseSettings>>,
    /// How the front end spells a setting in its messages.
    spell: fn(Setting) -> String,
    /// The server's counters when the run opened.
    counters_before: std::cell::RefCell<Option<plumb_oltp::ServerCounters>>,
    /// The connection that checked the tables and read the settings and counters before the
    /// run, kept to read the counters after it: one connection besides the clients', not
    /// one per question.
    observer: std::cell::RefCell<Option<Box<dyn plumb_oltp::Connection>>>,
    /// Set on SIGINT/SIGTERM: cleanup stops before the next table.
    stop: Option<StopFlag>,
    /// The front end's own words for an error, where its peer has some (None: plain
    /// wording with `spell`).
    words: Option<Words>,
    /// The run's threads' end-of-run failures that did not fail it.
    end_failures: std::cell::RefCell<Option<plumb_oltp::workload::EndFailures>>,
}

/// The job's driver in a setup step before the run: the step's first connection names its
/// server to the group's baseline, which then starts while the step goes on. sysbench's
/// OLTP tests connect only inside their steps, so no server is known before the first.
struct Naming<'a> {
    driver: &'a dyn Driver,
    setup: SetupServer,
    /// Only the first connection asks: they all reach the same server, and over TCP the
    /// answer is a scan of /proc.
    asked: AtomicBool,
}

impl<'a> Naming<'a> {
    fn new(driver: &'a dyn Driver, setup: SetupServer) -> Self {
        Naming {
            driver,
            setup,
            asked: AtomicBool::new(false),
        }
    }
}

impl Driver for Naming<'_> {
    fn name(&self) -> &'static str {
        self.driver.name()
    }
    fn dialect(&self) -> Dialect {
        self.driver.dialect()
    }
    fn connect(&self) -> Result<Box<dyn Connection>, DriverError> {
        let c = self.driver.connect()?;
        if !self.asked.swap(true, Relaxed) {
            if let Some(pid) = c.server_pid() {
                self.setup.found(pid);
            }
        }
        Ok(c)
    }
    fn observer(&self) -> Result<Box<dyn Connection>, DriverError> {
        self.driver.observer()
    }
    fn settings(&self) -> Option<DatabaseSettings> {
        self.driver.settings()
    }
    fn counters(&self) -> Option<plumb_oltp::ServerCounters> {
        self.driver.counters()
    }
    fn dry_run(&self) -> bool {
        self.driver.dry_run()
    }
}

/// A front end's words for an OLTP error, or None to leave it to the plain wording.
pub type Words = Box<dyn Fn(&OltpError) -> Option<String>>;

impl OltpJob {
    pub fn new(spec: OltpSpec, driver: Arc<dyn Driver>, threads: usize, seed: u64) -> Self {
        OltpJob {
            spec,
            driver,
            threads,
            seed,
            database: Default::default(),
            counters_before: Default::default(),
            observer: Default::default(),
            spell: |s| s.plain().to_string(),
            stop: None,
            words: None,
            end_failures: Default::default(),
        }
    }
    /// Let a signal stop cleanup between two tables.
    pub fn stopped_by(mut self, stop: StopFlag) -> Self {
        self.stop = Some(stop);
        self
    }
    /// Name settings in errors as the front end's options do.
    pub fn spelled(mut self, spell: fn(Setting) -> String) -> Self {
        self.spell = spell;
        self
    }
    /// Word errors as the front end's peer does, where `words` has words for them.
    pub fn worded(mut self, words: Words) -> Self {
        self.words = Some(words);
        self
    }
    pub fn spec(&self) -> &OltpSpec {
        &self.spec
    }
    fn failed(&self, e: OltpError) -> JobError {
        JobError::failed(self.words_for(&e))
    }

    /// `e` in the front end's peer's words where it has some, else plainly.
    fn words_for(&self, e: &OltpError) -> String {
        let own = self.words.as_ref().and_then(|w| w(e));
        own.unwrap_or_else(|| e.describe(&self.spell))
    }

    /// A step's error: a setting the step cannot work with is a usage error, as the front
    /// end's own checks report them.
    fn step_failed(&self, e: OltpError) -> JobError {
        match e {
            OltpError::Interrupted(sig) => JobError::Interrupted(sig),
            // Unless the peer words it as a failure of its script.
            OltpError::Setting { .. } => match self.words.as_ref().and_then(|w| w(&e)) {
                Some(own) => JobError::failed(own),
                None => JobError::Usage(e.describe(&self.spell)),
            },
            e => self.failed(e),
        }
    }
}

impl Job for OltpJob {
    fn kind(&self) -> &'static str {
        self.spec.test.name()
    }
    fn prepare(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        let naming = ctx.setup_server().map(|s| Naming::new(&*self.driver, s));
        plumb_oltp::prepare::prepare(
            naming.as_ref().map_or(&*self.driver, |n| n as &dyn Driver),
            &self.spec,
            self.threads,
            self.seed,
            ctx.log(),
        )
        .map(|_| ())
        .map_err(|e| self.step_failed(e))
    }
    fn prewarm(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        let naming = ctx.setup_server().map(|s| Naming::new(&*self.driver, s));
        let driver = naming.as_ref().map_or(&*self.driver, |n| n as &dyn Driver);
        plumb_oltp::prewarm::prewarm(driver, &self.spec, self.threads, ctx.log())
            .map(|_| ())
            .map_err(|e| self.failed(e))
    }
    fn cleanup(&self, ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        plumb_oltp::cleanup::cleanup(
            &*self.driver,
            &self.spec,
            self.threads,
            self.stop.as_ref(),
            ctx.log(),
        )
        .map(|_| ())
        .map_err(|e| self.step_failed(e))
    }
    fn data_set(&self) -> Option<String> {
        let n = plumb_oltp::cleanup::tables_to_drop(&self.spec, self.threads);
        let tables = match n {
            1 => "table sbtest1".to_string(),
            _ => format!("tables sbtest1..sbtest{n}"),
        };
        Some(format!("{tables} in the {} database", self.driver.name()))
    }
    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        let w = plumb_oltp::Oltp::new(self.spec.clone(), self.driver.clone(), self.seed)
            .map_err(|e| self.failed(e))?;
        let mut observer = self
            .driver
            .observer()
            .map_err(|e| self.failed(OltpError::Connect(e)))?;
        if !self.driver.dry_run() {
            plumb_oltp::prepare::check_prepared(&mut *observer, &self.spec, self.driver.dialect())
                .map_err(|e| self.failed(e))?;
        }
        // An embedded database has no server to ask on a connection: the driver reads it.
        let database = observer.server_settings();
        let (database, before, observer) = match database {
            Some(db) => (Some(db), observer.server_counters(), Some(observer)),
            None => (self.driver.settings(), self.driver.counters(), None),
        };
        *self.database.borrow_mut() = database;
        *self.counters_before.borrow_mut() = before;
        *self.observer.borrow_mut() = observer;
        *self.end_failures.borrow_mut() = Some(w.end_failures());
        Ok(Arc::new(w))
    }
    fn targets(&self) -> Targets {
        Targets {
            dir: database_dir(self.database.borrow().as_ref()),
            files: Vec::new(),
        }
    }
    fn run_failure(&self, error: &plumb_core::WorkloadError) -> String {
        let own = error
            .0
            .downcast_ref::<OltpError>()
            .and_then(|e| self.words.as_ref()?(e));
        own.unwrap_or_else(|| error.to_string())
    }
    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        let before = self.counters_before.borrow().clone();
        // The kept connection may have died with the clients' (a lost server): ask anew.
        let after = self
            .observer
            .borrow_mut()
            .take()
            .and_then(|mut c| c.server_counters())
            .or_else(|| self.driver.counters());
        if let (Some(before), Some(after), Settings::Oltp(s)) = (before, after, &mut job.workload) {
            s.server_activity = Some(after.since(&before));
        }
        let failures = self
            .end_failures
            .borrow()
            .as_ref()
            .map(|f| std::mem::take(&mut *f.lock().unwrap_or_else(|p| p.into_inner())));
        if let (Some(failures), Settings::Oltp(s)) = (failures, &mut job.workload) {
            s.end_failures = failures.iter().map(|e| self.words_for(e)).collect();
        }
        Ok(())
    }
    fn settings(&self) -> Settings {
        let mut s = OltpSettings::from(&self.spec);
        s.database = self.database.borrow().clone();
        s.dry_run = self.driver.dry_run();
        Settings::Oltp(Box::new(s))
    }
}
