//! Credentials never leave the process: command lines kept in results and text echoed in
//! errors show `***` for the value of any long option whose name says it holds a secret.
//!
//! Only long options are recognised (`--mysql-password=x`, `--pgsql-password x`): short
//! options such as mysqlslap's `-pSECRET` mean other things in other tools, so the front
//! end that knows `-p` is a password redacts it itself.

/// What a secret value is shown as.
pub const MASK: &str = "***";

/// Whether an option name (with or without its leading dashes) names a secret.
pub fn is_secret_option(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    ["password", "passwd", "secret"]
        .iter()
        .any(|w| n.contains(w))
}

/// The value of option `name` as it may be shown: masked when the option is a secret.
pub fn value<'a>(name: &str, value: &'a str) -> &'a str {
    if is_secret_option(name) {
        MASK
    } else {
        value
    }
}

/// A long option (`--name` or `--name=value`) that names a secret: its name and whether the
/// value is attached.
fn secret_long_option(arg: &str) -> Option<(&str, bool)> {
    let body = arg.strip_prefix("--").filter(|b| !b.is_empty())?;
    let (name, attached) = match body.split_once('=') {
        Some((n, _)) => (n, true),
        None => (body, false),
    };
    is_secret_option(name).then_some((name, attached))
}

/// `args` with the value of every secret long option masked, in both the `--opt=value` and
/// the `--opt value` forms. In the second form the next argument is masked whatever it is:
/// which options take a separate value depends on the front end, and masking a word that
/// was not a password costs less than showing one that was.
pub fn args<I, S>(args: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = Vec::new();
    let mut mask_next = false;
    for a in args {
        let a = a.as_ref();
        if mask_next {
            out.push(MASK.to_string());
            mask_next = false;
            continue;
        }
        match secret_long_option(a) {
            Some((name, true)) => out.push(format!("--{name}={MASK}")),
            Some((_, false)) => {
                out.push(a.to_string());
                mask_next = true;
            }
            None => out.push(a.to_string()),
        }
    }
    out
}

/// The secret values present in `args` (the ones [`args`] masks), longest first.
pub fn secrets<S: AsRef<str>>(args: &[S]) -> Vec<String> {
    let mut found = Vec::new();
    let mut iter = args.iter().map(AsRef::as_ref);
    while let Some(a) = iter.next() {
        let v = match secret_long_option(a) {
            Some((_, true)) => a.split_once('=').map(|(_, v)| v),
            Some((_, false)) => iter.next(),
            None => None,
        };
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            found.push(v.to_string());
        }
    }
    // Longest first, so a secret that contains another is masked whole.
    found.sort_by_key(|s| std::cmp::Reverse(s.len()));
    found.dedup();
    found
}

/// `text` (an error message, a log line) with every secret value given in `args` masked:
/// the last line of defence for messages that echo what the user typed.
///
/// A secret shorter than [`WHOLE_WORD_BELOW`] characters is masked where it stands as a
/// word of its own (no letter, digit or `_` against either end): seed 004's
/// `--mysql-password=test` otherwise turned every `sbtest1` into `sb***1`. An echo of a
/// password is delimited (quotes, `=`, `:`, `@`, a space), so it is still caught; a longer
/// secret is masked wherever it appears, since it is unlikely to be part of another word by
/// chance.
pub fn text<S: AsRef<str>>(text: &str, args: &[S]) -> String {
    let mut t = text.to_string();
    for s in secrets(args) {
        t = if s.chars().count() < WHOLE_WORD_BELOW {
            mask_words(&t, &s)
        } else {
            t.replace(&s, MASK)
        };
    }
    t
}

/// Secrets shorter than this are masked as whole words only (see [`text`]).
pub const WHOLE_WORD_BELOW: usize = 8;

/// `t` with each occurrence of `secret` that no word character touches masked.
fn mask_words(t: &str, secret: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(at) = rest.find(secret) {
        let (before, after) = (&rest[..at], &rest[at + secret.len()..]);
        let touched = word(before.chars().next_back()) || word(after.chars().next());
        // The text before this occurrence; the char before it is already in `out` when
        // `before` is empty, so look there too.
        let touched = touched || (before.is_empty() && word(out.chars().next_back()));
        out.push_str(before);
        if touched {
            // Keep the first character and look again from the next one, so an
            // overlapping occurrence is still found.
            let first = secret.chars().next().map_or(1, char::len_utf8);
            out.push_str(&rest[at..at + first]);
            rest = &rest[at + first..];
        } else {
            out.push_str(MASK);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn names_that_say_secret() {
        for n in [
            "--mysql-password",
            "pgsql-password",
            "--password",
            "--secret-key",
            "--DB-PASSWD",
            "--Client-Secret",
        ] {
            assert!(is_secret_option(n), "{n}");
        }
        for n in ["--mysql-user", "--pass", "--threads", "-p", "--time"] {
            assert!(!is_secret_option(n), "{n}");
        }
        assert_eq!(value("mysql-password", "hunter2"), MASK);
        assert_eq!(value("mysql-user", "root"), "root");
    }

    #[test]
    fn masks_both_long_option_forms() {
        assert_eq!(
            args(v(&[
                "oltp_read_only",
                "--mysql-password=hunter2",
                "--pgsql-password",
                "s3cr3t",
                "--Secret-Key=abc=def",
                "--mysql-user=root",
                "run",
            ])),
            v(&[
                "oltp_read_only",
                "--mysql-password=***",
                "--pgsql-password",
                "***",
                "--Secret-Key=***",
                "--mysql-user=root",
                "run",
            ])
        );
        // An empty value is still masked, so nothing shows whether a password was set.
        assert_eq!(args(["--password="]), v(&["--password=***"]));
        // The separate value is masked even when it looks like an option.
        assert_eq!(
            args(["--password", "--x", "run"]),
            v(&["--password", "***", "run"])
        );
        // A trailing option with no value leaves nothing to mask.
        assert_eq!(args(["--password"]), v(&["--password"]));
    }

    #[test]
    fn short_options_are_left_to_their_front_end() {
        assert_eq!(
            args(["-pSECRET", "-p", "SECRET"]),
            v(&["-pSECRET", "-p", "SECRET"])
        );
    }

    #[test]
    fn text_masks_every_secret_value() {
        let argv = v(&["--password=ab", "--secret", "abcd", "--user=ab2"]);
        assert_eq!(secrets(&argv), v(&["abcd", "ab"]));
        assert_eq!(
            text("bad value 'abcd' then 'ab' for user ab2", &argv),
            "bad value '***' then '***' for user ab2"
        );
        assert_eq!(text("nothing here", &v(&["--user=x"])), "nothing here");
    }

    /// Seed 004's password: its echoes are masked, the tables named like it are not.
    #[test]
    fn a_short_secret_is_masked_as_a_word() {
        let argv = v(&["--mysql-password=test"]);
        assert_eq!(
            text(
                "Table 'sbtest.sbtest1' doesn't exist; user 'test'@'localhost' (password test) test",
                &argv
            ),
            "Table 'sbtest.sbtest1' doesn't exist; user '***'@'localhost' (password ***) ***"
        );
        assert_eq!(
            text("test:test@h testtest test_1", &argv),
            "***:***@h testtest test_1"
        );
        assert_eq!(text("éteste, test", &argv), "éteste, ***");
        // From 8 characters on, masked wherever it appears.
        let long = v(&["--pgsql-password=s3cr3tpw"]);
        assert_eq!(text("xs3cr3tpwx s3cr3tpw", &long), "x***x ***");
    }
}
