//! Credentials never shown: secret option values are masked in errors and in the command
//! line kept in results.

mod common;
use common::*;

const SECRET: &str = "hunter2";

/// A command that must fail as a usage error without showing the secret anywhere.
fn refused_without_the_secret(args: &[&str]) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "plumb {args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!out.contains(SECRET), "stdout of {args:?}: {out}");
    assert!(!err.contains(SECRET), "stderr of {args:?}: {err}");
}

#[test]
fn an_unknown_password_option_does_not_echo_its_value() {
    refused_without_the_secret(&["cpu", "--mysql-password=hunter2", "run"]);
    // The separate-value form: the sysbench parser reads the value as a command word and
    // names it in its error; the value is masked there too.
    refused_without_the_secret(&["cpu", "--mysql-password", "hunter2", "run"]);
    let (_, _, err) = run(&["cpu", "--pgsql-password", "hunter2", "run"]);
    assert!(err.contains("'***'"), "{err}");
    refused_without_the_secret(&["cpu", "--Secret-Key=hunter2", "--threads=0", "run"]);
    refused_without_the_secret(&["fileio", "--PASSWD=hunter2", "prepare"]);
}

#[test]
fn native_commands_do_not_echo_secret_values() {
    refused_without_the_secret(&["inspect", "--password=hunter2", "/tmp"]);
    refused_without_the_secret(&["inspect", "/tmp", "--db-password", "hunter2"]);
    refused_without_the_secret(&["iostat", "--secret", "hunter2"]);
}

#[test]
fn the_command_line_in_the_result_is_argv() {
    // No option plumb accepts today names a secret, so a successful run cannot carry one:
    // this checks that the kept command line is argv itself (built through the redaction,
    // whose masking is unit-tested in plumb_core::redact).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.json");
    let json = format!("--json={}", f.display());
    let args = [
        "cpu",
        "--cpu-max-prime=100",
        "--events=10",
        "--time=0",
        json.as_str(),
        "run",
    ];
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let kept: Vec<&str> = v["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let mut expected = vec!["plumb"];
    expected.extend(args);
    assert_eq!(kept, expected);
}
