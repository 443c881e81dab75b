//! Is this a virtual machine or a container, and which? The same evidence systemd-detect-virt
//! uses, read directly: CPUID's hypervisor leaf, DMI strings, /sys/hypervisor, the device tree,
//! container marker files and cgroup paths.

use serde::{Deserialize, Serialize};

use crate::roots::{attr, Roots};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// "kvm", "vmware", "microsoft", "xen", "qemu", "oracle", "amazon", "google", ...
    pub hypervisor: Option<String>,
    /// "docker", "podman", "kubernetes", "lxc", "wsl", ...
    pub container: Option<String>,
    /// What the conclusion rests on, one fact per entry.
    pub evidence: Vec<String>,
}

/// The hypervisor vendor signature of CPUID leaf 0x40000000, when the hypervisor bit is set.
#[cfg(target_arch = "x86_64")]
pub fn cpuid_hypervisor() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    // Leaf 0x40000000 is only read when the hypervisor bit says a hypervisor defines it.
    let l1 = __cpuid(1);
    if l1.ecx & (1 << 31) == 0 {
        return None;
    }
    let l = __cpuid(0x4000_0000);
    let mut b = Vec::with_capacity(12);
    for r in [l.ebx, l.ecx, l.edx] {
        b.extend_from_slice(&r.to_le_bytes());
    }
    Some(
        String::from_utf8_lossy(&b)
            .trim_matches(char::from(0))
            .trim()
            .to_string(),
    )
}

#[cfg(not(target_arch = "x86_64"))]
pub fn cpuid_hypervisor() -> Option<String> {
    None
}

/// CPUID signature → name.
fn from_cpuid(sig: &str) -> Option<&'static str> {
    Some(match sig {
        "KVMKVMKVM" | "Linux KVM Hv" => "kvm",
        "VMwareVMware" => "vmware",
        "Microsoft Hv" => "microsoft",
        "XenVMMXenVMM" => "xen",
        "TCGTCGTCGTCG" => "qemu",
        "bhyve bhyve" => "bhyve",
        "ACRNACRNACRN" => "acrn",
        "VBoxVBoxVBox" => "oracle",
        "prl hyperv" | "lrpepyh vr" => "parallels",
        "QNXQVMBSQG" => "qnx",
        "SRESRESRESRE" => "sre",
        "" => return None,
        _ => "unknown",
    })
}

/// DMI vendor/product strings → name.
fn from_dmi(s: &str) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("OpenStack", "kvm"),
        ("KubeVirt", "kvm"),
        ("Amazon EC2", "amazon"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "oracle"),
        ("VirtualBox", "oracle"),
        ("Oracle Corporation", "oracle"),
        ("Xen", "xen"),
        ("Bochs", "bochs"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
        ("Hyper-V", "microsoft"),
        ("Apple Virtualization", "apple"),
        ("Google Compute Engine", "google"),
    ];
    TABLE
        .iter()
        .find(|(k, _)| s.starts_with(k))
        .map(|(_, v)| *v)
}

