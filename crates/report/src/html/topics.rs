//! Which part of the page a finding explains, so that it is shown beside that chart.

/// The parts of a run's page that findings stand beside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    /// Throughput over time: is it steady, long enough, free of retries.
    Throughput,
    /// The latency distribution.
    Distribution,
    /// The device under the files: what reached it, how it was driven.
    Device,
    /// Page cache and buffer pool: what was served from memory.
    Cache,
    /// CPU: plumb's own, other programs', a tracer.
    Cpu,
    /// A finding this table does not place (a rule newer than it).
    Other,
}

/// Finding ids (docs/findings.md) by the chart whose data explains them.
const PLACES: &[(&str, Topic)] = &[
    ("not-steady", Topic::Throughput),
    ("steadiness-unknown", Topic::Throughput),
    ("database-errors", Topic::Throughput),
    ("io-errors", Topic::Throughput),
    ("bimodal-latency", Topic::Distribution),
    ("fsync-dominated", Topic::Device),
    ("final-fsync-skew", Topic::Device),
    ("many-files", Topic::Device),
    ("shared-file-writers", Topic::Device),
    ("target-not-a-disk", Topic::Device),
    ("target-system-disk", Topic::Device),
    ("zero-fill-compressing", Topic::Device),
    ("requests-split", Topic::Device),
    ("durability-relaxed", Topic::Device),
    ("page-cache-reads", Topic::Cache),
    ("page-cache-writes", Topic::Cache),
    ("memory-block-in-cache", Topic::Cache),
    ("data-in-buffer-pool", Topic::Cache),
    ("plumb-cpu-bound", Topic::Cpu),
    ("client-bound", Topic::Cpu),
    ("sqlite-one-writer", Topic::Throughput),
    ("noisy-machine", Topic::Cpu),
    ("tracer-attached", Topic::Cpu),
];

pub fn of(id: &str) -> Topic {
    PLACES
        .iter()
        .find(|(i, _)| *i == id)
        .map_or(Topic::Other, |(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_s_finding_has_a_place() {
        // The ids docs/findings.md lists; a new rule should be placed here too.
        let doc = include_str!("../../../../docs/findings.md");
        let ids: Vec<&str> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        assert!(ids.len() >= 15, "{ids:?}");
        for id in ids {
            assert_ne!(of(id), Topic::Other, "{id}");
        }
    }
}
