//! mysqlslap's command line as MariaDB's option parser (my_getopt) reads it: long options
//! with `=value` or the next argument, `_` and `-` alike, unique prefixes (with its "Info"
//! note), `--skip-`/`--disable-`/`--enable-` and `=0/1/on/off/true/false` for switches,
//! `--loose-` for options that may not exist; short options grouped (`-as`), with their
//! value attached (`-c10`, `-uroot`) or next (`-c 10`); `-p` takes a value only attached.
//! Numbers take K, M, G, T, P, E suffixes. Errors are my_getopt's lines and exit codes.

/// What an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A switch (on/off, or a counter such as -v).
    Nothing,
    Value,
    /// A value only when attached (`--csv=FILE`, `-pSECRET`).
    Optional,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// On/off: takes `=0/1/...` and the skip-/disable-/enable- prefixes.
    Bool,
    /// Counted each time it is given (-v).
    Count,
    /// Acts when met (--help, --version).
    Action,
    Str,
    /// An unsigned number of 32 bits (my_getopt's GET_UINT).
    Uint,
    /// An unsigned number of 64 bits (GET_ULL).
    Ull,
}

#[derive(Debug)]
pub struct OptDef {
    pub name: &'static str,
    pub short: Option<char>,
    pub takes: Takes,
    pub kind: Kind,
    pub help: &'static str,
}

const fn o(
    name: &'static str,
    short: Option<char>,
    takes: Takes,
    kind: Kind,
    help: &'static str,
) -> OptDef {
    OptDef {
        name,
        short,
        takes,
        kind,
        help,
    }
}

use Kind::*;
use Takes::*;

