//! `plumb inspect PATH`: the target and the host, and what can be known before running.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use plumb_core::size::format_spaced;
use plumb_observe::host::{self, HostFacts, LoadAtStart};
use plumb_observe::residency::{ResidencyMethod, ResidencyProbe, ResidencySnapshot};
use plumb_observe::{Roots, Target, TargetKind};
use plumb_report::observations::device_line;
use serde::Serialize;

#[derive(Serialize)]
struct Inspection {
    schema: &'static str,
    target: Target,
    host: HostFacts,
    load: LoadAtStart,
    /// When PATH is a regular file: how much of it is in the page cache now.
    #[serde(skip_serializing_if = "Option::is_none")]
    residency: Option<ResidencySnapshot>,
    /// What the facts mean for a benchmark on this path.
    notes: Vec<String>,
}

/// Report on PATH without running a benchmark.
#[derive(clap::Args, Debug)]
#[command(override_usage = "plumb inspect PATH [--format=text|json]")]
pub struct Args {
    /// A file, directory or block device: where a benchmark would run
    #[arg(value_name = "PATH", value_hint = clap::ValueHint::AnyPath)]
    path: PathBuf,
    /// Report layout on stdout
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let path = args.path;
    let json = args.format == Format::Json;
    let roots = Roots::default();
    let target = plumb_observe::target::resolve_with(&roots, &path)?;
    let host = host::host_facts(&roots);
    let load = host::load_at_start(&roots, Duration::from_millis(250));
    let notes = notes(&target, &host);
    let residency = target
        .resolved_path
        .is_file()
        .then(|| ResidencyProbe::default().files(std::slice::from_ref(&target.resolved_path)));
    let i = Inspection {
        schema: "plumb.inspect/1",
        target,
        host,
        load,
        residency,
        notes,
    };
    let mut out = std::io::stdout().lock();
    if json {
        let mut s = serde_json::to_string_pretty(&i)?;
        s.push('\n');
        let _ = out.write_all(s.as_bytes());
    } else {
        let _ = out.write_all(text(&i).as_bytes());
    }
    let _ = out.flush();
    Ok(0)
}

/// What the target and host mean for a benchmark, one sentence each.
fn notes(t: &Target, h: &HostFacts) -> Vec<String> {
    let mut n = Vec::new();
    match t.kind {
        TargetKind::Tmpfs => n.push(format!(
            "{} is {}: files live in memory, so I/O figures measure memory, not a disk",
            t.resolved_path.display(),
            t.fs_type
        )),
        TargetKind::Ramdisk => n.push(format!(
            "{} is on a RAM disk ({}): I/O figures measure memory, not a disk",
            t.resolved_path.display(),
            t.device.as_ref().map(|d| d.name.as_str()).unwrap_or("?")
        )),
        TargetKind::Overlay => n.push(format!(
            "{} is on an overlay filesystem (a container layer): writes go through copy-up to {}",
            t.resolved_path.display(),
            t.overlay_upper_dir
                .as_ref()
                .map(|u| u.display().to_string())
                .unwrap_or_else(|| "the upper directory".into())
        )),
        TargetKind::Network => n.push(format!(
            "{} is on a network filesystem ({}, {}): figures include the network and the server",
            t.resolved_path.display(),
            t.fs_type,
            t.mount_source
        )),
        TargetKind::Other if t.device.is_none() => n.push(format!(
            "{} is on {} with no block device plumb can watch: device-level evidence will be missing",
            t.resolved_path.display(),
            t.fs_type
        )),
        _ => {}
    }
    if t.on_system_disk == Some(true) && !t.other_disks.is_empty() {
        n.push(format!(
            "{} is on the system disk ({}) while other disks exist ({}): check this is the disk you mean to test",
            t.resolved_path.display(),
            t.system_disks.join(", "),
            t.other_disks.join(", ")
        ));
    }
    if let Some(avail) = t.fs_available_bytes {
        n.push(format!(
            "{} free for files here: a test's total size must fit",
            format_spaced(avail)
        ));
    }
    if h.memory_total_bytes > 0 {
        n.push(format!(
            "memory is {}: a data set smaller than that can be served from the page cache unless the test uses direct I/O",
            format_spaced(h.memory_total_bytes)
        ));
    }
    n
}

fn col(out: &mut String, label: &str, value: &str) {
    out.push_str(&format!("    {label:<30}{value}\n"));
}

