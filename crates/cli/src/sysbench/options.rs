//! sysbench's option grammar: `--name=value`, `--flag` for on, `--flag=on|off`, comma lists.
//! Each test declares its options in a table; the table drives parsing, validation, defaults
//! and the `help` listing, so an option cannot be accepted without being declared.

use std::collections::HashMap;
use std::fmt::Write;

use plumb_core::size::parse_size;

use crate::exit::UsageError;

/// What values an option takes.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A whole number in [min, max].
    Int { min: u64, max: u64 },
    /// A number (fractions allowed) in [min, max].
    Float { min: f64, max: f64 },
    /// A size with an optional K/M/G/T suffix.
    Size,
    /// A size that must be a power of two of at least `min` bytes.
    PowerOfTwoSize { min: u64 },
    /// on/off; `--name` alone means on.
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A comma-separated list of words from a fixed set (empty set: any word).
    List(&'static [&'static str]),
    /// Free text (a file name).
    Text,
    /// Comma-separated percentiles in (0, 100]; `0` alone turns percentiles off.
    Percentiles,
    /// `off`, seconds, or a percentage of --time; `--name` alone means 5%.
    Grace,
    /// Comma-separated whole seconds (sysbench's --report-checkpoints: 0 to 2^31-1 each,
    /// at most [`MAX_CHECKPOINTS`]), sorted.
    Seconds,
}

/// How many checkpoints sysbench takes.
pub const MAX_CHECKPOINTS: usize = 256;

/// One declared option.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
}

/// Shorthand for option tables.
pub const fn opt(name: &'static str, kind: Kind, default: &'static str, help: &'static str) -> Opt {
    Opt {
        name,
        kind,
        default,
        help,
    }
}

/// A parsed, validated value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(u64),
    Float(f64),
    Size(u64),
    Bool(bool),
    Word(String),
    List(Vec<String>),
    Percentiles(Vec<f64>),
    Seconds(Vec<u64>),
    /// Grace: None = off; Some((v, true)) = v percent of --time; Some((v, false)) = v seconds.
    Grace(Option<(f64, bool)>),
}

/// The white space C's strtol() skips before a number (isspace()).
pub const C_SPACE: [char; 6] = [' ', '\t', '\n', '\x0b', '\x0c', '\r'];

/// What is wrong with a list of seconds, in the order sysbench meets it.
#[derive(Debug, PartialEq)]
pub enum ListError<'a> {
    /// The first item strtol() does not read whole as 0 to INT_MAX.
    Bad(&'a str),
    /// An item past [`MAX_CHECKPOINTS`].
    TooMany,
}

/// sysbench's --report-checkpoints list, sorted: each item as its strtol() reads it (C white
/// space and a sign before the digits, nothing after), empty items skipped. Shared by
/// plumb's words and the drop-in's.
pub fn seconds_list(raw: &str) -> Result<Vec<u64>, ListError<'_>> {
    let mut out = Vec::new();
    for (n, item) in raw.split(',').filter(|i| !i.is_empty()).enumerate() {
        if n == MAX_CHECKPOINTS {
            return Err(ListError::TooMany);
        }
        let v = item
            .trim_start_matches(C_SPACE)
            .parse::<i64>()
            .ok()
            .filter(|v| (0..=i64::from(i32::MAX)).contains(v))
            .ok_or(ListError::Bad(item))?;
        out.push(v as u64);
    }
    out.sort_unstable();
    Ok(out)
}

fn bad(name: &str, raw: &str, allowed: impl std::fmt::Display) -> UsageError {
    UsageError(format!(
        "invalid value for --{name}: '{}' (allowed: {allowed})",
        plumb_core::redact::value(name, raw)
    ))
}