/// mariadb-slap 10.11's options, in its order (prefix messages name the first and last
/// match in this order).
pub const OPTIONS: &[OptDef] = &[
    o("help", Some('?'), Nothing, Action, "Display this help and exit."),
    o("auto-generate-sql", Some('a'), Nothing, Bool, "Generate SQL where not supplied by file or command line."),
    o("auto-generate-sql-add-autoincrement", None, Nothing, Bool, "Add an AUTO_INCREMENT column to auto-generated tables."),
    o("auto-generate-sql-execute-number", None, Value, Ull, "Set this number to generate a set number of queries to run."),
    o("auto-generate-sql-guid-primary", None, Nothing, Bool, "Add GUID based primary keys to auto-generated tables."),
    o("auto-generate-sql-load-type", None, Value, Str, "Specify test load type: mixed, update, write, key, or read; default is mixed."),
    o("auto-generate-sql-secondary-indexes", None, Value, Uint, "Number of secondary indexes to add to auto-generated tables."),
    o("auto-generate-sql-unique-query-number", None, Value, Ull, "Number of unique queries to generate for automatic tests."),
    o("auto-generate-sql-unique-write-number", None, Value, Ull, "Number of unique queries to generate for auto-generate-sql-write-number."),
    o("auto-generate-sql-write-number", None, Value, Ull, "Number of row inserts to perform for each thread (default is 100)."),
    o("character-sets-dir", None, Value, Str, "Directory for character set files (not supported)."),
    o("commit", None, Value, Uint, "Commit records every X number of statements."),
    o("compress", Some('C'), Nothing, Bool, "Use compression in server/client protocol."),
    o("concurrency", Some('c'), Value, Str, "Number of clients to simulate for query to run (a comma-separated list runs each)."),
    o("create", None, Value, Str, "File or string to use create tables."),
    o("create-schema", None, Value, Str, "Schema to run tests in."),
    o("csv", None, Optional, Str, "Generate CSV output to named file or to stdout if no file is named."),
    o("debug", Some('#'), Optional, Str, "This is a non-debug version. Catch this and exit."),
    o("debug-check", None, Nothing, Bool, "Check memory and open file usage at exit (not supported)."),
    o("debug-info", Some('T'), Nothing, Bool, "Print some debug info at exit."),
    o("default-auth", None, Value, Str, "Default authentication client-side plugin to use (not supported)."),
    o("delimiter", Some('F'), Value, Str, "Delimiter to use in SQL statements supplied in file or command line."),
    o("detach", None, Value, Uint, "Detach (close and reopen) connections after X number of requests."),
    o("engine", Some('e'), Value, Str, "Comma separated list of storage engines to use for creating the table. The test is run for each engine. You can also specify an option for an engine after a `:', like memory:max_row=2300"),
    o("host", Some('h'), Value, Str, "Connect to host."),
    o("init-command", None, Value, Str, "SQL Command to execute when connecting to MariaDB server. Will automatically be re-executed when reconnecting."),
    o("iterations", Some('i'), Value, Uint, "Number of times to run the tests."),
    o("no-drop", None, Nothing, Bool, "Do not drop the schema after the test."),
    o("number-char-cols", Some('x'), Value, Str, "Number of VARCHAR columns to create in table if specifying --auto-generate-sql."),
    o("number-int-cols", Some('y'), Value, Str, "Number of INT columns to create in table if specifying --auto-generate-sql."),
    o("number-of-queries", None, Value, Ull, "Limit each client to this number of queries (this is not exact)."),
    o("only-print", None, Nothing, Bool, "Do not connect to the databases, but instead print out what would have been done."),
    o("password", Some('p'), Optional, Str, "Password to use when connecting to server. If password is not given it's asked from the tty."),
    o("plugin-dir", None, Value, Str, "Directory for client-side plugins (not supported)."),
    o("port", Some('P'), Value, Uint, "Port number to use for connection."),
    o("post-query", None, Value, Str, "Query to run or file containing query to execute after tests have completed."),
    o("post-system", None, Value, Str, "system() string to execute after tests have completed."),
    o("pre-query", None, Value, Str, "Query to run or file containing query to execute before running tests."),
    o("pre-system", None, Value, Str, "system() string to execute before running tests."),
    o("protocol", None, Value, Str, "The protocol to use for connection (tcp, socket)."),
    o("query", Some('q'), Value, Str, "Query to run or file containing query to run."),
    o("silent", Some('s'), Nothing, Bool, "Run program in silent mode - no output."),
    o("socket", Some('S'), Value, Str, "The socket file to use for connection."),
    o("ssl", None, Nothing, Bool, "Require TLS for the connection (plumb: off unless given)."),
    o("ssl-ca", None, Value, Str, "CA file in PEM format (implies --ssl)."),
    o("ssl-capath", None, Value, Str, "CA directory (not supported)."),
    o("ssl-cert", None, Value, Str, "X509 cert in PEM format (not supported)."),
    o("ssl-cipher", None, Value, Str, "SSL cipher to use (not supported)."),
    o("ssl-key", None, Value, Str, "X509 key in PEM format (not supported)."),
    o("ssl-crl", None, Value, Str, "Certificate revocation list (not supported)."),
    o("ssl-crlpath", None, Value, Str, "Certificate revocation list path (not supported)."),
    o("tls-version", None, Value, Str, "TLS protocol version for secure connection (not supported)."),
    o("ssl-verify-server-cert", None, Nothing, Bool, "Verify server's certificate (not supported)."),
    o("user", Some('u'), Value, Str, "User for login if not current user."),
    o("verbose", Some('v'), Nothing, Count, "More verbose output; you can use this multiple times to get even more verbose output."),
    o("version", Some('V'), Nothing, Action, "Output version information and exit."),
];

/// my_getopt's exit codes.
pub const EXIT_UNKNOWN_OPTION: i32 = 2;
pub const EXIT_AMBIGUOUS_OPTION: i32 = 3;
pub const EXIT_NO_ARGUMENT_ALLOWED: i32 = 4;
pub const EXIT_ARGUMENT_REQUIRED: i32 = 5;
pub const EXIT_UNKNOWN_VARIABLE: i32 = 7;
pub const EXIT_UNKNOWN_SUFFIX: i32 = 9;
pub const EXIT_OPTION_DISABLED: i32 = 12;
pub const EXIT_ARGUMENT_INVALID: i32 = 13;

