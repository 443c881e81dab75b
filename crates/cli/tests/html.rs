//! plumb html: the page of a run, of two runs on the same axes and of a sweep, loaded in
//! headless Chromium (Debian's `chromium`): no console errors and every chart drawn, as the
//! page itself reports into <body>; a screenshot of each is kept under
//! target/html-artefacts/. Also: self-contained, sections, escaping, refusals, and stdout on
//! a terminal (a pseudo-terminal the test opens): refused without -o, fine with it.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn out(&self, args: &[&str]) -> (i32, String, String) {
        let o = Command::cargo_bin("plumb")
            .unwrap()
            .current_dir(self.dir.path())
            .env("PLUMB_HOME", self.dir.path().join("home"))
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.out(args);
        assert_eq!(code, 0, "plumb {args:?}\n{out}\n{err}");
        out
    }
    /// `plumb html ARGS -o NAME.html`, the page's text.
    fn html(&self, args: &[&str], name: &str) -> String {
        let file = self.path(&format!("{name}.html"));
        let mut all: Vec<&str> = vec!["html"];
        all.extend(args);
        let o = file.to_string_lossy().into_owned();
        all.extend(["-o", &o]);
        let (code, out, err) = self.out(&all);
        assert_eq!(code, 0, "plumb html {args:?}\n{out}\n{err}");
        assert_eq!(out, "", "the page goes to the file only");
        std::fs::read_to_string(&file).unwrap()
    }
}

/// The integer in `<body ... NAME="N">`.
fn body_attr(dom: &str, name: &str) -> String {
    let body = &dom[dom.find("<body").expect("a body")..];
    let body = &body[..body.find('>').unwrap()];
    let at = body
        .find(&format!("{name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {body}"));
    let rest = &body[at + name.len() + 2..];
    rest[..rest.find('"').unwrap()].to_string()
}

fn chromium() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("chromium"))
            .find(|c| c.is_file())
    })
}

/// Loads the page in headless Chromium: asserts no error and every chart drawn, keeps a
/// screenshot as target/html-artefacts/NAME.png. Without Chromium: a failure under CI
/// (CI=true), a skip with a line on stderr elsewhere.
fn in_browser(env: &Env, name: &str) {
    let Some(chromium) = chromium() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("chromium is not installed: the HTML report is tested in headless Chromium (apt-get install chromium; .ci/run installs it)");
        }
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let page = env.path(&format!("{name}.html"));
    let url = format!("file://{}", page.display());
    let run = |extra: &[String]| {
        // Each load its own profile: tests run in parallel.
        let profile = tempfile::tempdir().unwrap();
        let o = Command::new("timeout")
            .arg("120")
            .arg(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--virtual-time-budget=10000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "chromium: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let dom = run(&["--dump-dom".to_string()]);
    assert_eq!(body_attr(&dom, "data-errors"), "", "errors in {name}");
    let expected: u32 = body_attr(&dom, "data-charts-expected").parse().unwrap();
    let drawn: u32 = body_attr(&dom, "data-charts-drawn").parse().unwrap();
    assert!(expected > 0, "{name}: no chart");
    assert_eq!(drawn, expected, "{name}: charts drawn");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/html-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    run(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1200,2000".to_string(),
    ]);
    assert!(shot.is_file(), "no screenshot {}", shot.display());
}

/// Nothing fetched when the page is viewed: no script, style or image from elsewhere.
fn self_contained(page: &str) {
    for bad in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "@import",
        "url(http",
    ] {
        assert!(!page.contains(bad), "{bad} in the page");
    }
    assert!(page.contains("var uPlot="), "uPlot inlined");
    assert_eq!(page.matches("<script src").count(), 0);
    assert_eq!(page.matches("<link").count(), 0);
}

fn expected_charts(page: &str) -> usize {
    body_attr(page, "data-charts-expected").parse().unwrap()
}