fn parse_bool(raw: &str) -> Option<bool> {
    match raw.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

impl Opt {
    /// Parse `raw` (None when given as a bare `--name`).
    pub fn parse(&self, raw: Option<&str>) -> Result<Value, UsageError> {
        let name = self.name;
        let raw = match (raw, self.kind) {
            (None, Kind::Bool) => return Ok(Value::Bool(true)),
            (None, Kind::Grace) => return Ok(Value::Grace(Some((5.0, true)))),
            (None, _) => {
                return Err(UsageError(format!(
                    "option --{name} needs a value: --{name}={}",
                    self.placeholder().trim_start_matches('=')
                )))
            }
            (Some(r), _) => r,
        };
        match self.kind {
            Kind::Int { min, max } => {
                let v: u64 = raw
                    .trim()
                    .parse()
                    .map_err(|_| bad(name, raw, format!("a whole number from {min} to {max}")))?;
                if v < min || v > max {
                    return Err(bad(
                        name,
                        raw,
                        format!("a whole number from {min} to {max}"),
                    ));
                }
                Ok(Value::Int(v))
            }
            Kind::Float { min, max } => {
                let v: f64 = raw
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| bad(name, raw, format!("a number from {min} to {max}")))?;
                if v < min || v > max {
                    return Err(bad(name, raw, format!("a number from {min} to {max}")));
                }
                Ok(Value::Float(v))
            }
            Kind::Size => parse_size(raw)
                .map(Value::Size)
                .map_err(|_| bad(name, raw, "a size such as 16384, 16K, 8M or 4G")),
            Kind::PowerOfTwoSize { min } => parse_size(raw)
                .ok()
                .filter(|v| *v >= min && v.is_power_of_two())
                .map(Value::Size)
                .ok_or_else(|| {
                    bad(
                        name,
                        raw,
                        format!("a power of two of at least {min} bytes, such as 1K, 8K or 1M"),
                    )
                }),
            Kind::Bool => parse_bool(raw)
                .map(Value::Bool)
                .ok_or_else(|| bad(name, raw, "on or off")),
            Kind::Choice(words) => {
                if words.contains(&raw) {
                    Ok(Value::Word(raw.to_string()))
                } else {
                    Err(bad(name, raw, words.join(", ")))
                }
            }
            Kind::List(words) => {
                let items: Vec<String> = raw
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if !words.is_empty() {
                    if let Some(b) = items.iter().find(|i| !words.contains(&i.as_str())) {
                        return Err(bad(name, b, format!("a list of {}", words.join(", "))));
                    }
                }
                Ok(Value::List(items))
            }
            Kind::Text => Ok(Value::Word(raw.to_string())),
            Kind::Percentiles => {
                let allowed = "percentiles from 0 to 100, comma-separated (e.g. 50,95,99.9); 0 alone turns them off";
                if raw.trim() == "0" {
                    return Ok(Value::Percentiles(Vec::new()));
                }
                let mut out = Vec::new();
                for part in raw.split(',') {
                    let v: f64 = part
                        .trim()
                        .parse()
                        .ok()
                        .filter(|v: &f64| v.is_finite() && *v > 0.0 && *v <= 100.0)
                        .ok_or_else(|| bad(name, raw, allowed))?;
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
                Ok(Value::Percentiles(out))
            }
            Kind::Seconds => seconds_list(raw).map(Value::Seconds).map_err(|e| {
                let allowed = format!(
                    "whole seconds from 0 to 2147483647, comma-separated, at most {MAX_CHECKPOINTS}"
                );
                match e {
                    ListError::Bad(item) => bad(name, item, allowed),
                    ListError::TooMany => bad(name, raw, allowed),
                }
            }),
            Kind::Grace => {
                let allowed = "off, a number of seconds up to 1000000000, or a percentage of --time such as 5%";
                if raw == "off" {
                    return Ok(Value::Grace(None));
                }
                let (num, pct) = match raw.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (raw, false),
                };
                let v: f64 = num
                    .trim()
                    .parse()
                    .ok()
                    // --time's own limit: a grace past it is no grace (and would
                    // overflow the deadline).
                    .filter(|v: &f64| v.is_finite() && (0.0..=1e9).contains(v))
                    .ok_or_else(|| bad(name, raw, allowed))?;
                Ok(Value::Grace(Some((v, pct))))
            }
        }
    }

    fn placeholder(&self) -> &'static str {
        match self.kind {
            Kind::Int { .. } | Kind::Float { .. } => "=N",
            Kind::Size | Kind::PowerOfTwoSize { .. } => "=SIZE",
            Kind::Bool => "[=on|off]",
            Kind::Choice(_) | Kind::Text | Kind::Grace => "=STRING",
            Kind::List(_) => "=[LIST,...]",
            Kind::Percentiles | Kind::Seconds => "=[LIST,...]",
        }
    }

    fn help_line(&self) -> String {
        let mut h = self.help.to_string();
        match self.kind {
            Kind::Choice(w) => {
                let _ = write!(h, " {{{}}}", w.join(", "));
            }
            Kind::List(w) if !w.is_empty() => {
                let _ = write!(h, " {{{}}}", w.join(","));
            }
            _ => {}
        }
        let _ = write!(h, " [{}]", self.default);
        h
    }
}

/// The listing `plumb <test> help` prints.
pub fn help_table(title: &str, opts: &[Opt]) -> String {
    let mut s = format!("{title}:\n");
    let lefts: Vec<String> = opts
        .iter()
        .map(|o| format!("  --{}{}", o.name, o.placeholder()))
        .collect();
    let w = lefts.iter().map(|l| l.len()).max().unwrap_or(0);
    for (l, o) in lefts.iter().zip(opts) {
        let _ = writeln!(s, "{l:<w$} {}", o.help_line());
    }
    s
}

/// Validated option values for one command line.
pub struct Values {
    vals: HashMap<&'static str, Value>,
    /// Every option given, in order, repeats included.
    given: Vec<(&'static str, Value)>,
}

impl Values {
    /// Parse raw `(name, value)` pairs against `tables`; defaults fill the rest.
    pub fn parse(
        raw: &[(String, Option<String>)],
        tables: &[&[Opt]],
        unknown: impl Fn(&str) -> UsageError,
    ) -> Result<Values, UsageError> {
        let mut vals = HashMap::new();
        let mut given = Vec::new();
        for t in tables {
            for o in t.iter() {
                vals.insert(o.name, o.parse(Some(o.default))?);
            }
        }
        for (name, value) in raw {
            let opt = tables
                .iter()
                .flat_map(|t| t.iter())
                .find(|o| o.name == name)
                .ok_or_else(|| unknown(name))?;
            let v = opt.parse(value.as_deref())?;
            vals.insert(opt.name, v.clone());
            given.push((opt.name, v));
        }
        Ok(Values { vals, given })
    }