/// Detect, with `cpuid` passed in so tests can pretend.
pub fn detect(roots: &Roots, cpuid: Option<String>) -> Virtualization {
    let mut v = Virtualization::default();
    if let Some(sig) = cpuid {
        if let Some(name) = from_cpuid(&sig) {
            v.evidence
                .push(format!("CPUID hypervisor signature \"{sig}\""));
            v.hypervisor = Some(name.to_string());
        } else {
            v.evidence.push("CPUID hypervisor bit set".into());
            v.hypervisor = Some("unknown".into());
        }
    }
    for f in ["sys_vendor", "product_name", "board_vendor", "bios_vendor"] {
        if let Some(s) = attr(&roots.sys(&format!("class/dmi/id/{f}"))) {
            if let Some(name) = from_dmi(&s) {
                v.evidence.push(format!("DMI {f} \"{s}\""));
                // Microsoft's DMI vendor also names physical Surface machines: only the product
                // "Virtual Machine" says Hyper-V.
                if v.hypervisor.is_none() || v.hypervisor.as_deref() == Some("unknown") {
                    v.hypervisor = Some(name.to_string());
                }
            } else if f == "product_name" && s == "Virtual Machine" {
                v.evidence
                    .push("DMI product_name \"Virtual Machine\"".into());
                v.hypervisor.get_or_insert_with(|| "microsoft".into());
            }
        }
    }
    if let Some(t) = attr(&roots.sys("hypervisor/type")) {
        v.evidence.push(format!("/sys/hypervisor/type \"{t}\""));
        v.hypervisor.get_or_insert(t);
    }
    if let Some(c) = attr(&roots.proc("device-tree/hypervisor/compatible")) {
        let c = c.trim_matches(char::from(0)).to_string();
        v.evidence.push(format!("device tree hypervisor \"{c}\""));
        let name = if c.contains("kvm") {
            "kvm"
        } else if c.contains("xen") {
            "xen"
        } else {
            "unknown"
        };
        v.hypervisor.get_or_insert_with(|| name.to_string());
    }
    if v.hypervisor.is_none() {
        if let Ok(ci) = std::fs::read_to_string(roots.proc("cpuinfo")) {
            if ci
                .lines()
                .filter(|l| l.starts_with("flags"))
                .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
            {
                v.evidence.push("cpuinfo flag \"hypervisor\"".into());
                v.hypervisor = Some("unknown".into());
            }
        }
    }
    v.container = container(roots, &mut v.evidence);
    v
}

fn container(roots: &Roots, ev: &mut Vec<String>) -> Option<String> {
    if let Ok(env) = std::fs::read(roots.proc("1/environ")) {
        for kv in env.split(|&b| b == 0) {
            if let Some(c) = kv.strip_prefix(b"container=") {
                let c = String::from_utf8_lossy(c).into_owned();
                ev.push(format!("PID 1 environment container={c}"));
                return Some(c);
            }
        }
    }
    if roots.root("run/.containerenv").exists() {
        ev.push("/run/.containerenv exists".into());
        return Some("podman".into());
    }
    if roots.root(".dockerenv").exists() {
        ev.push("/.dockerenv exists".into());
        return Some("docker".into());
    }
    if let Ok(cg) = std::fs::read_to_string(roots.proc("self/cgroup")) {
        for (needle, name) in [
            ("kubepods", "kubernetes"),
            ("docker", "docker"),
            ("libpod", "podman"),
            ("lxc", "lxc"),
        ] {
            if cg.contains(needle) {
                ev.push(format!("cgroup path contains \"{needle}\""));
                return Some(name.into());
            }
        }
    }
    if let Some(r) = attr(&roots.proc("sys/kernel/osrelease")) {
        if r.to_ascii_lowercase().contains("microsoft") {
            ev.push(format!("kernel release \"{r}\""));
            return Some("wsl".into());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blockdev::fixture::write;

    #[test]
    fn cpuid_signature_names_the_hypervisor() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        let v = detect(&r, Some("KVMKVMKVM".into()));
        assert_eq!(v.hypervisor.as_deref(), Some("kvm"));
        assert_eq!(v.container, None);
        assert_eq!(v.evidence.len(), 1);
    }

    #[test]
    fn dmi_flag_and_containers() {
        let t = tempfile::tempdir().unwrap();
        let r = Roots::under(t.path());
        write(&r.sys("class/dmi/id/sys_vendor"), "QEMU\n");
        write(&r.root(".dockerenv"), "");
        let v = detect(&r, None);
        assert_eq!(v.hypervisor.as_deref(), Some("qemu"));
        assert_eq!(v.container.as_deref(), Some("docker"));

        let t2 = tempfile::tempdir().unwrap();
        let r2 = Roots::under(t2.path());
        write(
            &r2.proc("cpuinfo"),
            "processor : 0\nflags : fpu hypervisor sse\n",
        );
        write(&r2.proc("self/cgroup"), "0::/kubepods/burstable/pod1/abc\n");
        let v2 = detect(&r2, None);
        assert_eq!(v2.hypervisor.as_deref(), Some("unknown"));
        assert_eq!(v2.container.as_deref(), Some("kubernetes"));

        let t3 = tempfile::tempdir().unwrap();
        let r3 = Roots::under(t3.path());
        write(&r3.proc("cpuinfo"), "processor : 0\nflags : fpu sse\n");
        let bare = detect(&r3, None);
        assert_eq!(bare, Virtualization::default());
    }
}
