//! From the options as given to a validated command: values read as mysqlslap reads them,
//! then mysqlslap's own checks in its order and wording (exit status 1), then plumb's
//! refusals of what mysqlslap would run into a wall with (an endless loop, a division by
//! zero) or what plumb does not do.

use std::path::PathBuf;

use plumb_oltp::driver::Dialect;
use plumb_oltp::slap::{script, AutoSql, Engine, LoadType, SlapSpec};

use super::options::{self, number, Given, Kind};
use super::target::{ConnectOptions, Target};
use super::{help, password, PlumbOptions, Refusal};

/// Where `--csv` goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Csv {
    Stdout,
    File(PathBuf),
}

pub struct Command {
    pub spec: SlapSpec,
    pub target: Target,
    pub connect: ConnectOptions,
    pub verbose: u32,
    pub silent: bool,
    pub csv: Option<Csv>,
    pub debug_info: bool,
    /// What CSV lines name as the load type.
    pub load_type_label: String,
}

pub enum Outcome {
    Run(Box<Command>),
    /// --help, --version: print and exit 0.
    Print(String),
}

fn refuse(code: i32, line: String) -> Refusal {
    Refusal {
        lines: vec![line],
        code,
    }
}

/// The options that choose the connection (refused where they mean nothing).
const CONNECTION: &[&str] = &[
    "host", "port", "socket", "user", "password", "protocol", "ssl", "ssl-ca", "compress",
];

/// Options mysqlslap has that plumb does not do, and why.
fn unsupported(name: &str) -> Option<&'static str> {
    Some(match name {
        "character-sets-dir" => "plumb's MySQL client has its own character sets",
        "default-auth" | "plugin-dir" => "plumb's MySQL client has no client-side plugins",
        "ssl-capath" | "ssl-crl" | "ssl-crlpath" => "give the CA as one file with --ssl-ca",
        "ssl-cert" | "ssl-key" => "plumb's MySQL client has no client certificates",
        "ssl-cipher" | "tls-version" => "plumb's TLS (rustls) chooses ciphers and versions itself",
        "ssl-verify-server-cert" => {
            "with --ssl-ca the server's certificate is verified; without it, it is not"
        }
        "debug-check" => "it checks the C client library's memory, which plumb does not use",
        _ => return None,
    })
}

/// Option-file options, which mysqlslap takes as the first arguments.
fn option_file_option(a: &str) -> Option<&'static str> {
    for name in [
        "--print-defaults",
        "--defaults-file",
        "--defaults-extra-file",
        "--defaults-group-suffix",
    ] {
        if a == name || a.starts_with(&format!("{name}=")) {
            return Some(name);
        }
    }
    None
}

struct Raw {
    auto: bool,
    autoinc: bool,
    guid: bool,
    execute_number: u64,
    load_type: Option<String>,
    secondary: u32,
    unique_query: u64,
    unique_write: u64,
    write_number: u64,
    commit: u32,
    concurrency: Option<String>,
    create: Option<String>,
    query: Option<String>,
    pre_query: Option<String>,
    post_query: Option<String>,
    pre_system: Option<String>,
    post_system: Option<String>,
    schema: String,
    csv: Option<Csv>,
    debug_info: bool,
    delimiter: String,
    detach: u32,
    engine: Option<String>,
    init_command: Option<String>,
    iterations: u32,
    no_drop: bool,
    char_cols: Option<String>,
    int_cols: Option<String>,
    number_of_queries: u64,
    only_print: bool,
    /// `-p` without a value.
    prompt: bool,
    silent: bool,
    verbose: u32,
    connect: ConnectOptions,
}

impl Default for Raw {
    fn default() -> Self {
        Raw {
            auto: false,
            autoinc: false,
            guid: false,
            execute_number: 0,
            load_type: None,
            secondary: 0,
            unique_query: 10,
            unique_write: 10,
            write_number: 100,
            commit: 0,
            concurrency: None,
            create: None,
            query: None,
            pre_query: None,
            post_query: None,
            pre_system: None,
            post_system: None,
            schema: "mysqlslap".into(),
            csv: None,
            debug_info: false,
            delimiter: "\n".into(),
            detach: 0,
            engine: None,
            init_command: None,
            iterations: 1,
            no_drop: false,
            char_cols: None,
            int_cols: None,
            number_of_queries: 0,
            only_print: false,
            prompt: false,
            silent: false,
            verbose: 0,
            connect: ConnectOptions::default(),
        }
    }
}

/// The socket plumb connects through by default, when it exists.
pub const DEFAULT_SOCKET: &str = "/var/run/mysqld/mysqld.sock";

