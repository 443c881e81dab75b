//! One mysqlslap iteration (for one engine and one concurrency value) as a job: prepare is
//! the main connection's set-up (schema, population, keys, pre-statements), the run is the
//! clients, `after_run` the post-statements, and cleanup (on the last iteration of an engine
//! only) drops the schema. The main connection is shared by every iteration of the plan, as
//! mysqlslap keeps one for the whole run.

use std::sync::{Arc, Mutex, MutexGuard};

use plumb_core::Workload;
use plumb_oltp::settings::DatabaseSettings;
use plumb_oltp::slap::{Engine, Main, SlapClients, SlapSettings};
use plumb_oltp::Driver;

use crate::plan::{Job, JobError, StepContext, Targets};
use crate::record::{JobRecord, Settings};

/// What every iteration of a run shares: the main connection and the clients' driver.
pub struct SlapRun {
    pub main: Mutex<Main>,
    /// Connects the clients to the schema.
    pub clients: Arc<dyn Driver>,
    /// The server's settings, read by the first iteration: every iteration re-creates the
    /// same schema on the same server.
    pub database: Mutex<Option<DatabaseSettings>>,
}

/// Where an iteration sits in the run.
#[derive(Clone, Debug)]
pub struct SlapPoint {
    pub engine: Option<Engine>,
    pub concurrency: u32,
    /// 1-based.
    pub iteration: u32,
    /// The first iteration of its engine (mysqlslap's "Starting Concurrency Test").
    pub first_of_engine: bool,
    /// The last iteration of its engine: the schema is dropped after it.
    pub last_of_engine: bool,
}

pub struct SlapJob {
    run: Arc<SlapRun>,
    point: SlapPoint,
    database: std::cell::RefCell<Option<DatabaseSettings>>,
    /// The server's counters when the clients started.
    counters_before: std::cell::RefCell<Option<plumb_oltp::ServerCounters>>,
}

impl SlapJob {
    pub fn new(run: Arc<SlapRun>, point: SlapPoint) -> Self {
        SlapJob {
            run,
            point,
            database: Default::default(),
            counters_before: Default::default(),
        }
    }

    fn main(&self) -> MutexGuard<'_, Main> {
        self.run.main.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn failed(e: plumb_oltp::slap::SlapError) -> JobError {
    match e {
        plumb_oltp::slap::SlapError::Interrupted(sig) => JobError::Interrupted(sig),
        e => JobError::failed(e),
    }
}

impl Job for SlapJob {
    fn kind(&self) -> &'static str {
        "mysqlslap"
    }

    fn prepare(&self, _ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        let mut main = self.main();
        if self.point.first_of_engine {
            main.console().note(2, "Starting Concurrency Test");
        }
        main.setup(self.point.engine.as_ref()).map_err(failed)
    }

    fn cleanup(&self, _ctx: &mut StepContext<'_>) -> Result<(), JobError> {
        let mut main = self.main();
        if self.point.last_of_engine && main.spec().drops_schema() {
            main.drop_schema().map_err(failed)?;
        }
        Ok(())
    }

    fn workload(&self, _notes: &mut Vec<String>) -> Result<Arc<dyn Workload>, JobError> {
        let mut main = self.main();
        let spec = main.spec().clone();
        if !spec.only_print {
            // Both on the main connection, idle until the clients end: no connection of
            // their own (mysqlslap opens none).
            if self.database.borrow().is_none() {
                let mut shared = self.run.database.lock().unwrap_or_else(|p| p.into_inner());
                if shared.is_none() {
                    *shared = main.database_settings();
                }
                *self.database.borrow_mut() = shared.clone();
            }
            *self.counters_before.borrow_mut() = main.server_counters();
        }
        let queries = Arc::new(main.statements().queries.clone());
        Ok(Arc::new(SlapClients::new(
            spec.clone(),
            self.run.clients.clone(),
            main.console().clone(),
            queries,
            main.keys().clone(),
            spec.client_limit(self.point.concurrency),
        )))
    }

    fn settings(&self) -> Settings {
        let main = self.main();
        let mut s = SlapSettings::new(
            main.spec(),
            main.dialect(),
            self.point.engine.as_ref(),
            self.point.concurrency,
            self.point.iteration,
            main.statements().queries.len() as u64,
        );
        s.database = self.database.borrow().clone();
        Settings::Slap(Box::new(s))
    }

    fn targets(&self) -> Targets {
        Targets {
            dir: super::oltp::database_dir(self.database.borrow().as_ref()),
            files: Vec::new(),
        }
    }

    fn after_run(&self, job: &mut JobRecord) -> Result<(), JobError> {
        let mut main = self.main();
        let before = self.counters_before.borrow().clone();
        if let Some(before) = before {
            if let (Some(after), Settings::Slap(s)) = (main.server_counters(), &mut job.workload) {
                s.server_activity = Some(after.since(&before));
            }
        }
        main.finish_iteration().map_err(failed)
    }
}
