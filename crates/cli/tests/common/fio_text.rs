//! Reading fio's output and strace logs for the tests that compare plumb with fio 3.33.

use std::collections::BTreeSet;

use serde_json::Value;

/// The text after `key=` up to the next `,` or `}` in `s`.
pub fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let at = s.find(key)? + key.len();
    let rest = &s[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The path in `fd</path>` at the start of `s`, and what follows it.
pub fn fd_path(s: &str) -> Option<(&str, &str, &str)> {
    let lt = s.find('<')?;
    let gt = lt + s[lt..].find('>')?;
    Some((&s[..lt], &s[lt + 1..gt], &s[gt + 1..]))
}

/// Lines whose presence depends on measured data rather than on the job: percentile rows,
/// the latency distribution, the bw/iops sample lines, and the disk stats (device-wide).
pub fn data_dependent(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("| ")
        || t.starts_with("lat (nsec)   :")
        || t.starts_with("lat (usec)   :")
        || t.starts_with("lat (msec)   :")
        || t.starts_with("bw (")
        || t.starts_with("iops        :")
}

/// The structure of a normal report: data-dependent lines and the disk stats dropped; each
/// number (with its decimals, a k/M/G/… prefix and a B/bit unit right after it) becomes `N`
/// with the padding before it; the latency units become `xsec`.
pub fn mask_normal(text: &str) -> String {
    let mut out = String::new();
    let mut in_disk = false;
    for line in text.lines() {
        if line.starts_with("Disk stats (") {
            in_disk = true;
            continue;
        }
        if in_disk && line.starts_with("  ") {
            continue;
        }
        in_disk = false;
        if data_dependent(line) {
            continue;
        }
        let line = line
            .replace("(nsec)", "(xsec)")
            .replace("(usec)", "(xsec)")
            .replace("(msec)", "(xsec)");
        out.push_str(&mask_numbers(&line));
        out.push('\n');
    }
    // The disk stats leave the blank line that introduced them.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

pub fn mask_numbers(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        let mut j = i;
        while j < c.len() && c[j] == ' ' {
            j += 1;
        }
        let starts_number = j < c.len()
            && c[j].is_ascii_digit()
            && (i == 0 || !c[i - 1].is_ascii_alphabetic() || j > i);
        if !starts_number {
            out.push(c[i]);
            i += 1;
            continue;
        }
        while j < c.len()
            && (c[j].is_ascii_digit()
                || (c[j] == '.' && c.get(j + 1).is_some_and(char::is_ascii_digit)))
        {
            j += 1;
        }
        if j < c.len() && "kKMGTPE".contains(c[j]) {
            j += 1;
            if c.get(j) == Some(&'i') {
                j += 1;
            }
        }
        if c.get(j) == Some(&'B') {
            j += 1;
        } else if c[j..].starts_with(&['b', 'i', 't']) {
            j += 3;
        }
        // A padded column keeps one space; a padded value after `=` (fio's `avg=%5.02f`)
        // keeps none, so 9.93 and 10.12 mask alike.
        if i < j && c[i] == ' ' && (i == 0 || c[i - 1] != '=') {
            out.push(' ');
        }
        out.push('N');
        i = j;
    }
    out
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every difference in keys or value types between `a` (fio) and `b` (plumb), by path
/// (plumb's top-level `plumb` key aside).
pub fn shape_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if kind(a) != kind(b) {
        out.push(format!("{path}: fio {} vs plumb {}", kind(a), kind(b)));
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let kx: BTreeSet<&String> = x.keys().collect();
            let ky: BTreeSet<&String> = y
                .keys()
                .filter(|k| !(path.is_empty() && *k == "plumb"))
                .collect();
            for k in kx.symmetric_difference(&ky) {
                let who = if x.contains_key(*k) { "fio" } else { "plumb" };
                out.push(format!("{path}/{k}: only in {who}"));
            }
            for k in kx.intersection(&ky) {
                shape_diff(&format!("{path}/{k}"), &x[*k], &y[*k], out);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.push(format!("{path}: {} vs {} elements", x.len(), y.len()));
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                shape_diff(&format!("{path}[{i}]"), p, q, out);
            }
        }
        _ => {}
    }
}

/// A pid, which differs from run to run, as `pid=P` (fio's `pid=0`, no process yet, stays).
pub fn mask_pid(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find("pid=") {
        out.push_str(&rest[..i + 4]);
        let after = rest[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
        let digits = &rest[i + 4..rest.len() - after.len()];
        out.push_str(if digits == "0" { "0" } else { "P" });
        rest = after;
    }
    out.push_str(rest);
    out
}