pub fn default_socket() -> Option<&'static str> {
    std::path::Path::new(DEFAULT_SOCKET)
        .exists()
        .then_some(DEFAULT_SOCKET)
}

/// Read the command line into a command (or something to print).
pub fn command(prog: &str, args: &[String], plumb: &PlumbOptions) -> Result<Outcome, Refusal> {
    let mut rest: &[String] = args;
    while let Some(first) = rest.first() {
        if first == "--no-defaults" {
            rest = &rest[1..];
        } else if let Some(name) = option_file_option(first) {
            return Err(refuse(
                1,
                format!("{prog}: {name}: plumb reads no option files; give the options on the command line"),
            ));
        } else {
            break;
        }
    }
    let parsed = options::parse(prog, rest).map_err(|e| Refusal {
        lines: e.lines,
        code: e.code,
    })?;
    for n in &parsed.notes {
        eprintln!("{n}");
    }
    let mut r = Raw::default();
    for g in &parsed.given {
        if let Some(out) = one(prog, g, &mut r)? {
            return Ok(out);
        }
    }
    if !parsed.positional.is_empty() {
        // Not echoed: after a bare -p the next word may be a password.
        return Err(refuse(
            1,
            format!(
                "{prog}: {} argument(s) that are not options: mysqlslap takes options only (a password goes as -pPASSWORD or --password=PASSWORD)",
                parsed.positional.len()
            ),
        ));
    }
    check(prog, r, plumb).map(|c| Outcome::Run(Box::new(c)))
}

fn text(g: &Given) -> String {
    g.value.clone().unwrap_or_default()
}

/// Apply one option; `Some` when it ends the parsing (--help, --version).
fn one(prog: &str, g: &Given, r: &mut Raw) -> Result<Option<Outcome>, Refusal> {
    let name = g.def.name;
    let num = |bits32: bool| -> Result<u64, Refusal> {
        number(prog, name, g.value.as_deref().unwrap_or(""), bits32).map_err(|e| Refusal {
            lines: e.lines,
            code: e.code,
        })
    };
    if let Some(why) = unsupported(name) {
        return Err(refuse(
            1,
            format!("{prog}: --{name} is not supported: {why}"),
        ));
    }
    if CONNECTION.contains(&name) && !r.connect.given.contains(&name) {
        r.connect.given.push(name);
    }
    let on = !g.off;
    match name {
        "help" => return Ok(Some(Outcome::Print(help::help(prog, default_socket())))),
        "version" => return Ok(Some(Outcome::Print(help::version(prog)))),
        "debug" => {
            return Err(refuse(
                options::EXIT_OPTION_DISABLED,
                format!("{prog}: ERROR: Option 'debug' used, but is disabled"),
            ))
        }
        "auto-generate-sql" => r.auto = on,
        "auto-generate-sql-add-autoincrement" => r.autoinc = on,
        "auto-generate-sql-guid-primary" => r.guid = on,
        "auto-generate-sql-execute-number" => r.execute_number = num(false)?,
        "auto-generate-sql-load-type" => r.load_type = Some(text(g)),
        "auto-generate-sql-secondary-indexes" => r.secondary = num(true)? as u32,
        "auto-generate-sql-unique-query-number" => r.unique_query = num(false)?,
        "auto-generate-sql-unique-write-number" => r.unique_write = num(false)?,
        "auto-generate-sql-write-number" => r.write_number = num(false)?,
        "commit" => r.commit = num(true)? as u32,
        "compress" => r.connect.compress = on,
        "concurrency" => r.concurrency = Some(text(g)),
        "create" => r.create = Some(text(g)),
        "create-schema" => r.schema = text(g),
        "csv" => {
            r.csv = Some(match &g.value {
                None => Csv::Stdout,
                Some(v) if v.starts_with('-') => Csv::Stdout,
                Some(v) => Csv::File(PathBuf::from(v)),
            })
        }
        "debug-info" => r.debug_info = on,
        "delimiter" => r.delimiter = text(g),
        "detach" => r.detach = num(true)? as u32,
        "engine" => r.engine = Some(text(g)),
        "host" => r.connect.host = Some(text(g)),
        "init-command" => r.init_command = Some(text(g)),
        "iterations" => r.iterations = num(true)? as u32,
        "no-drop" => r.no_drop = on,
        "number-char-cols" => r.char_cols = Some(text(g)),
        "number-int-cols" => r.int_cols = Some(text(g)),
        "number-of-queries" => r.number_of_queries = num(false)?,
        "only-print" => r.only_print = on,
        "password" => match &g.value {
            Some(v) => {
                r.connect.password = Some(v.clone());
                r.prompt = false;
            }
            None => r.prompt = true,
        },
        "port" => {
            let p = num(true)?;
            r.connect.port = Some(u16::try_from(p).map_err(|_| {
                refuse(
                    1,
                    format!("{prog}: --port {p} is not a TCP port (1 to 65535)"),
                )
            })?)
        }
        "post-query" => r.post_query = Some(text(g)),
        "post-system" => r.post_system = Some(text(g)),
        "pre-query" => r.pre_query = Some(text(g)),
        "pre-system" => r.pre_system = Some(text(g)),
        "protocol" => {
            let v = text(g).to_ascii_lowercase();
            if v != "tcp" && v != "socket" {
                return Err(refuse(
                    1,
                    format!("{prog}: --protocol takes tcp or socket, not '{}'", text(g)),
                ));
            }
            r.connect.protocol = Some(v);
        }
        "query" => r.query = Some(text(g)),
        "silent" => r.silent = on,
        "socket" => r.connect.socket = Some(PathBuf::from(text(g))),
        "ssl" => r.connect.ssl = on,
        "ssl-ca" => {
            r.connect.ssl_ca = Some(PathBuf::from(text(g)));
            r.connect.ssl = true;
        }
        "user" => r.connect.user = Some(text(g)),
        "verbose" => r.verbose += 1,
        other => {
            // Every option of the table is handled above.
            debug_assert!(g.def.kind != Kind::Action, "{other}");
            return Err(refuse(1, format!("{prog}: --{other} is not supported")));
        }
    }
    Ok(None)
}

