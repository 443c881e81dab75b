//! TLS to MySQL/MariaDB for real: the machine's MariaDB has TLS off (and is not ours to
//! reconfigure), so this test starts a private MariaDB of its own in a temporary directory,
//! on a port of its own, with a certificate signed by a CA the test makes (openssl's
//! command-line tool; nothing of OpenSSL is linked into plumb), and stops it at the end.
//!
//! Without mariadbd or openssl the test says so and passes, except under CI=true.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{job_json, text};
use tempfile::TempDir;

const MARIADBD: &str = "/usr/sbin/mariadbd";
const INSTALL_DB: &str = "/usr/bin/mariadb-install-db";
const OPENSSL: &str = "/usr/bin/openssl";

/// A MariaDB server with TLS, owned by the test.
struct TlsServer {
    dir: TempDir,
    port: u16,
    child: Child,
}

impl TlsServer {
    fn start() -> Option<TlsServer> {
        if !common::peers::installed(
            &[MARIADBD, INSTALL_DB, OPENSSL, "/usr/bin/mariadb"],
            "apt-get install mariadb-server mariadb-client openssl",
            "the MySQL TLS tests",
        ) {
            return None;
        }
        let dir = TempDir::new().unwrap();
        let d = dir.path();
        let sh = |args: &[&str]| {
            let o = Command::new(args[0])
                .args(&args[1..])
                .current_dir(d)
                .output()
                .unwrap();
            assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        };
        // A CA, and a server certificate for "localhost" signed by it; a second CA that
        // signed nothing.
        std::fs::write(
            d.join("ext.cnf"),
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        for ca in ["ca", "other"] {
            sh(&[
                OPENSSL,
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=plumb test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ]);
        }
        sh(&[
            OPENSSL,
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        sh(&[
            OPENSSL,
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ]);
        let data = d.join("data");
        std::fs::create_dir(&data).unwrap();
        sh(&[
            INSTALL_DB,
            "--no-defaults",
            &format!("--datadir={}", data.display()),
            "--user=root",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ]);
        // A free port: the kernel's pick, released for the server to take.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(MARIADBD)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--user=root")
            .arg(format!("--socket={}", d.join("s.sock").display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--ssl-cert={}", d.join("server.pem").display()))
            .arg(format!("--ssl-key={}", d.join("server.key").display()))
            .arg("--skip-log-bin")
            .arg("--innodb-buffer-pool-size=16M")
            .arg(format!("--pid-file={}", d.join("pid").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(d.join("log")).unwrap()))
            .spawn()
            .unwrap();
        let server = TlsServer { dir, port, child };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !server.sql("CREATE DATABASE IF NOT EXISTS sbtest") {
            assert!(
                Instant::now() < deadline,
                "the private MariaDB did not start: {}",
                std::fs::read_to_string(server.dir.path().join("log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }

    fn sql(&self, sql: &str) -> bool {
        Command::new("mariadb")
            .arg("-uroot")
            .arg(format!(
                "--socket={}",
                self.dir.path().join("s.sock").display()
            ))
            .args(["-e", sql])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        // The test's own server: stopped with the signal mariadbd shuts down cleanly on.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

fn plumb_in(dir: &Path, args: &[String]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("plumb"))
        .args(args)
        .current_dir(dir)
        .env("PLUMB_HOME", dir)
        .output()
        .unwrap()
}

#[test]
fn tls_connections_are_encrypted_verified_or_refused_with_one_line() {
    let Some(server) = TlsServer::start() else {
        return;
    };
    let work = TempDir::new().unwrap();
    let oltp = |host: &str, tls: &str, step: &str| -> std::process::Output {
        let json = work.path().join("r.json");
        let mut args: Vec<String> = [
            "oltp_point_select",
            "--mysql-user=root",
            "--tables=1",
            "--table-size=50",
            "--events=10",
            "--time=0",
        ]
        .map(String::from)
        .to_vec();
        args.push(format!("--mysql-host={host}"));
        args.push(format!("--mysql-port={}", server.port));
        args.extend(tls.split(' ').map(String::from));
        args.push(format!("--json={}", json.display()));
        args.push(step.to_string());
        plumb_in(work.path(), &args)
    };
    let tls_of = |o: &std::process::Output| {
        let v = job_json(std::fs::read(work.path().join("r.json")).unwrap());
        let report = text(&o.stdout);
        let version = v["workload"]["database"]["tls"]
            .as_str()
            .unwrap_or_else(|| panic!("plain text: {report}"))
            .to_string();
        assert!(version.starts_with("TLSv1."), "{version}");
        assert!(report.contains(&format!("with TLS ({version}), database sbtest")));
    };

    // --mysql-ssl=on: encrypted, the server's certificate taken as it is.
    let o = oltp("127.0.0.1", "--mysql-ssl=on", "prepare");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = oltp("127.0.0.1", "--mysql-ssl=on", "run");
    assert!(o.status.success(), "{}", text(&o.stderr));
    tls_of(&o);
    // Compressed inside TLS.
    let o = oltp("127.0.0.1", "--mysql-ssl=on --mysql-compression=on", "run");
    assert!(o.status.success(), "{}", text(&o.stderr));
    tls_of(&o);

    // --mysql-ssl-ca: verified against the CA, by the name the certificate carries.
    let ca = format!("--mysql-ssl-ca={}", server.path("ca.pem").display());
    let o = oltp("localhost", &ca, "run");
    assert!(o.status.success(), "{}", text(&o.stderr));
    tls_of(&o);
    let o = oltp("127.0.0.1", &ca, "run");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "plumb: cannot connect: MySQL server at tcp 127.0.0.1:{}: TLS: invalid peer certificate: certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"localhost\")\n",
            server.port
        )
    );
    let other = format!("--mysql-ssl-ca={}", server.path("other.pem").display());
    let o = oltp("localhost", &other, "run");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "plumb: cannot connect: MySQL server at tcp localhost:{}: TLS: invalid peer certificate: UnknownIssuer\n",
            server.port
        )
    );

    // mysqlslap's --ssl and --ssl-ca, the same way.
    let slap = |tls: &str| {
        let args = [
            "mysqlslap".to_string(),
            "-uroot".into(),
            "-hlocalhost".into(),
            format!("-P{}", server.port),
            "--protocol=tcp".into(),
            tls.to_string(),
            "--auto-generate-sql".into(),
            "--number-of-queries=20".into(),
            "--concurrency=2".into(),
        ];
        plumb_in(work.path(), &args)
    };
    for tls in [
        "--ssl",
        &format!("--ssl-ca={}", server.path("ca.pem").display()),
    ] {
        let o = slap(tls);
        assert!(o.status.success(), "{tls}: {}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains("Benchmark"),
            "{tls}: {}",
            text(&o.stdout)
        );
    }
}
