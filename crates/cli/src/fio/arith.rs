//! fio's arithmetic in option values: a value that starts with `(` is an expression
//! (`size=(2*1M+512k)`). Operators by precedence, lowest first: `+ -`, a unit suffix (which
//! applies to everything on its left up to the nearest `+`/`-`: `2*3k` is `(2*3)k`), `* /`,
//! `^` (right-associative), `%`, unary minus. Suffixes are fixed whatever kb_base says:
//! `k/kb m/mb g/gb t/tb p/pb` are powers of 1024, `kib mib gib pib` powers of 1000; in time
//! values `m` means minutes and the units are microseconds (`s ms us m h d`). A value with no
//! suffix anywhere is in the option's implied unit (seconds for second-based times, which the
//! caller applies). Text after `:`, `,` or `#` is ignored, as fio's lexer does.

use super::values::ValueError;

/// What the expression's suffixes mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    Size,
    Time,
}

#[derive(Debug, Clone, Copy)]
struct Num {
    int: i64,
    float: f64,
    is_float: bool,
}

impl Num {
    fn int(v: i64) -> Num {
        Num {
            int: v,
            float: v as f64,
            is_float: false,
        }
    }
    fn float(v: f64) -> Num {
        Num {
            int: v as i64,
            float: v,
            is_float: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    Num(NumLit),
    Suffix(i64),
    Op(char),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum NumLit {
    Int(i64),
    Float(f64),
}

/// Evaluates a size expression to bytes.
pub fn evaluate(s: &str, units: Units) -> Result<i64, ValueError> {
    run(s, units).map(|(n, _)| n.int)
}

/// Evaluates a time expression to microseconds. A value with no suffix anywhere is in the
/// option's unit, `implied_us` microseconds each (1e6 for second-based options), as in fio.
pub fn evaluate_time(s: &str, implied_us: i64) -> Result<i64, ValueError> {
    let (n, suffixed) = run(s, Units::Time)?;
    if suffixed {
        return Ok(n.int);
    }
    if n.is_float {
        return Ok((n.float * implied_us as f64) as i64);
    }
    n.int
        .checked_mul(implied_us)
        .ok_or_else(|| ValueError::Expression(s.to_string()))
}

/// Evaluates an expression as a float (percentile lists accept them).
pub fn evaluate_float(s: &str) -> Result<f64, ValueError> {
    run(s, Units::Size).map(|(n, _)| n.float)
}

fn run(s: &str, units: Units) -> Result<(Num, bool), ValueError> {
    let toks = lex(s, units)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        suffixed: false,
        src: s,
    };
    let v = p.expr(0)?;
    if p.pos != toks.len() {
        return Err(p.err());
    }
    Ok((v, p.suffixed))
}

fn lex(s: &str, units: Units) -> Result<Vec<Tok>, ValueError> {
    let bad = || ValueError::Expression(s.to_string());
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        match c {
            ' ' | '\t' => i += 1,
            '#' | ':' | ',' => break,
            '+' | '-' | '*' | '/' | '%' | '^' | '(' | ')' => {
                out.push(Tok::Op(c));
                i += 1;
            }
            '0'..='9' | '.' => {
                if s[i..].starts_with("0x") || s[i..].starts_with("0X") {
                    let end = s[i + 2..]
                        .find(|c: char| !c.is_ascii_hexdigit())
                        .map_or(s.len(), |e| i + 2 + e);
                    let v = i64::from_str_radix(&s[i + 2..end], 16).map_err(|_| bad())?;
                    out.push(Tok::Num(NumLit::Int(v)));
                    i = end;
                    continue;
                }
                let mut end = i;
                while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'.') {
                    end += 1;
                }
                let mut is_float = s[i..end].contains('.');
                // An exponent: 1e3, 2.5E-1.
                if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
                    let mut e = end + 1;
                    while e < b.len() && (b[e] == b'+' || b[e] == b'-') {
                        e += 1;
                    }
                    if e < b.len() && b[e].is_ascii_digit() {
                        while e < b.len() && b[e].is_ascii_digit() {
                            e += 1;
                        }
                        end = e;
                        is_float = true;
                    }
                }
                let text = &s[i..end];
                out.push(Tok::Num(if is_float {
                    NumLit::Float(text.parse().map_err(|_| bad())?)
                } else {
                    NumLit::Int(text.parse().map_err(|_| bad())?)
                }));
                i = end;
            }
            c if c.is_ascii_alphabetic() => {
                let end = s[i..]
                    .find(|c: char| !c.is_ascii_alphabetic())
                    .map_or(s.len(), |e| i + e);
                let (mult, used) = suffix(&s[i..end], units).ok_or_else(bad)?;
                out.push(Tok::Suffix(mult));
                i += used;
            }
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// The longest suffix at the start of `word`: its multiplier and length.
fn suffix(word: &str, units: Units) -> Option<(i64, usize)> {
    let w = word.to_ascii_lowercase();
    const K: i64 = 1024;
    let table: &[(&str, i64)] = &[
        ("kib", 1000),
        ("mib", 1_000_000),
        ("gib", 1_000_000_000),
        ("pib", 1_000_000_000_000),
        ("kb", K),
        ("mb", K * K),
        ("gb", K * K * K),
        ("tb", K * K * K * K),
        ("pb", K * K * K * K * K),
        ("ms", 1000),
        ("us", 1),
        ("k", K),
        ("g", K * K * K),
        ("t", K * K * K * K),
        ("p", K * K * K * K * K),
        ("s", 1_000_000),
        ("d", 86_400_000_000),
        ("h", 3_600_000_000),
    ];
    for (name, mult) in table {
        if w.starts_with(name) {
            return Some((*mult, name.len()));
        }
    }
    if w.starts_with('m') {
        let mult = match units {
            Units::Size => K * K,
            Units::Time => 60_000_000,
        };
        return Some((mult, 1));
    }
    None
}

struct Parser<'a> {
    toks: &'a [Tok],
    pos: usize,
    suffixed: bool,
    src: &'a str,
}

// Binding powers, from fio's yacc precedence declarations.
const BP_ADD: u8 = 10;
const BP_SUFFIX: u8 = 20;
const BP_MUL: u8 = 30;
const BP_POW: u8 = 40;
const BP_MOD: u8 = 50;
const BP_NEG: u8 = 60;

impl Parser<'_> {
    fn err(&self) -> ValueError {
        ValueError::Expression(self.src.to_string())
    }