/// A comma-separated list of counts (`10,100`), each at least 1.
fn counts(prog: &str, v: &str) -> Result<Vec<u32>, Refusal> {
    v.split(',')
        .map(|s| match s.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(refuse(
                1,
                format!("{prog}: --concurrency takes numbers of clients of at least 1 separated by commas, not '{v}'"),
            )),
        })
        .collect()
}

fn columns(prog: &str, name: &str, v: &str) -> Result<u32, Refusal> {
    v.trim().parse::<u32>().map_err(|_| {
        refuse(
            1,
            format!("{prog}: --{name} takes a number of columns, not '{v}' (the 'N,1' index form is not supported)"),
        )
    })
}

/// `name[:options]` items separated by commas (one blank after a comma is skipped).
fn engines(prog: &str, v: &str) -> Result<Vec<Engine>, Refusal> {
    let mut out = Vec::new();
    for (i, item) in v.split(',').enumerate() {
        let item = if i > 0 {
            item.strip_prefix(|c: char| c.is_ascii_whitespace())
                .unwrap_or(item)
        } else {
            item
        };
        let (name, opts) = match item.split_once(':') {
            Some((n, o)) => (n, Some(o.to_string())),
            None => (item, None),
        };
        if name.is_empty() {
            return Err(refuse(
                1,
                format!(
                    "{prog}: --engine takes storage engine names separated by commas, not '{v}'"
                ),
            ));
        }
        out.push(Engine {
            name: name.to_string(),
            options: opts.filter(|o| !o.is_empty()),
        });
    }
    Ok(out)
}

fn statements(prog: &str, v: &Option<String>, delimiter: u8) -> Result<Vec<String>, Refusal> {
    match v {
        None => Ok(Vec::new()),
        Some(v) => script::source(v)
            .map(|s| script::split(&s, delimiter))
            .map_err(|e| refuse(1, format!("{prog}: {e}"))),
    }
}

