//! TLS asked of a MariaDB server that has none: sysbench (`--mysql-ssl=on`) and mariadb-slap
//! (`--ssl`) go on in plain text, because their client library only prefers TLS; plumb's
//! drop-ins under those names do the same, and plumb's own mode refuses in one line (TLS
//! asked for is TLS got). Where the server offers TLS, all of them use it and succeed.
//!
//! Without the server or the peers these tests say so and pass, except under CI=true.

mod common;

use common::peers::{installed, run_named, DropIn, Printed};
use common::{available, mariadb_slap, mysql, mysql_fresh_db, shape};

use tempfile::TempDir;

const SYSBENCH: &str = "/usr/bin/sysbench";

fn server_has_tls() -> bool {
    mysql("SHOW GLOBAL VARIABLES LIKE 'have_ssl'").contains("YES")
}

/// Figures masked, line by line: what stays is the layout.
fn masked(s: &str) -> Vec<String> {
    s.lines().map(shape).collect()
}

#[test]
fn mysqlslap_ssl_falls_back_as_mariadb_slap_does_and_plumb_refuses() {
    if !available("mysql") {
        return;
    }
    let Some(peer) = mariadb_slap() else {
        return;
    };
    let d = TempDir::new().unwrap();
    let slap = DropIn::named("mysqlslap");
    let args = [
        "-uroot",
        "--host=127.0.0.1",
        "--protocol=tcp",
        "--ssl",
        "-a",
        "--create-schema=slap_tls_dropin",
        "--number-of-queries=20",
        "--concurrency=2",
        "--iterations=1",
    ];
    let theirs = run_named(&peer, d.path(), &args);
    let ours = run_named(&slap.bin(), d.path(), &args);
    assert_eq!(theirs.code, 0, "{theirs:?}");
    assert_eq!(ours.code, 0, "{ours:?}");
    assert_eq!(masked(&ours.stdout), masked(&theirs.stdout));
    assert_eq!(ours.stderr, theirs.stderr);
    assert!(ours.stdout.starts_with("Benchmark\n"), "{}", ours.stdout);

    let mut own = vec!["mysqlslap", "--no-history"];
    own.extend_from_slice(&args);
    let plumb = run_named(&assert_cmd::cargo::cargo_bin("plumb"), d.path(), &own);
    if server_has_tls() {
        assert_eq!(plumb.code, 0, "{plumb:?}");
    } else {
        assert_eq!(plumb.code, 1, "{plumb:?}");
        assert_eq!(plumb.stdout, "");
        assert_eq!(plumb.stderr.lines().count(), 1, "{}", plumb.stderr);
        assert!(
            plumb.stderr.contains(
                "Client requires secure connection but server does not have this capability"
            ),
            "{}",
            plumb.stderr
        );
    }
}

#[test]
fn sysbench_mysql_ssl_falls_back_as_sysbench_does() {
    if !available("mysql")
        || !installed(
            &[SYSBENCH],
            "apt-get install sysbench",
            "the sysbench TLS comparison",
        )
    {
        return;
    }
    let db = "plumb_t_tls_dropin";
    let d = TempDir::new().unwrap();
    let sysbench = DropIn::named("sysbench");
    let base = [
        "oltp_point_select",
        "--db-driver=mysql",
        "--mysql-user=root",
        "--mysql-db=plumb_t_tls_dropin",
        "--mysql-ssl=on",
        "--tables=1",
        "--table-size=10",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    // Over TCP and over the socket (which carries no TLS either way).
    for endpoint in [
        "--mysql-host=127.0.0.1",
        "--mysql-socket=/var/run/mysqld/mysqld.sock",
    ] {
        let run = |bin: &std::path::Path, step: &'static str| -> Printed {
            let mut args = with(&[step]);
            args.insert(1, endpoint);
            if step == "run" {
                args.insert(1, "--events=5");
                args.insert(1, "--time=0");
            }
            run_named(bin, d.path(), &args)
        };
        for bin in [std::path::Path::new(SYSBENCH), &sysbench.bin()] {
            mysql_fresh_db(db);
            let prepare = run(bin, "prepare");
            assert_eq!(prepare.code, 0, "{endpoint} {bin:?}: {prepare:?}");
            assert!(
                prepare
                    .stdout
                    .contains("Inserting 10 records into 'sbtest1'"),
                "{prepare:?}"
            );
            let o = run(bin, "run");
            assert_eq!(o.code, 0, "{endpoint} {bin:?}: {o:?}");
            assert!(o.stdout.contains("transactions:"), "{o:?}");
            assert_eq!(
                mysql(&format!("SELECT COUNT(*) FROM {db}.sbtest1")).trim(),
                "10"
            );
        }
        // The same words from both, figures apart.
        mysql_fresh_db(db);
        let theirs = run(std::path::Path::new(SYSBENCH), "prepare");
        mysql_fresh_db(db);
        let ours = run(&sysbench.bin(), "prepare");
        // The version lines name the programs; the rest is the same.
        let rest = |s: &str| masked(s).split_off(1);
        assert!(ours.stdout.starts_with("sysbench 1.0.20 ("), "{ours:?}");
        assert_eq!(rest(&ours.stdout), rest(&theirs.stdout), "{endpoint}");
        assert_eq!(ours.stderr, theirs.stderr, "{endpoint}");
    }
    mysql(&format!("DROP DATABASE {db}"));
}
