//! What differs between two runs before any figure is looked at: the host, the kernel, the
//! target and its filesystem, and the settings of each pair of jobs.

use plumb_observe::Observations;
use plumb_pipeline::{JobRecord, Record};
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// `host`, `kernel`, `target`, `filesystem`, `settings`, `run`.
    pub area: &'static str,
    pub what: String,
    pub a: String,
    pub b: String,
}

pub fn between(a: &Record, b: &Record) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut diff = |area, what: &str, va: String, vb: String| {
        if va != vb {
            out.push(Difference {
                area,
                what: what.to_string(),
                a: va,
                b: vb,
            });
        }
    };
    diff("run", "front end", a.front_end.clone(), b.front_end.clone());
    diff(
        "run",
        "plumb version",
        a.plumb_version.clone(),
        b.plumb_version.clone(),
    );
    let (oa, ob) = (observations(a), observations(b));
    for (area, what, get) in FACTS {
        diff(area, what, fact(oa, *get), fact(ob, *get));
    }
    let (ja, jb): (Vec<_>, Vec<_>) = (a.jobs().collect(), b.jobs().collect());
    for (i, (x, y)) in ja.iter().zip(&jb).enumerate() {
        let prefix = if ja.len() > 1 || jb.len() > 1 {
            format!("job {} ", i + 1)
        } else {
            String::new()
        };
        diff(
            "settings",
            &format!("{prefix}test"),
            x.workload.test().to_string(),
            y.workload.test().to_string(),
        );
        // An interrupted run's figures cover only the time until the signal.
        let status = |j: &JobRecord| match j.status {
            plumb_core::result::Status::Completed => "completed".to_string(),
            plumb_core::result::Status::Interrupted => format!("interrupted ({})", j.stop_reason),
            plumb_core::result::Status::ForcedShutdown => {
                format!("forced shutdown ({})", j.stop_reason)
            }
        };
        diff("run", &format!("{prefix}status"), status(x), status(y));
        let (sa, sb) = (settings(x), settings(y));
        let mut keys: Vec<&String> = sa.iter().chain(sb.iter()).map(|(k, _)| k).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let get = |s: &[(String, String)]| {
                s.iter()
                    .find(|(n, _)| n == k)
                    .map_or("(none)".to_string(), |(_, v)| v.clone())
            };
            diff("settings", &format!("{prefix}{k}"), get(&sa), get(&sb));
        }
    }
    if ja.len() != jb.len() {
        diff("run", "jobs", ja.len().to_string(), jb.len().to_string());
    }
    out
}

/// The first group's observations: host and target facts are the same for every group.
fn observations(r: &Record) -> Option<&Observations> {
    r.groups.iter().find_map(|g| g.observations.as_ref())
}

type Fact = fn(&Observations) -> Option<String>;

/// The facts compared, in the order they are listed.
const FACTS: &[(&str, &str, Fact)] = &[
    ("host", "hostname", |o| o.host.hostname.clone()),
    ("host", "CPU model", |o| o.host.cpu_model.clone()),
    ("host", "logical CPUs", |o| {
        Some(o.host.logical_cpus.to_string())
    }),
    ("host", "usable CPUs", |o| {
        o.host.usable_cpus.map(|n| n.to_string())
    }),
    ("host", "memory", |o| Some(mib(o.host.memory_total_bytes))),
    ("host", "frequency governor", |o| {
        Some(o.host.frequency_governors.join(","))
    }),
    ("host", "virtualization", |o| {
        let v = &o.host.virtualization;
        serde_json::to_value(v).ok().map(|v| compact(&v))
    }),
    ("kernel", "kernel release", |o| {
        o.host.kernel_release.clone()
    }),
    ("kernel", "kernel version", |o| {
        o.host.kernel_version.clone()
    }),
    ("target", "directory", |o| {
        o.target.as_ref().map(|t| t.path.display().to_string())
    }),
    ("target", "kind", |o| {
        o.target.as_ref().map(|t| t.kind.name().to_string())
    }),
    ("target", "device", |o| {
        o.target
            .as_ref()
            .and_then(|t| t.device.as_ref())
            .map(|d| d.name.clone())
    }),
    ("target", "disk model", |o| {
        o.target
            .as_ref()
            .and_then(|t| t.disks.first())
            .and_then(|d| d.model.clone())
    }),
    ("filesystem", "type", |o| {
        o.target.as_ref().map(|t| t.fs_type.clone())
    }),
    ("filesystem", "mount options", |o| {
        o.target.as_ref().map(|t| t.mount_options.clone())
    }),
];

fn fact(o: Option<&Observations>, get: Fact) -> String {
    o.and_then(get).unwrap_or_else(|| "(unknown)".to_string())
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

/// A job's settings as (dotted name, value): the workload's parameters and how the harness
/// drove it. Figures the workload measured (rates, times, the writers a file met) are not
/// settings; the seed counts only when one of the runs was given one.
fn settings(j: &JobRecord) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(Value::Object(w)) = serde_json::to_value(&j.workload) {
        if let Some(v) = w.get("workload") {
            flatten("", v, &mut out);
        }
    }
    out.retain(|(k, _)| !is_measured(k));
    // The harness's settings are all asked for, a rate (`rate_per_s`) too.
    if let Ok(v) = serde_json::to_value(&j.settings) {
        flatten("", &v, &mut out);
    }
    out.retain(|(k, _)| k != "rand_seed" || j.seed_given);
    out
}

/// A workload's figure rather than its setting: rates and times it measured, the server's
/// counters over the run (compared as figures), the errors it ended with.
fn is_measured(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    key.starts_with("server_activity.")
        || key.starts_with("end_failures")
        || last.ends_with("_per_s")
        || last.ends_with("_wall_s")
        || last.ends_with("_completed_bytes")
        || last == "writers_per_file"
        || last == "engine_note"
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), compact(other))),
    }
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures_are_not_settings() {
        for k in [
            "server_activity.rows_read",
            "mib_per_s",
            "end_fsync_wall_s",
            "writers_per_file",
            "seqwr_completed_bytes",
        ] {
            assert!(is_measured(k), "{k}");
        }
        for k in ["cpu_max_prime", "threads", "access.mix", "fsync_freq"] {
            assert!(!is_measured(k), "{k}");
        }
    }

    #[test]
    fn flattening_names_nested_values_by_path() {
        let v = serde_json::json!({"a": 1, "b": {"c": "x", "d": null}, "e": [1, 2]});
        let mut out = Vec::new();
        flatten("", &v, &mut out);
        assert_eq!(
            out,
            vec![
                ("a".into(), "1".into()),
                ("b.c".into(), "x".into()),
                ("b.d".into(), "(none)".into()),
                ("e".into(), "[1,2]".into()),
            ]
        );
    }
}
