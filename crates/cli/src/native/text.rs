//! Small text helpers for the history commands' tables.

/// A latency in the unit that keeps it readable: `850 ns`, `12.34 us`, `1.20 ms`, `3.10 s`.
pub fn latency(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A command line as a shell would take it back: words with spaces or shell characters
/// in single quotes.
pub fn command_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+%@".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Rows printed in columns two spaces apart, each as wide as its widest cell; the columns
/// `right` names are right-aligned (figures), the last column is never padded.
pub fn table(rows: &[Vec<String>], right: &[usize], indent: &str) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = indent.to_string();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c].saturating_sub(cell.chars().count());
            let last = c + 1 == r.len();
            if right.contains(&c) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if !last {
                    line.push_str(&" ".repeat(pad));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_in_readable_units() {
        assert_eq!(latency(850.0), "850 ns");
        assert_eq!(latency(12_340.0), "12.34 us");
        assert_eq!(latency(1_200_000.0), "1.20 ms");
        assert_eq!(latency(3.1e9), "3.10 s");
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let a: Vec<String> = ["plumb", "cpu", "--tag=a b", "it's", "--x=1,2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(command_line(&a), r"plumb cpu '--tag=a b' 'it'\''s' --x=1,2");
    }

    #[test]
    fn columns_align() {
        let rows = vec![
            vec!["ID".to_string(), "N".to_string(), "X".to_string()],
            vec!["12".to_string(), "1.5".to_string(), "long text".to_string()],
        ];
        assert_eq!(table(&rows, &[1], ""), "ID    N  X\n12  1.5  long text\n");
    }
}
