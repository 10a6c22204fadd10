//! `tracecost models`: the price table in every output format.

use std::fmt::Write as _;

use super::replay_view::csv_field;
use crate::cost::pricing::ModelRow;

fn price(v: f64) -> String {
    format!("{v:.2}")
}

/// Renders the rows as JSON, CSV, Markdown, or an aligned table.
pub fn render(rows: &[ModelRow], json: bool, csv: bool, md: bool) -> String {
    if json {
        let mut s = serde_json::to_string_pretty(rows).unwrap_or_default();
        s.push('\n');
        return s;
    }
    let head = [
        "model",
        "aliases",
        "input",
        "write 5m",
        "write 1h",
        "read",
        "output",
        "min cache",
        "long context",
    ];
    let body: Vec<[String; 9]> = rows
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.aliases.join(" "),
                price(r.input),
                price(r.write_5m),
                price(r.write_1h),
                price(r.read),
                price(r.output),
                r.min_cacheable_tokens.to_string(),
                r.long_context.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let mut s = String::new();
    if csv {
        let _ = writeln!(s, "{}", head.join(","));
        for r in &body {
            let _ = writeln!(
                s,
                "{}",
                r.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(",")
            );
        }
        return s;
    }
    if md {
        let _ = writeln!(s, "| {} |", head.join(" | "));
        let _ = writeln!(s, "|---|---|{}---|", "---:|".repeat(6));
        for r in &body {
            let _ = writeln!(
                s,
                "| {} |",
                r.iter()
                    .map(|c| super::fmt::md_escape(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
        return s;
    }
    let _ = writeln!(
        s,
        "Prices in USD per million tokens; min cache = minimum cacheable prefix in tokens."
    );
    let mut widths = head.map(str::len);
    for r in &body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            let pad = " ".repeat(w - c.chars().count());
            if (2..8).contains(&i) {
                l.push_str(&pad);
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&pad);
            }
            l.push_str("  ");
        }
        l.trim_end().to_owned()
    };
    let _ = writeln!(s, "{}", line(&head.map(String::from)));
    for r in &body {
        let _ = writeln!(s, "{}", line(r));
    }
    s
}
