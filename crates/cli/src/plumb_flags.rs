//! plumb's own options inside a peer tool's command line (`plumb fio`, `plumb mysqlslap`),
//! taken out before the peer's parser sees the rest.

use std::path::PathBuf;

use crate::keep::Keep;

pub struct PlumbFlags {
    /// `--plumb-json=FILE`: plumb's record (for `plumb report`, history, comparison).
    pub json_file: Option<PathBuf>,
    /// `--plumb-findings=on|off`: plumb's sections after the report (the default depends on
    /// the name the binary runs under).
    pub findings: Option<bool>,
    /// The history: `--no-history` and `--tag=NAME` under the name `plumb`; under a peer's
    /// name runs are kept silently and those are the peer's unknown options.
    pub keep: Keep,
    /// `--plumb-buffers=thp`: request buffers in transparent huge pages (front ends that do
    /// I/O only; `plumb disk` uses it so 1 MiB direct requests reach the disk whole).
    pub io_buffers: Option<plumb_fileio::buf::BufferMemory>,
    plumb_name: bool,
    io: bool,
}

impl PlumbFlags {
    /// The defaults under plumb's own name (`plumb_name`) or a peer's.
    pub fn new(plumb_name: bool) -> Self {
        PlumbFlags {
            json_file: None,
            findings: None,
            keep: if plumb_name {
                Keep::plumb(false, Vec::new())
            } else {
                Keep::silent()
            },
            io_buffers: None,
            plumb_name,
            io: false,
        }
    }

    /// Also take the options of front ends that do I/O.
    pub fn with_io_options(mut self) -> Self {
        self.io = true;
        self
    }

    /// Take `arg` when it is one of these options: `None` when it is not, `Some(Err)` when
    /// its value is wrong.
    pub fn take(&mut self, arg: &str) -> Option<Result<(), String>> {
        if self.plumb_name && arg == "--no-history" {
            self.keep.store = false;
        } else if let Some(tag) = arg.strip_prefix("--tag=").filter(|_| self.plumb_name) {
            if let Err(e) = crate::keep::check_tag(tag) {
                return Some(Err(e));
            }
            self.keep.tags.push(tag.to_string());
        } else if let Some(v) = arg.strip_prefix("--plumb-json=") {
            if v.is_empty() {
                return Some(Err("--plumb-json needs a file name".into()));
            }
            self.json_file = Some(PathBuf::from(v));
        } else if let Some(v) = arg.strip_prefix("--plumb-findings=") {
            self.findings = match v {
                "on" => Some(true),
                "off" => Some(false),
                _ => return Some(Err(format!("--plumb-findings takes on or off, not '{v}'"))),
            };
        } else if let Some(v) = arg.strip_prefix("--plumb-buffers=").filter(|_| self.io) {
            self.io_buffers = match v {
                "thp" => Some(plumb_fileio::buf::BufferMemory::Transparent),
                "heap" => Some(plumb_fileio::buf::BufferMemory::Heap),
                _ => return Some(Err(format!("--plumb-buffers takes thp or heap, not '{v}'"))),
            };
        } else {
            return None;
        }
        Some(Ok(()))
    }
}