    fn expr(&mut self, min_bp: u8) -> Result<Num, ValueError> {
        let mut lhs = self.prefix()?;
        while let Some(tok) = self.toks.get(self.pos).copied() {
            match tok {
                Tok::Suffix(m) if BP_SUFFIX > min_bp => {
                    self.pos += 1;
                    self.suffixed = true;
                    lhs = if lhs.is_float {
                        Num::float(lhs.float * m as f64)
                    } else {
                        Num::int(lhs.int.checked_mul(m).ok_or_else(|| self.err())?)
                    };
                }
                Tok::Op(op @ ('+' | '-' | '*' | '/' | '%' | '^')) => {
                    let (lbp, rbp) = match op {
                        '+' | '-' => (BP_ADD, BP_ADD + 1),
                        '*' | '/' => (BP_MUL, BP_MUL + 1),
                        '^' => (BP_POW, BP_POW - 1),
                        _ => (BP_MOD, BP_MOD + 1),
                    };
                    if lbp <= min_bp {
                        break;
                    }
                    self.pos += 1;
                    let rhs = self.expr(rbp)?;
                    lhs = self.apply(op, lhs, rhs)?;
                }
                _ => break,
            }
        }
        Ok(lhs)
    }

    fn prefix(&mut self) -> Result<Num, ValueError> {
        let tok = self.toks.get(self.pos).copied().ok_or_else(|| self.err())?;
        self.pos += 1;
        match tok {
            Tok::Num(NumLit::Int(v)) => Ok(Num::int(v)),
            Tok::Num(NumLit::Float(v)) => Ok(Num::float(v)),
            Tok::Op('-') => {
                let v = self.expr(BP_NEG)?;
                Ok(Num {
                    int: -v.int,
                    float: -v.float,
                    is_float: v.is_float,
                })
            }
            Tok::Op('(') => {
                let v = self.expr(0)?;
                if self.toks.get(self.pos) != Some(&Tok::Op(')')) {
                    return Err(self.err());
                }
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.err()),
        }
    }