    fn get(&self, name: &str) -> &Value {
        self.vals
            .get(name)
            .unwrap_or_else(|| panic!("option --{name} is read but not declared"))
    }

    /// Whether the user gave the option (rather than taking its default).
    pub fn given(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| *n == name)
    }

    /// Every value given to a repeatable word option, in order.
    pub fn all_words(&self, name: &str) -> Vec<&str> {
        self.given
            .iter()
            .filter(|(n, _)| *n == name)
            .filter_map(|(_, v)| match v {
                Value::Word(w) => Some(w.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn int(&self, name: &str) -> u64 {
        match self.get(name) {
            Value::Int(v) | Value::Size(v) => *v,
            v => panic!("--{name} is {v:?}, not a number"),
        }
    }
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Float(v) => *v,
            Value::Int(v) => *v as f64,
            v => panic!("--{name} is {v:?}, not a number"),
        }
    }
    pub fn size(&self, name: &str) -> u64 {
        self.int(name)
    }
    pub fn flag(&self, name: &str) -> bool {
        match self.get(name) {
            Value::Bool(v) => *v,
            v => panic!("--{name} is {v:?}, not on/off"),
        }
    }
    pub fn word(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Word(v) => v,
            v => panic!("--{name} is {v:?}, not a word"),
        }
    }
    pub fn list(&self, name: &str) -> &[String] {
        match self.get(name) {
            Value::List(v) => v,
            v => panic!("--{name} is {v:?}, not a list"),
        }
    }
    pub fn percentiles(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Value::Percentiles(v) => v,
            v => panic!("--{name} is {v:?}, not percentiles"),
        }
    }
    pub fn seconds(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Value::Seconds(v) => v,
            v => panic!("--{name} is {v:?}, not seconds"),
        }
    }
    pub fn grace(&self, name: &str) -> Option<(f64, bool)> {
        match self.get(name) {
            Value::Grace(v) => *v,
            v => panic!("--{name} is {v:?}, not a grace period"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[Opt] = &[
        Opt {
            name: "n",
            kind: Kind::Int { min: 1, max: 10 },
            default: "1",
            help: "n",
        },
        Opt {
            name: "p",
            kind: Kind::Percentiles,
            default: "95",
            help: "p",
        },
        Opt {
            name: "b",
            kind: Kind::Bool,
            default: "off",
            help: "b",
        },
        Opt {
            name: "s",
            kind: Kind::PowerOfTwoSize { min: 8 },
            default: "1K",
            help: "s",
        },
    ];

    fn parse(args: &[(&str, Option<&str>)]) -> Result<Values, UsageError> {
        let raw: Vec<(String, Option<String>)> = args
            .iter()
            .map(|(n, v)| (n.to_string(), v.map(|s| s.to_string())))
            .collect();
        Values::parse(&raw, &[T], |n| UsageError(format!("unknown --{n}")))
    }

    #[test]
    fn defaults_and_values() {
        let v = parse(&[("n", Some("7")), ("b", None), ("p", Some("50,99.9"))]).unwrap();
        assert_eq!(v.int("n"), 7);
        assert!(v.flag("b"));
        assert_eq!(v.percentiles("p"), &[50.0, 99.9]);
        let d = parse(&[]).unwrap();
        assert_eq!(d.int("n"), 1);
        assert!(!d.flag("b"));
        assert_eq!(d.percentiles("p"), &[95.0]);
    }

    #[test]
    fn rejects_bad_values_naming_option_and_value() {
        let e = parse(&[("n", Some("0"))]).err().unwrap().0;
        assert!(
            e.contains("--n") && e.contains("'0'") && e.contains("1 to 10"),
            "{e}"
        );
        let e = parse(&[("n", Some("abc"))]).err().unwrap().0;
        assert!(e.contains("'abc'"), "{e}");
        let e = parse(&[("s", Some("3K"))]).err().unwrap().0;
        assert_eq!(
            e,
            "invalid value for --s: '3K' (allowed: a power of two of at least 8 bytes, such as 1K, 8K or 1M)"
        );
        assert_eq!(parse(&[("s", Some("8K"))]).unwrap().size("s"), 8192);
        assert!(parse(&[("s", Some("4"))]).is_err());
        let e = parse(&[("p", Some("101"))]).err().unwrap().0;
        assert!(e.contains("--p"), "{e}");
        assert!(parse(&[("zz", Some("1"))]).is_err());
        assert!(parse(&[("n", None)]).is_err());
        assert_eq!(
            parse(&[("p", Some("0"))]).unwrap().percentiles("p"),
            &[] as &[f64]
        );
    }
}
