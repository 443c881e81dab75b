//! `--help` and `--version`, in mariadb-slap's shape, with plumb's differences stated.

use std::fmt::Write as _;

use super::options::{Takes, OPTIONS};

pub fn version(prog: &str) -> String {
    format!(
        "{prog}  Ver 1.0 Distrib plumb-{}, for linux ({})\n",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH
    )
}

/// Wrap `text` to lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for w in text.split_whitespace() {
        let last = lines.last_mut().expect("one line");
        if !last.is_empty() && last.len() + 1 + w.len() > width {
            lines.push(w.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(w);
        }
    }
    lines
}

pub fn help(prog: &str, default_socket: Option<&str>) -> String {
    let mut out = version(prog);
    out.push_str("Run a query multiple times against the server (plumb's mysqlslap).\n\n");
    let _ = writeln!(out, "Usage: {prog} [OPTIONS]\n");
    out.push_str(
        "plumb reads no option files (my.cnf): give every option on the command line.\n\
         --no-defaults is accepted (it is what plumb does anyway).\n",
    );
    match default_socket {
        Some(s) => {
            let _ = writeln!(
                out,
                "Without --host, --port or --socket plumb connects through {s}."
            );
        }
        None => {
            out.push_str("Without --host, --port or --socket plumb connects through /var/run/mysqld/mysqld.sock (missing here).\n");
        }
    }
    out.push('\n');
    for o in OPTIONS {
        let short = o.short.map(|c| format!("-{c}, ")).unwrap_or_default();
        let arg = match o.takes {
            Takes::Nothing => String::new(),
            Takes::Value => "=name".to_string(),
            Takes::Optional => "[=name]".to_string(),
        };
        let head = format!("  {short}--{}{arg}", o.name);
        let body = wrap(o.help, 56);
        if head.len() < 22 {
            let _ = writeln!(out, "{head:<22}{}", body[0]);
        } else {
            let _ = writeln!(out, "{head} ");
            let _ = writeln!(out, "{:22}{}", "", body[0]);
        }
        for l in &body[1..] {
            let _ = writeln!(out, "{:22}{l}", "");
        }
    }
    out.push_str(
        "\nplumb's options:\n\
         \x20 --plumb-db=mysql|sqlite[:FILE]|pgsql[:DATABASE]\n\
         \x20                     Run the same workload on MySQL/MariaDB (the default), on a\n\
         \x20                     SQLite file (default <schema>.sqlite here) or on PostgreSQL\n\
         \x20                     (database postgres unless named; -h, -P, -S, -u, -p apply).\n\
         \x20 --plumb-json=FILE   Write plumb's record of the run (plumb report FILE).\n\
         \x20 --plumb-findings=on|off\n\
         \x20                     plumb's sections after each block (default on under the\n\
         \x20                     name plumb, off under the name mysqlslap).\n\
         \x20 --no-history, --tag=NAME\n\
         \x20                     Under the name plumb: do not keep the run in plumb's\n\
         \x20                     history, or tag it there.\n",
    );
    out
}
