//! Text from records (command lines, tags, job names, finding texts) goes into the page in
//! two places: HTML text and attributes, and JSON inside a `<script>` element. Both are
//! escaped here so that no user string can close an element or open a new one.

/// `s` as HTML text or a double-quoted attribute value.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `v` as JSON that is safe inside `<script>`: `<`, `>` and `&` only ever occur inside JSON
/// strings, where `\u003c` means the same to the parser and `</script>` or `<!--` cannot
/// appear; U+2028 and U+2029 are escaped for older JavaScript parsers.
pub fn script_json<T: serde::Serialize>(v: &T) -> String {
    let json = serde_json::to_string(v).expect("chart data always serialises");
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text_cannot_open_an_element() {
        assert_eq!(
            text(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn script_json_cannot_close_the_script_and_reads_back_the_same() {
        let v = serde_json::json!({"cmd": "</script><script>alert(1)</script> <!-- & \u{2028}"});
        let s = script_json(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
    }
}