fn text(i: &Inspection) -> String {
    let t = &i.target;
    let h = &i.host;
    let mut s = format!("Target {}:\n", t.path.display());
    col(
        &mut s,
        "resolved path:",
        &t.resolved_path.display().to_string(),
    );
    col(&mut s, "kind:", t.kind.name());
    col(&mut s, "filesystem:", &t.fs_type);
    col(&mut s, "mount point:", &t.mount_point.display().to_string());
    col(&mut s, "mount source:", &t.mount_source);
    col(&mut s, "mount options:", &t.mount_options);
    if let Some(b) = &t.bind_root {
        col(&mut s, "bind mount of:", b);
    }
    if let Some(u) = &t.overlay_upper_dir {
        col(&mut s, "overlay upper dir:", &u.display().to_string());
    }
    if let Some(d) = &t.device {
        col(&mut s, "device:", &format!("/dev/{}", device_line(d)));
    }
    for d in &t.disks {
        if t.device.as_ref().is_some_and(|x| x.name == d.name) {
            continue;
        }
        col(&mut s, "disk:", &format!("/dev/{}", device_line(d)));
    }
    if let Some(sys) = t.on_system_disk {
        col(&mut s, "system disk:", if sys { "yes" } else { "no" });
    }
    col(
        &mut s,
        "other disks:",
        &if t.other_disks.is_empty() {
            "none".to_string()
        } else {
            t.other_disks.join(", ")
        },
    );
    if let (Some(sz), Some(av)) = (t.fs_size_bytes, t.fs_available_bytes) {
        col(
            &mut s,
            "free space:",
            &format!("{} available of {}", format_spaced(av), format_spaced(sz)),
        );
    }
    for note in &t.notes {
        col(&mut s, "note:", note);
    }
    if let Some(r) = &i.residency {
        let method = match r.method {
            ResidencyMethod::Cachestat => "cachestat",
            ResidencyMethod::Mincore => "mincore",
        };
        col(
            &mut s,
            "in page cache:",
            &format!(
                "{} of {} ({:.1}%, {method})",
                format_spaced(r.resident_bytes),
                format_spaced(r.total_bytes),
                r.resident_pct
            ),
        );
    }
    s.push_str("\nHost:\n");
    if let Some(n) = &h.hostname {
        col(&mut s, "hostname:", n);
    }
    if let Some(k) = &h.kernel_release {
        col(&mut s, "kernel:", &format!("{k} ({})", h.arch));
    }
    col(
        &mut s,
        "CPU model:",
        h.cpu_model.as_deref().unwrap_or("unknown"),
    );
    let mut cpus = format!("{} logical", h.logical_cpus);
    if let Some(c) = h.physical_cores {
        cpus.push_str(&format!(", {c} cores"));
    }
    if let Some(so) = h.sockets {
        cpus.push_str(&format!(", {so} socket(s)"));
    }
    if let Some(u) = h.usable_cpus.filter(|&u| u != h.logical_cpus) {
        cpus.push_str(&format!(", {u} usable by this process"));
    }
    col(&mut s, "CPUs:", &cpus);
    col(&mut s, "NUMA nodes:", &h.numa_nodes.to_string());
    let caches: Vec<String> = [
        ("L1d", h.l1d_cache_bytes),
        ("L2", h.l2_cache_bytes),
        ("L3", h.l3_cache_bytes),
    ]
    .iter()
    .filter_map(|(n, b)| b.map(|b| format!("{n} {}", format_spaced(b))))
    .collect();
    if !caches.is_empty() {
        col(&mut s, "CPU caches:", &caches.join(", "));
    }
    col(
        &mut s,
        "frequency governor:",
        &if h.frequency_governors.is_empty() {
            "none exposed".to_string()
        } else {
            h.frequency_governors.join(", ")
        },
    );
    col(&mut s, "memory:", &format_spaced(h.memory_total_bytes));
    let v = &h.virtualization;
    let virt = match (&v.hypervisor, &v.container) {
        (None, None) => "none detected".to_string(),
        (a, b) => [
            a.as_ref().map(|x| format!("virtual machine ({x})")),
            b.as_ref().map(|x| format!("container ({x})")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", "),
    };
    col(&mut s, "virtualisation:", &virt);
    let l = &i.load;
    col(
        &mut s,
        "load now:",
        &format!(
            "{:.2} {:.2} {:.2}{}",
            l.load_avg_1m,
            l.load_avg_5m,
            l.load_avg_15m,
            l.busy_cpu_pct
                .map(|b| format!(", CPU busy {b:.1}% over {:.2}s", l.window_s))
                .unwrap_or_default()
        ),
    );
    if !i.notes.is_empty() {
        s.push_str("\nBefore running:\n");
        for n in &i.notes {
            s.push_str(&format!("    - {n}\n"));
        }
    }
    s
}
