//! The lines sysbench's logger adds above its default verbosity (3): at its info level (4)
//! what the test does and how the workers ended, at its debug level (5) each helper and
//! worker thread as it starts and each file as it is opened; --debug adds each thread's
//! figures after the report.

use std::fmt::Write;

use plumb_core::result::Status;
use plumb_pipeline::{JobRecord, Settings};

/// Which of those lines a run printed.
pub(crate) struct Talk {
    pub info: bool,
    pub debug: bool,
    pub per_thread: bool,
}

impl Talk {
    /// The test's info lines, before its header block.
    pub fn test_intro(&self, job: &JobRecord) -> String {
        if !self.info {
            return String::new();
        }
        match &job.workload {
            Settings::Cpu(_) => "Doing CPU performance benchmark\n\n".into(),
            Settings::Threads(t) => format!(
                "Doing thread subsystem performance test\nThread yields per test: {} Locks used: {}\n",
                t.thread_yields, t.thread_locks
            ),
            Settings::Mutex(_) => "Doing mutex performance test\n".into(),
            _ => String::new(),
        }
    }

    /// fileio opens every file before its workers start, under the names prepare gave them.
    pub fn opened_files(&self, job: &JobRecord) -> String {
        let mut s = String::new();
        if let Settings::Fileio(f) = &job.workload {
            for i in (0..f.num_files).filter(|_| self.debug) {
                let _ = writeln!(
                    s,
                    "DEBUG: Opening file: {}",
                    plumb_fileio::fileset::file_name(i)
                );
            }
        }
        s
    }

    /// The threads sysbench starts before its workers: the one that prints the interval
    /// lines and the one that schedules --rate's arrivals.
    pub fn helper_threads(&self, job: &JobRecord) -> String {
        let mut s = String::new();
        if self.debug && job.settings.report_interval_s.is_some() {
            s.push_str("DEBUG: Reporting thread started\n");
        }
        if self.debug && job.settings.rate_per_s.is_some() {
            s.push_str("DEBUG: Event generating thread started\n");
        }
        s
    }

    /// Each worker thread, started and then initialized (sysbench's order between the
    /// threads varies from run to run; plumb prints them in thread order).
    pub fn workers(&self, job: &JobRecord) -> String {
        let mut s = String::new();
        for t in (0..job.settings.threads).filter(|_| self.debug) {
            let _ = writeln!(s, "DEBUG: Worker thread (#{t}) started");
            let _ = writeln!(s, "DEBUG: Worker thread (#{t}) initialized");
        }
        s
    }

    /// How the workers ended: each thread that met the time or event limit says so
    /// (sysbench's logger folds the repeats of one message into a count). A run cut short
    /// by a signal, a forced shutdown or an error never gets there.
    pub fn limit_lines(&self, job: &JobRecord) -> String {
        let mut s = String::new();
        if !self.ends_normally(job) {
            return s;
        }
        let limit = match job.stop_reason.as_str() {
            "time" => "Time",
            "events" => "Event",
            _ => return s,
        };
        let _ = writeln!(s, "{limit} limit exceeded, exiting...");
        if job.settings.threads > 1 {
            let _ = writeln!(
                s,
                "(last message repeated {} times)",
                job.settings.threads - 1
            );
        }
        s
    }

    /// "Done." once the workers have all stopped (after what their thread_done said).
    pub fn done(&self, job: &JobRecord) -> &'static str {
        if self.ends_normally(job) {
            "Done.\n\n"
        } else {
            ""
        }
    }

    fn ends_normally(&self, job: &JobRecord) -> bool {
        self.info && job.error.is_none() && job.status == Status::Completed
    }

    /// --debug's figures for each thread, after the fairness block.
    pub fn per_thread_figures(&self, job: &JobRecord) -> String {
        let mut s = String::new();
        if !self.per_thread {
            return s;
        }
        let secs = |ns: u64| ns as f64 / 1e9;
        s.push_str("DEBUG: Verbose per-thread statistics:\n\n");
        for (i, t) in job.threads.iter().enumerate() {
            let avg = t.exec_time_ns.checked_div(t.events).unwrap_or(0);
            let _ = writeln!(
                s,
                "DEBUG:     thread #{i:3}: min: {:.4}s  avg: {:.4}s  max: {:.4}s  events: {}",
                secs(t.min_ns),
                secs(avg),
                secs(t.max_ns),
                t.events
            );
            let _ = writeln!(
                s,
                "DEBUG:                  total time taken by event execution: {:.4}s",
                secs(t.exec_time_ns)
            );
        }
        s.push('\n');
        s
    }
}