/// mysqlslap's checks after the options, then plumb's.
fn check(prog: &str, r: Raw, plumb: &PlumbOptions) -> Result<Command, Refusal> {
    if r.auto && (r.create.is_some() || r.query.is_some()) {
        return Err(refuse(1, format!("{prog}: Can't use --auto-generate-sql when create and query strings are specified!")));
    }
    if r.auto && r.guid && r.autoinc {
        return Err(refuse(1, format!("{prog}: Either auto-generate-sql-guid-primary or auto-generate-sql-add-autoincrement can be used!")));
    }
    let load = match r.load_type.as_deref() {
        None => LoadType::Mixed,
        Some(v) => LoadType::from_name(v).ok_or_else(|| {
            refuse(
                1,
                format!("{prog}: --auto-generate-sql-load-type takes mixed, update, write, key or read, not '{v}'"),
            )
        })?,
    };
    if r.auto && load == LoadType::Key && !r.autoinc && !r.guid {
        return Err(refuse(
            1,
            format!("{prog}: Can't perform key test without a primary key!"),
        ));
    }
    if r.auto && r.number_of_queries > 0 && r.execute_number > 0 {
        return Err(refuse(
            1,
            format!(
                "{prog}: Either auto-generate-sql-execute-number or number-of-queries can be used!"
            ),
        ));
    }
    let concurrency = counts(prog, r.concurrency.as_deref().unwrap_or("1"))?;
    let int_cols = match &r.int_cols {
        Some(v) => columns(prog, "number-int-cols", v)?,
        None => 1,
    };
    let char_cols = match &r.char_cols {
        Some(v) => columns(prog, "number-char-cols", v)?,
        None => 1,
    };
    let delimiter = match r.delimiter.as_bytes().first() {
        Some(&b) if b.is_ascii() => b,
        _ => {
            return Err(refuse(
                1,
                format!("{prog}: --delimiter needs a character (an ASCII one: mysqlslap splits at its first byte)"),
            ))
        }
    };
    let engines = match &r.engine {
        Some(v) => engines(prog, v)?,
        None => Vec::new(),
    };
    if r.iterations == 0 {
        return Err(refuse(
            1,
            format!("{prog}: --iterations must be at least 1"),
        ));
    }
    let auto = r.auto.then_some(AutoSql {
        load,
        int_cols,
        char_cols,
        autoincrement: r.autoinc,
        guid_primary: r.guid,
        secondary_indexes: r.secondary,
        unique_query_number: r.unique_query,
        unique_write_number: r.unique_write,
        write_number: r.write_number,
    });
    if auto
        .as_ref()
        .is_some_and(|a| a.unique_write_number == 0 && a.write_number > 1)
    {
        return Err(refuse(1, format!("{prog}: --auto-generate-sql-unique-write-number=0 leaves no INSERT to populate the table with (mysqlslap would loop forever)")));
    }
    let spec = SlapSpec {
        auto,
        create: if r.auto {
            Vec::new()
        } else {
            statements(prog, &r.create, delimiter)?
        },
        query: if r.auto {
            Vec::new()
        } else {
            statements(prog, &r.query, delimiter)?
        },
        pre_query: statements(prog, &r.pre_query, delimiter)?,
        post_query: statements(prog, &r.post_query, delimiter)?,
        pre_system: r.pre_system,
        post_system: r.post_system,
        schema: r.schema,
        engines,
        concurrency,
        iterations: r.iterations,
        number_of_queries: r.number_of_queries,
        execute_number: r.execute_number,
        commit: r.commit,
        detach: r.detach,
        no_drop: r.no_drop,
        only_print: r.only_print,
        init_command: r.init_command,
    };
    let walk_empty = match &spec.auto {
        Some(_) => false,
        None => script::walkable(&spec.query).is_empty(),
    };
    if walk_empty && spec.concurrency.iter().any(|&c| spec.client_limit(c) > 0) {
        return Err(refuse(1, format!("{prog}: --number-of-queries asks for queries, but there are none to run (give --query or --auto-generate-sql); mysqlslap would loop forever")));
    }
    let runs = spec.engines.len().max(1) as u64
        * spec.concurrency.len() as u64
        * u64::from(spec.iterations);
    if runs > 100_000 {
        return Err(refuse(1, format!("{prog}: {runs} runs (engines x concurrency values x iterations) is more than plumb keeps a record of (100000)")));
    }
    let target = plumb.db.clone().unwrap_or(Target::Mysql);
    if target.dialect() != Dialect::Mysql {
        if spec.only_print {
            return Err(refuse(1, format!("{prog}: --only-print prints mysqlslap's MySQL statements; it does not combine with --plumb-db")));
        }
        if !spec.engines.is_empty() {
            return Err(refuse(1, format!("{prog}: --engine names MySQL storage engines; it does not combine with --plumb-db")));
        }
    }
    let mut connect = r.connect;
    if r.prompt {
        match password::prompt() {
            Some(Ok(p)) => connect.password = Some(p),
            Some(Err(e)) => return Err(refuse(1, format!("{prog}: cannot read the password from the terminal: {e}"))),
            None => {
                return Err(refuse(
                    1,
                    format!("{prog}: -p without a password asks for it on a terminal, and stdin is not one: give it as -pPASSWORD or --password=PASSWORD"),
                ))
            }
        }
    }
    Ok(Command {
        load_type_label: r.load_type.unwrap_or_else(|| "mixed".into()),
        spec,
        target,
        connect,
        verbose: r.verbose,
        silent: r.silent || r.csv.is_some() || r.only_print,
        csv: r.csv,
        debug_info: r.debug_info,
    })
}
