//! Substitutions in job-file lines (§1.4): `${VAR}` from the environment (undefined = empty),
//! then the reserved words `$pagesize`, `$mb_memory`, `$ncpus`. When a reserved word was
//! replaced and the value holds `+ - * /`, fio pipes the value through `bc`; plumb evaluates
//! it with its own arithmetic instead (integer result, as bc's default scale gives).

use super::arith;
use super::host::Host;

/// Replaces `${NAME}` everywhere in `line`.
pub fn env_vars(line: &str, host: &Host) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        match after.find('}') {
            // fio needs at least one character between the braces.
            Some(end) if end > 0 => {
                out.push_str(&rest[..start]);
                out.push_str(&host.var(&after[..end]).unwrap_or_default());
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[..start + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Replaces the reserved words, and evaluates the value when it then holds arithmetic.
pub fn keywords(line: &str, host: &Host) -> String {
    let words = [
        ("$pagesize", host.pagesize),
        ("$mb_memory", host.mb_memory),
        ("$ncpus", host.ncpus),
    ];
    let mut out = line.to_string();
    let mut replaced = false;
    for (word, value) in words {
        if out.contains(word) {
            out = out.replace(word, &value.to_string());
            replaced = true;
        }
    }
    if !replaced || !out.contains(['+', '-', '*', '/']) || out.contains('\'') {
        return out;
    }
    let Some((key, value)) = out.split_once('=') else {
        return out;
    };
    match arith::evaluate(&format!("({value})"), arith::Units::Size) {
        Ok(v) => format!("{key}={v}"),
        // Left as it is, the value then fails to parse with fio's own message.
        Err(_) => out,
    }
}

/// Both substitutions, in fio's order.
pub fn line(line: &str, host: &Host) -> String {
    keywords(&env_vars(line, host), host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host::fixed(&[("BS", "8k"), ("DIR", "/tmp")], 4096, 24105, 2)
    }

    #[test]
    fn env() {
        assert_eq!(env_vars("bs=${BS}", &host()), "bs=8k");
        assert_eq!(env_vars("bs=${UNSET}8k", &host()), "bs=8k");
        assert_eq!(
            env_vars("filename=${DIR}/${BS}", &host()),
            "filename=/tmp/8k"
        );
        assert_eq!(env_vars("x=${}", &host()), "x=${}");
        assert_eq!(env_vars("x=${open", &host()), "x=${open");
    }

    #[test]
    fn reserved_words() {
        assert_eq!(line("size=$mb_memory", &host()), "size=24105");
        assert_eq!(line("numjobs=$ncpus", &host()), "numjobs=2");
        assert_eq!(line("bs=$pagesize", &host()), "bs=4096");
        assert_eq!(line("numjobs=$ncpus*2", &host()), "numjobs=4");
        assert_eq!(line("size=$mb_memory/2", &host()), "size=12052");
        // Without a reserved word nothing is evaluated.
        assert_eq!(line("bs=4k-64k", &host()), "bs=4k-64k");
    }
}
