//! The page: a head with uPlot and the style inlined, sections with headings, each chart
//! beside the findings that explain it, and a script that draws the charts and writes into
//! `<body>` how many it drew and what went wrong (`data-charts-expected`,
//! `data-charts-drawn`, `data-errors`), so a headless browser can check the page.

use std::fmt::Write as _;

use plumb_advise::Finding;

use super::chart::Chart;
use super::escape::{script_json, text};

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const DRAW_JS: &str = include_str!("draw.js");
const STYLE: &str = include_str!("style.css");

/// Collects errors from the moment the body starts, before uPlot or the charts load.
const ERROR_HOOK: &str = r#"(function () {
  var errors = [];
  function note(msg) {
    errors.push(String(msg));
    document.body.setAttribute("data-errors", errors.join(" | "));
  }
  window.plumbError = note;
  window.addEventListener("error", function (e) { note(e.message || "error"); });
  window.addEventListener("unhandledrejection", function (e) { note(e.reason); });
  var orig = console.error;
  console.error = function () {
    note(Array.prototype.slice.call(arguments).join(" "));
    return orig.apply(console, arguments);
  };
})();"#;

/// A finding as the page shows it, with whose it is when the page shows several runs or jobs.
pub struct Shown<'a> {
    pub whose: Option<String>,
    pub finding: &'a Finding,
}

#[derive(Default)]
pub struct Page {
    body: String,
    charts: Vec<Chart>,
}

impl Page {
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }

    pub fn heading(&mut self, level: u8, title: &str, id: Option<&str>) {
        let id = id.map_or(String::new(), |i| format!(" id=\"{}\"", text(i)));
        let _ = writeln!(self.body, "<h{level}{id}>{}</h{level}>", text(title));
    }

    pub fn para(&mut self, class: &str, t: &str) {
        let _ = writeln!(self.body, "<p class=\"{class}\">{}</p>", text(t));
    }

    /// A table of plain text cells; the first row is the header.
    pub fn table(&mut self, rows: &[Vec<String>]) {
        let Some((head, rest)) = rows.split_first() else {
            return;
        };
        self.body.push_str("<table>\n<thead><tr>");
        for h in head {
            let _ = write!(self.body, "<th>{}</th>", text(h));
        }
        self.body.push_str("</tr></thead>\n<tbody>\n");
        for r in rest {
            self.body.push_str("<tr>");
            for c in r {
                let _ = write!(self.body, "<td>{}</td>", text(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table>\n");
    }

    /// A table of names and values, without a header.
    pub fn facts(&mut self, rows: &[(&str, String)]) {
        self.body.push_str("<table class=\"meta\">\n<tbody>\n");
        for (k, v) in rows {
            let _ = writeln!(
                self.body,
                "<tr><td>{}</td><td>{}</td></tr>",
                text(k),
                text(v)
            );
        }
        self.body.push_str("</tbody></table>\n");
    }

    /// A section: its heading, then each chart (or, in its place, the sentence saying why
    /// there is none) with the findings beside it, then notes.
    pub fn section(
        &mut self,
        id: &str,
        title: &str,
        charts: Vec<Result<Chart, String>>,
        findings: &[Shown<'_>],
        notes: &[String],
    ) {
        let _ = writeln!(self.body, "<section id=\"{}\">", text(id));
        self.heading(3, title, None);
        self.body
            .push_str("<div class=\"row\">\n<div class=\"charts\">\n");
        for c in charts {
            match c {
                Ok(mut c) => {
                    c.id = format!("chart-{}", self.charts.len() + 1);
                    let _ = writeln!(
                        self.body,
                        "<figure><figcaption>{}</figcaption><div class=\"chart\" id=\"{}\"></div></figure>",
                        text(&c.title),
                        c.id
                    );
                    self.charts.push(c);
                }
                Err(why) => {
                    let _ = writeln!(self.body, "<p class=\"absent\">{}</p>", text(&why));
                }
            }
        }
        for n in notes {
            let _ = writeln!(self.body, "<p class=\"note\">{}</p>", text(n));
        }
        self.body.push_str("</div>\n");
        if !findings.is_empty() {
            self.body.push_str("<aside class=\"findings\">\n");
            for f in findings {
                finding(&mut self.body, f);
            }
            self.body.push_str("</aside>\n");
        }
        self.body.push_str("</div>\n</section>\n");
    }

    pub fn finish(self, title: &str) -> String {
        let mut out = String::with_capacity(self.body.len() + UPLOT_JS.len() + 8192);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"plumb {}\">\n<title>{}</title>\n\
             <style>\n{UPLOT_CSS}\n{STYLE}</style>\n</head>\n\
             <body data-charts-expected=\"{}\" data-charts-drawn=\"0\" data-errors=\"\">\n\
             <script>\n{ERROR_HOOK}\n</script>\n",
            env!("CARGO_PKG_VERSION"),
            text(title),
            self.charts.len()
        );
        out.push_str("<main>\n");
        out.push_str(&self.body);
        out.push_str("</main>\n");
        let _ = write!(
            out,
            "<script type=\"application/json\" id=\"plumb-charts\">{}</script>\n\
             <script>\n{UPLOT_JS}\n</script>\n<script>\n{DRAW_JS}\n</script>\n</body>\n</html>\n",
            script_json(&self.charts)
        );
        out
    }
}

fn finding(out: &mut String, s: &Shown<'_>) {
    let f = s.finding;
    let sev = f.severity.name();
    let _ = write!(
        out,
        "<div class=\"finding {sev}\" data-finding=\"{}\"><p><span class=\"severity\">{sev}</span> <code>{}</code>",
        text(&f.id),
        text(&f.id)
    );
    if let Some(w) = &s.whose {
        let _ = write!(out, " <span class=\"whose\">({})</span>", text(w));
    }
    let _ = write!(out, "</p><p>{}</p>", text(&f.message));
    if !f.evidence.is_empty() {
        out.push_str("<dl>");
        for (k, v) in &f.evidence {
            let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", text(k), text(v));
        }
        out.push_str("</dl>");
    }
    if !f.advice.is_empty() {
        let _ = write!(out, "<p class=\"advice\">{}</p>", text(&f.advice));
    }
    out.push_str("</div>\n");
}
