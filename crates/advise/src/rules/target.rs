//! Where the data lived and who was watching.

use crate::Knob;
use crate::{Facts, Finding, Severity};

/// A debugger or tracer (strace, gdb, perf trace) was attached: every system call was slowed.
pub fn tracer_attached(f: &Facts) -> Option<Finding> {
    let p = f.process.as_ref()?;
    if !p.tracer_attached {
        return None;
    }
    let mut x = Finding::new(
        "tracer-attached",
        Severity::Invalid,
        "A tracer was attached to plumb during the run: tracing slows every system call, so the figures describe the tracer's overhead.",
    );
    if let Some(t) = &p.tracer {
        x = x.evidence("tracer", t);
    }
    Some(x.advice("Run without strace/gdb; to see system calls, use plumb's own observations or a low-overhead tracer on another run."))
}

/// The files were on tmpfs, a ramdisk or an overlay: no disk was tested.
pub fn not_a_disk(f: &Facts) -> Option<Finding> {
    let t = f.target.as_ref()?;
    let (severity, what) = match t.kind.as_str() {
        "tmpfs" | "ramdisk" => (Severity::Invalid, "memory, not a disk"),
        "overlay" => (
            Severity::Caution,
            "an overlay filesystem (container layer), not the disk underneath",
        ),
        "network" => (
            Severity::Caution,
            "a network filesystem: the network and the server are part of every figure",
        ),
        _ => return None,
    };
    f.io.as_ref()?;
    Some(
        Finding::new("target-not-a-disk", severity, format!("The test files were on {what}."))
            .evidence("directory", &t.path)
            .evidence("filesystem", &t.fs_type)
            .advice("Run plumb in a directory on the disk you mean to test (plumb inspect DIR shows what a directory lives on)."),
    )
}

/// The files were on the system disk while other disks exist: probably not the disk meant.
pub fn system_disk(f: &Facts) -> Option<Finding> {
    let t = f.target.as_ref()?;
    f.io.as_ref()?;
    if !t.system_disk || t.other_disks.is_empty() || t.kind != "disk" {
        return None;
    }
    Some(
        Finding::new(
            "target-system-disk",
            Severity::Caution,
            "The test ran on the system disk (the one holding /) while other disks exist: it may not be the disk you meant to test.",
        )
        .evidence("directory", &t.path)
        .evidence("device", t.device.as_deref().unwrap_or("?"))
        .evidence("other disks", t.other_disks.join(", "))
        .advice("cd to a directory on the disk under test before running (sysbench and plumb write in the current directory)."),
    )
}

/// Zero-filled buffers on a filesystem that compresses or deduplicates: little real I/O.
pub fn zero_fill_compressing(f: &Facts) -> Option<Finding> {
    let io = f.io.as_ref()?;
    let t = f.target.as_ref()?;
    if !io.zero_fill || !t.compressing || !io.writes_data() {
        return None;
    }
    Some(
        Finding::new(
            "zero-fill-compressing",
            Severity::Invalid,
            "Zero-filled data was written to a compressing or deduplicating filesystem: it stores almost nothing, so write figures are inflated.",
        )
        .evidence("filesystem", &t.fs_type)
        .evidence("fill", "zero")
        .advice(format!(
            "Use {} (plumb's default) so the data cannot be compressed away.",
            f.knob(Knob::RandomFill)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scenario::fileio;

    #[test]
    fn tracer_triggers_and_absence_is_clean() {
        let mut f = fileio("rndrd");
        assert!(tracer_attached(&f).is_none());
        let p = f.process.as_mut().unwrap();
        p.tracer_attached = true;
        p.tracer = Some("strace".into());
        assert_eq!(tracer_attached(&f).unwrap().severity, Severity::Invalid);
    }

    #[test]
    fn tmpfs_triggers_and_disk_is_clean() {
        let mut f = fileio("rndrd");
        assert!(not_a_disk(&f).is_none());
        f.target.as_mut().unwrap().kind = "tmpfs".into();
        assert_eq!(not_a_disk(&f).unwrap().severity, Severity::Invalid);
    }

    #[test]
    fn system_disk_with_others_triggers() {
        let mut f = fileio("rndrd");
        assert!(system_disk(&f).is_none());
        f.target.as_mut().unwrap().system_disk = true;
        assert!(system_disk(&f).is_some());
        f.target.as_mut().unwrap().other_disks.clear();
        assert!(system_disk(&f).is_none(), "the only disk is the one meant");
    }

    #[test]
    fn zero_fill_on_compressing_fs_triggers() {
        let mut f = fileio("rndwr");
        f.io.as_mut().unwrap().zero_fill = true;
        assert!(zero_fill_compressing(&f).is_none());
        f.target.as_mut().unwrap().compressing = true;
        assert!(zero_fill_compressing(&f).is_some());
        f.io.as_mut().unwrap().zero_fill = false;
        assert!(zero_fill_compressing(&f).is_none());
    }
}