/// A command line mysqlslap refuses: the lines it prints on stderr and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub lines: Vec<String>,
    pub code: i32,
}

impl ParseError {
    pub fn new(code: i32, line: String) -> Self {
        ParseError {
            lines: vec![line],
            code,
        }
    }
}

/// One option as given: its definition, its value, and whether it was switched off.
#[derive(Debug, Clone)]
pub struct Given {
    pub def: &'static OptDef,
    pub value: Option<String>,
    /// `--skip-x`, `--disable-x`, `--x=0`.
    pub off: bool,
}

/// What the parser found: the options in order, arguments that are not options, and its
/// notes for stderr (prefix use, unknown `--loose-` options).
#[derive(Debug, Default)]
pub struct Parsed {
    pub given: Vec<Given>,
    pub positional: Vec<String>,
    pub notes: Vec<String>,
}

fn norm(s: &str) -> String {
    s.replace('_', "-")
}

enum Found {
    One(&'static OptDef),
    None,
    Ambiguous(&'static OptDef, &'static OptDef),
}

fn find_long(name: &str) -> (Found, bool) {
    let n = norm(name);
    if let Some(d) = OPTIONS.iter().find(|d| d.name == n) {
        return (Found::One(d), false);
    }
    let matches: Vec<&'static OptDef> = OPTIONS.iter().filter(|d| d.name.starts_with(&n)).collect();
    match matches.as_slice() {
        [] => (Found::None, false),
        [one] => (Found::One(one), true),
        [first, .., last] => (Found::Ambiguous(first, last), false),
    }
}

/// A switch's value: 1/0, on/off, true/false (any case).
pub fn switch_value(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "true" => Some(true),
        "0" | "off" | "false" => Some(false),
        _ => None,
    }
}

