//! Number and text formatting shared by every exporter, so a figure reads
//! the same in a table, a Markdown summary and the HTML report.

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Dollars with enough precision for small per-call costs: `$0.0123`,
/// `$12.35`, `-$1.20`.
pub fn dollars(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    if a >= 100.0 {
        format!("{sign}${}", thousands_f(a))
    } else if a >= 1.0 {
        format!("{sign}${a:.2}")
    } else {
        format!("{sign}${a:.4}")
    }
}

fn thousands_f(a: f64) -> String {
    let whole = a.trunc() as u64;
    let cents = ((a - a.trunc()) * 100.0).round() as u64;
    if cents == 100 {
        format!("{}.00", thousands(whole + 1))
    } else {
        format!("{}.{cents:02}", thousands(whole))
    }
}

/// A plain decimal with a fixed number of places: `fixed(3.0, 2)` →
/// `3.00`. For figures read by programs (CSV) and per-token prices.
pub fn fixed(v: f64, places: usize) -> String {
    format!("{v:.places$}")
}

/// A percentage: `percent(12.345, 1)` → `12.3%`.
pub fn percent(v: f64, places: usize) -> String {
    format!("{v:.places$}%")
}

/// A change in percent, always signed: `signed_percent(2.0, 1)` → `+2.0%`.
pub fn signed_percent(v: f64, places: usize) -> String {
    format!("{v:+.places$}%")
}

/// Quotes a CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// One line describing a trace's calibration, when anything was fitted.
pub fn calibration_note(c: &crate::replay::TraceCalibration) -> Option<String> {
    if c.content.n == 0 && c.prefix_factor.is_none() {
        return None;
    }
    let mut s = String::from("token counts calibrated on recorded usage:");
    if c.content.n > 0 {
        s.push_str(&format!(
            " content ×{:.3} from {} call pair(s) (RMS error {:.1}%)",
            c.content.factor,
            c.content.n,
            c.content.relative_error * 100.0
        ));
    }
    if let Some(f) = c.prefix_factor {
        s.push_str(&format!(
            "{} system prompt and tools ×{f:.3} from the first recorded call",
            if c.content.n > 0 { ";" } else { "" }
        ));
    }
    Some(s)
}

/// Escapes text for a Markdown table cell.
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' | '*' | '_' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for HTML content and attribute values.
pub fn html_escape(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(dollars(0.01234), "$0.0123");
        assert_eq!(dollars(12.345), "$12.35");
        assert_eq!(dollars(-1.2), "-$1.20");
        assert_eq!(dollars(1234.567), "$1,234.57");
        assert_eq!(dollars(199.999), "$200.00");
    }

    #[test]
    fn fixed_places_and_percentages() {
        assert_eq!(fixed(3.0, 2), "3.00");
        assert_eq!(fixed(0.1234567, 6), "0.123457");
        assert_eq!(percent(12.345, 1), "12.3%");
        assert_eq!(percent(-0.04, 1), "-0.0%");
        assert_eq!(signed_percent(2.0, 1), "+2.0%");
        assert_eq!(signed_percent(-8.724, 2), "-8.72%");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html_escape(r#"<script>"x"&'y'</script>"#),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(md_escape("a|b<c>\n_d_"), "a\\|b&lt;c&gt; \\_d\\_");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
    }
}
