//! The lines fio prints before a run starts: one per job definition, the process count,
//! and the file layout notice.

use serde::{Deserialize, Serialize};

use super::num::{num2str, N2sUnit};

/// What a job's header line shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobHeader {
    pub name: String,
    pub groupid: u32,
    /// fio's name of the pattern: `read`, `randrw`, `trimwrite`…
    pub rw: String,
    /// (min, max) block size of read, write and trim, bytes.
    pub bs: [(u64, u64); 3],
    /// bs_is_seq_rand: the two pairs are sequential and random sizes, no trim pair.
    pub bs_is_seq_rand: bool,
    pub ioengine: String,
    pub iodepth: u32,
    /// numjobs: clones get one `...` line after the header, not lines of their own.
    pub numjobs: u32,
    pub kb_base: u32,
    pub sig_figs: u32,
}

/// `name: (g=0): rw=read, bs=(R) 4096B-4096B, (W) …, ioengine=null, iodepth=1`, then `...`
/// when the job has clones; each line ends in a newline.
pub fn job_header_line(h: &JobHeader) -> String {
    let iec = is_pow2(h.kb_base);
    let size = |n: u64| num2str(n, h.sig_figs, iec, N2sUnit::Byte);
    let [r, w, t] = h.bs;
    let bs = if h.bs_is_seq_rand {
        format!(
            "(R) {}-{}, (W) {}-{}, bs_is_seq_rand",
            size(r.0),
            size(r.1),
            size(w.0),
            size(w.1)
        )
    } else {
        format!(
            "(R) {}-{}, (W) {}-{}, (T) {}-{}",
            size(r.0),
            size(r.1),
            size(w.0),
            size(w.1),
            size(t.0),
            size(t.1)
        )
    };
    let mut out = format!(
        "{}: (g={}): rw={}, bs={bs}, ioengine={}, iodepth={}\n",
        h.name, h.groupid, h.rw, h.ioengine, h.iodepth
    );
    if h.numjobs > 1 {
        out.push_str("...\n");
    }
    out
}

/// `Starting 1 process`, `Starting 2 threads and 1 process`.
pub fn starting_line(processes: u32, threads: u32) -> String {
    let mut out = String::from("Starting ");
    if threads > 0 {
        out.push_str(&format!("{threads} thread{}", plural(threads, "s")));
    }
    if processes > 0 {
        if threads > 0 {
            out.push_str(" and ");
        }
        out.push_str(&format!("{processes} process{}", plural(processes, "es")));
    }
    out.push('\n');
    out
}

/// `name: Laying out IO file (1 file / 4MiB)` or `IO files (3 files / total 3MiB)`:
/// `files` is how many files need extending, `bytes` their total new size.
pub fn layout_line(name: &str, files: u32, bytes: u64) -> String {
    let many = files > 1;
    format!(
        "{name}: Laying out IO file{} ({files} file{} / {}{}MiB)\n",
        if many { "s" } else { "" },
        if many { "s" } else { "" },
        if many { "total " } else { "" },
        bytes >> 20
    )
}

fn plural(n: u32, suffix: &'static str) -> &'static str {
    if n > 1 {
        suffix
    } else {
        ""
    }
}

pub(crate) fn is_pow2(n: u32) -> bool {
    n.is_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fio/");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}/header.txt")).unwrap_or_default()
    }

    fn header(name: &str, rw: &str, bs: u64, ioengine: &str, iodepth: u32) -> JobHeader {
        JobHeader {
            name: name.into(),
            groupid: 0,
            rw: rw.into(),
            bs: [(bs, bs); 3],
            bs_is_seq_rand: false,
            ioengine: ioengine.into(),
            iodepth,
            numjobs: 1,
            kb_base: 1024,
            sig_figs: 4,
        }
    }

    #[test]
    fn single_job_with_layout() {
        let mut out = job_header_line(&header("rr", "randrw", 4096, "libaio", 4));
        out.push_str("fio-3.33\n");
        out.push_str(&starting_line(1, 0));
        out.push_str(&layout_line("rr", 1, 16 << 20));
        assert_eq!(out, fixture("libaio_randrw"));
    }

    #[test]
    fn clones_print_one_ellipsis_and_a_layout_line_each() {
        let mut h = header("ng", "read", 4096, "psync", 1);
        h.numjobs = 2;
        let mut out = job_header_line(&h);
        out.push_str("fio-3.33\n");
        out.push_str(&starting_line(2, 0));
        out.push_str(&layout_line("ng", 1, 2 << 20));
        out.push_str(&layout_line("ng", 1, 2 << 20));
        assert_eq!(out, fixture("numjobs_nogr"));
    }

    #[test]
    fn two_groups_from_a_job_file() {
        let mut b = header("b", "write", 8192, "null", 1);
        b.groupid = 1;
        let mut out = job_header_line(&header("a", "read", 8192, "null", 1));
        out.push_str(&job_header_line(&b));
        out.push_str("fio-3.33\n");
        out.push_str(&starting_line(2, 0));
        assert_eq!(out, fixture("groups"));
    }

    #[test]
    fn threads_processes_and_many_files() {
        assert_eq!(starting_line(1, 2), "Starting 2 threads and 1 process\n");
        assert_eq!(starting_line(0, 1), "Starting 1 thread\n");
        assert_eq!(
            layout_line("j", 3, 3 << 20),
            "j: Laying out IO files (3 files / total 3MiB)\n"
        );
    }

    #[test]
    fn sizes_seq_rand_and_si() {
        let mut h = header("x", "randread", 16384, "psync", 1);
        h.bs = [(8192, 16384), (1 << 20, 1 << 20), (4096, 4096)];
        h.bs_is_seq_rand = true;
        assert_eq!(
            job_header_line(&h),
            "x: (g=0): rw=randread, bs=(R) 8192B-16.0KiB, (W) 1024KiB-1024KiB, bs_is_seq_rand, ioengine=psync, iodepth=1\n"
        );
        h.kb_base = 1000;
        h.bs_is_seq_rand = false;
        assert!(job_header_line(&h)
            .contains("bs=(R) 8192B-16.4kB, (W) 1049kB-1049kB, (T) 4096B-4096B,"));
    }
}