/// Parse `args` (without the program name); `prog` names the program in messages.
pub fn parse(prog: &str, args: &[String]) -> Result<Parsed, ParseError> {
    let mut p = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            p.positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (raw_name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let n = norm(raw_name);
            let (loose, n) = match n.strip_prefix("loose-") {
                Some(rest) => (true, rest.to_string()),
                None => (false, n),
            };
            let mut off = false;
            let mut found = find_long(&n);
            if matches!(found.0, Found::None) {
                for (prefix, is_off) in [("skip-", true), ("disable-", true), ("enable-", false)] {
                    if let Some(rest) = n.strip_prefix(prefix) {
                        let f = find_long(rest);
                        if let Found::One(d) = f.0 {
                            if d.kind == Bool {
                                off = is_off;
                                found = f;
                                break;
                            }
                        }
                    }
                }
            }
            let def = match found.0 {
                Found::One(d) => {
                    if found.1 {
                        p.notes.push(format!(
                            "Info: Using unique option prefix '{raw_name}' is error-prone and can break in the future. Please use the full name '{}' instead.",
                            d.name
                        ));
                    }
                    d
                }
                Found::Ambiguous(a, b) => {
                    return Err(ParseError::new(
                        EXIT_AMBIGUOUS_OPTION,
                        format!(
                            "{prog}: ambiguous option '--{raw_name}' ({}, {})",
                            a.name, b.name
                        ),
                    ))
                }
                Found::None if loose => {
                    p.notes.push(match &value {
                        Some(v) => format!("Warning: {prog}: unknown variable '{}={v}'", raw_name),
                        None => format!("Warning: {prog}: unknown option '--{raw_name}'"),
                    });
                    continue;
                }
                Found::None => {
                    return Err(match &value {
                        Some(v) => ParseError::new(
                            EXIT_UNKNOWN_VARIABLE,
                            format!("{prog}: unknown variable '{raw_name}={v}'"),
                        ),
                        None => ParseError::new(
                            EXIT_UNKNOWN_OPTION,
                            format!("{prog}: unknown option '--{raw_name}'"),
                        ),
                    })
                }
            };
            let value = match (def.takes, value) {
                (Nothing, Some(v)) if def.kind == Bool => match switch_value(&v) {
                    Some(on) => {
                        off = off || !on;
                        None
                    }
                    None => {
                        return Err(ParseError::new(
                            EXIT_ARGUMENT_INVALID,
                            format!(
                            "{prog}: option '--{}' takes 0, 1, on, off, true or false, not '{v}'",
                            def.name
                        ),
                        ))
                    }
                },
                (Nothing, Some(_)) => {
                    return Err(ParseError::new(
                        EXIT_NO_ARGUMENT_ALLOWED,
                        format!("{prog}: option '--{}' cannot take an argument", def.name),
                    ))
                }
                (Value, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(ParseError::new(
                            EXIT_ARGUMENT_REQUIRED,
                            format!("{prog}: option '--{}' requires an argument", def.name),
                        ))
                    }
                },
                (_, v) => v,
            };
            p.given.push(Given { def, value, off });
            if def.kind == Action {
                // --help and --version act when met: what follows is not read.
                return Ok(p);
            }
            continue;
        }
        if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            let chars: Vec<char> = flags.chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                k += 1;
                let Some(def) = OPTIONS.iter().find(|d| d.short == Some(c)) else {
                    return Err(ParseError::new(
                        EXIT_UNKNOWN_OPTION,
                        format!("{prog}: unknown option '-{c}'"),
                    ));
                };
                let rest: String = chars[k..].iter().collect();
                let value = match def.takes {
                    Nothing => None,
                    Optional => {
                        k = chars.len();
                        (!rest.is_empty()).then_some(rest)
                    }
                    Value => {
                        k = chars.len();
                        if !rest.is_empty() {
                            Some(rest)
                        } else if let Some(v) = args.get(i) {
                            i += 1;
                            Some(v.clone())
                        } else {
                            return Err(ParseError::new(
                                EXIT_ARGUMENT_REQUIRED,
                                format!("{prog}: option '-{c}' requires an argument"),
                            ));
                        }
                    }
                };
                p.given.push(Given {
                    def,
                    value,
                    off: false,
                });
                if def.kind == Action {
                    return Ok(p);
                }
            }
            continue;
        }
        p.positional.push(a.clone());
    }
    Ok(p)
}