    fn apply(&self, op: char, a: Num, b: Num) -> Result<Num, ValueError> {
        let float = a.is_float || b.is_float;
        let overflow = || self.err();
        Ok(match op {
            '+' if float => Num::float(a.float + b.float),
            '+' => Num::int(a.int.checked_add(b.int).ok_or_else(overflow)?),
            '-' if float => Num::float(a.float - b.float),
            '-' => Num::int(a.int.checked_sub(b.int).ok_or_else(overflow)?),
            '*' if float => Num::float(a.float * b.float),
            '*' => Num::int(a.int.checked_mul(b.int).ok_or_else(overflow)?),
            '/' => {
                if b.float.abs() < 1e-20 {
                    return Err(self.err());
                }
                if float {
                    Num::float(a.float / b.float)
                } else {
                    Num::int(a.int / b.int)
                }
            }
            '%' => {
                if float || b.int == 0 {
                    return Err(self.err());
                }
                Num::int(a.int % b.int)
            }
            _ => {
                if !float && b.int >= 0 {
                    let e = u32::try_from(b.int).map_err(|_| self.err())?;
                    Num::int(a.int.checked_pow(e).ok_or_else(overflow)?)
                } else {
                    Num::float(a.float.powf(b.float))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> i64 {
        evaluate(s, Units::Size).unwrap()
    }

    #[test]
    fn operators_and_precedence() {
        assert_eq!(size("(1+2*3)"), 7);
        assert_eq!(size("((1+2)*3)"), 9);
        assert_eq!(size("(10-4-3)"), 3);
        assert_eq!(size("(20/2/5)"), 2);
        assert_eq!(size("(7%4)"), 3);
        assert_eq!(size("(2^3^2)"), 512);
        assert_eq!(size("(-2^2)"), 4);
        assert_eq!(size("(-3+5)"), 2);
        // % binds tighter than ^ in fio's grammar.
        assert_eq!(size("(2^5%3)"), 4);
        assert_eq!(size("( 1 + 1 )"), 2);
    }

    #[test]
    fn decimals_and_exponents() {
        assert_eq!(size("(1.5*2)"), 3);
        assert_eq!(size("(1e3)"), 1000);
        assert_eq!(size("(0.5k)"), 512);
        assert_eq!(size("(0x10)"), 16);
        assert!((evaluate_float("(99.5+0.4)").unwrap() - 99.9).abs() < 1e-9);
    }

    #[test]
    fn fixed_suffixes() {
        assert_eq!(size("(2*1M+512k)"), 2 * 1048576 + 524288);
        assert_eq!(size("(1kb)"), 1024);
        assert_eq!(size("(1kib)"), 1000);
        assert_eq!(size("(1MiB)"), 1_000_000);
        assert_eq!(size("(1g)"), 1 << 30);
        // A suffix applies to the product on its left.
        assert_eq!(size("(2*3k)"), 6144);
        assert_eq!(size("(1+2k)"), 2049);
    }

    #[test]
    fn time_suffixes() {
        let t = |s| evaluate_time(s, 1).unwrap();
        assert_eq!(t("(1m)"), 60_000_000);
        assert_eq!(t("(1m+30s)"), 90_000_000);
        assert_eq!(t("(2ms)"), 2000);
        assert_eq!(t("(5us)"), 5);
        assert_eq!(t("(1h)"), 3_600_000_000);
        assert_eq!(t("(1d)"), 86_400_000_000);
        assert_eq!(t("(10)"), 10);
        assert_eq!(evaluate_time("(10)", 1_000_000).unwrap(), 10_000_000);
        assert_eq!(evaluate_time("(0.5)", 1_000_000).unwrap(), 500_000);
    }

    #[test]
    fn ignored_tail_and_errors() {
        assert_eq!(size("(4k):8k"), 4096);
        assert!(evaluate("(1/0)", Units::Size).is_err());
        assert!(evaluate("(1%0)", Units::Size).is_err());
        assert!(evaluate("(1+", Units::Size).is_err());
        assert!(evaluate("(1))", Units::Size).is_err());
        assert!(evaluate("(1 x)", Units::Size).is_err());
        assert!(evaluate("(1.5%2)", Units::Size).is_err());
    }
}
