//! plumb's own commands (not sysbench or fio syntax): `inspect` and `iostat`.

pub mod inspect;
pub mod iostat;
pub mod report;

/// The lines `plumb help` adds for these commands.
pub const HELP: &str = "\
Native commands:
  plumb inspect PATH [--format=text|json]
        what stores PATH (filesystem, device, system disk or not, free space) and the host,
        and what that means for a benchmark, without running one
  plumb iostat [DEVICE...] [INTERVAL [COUNT]]
        live block-device statistics in iostat -x's layout (Ctrl-C stops)
  plumb report FILE.json [--format=text|json]
        a saved result (--json=FILE) shown again as the run printed it, findings evaluated again
";