/// A number as my_getopt reads one: digits with an optional K, M, G, T, P or E suffix.
pub fn number(prog: &str, name: &str, v: &str, bits32: bool) -> Result<u64, ParseError> {
    let setting = |code: i32, first: String| ParseError {
        lines: vec![
            first,
            format!("{prog}: Error while setting value '{v}' to '{name}'"),
        ],
        code,
    };
    let t = v.trim();
    if t.starts_with('-') {
        return Err(setting(
            EXIT_ARGUMENT_INVALID,
            format!("Incorrect unsigned value: '{v}' for {name}"),
        ));
    }
    let digits = t.trim_start_matches('+');
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let (num, suffix) = digits.split_at(end);
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        "P" => 50,
        "E" => 60,
        _ => {
            let bad = suffix.chars().next().unwrap_or(' ');
            return Err(setting(
                EXIT_UNKNOWN_SUFFIX,
                format!("Unknown suffix '{bad}' used for variable '{name}' (value '{v}'). Legal suffix characters are: K, M, G, T, P, E"),
            ));
        }
    };
    if num.is_empty() {
        return Err(setting(
            EXIT_ARGUMENT_INVALID,
            format!("Incorrect unsigned value: '{v}' for {name}"),
        ));
    }
    let n = num
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| {
            setting(
                EXIT_ARGUMENT_INVALID,
                format!("Incorrect unsigned value: '{v}' for {name}"),
            )
        })?;
    if bits32 && n > u64::from(u32::MAX) {
        return Err(setting(
            EXIT_ARGUMENT_INVALID,
            format!(
                "Incorrect unsigned value: '{v}' for {name} (at most {})",
                u32::MAX
            ),
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    fn names(p: &Parsed) -> Vec<(String, Option<String>, bool)> {
        p.given
            .iter()
            .map(|g| (g.def.name.to_string(), g.value.clone(), g.off))
            .collect()
    }

    #[test]
    fn long_short_grouped_and_attached() {
        let p = parse(
            "mysqlslap",
            &args(&[
                "-uroot",
                "-as",
                "-c",
                "10,100",
                "--number_of-queries=5",
                "-psecret",
                "-p",
                "--csv",
                "x",
                "-vvv",
            ]),
        )
        .unwrap();
        assert_eq!(
            names(&p),
            [
                ("user".into(), Some("root".into()), false),
                ("auto-generate-sql".into(), None, false),
                ("silent".into(), None, false),
                ("concurrency".into(), Some("10,100".into()), false),
                ("number-of-queries".into(), Some("5".into()), false),
                ("password".into(), Some("secret".into()), false),
                ("password".into(), None, false),
                ("csv".into(), None, false),
                ("verbose".into(), None, false),
                ("verbose".into(), None, false),
                ("verbose".into(), None, false),
            ]
        );
        assert_eq!(p.positional, ["x"]);
    }

    #[test]
    fn switches_prefixes_and_errors_as_my_getopt() {
        let p = parse(
            "m",
            &args(&[
                "--skip-no-drop",
                "--no-drop=0",
                "--only-print=1",
                "--conc=2",
            ]),
        )
        .unwrap();
        assert_eq!(
            names(&p),
            [
                ("no-drop".into(), None, true),
                ("no-drop".into(), None, true),
                ("only-print".into(), None, false),
                ("concurrency".into(), Some("2".into()), false),
            ]
        );
        assert!(p.notes[0].starts_with("Info: Using unique option prefix 'conc'"));
        let e = parse("mysqlslap", &args(&["--uroot"])).unwrap_err();
        assert_eq!(
            (e.code, e.lines[0].as_str()),
            (2, "mysqlslap: unknown option '--uroot'")
        );
        let e = parse("mysqlslap", &args(&["--auto"])).unwrap_err();
        assert_eq!(
            (e.code, e.lines[0].as_str()),
            (3, "mysqlslap: ambiguous option '--auto' (auto-generate-sql, auto-generate-sql-write-number)")
        );
        let e = parse("m", &args(&["-c"])).unwrap_err();
        assert_eq!(
            (e.code, e.lines[0].as_str()),
            (5, "m: option '-c' requires an argument")
        );
        let e = parse("m", &args(&["--verbose=2"])).unwrap_err();
        assert_eq!(e.code, 4);
        let p = parse("m", &args(&["--loose-bogus=3", "--loose-x"])).unwrap();
        assert_eq!(
            p.notes,
            [
                "Warning: m: unknown variable 'loose-bogus=3'",
                "Warning: m: unknown option '--loose-x'"
            ]
        );
    }

    #[test]
    fn numbers_as_my_getopt() {
        assert_eq!(number("m", "iterations", "2k", true).unwrap(), 2048);
        assert_eq!(number("m", "n", "7", false).unwrap(), 7);
        let e = number("m", "iterations", "3x", true).unwrap_err();
        assert_eq!(e.code, 9);
        assert_eq!(
            e.lines,
            [
                "Unknown suffix 'x' used for variable 'iterations' (value '3x'). Legal suffix characters are: K, M, G, T, P, E",
                "m: Error while setting value '3x' to 'iterations'"
            ]
        );
        let e = number("m", "iterations", "-3", true).unwrap_err();
        assert_eq!(
            (e.code, e.lines[0].as_str()),
            (13, "Incorrect unsigned value: '-3' for iterations")
        );
        assert!(number("m", "iterations", "99999999999", true).is_err());
    }
}
