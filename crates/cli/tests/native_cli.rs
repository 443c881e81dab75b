//! plumb's own commands through the real binary: help, version, completions, the man page,
//! and clap's errors in plumb's one-line style.

mod common;
use common::*;

const TESTS: [&str; 5] = ["cpu", "fileio", "memory", "threads", "mutex"];

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "plumb {args:?}: {err}");
    assert!(err.is_empty(), "plumb {args:?}: {err}");
    out
}

#[test]
fn bash_completion_names_native_commands_tests_and_their_words() {
    let script = ok(&["completions", "bash"]);
    assert!(script.contains("complete -F _plumb"), "{script}");
    for word in ["inspect", "iostat", "completions", "manpage", "version"] {
        assert!(script.contains(&format!("plumb,{word})")), "{word}");
    }
    for t in TESTS {
        assert!(script.contains(&format!("plumb,{t})")), "test {t}");
    }
    for word in ["prepare", "run", "cleanup", "help"] {
        assert!(script.contains(word), "{word}");
    }
    // Options come from the tests' own tables.
    for opt in [
        "--file-total-size",
        "--cpu-max-prime",
        "--threads",
        "--percentile",
    ] {
        assert!(script.contains(opt), "{opt}");
    }
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = ok(&["completions", shell]);
        for word in ["inspect", "iostat", "fileio", "file-total-size"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    // zsh also completes the command words (clap's fish, elvish and powershell generators
    // complete options and subcommands only).
    assert!(ok(&["completions", "zsh"]).contains("prepare"));
}

#[test]
fn completions_usage_errors() {
    assert_usage_error(
        &["completions", "nosuchshell"],
        &[
            "'nosuchshell'",
            "bash",
            "zsh",
            "fish",
            "elvish",
            "powershell",
        ],
    );
    assert_usage_error(&["completions"], &["completions needs a shell"]);
}

#[test]
fn manpage_is_roff_naming_the_commands() {
    let page = ok(&["manpage"]);
    // Only the roff preamble (string definitions used for apostrophes) comes before .TH.
    let th = page
        .lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap();
    assert!(th.starts_with(".TH plumb 1"), "{th}");
    assert!(page.lines().take_while(|l| *l != th).count() <= 2);
    assert!(page.contains(".SH NAME") && page.contains(".SH SUBCOMMANDS"));
    for name in ["inspect", "iostat", "completions", "manpage"]
        .iter()
        .chain(&TESTS)
    {
        assert!(page.contains(&format!("plumb\\-{name}(1)")), "{name}");
    }
    assert_eq!(ok(&["man"]), page, "man is manpage's alias");
}

#[test]
fn help_lists_every_native_command() {
    let out = ok(&["help"]);
    // The sysbench part first, then plumb's own commands.
    let tests = out.find("Tests:").unwrap();
    let native = out.find("Native commands:").unwrap();
    assert!(tests < native);
    for line in [
        "plumb inspect PATH [--format=text|json]",
        "plumb iostat [DEVICE...] [INTERVAL [COUNT]]",
        "plumb completions <SHELL>",
        "plumb manpage",
        "plumb version",
    ] {
        assert!(out.contains(&format!("\n  {line}\n")), "{line} in {out}");
    }
    assert!(out[native..].lines().all(|l| l.len() <= 100), "{out}");
    assert_eq!(ok(&["--help"]), out);
    assert_eq!(ok(&["-h"]), out);
}

#[test]
fn help_on_one_command_or_test() {
    let inspect = ok(&["help", "inspect"]);
    assert!(inspect.contains("Usage: plumb inspect PATH [--format=text|json]"));
    assert!(inspect.contains("possible values: text, json"), "{inspect}");
    assert_eq!(ok(&["inspect", "--help"]), ok(&["inspect", "-h"]));
    assert!(ok(&["iostat", "--help"]).contains("Usage: plumb iostat [DEVICE...]"));
    assert_eq!(ok(&["help", "cpu"]), ok(&["cpu", "help"]));
    assert_usage_error(&["help", "nosuch"], &["'nosuch'", "plumb help"]);
}

#[test]
fn version() {
    assert_eq!(
        ok(&["version"]),
        format!("plumb {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_usage_error(&["version", "extra"], &["unexpected argument 'extra'"]);
}

#[test]
fn clap_errors_are_one_line() {
    assert_usage_error(
        &["inspect", "--formt=json", "/tmp"],
        &["unknown option --formt", "did you mean --format?"],
    );
    assert_usage_error(
        &["inspect", "/tmp", "--format"],
        &["--format needs a value", "text, json"],
    );
    assert_usage_error(
        &["iostat", "--bogus"],
        &["unknown option --bogus", "iostat"],
    );
    assert_usage_error(&["manpage", "--x"], &["unknown option --x"]);
}

/// A reader that is gone before plumb writes (`plumb cpu help | head -0`): plumb ends
/// quietly by SIGPIPE as sysbench and fio do, never with a panic and a backtrace on stderr.
#[test]
fn a_closed_stdout_ends_plumb_quietly() {
    use std::os::unix::process::ExitStatusExt;
    for args in [
        &["cpu", "help"][..],
        &["fio", "--cmdhelp=all"][..],
        &["cpu", "--events=10", "--time=0", "run"][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("plumb"))
            .args(args)
            .env("PLUMB_HOME", tempfile::tempdir().unwrap().path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {err}");
    }
}
