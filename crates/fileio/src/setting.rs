//! The settings of a file-I/O job, as errors name them.
//!
//! plumb-fileio knows no front end's option names. An error that is about a setting names
//! the [`Setting`]; whoever shows the error spells it in the syntax the user typed
//! (`--file-block-size` for sysbench, `bs=` for fio) with a [`Spelling`]. Shown without
//! one (`Display`), settings read as plain words.

/// One setting of the job model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The directory holding the files.
    Dir,
    /// How many files.
    FileCount,
    /// The size of all files together.
    TotalSize,
    /// The size of one request.
    BlockSize,
    /// How many blocks one sequential request merges.
    MergedRequests,
    /// The access pattern (what is read or written, in which order).
    Access,
    /// The I/O engine.
    Engine,
    /// Requests in flight per thread.
    QueueDepth,
    /// Worker threads.
    Threads,
    /// Extra open(2) flags (O_SYNC, O_DSYNC, O_DIRECT).
    OpenFlags,
    /// Direct I/O (O_DIRECT).
    Direct,
    /// Writing zeros instead of random data.
    ZeroFill,
    /// Checksummed data, checked on every read.
    Validate,
}

/// How a front end writes a setting's name.
pub type Spelling<'a> = &'a dyn Fn(Setting) -> String;

impl Setting {
    /// The setting in plain words, for messages shown without a front end's spelling.
    pub fn plain(self) -> &'static str {
        match self {
            Setting::Dir => "directory",
            Setting::FileCount => "number of files",
            Setting::TotalSize => "total size",
            Setting::BlockSize => "block size",
            Setting::MergedRequests => "merged requests",
            Setting::Access => "access pattern",
            Setting::Engine => "engine",
            Setting::QueueDepth => "queue depth",
            Setting::Threads => "threads",
            Setting::OpenFlags => "open flags",
            Setting::Direct => "direct I/O",
            Setting::ZeroFill => "zero fill",
            Setting::Validate => "validation",
        }
    }
}

/// The spelling `Display` uses: plain words.
pub fn plain(s: Setting) -> String {
    s.plain().to_string()
}

/// One piece of a [`Message`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Setting(Setting),
}

impl From<&str> for Part {
    fn from(s: &str) -> Part {
        Part::Text(s.to_string())
    }
}

impl From<String> for Part {
    fn from(s: String) -> Part {
        Part::Text(s)
    }
}

impl From<Setting> for Part {
    fn from(s: Setting) -> Part {
        Part::Setting(s)
    }
}

/// A sentence that names settings, spelled when it is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message(pub Vec<Part>);

impl Message {
    pub fn describe(&self, spell: Spelling<'_>) -> String {
        let mut s = String::new();
        for p in &self.0 {
            match p {
                Part::Text(t) => s.push_str(t),
                Part::Setting(x) => s.push_str(&spell(*x)),
            }
        }
        s
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe(&plain))
    }
}

/// A [`Message`] from text and settings: `message!["the ", Setting::BlockSize, " is 0"]`.
#[macro_export]
macro_rules! message {
    ($($part:expr),* $(,)?) => {
        $crate::setting::Message(vec![$($crate::setting::Part::from($part)),*])
    };
}