#[test]
fn a_run_page_has_its_sections_and_draws_every_chart() {
    let e = Env::new();
    e.ok(&[
        "cpu",
        "--time=1",
        "--report-interval=0.2",
        "--tag=first",
        "run",
    ]);
    let page = e.html(&["first"], "run");
    self_contained(&page);
    assert!(page.contains("<h1>plumb: run 1 (first)</h1>"), "{page}");
    for id in [
        "g1j1-time",
        "g1j1-latency",
        "g1-device",
        "g1-cache",
        "g1-cpu",
    ] {
        assert!(page.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    for caption in [
        "Throughput over time",
        "Latency percentiles over time (per interval)",
        "Latency distribution (all events; share per quarter-octave bin)",
        "CPU: the machine (share of all CPUs) and plumb&#39;s busiest worker (share of one core)",
    ] {
        assert!(
            page.contains(&format!("<figcaption>{caption}</figcaption>")),
            "{caption}"
        );
    }
    // A CPU test touches no disk: the page says so instead of drawing an empty chart.
    assert!(page.contains("No device samples: the test worked on no directory"));
    assert!(expected_charts(&page) >= 4);
    in_browser(&e, "run");
}

#[test]
fn a_run_without_intervals_says_what_is_missing() {
    let e = Env::new();
    e.ok(&["cpu", "--time=0.3", "run"]);
    // Without -o, the page goes to stdout when that is not a terminal.
    let page = e.ok(&["html", "1"]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("No interval samples: the run ended within its first sample"));
    assert!(!page.contains("<figcaption>Throughput over time</figcaption>"));
    assert!(page.contains("<figcaption>Latency distribution"));
    // A run past its first second has its once-a-second samples without asking.
    e.ok(&["cpu", "--time=1.2", "run"]);
    let page = e.ok(&["html", "2"]);
    assert!(page.contains("<figcaption>Throughput over time</figcaption>"));
    assert!(!page.contains("No interval samples"));
}

#[test]
fn a_fileio_run_shows_its_device_and_page_cache_beside_their_findings() {
    let e = Env::new();
    let json = e.path("fileio.json");
    e.ok(&[
        "fileio",
        "--file-num=2",
        "--file-total-size=4M",
        "--file-test-mode=rndrw",
        "--time=1",
        "--report-interval=0.25",
        &format!("--json={}", json.display()),
        "prepare",
        "run",
        "cleanup",
    ]);
    // A result file is named as plumb compare names it.
    let page = e.html(&[json.to_str().unwrap()], "fileio");
    self_contained(&page);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let has_device = doc["groups"][0]["observations"]["devices"]
        .as_array()
        .is_some_and(|d| {
            d.iter()
                .any(|d| d["samples"].as_array().is_some_and(|s| !s.is_empty()))
        });
    if has_device {
        assert!(page.contains("<figcaption>Device utilisation (%util)</figcaption>"));
        assert!(page.contains("<figcaption>Device queue depth (aqu-sz)</figcaption>"));
    } else {
        assert!(page.contains("No device samples"));
    }
    assert!(page.contains(
        "<figcaption>Page cache, dirty and writeback memory (whole machine)</figcaption>"
    ));
    assert!(page.contains("test files in the page cache:"));
    // Each finding sits in the section its topic names (cache findings by the page cache).
    for f in doc["groups"][0]["jobs"][0]["findings"].as_array().unwrap() {
        let id = f["id"].as_str().unwrap();
        let at = page
            .find(&format!("data-finding=\"{id}\""))
            .unwrap_or_else(|| panic!("{id} not shown"));
        let section = page[..at].rfind("<section id=\"").unwrap();
        let section = &page[section + 13..];
        let section = &section[..section.find('"').unwrap()];
        let want = match id {
            "page-cache-reads" | "page-cache-writes" => "g1-cache",
            "fsync-dominated" | "final-fsync-skew" | "many-files" | "shared-file-writers" => {
                "g1-device"
            }
            "noisy-machine" | "plumb-cpu-bound" => "g1-cpu",
            "not-steady" => "g1j1-time",
            _ => continue,
        };
        assert_eq!(section, want, "{id}");
    }
    in_browser(&e, "fileio");
}

#[test]
fn two_runs_are_drawn_on_the_same_axes_with_the_comparison() {
    let e = Env::new();
    e.ok(&["cpu", "--time=0.6", "--report-interval=0.1", "run"]);
    e.ok(&[
        "cpu",
        "--time=0.6",
        "--report-interval=0.1",
        "--threads=2",
        "run",
    ]);
    e.ok(&["baseline", "set", "before", "1"]);
    let page = e.html(&["baseline:before", "2"], "compare");
    self_contained(&page);
    assert!(page.contains("<h1>plumb: 2 runs compared</h1>"));
    assert!(page.contains("<h2 id=\"run-A\">A: run 1 (baseline:before)</h2>"));
    assert!(page.contains("<h2 id=\"run-B\">B: run 2</h2>"));
    assert!(page.contains("<h2 id=\"comparison\">Comparison</h2>"));
    assert!(page.contains("<th>95% interval</th>"));
    // One chart, both runs: the series are told apart by their letter.
    assert!(page.contains("\"label\":\"A events/s\""));
    assert!(page.contains("\"label\":\"B events/s\""));
    in_browser(&e, "compare");
}

const PLAN: &str = "command = \"cpu --time=0.3 --report-interval=0.1 run\"\n[matrix]\nthreads = [1, 2]\ncpu-max-prime = [1000, 2000]\n";

#[test]
fn a_sweep_is_drawn_against_each_variable_with_its_knee() {
    let e = Env::new();
    std::fs::write(e.path("plan.toml"), PLAN).unwrap();
    let out = e.ok(&["sweep", "plan.toml", "--json=sweep.json"]);
    assert!(out.contains("sweep 1: 4 points"), "{out}");
    let page = e.html(&["sweep:1"], "sweep");
    self_contained(&page);
    assert!(page.contains("<h1>plumb: sweep 1</h1>"));
    assert!(page.contains("<h2 id=\"against-0\">Against threads</h2>"));
    assert!(page.contains("<h2 id=\"against-1\">Against cpu-max-prime</h2>"));
    assert!(page.contains("<figcaption>events/s against threads</figcaption>"));
    assert!(page.contains("<figcaption>p95 and p99 latency against threads</figcaption>"));
    assert!(page.contains("Knee, as plumb sweep marks it: along each line of points that agree on the other variables, the first value after which events/s grows by 10% or less per step; the knee is the value before that step."));
    // Every line gets its verdict, knee or none, as plumb sweep prints it.
    for line in out.lines().filter(|l| l.starts_with("  threads: ")) {
        let at = line.rsplit_once('(').unwrap().1.trim_end_matches(')');
        if let Some(v) = line.strip_prefix("  threads: knee at ") {
            let v = v.split(' ').next().unwrap();
            assert!(
                page.contains(&format!("threads: knee at {v} ({at}).")),
                "{line}"
            );
        } else {
            assert!(page.contains(&format!("threads: no knee ({at})")), "{line}");
        }
    }
    // The same sweep from its --json file.
    let file = e.html(&["sweep.json"], "sweep-file");
    assert!(file.contains("<h2 id=\"against-0\">Against threads</h2>"));
    assert_eq!(expected_charts(&file), expected_charts(&page));
    in_browser(&e, "sweep");
}

#[test]
fn a_variable_the_sweep_page_cannot_draw_gets_its_heading_and_the_reason() {
    let e = Env::new();
    std::fs::write(
        e.path("plan.toml"),
        PLAN.replace("--report-interval=0.1 ", ""),
    )
    .unwrap();
    e.ok(&["sweep", "plan.toml", "--no-history", "--json=sweep.json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e.path("sweep.json")).unwrap()).unwrap();
    // A sweep stopped after some of its points: a --json document with those runs only.
    let with_points = |name: &str, keep: &[u64]| {
        let mut d = doc.clone();
        d["runs"]
            .as_array_mut()
            .unwrap()
            .retain(|r| keep.contains(&r["point"].as_u64().unwrap()));
        std::fs::write(e.path(name), d.to_string()).unwrap();
    };
    // Points 1 and 2: threads=1 with cpu-max-prime 1000 and 2000.
    with_points("two.json", &[1, 2]);
    let page = e.html(&["two.json"], "sweep-one-value");
    assert!(page.contains("<h2 id=\"against-0\">Against threads</h2>\n<section id=\"against-0-charts\">\n<h3>events/s and latency against threads</h3>\n<div class=\"row\">\n<div class=\"charts\">\n<p class=\"absent\">No chart against threads: every point has threads = 1; a line needs points that differ in threads alone.</p>"), "{page}");
    assert!(page.contains("<h2 id=\"against-1\">Against cpu-max-prime</h2>"));
    assert!(page.contains("<figcaption>events/s against cpu-max-prime</figcaption>"));
    assert!(!page.contains("<figcaption>events/s against threads</figcaption>"));
    assert_eq!(expected_charts(&page), 2);
    in_browser(&e, "sweep-one-value");

    // Points 1 and 4 differ in both variables: no line for either, each says so.
    with_points("diagonal.json", &[1, 4]);
    let page = e.html(&["diagonal.json"], "sweep-diagonal");
    for (k, key) in ["threads", "cpu-max-prime"].iter().enumerate() {
        assert!(page.contains(&format!("<h2 id=\"against-{k}\">Against {key}</h2>")));
        assert!(page.contains(&format!("<p class=\"absent\">No chart against {key}: no two points differ in {key} alone (each pair differs in another variable too), so there is no line to draw.</p>")), "{page}");
    }
    assert_eq!(expected_charts(&page), 0);
}

#[test]
fn text_from_the_record_is_escaped_and_credentials_masked() {
    let e = Env::new();
    let json = e.path("r.json");
    e.ok(&[
        "cpu",
        "--time=0.2",
        "--report-interval=0.1",
        &format!("--json={}", json.display()),
        "run",
    ]);
    // A document written by hand or an older plumb: a password and a script in its command line.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    doc["command_line"] = serde_json::json!([
        "plumb",
        "cpu",
        "--mysql-password=hunter2",
        "--x=</script><script>window.injected=1</script><!--",
        "run"
    ]);
    doc["groups"][0]["jobs"][0]["name"] = "</script><b>job</b>".into();
    std::fs::write(&json, doc.to_string()).unwrap();
    let page = e.html(&[json.to_str().unwrap()], "escaped");
    assert!(!page.contains("hunter2"));
    assert!(page.contains("--mysql-password=***"));
    assert!(!page.contains("<script>window.injected"));
    assert!(!page.contains("<b>job</b>"));
    assert!(page.contains("&lt;/script&gt;&lt;b&gt;job&lt;/b&gt;"));
    // The chart data carries the name too, escaped for its <script> element.
    assert_eq!(
        page.matches("</script>").count(),
        page.matches("<script").count()
    );
    in_browser(&e, "escaped");
}

#[test]
fn refusals_are_one_line() {
    let e = Env::new();
    e.ok(&["cpu", "--time=0.1", "run"]);
    let one_line = |args: &[&str], code: i32, text: &str| {
        let (c, out, err) = e.out(args);
        assert_eq!(c, code, "{args:?}: {err}");
        assert_eq!(out, "");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(text), "{args:?}: {err}");
    };
    let nine: Vec<&str> = std::iter::once("html").chain(["1"; 9]).collect();
    one_line(
        &nine,
        2,
        "plumb html draws at most 8 runs on one page (9 given)",
    );
    one_line(&["html", "7", "-o", "x.html"], 1, "no run 7 in the history");
    one_line(
        &["html", "sweep:3", "-o", "x.html"],
        1,
        "no sweep 3 in the history",
    );
    one_line(
        &["html", "sweep:x", "-o", "x.html"],
        2,
        "a sweep is named sweep:ID",
    );
    one_line(
        &["html", "no such tag", "-o", "x.html"],
        2,
        "invalid tag name",
    );
    one_line(
        &["html", "-o", "x.html"],
        2,
        "plumb: html needs a run (usage: plumb html",
    );
    // An unwritable path: one line, exit 1, nothing written, no temporary file left.
    one_line(
        &["html", "1", "-o", "missing/dir/r.html"],
        1,
        "cannot write missing/dir/r.html",
    );
    std::fs::create_dir(e.path("taken")).unwrap();
    one_line(&["html", "1", "-o", "taken"], 1, "cannot write taken");
    let left: Vec<_> = std::fs::read_dir(e.dir.path())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp") || n.ends_with(".html"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A sweep is drawn alone.
    std::fs::write(
        e.path("plan.toml"),
        "command = \"cpu --time=0.1 run\"\n[matrix]\nthreads = [1, 2]\n",
    )
    .unwrap();
    e.ok(&["sweep", "plan.toml"]);
    one_line(
        &["html", "sweep:1", "1", "-o", "x.html"],
        2,
        "plumb html draws a sweep alone",
    );
}

/// `plumb ARGS` with its stdout on a new pseudo-terminal (stdin empty, stderr piped), as
/// from an interactive shell: (exit code, what reached the terminal, stderr).
fn with_stdout_on_a_terminal(env: &Env, args: &[&str]) -> (i32, String, String) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::process::Stdio;

    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors; the null pointers ask for no name or settings.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are fresh from openpty and owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut c = Command::cargo_bin("plumb").unwrap();
    c.current_dir(env.dir.path())
        .env("PLUMB_HOME", env.dir.path().join("home"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    // The terminal reads as ended once no process holds its other end: the command keeps
    // the parent's copy until dropped.
    drop(c);
    // Read while the child runs: a terminal holds a few KiB, a page written to it would
    // block the child otherwise.
    let reader = std::thread::spawn(move || {
        let mut m = std::fs::File::from(master);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the child's end is closed: the end of what it wrote.
        while let Ok(n @ 1..) = m.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        reader.join().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_page_for_a_terminal_without_o_is_refused() {
    let e = Env::new();
    e.ok(&["cpu", "--time=0.1", "run"]);
    let (code, tty, err) = with_stdout_on_a_terminal(&e, &["html", "1"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        "plumb: plumb html writes a page, not text for a terminal: give -o FILE (or redirect stdout)\n"
    );
    assert_eq!(tty, "", "nothing reaches the terminal");
    // The same command with stdout redirected writes the page.
    assert!(e.ok(&["html", "1"]).starts_with("<!DOCTYPE html>"));
}

#[test]
fn a_page_written_with_o_from_a_terminal() {
    let e = Env::new();
    e.ok(&["cpu", "--time=0.1", "run"]);
    for args in [
        ["html", "1", "-o", "page.html"],
        ["html", "1", "--output", "p2.html"],
    ] {
        let (code, tty, err) = with_stdout_on_a_terminal(&e, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
        assert_eq!(tty, "", "{args:?}: the page goes to the file only");
        let page = std::fs::read_to_string(e.path(args[3])).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"), "{args:?}");
        assert!(page.trim_end().ends_with("</html>"), "{args:?}");
    }
}

/// `-o` through a symbolic link replaces the file it names, not the link; a FIFO (like
/// /dev/stdout or a device) is written to, never replaced by a regular file.
#[test]
fn o_follows_a_link_and_writes_into_what_is_not_a_regular_file() {
    let e = Env::new();
    e.ok(&["cpu", "--time=0.1", "run"]);
    let target = e.path("target.html");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink("target.html", e.path("link.html")).unwrap();
    e.ok(&["html", "1", "-o", "link.html"]);
    let link = std::fs::symlink_metadata(e.path("link.html")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is still a link");
    let page = std::fs::read_to_string(&target).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");

    let fifo = e.path("fifo.html");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    e.ok(&["html", "1", "-o", fifo.to_str().unwrap()]);
    let read = reader.join().unwrap();
    assert!(read.trim_end().ends_with("</html>"), "{read}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    let (code, _, err) = e.out(&["html", "1", "-o", e.dir.path().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "plumb: cannot write {}: it is a directory\n",
            e.dir.path().display()
        )
    );
}
